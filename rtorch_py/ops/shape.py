"""Shape ops and views (transpose, reshape, expand, ...), joining and splitting.
Views share their input's data and version counter (see views.py)."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ..engine import bump_version
from ..formals import r_formals
from ..tensor import Tensor, wrap_dim, wrap
from .samples import shape as S
from .operands import as_tensor, as_result_dtype, shape_str, whole, positional_error
from .recording import formula, record, sum_to
from .dispatch import op
from .names import Call, give
from .indexing import index_add_into, index_select
from .views import (SliceBackward0, index_backward, restride_inplace, view_key, view_of,
                    write_inplace, zero_at)

F64 = np.dtype(np.float64)


@formula(arrays=True)
def TBackward0(n, g):
    return (g.T,)


@op(samples=S.matrix, names="transpose", forward="linear", complex_half=True, mobile="self")
def t(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return record(view_of(self, self.data.T), TBackward0, (self,))


@formula
def TransposeBackward0(n, g, d0, d1):
    return (g.transpose(d0, d1),)


@op(dims=("dim0", "dim1"), samples=S.transpose, names="transpose", forward="linear",
    complex_half=True, mobile={"int": "self, dim0, dim1"})
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = wrap_dim(dim0, self.ndim), wrap_dim(dim1, self.ndim)
    arr = np.swapaxes(self.data, d0, d1) if self.ndim else self.data
    return record(view_of(self, arr), TransposeBackward0, (self,), (d0, d1))


@formula
def PermuteBackward0(n, g, dims):
    return (g.permute(*np.argsort(dims).tolist()),)


@op(dims=("dims", "more"), samples=S.permute, names="permute", forward="linear", complex_half=True,
    mobile="self, dims")
@r_formals("self, dims")
def permute(self: Tensor, dims: Any = (), *more: Any) -> Tensor:
    """`permute(x, (2, 0, 1))`, `x.permute(2, 0, 1)`, R's `x$permute(dims = c(3, 1, 2))`."""
    dims = (dims,) + more
    if len(dims) == 1 and isinstance(dims[0], (list, tuple, np.ndarray)):
        dims = tuple(np.asarray(dims[0]).reshape(-1).tolist())
    if len(dims) != self.ndim:
        raise RuntimeError(f"permute: number of dims don't match: the tensor has {self.ndim} "
                           f"dims but {len(dims)} were given")
    d = tuple(wrap_dim(i, self.ndim) for i in dims)
    if len(set(d)) != len(d):
        raise RuntimeError("permute: repeated dim in permutation")
    return record(view_of(self, np.transpose(self.data, d)), PermuteBackward0, (self,), (d,))


def shape_arg(shape: tuple) -> tuple:
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


@op(samples=S.reshape, forward="linear", complex_half=True, mobile="self, shape")
@r_formals("self, shape")
def reshape(self: Tensor, shape: Any, *more: Any) -> Tensor:
    shape = shape_arg((shape,) + more)
    try:
        arr = self.data.reshape(shape)
    except ValueError:
        raise RuntimeError(f"shape '{shape_str(shape)}' is invalid for input of size "
                           f"{self.data.size}") from None
    out = view_of(self, arr) if np.shares_memory(arr, self.data) else wrap(arr)
    return record(out, ViewBackward0 if out._base is not None else UnsafeViewBackward0,
                  (self,), (self.shape,))


@formula(arrays=True)
def UnsafeViewBackward0(n, g, shape):
    return (g.reshape(shape),)  # reshape had to copy (PyTorch: clone + _unsafe_view)


@op(function=False, samples=S.reshape, forward="linear", complex_half=True, mobile="self, size")
def view(self: Tensor, size: Any, *more: Any) -> Tensor:
    shape = shape_arg((size,) + more)
    try:
        arr = self.data.view()
        arr.shape = shape  # refuses (like torch's view) when a copy would be needed
    except (ValueError, AttributeError):
        try:
            np.broadcast_to(np.zeros((), np.bool_), self.shape).reshape(shape)  # size check only
        except ValueError:
            raise RuntimeError(f"shape '{shape_str(shape)}' is invalid for input of size "
                               f"{self.data.size}") from None
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.") from None
    return record(view_of(self, arr), ViewBackward0, (self,), (self.shape,))


@formula
def UnsqueezeBackward0(n, g, d):
    return (g.squeeze(d),)


@op(new_dims=("dim",), samples=S.unsqueeze, names="unsqueeze", forward="linear", complex_half=True,
    mobile="self, dim")
def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = wrap_dim(dim, self.ndim + 1)
    return record(view_of(self, np.expand_dims(self.data, d)), UnsqueezeBackward0, (self,), (d,))


@formula
def SqueezeBackward0(n, g, shape):
    return (g.reshape(shape),)


@op(dims=("dim",), samples=S.squeeze, names="squeeze", forward="linear", complex_half=True,
    mobile={"": "self", "dim": "self, dim"})
def squeeze(self: Tensor, dim: Any = None) -> Tensor:
    """Drop dims of size 1: all of them, or those of `dim` (one, or several) that are."""
    if dim is None:
        arr = self.data.reshape(tuple(s for s in self.shape if s != 1))
        name = SqueezeBackward0
    elif isinstance(dim, (list, tuple, np.ndarray)):
        ds = {wrap_dim(int(d), self.ndim) for d in np.asarray(dim).reshape(-1).tolist()}
        arr = self.data.reshape(tuple(s for i, s in enumerate(self.shape)
                                      if not (i in ds and s == 1)))
        name = SqueezeBackward2
    else:
        d = wrap_dim(dim, self.ndim)
        arr = np.squeeze(self.data, d) if self.ndim and self.shape[d] == 1 else self.data.view()
        name = SqueezeBackward1
    return record(view_of(self, arr), name, (self,), (self.shape,))


@formula
def SqueezeBackward2(n, g, shape):
    return (g.reshape(shape),)


@formula
def SqueezeBackward1(n, g, shape):
    return (g.reshape(shape),)


@formula
def ExpandBackward0(n, g, shape):
    return (sum_to(g, shape),)


@op(function=False, samples=S.expand, names="expand", forward="linear", complex_half=True)
@r_formals("self, size, implicit = FALSE")
def expand(self: Tensor, size: Any, *more: Any, implicit: bool = False) -> Tensor:
    if len(more) == 1 and isinstance(more[0], (bool, np.bool_)) and \
            isinstance(size, (list, tuple, np.ndarray)):
        more = ()  # R torch's `x$expand(size, implicit)`: implicit changes nothing here
    sizes = shape_arg((size,) + more)
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
            f"expand: the expanded size {shape_str(target)} doesn't fit the tensor's size "
            f"{shape_str(self.shape)}: only dims of size 1 can grow (and new dims go in front)")\
            from None
    return record(view_of(self, arr), ExpandBackward0, (self,), (self.shape,))


@op(function=False, samples=S.expand_as, names="expand", forward="linear", complex_half=True)
def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return expand(self, other.shape)


