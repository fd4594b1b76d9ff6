"""Memory held by a 30-op graph on a 2M-element tensor, before and after backward.

Run by the runner in a fresh process (`python -m benchmarks.memory [--quick]`,
JSON on stdout), so that no freed-but-resident heap from earlier workloads
hides new allocations. glibc's mmap threshold is pinned low before anything
else is imported: every large buffer is then its own mapping, returned to
the OS when freed, and the resident set size (RSS) follows what is held.
rtorch-py is also measured with tracemalloc (NumPy reports its buffers to it);
PyTorch's allocator is not visible to tracemalloc, so it has RSS only.
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import sys

MB = 1 << 20
N_OPS = 30


def _pin_mmap_threshold() -> bool:
    try:
        M_MMAP_THRESHOLD = -3
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, 256 * 1024))
    except (OSError, AttributeError):
        return False


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _graph(x):
    y = x
    for _ in range(N_OPS):  # tanh saves its output: one full-size buffer per op
        y = y.tanh()
    return y.sum()


def _measure(make_x, trace: bool) -> dict:
    import tracemalloc
    gc.collect()
    x = make_x()
    base = _rss()
    if trace:
        tracemalloc.start()
    loss = _graph(x)
    out = {"rss_fwd": (_rss() - base) / MB}
    if trace:
        out["tm_fwd"] = tracemalloc.get_traced_memory()[0] / MB
        tracemalloc.reset_peak()
    loss.backward()
    gc.collect()
    out["rss_after"] = (_rss() - base) / MB
    if trace:
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out.update(tm_after=cur / MB, tm_peak_bwd=peak / MB)
    del loss, x
    gc.collect()
    return out


def measure(quick: bool) -> dict:
    pinned = _pin_mmap_threshold()
    import numpy as np
    import torch
    import rtorch_py as rt
    torch.set_num_threads(1)  # elementwise ops only; threads would only add noise here
    n = 20_000 if quick else 2_000_000
    arr = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    ours = _measure(lambda: rt.torch_tensor(arr.copy(), requires_grad=True), trace=True)
    theirs = _measure(lambda: torch.tensor(arr.copy(), requires_grad=True), trace=False)
    return {"elements": n, "ops": N_OPS, "buffer_mb": arr.nbytes / MB, "mmap_pinned": pinned,
            "ours": ours, "torch": theirs}


def measure_memory(quick: bool) -> dict:
    """Run `measure` in a fresh interpreter and return its result."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-m", "benchmarks.memory"] + (["--quick"] if quick else []),
                         cwd=root, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(res.stderr.strip().splitlines()[-1] if res.stderr.strip()
                           else f"exit status {res.returncode}")
    return json.loads(res.stdout)


if __name__ == "__main__":
    print(json.dumps(measure("--quick" in sys.argv)))
