"""Large elementwise work in cache-sized blocks, spread over a small pool of
threads (NumPy releases the GIL inside its loops).

A chain of in-place passes over whole arrays (an optimiser's update) reads
and writes memory once per pass; over one block at a time the later passes
find the block in cache. With more than one thread (`torch_set_num_threads`)
each takes a contiguous run of blocks. Every element gets the same operations
in the same order as on the whole array, so results are bit for bit the same.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from .. import runtime

BLOCK = 1 << 15        # elements a block: a few float32 arrays of it fit in L2
PARALLEL_MIN = 1 << 18  # fewer elements than this: one thread (a hand-off costs ~50 us)

_pool: dict = {"size": 0, "executor": None, "pid": None}
_pool_lock = threading.Lock()


def _executor(workers: int) -> ThreadPoolExecutor:
    """The pool of helper threads (the caller's thread works too); a new one after
    a fork, whose child has none of the parent's threads."""
    with _pool_lock:
        if _pool["size"] != workers or _pool["pid"] != os.getpid():
            if _pool["executor"] is not None and _pool["pid"] == os.getpid():
                _pool["executor"].shutdown(wait=False)
            _pool.update(executor=ThreadPoolExecutor(workers, thread_name_prefix="rtorch-py"),
                         size=workers, pid=os.getpid())
        return _pool["executor"]


def threads_for(n: int) -> int:
    """How many threads n elements of elementwise work get."""
    if n < PARALLEL_MIN:
        return 1
    return max(1, min(runtime.torch_get_num_threads(), n // (PARALLEL_MIN // 2)))


def blockwise(fn: Callable[..., None], arrays: list, scratch: np.dtype | None = None) -> None:
    """fn(*block_views, tmp) for every block of the flattened same-sized
    C-contiguous `arrays` (changed in place through the views); `tmp` is a
    scratch array of `scratch` dtype as long as the block (None without one).
    Whole arrays that are not C-contiguous are passed as they are, in one call."""
    n = arrays[0].size
    if n <= BLOCK or not all(a.flags.c_contiguous for a in arrays):
        fn(*arrays, None if scratch is None else np.empty(arrays[0].shape, scratch))
        return
    flats = [a.reshape(-1) for a in arrays]
    nblocks = -(-n // BLOCK)
    workers = min(threads_for(n), nblocks)

    def run(first: int, last: int) -> None:
        tmp = None if scratch is None else np.empty(BLOCK, scratch)
        for b in range(first, last):
            s, e = b * BLOCK, min(n, (b + 1) * BLOCK)
            fn(*(f[s:e] for f in flats), None if tmp is None else tmp[:e - s])

    spread(run, nblocks, workers)


def spread(run: Callable[[int, int], None], n: int, workers: int) -> None:
    """run(first, last) over `workers` contiguous runs of range(n), one a thread
    (the caller's among them)."""
    if workers <= 1:
        run(0, n)
        return
    bounds = [n * k // workers for k in range(workers + 1)]
    pool = _executor(workers - 1)
    futures = [pool.submit(run, bounds[k], bounds[k + 1]) for k in range(1, workers)]
    try:
        run(bounds[0], bounds[1])
    finally:
        for f in futures:
            f.result()
