"""Memory and view internals, and libtorch's private methods.

- Views and storage: `alias`, `as_strided_`, `as_strided_scatter`, `slice_inverse`,
  `_reshape_alias`, `set_` (onto a tensor's or a storage's memory), `set_data`,
  `is_set_to`, `resize_as_`, `nonzero_static`.
- What a CPU-only libtorch answers about pinned memory, streams and nested tensors
  (`is_pinned`, `pin_memory`, `record_stream`, `to_padded_tensor`, `_nested_*`):
  every tensor here is a strided CPU tensor.
- The private `_*` methods R torch exports (`_conj`, `_neg_view`, `_lazy_clone`,
  `_is_all_true`, `_addmm_activation`, `_autocast_to_*`, `_fw_primal`, ...), each
  what PyTorch does for it. The engine keeps no lazy conjugate or negative bits
  (`is_conj()` and `is_neg()` stay FALSE): `_conj` and `_neg_view` compute theirs.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import bump_version
from ..tensor import Storage, Tensor, as_dtype, float32, wrap
from .samples import memory as S
from .operands import shape_str, whole
from .recording import formula, needs_grad, record
from .dispatch import op
from .views import check_inplace, restride_inplace, view_of, zero_at, alias as _alias
from .shape import shape_arg, storage_view, as_strided, resize_
from .linalg import NoDerivative, addmm
from .creation import conj_physical
from .special import erf

# --------------------------------------------------------------------------
# Views and storage


@op("alias", function=False, samples=S.view_of, names="keep", forward="linear",
    torch_name="ops.aten.alias", complex_half=True)
def alias_op(self: Tensor) -> Tensor:
    """A view of all of self (its storage shared), the gradient passed through."""
    return _alias(self)


@op(function=False, forward="linear")
def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """self made the view `as_strided()` gives, in place."""
    return restride_inplace(self, as_strided(self, size, stride, storage_offset))


@formula
def AsStridedScatterBackward0(n, g, positions, shape, src_shape):
    flat = g.reshape(-1)
    gself = zero_at(flat, (positions,)).reshape(shape) if n.needs(0) else None
    gsrc = flat[wrap(positions)].reshape(src_shape) if n.needs(1) else None
    return gself, gsrc


@op(samples=S.as_strided_scatter, forward="linear")
def as_strided_scatter(self: Tensor, src: Tensor, size: Any, stride: Any,
                       storage_offset: Any = None) -> Tensor:
    """A copy of self (its elements in C order, its storage) with the elements that
    `as_strided(size, stride, storage_offset)` would view replaced by src's.

    self's gradient is the output's with zeros where src went (PyTorch 2.13's
    formula gives the opposite: tests/test_internals.py checks ours by finite
    differences)."""
    size, stride = shape_arg((size,)), shape_arg((stride,))
    out = np.array(self.data, order="C")
    view, positions = storage_view(out.reshape(-1), size, stride,
                                   whole(storage_offset or 0, "storage_offset"))
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{shape_str(src.shape)}, slice size = {shape_str(size)}")
    out.reshape(-1)[positions.reshape(-1)] = src.data.reshape(-1)
    return record(out, AsStridedScatterBackward0, (self, src),
                  (positions.reshape(-1), self.shape, src.shape))


@formula
def SliceInverseBackward0(n, g, key):
    # inside the slice the result is self's, outside it src's
    return (g[key] if n.needs(0) else None, zero_at(g, key) if n.needs(1) else None)


@op(function=False, dims=("dim",), samples=S.slice_inverse, forward="linear")
def slice_inverse(self: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                  step: int = 1) -> Tensor:
    """The tensor `self` was sliced from (`self = src[.., start:end:step, ..]` along
    dim), as a view of self's storage with src's sizes, strides and offset. `start`
    and `end` count from 0 in R as well (as `slice_scatter`'s)."""
    base = self if self._base is None else self._base
    item = src.data.itemsize
    src_root = Storage(src.data)._root
    offset = (src.data_ptr() - src_root.__array_interface__["data"][0]) // item
    arr, _ = storage_view(base.data.reshape(-1), src.shape,
                          tuple(s // item for s in src.data.strides), offset)
    key = (slice(None),) * dim + (slice(None if start is None else whole(start, "start"),
                                        None if end is None else whole(end, "end"),
                                        whole(step, "step")),)
    return record(view_of(self, arr), SliceInverseBackward0, (self, src), (key,))


@formula
def ReshapeAliasBackward0(n, g, shape):
    return (g.reshape(shape),)


@op(function=False, samples=S.reshape_alias, forward="linear",
    torch_name="ops.aten._reshape_alias")
def _reshape_alias(self: Tensor, size: Any, stride: Any) -> Tensor:
    """reshape()'s view, its strides given: a view of self's memory."""
    if not self.data.flags.c_contiguous:
        raise RuntimeError("_reshape_alias: the tensor must be contiguous; call contiguous() "
                           "first")
    arr, _ = storage_view(self.data.reshape(-1), shape_arg((size,)), shape_arg((stride,)), 0)
    return record(view_of(self, arr), ReshapeAliasBackward0, (self,), (self.shape,))


def _set_storage(self: Tensor, arr: np.ndarray) -> Tensor:
    check_inplace(self)
    if needs_grad(self):
        raise RuntimeError("set_() of a tensor that requires grad is not supported; detach() "
                           "it first, or work under with_no_grad()")
    self.data = arr
    self._base = None
    bump_version(self)
    return self


@op(function=False, differentiable=False, samples=S.set_)
def set_(self: Tensor, source: Any = None, storage_offset: Any = None, size: Any = None,
         stride: Any = None) -> Tensor:
    """self made to look into other memory, as libtorch's overloads:
    `set_()` an empty tensor; `set_(t)` t's memory, sizes and strides;
    `set_(storage)` all of a storage (`x$storage()`), 1-d;
    `set_(storage, storage_offset, size, stride)` part of it (stride default:
    contiguous). A storage's bytes are read as self's dtype, as libtorch's are."""
    if source is None:
        return _set_storage(self, np.empty((0,), dtype=self.data.dtype))
    if isinstance(source, Tensor):
        if source.data.dtype != self.data.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype.name} to a tensor "
                               f"of type {self.dtype.name}")
        return _set_storage(self, source.data)
    if not isinstance(source, Storage):
        raise TypeError(f"set_() takes a tensor or a storage (x$storage()), got "
                        f"{type(source).__name__}")
    flat = source._root.reshape(-1, order="A").view(np.uint8).view(self.data.dtype)
    if storage_offset is None and size is None:
        return _set_storage(self, flat)
    size = shape_arg((size,)) if size is not None else (flat.size,)
    if stride is None or len(np.asarray(stride).reshape(-1)) == 0:  # (R's list(): contiguous)
        stride = tuple(int(np.prod(size[k + 1:])) for k in range(len(size)))
    arr, _ = storage_view(flat, size, shape_arg((stride,)),
                          whole(storage_offset or 0, "storage_offset"))
    return _set_storage(self, arr)


@op(function=False, differentiable=False)
def set_data(self: Tensor, new_data: Tensor) -> None:
    """PyTorch's `x.data = new_data`: x's values become new_data's (its memory
    shared, its shape and dtype taken), x's history and requires_grad kept."""
    if not isinstance(new_data, Tensor):
        raise TypeError(f"set_data() takes a tensor, got {type(new_data).__name__}")
    self.data = new_data.data
    bump_version(self)


@op(function=False, differentiable=False, samples=S.same_shape_pair, complex_half=True)
def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both look at the same memory with the same sizes and strides."""
    a, b = self.data, tensor.data
    return (Storage(a)._root is Storage(b)._root and self.data_ptr() == tensor.data_ptr()
            and a.shape == b.shape and a.strides == b.strides)


@op(function=False, differentiable=False, samples=S.resize_as_)
def resize_as_(self: Tensor, the_template: Tensor, memory_format: Any = None) -> Tensor:
    """self resized (`resize_`) to the template's size."""
    return resize_(self, the_template.shape, memory_format)


@op(function=False, differentiable=False, samples=S.nonzero_static, complex_half=True)
def nonzero_static(self: Tensor, size: int, fill_value: int = -1) -> Tensor:
    """nonzero() of a fixed number of rows: the first `size` positions of nonzero
    elements (0-based, in R too, as R torch's), padded with `fill_value` rows."""
    size = whole(size, "size")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = np.argwhere(self.data)[:size]
    out = np.full((size, self.ndim), whole(fill_value, "fill_value"), dtype=np.int64)
    out[:len(found)] = found
    return wrap(out)


# --------------------------------------------------------------------------
# Pinned memory, streams, nested tensors: what a CPU-only libtorch answers


def _cpu_has_none(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"Could not run 'aten::{name}' with arguments from the 'CPU' backend: "
                        f"{why}")


_NESTED = ("it takes a nested tensor, and every tensor here is a regular (strided) one; "
           "use the tensor as it is")


@op(function=False, differentiable=False, samples=S.any_tensor, complex_half=True)
def is_distributed(self: Tensor) -> bool:
    return False


@op(function=False, differentiable=False, samples=S.any_tensor, complex_half=True)
def is_pinned(self: Tensor, device: Any = None) -> bool:
    """FALSE: pinned (page-locked) memory belongs to an accelerator, and there is none."""
    return False


@op(function=False, differentiable=False)
def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    raise RuntimeError("Cannot access accelerator device when none is available. (pin_memory() "
                       "pins memory for copies to a GPU; on a CPU-only machine use the tensor "
                       "as it is)")


@op(function=False, differentiable=False)
def record_stream(self: Tensor, s: Any) -> None:
    raise _cpu_has_none("record_stream", "streams belong to a CUDA device, and a CPU tensor "
                        "has none to record")


@op(function=False, differentiable=False)
def to_padded_tensor(self: Tensor, padding: float, output_size: Any = None) -> Tensor:
    raise _cpu_has_none("to_padded_tensor", _NESTED)


@op(function=False, differentiable=False)
def _nested_tensor_size(self: Tensor) -> Tensor:
    raise _cpu_has_none("_nested_tensor_size", _NESTED)


@op(function=False, differentiable=False)
def _nested_tensor_strides(self: Tensor) -> Tensor:
    raise _cpu_has_none("_nested_tensor_strides", _NESTED)


@op(function=False, differentiable=False)
def _nested_tensor_storage_offsets(self: Tensor) -> Tensor:
    raise _cpu_has_none("_nested_tensor_storage_offsets", _NESTED)


# --------------------------------------------------------------------------
# Private methods


@formula
def ConjBackward0(n, g):
    return (_conj(g),)


@op(function=False, samples=S.complex_input, names="keep", forward="linear", complex_half=True)
def _conj(self: Tensor) -> Tensor:
    """The complex conjugate (PyTorch's is a lazy view; computed here)."""
    if self.data.dtype.kind != "c":
        raise RuntimeError(f"_conj() takes a complex tensor, got {self.dtype!r}; use conj(), "
                           "which returns a real tensor as it is")
    return record(np.conj(self.data), ConjBackward0, (self,))


@op(function=False, samples=S.complex_input, names="keep", forward="linear", complex_half=True)
def _conj_physical(self: Tensor) -> Tensor:
    return conj_physical(self)


@formula
def NegViewBackward0(n, g):
    return (_neg_view(g),)


@op(function=False, samples=S.floats, names="keep", forward="linear")
def _neg_view(self: Tensor) -> Tensor:
    """-self (PyTorch's is a lazy view with the negative bit; computed here)."""
    return record(np.negative(self.data), NegViewBackward0, (self,))


@formula
def LazyCloneBackward0(n, g):
    return (g,)


@op(function=False, names="keep", forward="linear")
def _lazy_clone(self: Tensor) -> Tensor:
    """A copy (PyTorch's copies on first write; at once here)."""
    return record(self.data.copy(), LazyCloneBackward0, (self,))


def _bool_only(self: Tensor, name: str) -> None:
    if self.data.dtype != np.bool_:
        raise RuntimeError(f"{name}() takes a bool tensor, got {self.dtype!r}; use all() or "
                           "any(), which take any dtype")


@op(function=False, differentiable=False, samples=S.bools)
def _is_all_true(self: Tensor) -> Tensor:
    """Whether every element of a bool tensor is TRUE (a 0-d bool tensor)."""
    _bool_only(self, "_is_all_true")
    return wrap(np.array(bool(self.data.all())))


@op(function=False, differentiable=False, samples=S.bools)
def _is_any_true(self: Tensor) -> Tensor:
    _bool_only(self, "_is_any_true")
    return wrap(np.array(bool(self.data.any())))


@op(function=False, differentiable=False, samples=S.any_tensor, complex_half=True)
def _is_zerotensor(self: Tensor) -> bool:
    """FALSE: the engine has no ZeroTensors (PyTorch's lazy all-zero gradients)."""
    return False


_ADDMM_ACTIVATION = ("derivative for _addmm_activation is not implemented (a fused kernel "
                     "with none, as in PyTorch); use relu(addmm(...)) or gelu(addmm(...))")


@op(function=False, differentiable=False, samples=S.addmm_activation)
def _addmm_activation(self: Tensor, mat1: Tensor, mat2: Tensor, beta: float = 1, alpha: float = 1,
                      use_gelu: bool = False) -> Tensor:
    """relu(beta self + alpha mat1 mat2), or its exact gelu with `use_gelu`."""
    x = addmm(self.detach(), mat1.detach(), mat2.detach(), beta, alpha).data
    out = x * 0.5 * (erf(x / math.sqrt(2.0)) + 1.0) if use_gelu else np.maximum(x, 0)
    return record(out.astype(x.dtype, copy=False), NoDerivative, (self, mat1, mat2),
                  (_ADDMM_ACTIVATION,), name="NotImplemented")


def _reduced(d: Any) -> bool:
    return d.name in ("float16", "bfloat16")


@op(function=False, samples=S.autocast_full)
def _autocast_to_full_precision(self: Tensor, cuda_enabled: bool, cpu_enabled: bool) -> Tensor:
    """A float16/bfloat16 tensor in float32 when CPU autocast is on; else self."""
    return self.to(dtype=float32) if cpu_enabled and _reduced(self.dtype) else self


@op(function=False)
def _autocast_to_reduced_precision(self: Tensor, cuda_enabled: bool, cpu_enabled: bool,
                                   cuda_dtype: Any, cpu_dtype: Any) -> Tensor:
    """A float32 tensor in `cpu_dtype` when CPU autocast is on; else self."""
    return self.to(dtype=as_dtype(cpu_dtype)) if cpu_enabled and self.dtype is float32 \
        else self


def _no_tangent(primals: dict, tangents: dict, result: Tensor) -> None:
    return None  # (the primal's tangent is dropped: zeros)


@op(function=False, forward=_no_tangent)
def _fw_primal(self: Tensor, level: int) -> Tensor:
    """The primal of a dual tensor (forward mode), a view of it; a plain tensor's
    own view. Its tangent is zero (PyTorch's has none)."""
    whole(level, "level")
    return _alias(self)

