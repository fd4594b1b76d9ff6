"""How an op records itself: the derivative adapter (`formula`) and the one
recorder (`record`) that makes the result tensor and, when grad mode is on and
an input requires grad, its graph node.

The fast paths of the per-op hot path live here, labelled, and nowhere else:
one or two inputs take no loop, plain saved values are kept as given.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import engine
from ..engine import NEW_VERSION, Node, SavedTensor, edge, next_seq
from ..meta import WATCH, MetaArray, meta_array
from ..tensor import BF16, Tensor, wrap

_new = object.__new__
ndarray = np.ndarray
grad_state = engine.thread_state()  # grad mode, read on every op
_fast_walk = engine.FAST_WALK    # off inside engine.plain_walk()
_NO_EDGE = (None, 0)


class _Output:
    """Marker in `saved`: the op's own result (kept without a reference cycle)."""

    def __repr__(self) -> str:
        return "OUTPUT"


OUTPUT = _Output()


def formula(fn: Callable | None = None, *, arrays: bool = False) -> Callable:
    """`@formula` on `def NameBackwardN(node, grad, *saved)`: an op's derivative,
    one gradient per input, made the backward of the nodes it records.

    This is the one form a derivative takes (a node with several outputs takes
    `multi_formula`). The node is named after the function, PyTorch's name
    (`MulBackward0`); an op whose node shares another's derivative records it
    under its own name (`record(..., name="TopkBackward0")`). Derivatives are
    written with tensor ops, so they are themselves differentiable
    (create_graph gives any order). `arrays=True` marks a formula written only
    with what NumPy arrays and tensors share (+ - * / ** @, comparisons, `.T`,
    `.reshape`, `expand_to`): with create_graph off the walk runs it straight
    on the arrays it carries (the backward fast path).
    """
    if fn is None:
        return lambda f: formula(f, arrays=arrays)
    # In backward, grad mode is on exactly when gradients are tensors (create_graph).
    if arrays:
        def backward_fn(node: Node, grads: list) -> Sequence:
            if grad_state.grad:
                return fn(node, grads[0], *node.unpack_saved())
            if _fast_walk[0]:
                return fn(node, grads[0], *node.unpack_saved_data())
            # engine.plain_walk(): on tensors, as the walk without fast paths runs it
            outs = fn(node, wrap(grads[0]), *node.unpack_saved())
            return [None if o is None else o.data for o in outs]
    else:
        def backward_fn(node: Node, grads: list) -> Sequence:
            if grad_state.grad:
                return fn(node, grads[0], *node.unpack_saved())
            outs = fn(node, wrap(grads[0]), *node.unpack_saved())
            return [None if o is None else o.data for o in outs]
    backward_fn.__name__ = fn.__name__
    backward_fn.__qualname__ = fn.__qualname__
    backward_fn.array_formula = fn if arrays else None  # read by the walk
    backward_fn.formula = fn
    return backward_fn


