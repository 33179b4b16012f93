"""The PyTorch trainer of a job with JVM evaluators (docs/guide.md, "A JVM rank in a PyTorch job").

Rank 0 trains a linear Fashion-MNIST classifier; after each epoch it broadcasts its weights (W [10, 784], then
b [10], as one float32 tensor) and all-reduces [correct, seen] with the JVM ranks, which score the weights on their
share of the first 1,000 test images. First it broadcasts the number of epochs. Run the JVM ranks with

    ./tensorbus run pytorch-evaluator --rank 1 --world-size 2 --init-method tcp://127.0.0.1:29500

and this with

    GLOO_SOCKET_IFNAME=lo python3 examples/pytorch/trainer.py --world-size 2
"""
import argparse
import datetime

import torch
import torch.distributed as dist
import torch.nn.functional as F

from fashion_mnist import DEBIAN_DIR, load

parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
parser.add_argument('--init-method', default='tcp://127.0.0.1:29500')
parser.add_argument('--world-size', type=int, default=2)
parser.add_argument('--epochs', type=int, default=2)
parser.add_argument('--data', default=DEBIAN_DIR, help='Fashion-MNIST gzip IDX files (default: Debian\'s)')
parser.add_argument('--lr', type=float, default=0.05)
args = parser.parse_args()

dist.init_process_group('gloo', init_method=args.init_method, rank=0, world_size=args.world_size,
                        timeout=datetime.timedelta(seconds=300))
torch.manual_seed(0)
x, y = load(args.data, train=True)
test_x, test_y = load(args.data, train=False, limit=1000)
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
dist.broadcast(torch.tensor([args.epochs], dtype=torch.int64), 0)
for epoch in range(1, args.epochs + 1):
    order = torch.randperm(len(x))
    for start in range(0, len(x), 64):
        batch = order[start:start + 64]
        loss = F.cross_entropy(model(x[batch]), y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.broadcast(torch.cat([model.weight.detach().flatten(), model.bias.detach()]), 0)
    counts = torch.zeros(2, dtype=torch.int64)
    dist.all_reduce(counts)
    with torch.no_grad():
        own = (model(test_x).argmax(1) == test_y).sum().item()
    print('epoch %d: the JVM ranks scored %d of %d test images right (%.2f%%); scored here: %d of %d'
          % (epoch, counts[0], counts[1], 100.0 * counts[0] / counts[1], own, len(test_y)), flush=True)
dist.destroy_process_group()
