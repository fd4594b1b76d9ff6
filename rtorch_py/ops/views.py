"""Views and in-place changes: the machinery behind them.

A view shares its base's array and version counter. An in-place op on a
tensor (or on a view of it) gives it a new history: on a view, the op is
recorded on the base as a CopySlices node and every live view reads its
gradient out of the base's, as in PyTorch. Gradients of indexing scatter
into zeros of the input's shape (`index_backward`).
"""
from __future__ import annotations

import builtins
import weakref
from typing import Any, Callable

import numpy as np

from .. import engine
from ..engine import Node, bump_version, version_box
from ..meta import MetaArray
from ..tensor import Tensor, wrap
from .recording import edges_of, formula, needs_grad, record

_state = engine.thread_state()

def is_basic_key(key: tuple) -> builtins.bool:
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               and not isinstance(k, (bool, np.bool_)) for k in key)


def view_of(x: Tensor, arr: np.ndarray) -> Tensor:
    out = wrap(arr)
    out._version = version_box(x)
    base = out._base = x if x._base is None else x._base
    if x._rg and base.grad_fn is not None:
        # its history must follow later in-place changes of the base (a leaf that
        # requires grad can't be changed in place with grad on: nothing to follow)
        _register_view(base, out)
    return out


@formula(arrays=True)
def AliasBackward0(n, g):
    return (g,)


def alias(x: Tensor) -> Tensor:
    """A view of all of x, the gradient passed through (what rename() gives)."""
    return record(view_of(x, x.data), AliasBackward0, (x,))


# Views of tensors that require grad, by id of their base, so that an in-place op
# that gives the base a new history can point every live view at it (PyTorch
# regenerates a view's grad_fn the same way).
_VIEWS: dict = {}


def _register_view(base: Tensor, view: Tensor) -> None:
    entry = _VIEWS.get(id(base))
    if entry is None or entry[0]() is not base:
        key = id(base)
        entry = _VIEWS[key] = [weakref.ref(base, lambda _, k=key: _VIEWS.pop(k, None)), [], 32]
    views = entry[1]
    if len(views) > entry[2]:  # drop the dead ones (amortised: the limit doubles)
        views[:] = [r for r in views if r() is not None]
        entry[2] = builtins.max(32, 2 * len(views))
    views.append(weakref.ref(view))


@formula
def IndexGradBackward(n, g, key):
    return (g[key] if len(key) != 1 else g[key[0]],)


def index_backward(g: Tensor, key: tuple, shape: tuple, accumulate: builtins.bool) -> Tensor:
    """Zeros of `shape` with g scattered (added, for repeated indices) at `key`."""
    z = np.zeros(shape, dtype=g.data.dtype)
    if accumulate and not is_basic_key(key):
        np.add.at(z, key, g.data)
    else:
        z[key] = g.data
    return record(z, IndexGradBackward, (g,), (wrap_key(key),))


@formula
def SliceBackward0(n, g, shape, key):
    # the node of a view by basic indexing: `x[1:3]`, narrow()
    return (index_backward(g, key, shape, False),)


@formula
def ZeroAtBackward(n, g, key):
    return (zero_at(g, key),)


def zero_at(g: Tensor, key: tuple) -> Tensor:
    """g with zeros at `key` (differentiably): the gradient of what an index
    write replaced."""
    d = g.data.copy()
    d[key] = 0
    return record(d, ZeroAtBackward, (g,), (key,))


def wrap_key(key: tuple) -> tuple:
    return tuple(wrap(k) if isinstance(k, np.ndarray) else k for k in key)


def check_inplace(x: Tensor, *others: Any) -> None:
    if x._rg and _state.grad:
        if x.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation. Do it under with_no_grad(), or clone() the tensor "
                               "first.")
        b = x._base
        if b is not None and b.grad_fn is None and b._rg:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation. Do it under with_no_grad(), or clone() "
                               "the tensor first.")
    if not x.data.flags.writeable and type(x.data) is not MetaArray:  # (meta: no data to write)
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location (an expand()ed tensor?). "
                           "Please clone() the tensor before performing the operation.")


def record_inplace(x: Tensor, fn: Callable, inputs: tuple, saved: tuple,
                   name: str | None = None) -> Tensor:
    if needs_grad(*inputs):
        old, old_nr = x.grad_fn, x._output_nr
        if x._base is not None:
            _record_on_base(x, fn, inputs, saved, name)
        else:
            record(x, fn, inputs, saved, name=name)
            x._output_nr = 0
            if id(x) in _VIEWS:
                _refresh_views(x, None)
        if old is not None and old.retain_refs:
            _carry_retain_grad(x, old, old_nr)
    return x


def _carry_retain_grad(x: Tensor, old: Node, old_nr: int) -> None:
    """retain_grad() follows the tensor to its new history, as in PyTorch."""
    ref = old.retain_refs.get(old_nr)
    if ref is not None and ref() is x:
        del old.retain_refs[old_nr]
        x.grad_fn.retain(x._output_nr, ref)


