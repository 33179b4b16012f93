#!/usr/bin/env python3
"""Runs a command and reports the peak resident memory (VmHWM) of every process it starts, read from /proc every
50 ms until each ends: how docs/benchmarks.md compares the ranks of ./tensorbus run ddp-fashion-mnist with those of
tools/anchors/torch_ddp_fashion_mnist.py. Prints one line per process that held at least --min-mib, then
`peak_rss max_mib=M` for the largest, on stderr; the command's own output passes through.

python3 tools/peak_rss.py [--min-mib 50] -- COMMAND [ARGS...]"""
import os
import subprocess
import sys
import time


def children(pid):
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def name(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            parts = f.read().split(b"\0")
        return " ".join(p.decode(errors="replace") for p in parts if p)[-120:]
    except OSError:
        return None


def main():
    args = sys.argv[1:]
    min_mib = 50.0
    if args[:1] == ["--min-mib"]:
        min_mib = float(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    root = subprocess.Popen(args)
    peaks, names = {}, {}
    while root.poll() is None:
        todo, seen = [root.pid], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            kib = hwm_kib(pid)
            if kib is not None:
                peaks[pid] = max(peaks.get(pid, 0), kib)
                names[pid] = name(pid) or names.get(pid, "?")
            todo.extend(children(pid))
        time.sleep(0.05)
    shown = [(kib, pid) for pid, kib in peaks.items() if kib / 1024 >= min_mib]
    for kib, pid in sorted(shown, reverse=True):
        print(f"peak_rss pid={pid} mib={kib / 1024:.1f} cmd={names[pid]}", file=sys.stderr)
    print(f"peak_rss max_mib={max(peaks.values(), default=0) / 1024:.1f}", file=sys.stderr)
    sys.exit(root.returncode)


if __name__ == "__main__":
    main()
