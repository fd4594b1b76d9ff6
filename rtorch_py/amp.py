"""Automatic mixed precision on the CPU, as R torch's `set_autocast()`: while on,
matrix products and convolutions run in bfloat16 (or the dtype asked for), the
ops libtorch keeps in float32 run in float32, and cat/stack promote (each op's
`@op(autocast=...)`: libtorch's CPU lists). The state is per thread, as libtorch's."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .formals import r_formals
from .ops.dispatch import AUTOCAST, autocast_set
from .tensor import as_dtype

__all__ = ["set_autocast", "unset_autocast", "with_autocast"]


def _cpu_only(device_type: Any) -> None:
    if str(device_type) != "cpu":
        raise ValueError(f"autocast: only the 'cpu' device exists here, got {device_type!r}")


@r_formals("device_type, dtype = NULL, enabled = TRUE, cache_enabled = NULL")  # (R torch's)
def set_autocast(device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> dict:
    """Turn autocast on (or off: `enabled=False`); returns the context that
    `unset_autocast()` takes to restore the state before."""
    _cpu_only(device_type)
    fast = as_dtype(dtype) if dtype is not None else (AUTOCAST.dtype or as_dtype("bfloat16"))
    was_on, was_dtype, was_cache = autocast_set(enabled, fast, cache_enabled)
    AUTOCAST.nesting += 1
    return {"device": "cpu", "enabled": was_on, "fast_dtype": was_dtype or as_dtype("bfloat16"),
            "cache_enabled": was_cache}


def unset_autocast(context: dict) -> None:
    """Restore the state `set_autocast()` found."""
    _cpu_only(context["device"])
    AUTOCAST.nesting = max(AUTOCAST.nesting - 1, 0)
    autocast_set(context["enabled"], context["fast_dtype"], context["cache_enabled"])


@contextlib.contextmanager
def with_autocast(device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                  cache_enabled: bool | None = None) -> Iterator[None]:
    """`with with_autocast("cpu"):` — autocast inside the block."""
    context = set_autocast(device_type, dtype, enabled, cache_enabled)
    try:
        yield
    finally:
        unset_autocast(context)
