"""Copies and conversions (clone, to, float, ...) and in-place fills."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..constructors import device_type, no_device
from ..engine import bump_version
from ..meta import meta_array
from ..tensor import (QPARAMS, ComplexHalfArray, Tensor, as_dtype, complex32, complex_half,
                      wrap)
from .operands import data_of, fill_scalar, shape_str
from .recording import formula, needs_grad, record
from .dispatch import op
from .samples import pointwise as S
from .views import check_inplace, record_inplace


# ==========================================================================
# Copies and conversions

@formula(arrays=True)
def CloneBackward0(n, g):
    return (g,)


@op(samples=S.unary, names="keep", forward="linear", complex_half=True)
def clone(self: Tensor, memory_format: Any = None) -> Tensor:
    return record(self.data.copy(), CloneBackward0, (self,))


@formula(arrays=True)
def ToCopyBackward0(n, g):
    return (g,)  # the engine casts back to the input's dtype


@op(function=False, names="keep", forward="linear", complex_half=True)
def to(self: Tensor, dtype: Any = None, device: Any = None, other: Tensor = None,
       non_blocking: bool = False, copy: bool = False, memory_format: Any = None) -> Tensor:
    """To another dtype (or `other`'s dtype; a tensor as the first argument
    means `other`, as in PyTorch). The device can only be the CPU; memory
    formats are accepted and change nothing (arrays are always strided)."""
    if isinstance(dtype, Tensor) and other is None:
        dtype, other = None, dtype
    if other is not None:
        dtype = other.dtype
    if isinstance(dtype, str) and dtype == "cpu":
        dtype, device = None, dtype
    if device is not None and device_type(device) != self.device:
        return _to_device(self, device_type(device), dtype)
    if dtype is None:
        return clone(self) if copy else self
    dt = as_dtype(dtype)
    if dt is self.dtype and not copy:
        return self
    # (complex32 and complex64 share NumPy's complex64: the values rounded, or made plain)
    src = self.data.view(np.ndarray) if type(self.data) is ComplexHalfArray else self.data
    out = wrap(complex_half(src) if dt is complex32 else src.astype(dt.np))
    if not dt.is_floating_point:  # ((bfloat16 is NumPy kind "V": a float all the same)
        return out
    return record(out, ToCopyBackward0, (self,))


def _to_device(self: Tensor, device: str, dtype: Any) -> Tensor:
    """cpu -> meta keeps the shape and the dtype (or `dtype`) and drops the values;
    there is no way back (a meta tensor has no values to copy)."""
    if device == "meta":
        d = as_dtype(dtype).np if dtype is not None else self.data.dtype
        out = wrap(meta_array(self.shape, d))
        return record(out, ToCopyBackward0, (self,)) if out.is_floating_point() else out
    if device == "cpu":
        raise NotImplementedError("Cannot copy out of meta tensor; no data! (a meta tensor "
                                  "has only a shape and a dtype)")
    raise no_device(device)


@op(function=False, names="keep", samples=S.type_as)
def type_as(self: Tensor, other: Tensor) -> Tensor:
    """self in other's dtype."""
    return to(self, dtype=other.dtype)


@op("float", function=False, names="keep", forward="linear")
def float_(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "float32")


@op(function=False, names="keep", forward="linear")
def double(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "float64")


@op(function=False, names="keep", complex_half=True)
def chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    """In complex32 (libtorch's ComplexHalf: float16 parts)."""
    return to(self, complex32)


@op(function=False, names="keep")
def long(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "int64")


@op("int", function=False, names="keep")
def int_(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "int32")


@op("bool", function=False, names="keep")
def bool_(self: Tensor, memory_format: Any = None) -> Tensor:
    return to(self, "bool")


@formula
def ZeroBackward0(n, g):
    return (g * 0,)


@op(samples=S.in_place, differentiable=False, complex_half=True)
def zero_(self: Tensor) -> Tensor:
    check_inplace(self)
    self.data[...] = 0
    bump_version(self)
    return record_inplace(self, ZeroBackward0, (self,), ())