def record(result: Any, backward_fn: Callable, inputs: Sequence, saved: tuple = (),
           name: str | None = None) -> Tensor:
    """The op's result tensor, with a node when grad mode is on and an input
    requires grad.

    `result` is an array (wrapped without a copy) or a tensor already made (a
    view, a sparse tensor). `inputs` are the differentiable operands, None for
    the others (numbers, indices); `saved` holds what the derivative needs:
    tensors (version-checked when used), `OUTPUT` for the result, or plain
    values. `name` names the node when it is not the derivative's own name.
    """
    if type(result) is ndarray:
        out = _new(Tensor)
        out.data = result if not WATCH[0] else _watched(result, inputs)
        out._version = NEW_VERSION
    elif isinstance(result, Tensor):
        out = result
    else:  # NumPy gives 0-d results as scalars
        out = _new(Tensor)
        out.data = np.asanyarray(result)  # (a meta array stays one)
        if WATCH[0]:
            out.data = _watched(out.data, inputs)
        out._version = NEW_VERSION
    if grad_state.grad:
        try:
            # Fast paths, no loop: a tensor with a number (`x * 2`, the commonest op
            # of all: the number is None), one input, two.
            n = len(inputs)
            if n == 2:
                a, b = inputs
                if b is None and a is not None:
                    if not a._rg:
                        out.grad_fn = None
                        out._rg = False
                        return out
                    d = a.data
                    edges = ((a.grad_fn, a._output_nr) if a.grad_fn is not None else
                             edge(a), _NO_EDGE)
                    meta = ((d.shape, d.dtype), None)
                else:
                    edges, meta = _two_edges(a, b)
            elif n == 1:
                x = inputs[0]
                if x is not None and x._rg:
                    d = x.data
                    edges = ((x.grad_fn, x._output_nr) if x.grad_fn is not None else
                             edge(x),)
                    meta = ((d.shape, d.dtype),)
                else:
                    edges = None
            else:
                edges, meta = edges_of(inputs)
        except NotImplementedError:  # an operand of another layout (sparse): no array
            edges, meta = edges_of(inputs)
        if edges is not None:
            if saved:  # (the one-value case inline: `_pack` is a call)
                if len(saved) == 1:
                    s = saved[0]
                    if s is OUTPUT:
                        saved = [SavedTensor(out, True)]
                    elif type(s) is Tensor:
                        saved = [SavedTensor(s)]
                else:
                    saved = _pack(saved, out)
            if engine.anomaly_blocks:
                out.grad_fn = Node(name, backward_fn, edges, meta, saved)
            else:  # FAST PATH: Node.__init__ inline (a call less; anomaly mode takes the call)
                node = out.grad_fn = _new(Node)
                node._name, node.backward_fn, node.next_functions, node.input_meta, \
                    node.saved, node.seq = name, backward_fn, edges, meta, saved, next_seq()
            out._rg = True
            return out
    out.grad_fn = None
    out._rg = False
    return out


def record_one(result: ndarray, backward_fn: Callable, x: Tensor, saved: Any = (),
               name: str | None = None) -> Tensor:
    """`record(result, backward_fn, (x,), saved, name)` for the result of one
    dense tensor input (a unary math op, a tensor with a number), where `saved`
    holds plain values only (no tensors), or is `OUTPUT` alone: the result.

    FAST PATH: an array result in grad mode, with x requiring grad, no meta or
    bfloat16 tensor about and no anomaly mode, takes none of record()'s
    branches on its arguments: the same tensor and node (tested against it)."""
    if type(result) is not ndarray or WATCH[0] or engine.anomaly_blocks or not x._rg or \
            not grad_state.grad:  # (NumPy gives 0-d results as scalars)
        return record(result, backward_fn, (x,), (OUTPUT,) if saved is OUTPUT else saved, name)
    out = _new(Tensor)
    out.data = result
    out._version = NEW_VERSION
    if saved is OUTPUT:
        saved = [SavedTensor(out, True)]
    d = x.data
    node = out.grad_fn = _new(Node)  # (Node.__init__ inline, as in record)
    node._name, node.backward_fn, node.next_functions, node.input_meta, node.saved, \
        node.seq = name, backward_fn, ((x.grad_fn, x._output_nr) if x.grad_fn is not None
                                       else edge(x),), ((d.shape, d.dtype),), saved, next_seq()
    out._rg = True
    return out


def _watched(result: ndarray, inputs: Sequence) -> ndarray:
    """The result of an op with meta or bfloat16 operands (once either exists).

    A meta operand makes the result meta (the op may have left the meta array
    through np.asarray). libtorch computes bfloat16 ops in float32 and rounds
    the result: a float result of bfloat16 operands (and no wider float one)
    becomes bfloat16."""
    meta = bf16 = False
    wider = result.dtype.kind != "f"
    for t in inputs:
        if type(t) is Tensor:  # (not None, not another layout)
            d = t.data
            meta = meta or type(d) is MetaArray
            if d.dtype == BF16:
                bf16 = True
            elif d.dtype.kind in "fc":
                wider = True
    if bf16 and not wider:
        result = result.astype(BF16)
    if meta and type(result) is not MetaArray:
        result = meta_array(result.shape, result.dtype)
    return result


def _two_edges(a: Tensor | None, b: Tensor | None) -> tuple:
    ra = a is not None and a._rg
    rb = b is not None and b._rg
    if not (ra or rb):
        return None, None
    if ra:
        d = a.data
        ea, ma = (a.grad_fn, a._output_nr) if a.grad_fn is not None else edge(a), \
            (d.shape, d.dtype)
    else:
        ea, ma = _NO_EDGE, None
    if rb:
        d = b.data
        eb, mb = (b.grad_fn, b._output_nr) if b.grad_fn is not None else edge(b), \
            (d.shape, d.dtype)
    else:
        eb, mb = _NO_EDGE, None
    return (ea, eb), (ma, mb)


