"""Peak memory of a 30-op graph on a 2M-element tensor, before and after backward.

rtorch-py is measured with tracemalloc (NumPy reports its buffers to it) and,
like PyTorch, by the process's resident set size. For RSS to follow frees,
glibc's mmap threshold is pinned low so every large buffer is its own mapping
that goes back to the OS when freed (this setting stays for the rest of the
process, so the runner does this measurement last).
"""
from __future__ import annotations

import ctypes
import gc
import os
import tracemalloc

import numpy as np
import torch

import rtorch_py as rt

MB = 1 << 20
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _pin_mmap_threshold() -> bool:
    try:
        libc = ctypes.CDLL("libc.so.6")
        M_MMAP_THRESHOLD = -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 256 * 1024))
    except OSError:
        return False


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def _graph(x, n_ops: int):
    y = x
    for i in range(n_ops):        # each op saves one full-size buffer for backward
        y = y.sin() if i % 2 == 0 else y.tanh()
    return y.sum()


def _measure(make_x, n_ops: int, trace: bool) -> dict:
    gc.collect()
    x = make_x()
    gc.collect()
    base_rss = _rss()
    if trace:
        tracemalloc.start()
    loss = _graph(x, n_ops)
    fwd_rss = _rss()
    fwd_tm = tracemalloc.get_traced_memory()[0] if trace else None
    if trace:
        tracemalloc.reset_peak()
    loss.backward()
    gc.collect()
    after_rss = _rss()
    if trace:
        after_tm, peak_tm = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    out = {
        "rss_fwd": (fwd_rss - base_rss) / MB,
        "rss_after": (after_rss - base_rss) / MB,
        "grad_ok": x.grad is not None,
    }
    if trace:
        out.update(tm_fwd=fwd_tm / MB, tm_after=after_tm / MB, tm_peak_bwd=peak_tm / MB)
    del loss, x
    gc.collect()
    return out


def measure_memory(quick: bool) -> dict:
    """Held memory (MB) after forward and after backward, for both engines."""
    n, n_ops = (20_000, 30) if quick else (2_000_000, 30)
    pinned = _pin_mmap_threshold()
    arr = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    buf = arr.nbytes / MB
    ours = _measure(lambda: rt.torch_tensor(arr.copy(), requires_grad=True), n_ops, trace=True)
    theirs = _measure(lambda: torch.tensor(arr.copy(), requires_grad=True), n_ops, trace=False)
    return {"elements": n, "ops": n_ops, "buffer_mb": buf, "mmap_pinned": pinned,
            "ours": ours, "torch": theirs}
