#!/usr/bin/env python3
"""This machine's memory-copy bandwidth, the yardstick of issue 18's goal for 64 MiB collectives.

Copies a 64 MiB float32 tensor with one torch thread 20 times and prints the median, as GB/s of bytes copied.
Run it alone, then two at once to see what two ranks copying side by side get each:

    /usr/bin/python3 tools/memcpy-bandwidth.py
    /usr/bin/python3 tools/memcpy-bandwidth.py & /usr/bin/python3 tools/memcpy-bandwidth.py; wait
"""
import time

import torch

torch.set_num_threads(1)
a = torch.ones(16 << 20)
b = torch.empty(16 << 20)
for _ in range(3):
    b.copy_(a)
times = []
for _ in range(20):
    t = time.perf_counter()
    b.copy_(a)
    times.append(time.perf_counter() - t)
times.sort()
median = times[len(times) // 2]
print("memcpy 64 MiB: median %.2f ms = %.2f GB/s" % (median * 1e3, 64 * 2**20 / median / 1e9))