def _flattened(call: Call) -> tuple[int, int]:
    n = len(call.shape)
    dims = call.args.get("dims")
    if dims is not None:
        dims = [wrap_dim(d, n) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
        return min(dims), max(dims)
    return wrap_dim(call.args["start_dim"], n), wrap_dim(call.args["end_dim"], n)


def _flatten_names(out: Any, call: Call) -> None:
    """The dims around the flattened ones keep their names; the new one is `out_dim`."""
    if not call.shape:
        return give(out, [call.args.get("out_dim")])
    s, e = _flattened(call)
    give(out, [*call.names[:s], call.args.get("out_dim"), *call.names[e + 1:]])


@r_formals("self, dims, start_dim = 1, end_dim = -1, out_dim")
@op(dims=("start_dim", "end_dim", "dims"), samples=S.flatten, forward="linear",
    names=_flatten_names, complex_half=True,
    mobile={"using_ints": "self, start_dim=0, end_dim=-1"})
def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1, *, dims: Any = None,
            out_dim: str | None = None) -> Tensor:
    """libtorch's named forms too: `dims` (consecutive dims, for start_dim and end_dim),
    `out_dim` (the name of the flattened dim)."""
    if dims is not None:
        given = [wrap_dim(d, self.ndim) for d in (dims if isinstance(dims, (list, tuple))
                                                  else [dims])]
        if sorted(given) != list(range(min(given), max(given) + 1)):
            raise RuntimeError("flatten(): the dims to flatten must be consecutive dims, "
                               "in order")
        start_dim, end_dim = min(given), max(given)
    # (checked first, as libtorch)
    s, e = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
    if self.ndim == 0:
        return reshape(self, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = self.shape[:s] + (int(np.prod(self.shape[s:e + 1])),) + self.shape[e + 1:]
    return reshape(self, shape)


@op(function=False, samples=S.unary, names="keep", forward="linear", complex_half=True)
def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    return self if self.data.flags.c_contiguous else self.clone()


# ==========================================================================
# Joining and splitting

@formula
def CatBackward0(n, g, dim, sizes):
    out, start = [], 0
    for i, s in enumerate(sizes):
        if s is None:  # a skipped empty 1-d input: an empty gradient, as PyTorch's
            out.append(narrow(g.reshape(-1), 0, 0, 0) if n.needs(i) else None)
            continue
        out.append(narrow(g, dim, start, s) if n.needs(i) else None)
        start += s
    return tuple(out)


@op(method=False, dims=("dim",), samples=S.cat, names="cat", forward="linear", complex_half=True,
    mobile="tensors, dim=0", autocast="promote")
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise RuntimeError("cat: expected a non-empty list of tensors")
    # PyTorch skips 1-d empty tensors in cat
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    for i, t in enumerate(parts):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated; unsqueeze() it or use torch_stack()")
    d = wrap_dim(dim, parts[0].ndim)
    for t in parts:  # (libtorch's messages, which R torch counts from 1 for R)
        if t.ndim != parts[0].ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got "
                               f"{parts[0].ndim} and {t.ndim}")
        for k, (want, got) in enumerate(zip(parts[0].shape, t.shape)):
            if k != d and want != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {want} but got size {got} for tensor "
                                   f"number {_position(tensors, t)} in the list.")
    out = np.concatenate([t.data for t in parts], axis=d)
    out = as_result_dtype(out, *parts[:2]) if out.dtype == F64 and not any(
        t.data.dtype == F64 for t in parts) else out
    kept = {id(t) for t in parts}
    return record(out, CatBackward0, tensors,
                  (d, [t.shape[d] if id(t) in kept else None for t in tensors]))


def _tensor_list(tensors: Any, what: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{what}: expected a list of tensors, got a "
                        f"{'tensor' if isinstance(tensors, Tensor) else type(tensors).__name__}"
                        f"; give a list, e.g. torch_{what}(list(x, y))")
    return [as_tensor(t) for t in tensors]


def _position(items: list, x: Any) -> int:
    return next(i for i, y in enumerate(items) if y is x)


@formula
def StackBackward0(n, g, dim, count):
    return tuple(select(g, dim, i) if n.needs(i) else None for i in range(count))


@op(method=False, new_dims=("dim",), samples=S.stack, forward="linear", complex_half=True, autocast="promote")
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{shape_str(tensors[0].shape)} at entry 0 and {shape_str(t.shape)} "
                               f"at entry {i}")
    d = wrap_dim(dim, tensors[0].ndim + 1)
    out = np.stack([t.data for t in tensors], axis=d)
    return record(out, StackBackward0, tensors, (d, len(tensors)))


@formula
def SelectBackward0(n, g, shape, key):
    return (index_backward(g, key, shape, False),)


@op(dims=("dim",), indices=("start",), samples=S.narrow, names="keep", forward="linear",
    complex_half=True)
@r_formals("self, dim, start, length")
def narrow(self: Tensor, dim: int, start: int, length: int, *, name: str | None = None) -> Tensor:
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    start, length = whole(start, "start"), whole(length, "length")
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension "
                           f"size ({size}) of dim {d} (or is negative)")
    key = (slice(None),) * d + (slice(start, start + length),)
    return record(view_of(self, self.data[key]), SliceBackward0, (self,), (self.shape, key),
                  name=name)


@op("slice", function=False, dims=("dim",), samples=S.slice_view, names="keep", forward="linear",
    torch_name="ops.aten.slice.Tensor", complex_half=True)
def slice_view(self: Tensor, dim: int = 0, start: Any = None, end: Any = None,
               step: int = 1) -> Tensor:
    """libtorch's `slice`: a view of self[start:end:step] along dim (`start`/`end` count
    from 0 in R as well, as R torch's `x$slice()`; past the ends they are clamped)."""
    d = wrap_dim(dim, self.ndim)
    step = whole(step, "step")
    if step <= 0:
        raise RuntimeError(f"slice(): step must be positive, got {step}")
    key = (slice(None),) * d + (slice(None if start is None else whole(start, "start"),
                                       None if end is None else whole(end, "end"), step),)
    return record(view_of(self, self.data[key]), SliceBackward0, (self,), (self.shape, key))


@op(dims=("dim",), indices=("index",), samples=S.select, names="drop_dim", forward="linear",
    complex_half=True)
@r_formals("self, dim, index")
def select(self: Tensor, dim: int, index: int, *, name: str | None = None) -> Tensor:
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    index = whole(index, "index")
    if not -size <= index < size:
        raise positional_error(IndexError, "select(): index {index} out of range for tensor "
                               f"of size {shape_str(self.shape)} at dimension {{dim}}",
                               index=index, dim=d)
    key = (slice(None),) * d + (index,)
    return record(view_of(self, self.data[key]), SelectBackward0, (self,), (self.shape, key),
                  name=name)


@op(dims=("dim",), samples=S.split, names="keep", forward="linear", complex_half=True)
@r_formals("self, split_size, dim = 1")
def split(self: Tensor, split_size: Any, dim: int = 0, *, name: str | None = None) -> list:
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if isinstance(split_size, np.ndarray) and split_size.size > 1:
        split_size = split_size.tolist()  # (an R vector of sizes)
    if isinstance(split_size, (list, tuple)):
        sizes = [whole(s, "split_size") for s in split_size]
        if builtins.sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={shape_str(sizes)}")
    else:
        step = whole(split_size, "split_size")
        if step <= 0:
            raise RuntimeError("split: split_size must be a positive integer")
        sizes = [builtins.min(step, size - i) for i in range(0, size, step)] or [0]
    name = name or ("SplitWithSizesBackward0" if isinstance(split_size, (list, tuple)) else
                    "SplitBackward0")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(self, d, start, s, name=name))
        start += s
    return out


