#!/usr/bin/env python3
"""CPU time per thread kind of the rank JVMs of a running tensorbus job, read from /proc every half second.

Start it, then the job: it waits for rank JVMs (java processes running VertxApplication), follows them until
they exit, and prints the CPU seconds of each kind of thread over all ranks (training threads, C2 and C1
compiler threads, GC and VM threads, event loops), then the CPU each kind used in every two seconds. It is how
issue 17 split a first epoch into training and JIT compilation:

    python3 tools/rank-thread-cpu.py & sleep 0.2; ./tensorbus run ddp-fashion-mnist; wait
"""
import collections
import os
import time

HZ = os.sysconf("SC_CLK_TCK")


def ranks():
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        if "java" in cmd and "VertxApplication" in cmd:
            out.append(pid)
    return out


def kind(name):
    if name.startswith("C2 Comp"):
        return "C2"
    if name.startswith("C1 Comp"):
        return "C1"
    if "GC" in name or name.startswith("VM Thread"):
        return "gc/vm"
    return name


def snapshot(pids):
    cpu = collections.Counter()
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                stat = open(f"/proc/{pid}/task/{tid}/stat").read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            cpu[(pid, kind(name))] += (int(fields[11]) + int(fields[12])) / HZ
    return cpu


def by_kind(snap):
    out = collections.Counter()
    for (_, k), v in snap.items():
        out[k] += v
    return out


def main():
    start = time.time()
    series = []
    seen = False
    while time.time() - start < 600:
        pids = ranks()
        if not pids and seen:
            break
        if pids:
            seen = True
            series.append((time.time() - start, snapshot(pids)))
        time.sleep(0.5)
    if not series:
        print("no rank JVM seen")
        return
    final = by_kind(series[-1][1])
    print("cpu seconds by thread kind:", [(k, round(v, 1)) for k, v in final.most_common(12)])
    previous = collections.Counter()
    for i, (t, snap) in enumerate(series):
        if i % 4:
            continue
        now = by_kind(snap)
        delta = {k: round(now[k] - previous[k], 2) for k in now if now[k] - previous[k] > 0.05}
        print(round(t, 1), sorted(delta.items(), key=lambda kv: -kv[1])[:6])
        previous = now


if __name__ == "__main__":
    main()
