"""The process's settings R torch exposes: the thread counts (the intra-op count
governs NumPy's BLAS threads, through threadpoolctl, and the engine's pool for
large elementwise work, `ops.parallel`; the inter-op count is only kept, as
libtorch reports it back) and the CPU allocator's cache (NumPy allocates:
nothing to configure or flush).
"""
from __future__ import annotations

import os


def _env_threads() -> int | None:
    """The intra-op count the environment asks for, as libtorch reads it at start:
    OMP_NUM_THREADS, overridden by MKL_NUM_THREADS; a value that is not a positive
    integer is ignored."""
    count = None
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            count = int(value)
    return count


_THREADS = {"intra": _env_threads() or os.cpu_count() or 1, "interop": os.cpu_count() or 1}


def _positive_threads(n: int) -> int:
    if int(n) != n or n <= 0:
        raise RuntimeError(f"Expected a positive number of threads, got {n}")
    return int(n)


def torch_get_num_threads() -> int:
    return _THREADS["intra"]


def torch_set_num_threads(num_threads: int) -> None:
    _THREADS["intra"] = _positive_threads(num_threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # (a dependency; without it BLAS keeps its own count)
        return
    threadpool_limits(_THREADS["intra"], user_api="blas")


def torch_get_num_interop_threads() -> int:
    return _THREADS["interop"]


def torch_set_num_interop_threads(num_threads: int) -> None:
    _THREADS["interop"] = _positive_threads(num_threads)


def set_cpu_allocator_config(threshold_call_gc: int = 4000, cache_enabled: bool = True,
                             cache_max_size_mb: int | None = None,
                             cache_min_block_size: int = 1024) -> None:
    """R torch's allocator settings: accepted, nothing to set here."""


def cpu_cache_flush() -> None:
    """R torch's allocator cache flush: nothing cached here."""


__all__ = ["torch_get_num_threads", "torch_set_num_threads", "torch_get_num_interop_threads",
           "torch_set_num_interop_threads", "set_cpu_allocator_config", "cpu_cache_flush"]
