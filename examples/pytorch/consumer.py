"""A PyTorch trainer fed by a JVM rank (docs/guide.md, "A JVM rank in a PyTorch job").

Rank 1 of a job the JVM rank 0 hosts: it receives [batches, batch size] by broadcast, then each batch by recv,
the images (float32 [B, 784], tag 1) then the labels (int64 [B], tag 2), trains a linear classifier on them, and
sends [loss, accuracy] of its last 20 batches back (tag 3). Run the JVM rank with

    ./tensorbus run pytorch-feeder --rank 0 --world-size 2 --init-method tcp://127.0.0.1:29500

and this with

    GLOO_SOCKET_IFNAME=lo python3 examples/pytorch/consumer.py
"""
import argparse
import datetime

import torch
import torch.distributed as dist
import torch.nn.functional as F

parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
parser.add_argument('--init-method', default='tcp://127.0.0.1:29500')
parser.add_argument('--lr', type=float, default=0.05)
args = parser.parse_args()

dist.init_process_group('gloo', init_method=args.init_method, rank=1, world_size=2,
                        timeout=datetime.timedelta(seconds=300))
torch.manual_seed(0)
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
header = torch.zeros(2, dtype=torch.int64)
dist.broadcast(header, 0)
batches, size = header.tolist()
recent = []
for b in range(batches):
    images = torch.zeros(size, 784)
    labels = torch.zeros(size, dtype=torch.int64)
    dist.recv(images, 0, tag=1)
    dist.recv(labels, 0, tag=2)
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    recent = (recent + [(loss.item(), (logits.argmax(1) == labels).float().mean().item())])[-20:]
    if (b + 1) % 50 == 0:
        print('batch %d of %d: loss %.4f' % (b + 1, batches, loss.item()), flush=True)
result = torch.tensor([sum(r[0] for r in recent) / len(recent), sum(r[1] for r in recent) / len(recent)])
dist.send(result, 0, tag=3)
print('trained on %d batches from the JVM rank: loss %.4f, accuracy %.4f over the last %d'
      % (batches, result[0], result[1], len(recent)), flush=True)
dist.destroy_process_group()
