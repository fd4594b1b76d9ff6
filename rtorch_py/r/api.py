"""The R torch API as the R shim calls it: one Python call per R-level op.

The C bridge (`r_compat/src/bridge.c`) turns R arguments into Python values
(R doubles -> float, integers -> int, logicals -> bool, longer vectors and
arrays -> NumPy arrays through `_from_r_array`, lists -> list/NamedList, our
external pointers -> the very same Python object, anything else -> RObject)
and calls the functions below. Here R's conventions become the engine's:
1-based dims and indices, R torch's defaults, R torch's return shapes.

This module imports no R: it can be used and tested without it.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

import numpy as np

from .. import autograd as _ag
from .. import creation as _cr
from .. import engine as _eng
from .. import ops as _ops
from ..engine import Node, RemovableHandle
from ..function import R_NODE_NAME, AutogradContext, NamedList, _apply
from ..gradcheck import autograd_gradcheck as _gradcheck
from ..printing import format_grad_fn
from ..tensor import Tensor, as_dtype, dtype, wrap

RObject: type = object  # replaced by the C bridge's type when it initialises


class RError(RuntimeError):
    """An R error raised inside an R callback, carried through Python.

    `condition` holds the original R condition (an RObject) so the bridge can
    re-signal it in R unchanged."""

    def __init__(self, message: str, condition: Any = None) -> None:
        super().__init__(message)
        self.condition = condition


class UndefinedTensor:
    """R torch's undefined tensor: what `x$grad` is before any backward."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "torch_tensor\n[ Tensor (undefined) ]"


UNDEFINED = UndefinedTensor()


class Scope:
    """A grad-mode or anomaly scope opened from R and closed by on.exit."""

    __slots__ = ("restore",)

    def __init__(self, restore: Callable[[], None]) -> None:
        self.restore = restore


# Python type -> R class attribute of the external pointer holding it.
# The tensor must come first (the bridge's fast path relies on it).
R_CLASSES: list = [
    (Tensor, ("torch_tensor", "R7")),
    (UndefinedTensor, ("torch_tensor", "R7")),
    (dtype, ("torch_dtype", "R7")),
    (Node, ("autograd_node", "R6")),
    (AutogradContext, ("torch_autograd_context", "R6")),
    (RemovableHandle, ("torch_hook", "R6")),
    (Scope, ("rtorch_scope",)),
]


# --------------------------------------------------------------------------
# Conversions used by the C bridge

_R_DTYPES = {"d": np.float64, "i": np.int32, "f": np.int32, "l": np.int32}


def _from_r_array(code: str, buf: bytearray, dims: tuple | None) -> np.ndarray:
    """An R atomic vector's data (a private copy) as a NumPy array with R's
    logical layout: `a[i, j]` is the R matrix's `[i, j]`."""
    arr = np.frombuffer(buf, dtype=_R_DTYPES[code])
    if code == "l":
        arr = arr != 0
    if dims is not None:
        arr = arr.reshape(dims, order="F")
    return arr


def _error_message(exc: BaseException) -> str:
    msg = str(exc) if not isinstance(exc, KeyError) else str(exc.args[0] if exc.args else exc)
    notes = getattr(exc, "__notes__", None)
    if notes and not isinstance(exc, RError):
        msg = "\n".join([msg, *notes])
    return msg or type(exc).__name__


def _undef(x: Any) -> Any:
    return None if x is UNDEFINED else x


def _r_value(x: Any) -> Any:
    """A value R will see: None tensors (gradients) are undefined tensors."""
    return UNDEFINED if x is None else x


# --------------------------------------------------------------------------
# 1-based dims and sizes


def _int(v: Any, what: str = "value") -> int:
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"expected an integer {what}, got a logical")
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise ValueError(f"expected a single integer {what}, got {v.size} values")
        v = v.reshape(()).item()
    if isinstance(v, Tensor):
        v = v.item()
    iv = int(v)
    if iv != v:
        raise ValueError(f"expected an integer {what}, got {v}")
    return iv


def _dim(d: Any, ndim: int | None = None) -> int:
    """R's 1-based dim (negative counts from the end) -> the engine's 0-based,
    checked against `ndim` (when given) with a 1-based message."""
    d = _int(d, "dim")
    if d == 0:
        raise IndexError("Indexing starts at 1 but found a 0.")
    if ndim is not None:
        n = builtins.max(ndim, 1)
        if not -n <= d <= n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n}], "
                             f"but got {d})")
    return d - 1 if d > 0 else d


def _dims(d: Any, ndim: int | None = None) -> Any:
    if d is None:
        return None
    if isinstance(d, (list, tuple, np.ndarray)) and np.ndim(d) > 0:
        flat = np.asarray(d).reshape(-1)
        if flat.size == 1:
            return _dim(flat[0], ndim)
        return tuple(_dim(v, ndim) for v in flat)
    return _dim(d, ndim)


def _sizes(args: Sequence[Any]) -> tuple:
    """torch_zeros(2, 3), torch_zeros(c(2, 3)), x$view(c(2, -1)): ints."""
    out: list[int] = []
    for a in args:
        if isinstance(a, (list, tuple, np.ndarray, NamedList)):
            out.extend(_int(v, "size") for v in np.asarray(list(a) if isinstance(a, NamedList)
                                                           else a).reshape(-1))
        else:
            out.append(_int(a, "size"))
    return tuple(out)


def _list(x: Any) -> list:
    if isinstance(x, NamedList):
        return x.values()
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _one_based(t: Tensor) -> Tensor:
    """Indices from the engine (0-based) as R torch gives them (1-based)."""
    return wrap(t.data + 1)


def _tensor_of(x: Any) -> Any:
    """R vectors given where a tensor is expected become tensors, as in R torch."""
    if isinstance(x, np.ndarray):
        return torch_tensor(x)
    return x


# --------------------------------------------------------------------------
# Creation


def _r_data(data: Any, dtype: Any = None) -> np.ndarray | Any:
    """R data -> an array with torch's layout and, unless `dtype` says
    otherwise, R torch's defaults (doubles -> float32, integers -> int64)."""
    if isinstance(data, np.ndarray):
        target = as_dtype(dtype).np if dtype is not None else \
            {np.dtype(np.float64): np.float32, np.dtype(np.int32): np.int64}.get(data.dtype)
        return np.ascontiguousarray(data, dtype=target)
    if isinstance(data, (list, NamedList)):
        values = _list(data)
        if values and all(isinstance(v, Tensor) for v in values):
            return np.stack([v.data for v in values])
        if any(isinstance(v, np.ndarray) for v in values):  # list(c(1, 2), c(3, 4)): rows
            return _r_data(np.array([np.asarray(v) for v in values]), dtype)
        return values
    return data


