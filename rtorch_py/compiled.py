"""Kernels compiled with numba on first use (FAST PATHS of `ops`, `optim`, `random`).

numba is imported when a kernel is first asked for, not with the package (it
costs ~0.2 s), and the machine code is cached beside the module
(`cache=True`). Without numba a kernel is None and its caller keeps its NumPy
path. (`ops/bn_kernel.py` compiles its kernels itself: it needs an LLVM
intrinsic and numba's SLP vectoriser switched on for one of them.)
"""
from __future__ import annotations

from typing import Any, Callable


def numba_kernel(fn: Callable, calls: tuple[str, ...] = (), **options: Any
                 ) -> Callable[[], Callable | None]:
    """A function giving `fn` compiled with numba (`nogil`, cached machine code,
    plus `options`), compiled on its first call; None without numba. `calls`:
    names of functions of fn's module that fn calls, compiled first and rebound
    there (a compiled function finds them by their global names)."""
    done: list = []

    def kernel() -> Callable | None:
        if not done:
            try:
                import numba
            except ImportError:
                done.append(None)
            else:
                module = fn.__globals__
                for name in calls:
                    module[name] = numba.njit(cache=True, nogil=True)(module[name])
                done.append(numba.njit(cache=True, nogil=True, **options)(fn))
        return done[0]
    return kernel
