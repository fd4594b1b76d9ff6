"""Shape ops and views (transpose, reshape, expand, ...), joining and splitting.
Views share their input's data and version counter (see views.py)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ..tensor import Tensor, _dim, wrap
from .samples import shape as S
from .operands import _as_tensor, _float_result, _shape, _whole, positional_error
from .recording import formula, record, sum_to
from .registry import op
from .views import _index_backward, _view

_F64 = np.dtype(np.float64)


@formula(arrays=True)
def TBackward0(n, g):
    return (g.T,)


@op(samples=S.matrix)
def t(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return record(_view(self, self.data.T), TBackward0, (self,))


@formula
def TransposeBackward0(n, g, d0, d1):
    return (g.transpose(d0, d1),)


@op(dims=("dim0", "dim1"), samples=S.transpose)
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = _dim(dim0, self.ndim), _dim(dim1, self.ndim)
    return record(_view(self, np.swapaxes(self.data, d0, d1)) if self.ndim else _view(self, self.data),
                  TransposeBackward0, (self,), (d0, d1))


@formula
def PermuteBackward0(n, g, dims):
    return (g.permute(*np.argsort(dims).tolist()),)


@op(dims=("dims",), samples=S.permute)
def permute(self: Tensor, *dims: Any) -> Tensor:
    if len(dims) == 1 and isinstance(dims[0], (list, tuple, np.ndarray)):
        dims = tuple(np.asarray(dims[0]).reshape(-1).tolist())
    if len(dims) != self.ndim:
        raise RuntimeError(f"permute: number of dims don't match: the tensor has {self.ndim} "
                           f"dims but {len(dims)} were given")
    d = tuple(_dim(i, self.ndim) for i in dims)
    if len(set(d)) != len(d):
        raise RuntimeError("permute: repeated dim in permutation")
    return record(_view(self, np.transpose(self.data, d)), PermuteBackward0, (self,), (d,))


def _shape_arg(shape: tuple) -> tuple:
    """Sizes as ints, or one sequence of them: `reshape(2, 3)`, `reshape((2, 3))`
    (and R's `c(2, 3)`, which arrives as an array)."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, np.ndarray)):
        shape = tuple(np.asarray(shape[0]).reshape(-1).tolist())
    out = []
    for s in shape:
        i = int(s)
        if i != s:
            raise ValueError(f"sizes must be whole numbers, got {s}")
        out.append(i)
    return tuple(out)


@formula(arrays=True)
def ViewBackward0(n, g, shape):
    return (g.reshape(shape),)


@op(samples=S.reshape)
def reshape(self: Tensor, shape: Any, *more: Any) -> Tensor:
    shape = _shape_arg((shape,) + more)
    try:
        arr = self.data.reshape(shape)
    except ValueError:
        raise RuntimeError(f"shape '{_shape(shape)}' is invalid for input of size "
                           f"{self.data.size}") from None
    out = _view(self, arr) if np.shares_memory(arr, self.data) else wrap(arr)
    return record(out, ViewBackward0 if out._base is not None else UnsafeViewBackward0,
                  (self,), (self.shape,))


@formula(arrays=True)
def UnsafeViewBackward0(n, g, shape):
    return (g.reshape(shape),)  # reshape had to copy (PyTorch: clone + _unsafe_view)


@op(function=False, samples=S.reshape)
def view(self: Tensor, size: Any, *more: Any) -> Tensor:
    shape = _shape_arg((size,) + more)
    try:
        arr = self.data.view()
        arr.shape = shape  # refuses (like torch's view) when a copy would be needed
    except (ValueError, AttributeError):
        try:
            np.broadcast_to(np.zeros((), np.bool_), self.shape).reshape(shape)  # size check only
        except ValueError:
            raise RuntimeError(f"shape '{_shape(shape)}' is invalid for input of size "
                               f"{self.data.size}") from None
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.") from None
    return record(_view(self, arr), ViewBackward0, (self,), (self.shape,))


@formula
def UnsqueezeBackward0(n, g, d):
    return (g.squeeze(d),)


@op(new_dims=("dim",), samples=S.unsqueeze)
def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = _dim(dim, self.ndim + 1)
    return record(_view(self, np.expand_dims(self.data, d)), UnsqueezeBackward0, (self,), (d,))


@formula
def SqueezeBackward0(n, g, shape):
    return (g.reshape(shape),)


@op(dims=("dim",), samples=S.squeeze)
def squeeze(self: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        arr = self.data.reshape(tuple(s for s in self.shape if s != 1))
    else:
        d = _dim(dim, self.ndim)
        arr = np.squeeze(self.data, d) if self.ndim and self.shape[d] == 1 else self.data.view()
    return record(_view(self, arr), SqueezeBackward0 if dim is None else SqueezeBackward1,
                  (self,), (self.shape,))


@formula
def SqueezeBackward1(n, g, shape):
    return (g.reshape(shape),)


@formula
def ExpandBackward0(n, g, shape):
    return (sum_to(g, shape),)


@op(function=False, samples=S.expand)
def expand(self: Tensor, size: Any, *more: Any) -> Tensor:
    sizes = _shape_arg((size,) + more)
    lead = len(sizes) - self.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({self.ndim})")
    target = tuple(self.shape[i - lead] if s == -1 and i >= lead else s
                   for i, s in enumerate(sizes))
    try:
        arr = np.broadcast_to(self.data, target)
    except ValueError:
        raise RuntimeError(
            f"expand: the expanded size {_shape(target)} doesn't fit the tensor's size "
            f"{_shape(self.shape)}: only dims of size 1 can grow (and new dims go in front)")\
            from None
    return record(_view(self, arr), ExpandBackward0, (self,), (self.shape,))


@op(function=False)
def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return expand(self, other.shape)


@op(dims=("start_dim", "end_dim"), samples=S.flatten)
def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if self.ndim == 0:
        return reshape(self, (1,))
    s, e = _dim(start_dim, self.ndim), _dim(end_dim, self.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = self.shape[:s] + (int(np.prod(self.shape[s:e + 1])),) + self.shape[e + 1:]
    return reshape(self, shape)


@op(function=False, samples=S.unary)
def contiguous(self: Tensor) -> Tensor:
    return self if self.data.flags.c_contiguous else self.clone()


# ==========================================================================
# Joining and splitting

@formula
def CatBackward0(n, g, dim, sizes):
    out, start = [], 0
    for i, s in enumerate(sizes):
        out.append(narrow(g, dim, start, s) if n.needs(i) else None)
        start += s
    return tuple(out)


@op(method=False, dims=("dim",), samples=S.cat)
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = [_as_tensor(t) for t in tensors]
    if not tensors:
        raise RuntimeError("cat: expected a non-empty list of tensors")
    # PyTorch skips 1-d empty tensors in cat
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    for i, t in enumerate(parts):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated; unsqueeze() it or use torch_stack()")
    d = _dim(dim, parts[0].ndim)
    for i, t in enumerate(parts):
        if t.ndim != parts[0].ndim or any(
                a != b for k, (a, b) in enumerate(zip(t.shape, parts[0].shape)) if k != d):
            raise positional_error(
                RuntimeError, "cat: sizes of tensors must match except in dimension {dim}: "
                f"tensor {{first}} has shape {_shape(parts[0].shape)} but tensor {{i}} has shape "
                f"{_shape(t.shape)}", dim=d, first=_position(tensors, parts[0]), i=_position(tensors, t))
    out = np.concatenate([t.data for t in parts], axis=d)
    out = _float_result(out, *parts[:2]) if out.dtype == _F64 and not any(
        t.data.dtype == _F64 for t in parts) else out
    return record(out, CatBackward0, parts, (d, [t.shape[d] for t in parts]))


def _position(items: list, x: Any) -> int:
    return next(i for i, y in enumerate(items) if y is x)


@formula
def StackBackward0(n, g, dim, count):
    return tuple(select(g, dim, i) if n.needs(i) else None for i in range(count))


@op(method=False, new_dims=("dim",), samples=S.stack)
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = [_as_tensor(t) for t in tensors]
    if not tensors:
        raise RuntimeError("stack: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{_shape(tensors[0].shape)} at entry 0 and {_shape(t.shape)} "
                               f"at entry {i}")
    d = _dim(dim, tensors[0].ndim + 1)
    out = np.stack([t.data for t in tensors], axis=d)
    return record(out, StackBackward0, tensors, (d, len(tensors)))


@formula
def SliceBackward0(n, g, shape, key):
    return (_index_backward(g, key, shape, False),)


@formula
def SelectBackward0(n, g, shape, key):
    return (_index_backward(g, key, shape, False),)


@op(dims=("dim",), indices=("start",), samples=S.narrow)
def narrow(self: Tensor, dim: int, start: int, length: int, *, name: str | None = None) -> Tensor:
    d = _dim(dim, self.ndim)
    size = self.shape[d]
    start, length = _whole(start, "start"), _whole(length, "length")
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension "
                           f"size ({size}) of dim {d} (or is negative)")
    key = (slice(None),) * d + (slice(start, start + length),)
    return record(_view(self, self.data[key]), SliceBackward0, (self,), (self.shape, key), name=name)


@op(dims=("dim",), indices=("index",), samples=S.select)
def select(self: Tensor, dim: int, index: int, *, name: str | None = None) -> Tensor:
    d = _dim(dim, self.ndim)
    size = self.shape[d]
    index = _whole(index, "index")
    if not -size <= index < size:
        raise positional_error(IndexError, "select(): index {index} out of range for tensor "
                               f"of size {_shape(self.shape)} at dimension {{dim}}",
                               index=index, dim=d)
    key = (slice(None),) * d + (index,)
    return record(_view(self, self.data[key]), SelectBackward0, (self,), (self.shape, key), name=name)


@op(dims=("dim",), samples=S.split)
def split(self: Tensor, split_size: Any, dim: int = 0) -> list:
    d = _dim(dim, self.ndim)
    size = self.shape[d]
    if isinstance(split_size, np.ndarray) and split_size.size > 1:
        split_size = split_size.tolist()  # (an R vector of sizes)
    if isinstance(split_size, (list, tuple)):
        sizes = [_whole(s, "split_size") for s in split_size]
        if builtins.sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={_shape(sizes)}")
    else:
        step = _whole(split_size, "split_size")
        if step <= 0:
            raise RuntimeError("split: split_size must be a positive integer")
        sizes = [builtins.min(step, size - i) for i in range(0, size, step)] or [0]
    name = "SplitWithSizesBackward0" if isinstance(split_size, (list, tuple)) else\
        "SplitBackward0"
    out, start = [], 0
    for s in sizes:
        out.append(narrow(self, d, start, s, name=name))
        start += s
    return out


@op(dims=("dim",), samples=S.chunk)
def chunk(self: Tensor, chunks: int, dim: int = 0) -> list:
    chunks = _whole(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = _dim(dim, self.ndim)
    step = -(-self.shape[d] // chunks) if self.shape[d] else 1
    return split(self, step, d)


@op(dims=("dim",), samples=S.dim_op)
def unbind(self: Tensor, dim: int = 0) -> list:
    if self.ndim == 0:
        raise RuntimeError("unbind: dimension specified as 0 but the tensor has no dimensions")
    d = _dim(dim, self.ndim)
    return [select(self, d, i, name="UnbindBackward0") for i in range(self.shape[d])]


