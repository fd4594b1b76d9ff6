"""Quantized tensors (affine, per tensor or per channel), as far as R torch code
meets them: `torch_quantize_per_tensor()` and `torch_quantize_per_channel()` make one, `x.dequantize()` gives floats back,
`x.int_repr()`, `x.q_scale()`, `x.q_zero_point()`, `x.element_size()` and
printing work. Arithmetic on quantized tensors is refused (dequantize first).

A quantized tensor's array is a `QuantizedArray` holding its integers in a
one-field NumPy record (`tensor.quint8` ...): NumPy hands any computation on it
to the hooks below, which refuse it clearly. Its scale and zero point are kept
on the tensor (`tensor.QPARAMS`), which prints it. The public face
(`rtorch_py/__init__.py`) makes these functions Tensor methods.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .constructors import QScheme, torch_per_channel_affine, torch_per_tensor_affine
from .tensor import QPARAMS, QUANTIZED, Tensor, as_dtype, dequantized, wrap


class QuantizedArray(np.ndarray):
    """A quantized tensor's integers: ops computing on them are refused."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        raise _refused(ufunc.__name__, self)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise _refused(func.__name__, self)


def _refused(name: str, arr: np.ndarray) -> NotImplementedError:
    return NotImplementedError(f"{name}() is not supported for quantized tensors: "
                               "dequantize() them first, e.g. x$dequantize()")


def _check_quantized(x: Tensor, what: str) -> tuple:
    q = x.__dict__.get(QPARAMS) if isinstance(x, Tensor) else None
    if q is None:
        raise RuntimeError(f"{what}() needs a quantized tensor (made by "
                           f"torch_quantize_per_tensor()), got a {x.dtype!r} one"
                           if isinstance(x, Tensor) else f"{what}() needs a tensor")
    return q


def _quantize_args(self: Tensor, dtype: Any, what: str) -> Any:
    d = as_dtype(dtype)
    if d not in QUANTIZED:
        raise RuntimeError(f"{what}(): dtype must be torch_quint8(), torch_qint8() or "
                           f"torch_qint32(), got {d!r}")
    if not isinstance(self, Tensor) or self.data.dtype.kind != "f":
        got = repr(self.dtype) if isinstance(self, Tensor) else type(self).__name__
        raise RuntimeError(f"{what}(): quantizes a floating point tensor, got {got}")
    return d


def _quantized(self: Tensor, d: Any, inv_scale: Any, zero_point: Any, qparams: tuple) -> Tensor:
    """round(self * inv_scale) + zero_point (ties to even), clamped to the dtype's
    range (as libtorch: the float reciprocal of the scale)."""
    base = d.np.fields[d.name][0]
    info = np.iinfo(base)
    q = np.rint(self.data.astype(np.float32) * inv_scale).astype(np.float64) + zero_point
    ints = np.clip(q, info.min, info.max).astype(base)
    out = wrap(np.ascontiguousarray(ints).view(d.np).reshape(self.shape).view(QuantizedArray))
    out.__dict__[QPARAMS] = qparams
    return out


def torch_quantize_per_tensor(self: Tensor, scale: float, zero_point: int, dtype: Any) -> Tensor:
    """Round `self / scale` to the nearest integer (ties to even), add `zero_point`
    and clamp to the dtype's range (torch_quint8(), torch_qint8() or torch_qint32())."""
    d = _quantize_args(self, dtype, "torch_quantize_per_tensor")
    scale, zero_point = float(scale), int(zero_point)
    if not scale > 0:
        raise RuntimeError(f"torch_quantize_per_tensor(): scale must be positive, got {scale}")
    return _quantized(self, d, np.float32(1.0) / np.float32(scale), zero_point,
                      (scale, zero_point))


def torch_quantize_per_channel(self: Tensor, scales: Any, zero_points: Any, axis: int,
                               dtype: Any) -> Tensor:
    """torch_quantize_per_tensor() with one scale and zero point per slice along
    dim `axis` (0-based, in R too, as in R torch)."""
    d = _quantize_args(self, dtype, "torch_quantize_per_channel")
    s = np.asarray(scales.data if isinstance(scales, Tensor) else scales,
                   dtype=np.float64).reshape(-1)
    z = np.asarray(zero_points.data if isinstance(zero_points, Tensor) else zero_points)
    z = z.reshape(-1).astype(np.int64)
    axis = int(axis)
    if not 0 <= axis < self.ndim:
        raise RuntimeError(f"Channel axis out of range in per channel affine quantization. Got: "
                           f"{axis} Expected: < {self.ndim}")
    n = self.shape[axis]
    if len(s) != n or len(z) != n:
        raise RuntimeError(f"length of scales and zero_points must match the size of the "
                           f"axis ({n}), got {len(s)} scales and {len(z)} zero points")
    if not np.all(s > 0):
        raise RuntimeError("torch_quantize_per_channel(): scales must be positive")
    along = [-1 if i == axis else 1 for i in range(self.ndim)]
    inv = (np.float32(1.0) / s.astype(np.float32)).reshape(along)
    return _quantized(self, d, inv, z.reshape(along), (s, z, axis))


def _per_channel(x: Tensor, what: str) -> tuple:
    q = _check_quantized(x, what)
    if len(q) != 3:
        raise RuntimeError(f"{what}() needs a tensor quantized per channel (by "
                           "torch_quantize_per_channel())")
    return q


def q_per_channel_scales(self: Tensor) -> Tensor:
    return wrap(_per_channel(self, "q_per_channel_scales")[0].copy())


def q_per_channel_zero_points(self: Tensor) -> Tensor:
    return wrap(_per_channel(self, "q_per_channel_zero_points")[1].copy())


def q_per_channel_axis(self: Tensor) -> int:
    return _per_channel(self, "q_per_channel_axis")[2]


def qscheme(self: Tensor) -> QScheme:
    """Affine per tensor or per channel (the schemes quantizing makes here)."""
    per_channel = len(_check_quantized(self, "qscheme")) == 3
    return torch_per_channel_affine() if per_channel else torch_per_tensor_affine()


def int_repr(self: Tensor) -> Tensor:
    """The stored integers (uint8, int8 or int32)."""
    _check_quantized(self, "int_repr")
    return wrap(self.data.view(np.ndarray)[self.dtype.name].copy())


def dequantize(self: Tensor) -> Tensor:
    """(integers - zero_point) * scale, in float32."""
    _check_quantized(self, "dequantize")
    return wrap(dequantized(self))


def torch_dequantize(tensor: Any) -> Any:
    """`dequantize()` of a tensor, or of each tensor of a list."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    return dequantize(tensor)


def _per_tensor(x: Tensor, what: str) -> tuple:
    q = _check_quantized(x, what)
    if len(q) != 2:
        raise RuntimeError(f"{what}() needs a tensor quantized per tensor: this one is "
                           "quantized per channel (see q_per_channel_scales())")
    return q


def q_scale(self: Tensor) -> float:
    return _per_tensor(self, "q_scale")[0]


def q_zero_point(self: Tensor) -> int:
    return _per_tensor(self, "q_zero_point")[1]


def is_quantized(self: Tensor) -> bool:
    return QPARAMS in self.__dict__