_R_TYPES = {"closure": "function", "builtin": "function", "special": "function",
            "environment": "environment", "complex": "complex", "symbol": "symbol",
            "language": "call", "S4": "S4 object", "raw": "raw"}


def _r_kind(v: Any) -> str:
    """How R would name a value that can't become a tensor."""
    if isinstance(v, str) or (isinstance(v, list) and v and isinstance(v[0], str)):
        return "character"
    rtype = getattr(v, "rtype", None)
    if rtype is not None:
        return _R_TYPES.get(rtype, rtype)
    return type(v).__name__


def _check_r_data(data: Any) -> None:
    """Refuse what R torch refuses, in R's words and 1-based positions."""
    if isinstance(data, (list, NamedList)):
        values = _list(data)
        if values and all(isinstance(v, str) for v in values):
            raise TypeError("torch_tensor() can't make a tensor from character data; "
                            "give numeric, integer or logical vectors")
        lengths = []
        for i, v in enumerate(values, 1):
            if isinstance(v, (list, NamedList)):
                _check_r_data(v)
                lengths.append(len(_list(v)))
            elif isinstance(v, np.ndarray):
                lengths.append(v.size)
            elif isinstance(v, (bool, int, float, Tensor)):
                lengths.append(1 if not isinstance(v, Tensor) else v.numel())
            else:
                raise TypeError(f"torch_tensor() can't make a tensor from a {_r_kind(v)} "
                                f"(element {i} of the list); elements must be numeric, "
                                "integer or logical")
        if len(set(lengths)) > 1:
            raise ValueError("torch_tensor(): the list's elements must be numeric vectors of "
                             f"the same length, got lengths {', '.join(map(str, lengths))}")
    elif not isinstance(data, (np.ndarray, bool, int, float, Tensor)):
        raise TypeError(f"torch_tensor() can't make a tensor from a {_r_kind(data)}; give a "
                        "numeric, integer or logical vector, matrix or array")


