"""What R calls that is not an op: tensor creation with R's conventions, tensor
properties (`x$grad`, `x$shape`), the tensor methods that are not ops
(`x$backward()`, `x$size()`, ...), and autograd's entry points.

Ops (`torch_add`, `x$sum(dim = 1)`, `x * 2`) are not here: their R forms are
generated from the op registry in `tables.py`.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from .. import autograd as _ag
from .. import creation as _cr
from .. import engine as _eng
from ..engine import Node, RemovableHandle
from ..function import NamedList
from ..gradcheck import autograd_gradcheck as _gradcheck
from ..printing import format_grad_fn
from ..tensor import Tensor, as_dtype, dtype, wrap
from .convert import (UNDEFINED, Scope, _check_r_data, _dim, _int, _list, _r_data, _r_value,
                      _sizes, _undef)


# --------------------------------------------------------------------------
# Creation

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
# Tensor methods that are not ops


def size(self: Tensor, dim: Any = None) -> Any:
    if dim is None:
        return np.asarray(self.shape, dtype=np.int32)
    return self.shape[_dim(dim, self.ndim)]


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return self


def item(self: Tensor) -> Any:
    return self.item()


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
# What R gets from here (the ops' tables are generated in tables.py)

METHODS: dict[str, Callable] = {
    "size": size, "cpu": cpu, "item": item, "backward": backward, "retain_grad": retain_grad,
    "register_hook": register_hook, "requires_grad_": requires_grad_, "detach": detach,
    "detach_": detach_, "numel": numel, "dim": dim, "is_floating_point": is_floating_point,
    "is_contiguous": is_contiguous, "element_size": element_size,
}
INVISIBLE_METHODS = {"backward", "retain_grad"}

FUNCTIONS: dict[str, Callable] = {
    "torch_tensor": torch_tensor, "torch_scalar_tensor": torch_scalar_tensor,
    "torch_zeros": _creator(_cr.torch_zeros), "torch_ones": _creator(_cr.torch_ones),
    "torch_empty": _creator(_cr.torch_empty), "torch_randn": _creator(_cr.torch_randn),
    "torch_rand": _creator(_cr.torch_rand), "torch_full": torch_full,
    "torch_zeros_like": _like(_cr.torch_zeros_like), "torch_ones_like": _like(_cr.torch_ones_like),
    "torch_empty_like": _like(_cr.torch_empty_like), "torch_randn_like": _like(_cr.torch_randn_like),
    "torch_rand_like": _like(_cr.torch_rand_like), "torch_full_like": torch_full_like,
    "torch_randint": torch_randint, "torch_arange": torch_arange,
    "torch_linspace": torch_linspace, "torch_eye": torch_eye,
    "torch_manual_seed": torch_manual_seed,
    "torch_float": _cr.torch_float, "torch_float32": _cr.torch_float32,
    "torch_double": _cr.torch_double, "torch_float64": _cr.torch_float64,
    "torch_long": _cr.torch_long, "torch_int64": _cr.torch_int64, "torch_int": _cr.torch_int,
    "torch_int32": _cr.torch_int32, "torch_bool": _cr.torch_bool,
    "as_array": as_array, "is_undefined_tensor": is_undefined_tensor,
    "autograd_backward": autograd_backward, "autograd_grad": autograd_grad,
    "autograd_set_grad_mode": set_grad_mode, "autograd_gradcheck": autograd_gradcheck,
    "torch_get_default_dtype": lambda: _cr.float32,
}
INVISIBLE_FUNCTIONS = {"torch_manual_seed", "autograd_backward"}