@op(dims=("dim",), samples=S.chunk, names="keep", forward="linear", complex_half=True)
def chunk(self: Tensor, chunks: int, dim: int = 0) -> list:
    chunks = whole(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = wrap_dim(dim, self.ndim)
    step = -(-self.shape[d] // chunks) if self.shape[d] else 1
    return split(self, step, d)


@op(dims=("dim",), samples=S.unbind, names="drop_dim", forward="linear", complex_half=True)
def unbind(self: Tensor, dim: int = 0) -> list:
    if self.ndim == 0:
        raise RuntimeError("unbind: dimension specified as 0 but the tensor has no dimensions")
    d = wrap_dim(dim, self.ndim)
    return [select(self, d, i, name="UnbindBackward0") for i in range(self.shape[d])]


# ==========================================================================
# Flipping, rolling, repeating

@formula
def FlipBackward0(n, g, dims):
    return (flip(g, dims),)


def _dims_arg(dims: Any, ndim: int) -> tuple:
    """One dim or several, as a tuple of distinct non-negative dims."""
    if isinstance(dims, (list, tuple, np.ndarray)):
        raw = [whole(d, "dims") for d in np.asarray(dims).reshape(-1).tolist()]
    else:
        raw = [whole(dims, "dims")]
    out = tuple(wrap_dim(d, ndim) for d in raw)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dims {shape_str(raw)} has a dim appearing more than once")
    return out


@op(dims=("dims",), samples=S.flip, names="keep", forward="linear", complex_half="flip_cpu")
def flip(self: Tensor, dims: Any) -> Tensor:
    d = _dims_arg(dims, self.ndim)
    return record(np.flip(self.data, d).copy() if self.ndim else self.data.copy(),
                  FlipBackward0, (self,), (d,))


@op(samples=S.matrix_only, forward="linear")
def fliplr(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError("fliplr: the tensor must have at least 2 dimensions")
    return flip(self, 1)


@op(samples=S.matrix, forward="linear")
def flipud(self: Tensor) -> Tensor:
    if self.ndim < 1:
        raise RuntimeError("flipud: the tensor must have at least 1 dimension")
    return flip(self, 0)


@formula
def RollBackward0(n, g, shifts, dims):
    return (roll(g, tuple(-s for s in shifts), dims),)


@op(dims=("dims",), samples=S.roll, names="keep", forward="linear", complex_half=True)
def roll(self: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    sh = [whole(s, "shifts") for s in np.asarray(shifts).reshape(-1).tolist()]
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        if len(sh) != 1:
            raise RuntimeError("roll: give one shift per dim in `dims` (or one shift and no "
                               "dims to roll the flattened tensor)")
        out = np.roll(self.data.reshape(-1), sh[0]).reshape(self.shape)
        return record(out, RollFlatBackward0, (self,), (sh[0],), name="RollBackward0")
    d = _dims_arg(dims, self.ndim)
    if len(sh) != len(d):
        raise RuntimeError(f"roll: shifts and dims must have the same length, got "
                           f"{len(sh)} shifts and {len(d)} dims")
    return record(np.roll(self.data, sh, d), RollBackward0, (self,), (tuple(sh), d))


@formula
def RollFlatBackward0(n, g, shift):
    return (roll(g, -shift),)


@formula
def Rot90Backward0(n, g, k, dims):
    return (rot90(g, -k, dims),)


@op(dims=("dims",), samples=S.rot90, forward="linear")
def rot90(self: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    k = whole(k, "k")
    d = _dims_arg(dims, self.ndim)
    if len(d) != 2 or self.ndim < 2:
        raise RuntimeError("rot90: expected two distinct dims of a tensor with at least 2 "
                           f"dimensions, got dims {shape_str(d)} for {self.ndim} dimensions")
    return record(np.rot90(self.data, k, d).copy(), Rot90Backward0, (self,), (k, d))


@formula
def RepeatBackward0(n, g, sizes, shape):
    # each input element gets the sum over its copies: split every repeated dim
    lead = len(sizes) - len(shape)
    g = g.sum(dim=tuple(range(lead))) if lead else g
    split = []
    for r, s in zip(sizes[lead:], shape):
        split += [r, s]
    if not split:
        return (g,)
    return (g.reshape(tuple(split)).sum(dim=tuple(range(0, len(split), 2))),)


@op(function=False, samples=S.repeat, forward="linear", complex_half=True)
@r_formals("self, repeats", python_names={"repeats": "sizes"})
def repeat(self: Tensor, sizes: Any, *more: Any) -> Tensor:
    reps = shape_arg((sizes,) + more)
    if len(reps) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           f"of dimensions of tensor ({len(reps)} < {self.ndim})")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"repeat: the repeats must be >= 0, got {shape_str(reps)}")
    data = self.data.reshape((1,) * (len(reps) - self.ndim) + self.shape)
    return record(np.tile(data, reps), RepeatBackward0, (self,), (reps, self.shape))


@op(samples=S.tile, forward="linear")
def tile(self: Tensor, dims: Any) -> Tensor:
    reps = shape_arg((dims,))
    return repeat(self, (1,) * (self.ndim - len(reps)) + reps)


@op(dims=("dim",), samples=S.repeat_interleave)
def repeat_interleave(self: Tensor, repeats: Any, dim: int | None = None,
                      output_size: int | None = None) -> Tensor:
    x = self if dim is not None else flatten(self)
    d = 0 if dim is None else wrap_dim(dim, self.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() != 1 or \
            isinstance(repeats, (list, tuple, np.ndarray)) and np.size(repeats) != 1:
        reps = np.asarray(repeats.data if isinstance(repeats, Tensor) else repeats).reshape(-1)
        if reps.dtype.kind == "f" and (reps != np.round(reps)).any():
            raise RuntimeError("repeat_interleave: repeats must be whole numbers")
        reps = reps.astype(np.int64)
        if (reps < 0).any():
            raise RuntimeError("repeat_interleave: repeats can not be negative")
        if x.ndim and reps.size != x.shape[d]:
            raise RuntimeError(f"repeat_interleave: repeats must have the same size as input "
                               f"along dim ({reps.size} repeats for size {x.shape[d]})")
        return index_select(x, d, wrap(np.repeat(np.arange(reps.size), reps)))
    r = whole(repeats.item() if isinstance(repeats, Tensor) else
              np.asarray(repeats).reshape(-1)[0], "repeats")
    if r < 0:
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    if x.ndim == 0:
        x = reshape(x, (1,))
    shape = x.shape[:d + 1] + (r,) + x.shape[d + 1:]
    out = unsqueeze(x, d + 1).expand(shape).clone()  # (as PyTorch: a copy, then a view)
    return view(out, x.shape[:d] + (x.shape[d] * r,) + x.shape[d + 1:])


# ==========================================================================
# Moving dims, reshaping like another tensor, broadcasting

@op(dims=("source", "destination"), samples=S.movedim, forward="linear", complex_half=True,
    r_wrapper_dims=("source", "destination"))
def movedim(self: Tensor, source: Any, destination: Any) -> Tensor:
    src = [wrap_dim(whole(s, "source"), self.ndim) for s in np.asarray(source).reshape(-1).tolist()]
    dst = [wrap_dim(whole(s, "destination"), self.ndim)
           for s in np.asarray(destination).reshape(-1).tolist()]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                           f"({shape_str(src)} dims) should contain the same number of dims as "
                           f"destination ({shape_str(dst)} dims)")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `source` or `destination`")
    order: list = [None] * self.ndim  # the source dim that lands in each place
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(self.ndim) if i not in src)
    return permute(self, [o if o is not None else next(rest) for o in order])


@op(dims=("source", "destination"), samples=S.movedim, forward="linear",
    r_dims_as_given=("source", "destination"))
def moveaxis(self: Tensor, source: Any, destination: Any) -> Tensor:
    return movedim(self, source, destination)


@op(dims=("axis0", "axis1"), samples=S.transpose, names="transpose", forward="linear",
    r_dims_as_given=("axis0", "axis1"))
def swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return transpose(self, axis0, axis1)


@op(dims=("dim0", "dim1"), samples=S.transpose, names="transpose", forward="linear")
def swapdims(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return transpose(self, dim0, dim1)


# The matrix transposes of the last two dims (R torch's x$mT(), x$mH(), ...; a
# conjugate for the H forms: the conjugate view is a copy here)
def _matrix_transpose(self: Tensor, name: str) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                           f"matrices. Got {self.ndim}-D tensor.")
    return transpose(self, -2, -1)


@op(function=False, samples=S.matrices, names="transpose", torch_name="ops.aten.mT")
def mT(self: Tensor) -> Tensor:
    return _matrix_transpose(self, "mT")


@op(function=False, samples=S.matrices, names="transpose", torch_name="ops.aten.mH")
def mH(self: Tensor) -> Tensor:
    return _matrix_transpose(self, "mH").conj()


@op(function=False, samples=S.matrices, names="transpose")
def adjoint(self: Tensor) -> Tensor:
    return _matrix_transpose(self, "adjoint").conj()


@op(function=False, samples=S.real_or_complex_matrix, names="transpose",
    torch_name="ops.aten.matrix_H")
def matrix_H(self: Tensor) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor. For batches of matrices, use x$mH()")
    return _matrix_transpose(self, "matrix_H").conj()


@op(function=False, samples=S.unary, torch_name="ops.aten.numpy_T")
def numpy_T(self: Tensor) -> Tensor:
    """All dims reversed (NumPy's .T)."""
    return permute(self, tuple(range(self.ndim - 1, -1, -1)))


@op(function=False, samples=S.sum_to_size)
@r_formals("self, size")
def sum_to_size(self: Tensor, size: Any, *more: Any) -> Tensor:
    """Summed down to `size`, which self broadcasts to (libtorch's sum_to: sums
    over the dims that size lacks or has as 1, then a view without the first)."""
    size = shape_arg((size, *more))
    lead = self.ndim - len(size)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(size, self.shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and self.shape[lead + i] != 1]
    if not dims:
        return self
    out = self.sum(dim=dims, keepdim=True)
    return view(out, size) if lead else out


def _unflatten_names(out: Any, call: Call) -> None:
    """The new dims are `names` (libtorch's named form); the others keep theirs."""
    d = wrap_dim(call.args["dim"], len(call.shape))
    new = call.args.get("names") or [None] * (out.ndim - len(call.shape) + 1)
    give(out, [*call.names[:d], *new, *call.names[d + 1:]])


@r_formals("self, dim, sizes, names")
@op(dims=("dim",), samples=S.unflatten, forward="linear", names=_unflatten_names)
def unflatten(self: Tensor, dim: int, sizes: Any, names: Any = None) -> Tensor:
    """`names`: the new dims' names (libtorch's named form)."""
    d = wrap_dim(dim, self.ndim)
    sizes = shape_arg((sizes,))
    known = int(np.prod([s for s in sizes if s != -1]))
    if sizes.count(-1) > 1 or (-1 not in sizes and known != self.shape[d]):
        raise RuntimeError(f"unflatten: Provided sizes {shape_str(sizes)} don't multiply up to the "
                           f"size of dim {d} ({self.shape[d]}) in the input tensor")
    return view(self, self.shape[:d] + sizes + self.shape[d + 1:])


@op(function=False, samples=S.like_other, forward="linear", complex_half=True)
def view_as(self: Tensor, other: Tensor) -> Tensor:
    return view(self, as_tensor(other).shape)


@op(function=False, samples=S.like_other, forward="linear", complex_half=True)
def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, as_tensor(other).shape)


@op(samples=S.expand, forward="linear")
def broadcast_to(self: Tensor, size: Any) -> Tensor:
    return expand(self, size)


@op(method=False, samples=S.tensor_list,
    torch_name="_C._VariableFunctions.broadcast_tensors",  # (the form taking a list)
    forward="linear")
def broadcast_tensors(tensors: Sequence[Tensor]) -> list:
    tensors = [as_tensor(t) for t in tensors]
    try:
        shape = np.broadcast_shapes(*(t.shape for t in tensors))
    except ValueError:
        raise RuntimeError("broadcast_tensors: the shapes " +
                           ", ".join(shape_str(t.shape) for t in tensors) +
                           " can't be broadcast together: each dimension, aligned from the "
                           "right, must be equal or 1") from None
    return [expand(t, shape) for t in tensors]


@op(method=False, samples=S.meshgrid)
@r_formals("tensors, indexing")
def meshgrid(tensors: Sequence[Tensor], indexing: str = "ij") -> list:
    tensors = [as_tensor(t) for t in tensors]
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'meshgrid: indexing must be "ij" or "xy", got "{indexing}"')
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("meshgrid: expects 0D or 1D tensors, got one of shape "
                               f"{shape_str(t.shape)}")
    parts = [reshape(t, (-1,)) for t in tensors]
    swap = indexing == "xy" and len(parts) >= 2
    if swap:  # xy: the first two inputs trade places in the output's dims
        parts[0], parts[1] = parts[1], parts[0]
    shape = tuple(p.shape[0] for p in parts)
    out = []
    for i, p in enumerate(parts):
        view_shape = [1] * len(parts)
        view_shape[i] = -1
        out.append(expand(view(p, tuple(view_shape)), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


def _each(tensors: Any, fn: Any) -> Any:
    """Apply to one tensor, or to each of a list (atleast_*)."""
    if isinstance(tensors, (list, tuple)):
        return [fn(as_tensor(t)) for t in tensors]
    return fn(as_tensor(tensors))


@op(samples=S.atleast, forward="linear")
def atleast_1d(self: Tensor | Sequence[Tensor]) -> Any:
    return _each(self, lambda t: reshape(t, (1,)) if t.ndim == 0 else t)


@op(samples=S.atleast, forward="linear")
def atleast_2d(self: Tensor | Sequence[Tensor]) -> Any:
    return _each(self, lambda t: reshape(t, (1, 1)) if t.ndim == 0 else
                 unsqueeze(t, 0) if t.ndim == 1 else t)


@op(samples=S.atleast, forward="linear")
def atleast_3d(self: Tensor | Sequence[Tensor]) -> Any:
    def three(t: Tensor) -> Tensor:
        if t.ndim == 0:
            return reshape(t, (1, 1, 1))
        if t.ndim == 1:
            return unsqueeze(unsqueeze(t, 0), -1)
        return unsqueeze(t, -1) if t.ndim == 2 else t
    return _each(self, three)


# ==========================================================================
# More joining and splitting

def _tensors(tensors: Any, what: str) -> list:
    tensors = _tensor_list(tensors, what)
    if not tensors:
        raise RuntimeError(f"{what}: expected a non-empty list of tensors")
    return tensors


@op(method=False, dims=("dim",), samples=S.cat, names="cat", forward="linear")
def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return cat(tensors, dim)


@op(method=False, dims=("dim",), samples=S.cat, names="cat", forward="linear")
def concatenate(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return cat(tensors, dim)


@op(method=False, samples=S.stack_list, forward="linear")
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    ts = atleast_1d(_tensors(tensors, "hstack"))
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


@op(method=False, samples=S.stack_list, forward="linear")
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat(atleast_2d(_tensors(tensors, "vstack")), 0)


@op(method=False, samples=S.stack_list, forward="linear")
def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    return vstack(tensors)


@op(method=False, samples=S.stack_list, forward="linear")
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat(atleast_3d(_tensors(tensors, "dstack")), 2)


@op(method=False, samples=S.stack_list, forward="linear")
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    ts = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t
          for t in _tensors(tensors, "column_stack")]
    return cat(ts, 1)


@op(dims=("dim",), samples=S.tensor_split, forward="linear")
def tensor_split(self: Tensor, indices: Any = None, sections: Any = None,
                 tensor_indices_or_sections: Tensor = None, dim: int = 0) -> list:
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    given = [v for v in (indices, sections, tensor_indices_or_sections) if v is not None]
    if len(given) != 1:
        raise RuntimeError("tensor_split: give exactly one of `indices` (split points), "
                           "`sections` (a number of parts) or `tensor_indices_or_sections`")
    v = given[0]
    if isinstance(v, Tensor):
        v = v.data
    as_sections = sections is not None or np.ndim(v) == 0  # (a lone number: sections)
    if as_sections:
        n = whole(np.asarray(v).reshape(()).item() if np.ndim(v) else v, "sections")
        if n <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (n - r)).tolist()
    else:
        pts = [whole(p, "indices") for p in np.asarray(v).reshape(-1).tolist()]
        bounds = [0] + pts + [size]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        a, b = builtins.min(builtins.max(a, 0), size), builtins.min(builtins.max(b, 0), size)
        out.append(narrow(self, d, a, builtins.max(b - a, 0)))
    return out


def _split_dim(self: Tensor, indices: Any, sections: Any, dim: int, what: str) -> list:
    if sections is None and indices is not None and np.ndim(
            indices.data if isinstance(indices, Tensor) else indices) == 0:
        sections, indices = indices, None
    if sections is not None:
        n = whole(sections, "sections")
        if n <= 0 or self.shape[dim] % n:
            raise RuntimeError(f"{what} attempted to split along dimension {dim}, but the size "
                               f"of the dimension {self.shape[dim]} is not divisible by the "
                               f"split_size {n}!")
        return tensor_split(self, sections=n, dim=dim)
    return tensor_split(self, indices=indices, dim=dim)


@op(samples=S.hsplit, forward="linear")
def hsplit(self: Tensor, indices: Any = None, sections: Any = None) -> list:
    if self.ndim < 1:
        raise RuntimeError("hsplit requires a tensor with at least 1 dimension, but got a "
                           "tensor with 0 dimensions!")
    return _split_dim(self, indices, sections, 0 if self.ndim == 1 else 1, "torch.hsplit")


@op(samples=S.vsplit, forward="linear")
def vsplit(self: Tensor, indices: Any = None, sections: Any = None) -> list:
    if self.ndim < 2:
        raise RuntimeError(f"vsplit requires a tensor with at least 2 dimension, but got a "
                           f"tensor with {self.ndim} dimensions!")
    return _split_dim(self, indices, sections, 0, "torch.vsplit")


@op(samples=S.dsplit, forward="linear")
def dsplit(self: Tensor, indices: Any = None, sections: Any = None) -> list:
    if self.ndim < 3:
        raise RuntimeError(f"dsplit requires a tensor with at least 3 dimension, but got a "
                           f"tensor with {self.ndim} dimensions!")
    return _split_dim(self, indices, sections, 2, "torch.dsplit")


@formula
def NarrowCopyBackward0(n, g, shape, key):
    return (index_backward(g, key, shape, False),)


@op(function=False, dims=("dim",), indices=("start",), samples=S.narrow_copy, forward="linear")
def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    v = narrow(self, dim, start, length)
    d = wrap_dim(dim, self.ndim)
    s = whole(start, "start")
    s = s + self.shape[d] if s < 0 else s
    key = (slice(None),) * d + (slice(s, s + v.shape[d]),)
    return record(v.data.copy(), NarrowCopyBackward0, (self,), (self.shape, key))


# ==========================================================================
# Triangles and diagonals

@formula
def TrilBackward0(n, g, k):
    return (tril(g, k),)


@op(samples=S.triangle, forward="linear", complex_half=True)
def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    k = whole(diagonal, "diagonal")
    return record(np.tril(self.data, k), TrilBackward0, (self,), (k,))


@formula
def TriuBackward0(n, g, k):
    return (triu(g, k),)


@op(samples=S.triangle, forward="linear", complex_half=True)
def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    k = whole(diagonal, "diagonal")
    return record(np.triu(self.data, k), TriuBackward0, (self,), (k,))


@formula
def DiagonalBackward0(n, g, shape, offset, d1, d2):
    return (_diagonal_scatter(g, shape, offset, d1, d2),)


@formula
def DiagonalScatterBackward(n, g, offset, d1, d2):
    return (diagonal(g, offset, d1, d2),)


def _diag_positions(shape: tuple, offset: int, d1: int, d2: int) -> tuple:
    n = builtins.max(0, builtins.min(shape[d1] + builtins.min(offset, 0),
                                     shape[d2] - builtins.max(offset, 0)))
    i = np.arange(n)
    return i - builtins.min(offset, 0), i + builtins.max(offset, 0)


def _diagonal_scatter(g: Tensor, shape: tuple, offset: int, d1: int, d2: int) -> Tensor:
    """Zeros of `shape` with g on the diagonal (the diagonal's own last dim)."""
    z = np.zeros(shape, dtype=g.data.dtype)
    rows, cols = _diag_positions(shape, offset, d1, d2)
    view_ = np.moveaxis(z, (d1, d2), (-2, -1))
    view_[..., rows, cols] = g.data
    return record(z, DiagonalScatterBackward, (g,), (offset, d1, d2))


def _diagonal_names(out: Any, call: Call) -> None:
    """diagonal's dims but the two, then `outdim` (libtorch's named form)."""
    n = len(call.shape)
    d1, d2 = wrap_dim(call.args["dim1"], n), wrap_dim(call.args["dim2"], n)
    give(out, [x for i, x in enumerate(call.names) if i not in (d1, d2)] +
         [call.args.get("outdim")])


@r_formals("self, outdim, dim1 = 1, dim2 = 2, offset = 0")
@op(dims=("dim1", "dim2"), samples=S.diagonal, forward="linear", names=_diagonal_names,
    complex_half=True)
def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *,
             outdim: str | None = None) -> Tensor:
    """`outdim`: the name of the result's last dim (the diagonal's)."""
    d1, d2 = wrap_dim(dim1, self.ndim), wrap_dim(dim2, self.ndim)
    if d1 == d2:
        raise positional_error(RuntimeError, "diagonal dimensions cannot be identical {d1}, {d2}",
                               d1=d1, d2=d2)
    offset = whole(offset, "offset")
    arr = np.diagonal(self.data, offset, d1, d2)
    arr.flags.writeable = self.data.flags.writeable  # (a view to write through, as PyTorch's)
    return record(view_of(self, arr), DiagonalBackward0, (self,), (self.shape, offset, d1, d2))