def torch_tensor(data: Any = None, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    _check_r_data(data) if data is not None else None
    if data is None:
        return _cr.torch_tensor(np.zeros(0, dtype=np.bool_), dtype=dtype,
                                requires_grad=requires_grad)
    if isinstance(data, Tensor):
        out = wrap(data.data.astype(as_dtype(dtype).np) if dtype is not None else
                   data.data.copy())
        if requires_grad:
            out.requires_grad = True
        return out
    return _cr.torch_tensor(_r_data(data, dtype), dtype=dtype, device=device or "cpu",
                            requires_grad=requires_grad)


def torch_scalar_tensor(value: Any, dtype: Any = None, device: Any = None,
                        requires_grad: bool = False) -> Tensor:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError("values must be length 1")
        out = value.reshape(())
        if dtype is not None:
            out = out.to(dtype=dtype)
        return out.requires_grad_(requires_grad) if requires_grad else out
    if isinstance(value, np.ndarray) and value.size != 1:
        raise ValueError("value must be a length 1 vector")
    out = torch_tensor(value, dtype=dtype)
    out = wrap(out.data.reshape(()))
    if requires_grad:
        out.requires_grad = True
    return out


def _size_kw(size: tuple, kw: dict) -> tuple:
    if "size" in kw:
        if size:
            raise TypeError("You should specify a single size argument.")
        return _sizes([kw.pop("size")])
    return _sizes(size)


def _creator(fn: Callable) -> Callable:
    def create(*size: Any, names: Any = None, dtype: Any = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False, **kw: Any) -> Tensor:
        sz = _size_kw(size, kw)
        if kw:
            raise TypeError(f"unused argument(s): {', '.join(kw)}")
        return fn(*sz, dtype=dtype, device=device or "cpu", requires_grad=requires_grad)
    create.__name__ = fn.__name__
    return create


def _like(fn: Callable) -> Callable:
    def create(input: Tensor, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
        return fn(input, dtype=dtype, requires_grad=requires_grad)
    create.__name__ = fn.__name__
    return create


def torch_full(size: Any, fill_value: Any, names: Any = None, dtype: Any = None,
               layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _cr.torch_full(_sizes([size]), fill_value, dtype=dtype, requires_grad=requires_grad)


def torch_full_like(input: Tensor, fill_value: Any, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False,
                    memory_format: Any = None) -> Tensor:
    return _cr.torch_full_like(input, fill_value, dtype=dtype, requires_grad=requires_grad)


def torch_randint(low: Any, high: Any = None, size: Any = None, generator: Any = None,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    if size is None and high is not None and not isinstance(high, (int, float)):
        size, high = high, None
    return _cr.torch_randint(_int(low), None if high is None else _int(high),
                             size=_sizes([size]), dtype=dtype, requires_grad=requires_grad)


def torch_arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None,
                 layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """R torch's arange includes `end` (like R's seq)."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = int(np.floor((end - start) / step + 1e-7)) + 1
    vals = start + step * np.arange(builtins.max(n, 0))
    target = as_dtype(dtype) if dtype is not None else _cr.float32
    return _cr.torch_tensor(vals.astype(target.np), requires_grad=requires_grad)


def torch_linspace(start: Any, end: Any, steps: Any = 100, dtype: Any = None,
                   layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _cr.torch_linspace(start, end, _int(steps), dtype=dtype, requires_grad=requires_grad)


def torch_eye(n: Any, m: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return _cr.torch_eye(_int(n), None if m is None else _int(m), dtype=dtype,
                         requires_grad=requires_grad)


def torch_manual_seed(seed: Any) -> None:
    _cr.torch_manual_seed(_int(seed, "seed"))


def as_array(x: Any) -> Any:
    """R torch's as_array: long tensors come back as R integers; matrices and
    arrays with dims; 0-d and 1-d tensors as plain vectors."""
    if x is UNDEFINED:
        raise RuntimeError("Can't convert an undefined tensor to an R array")
    if not isinstance(x, Tensor):
        raise TypeError(f"as_array() expects a tensor, got {type(x).__name__}")
    arr = x.data
    if arr.dtype == np.int64:
        if arr.size and (arr.max() > 2**31 - 1 or arr.min() < -2**31 + 1):
            import warnings
            warnings.warn("Converting integers > .Machine$integer.max is undefined and "
                          "returns wrong results.", stacklevel=2)
        arr = arr.astype(np.int32)
    if arr.ndim == 0:
        return arr.reshape(1)
    if arr.ndim == 1:
        return np.ascontiguousarray(arr)
    return np.asfortranarray(arr)


def is_undefined_tensor(x: Any) -> bool:
    return x is UNDEFINED


# --------------------------------------------------------------------------
# Tensor properties ($ without a call) and assignment ($<-)


def _grad_fn(x: Tensor) -> Any:
    return x.grad_fn


_GETTERS: dict[str, Callable[[Tensor], Any]] = {
    "shape": lambda x: np.asarray(x.shape, dtype=np.int32),
    "dtype": lambda x: x.dtype,
    "grad": lambda x: _r_value(x.grad),
    "requires_grad": lambda x: x.requires_grad,
    "grad_fn": _grad_fn,
    "is_leaf": lambda x: x.is_leaf,
    "ndim": lambda x: x.ndim,
    "device": lambda x: "cpu",
    "is_cuda": lambda x: False,
    "names": lambda x: None,
    "data": lambda x: x.detach(),
    "retains_grad": lambda x: x.retains_grad,
}


def tensor_get(x: Any, name: str) -> Any:
    if x is UNDEFINED:
        if name in ("requires_grad", "is_leaf"):
            return False
        raise RuntimeError(f"can't read ${name} of an undefined tensor")
    get = _GETTERS.get(name)
    return None if get is None else get(x)


def tensor_set(x: Tensor, name: str, value: Any) -> Tensor:
    if name == "requires_grad":
        x.requires_grad = bool(value)
    elif name == "grad":
        x.grad = _undef(value)
    else:
        raise RuntimeError(f"can't set ${name} of a tensor (only requires_grad and grad)")
    return x


def tensor_repr(x: Any, n: Any = 30) -> str:
    """What print(x, n) shows (without the final newline); n = -1 shows all."""
    if not isinstance(x, Tensor) or n == 30:
        return repr(x)
    from ..printing import format_tensor
    name = x.grad_fn.name if x.grad_fn is not None else None
    return format_tensor(x.data, x.dtype.name, x.requires_grad and name is None, name,
                         n=_int(n, "n")).rstrip("\n")


def node_get(node: Node, name: str) -> Any:
    if name == "next_functions":
        # Inputs without a graph (R numbers, tensors not requiring grad) have
        # no node to show.
        return [n for n, _ in node.next_functions if n is not None]
    if name == "name":
        return _node_name(node)
    return None


def _node_name(node: Node) -> str:
    # libtorch names its own accumulator node by its C++ type
    return "torch::autograd::AccumulateGrad" if node.name == "AccumulateGrad" else node.name


def node_repr(node: Node) -> str:
    return format_grad_fn(_node_name(node))


def dtype_repr(d: dtype) -> str:
    return repr(d)


def dtype_eq(a: Any, b: Any) -> bool:
    return isinstance(a, dtype) and isinstance(b, dtype) and a.np == b.np


# --------------------------------------------------------------------------
# Tensor methods with R conventions (also the torch_* functions)


def sum(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return _ops.sum(self, _dims(dim, self.ndim), keepdim, dtype)


def mean(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return _ops.mean(self, _dims(dim, self.ndim), keepdim, dtype)


def _extreme(op: Callable, elementwise: Callable) -> Callable:
    def reduce(self: Tensor, dim: Any = None, other: Any = None, keepdim: bool = False) -> Any:
        if isinstance(dim, Tensor) and other is None:
            dim, other = None, dim
        if other is not None:
            if dim is not None:
                raise ValueError("Can't set other and dim argumments.")
            return elementwise(self, _tensor_of(other))
        if dim is None:
            return op(self)
        values, idx = op(self, _dim(dim, self.ndim), keepdim)
        return [values, _one_based(idx)]
    return reduce


max = _extreme(_ops.max, _ops.maximum)
min = _extreme(_ops.min, _ops.minimum)


def argmax(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _one_based(_ops.argmax(self, None if dim is None else _dim(dim, self.ndim), keepdim))


def argmin(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _one_based(_ops.argmin(self, None if dim is None else _dim(dim, self.ndim), keepdim))


def prod(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    if dim is not None:
        raise NotImplementedError("prod(dim =) is not supported by the engine; use prod()")
    return _ops.prod(self if dtype is None else self.to(dtype=dtype))


def softmax(self: Tensor, dim: Any, dtype: Any = None) -> Tensor:
    return _ops.softmax(self, _dim(dim, self.ndim), dtype)


def log_softmax(self: Tensor, dim: Any, dtype: Any = None) -> Tensor:
    return _ops.log_softmax(self, _dim(dim, self.ndim), dtype)


def unsqueeze(self: Tensor, dim: Any) -> Tensor:
    # A new dim may go one past the end (-1 puts it last).
    return _ops.unsqueeze(self, _dim(dim, self.ndim + 1))


def squeeze(self: Tensor, dim: Any = None) -> Tensor:
    return _ops.squeeze(self, None if dim is None else _dim(dim, self.ndim))


def transpose(self: Tensor, dim0: Any, dim1: Any) -> Tensor:
    return _ops.transpose(self, _dim(dim0, self.ndim), _dim(dim1, self.ndim))


def permute(self: Tensor, *dims: Any) -> Tensor:
    return _ops.permute(self, tuple(_dim(d, self.ndim) for d in _sizes(dims)))


def flatten(self: Tensor, start_dim: Any = 1, end_dim: Any = -1) -> Tensor:
    return _ops.flatten(self, _dim(start_dim, self.ndim), _dim(end_dim, self.ndim))


def reshape(self: Tensor, *shape: Any) -> Tensor:
    return _ops.reshape(self, _sizes(shape))


def view(self: Tensor, *size: Any) -> Tensor:
    return _ops.view(self, _sizes(size))


def expand(self: Tensor, *size: Any) -> Tensor:
    return _ops.expand(self, _sizes(size))


def narrow(self: Tensor, dim: Any, start: Any, length: Any) -> Tensor:
    d = _dim(dim, self.ndim)
    s = _int(start, "start")
    if s == 0:
        raise ValueError("start indexing starts at 1")
    return _ops.narrow(self, d, s - 1 if s > 0 else self.shape[d] + s, _int(length, "length"))


def select(self: Tensor, dim: Any, index: Any) -> Tensor:
    d = _dim(dim, self.ndim)
    i = _int(index, "index")
    if i == 0:
        raise IndexError("Indexing starts at 1 but found a 0.")
    size = self.shape[d]
    if not -size <= (i - 1 if i > 0 else i) < size:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"[{', '.join(map(str, self.shape))}] at dimension "
                         f"{d + 1 if d >= 0 else d}")
    return _ops.select(self, d, i - 1 if i > 0 else i)


def chunk(self: Tensor, chunks: Any, dim: Any = 1) -> list:
    return _ops.chunk(self, _int(chunks, "chunks"), _dim(dim, self.ndim))


def split(self: Tensor, split_size: Any, dim: Any = 1) -> list:
    if isinstance(split_size, np.ndarray) and split_size.size > 1:
        split_size = [int(s) for s in split_size]
    else:
        split_size = _int(split_size, "split_size")
    return _ops.split(self, split_size, _dim(dim, self.ndim))


def unbind(self: Tensor, dim: Any = 1) -> list:
    return _ops.unbind(self, _dim(dim, self.ndim))


def gather(self: Tensor, dim: Any, index: Any, sparse_grad: bool = False) -> Tensor:
    kind = (index.data.dtype.kind if isinstance(index, Tensor) else
            np.asarray(index).dtype.kind if isinstance(index, np.ndarray) else "f")
    if kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int64 for index (1-based positions)")
    return _ops.gather(self, _dim(dim, self.ndim), _index_tensor(index))


def size(self: Tensor, dim: Any = None) -> Any:
    if dim is None:
        return np.asarray(self.shape, dtype=np.int32)
    return self.shape[_dim(dim, self.ndim)]


def to(self: Tensor, dtype: Any = None, device: Any = None, other: Any = None,
       non_blocking: bool = False, copy: bool = False, memory_format: Any = None) -> Tensor:
    if other is not None:
        dtype = other.dtype
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"only the 'cpu' device exists here, got {device!r}")
    return _ops.to(self, dtype=dtype, copy=copy)


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return self


def item(self: Tensor) -> Any:
    return self.item()


def clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _ops.clamp(self, min, max)


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _ops.clamp_(self, min, max)


def _binary(op: Callable) -> Callable:
    def f(self: Any, other: Any, *args: Any, **kw: Any) -> Any:
        return op(_tensor_of(self), _tensor_of(other), *args, **kw)
    f.__name__ = op.__name__
    return f


# R torch passes an R number given as `other` as a libtorch Scalar, so its
# nodes are the Scalar overloads' (`x * 2` -> MulBackward1), where PyTorch
# (and the Python API) wrap the number in a tensor (MulBackward0).
_SCALAR_NODES = {"AddBackward0": "AddBackward1", "SubBackward0": "SubBackward1",
                 "MulBackward0": "MulBackward1", "DivBackward0": "DivBackward1"}
_R_SCALARS = (float, int, bool)


def _scalar_other(op: Callable) -> Callable:
    def f(self: Any, other: Any, *args: Any, **kw: Any) -> Any:
        out = op(self, _tensor_of(other), *args, **kw)
        if type(other) in _R_SCALARS and type(out) is Tensor:
            node = out.grad_fn
            if node is not None:
                node.name = _SCALAR_NODES.get(node.name, node.name)
        return out
    f.__name__ = getattr(op, "__name__", "op")
    return f


def masked_fill(self: Tensor, mask: Any, value: Any) -> Tensor:
    return _ops.masked_fill(self, _tensor_of(mask), value)


def masked_fill_(self: Tensor, mask: Any, value: Any) -> Tensor:
    return _ops.masked_fill_(self, _tensor_of(mask), value)


def where(condition: Any, self: Any = None, other: Any = None) -> Tensor:
    return _ops.where(_tensor_of(condition), _tensor_of(self), _tensor_of(other))


def torch_cat(tensors: Any, dim: Any = 1) -> Tensor:
    tensors = [_tensor_of(t) for t in _list(tensors)]
    if not tensors:
        raise RuntimeError("torch_cat(): expected a non-empty list of tensors")
    # the engine skips empty 1-d tensors; check the rest with R's numbering
    parts = [(i, t) for i, t in enumerate(tensors, 1) if not (t.ndim == 1 and t.shape[0] == 0)]
    first_i, first = parts[0] if parts else (1, tensors[0])
    d = _dim(dim, first.ndim)
    d0 = d if d >= 0 else d + first.ndim
    for i, t in parts:
        if t.ndim != first.ndim or any(a != b for k, (a, b) in
                                       enumerate(zip(t.shape, first.shape)) if k != d0):
            raise RuntimeError(
                f"torch_cat(): sizes of tensors must match except in dimension {d0 + 1}: "
                f"tensor {first_i} has shape [{', '.join(map(str, first.shape))}] but tensor "
                f"{i} has shape [{', '.join(map(str, t.shape))}]")
    return _ops.cat(tensors, d)


def torch_stack(tensors: Any, dim: Any = 1) -> Tensor:
    tensors = [_tensor_of(t) for t in _list(tensors)]
    return _ops.stack(tensors, _dim(dim, tensors[0].ndim + 1 if tensors else None))


def backward(self: Tensor, gradient: Any = None, retain_graph: Any = None,
             create_graph: bool = False, inputs: Any = None, **kw: Any) -> None:
    if "keep_graph" in kw:
        retain_graph = kw.pop("keep_graph")
    if kw:
        raise TypeError(f"unused argument(s): {', '.join(kw)}")
    gradient = _undef(gradient)
    if isinstance(gradient, list) and not gradient:
        gradient = None
    self.backward(gradient, retain_graph, bool(create_graph),
                  None if inputs is None else _list(inputs))


def retain_grad(self: Tensor) -> None:
    self.retain_grad()


def register_hook(self: Tensor, hook: Callable) -> RemovableHandle:
    def call(grad: Tensor) -> Any:
        out = hook(grad)
        return out if isinstance(out, Tensor) else None  # as R torch: non-tensors ignored
    return self.register_hook(call)


def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    return self.requires_grad_(bool(requires_grad))


def hook_remove(handle: RemovableHandle) -> None:
    handle.remove()


def _same(name: str) -> Callable:
    return _ops.METHODS[name]


# Methods whose R form is the engine's op unchanged (no dims, no indices).
_PLAIN = [
    "neg", "exp", "log", "sqrt", "abs", "sign", "sin", "cos", "tanh", "sigmoid", "relu",
    "square", "logical_not", "isnan", "t", "clone", "contiguous", "zero_", "fill_",
    "long", "bool", "double",
]
_BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "gt", "ge", "lt", "le",
           "eq", "ne", "logical_and", "logical_or", "equal", "allclose", "mm", "matmul",
           "dot", "expand_as", "add_", "sub_", "mul_", "div_", "copy_"]


def _int_(self: Tensor) -> Tensor:
    return _ops.METHODS["int"](self)


def _float(self: Tensor) -> Tensor:
    return _ops.METHODS["float"](self)


def detach(self: Tensor) -> Tensor:
    return self.detach()


def detach_(self: Tensor) -> Tensor:
    return self.detach_()


def numel(self: Tensor) -> int:
    return self.numel()


def dim(self: Tensor) -> int:
    return self.ndim


def is_floating_point(self: Tensor) -> bool:
    return self.is_floating_point()


def is_contiguous(self: Tensor) -> bool:
    return bool(self.data.flags.c_contiguous)


def element_size(self: Tensor) -> int:
    return self.data.itemsize


def any_(self: Tensor) -> Tensor:
    return wrap(np.asarray(self.data.any()))


def all_(self: Tensor) -> Tensor:
    return wrap(np.asarray(self.data.all()))


def _remainder(a: Any, b: Any) -> Tensor:
    """a %% b (sign of the divisor, like R and torch_remainder), with grads."""
    a, b = _tensor_of(a), _tensor_of(b)
    with _eng.no_grad():
        q = _ops.div(a, b, rounding_mode="floor")
    q = q.detach()
    return _ops.sub(a, _ops.mul(b, q))


def _floor_divide(a: Any, b: Any) -> Tensor:
    return _ops.div(_tensor_of(a), _tensor_of(b), rounding_mode="floor")


def _nondiff(fn: Callable) -> Callable:
    def op(self: Tensor) -> Tensor:
        return wrap(np.asarray(fn(self.data)))
    return op


METHODS: dict[str, Callable] = {name: _same(name) for name in _PLAIN}
METHODS.update({name: _binary(_same(name)) for name in _BINARY})
METHODS.update({name: _scalar_other(_same(name))
                for name in ("add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_")})
METHODS.update({
    "sum": sum, "mean": mean, "max": max, "min": min, "argmax": argmax, "argmin": argmin,
    "prod": prod, "softmax": softmax, "log_softmax": log_softmax, "unsqueeze": unsqueeze,
    "squeeze": squeeze, "transpose": transpose, "permute": permute, "flatten": flatten,
    "reshape": reshape, "view": view, "expand": expand, "narrow": narrow, "select": select,
    "chunk": chunk, "split": split, "unbind": unbind, "gather": gather, "size": size,
    "to": to, "cpu": cpu, "item": item, "clamp": clamp, "clamp_": clamp_,
    "masked_fill": masked_fill, "masked_fill_": masked_fill_,
    "where": lambda self, condition, other: where(condition, self, other),
    "float": _float, "int": _int_, "detach": detach, "detach_": detach_, "numel": numel,
    "dim": dim, "is_floating_point": is_floating_point, "is_contiguous": is_contiguous,
    "element_size": element_size, "requires_grad_": requires_grad_,
    "register_hook": register_hook, "any": any_, "all": all_,
    "floor": _nondiff(np.floor), "ceil": _nondiff(np.ceil), "round": _nondiff(np.round),
    "trunc": _nondiff(np.trunc), "remainder": _remainder, "floor_divide": _floor_divide,
    "retain_grad": retain_grad, "backward": backward,
})

# Methods R torch returns invisibly.
INVISIBLE_METHODS = {"backward", "retain_grad"}


# --------------------------------------------------------------------------
# Operators (R's Ops group) and Math group


def _binop(op: Callable, flipped: Callable) -> Callable:
    """An R operator: `op(tensor, other)`; for `value <op> tensor` (R
    dispatched on the right operand) `flipped(tensor, value)`."""
    def f(e1: Any, e2: Any) -> Tensor:
        if isinstance(e1, Tensor):
            return op(e1, _tensor_of(e2))
        return flipped(e2, _tensor_of(e1))
    return f


def _logical(op: Callable) -> Callable:
    def f(e1: Any, e2: Any) -> Tensor:
        return op(_tensor_of(e1) if isinstance(e1, Tensor) else torch_tensor(e1), _tensor_of(e2))
    return f


def _is_t(x: Any) -> bool:
    return isinstance(x, Tensor)


BINARY_OPS: dict[str, Callable] = {
    "+": _binop(_scalar_other(_ops.add), lambda x, o: _ops.add(o, x)),
    "*": _binop(_scalar_other(_ops.mul), lambda x, o: _ops.mul(o, x)),
    "-": _binop(_scalar_other(_ops.sub),
                lambda x, o: _ops.sub(o, x) if _is_t(o) else _ops.rsub(x, o)),
    "/": _binop(_scalar_other(_ops.div), lambda x, o: _ops.div(o, x)),
    "^": _binop(_ops.pow, lambda x, o: _ops.pow(o, x) if _is_t(o) else _ops.rpow(x, o)),
    "%%": _remainder,
    "%/%": _floor_divide,
    "==": _binop(_ops.eq, lambda x, o: _ops.eq(x, o)),
    "!=": _binop(_ops.ne, lambda x, o: _ops.ne(x, o)),
    "<": _binop(_ops.lt, lambda x, o: _ops.gt(x, o)),     # o < x  is  x > o
    ">": _binop(_ops.gt, lambda x, o: _ops.lt(x, o)),
    "<=": _binop(_ops.le, lambda x, o: _ops.ge(x, o)),
    ">=": _binop(_ops.ge, lambda x, o: _ops.le(x, o)),
    "&": _logical(_ops.logical_and),
    "|": _logical(_ops.logical_or),
}

UNARY_OPS: dict[str, Callable] = {
    "-": _ops.neg,
    "+": lambda x: x,
    "!": _ops.logical_not,
}


def _log(x: Tensor, base: Any = None) -> Tensor:
    out = _ops.log(x)
    return out if base is None else _ops.div(out, float(np.log(base)))


MATH: dict[str, Callable] = {
    "abs": _ops.abs, "sign": _ops.sign, "sqrt": _ops.sqrt, "exp": _ops.exp, "log": _log,
    "log2": lambda x: _ops.div(_ops.log(x), float(np.log(2))),
    "log10": lambda x: _ops.div(_ops.log(x), float(np.log(10))),
    "log1p": lambda x: _ops.log(_ops.add(x, 1.0)),
    "expm1": lambda x: _ops.sub(_ops.exp(x), 1.0),
    "sin": _ops.sin, "cos": _ops.cos, "tanh": _ops.tanh,
    "tan": lambda x: _ops.div(_ops.sin(x), _ops.cos(x)),
    "floor": _nondiff(np.floor), "ceiling": _nondiff(np.ceil), "trunc": _nondiff(np.trunc),
    "round": lambda x, digits=0: wrap(np.asarray(np.round(x.data, _int(digits)))),
}

SUMMARY: dict[str, Callable] = {
    "sum": lambda x: _ops.sum(x),
    "prod": lambda x: _ops.prod(x),
    "max": lambda x: _ops.max(x),
    "min": lambda x: _ops.min(x),
    "any": any_,
    "all": all_,
}


# --------------------------------------------------------------------------
# Indexing: R torch's `[` and `[<-`
#
# The R side evaluates each index expression (with `:`, `N`, `newaxis`, `..`
# masked as R torch does) and sends a spec: a list of [kind, value] pairs,
# kind one of "all" (empty), "fill" (`..`), "new" (NULL/newaxis), "slice"
# (c(start, end, step) already 0-based as slc() gives it), "value".


_INT_MAX = 2**31 - 1


def _index_value(v: Any, size: int | None) -> Any:
    """One R index value -> ("int", k) | ("array", ndarray) | ("mask", ndarray)."""
    if isinstance(v, Tensor):
        d = v.data
        if d.dtype.kind == "b":
            return ("mask", d)
        if d.dtype.kind not in "iu":
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                             f"got {v.dtype}")
        if d.ndim == 0:
            return ("int", _scalar_index(int(d)))
        return ("array", _array_index(d))
    if isinstance(v, (bool, np.bool_)):
        return ("mask", np.asarray([bool(v)] * (size if size is not None else 1)))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return ("int", _scalar_index(_int(v, "index")))
    if isinstance(v, np.ndarray):
        if v.dtype == np.bool_:
            return ("mask", v.reshape(-1))
        return ("array", _array_index(v.reshape(-1)))
    raise IndexError(f"can't index a tensor with an object of type {type(v).__name__}")


def _scalar_index(k: int) -> int:
    if k == 0:
        raise IndexError("Indexing starts at 1 but found a 0.")
    return k - 1 if k > 0 else k


def _array_index(a: np.ndarray) -> np.ndarray:
    ai = a.astype(np.int64)
    if ai.size and (ai != a).any():
        raise IndexError("index vectors must hold whole numbers")
    if (ai == 0).any():
        raise IndexError("Indexing starts at 1 but found a 0.")
    return np.where(ai > 0, ai - 1, ai)


def _index_tensor(index: Any) -> Tensor:
    if not isinstance(index, Tensor):
        index = torch_tensor(index)
    return wrap(_array_index(index.data))


def _slice(v: Any) -> slice:
    start, end, step = (np.asarray(v, dtype=np.float64).reshape(-1).tolist() + [1, 1, 1])[:3]
    end = None if end >= _INT_MAX else int(end)
    return slice(int(start), end, int(step))


def _parse_spec(x: Tensor, spec: Any, drop: bool) -> tuple[tuple, list, Any]:
    """Split R indices into a basic key, then orthogonal advanced indices.

    Returns (basic key, [(output axis, int array)], whole-tensor mask or None).
    """
    items = [_list(s) for s in _list(spec)]
    kinds = [it[0] for it in items]
    n_fill = kinds.count("fill")
    if n_fill > 1:
        raise IndexError("only one `..` is allowed in an index")
    consumed = builtins.sum(1 for k in kinds if k not in ("fill", "new"))
    # A multi-dimensional boolean mask consumes as many dims as it has.
    for it in items:
        if it[0] == "value" and isinstance(it[1], Tensor) and it[1].data.dtype == np.bool_:
            consumed += it[1].ndim - 1
    if consumed > x.ndim:
        raise IndexError(f"too many indices for a tensor of dimension {x.ndim} "
                         f"({consumed} given)")
    basic: list = []
    advanced: list = []
    whole_mask = None
    in_dim = 0
    out_axis = 0
    for kind, *rest in items:
        if kind == "fill":
            n = x.ndim - consumed
            basic.extend([slice(None)] * n)
            in_dim += n
            out_axis += n
        elif kind == "new":
            basic.append(None)
            out_axis += 1
        elif kind == "all":
            basic.append(slice(None))
            in_dim += 1
            out_axis += 1
        elif kind == "slice":
            basic.append(_slice(rest[0]))
            in_dim += 1
            out_axis += 1
        else:
            size = x.shape[in_dim] if in_dim < x.ndim else None
            what, val = _index_value(rest[0], size)
            if what == "int":
                if size is not None and not -size <= val < size:
                    raise IndexError(f"index {val + 1 if val >= 0 else val} is out of bounds "
                                     f"for dimension {in_dim + 1} with size {size}")
                if drop:
                    basic.append(val)
                else:
                    basic.append(slice(val, val + 1 if val != -1 else None))
                    out_axis += 1
                in_dim += 1
            elif what == "mask" and val.ndim > 1:
                if len(items) != 1:
                    raise IndexError("a multi-dimensional boolean mask must be the only index")
                whole_mask = val
                in_dim += val.ndim
            else:
                if what == "mask":
                    if size is not None and val.shape[0] != size:
                        raise IndexError(f"The shape of the mask [{val.shape[0]}] at "
                                         f"dimension {in_dim + 1} does not match the size "
                                         f"{size} of the indexed tensor at that dimension")
                    val = np.nonzero(val)[0]
                if size is not None and val.size and (val.max() >= size or val.min() < -size):
                    bad = val[(val >= size) | (val < -size)][0]
                    raise IndexError(f"index {bad + 1 if bad >= 0 else bad} is out of bounds "
                                     f"for dimension {in_dim + 1} with size {size}")
                basic.append(slice(None))
                advanced.append((out_axis, val))
                in_dim += 1
                out_axis += 1
    return tuple(basic), advanced, whole_mask


_ALL = slice(None)


def _simple_key(x: Tensor, spec: list, drop: bool) -> tuple | None:
    """The key for the common `x[i, ]`, `x[, j]`, `x[i, j]` (numbers and
    empties only), or None when the full parser is needed."""
    if not drop or len(spec) > x.ndim:
        return None
    key = []
    for d, item in enumerate(spec):
        kind = item[0]
        if kind == "all":
            key.append(_ALL)
            continue
        if kind != "value":
            return None
        v = item[1]
        if type(v) is float:
            k = int(v)
            if k != v:
                return None
        elif type(v) is int:
            k = v
        else:
            return None
        size = x.shape[d]
        if k == 0 or not -size <= (k - 1 if k > 0 else k) < size:
            return None  # let the full parser report it
        key.append(k - 1 if k > 0 else k)
    return tuple(key)


def index(x: Tensor, spec: Any, drop: bool = True) -> Tensor:
    """x[...] with R torch's semantics; vector indices act per dim (as R's `[`)."""
    if x is UNDEFINED:
        raise RuntimeError("can't index an undefined tensor")
    if type(spec) is list:
        key = _simple_key(x, spec, drop)
        if key is not None:
            return _ops.index(x, key)
    basic, advanced, mask = _parse_spec(x, spec, bool(drop))
    if mask is not None:
        if mask.shape != x.shape[:mask.ndim]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} does not match the "
                             f"shape of the indexed tensor {list(x.shape)}")
        return _ops.index(x, wrap(mask))
    out = x if all(k == slice(None) for k in basic) and len(basic) == x.ndim else \
        _ops.index(x, basic)
    for axis, arr in advanced:
        out = _ops.index(out, (slice(None),) * axis + (wrap(arr),))
    return out


def _fit_value(value: Any, target: tuple) -> Any:
    """Drop a value's extra leading 1-sized dims, as torch does when it copies
    `torch_tensor(0)` (shape [1]) into a single element."""
    if isinstance(value, Tensor) and value.ndim > len(target):
        lead = value.ndim - len(target)
        if all(s == 1 for s in value.shape[:lead]):
            return value.reshape(value.shape[lead:])
    return value


def index_put(x: Tensor, spec: Any, value: Any) -> Tensor:
    """x[...] <- value, in place, recorded for autograd."""
    basic, advanced, mask = _parse_spec(x, spec, True)
    if isinstance(value, np.ndarray):
        value = wrap(value.astype(x.data.dtype))
    elif isinstance(value, Tensor) and value.data.dtype != x.data.dtype:
        value = _ops.to(value, dtype=x.dtype)
    if mask is not None:
        _ops.index_put_(x, wrap(mask), _fit_value(value, (int(mask.sum()),)))
        return x
    if not advanced:
        _ops.index_put_(x, basic, _fit_value(value, np.shape(x.data[basic])))
        return x
    # Orthogonal advanced indices: express them as one NumPy-style key whose
    # arrays broadcast against each other (np.ix_), on the non-dropped dims.
    key = list(basic)
    out_axis = 0
    positions = []
    for i, k in enumerate(key):
        if isinstance(k, (int, np.integer)):
            continue
        positions.append((out_axis, i))
        out_axis += 1
    axis_to_key = dict(positions)
    arrays = [arr for _, arr in advanced]
    grids = np.ix_(*arrays) if len(arrays) > 1 else arrays
    for (axis, _), g in zip(advanced, grids):
        key[axis_to_key[axis]] = wrap(np.asarray(g))
    _ops.index_put_(x, tuple(key), value)
    return x


# --------------------------------------------------------------------------
# Autograd functions


def autograd_backward(tensors: Any, grad_tensors: Any = None, retain_graph: Any = None,
                      create_graph: bool = False, inputs: Any = None) -> None:
    tensors = _list(tensors)
    if grad_tensors is not None:
        grad_tensors = [_undef(g) for g in _list(grad_tensors)]
        if not any(g is not None for g in grad_tensors):
            grad_tensors = None
    _ag.autograd_backward(tensors, grad_tensors, retain_graph, bool(create_graph),
                          None if inputs is None else _list(inputs))


def autograd_grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: Any = None,
                  create_graph: bool = False, allow_unused: bool = False) -> list:
    outputs, inputs = _list(outputs), _list(inputs)
    if grad_outputs is not None:
        grad_outputs = [_undef(g) for g in _list(grad_outputs)]
        if not any(g is not None for g in grad_outputs):
            grad_outputs = None
    got = _ag.autograd_grad(outputs, inputs, grad_outputs, retain_graph, bool(create_graph),
                            bool(allow_unused))
    return [_r_value(g) for g in got]


def set_grad_mode(enabled: Any) -> bool:
    return _eng.set_grad_enabled(bool(enabled))


def is_grad_enabled() -> bool:
    return _eng.is_grad_enabled()


def grad_mode_scope(enabled: Any) -> Scope:
    """Set grad mode now; the returned scope's restore() puts the old one back."""
    prev = _eng.set_grad_enabled(bool(enabled))
    return Scope(lambda: _eng.set_grad_enabled(prev))


def anomaly_scope() -> Scope:
    cm = _eng.detect_anomaly()
    cm.__enter__()
    return Scope(lambda: cm.__exit__(None, None, None))


def scope_exit(scope: Scope) -> None:
    scope.restore()


def autograd_gradcheck(fn: Callable, inputs: Any, eps: float = 1e-6, atol: float = 1e-5,
                       rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    return _gradcheck(_r_callable(fn), _list(inputs), eps=eps, atol=atol, rtol=rtol,
                      raise_exception=bool(raise_exception))


def _r_callable(fn: Callable) -> Callable:
    def call(*args: Any) -> Any:
        out = fn(*args)
        return out.values() if isinstance(out, NamedList) else out
    return call


# --------------------------------------------------------------------------
# Custom functions with R closures


class RAutogradFunction:
    """The Python side of an R `autograd_function()`.

    `forward` and `backward` are the user's R closures (RObjects), called
    directly: forward with ctx and the arguments as the user passed them
    (non-tensors boxed, so they come back unchanged), backward with ctx and
    one gradient per output, or, as R torch does when backward takes fewer
    arguments (`n_backward`), the trailing gradients together as a list.
    """

    def __init__(self, forward: Any, backward: Any, arg_names: Any, n_backward: Any) -> None:
        self.forward = forward
        self.backward = backward
        self.arg_names = [arg_names] if isinstance(arg_names, str) else list(arg_names or [])
        self.n_backward = int(n_backward)

    def _grads_for_backward(self, grads: list) -> list:
        n = self.n_backward
        if len(grads) > n >= 1:
            return grads[:n - 1] + [list(grads[n - 1:])]
        return grads

    def apply(self, args: Any, label: str | None = None) -> Any:
        """Call it: `args` as the R wrapper collected them; `label` is the
        name the R function was called by (for error messages)."""
        values = _list(args)
        names = args.names() if isinstance(args, NamedList) else self.arg_names
        forward, backward_r = self.forward, self.backward
        fwd_names = ["", *names]

        def call(ctx: AutogradContext, fargs: list) -> Any:
            out = forward.call_named(fwd_names, [ctx, *fargs])
            if isinstance(out, NamedList):
                out = out.values()
            return out

        def backward(ctx: AutogradContext, *grads: Any) -> Any:
            gs = self._grads_for_backward(list(grads))
            out = backward_r.call_named([""] * (len(gs) + 1), [ctx, *gs])
            if isinstance(out, NamedList):
                out = NamedList(out.names(), [_undef(v) for v in out.values()])
            elif isinstance(out, list):
                raise TypeError(f"{label or 'autograd_function'}: backward must return a "
                                "named list of gradients keyed by forward's argument names "
                                f"({', '.join(self.arg_names)}), got an unnamed list")
            return _undef(out)

        return _apply(R_NODE_NAME, label or "autograd_function", backward, names, values,
                      call, True)


def make_autograd_function(forward: Any, backward: Any, arg_names: Any,
                           n_backward: Any) -> RAutogradFunction:
    return RAutogradFunction(forward, backward, arg_names, n_backward)


def apply_function(fn: RAutogradFunction, args: Any, label: str | None = None) -> Any:
    return fn.apply(args, label)


def ctx_get(ctx: AutogradContext, name: str) -> Any:
    if name in ("saved_variables", "saved_variable"):
        saved = ctx.saved_variables
        names = saved.names()
        if all(n == "" for n in names):
            return saved.values()
        return saved
    if name == "needs_input_grad":
        return ctx.needs_input_grad
    return None


def ctx_save(ctx: AutogradContext, values: Any) -> None:
    if isinstance(values, NamedList):
        ctx._saved_names, ctx._to_save = values.names(), values.values()
    else:
        ctx._to_save = _list(values)
        ctx._saved_names = [""] * len(ctx._to_save)


def ctx_mark_dirty(ctx: AutogradContext, tensors: Any) -> None:
    ctx.mark_dirty(*_list(tensors))


def ctx_mark_non_differentiable(ctx: AutogradContext, tensors: Any) -> None:
    ctx.mark_non_differentiable(*_list(tensors))


# --------------------------------------------------------------------------
# What R gets

# torch_<name>(self, ...) for every engine op, with R's conventions
_TORCH_FUNCTIONS = [
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "sign", "sin",
    "cos", "tanh", "sigmoid", "relu", "clamp", "square", "maximum", "minimum",
    "gt", "ge", "lt", "le", "eq", "ne", "logical_and", "logical_or", "logical_not", "isnan",
    "equal", "allclose", "mm", "matmul", "dot", "t", "transpose", "permute", "reshape",
    "unsqueeze", "squeeze", "flatten", "narrow", "select", "sum", "mean", "prod", "max",
    "min", "argmax", "argmin", "gather", "softmax", "log_softmax", "chunk", "split",
    "unbind", "masked_fill", "clone", "floor", "ceil", "round", "trunc", "remainder",
    "floor_divide", "any", "all",
]

FUNCTIONS: dict[str, Callable] = {"torch_" + n: METHODS[n] for n in _TORCH_FUNCTIONS}
FUNCTIONS.update({
    "torch_tensor": torch_tensor, "torch_scalar_tensor": torch_scalar_tensor,
    "torch_zeros": _creator(_cr.torch_zeros), "torch_ones": _creator(_cr.torch_ones),
    "torch_empty": _creator(_cr.torch_empty), "torch_randn": _creator(_cr.torch_randn),
    "torch_rand": _creator(_cr.torch_rand), "torch_full": torch_full,
    "torch_zeros_like": _like(_cr.torch_zeros_like), "torch_ones_like": _like(_cr.torch_ones_like),
    "torch_empty_like": _like(_cr.torch_empty_like), "torch_randn_like": _like(_cr.torch_randn_like),
    "torch_rand_like": _like(_cr.torch_rand_like), "torch_full_like": torch_full_like,
    "torch_randint": torch_randint, "torch_arange": torch_arange,
    "torch_linspace": torch_linspace, "torch_eye": torch_eye,
    "torch_manual_seed": torch_manual_seed, "torch_cat": torch_cat, "torch_stack": torch_stack,
    "torch_where": where,
    "torch_float": _cr.torch_float, "torch_float32": _cr.torch_float32,
    "torch_double": _cr.torch_double, "torch_float64": _cr.torch_float64,
    "torch_long": _cr.torch_long, "torch_int64": _cr.torch_int64, "torch_int": _cr.torch_int,
    "torch_int32": _cr.torch_int32, "torch_bool": _cr.torch_bool,
    "as_array": as_array, "is_undefined_tensor": is_undefined_tensor,
    "autograd_backward": autograd_backward, "autograd_grad": autograd_grad,
    "autograd_set_grad_mode": set_grad_mode, "autograd_gradcheck": autograd_gradcheck,
    "torch_get_default_dtype": lambda: _cr.float32,
})

# Functions R returns invisibly.
INVISIBLE_FUNCTIONS = {"torch_manual_seed", "autograd_backward"}


def _pointers(table: str, exclude: str | None = None, only: str | None = None) -> NamedList:
    """A table of this module as (names, callables), for the R side's set-up."""
    tab = globals()[table]
    names = sorted(tab)
    if exclude:
        names = [n for n in names if n not in globals()[exclude]]
    if only:
        names = [n for n in names if n in globals()[only]]
    return NamedList(names, [tab[n] for n in names])


def _names(table: str) -> list:
    return sorted(globals()[table])


def live_objects(type_name: str = "Tensor") -> int:
    """How many Python objects of a type exist: lets tests check that R's
    garbage collector releases what R no longer uses."""
    import gc
    gc.collect()
    return builtins.sum(1 for o in gc.get_objects() if type(o).__name__ == type_name)


FUNCTIONS["rtorch_live_objects"] = live_objects

from .extensions import functions as _extension_functions  # noqa: E402

FUNCTIONS.update(_extension_functions())
