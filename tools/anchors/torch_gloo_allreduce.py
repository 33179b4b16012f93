"""Anchor: gloo all-reduce of 4 B and 64 MiB between two ranks, all PyTorch or one PyTorch rank beside a JVM rank.
Usage: python3 torch_gloo_allreduce.py [--world N] [--warmup ROUNDS] [--init-method URL --rank R]
  Without --rank it spawns every rank itself (a pure gloo job); with --rank it runs that rank only and the JVM
  runs the others (tensorbus bench gloo-mixed). Each size: ROUNDS (4 B) or 3 (64 MiB) untimed all-reduces, then
  200 (4 B) or 10 (64 MiB) timed ones, each after a barrier. Rank 0 prints: all_reduce BYTES MEDIAN_S
"""
import argparse
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [4, 64 << 20]


def rounds(nbytes, warmup):
    """(untimed, timed) all-reduces of a size; the JVM side uses the same counts."""
    return (warmup, 200) if nbytes <= 4096 else (3, 10)


def run(rank, world, init_method, warmup):
    torch.set_num_threads(1)
    dist.init_process_group('gloo', init_method=init_method, rank=rank, world_size=world)
    for nbytes in SIZES:
        t = torch.ones(nbytes // 4)
        untimed, timed = rounds(nbytes, warmup)
        for _ in range(untimed):
            dist.all_reduce(t)
        times = []
        for _ in range(timed):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        if rank == 0:
            print('all_reduce %d %.6f' % (nbytes, statistics.median(times)), flush=True)
    dist.destroy_process_group()


if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--world', type=int, default=2)
    p.add_argument('--warmup', type=int, default=5000)
    p.add_argument('--init-method', default='tcp://127.0.0.1:29631')
    p.add_argument('--rank', type=int)
    a = p.parse_args()
    if a.rank is None:
        mp.spawn(run, args=(a.world, a.init_method, a.warmup), nprocs=a.world, join=True)
    else:
        run(a.rank, a.world, a.init_method, a.warmup)