@formula
def DiagEmbedBackward0(n, g, offset, d1, d2):
    return (diagonal(g, offset, d1, d2),)


@op(new_dims=("dim1", "dim2"), samples=S.diag_embed, forward="linear")
def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    nd = self.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise positional_error(RuntimeError, "diagonal dimensions cannot be identical {d1}, {d2}",
                               d1=d1, d2=d2)
    offset = whole(offset, "offset")
    last = self.shape[-1] if self.ndim else 1
    m = last + abs(offset)
    rest = list(self.shape[:-1])
    shape = [0] * nd
    others = [i for i in range(nd) if i not in (d1, d2)]
    for i, s in zip(others, rest):
        shape[i] = s
    shape[d1] = shape[d2] = m
    z = np.zeros(shape, dtype=self.data.dtype)
    rows, cols = _diag_positions(tuple(shape), offset, d1, d2)
    np.moveaxis(z, (d1, d2), (-2, -1))[..., rows, cols] = self.data.reshape(tuple(rest) + (last,))
    return record(z, DiagEmbedBackward0, (self,), (offset, d1, d2))


@op(samples=S.diag, forward="linear", complex_half=True)
def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    k = whole(diagonal, "diagonal")
    if self.ndim == 1:
        return diag_embed(self, k, 0, 1)
    if self.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")
    # (PyTorch copies here: diag is diagonal_copy, its node so named)
    return record(np.diagonal(self.data, k).copy(), DiagonalBackward0, (self,), (self.shape, k, 0, 1),
                  name="DiagonalBackward0_copy")


