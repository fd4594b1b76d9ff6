"""Tensor constructors with R torch's names (`torch_tensor`, `torch_zeros`, ...)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .tensor import Tensor, as_dtype, bool_, float32, float64, int32, int64, to_array, wrap
from .tensor import dtype as Dtype

_rng = np.random.default_rng()


def torch_manual_seed(seed: int) -> None:
    """Seed the generator behind torch_randn/rand/randint (NumPy's PCG64, so the
    numbers differ from libtorch's for the same seed)."""
    global _rng
    _rng = np.random.default_rng(int(seed))


def _finish(arr: np.ndarray, dtype: Any, requires_grad: bool, default: Dtype = float32) -> Tensor:
    target = as_dtype(dtype).np if dtype is not None else default.np
    if arr.dtype != target:
        arr = arr.astype(target)
    t = wrap(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _size(size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    out = []
    for s in size:
        s = int(s)
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(s)
    return tuple(out)


def _check_device(device: Any) -> None:
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"only the 'cpu' device exists here, got {device!r}")


def torch_tensor(data: Any, dtype: Any = None, device: Any = "cpu",
                 requires_grad: bool = False) -> Tensor:
    """A tensor from numbers, nested lists, a NumPy array (zero-copy where the
    dtype allows) or another tensor."""
    _check_device(device)
    t = wrap(to_array(data, dtype))
    if requires_grad:
        t.requires_grad = True
    return t


def torch_zeros(*size: Any, dtype: Any = None, device: Any = "cpu",
                requires_grad: bool = False) -> Tensor:
    _check_device(device)
    return _finish(np.zeros(_size(size), dtype=as_dtype(dtype or float32).np), dtype,
                   requires_grad)


def torch_ones(*size: Any, dtype: Any = None, device: Any = "cpu",
               requires_grad: bool = False) -> Tensor:
    _check_device(device)
    return _finish(np.ones(_size(size), dtype=as_dtype(dtype or float32).np), dtype,
                   requires_grad)


def torch_empty(*size: Any, dtype: Any = None, device: Any = "cpu",
                requires_grad: bool = False) -> Tensor:
    _check_device(device)
    return _finish(np.empty(_size(size), dtype=as_dtype(dtype or float32).np), dtype,
                   requires_grad)


def torch_full(size: Any, fill_value: Any, dtype: Any = None, device: Any = "cpu",
               requires_grad: bool = False) -> Tensor:
    _check_device(device)
    if dtype is None:
        default = bool_ if isinstance(fill_value, bool) else \
            int64 if isinstance(fill_value, (int, np.integer)) else float32
    else:
        default = as_dtype(dtype)
    return _finish(np.full(_size((size,)), fill_value, dtype=default.np), dtype,
                   requires_grad, default)


def torch_randn(*size: Any, dtype: Any = None, device: Any = "cpu",
                requires_grad: bool = False) -> Tensor:
    _check_device(device)
    return _finish(_rng.standard_normal(_size(size)), dtype, requires_grad)


def torch_rand(*size: Any, dtype: Any = None, device: Any = "cpu",
               requires_grad: bool = False) -> Tensor:
    _check_device(device)
    return _finish(_rng.random(_size(size)), dtype, requires_grad)


def torch_randint(low: int, high: int | None = None, size: Any = None, dtype: Any = None,
                  device: Any = "cpu", requires_grad: bool = False) -> Tensor:
    """Integers in [low, high); `torch_randint(high, size=)` also works."""
    _check_device(device)
    if size is None:
        raise TypeError("torch_randint() needs a size, e.g. torch_randint(0, 10, size = c(2, 2))")
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    size = _size(size if isinstance(size, (list, tuple)) else (size,))
    return _finish(_rng.integers(low, high, size=size), dtype, requires_grad, int64)


def torch_arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None,
                 device: Any = "cpu", requires_grad: bool = False) -> Tensor:
    """Values from start up to (but excluding) end, as PyTorch's arange."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("torch_arange: step must be nonzero")
    all_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    arr = np.arange(start, end, step)
    return _finish(arr, dtype, requires_grad, int64 if all_int else float32)


def torch_linspace(start: float, end: float, steps: int = 100, dtype: Any = None,
                   device: Any = "cpu", requires_grad: bool = False) -> Tensor:
    _check_device(device)
    return _finish(np.linspace(start, end, int(steps)), dtype, requires_grad)


def torch_eye(n: int, m: int | None = None, dtype: Any = None, device: Any = "cpu",
              requires_grad: bool = False) -> Tensor:
    _check_device(device)
    return _finish(np.eye(int(n), None if m is None else int(m)), dtype, requires_grad)


def _like(x: Tensor, dtype: Any) -> Any:
    return dtype if dtype is not None else x.dtype


def torch_zeros_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return torch_zeros(x.shape, dtype=_like(x, dtype), requires_grad=requires_grad)


def torch_ones_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return torch_ones(x.shape, dtype=_like(x, dtype), requires_grad=requires_grad)


def torch_empty_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return torch_empty(x.shape, dtype=_like(x, dtype), requires_grad=requires_grad)


def torch_full_like(x: Tensor, fill_value: Any, dtype: Any = None,
                    requires_grad: bool = False) -> Tensor:
    return torch_full(x.shape, fill_value, dtype=_like(x, dtype), requires_grad=requires_grad)


def torch_randn_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return torch_randn(x.shape, dtype=_like(x, dtype), requires_grad=requires_grad)


def torch_rand_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return torch_rand(x.shape, dtype=_like(x, dtype), requires_grad=requires_grad)


# dtype constructors, as R torch spells them

def torch_float() -> Dtype: return float32
def torch_float32() -> Dtype: return float32
def torch_double() -> Dtype: return float64
def torch_float64() -> Dtype: return float64
def torch_long() -> Dtype: return int64
def torch_int64() -> Dtype: return int64
def torch_int() -> Dtype: return int32
def torch_int32() -> Dtype: return int32
def torch_bool() -> Dtype: return bool_


def as_array(x: Tensor) -> np.ndarray:
    """The tensor's values as a NumPy array."""
    if not isinstance(x, Tensor):
        raise TypeError(f"as_array() expects a tensor, got {type(x).__name__}")
    return x.data


def is_torch_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)