# In-place on a view: the op is recorded on the base as a CopySlices node (the
# base's new history), and the view reads its gradient out of the base's, as in
# PyTorch. A view's elements are located in its base by their memory addresses,
# so any view (slices, select, transpose, permute, view...) works the same way.

def view_key(arr: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The flat (C-order) position in `base` of each element of its view `arr`."""
    addr = np.asarray(arr.__array_interface__["data"][0] - base.__array_interface__["data"][0],
                      dtype=np.int64)
    for k, (n, st) in enumerate(zip(arr.shape, arr.strides)):
        addr = addr + (np.arange(n, dtype=np.int64) * st).reshape(
            (n,) + (1,) * (arr.ndim - k - 1))
    if base.flags.c_contiguous:
        return addr // base.itemsize
    baddr = np.zeros((), dtype=np.int64)
    for k, (n, st) in enumerate(zip(base.shape, base.strides)):
        baddr = baddr + (np.arange(n, dtype=np.int64) * st).reshape(
            (n,) + (1,) * (base.ndim - k - 1))
    order = np.argsort(baddr, axis=None)
    return order[np.searchsorted(baddr.reshape(-1)[order], addr)]


@engine.backward_function
def CopySlices(node: Node, grads: list) -> tuple:
    # saved: (the op's node, key, *the op's saved tensors) - the latter listed here
    # so that releasing this node frees them too
    op, key = node.saved[0], node.saved[1]
    g = grads[0]
    tensors = _state.grad  # tensors under create_graph, else arrays
    k = wrap(key) if tensors else key
    region = g.reshape(-1)[k]
    outs = op.backward_fn(op, [region])
    flat = g.reshape(-1).clone() if tensors else g.reshape(-1).copy()
    flat[k] = outs[0] if outs[0] is not None else 0.0
    return (flat.reshape(g.shape),) + tuple(outs[1:])


@formula
def AsStridedBackward0(n, g, key, base_shape):
    size = int(np.prod(base_shape))
    return (index_backward(g, (key,), (size,), False).reshape(base_shape),)


def _record_on_base(v: Tensor, fn: Callable, inputs: tuple, saved: tuple,
                    name: str | None) -> Tensor:
    base = v._base
    key = view_key(v.data, base.data)
    tmp = wrap(v.data)
    record(tmp, fn, inputs, saved, name=name)  # the op's own node, run by CopySlices
    op = tmp.grad_fn
    # the op's edges, its input's (the view) replaced by the base's; the op's saved
    # tensors listed too, so that releasing this node frees them
    edges, meta = edges_of((base,) + tuple(inputs[1:]))
    node = Node("CopySlices", CopySlices, edges, meta, [op, key, *op.saved])
    old, old_nr = base.grad_fn, base._output_nr
    base.grad_fn, base._rg, base._output_nr = node, True, 0
    if old is not None and old.retain_refs:
        _carry_retain_grad(base, old, old_nr)
    _as_view_of(v, base, key)
    _refresh_views(base, v)
    return v


def _as_view_of(v: Tensor, base: Tensor, key: np.ndarray | None = None) -> None:
    """Give view `v` a fresh history: its elements, read out of `base`'s gradient."""
    if key is None:
        key = view_key(v.data, base.data)
    record(v, AsStridedBackward0, (base,), (key, base.data.shape))
    v._output_nr = 0


def _refresh_views(base: Tensor, skip: Tensor | None) -> None:
    """After `base` got a new history in place, its live views follow it."""
    entry = _VIEWS.get(id(base))
    if entry is None or entry[0]() is not base:
        return
    for r in entry[1]:
        w = r()
        if w is not None and w is not skip and w._base is base:
            _as_view_of(w, base)




def write_inplace(self: Tensor, out: np.ndarray, fn: Callable, inputs: tuple, saved: tuple,
                  name: str | None = None) -> Tensor:
    """An in-place op: its out-of-place result written into self, recorded."""
    check_inplace(self, *inputs[1:])
    self.data[...] = out
    bump_version(self)
    return record_inplace(self, fn, inputs, saved, name)


def restride_inplace(self: Tensor, result: Tensor) -> Tensor:
    """An in-place view op (t_, transpose_, squeeze_, unsqueeze_): self takes the
    out-of-place op's result (a view of its own data) and its node."""
    check_inplace(self)
    if self._base is not None and needs_grad(self):
        raise RuntimeError("in-place shape changes (t_, transpose_, squeeze_, unsqueeze_) of a "
                           "view that requires grad are not supported; use the out-of-place "
                           "form (e.g. y <- x$t())")
    self.data = result.data
    if result.grad_fn is not None:
        self.grad_fn, self._rg, self._output_nr = result.grad_fn, True, 0
    bump_version(self)
    return self