@op(samples=S.diagflat, forward="linear")
def diagflat(self: Tensor, offset: int = 0) -> Tensor:
    return diag_embed(reshape(self, (-1,)), offset, 0, 1)


# R torch's `torch_narrow_copy()` takes `start` as it is (0-based), unlike its
# `x$narrow_copy()` and `torch_narrow()`, which take it 1-based: the function is
# declared apart so that R gets each as R torch has it.
@op("narrow_copy_function", function="torch_narrow_copy", method=False, dims=("dim",),
    torch_name="narrow_copy", samples=S.narrow_copy)
def _narrow_copy_function(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    return narrow_copy(self, dim, start, length)


@op(method=False, differentiable=False, samples=S.broadcast_shapes,
    r_conventions=("shape_vector",))
def broadcast_shapes(*shapes: Any) -> tuple:
    """The shape tensors of these shapes broadcast to (R torch: a numeric vector)."""
    sizes = [shape_arg((s,)) if np.ndim(s) else (whole(s, "size"),) for s in shapes]
    try:
        return tuple(int(v) for v in np.broadcast_shapes(*sizes))
    except ValueError:
        raise RuntimeError("broadcast_shapes: the shapes " + ", ".join(map(shape_str, sizes)) +
                           " can't be broadcast together: each dimension, aligned from the "
                           "right, must be equal or 1") from None


@formula
def BlockDiagBackward0(n, g, blocks):
    out = []
    r = c = 0
    for i, (rows, cols, shape) in enumerate(blocks):
        out.append(g[r:r + rows, c:c + cols].reshape(shape) if n.needs(i) else None)
        r, c = r + rows, c + cols
    return tuple(out)


@op(method=False, samples=S.block_diag,
    torch_name="_C._VariableFunctions.block_diag", forward="linear")  # (the form taking a list)
def block_diag(tensors: Sequence[Tensor]) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    mats = []
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
        mats.append(t.data.reshape((1, -1) if t.ndim < 2 else t.shape))
    dtype = np.result_type(*mats) if mats else np.dtype(np.float32)
    if dtype == F64 and not any(t.data.dtype == F64 for t in ts):
        dtype = np.dtype(np.float32)  # (PyTorch's promotion: ints with float32 stay float32)
    out = np.zeros((builtins.sum(m.shape[0] for m in mats),
                    builtins.sum(m.shape[1] for m in mats)), dtype=dtype)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return record(out, BlockDiagBackward0, ts,
                  ([(m.shape[0], m.shape[1], t.shape) for m, t in zip(mats, ts)],))


@op(method=False, samples=S.cartesian_prod,
    torch_name="_C._VariableFunctions.cartesian_prod", forward="linear")  # (the form taking a list)
def cartesian_prod(tensors: Sequence[Tensor]) -> Tensor:
    ts = [as_tensor(t) for t in tensors]
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError("cartesian_prod: Expect a 1D vector, but got shape "
                               f"{shape_str(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    return stack([flatten(g) for g in meshgrid(ts, "ij")], 1)


@op(samples=S.combinations)
def combinations(self: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    import itertools
    if self.ndim != 1:
        raise RuntimeError(f"combinations: Expect a 1D vector, but got shape "
                           f"{shape_str(self.shape)}")
    r = whole(r, "r")
    if r < 0:
        raise RuntimeError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return wrap(np.empty((0,), self.data.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    combos = np.array(list(pick(range(self.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return stack([index_select(self, 0, wrap(combos[:, k])) for k in range(r)], 1)


# ==========================================================================
# In place: shape changes of the tensor itself, and triangles

@op(function=False, samples=S.inplace, invisible=True, names="transpose")
def t_(self: Tensor) -> Tensor:
    return restride_inplace(self, t(self))


@op(function=False, dims=("dim0", "dim1"), samples=S.inplace, invisible=True, names="transpose")
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return restride_inplace(self, transpose(self, dim0, dim1))


@op(function=False, dims=("axis0", "axis1"), invisible=True, names="transpose",
    r_dims_as_given=("axis0", "axis1"))
def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return transpose_(self, axis0, axis1)


@op(function=False, dims=("dim0", "dim1"), invisible=True, names="transpose")
def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return transpose_(self, dim0, dim1)


@op(function=False, dims=("dim",), samples=S.inplace, invisible=True, names="squeeze")
def squeeze_(self: Tensor, dim: int | None = None) -> Tensor:
    return restride_inplace(self, squeeze(self, dim))


@op(function=False, new_dims=("dim",), samples=S.inplace, invisible=True, names="unsqueeze")
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    return restride_inplace(self, unsqueeze(self, dim))


@op(function=False, samples=S.inplace, invisible=True)
def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    k = whole(diagonal, "diagonal")
    if self.ndim < 2:
        raise RuntimeError("tril_: input tensor must have at least 2 dimensions")
    return write_inplace(self, np.tril(self.data, k), TrilBackward0, (self,), (k,))


@op(function=False, samples=S.inplace, invisible=True)
def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    k = whole(diagonal, "diagonal")
    if self.ndim < 2:
        raise RuntimeError("triu_: input tensor must have at least 2 dimensions")
    return write_inplace(self, np.triu(self.data, k), TriuBackward0, (self,), (k,))


# ==========================================================================
# Sliding windows

@formula
def UnfoldBackward0(n, g, shape, d, size, step):
    return (_fold_windows(g, shape, d, size, step),)


@formula
def FoldWindowsBackward(n, g, d, size, step):
    return (unfold(g, d, size, step),)


def _window_positions(length: int, size: int, step: int) -> np.ndarray:
    count = (length - size) // step + 1
    return (np.arange(count) * step)[:, None] + np.arange(size)[None, :]


def _fold_windows(g: Tensor, shape: tuple, d: int, size: int, step: int) -> Tensor:
    """Zeros of `shape` with each window of g added back where it came from."""
    z = np.zeros(shape, dtype=g.data.dtype)
    pos = _window_positions(shape[d], size, step)
    np.add.at(np.moveaxis(z, d, -1), (Ellipsis, pos), np.moveaxis(g.data, d, -2))
    return record(z, FoldWindowsBackward, (g,), (d, size, step))


@op(function=False, samples=S.unfold)
def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Windows of `size` along `dimension`, every `step`: that dim becomes the
    window count and the windows a new last dim (a view). `dimension` counts
    from 0 in R too, as R torch's `x$unfold()` does."""
    d = wrap_dim(whole(dimension, "dimension"), self.ndim)
    size, step = whole(size, "size"), whole(step, "step")
    if self.ndim == 0:
        raise RuntimeError("unfold: the tensor must have at least one dimension")
    if size > self.shape[d] or size < 0:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {self.shape[d]} but "
                           f"size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    win = np.lib.stride_tricks.sliding_window_view(self.data, size, axis=d)
    key = (slice(None),) * d + (slice(None, None, step),)
    return record(view_of(self, win[key]), UnfoldBackward0, (self,), (self.shape, d, size, step))


@op(dims=("dim",), samples=S.diff)
def diff(self: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """Differences of neighbours along `dim`, `n` times (after joining `prepend`
    and `append` on either side); for bools, whether neighbours differ."""
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    n = whole(n, "n")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, self.ndim)
    # (R torch's default for prepend/append is an empty list: nothing to join)
    parts = [as_tensor(p) for p in (prepend, self, append)
             if p is self or (p is not None and not (isinstance(p, (list, tuple)) and not p))]
    x = cat(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = narrow(x, d, 1, size - 1), narrow(x, d, 0, size - 1)
        x = hi.logical_xor(lo) if x.data.dtype == np.bool_ else hi - lo
    return x



@op(dims=("dim",), samples=S.split_with_sizes, names="keep", forward="linear")
def split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> list:
    sizes = np.asarray(split_sizes).reshape(-1).tolist()
    return split(self, [whole(v, "split_sizes") for v in sizes], dim)


@op(function=False, dims=("dim",), samples=S.split_with_sizes, names="keep")
def unsafe_split_with_sizes(self: Tensor, split_sizes: Any, dim: int = 0) -> list:
    sizes = np.asarray(split_sizes).reshape(-1).tolist()
    return split(self, [whole(v, "split_sizes") for v in sizes], dim,
                 name="UnsafeSplitWithSizesBackward0")


@op(dims=("dim",), samples=S.unsafe_split, names="keep", forward="linear")
def unsafe_split(self: Tensor, split_size: Any, dim: int = 0) -> list:
    return split(self, split_size, dim, name="UnsafeSplitBackward0")


@op(dims=("dim",), samples=S.chunk, names="keep", forward="linear")
def unsafe_chunk(self: Tensor, chunks: int, dim: int = 0) -> list:
    chunks = whole(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = wrap_dim(dim, self.ndim)
    step = -(-self.shape[d] // chunks) if self.shape[d] else 1
    return split(self, step, d, name="UnsafeSplitBackward0")


@op(samples=S.ravel, forward="linear")
def ravel(self: Tensor) -> Tensor:
    return view(contiguous(self), (-1,))


# ==========================================================================
# Scatter into a region: a copy of self with src in a slice, index or diagonal

@formula
def SliceScatterBackward0(n, g, key, sshape):
    gx = zero_at(g, key) if n.needs(0) else None
    gs = g[key].reshape(sshape) if n.needs(1) else None
    return gx, gs




def _scatter_region(self: Tensor, src: Any, key: tuple, fn: Any, what: str) -> Tensor:
    src = as_tensor(src)
    out = self.data.copy()
    region = out[key]
    if region.shape != src.shape:
        raise RuntimeError(f"{what}: expected src to have a size equal to the slice of self "
                           f"({shape_str(region.shape)}), but got {shape_str(src.shape)}")
    out[key] = src.data
    return record(out, fn, (self, src), (key, src.shape))


@op(dims=("dim",), indices=("index",), samples=S.select_scatter, forward="linear")
def select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    d = wrap_dim(dim, self.ndim)
    i = whole(index, "index")
    size = self.shape[d]
    if not -size <= i < size:
        raise positional_error(IndexError, "select_scatter(): index {index} out of range for "
                               f"tensor of size {shape_str(self.shape)} at dimension {{dim}}",
                               index=i, dim=d)
    return _scatter_region(self, src, (slice(None),) * d + (i,), SelectScatterBackward0,
                           "select_scatter")


@formula
def SelectScatterBackward0(n, g, key, sshape):
    return SliceScatterBackward0.formula(n, g, key, sshape)


@op(dims=("dim",), samples=S.slice_scatter, forward="linear")
def slice_scatter(self: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                  step: int = 1) -> Tensor:
    """`start`/`end` count from 0 in R as well, as R torch's `torch_slice_scatter()`."""
    d = wrap_dim(dim, self.ndim)
    key = (slice(None),) * d + (slice(None if start is None else whole(start, "start"),
                                       None if end is None else whole(end, "end"),
                                       whole(step, "step")),)
    return _scatter_region(self, src, key, SliceScatterBackward0, "slice_scatter")


@formula
def DiagonalScatterBackward0(n, g, offset, d1, d2, sshape):
    gx = None
    if n.needs(0):
        gx = g - _diagonal_scatter(diagonal(g, offset, d1, d2), g.shape, offset, d1, d2)
    gs = diagonal(g, offset, d1, d2).reshape(sshape) if n.needs(1) else None
    return gx, gs


@op(dims=("dim1", "dim2"), samples=S.diagonal_scatter, forward="linear")
def diagonal_scatter(self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    src = as_tensor(src)
    d1, d2 = wrap_dim(dim1, self.ndim), wrap_dim(dim2, self.ndim)
    offset = whole(offset, "offset")
    out = self.data.copy()
    diag = np.diagonal(out, offset, d1, d2)
    if diag.shape != src.shape:
        raise RuntimeError(f"diagonal_scatter: expected src to have a size equal to the "
                           f"diagonal of self ({shape_str(diag.shape)}), got "
                           f"{shape_str(src.shape)}")
    diag.flags.writeable = True
    diag[...] = src.data
    return record(out, DiagonalScatterBackward0, (self, src), (offset, d1, d2, src.shape))


# ==========================================================================
# as_strided: any view of the storage, by sizes and strides in elements

@formula
def AsStridedViewBackward(n, g, positions, storage, self_positions, shape):
    flat = index_add_into(g.reshape(-1), (storage,), 0, positions.reshape(-1))
    return (flat[wrap(self_positions.reshape(-1))].reshape(shape),)


def storage_view(flat: np.ndarray, size: tuple, stride: tuple,
                 offset: int) -> tuple[np.ndarray, np.ndarray]:
    """The view of a flat storage with these sizes, strides and offset (in elements),
    and each of its elements' position in the storage (checked to lie inside it)."""
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides "
                           f"for {len(size)} sizes")
    if any(s < 0 for s in stride) or any(s < 0 for s in size):
        raise RuntimeError("as_strided: negative sizes or strides are not supported")
    positions = np.full(size, offset, dtype=np.int64)
    for k, (n_, st) in enumerate(zip(size, stride)):
        positions = positions + (np.arange(n_) * st).reshape((n_,) + (1,) * (len(size) - k - 1))
    storage = flat.size
    if positions.size and positions.max() >= storage:
        raise RuntimeError(f"setStorage: sizes {shape_str(size)}, strides {shape_str(stride)} and "
                           f"storage offset {offset} need {positions.max() + 1} elements, but "
                           f"the storage has {storage}")
    arr = np.lib.stride_tricks.as_strided(flat[offset:] if offset < storage else flat[:0],
                                          shape=size, strides=[s * flat.itemsize for s in stride],
                                          writeable=len(np.unique(positions)) == positions.size)
    return arr, positions


@op(function=True, samples=S.as_strided, forward="linear")
def as_strided(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """A view of self's storage (its base's elements, in order) with these sizes and
    strides (in elements), from `storage_offset` (default: where self starts)."""
    base = self if self._base is None else self._base
    if not base.data.flags.c_contiguous:
        raise RuntimeError("as_strided: the tensor's storage isn't contiguous here; call "
                           "contiguous() first")
    size, stride = shape_arg((size,)), shape_arg((stride,))
    self_positions = view_key(self.data, base.data) if self._base is not None else \
        np.arange(base.data.size).reshape(self.shape)
    offset = int(self_positions.reshape(-1)[0]) if storage_offset is None and self.numel() \
        else whole(storage_offset or 0, "storage_offset")
    arr, positions = storage_view(base.data.reshape(-1), size, stride, offset)
    storage = base.data.size
    return record(view_of(self, arr), AsStridedViewBackward, (self,),
                  (positions, storage, self_positions, self.shape), name="AsStridedBackward0")


# --------------------------------------------------------------------------
# Rearranging channels: channel_shuffle, pixel_shuffle and its inverse


def _int_factor(v: Any, what: str, name: str) -> int:
    v = whole(v, what)
    if v <= 0:
        raise RuntimeError(f"{name} expects {what} to be positive, but got {what}={v}")
    return v


@formula
def ChannelShuffleBackward0(n, g, per_group):
    return (channel_shuffle(g, per_group),)


@op(method=False, samples=S.channel_shuffle)
def channel_shuffle(self: Tensor, groups: int) -> Tensor:
    """The channels (dim 1) of each of `groups` groups dealt out in turn."""
    groups = _int_factor(groups, "groups", "channel_shuffle")
    if self.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {self.ndim} dimension(s)")
    n, c = self.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    arr = self.data.reshape((n, groups, c // groups) + self.shape[2:]).swapaxes(1, 2)
    return record(np.ascontiguousarray(arr).reshape(self.shape), ChannelShuffleBackward0,
                  (self,), (c // groups,))


def _pixel_check(x: Tensor, name: str) -> None:
    if x.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {x.ndim} dimension(s)")


@formula
def PixelShuffleBackward0(n, g, r):
    return (pixel_unshuffle(g, r),)


@op(method=False, samples=S.pixel_shuffle)
def pixel_shuffle(self: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) to (*, C, H r, W r): each channel block of r^2 spread over
    an r x r patch."""
    r = _int_factor(upscale_factor, "upscale_factor", "pixel_shuffle")
    _pixel_check(self, "pixel_shuffle")
    *lead, c, h, w = self.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    k = len(lead)
    arr = self.data.reshape(*lead, c // (r * r), r, r, h, w)
    arr = arr.transpose(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    out = np.ascontiguousarray(arr).reshape(*lead, c // (r * r), h * r, w * r)
    return record(out, PixelShuffleBackward0, (self,), (r,))


@formula
def PixelUnshuffleBackward0(n, g, r):
    return (pixel_shuffle(g, r),)


@op(method=False, samples=S.pixel_unshuffle)
def pixel_unshuffle(self: Tensor, downscale_factor: int) -> Tensor:
    """pixel_shuffle's inverse: (*, C, H r, W r) to (*, C r^2, H, W)."""
    r = _int_factor(downscale_factor, "downscale_factor", "pixel_unshuffle")
    _pixel_check(self, "pixel_unshuffle")
    *lead, c, h, w = self.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got height={h}, width={w}, "
                           f"downscale_factor={r}")
    k = len(lead)
    arr = self.data.reshape(*lead, c, h // r, r, w // r, r)
    arr = arr.transpose(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    out = np.ascontiguousarray(arr).reshape(*lead, c * r * r, h // r, w // r)
    return record(out, PixelUnshuffleBackward0, (self,), (r,))


# --------------------------------------------------------------------------
# In place: the diagonal filled (fill_diagonal_), the size changed (resize_)


@op(function=False)
def fill_diagonal_(self: Tensor, fill_value: float, wrap: bool = False) -> Tensor:
    """Each element (i, i, ...) set to fill_value, through a strided view (its
    node a CopySlices, as in PyTorch). `wrap`: in a matrix taller than wide, the
    diagonal starts again every width + 1 rows."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    h, w = self.shape[:2]
    if self.ndim > 2 and any(s != h for s in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = [s // self.data.itemsize for s in self.data.strides]
    as_strided(self, (builtins.min(self.shape),), (builtins.sum(strides),)).fill_(fill_value)
    if wrap and self.ndim == 2 and h > w + 1:
        fill_diagonal_(narrow(self, 0, w + 1, h - w - 1), fill_value, True)
    return self


@op(function=False)
def resize_(self: Tensor, size: Any, memory_format: Any = None) -> Tensor:
    """The tensor given `size`: its first elements (in memory order) kept, new
    ones uninitialised (zeros here)."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = shape_arg((size,))
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {shape_str(shape)}")
    flat = np.ascontiguousarray(self.data).reshape(-1)
    out = np.zeros(int(np.prod(shape)), dtype=flat.dtype)
    k = builtins.min(out.size, flat.size)
    out[:k] = flat[:k]
    self.data = out.reshape(shape)
    bump_version(self)
    return self


# --------------------------------------------------------------------------
# Packing padded sequences (R torch's nn_utils_rnn_pack_padded_sequence): the
# time steps one after another, each with the batch elements still running


@formula
def PackPaddedSequenceBackward0(n, g, shape, rows):
    return (index_backward(g, rows, shape, False),)


@op(function=False, method=False, torch_name="_pack_padded_sequence")
def _pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool) -> tuple:
    """(data, batch_sizes) of a padded batch whose lengths are decreasing."""
    lens = np.asarray(lengths.data if isinstance(lengths, Tensor) else lengths).reshape(-1)
    lens = lens.astype(np.int64)
    x = input.transpose(0, 1) if batch_first else input
    if x.ndim < 2 or len(lens) != x.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={x.shape[1] if x.ndim > 1 else 0})")
    if len(lens) and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(np.diff(lens) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if len(lens) and lens[0] > x.shape[0]:
        raise RuntimeError(f"Expected sequence length to be at most {x.shape[0]}, but got a "
                           f"length of {int(lens[0])}")
    steps = int(lens[0]) if len(lens) else 0
    batch_sizes = (lens[None, :] > np.arange(steps)[:, None]).sum(1).astype(np.int64)
    t = np.repeat(np.arange(steps), batch_sizes)
    b = np.concatenate([np.arange(k) for k in batch_sizes]) if steps else t
    rows = (b, t) if batch_first else (t, b)
    data = record(np.ascontiguousarray(input.data[rows]), PackPaddedSequenceBackward0,
                  (input,), (input.shape, rows))
    return data, wrap(batch_sizes)
