"""A PyTorch rank of a mixed job for GlooInteropTest: it runs the ops of GlooInteropScript in the same order as
the JVM ranks, with the same generated data, and checks every result. Arguments: store host, store port, rank,
world size, and 'host' when this rank hosts the TCPStore. Exits non-zero, naming the op, on the first wrong result.
"""
import datetime
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

host, port, rank, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
hosting = len(sys.argv) > 5 and sys.argv[5] == 'host'
os.environ.setdefault('GLOO_SOCKET_IFNAME', 'lo')
timeout = datetime.timedelta(seconds=60)
# A PyTorch built without libuv (Debian's 2.x) must say so, as its own jobs do through USE_LIBUV=0; 1.13 has no such
# argument.
libuv = {'use_libuv': False} if os.environ.get('USE_LIBUV') == '0' else {}
store = dist.TCPStore(host, port, None, hosting, timeout, wait_for_workers=False, **libuv)
if hosting:
    print('port', store.port, flush=True)
dist.init_process_group('gloo', store=dist.PrefixStore('default_pg', store), rank=rank, world_size=world,
                        timeout=timeout)

DTYPES = {'float32': torch.float32, 'float64': torch.float64, 'int32': torch.int32, 'int64': torch.int64}
OPS = {'SUM': dist.ReduceOp.SUM, 'PRODUCT': dist.ReduceOp.PRODUCT, 'MIN': dist.ReduceOp.MIN,
       'MAX': dist.ReduceOp.MAX}
seq = [0]


def num(text):
    """A count or a rank of the script; LAST is the last rank."""
    return world - 1 if text == 'LAST' else int(text)


def data(r, n, dtype, small=False):
    """The block rank r contributes to the current op: hash-like, exactly representable, as the JVM makes it."""
    i = np.arange(n, dtype=np.int64)
    k = (i * 2654435761 + r * 40503 + seq[0] * 97 + 12345) % 2147483648
    v = (k % 5) - 2 if small else (k % 2001) - 1000
    if dtype in (torch.float32, torch.float64):
        v = v / 2.0 if small else v / 64.0
    return torch.from_numpy(np.asarray(v)).to(dtype)


def check(what, got, want):
    if not torch.equal(got, want):
        bad = (got != want).nonzero()[0].item()
        sys.exit('rank %d: %s differs at %d: %s, expected %s' % (rank, what, bad, got[bad].item(), want[bad].item()))


def reduced(op, blocks):
    out = blocks[0].clone()
    for b in blocks[1:]:
        out = {'SUM': torch.add, 'PRODUCT': torch.mul, 'MIN': torch.minimum, 'MAX': torch.maximum}[op](out, b)
    return out


script_path = sys.argv[6] if len(sys.argv) > 6 else os.path.join(os.path.dirname(sys.argv[0]), 'gloo_script.txt')
with open(script_path) as f:
    script = [line.split() for line in f if line.strip() and not line.startswith('#')]
for step in script:
    seq[0] += 1
    kind = step[0]
    if kind == 'allreduce':
        dtype, op, n = DTYPES[step[1]], step[2], num(step[3])
        small = op == 'PRODUCT'
        t = data(rank, n, dtype, small)
        dist.all_reduce(t, OPS[op])
        check(' '.join(step), t, reduced(op, [data(r, n, dtype, small) for r in range(world)]))
    elif kind == 'reduce':
        dtype, op, n, root = DTYPES[step[1]], step[2], num(step[3]), num(step[4])
        t = data(rank, n, dtype)
        dist.reduce(t, root, OPS[op])
        if rank == root:
            check(' '.join(step), t, reduced(op, [data(r, n, dtype) for r in range(world)]))
    elif kind == 'broadcast':
        dtype, n, root = DTYPES[step[1]], num(step[2]), num(step[3])
        t = data(rank, n, dtype)
        dist.broadcast(t, root)
        check(' '.join(step), t, data(root, n, dtype))
    elif kind == 'allgather':
        dtype, n = DTYPES[step[1]], num(step[2])
        outs = [torch.zeros(n, dtype=dtype) for _ in range(world)]
        dist.all_gather(outs, data(rank, n, dtype))
        for r in range(world):
            check(' '.join(step) + ' block %d' % r, outs[r], data(r, n, dtype))
    elif kind == 'gather':
        dtype, n, root = DTYPES[step[1]], num(step[2]), num(step[3])
        outs = [torch.zeros(n, dtype=dtype) for _ in range(world)] if rank == root else None
        dist.gather(data(rank, n, dtype), outs, root)
        if rank == root:
            for r in range(world):
                check(' '.join(step) + ' block %d' % r, outs[r], data(r, n, dtype))
    elif kind == 'scatter':
        dtype, n, root = DTYPES[step[1]], num(step[2]), num(step[3])
        out = torch.zeros(n, dtype=dtype)
        ins = [data(1000 + r, n, dtype) for r in range(world)] if rank == root else None
        dist.scatter(out, ins, root)
        check(' '.join(step), out, data(1000 + rank, n, dtype))
    elif kind == 'barrier':
        dist.barrier()
    elif kind == 'sendrecv':
        dtype, n, tag = DTYPES[step[1]], num(step[2]), num(step[3])
        out = torch.zeros(n, dtype=dtype)
        sent = dist.isend(data(rank, n, dtype), (rank + 1) % world, tag=tag)
        dist.recv(out, (rank + world - 1) % world, tag=tag)
        sent.wait()
        check(' '.join(step), out, data((rank + world - 1) % world, n, dtype))
    elif kind == 'alltoall':
        dtype, n, even = DTYPES[step[1]], num(step[2]), step[3] == 'even'

        def count(s, d):
            return n if even else ((s + 2 * d) % 3) * n
        inp = torch.cat([data(100 * rank + d, count(rank, d), dtype) for d in range(world)])
        out = torch.zeros(sum(count(s, rank) for s in range(world)), dtype=dtype)
        if even:
            dist.all_to_all_single(out, inp)
        else:
            dist.all_to_all_single(out, inp, [count(s, rank) for s in range(world)],
                                   [count(rank, d) for d in range(world)])
        check(' '.join(step), out, torch.cat([data(100 * s + rank, count(s, rank), dtype) for s in range(world)]))
    else:
        sys.exit('unknown step ' + kind)
dist.destroy_process_group()
print('python rank %d ok after %d steps' % (rank, seq[0]), flush=True)
