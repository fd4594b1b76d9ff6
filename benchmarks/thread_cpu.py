"""Where the CPU of a float32 zoo training step goes, thread group by thread
group: the main thread, OpenBLAS's workers, rtorch-py's elementwise pool, and
the rest (GNU OpenMP's workers, i.e. oneDNN's). Per-thread CPU from /proc,
which another process's load does not inflate as it does wall time.

    python -m benchmarks.thread_cpu MODEL THREADS [on|off]

`off` raises the product fast path's threshold (`onednn.SMALL_PRODUCT`):
float32 products on OpenBLAS, as before Session 11. OpenBLAS's workers at 0 ms
a step means no product woke them. Linux only (reads /proc/self/task).
"""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np


def _cpu_by_thread() -> dict:
    tick, out = os.sysconf("SC_CLK_TCK"), {}
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:        # a thread that ended meanwhile
            continue
        out[int(t)] = (int(fields[11]) + int(fields[12])) / tick   # utime + stime
    return out


def main(argv: list[str]) -> None:
    name, threads = argv[0], int(argv[1])
    np.ones((300, 300), np.float32) @ np.ones((300, 300), np.float32)  # OpenBLAS's pool up
    blas = set(_cpu_by_thread()) - {threading.get_native_id()}
    from . import zoo
    from rtorch_py.ops import onednn
    if len(argv) > 2 and argv[2] == "off":
        onednn.SMALL_PRODUCT = float("inf")
    zoo.set_threads(threads)
    ours, _ = zoo.build(name, False)
    for _ in range(2):
        ours()
    steps, before = 5, _cpu_by_thread()
    t0 = time.perf_counter()
    for _ in range(steps):
        ours()
    wall = time.perf_counter() - t0
    spent = {t: v - before.get(t, 0.0) for t, v in _cpu_by_thread().items()}
    pool = {t.native_id for t in threading.enumerate() if t.name.startswith("rtorch-py")}
    ms = lambda v: f"{v / steps * 1e3:.0f}"
    main_cpu = spent.pop(threading.get_native_id())
    groups = {"OpenBLAS": sum(v for t, v in spent.items() if t in blas),
              "elementwise pool": sum(v for t, v in spent.items() if t in pool),
              "OpenMP/other": sum(v for t, v in spent.items() if t not in blas | pool)}
    print(f"{name} at {threads} thread(s), products {argv[2] if len(argv) > 2 else 'on'}; "
          f"ms a step: wall {ms(wall)}, CPU {ms(main_cpu + sum(groups.values()))} = main "
          f"{ms(main_cpu)} + " + " + ".join(f"{k} {ms(v)}" for k, v in groups.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
