"""Quantized tensors (per-tensor affine), as far as R torch code meets them:
`torch_quantize_per_tensor()` makes one, `x.dequantize()` gives floats back,
`x.int_repr()`, `x.q_scale()`, `x.q_zero_point()`, `x.element_size()` and
printing work. Arithmetic on quantized tensors is refused (dequantize first).

A quantized tensor's array is a `QuantizedArray` holding its integers in a
one-field NumPy record (`tensor.quint8` ...): NumPy hands any computation on it
to the hooks below, which refuse it clearly. Its scale and zero point are kept
on the tensor.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .tensor import QUANTIZED, Tensor, as_dtype, wrap

_QPARAMS = "_qparams"  # (scale, zero_point), in the tensor's __dict__


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
    q = x.__dict__.get(_QPARAMS) if isinstance(x, Tensor) else None
    if q is None:
        raise RuntimeError(f"{what}() needs a quantized tensor (made by "
                           f"torch_quantize_per_tensor()), got a {x.dtype!r} one"
                           if isinstance(x, Tensor) else f"{what}() needs a tensor")
    return q


def torch_quantize_per_tensor(self: Tensor, scale: float, zero_point: int, dtype: Any) -> Tensor:
    """Round `self / scale` to the nearest integer (ties to even), add `zero_point`
    and clamp to the dtype's range (torch_quint8(), torch_qint8() or torch_qint32())."""
    d = as_dtype(dtype)
    if d not in QUANTIZED:
        raise RuntimeError(f"torch_quantize_per_tensor(): dtype must be torch_quint8(), "
                           f"torch_qint8() or torch_qint32(), got {d!r}")
    if not isinstance(self, Tensor) or self.data.dtype.kind != "f":
        got = repr(self.dtype) if isinstance(self, Tensor) else type(self).__name__
        raise RuntimeError(f"torch_quantize_per_tensor(): quantizes a floating point tensor, "
                           f"got {got}")
    scale, zero_point = float(scale), int(zero_point)
    if not scale > 0:
        raise RuntimeError(f"torch_quantize_per_tensor(): scale must be positive, got {scale}")
    base = d.np.fields[d.name][0]
    info = np.iinfo(base)
    # (as libtorch: multiply by the float reciprocal of the scale, round to even)
    inv = np.float32(1.0) / np.float32(scale)
    q = np.rint(self.data.astype(np.float32) * inv).astype(np.float64) + zero_point
    ints = np.clip(q, info.min, info.max).astype(base)
    out = wrap(np.ascontiguousarray(ints).view(d.np).reshape(self.shape).view(QuantizedArray))
    out.__dict__[_QPARAMS] = (scale, zero_point)
    return out


def int_repr(self: Tensor) -> Tensor:
    """The stored integers (uint8, int8 or int32)."""
    _check_quantized(self, "int_repr")
    return wrap(self.data.view(np.ndarray)[self.dtype.name].copy())


def dequantize(self: Tensor) -> Tensor:
    """(integers - zero_point) * scale, in float32."""
    scale, zero_point = _check_quantized(self, "dequantize")
    ints = self.data.view(np.ndarray)[self.dtype.name].astype(np.float32)
    return wrap((ints - np.float32(zero_point)) * np.float32(scale))


def torch_dequantize(tensor: Any) -> Any:
    """`dequantize()` of a tensor, or of each tensor of a list."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    return dequantize(tensor)


def q_scale(self: Tensor) -> float:
    return _check_quantized(self, "q_scale")[0]


def q_zero_point(self: Tensor) -> int:
    return _check_quantized(self, "q_zero_point")[1]


def is_quantized(self: Tensor) -> bool:
    return _QPARAMS in self.__dict__


def format_quantized(x: Tensor, n: int = 30) -> str:
    """libtorch prints the dequantized values, its quantized type and the
    quantization parameters in the footer."""
    from .printing import format_tensor
    scale, zero_point = x.__dict__.get(_QPARAMS, (float("nan"), 0))
    text = format_tensor(dequantize(x).data, "float32", n=n).rstrip("\n")
    shape = ",".join(map(str, x.shape))
    plain = f"[ CPUFloatType{{{shape}}} ]"
    footer = (f"[ {x.dtype.type_name}{{{shape}}}, qscheme: per_tensor_affine, "
              f"scale: {scale:g}, zero_point: {zero_point} ]")
    return text[:text.rindex(plain)] + footer


# Tensor methods (Python and R): x.dequantize(), x.int_repr(), ...
for _f in (int_repr, dequantize, q_scale, q_zero_point):
    setattr(Tensor, _f.__name__, _f)
Tensor.is_quantized = property(is_quantized)