def edges_of(inputs: Sequence) -> tuple:
    """The edges a node of these inputs (None for an operand that isn't one)
    points along, and each input's shape and dtype; (None, None) when no input
    requires grad. Every node is made with them (custom functions' too)."""
    e, m, any_rg = [], [], False
    for t in inputs:
        if t is not None and t._rg:
            e.append((t.grad_fn, t._output_nr) if t.grad_fn is not None else edge(t))
            if type(t) is Tensor:
                d = t.data
                m.append((d.shape, d.dtype))
            else:  # another layout (sparse): its size, its values' dtype
                m.append((tuple(t.shape), t.dtype.np))
            any_rg = True
        else:
            e.append(_NO_EDGE)
            m.append(None)
    return (tuple(e), tuple(m)) if any_rg else (None, None)


class Output:
    """Marker in `record_many`'s saved values: the op's output i."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def multi_formula(fn: Callable) -> Callable:
    """`formula` for a node with several outputs (qr, svd, std_mean, ...), the
    one other form a derivative takes: `@multi_formula` on
    `def NameBackwardN(node, grads, *saved)`, which gets one gradient per output
    (None for an output that got none) and returns one per input. Its nodes
    are recorded by `record_many`."""
    def backward_fn(node: Node, grads: list) -> Sequence:
        if grad_state.grad:
            return fn(node, grads, *node.unpack_saved())
        outs = fn(node, [None if g is None else wrap(np.asarray(g)) for g in grads],
                  *node.unpack_saved())
        return [None if o is None else o.data for o in outs]
    backward_fn.__name__ = fn.__name__
    backward_fn.__qualname__ = fn.__qualname__
    backward_fn.array_formula = None
    backward_fn.formula = fn
    return backward_fn


def record_many(outs: Sequence, backward_fn: Callable, inputs: Sequence, saved: tuple = (),
                differentiable: Sequence[bool] | None = None, name: str | None = None) -> tuple:
    """`record` for an op whose outputs share one node (its backward made by
    `multi_formula`). In `saved`, `Output(i)` stands for output i;
    `differentiable` says which outputs belong to the node (all by default);
    `name` as for `record`."""
    tensors = [wrap(np.asanyarray(o) if not WATCH[0] else _watched(np.asanyarray(o), inputs))
               for o in outs]
    if not needs_grad(*inputs):
        return tuple(tensors)
    edges, meta = edges_of(inputs)
    node = Node(name, backward_fn, edges, meta)
    node.num_outputs = len(tensors)
    for i, t in enumerate(tensors):
        if differentiable is None or differentiable[i]:
            t.grad_fn, t._rg = node, True
            if i:
                t._output_nr = i
    node.saved = [SavedTensor(tensors[s.i], True, s.i) if type(s) is Output else
                  SavedTensor(s) if type(s) is Tensor else s for s in saved]
    return tuple(tensors)


def _pack(saved: tuple, out: Tensor) -> tuple | list:
    """Saved values as the node keeps them: tensors version-checked, OUTPUT as
    the result (then a list; plain values stay the tuple given)."""
    for s in saved:
        if type(s) is Tensor or s is OUTPUT:
            break
    else:
        return saved
    packed = []
    for v in saved:
        packed.append(SavedTensor(v) if type(v) is Tensor else
                      SavedTensor(out, True) if v is OUTPUT else v)
    return packed


def needs_grad(*tensors: Any) -> bool:
    """Whether an op on these would record a node."""
    if not grad_state.grad:
        return False
    for t in tensors:
        if t is not None and t._rg:
            return True
    return False


def expand_to(g: Any, shape: tuple) -> Any:
    """Broadcast g to shape: for arrays a read-only view, for tensors an op."""
    return g.expand(shape) if type(g) is Tensor else np.broadcast_to(g, shape)


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum a broadcast gradient back down to `shape` (differentiably)."""
    if g.shape == shape:
        return g
    axes = engine.broadcast_axes(g.shape, shape)
    out = g.sum(dim=axes, keepdim=True) if axes else g
    return out.reshape(shape) if out.shape != shape else out