@formula
def FillBackward2(n, g):
    return (g * 0,)


@formula
def FillBackward3(n, g, vshape):
    return (g * 0 if n.needs(0) else None), (g.sum().reshape(vshape) if n.needs(1) else None)


@op(function=False, complex_half=True)
def fill_(self: Tensor, value: Any) -> Tensor:
    t = value if isinstance(value, Tensor) else None
    if t is not None and t.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{t.ndim} dimensions.")
    v = fill_scalar(value, "fill_")
    check_inplace(self, t)
    self.data[...] = v
    bump_version(self)
    if t is not None:
        return record_inplace(self, FillBackward3, (self, t), (t.shape,))
    return record_inplace(self, FillBackward2, (self,), ())


@formula
def CopyBackwards(n, g):
    return (g * 0 if n.needs(0) else None), g


@op(function=False, complex_half=True)
def copy_(self: Tensor, src: Tensor) -> Tensor:
    s = src if isinstance(src, Tensor) else None
    check_inplace(self, s)
    if QPARAMS in self.__dict__ and s is not None and QPARAMS in s.__dict__:
        return _copy_quantized(self, s)
    try:
        np.copyto(self.data, data_of(src), casting="unsafe")
    except ValueError:
        raise RuntimeError(f"copy_: the source of shape {shape_str(np.shape(data_of(src)))} "
                           f"doesn't broadcast to the destination's shape {shape_str(self.shape)}")\
            from None
    bump_version(self)
    return record_inplace(self, CopyBackwards, (self, s), ())




def _copy_quantized(self: Tensor, src: Tensor) -> Tensor:
    """A quantized tensor takes another's integers and its scale and zero point."""
    if self.dtype is not src.dtype or tuple(self.shape) != tuple(src.shape):
        raise RuntimeError(f"copy_: a quantized tensor copies one of its own dtype and shape, "
                           f"got {src.dtype!r} {shape_str(src.shape)} for {self.dtype!r} "
                           f"{shape_str(self.shape)}")
    self.data.view(np.ndarray)[...] = src.data.view(np.ndarray)
    self.__dict__[QPARAMS] = src.__dict__[QPARAMS]
    bump_version(self)
    return self


# ==========================================================================
# Questions about a tensor (a logical answer)

@op(method=False, samples=S.any_dtype, differentiable=False, complex_half=True)
def is_complex(self: Tensor) -> bool:
    return self.data.dtype.kind == "c"


@op(function=False, samples=S.same_size, differentiable=False, complex_half=True)
def is_same_size(self: Tensor, other: Tensor) -> bool:
    return tuple(self.shape) == tuple(other.shape)


@op(function=False, samples=S.any_dtype, differentiable=False)
def is_signed(self: Tensor) -> bool:
    """False for the unsigned dtypes: uint8 and bool."""
    return self.data.dtype.kind not in "ub"


@op(function=False, samples=S.any_dtype, differentiable=False, complex_half=True)
def is_conj(self: Tensor) -> bool:
    """No lazy conjugate views here: conj() computes its values."""
    return False


@op(function=False, samples=S.any_dtype, differentiable=False, complex_half=True)
def is_neg(self: Tensor) -> bool:
    """No lazy negative views here."""
    return False


@op(function=False, samples=S.any_dtype, names="keep", complex_half=True)
def resolve_conj(self: Tensor) -> Tensor:
    return self


@op(function=False, samples=S.any_dtype, names="keep", complex_half=True)
def resolve_neg(self: Tensor) -> Tensor:
    return self


@op(samples=S.one_value, differentiable=False, complex_half=True)
def is_nonzero(self: Tensor) -> bool:
    """Whether the tensor's one value is not 0 (more or no values: an error)."""
    n = self.data.size
    if n != 1:
        what = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return bool(self.data.reshape(-1)[0] != 0)
