"""The autograd engine: graph nodes, grad mode, and the backward walk.

It knows nothing of individual ops, of tensors beyond a few attributes
(`data`, `grad`, `requires_grad`, `grad_fn`, `_version`), or of R.
"""
from __future__ import annotations

import heapq
import threading
import traceback
import weakref
from contextlib import contextmanager
from itertools import count
from typing import Any, Callable, Iterator, Sequence

import numpy as np

# --------------------------------------------------------------------------
# Grad mode and anomaly mode (thread-local, like PyTorch's).

class _ThreadState(threading.local):
    # Class-level defaults make every new thread start with grad mode on,
    # and keep the lookup a plain attribute read (it is on every op's path).
    grad = True
    anomaly = False
    check_nan = True


_local = _ThreadState()


def is_grad_enabled() -> bool:
    return _local.grad


def set_grad_enabled(mode: bool) -> bool:
    """Set grad mode for this thread; returns the previous mode."""
    prev = _local.grad
    _local.grad = bool(mode)
    return prev


def is_anomaly_enabled() -> bool:
    return _local.anomaly


class _GradMode:
    """Context manager and decorator that sets grad mode for a block."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(set_grad_enabled(self.mode))

    def __exit__(self, *exc: Any) -> None:
        set_grad_enabled(self._prev.pop())

    def __call__(self, fn: Callable) -> Callable:
        mode = self.mode

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with _GradMode(mode):
                return fn(*args, **kwargs)

        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        return wrapped


def no_grad() -> _GradMode:
    return _GradMode(False)


def enable_grad() -> _GradMode:
    return _GradMode(True)


@contextmanager
def detect_anomaly(check_nan: bool = True) -> Iterator[None]:
    prev = _local.anomaly, _local.check_nan
    _local.anomaly, _local.check_nan = True, check_nan
    try:
        yield
    finally:
        _local.anomaly, _local.check_nan = prev


# --------------------------------------------------------------------------
# Graph nodes.

_sequence = count()


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    An op's own output is saved without its grad_fn (that would be a cycle);
    unpacking gives it back its node, so higher-order gradients flow.
    """

    __slots__ = ("tensor", "version", "is_output", "output_nr")

    def __init__(self, tensor: Any, is_output: bool = False, output_nr: int = 0) -> None:
        self.tensor = tensor._alias() if is_output else tensor
        self.version = tensor._version[0]
        self.is_output = is_output
        self.output_nr = output_nr

    def unpack(self, node: "Node") -> Any:
        t = self.tensor
        if t is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access "
                "saved tensors after they have already been freed). Saved intermediate values "
                "of the graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        if t._version[0] != self.version:
            raise RuntimeError(self._modified_message(t, node))
        if self.is_output:
            out = t._alias()
            out.grad_fn, out._rg, out._output_nr = node, True, self.output_nr
            return out
        return t


    def unpack_data(self, node: "Node") -> Any:
        """The saved array itself (same checks), for formulas run on arrays."""
        t = self.tensor
        if t is None or t._version[0] != self.version:
            self.unpack(node)  # raises the right error
        return t.data

    def _modified_message(self, t: Any, node: "Node") -> str:
        # Name the op that produced the tensor's current value, as PyTorch does.
        producer = node if self.is_output else t.grad_fn
        where = (f", which is output {t._output_nr if not self.is_output else self.output_nr} "
                 f"of {producer.name}," if producer is not None else "")
        return ("one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t._type_string()} [{', '.join(map(str, t.shape))}]]"
                f"{where} is at version {t._version[0]}; expected version {self.version} "
                "instead. Hint: use with_detect_anomaly() to find the forward op that failed "
                "to compute its gradient.")


class Node:
    """One recorded operation: how to map output grads to input grads.

    `backward_fn(node, grads)` receives the gradient for each output (a list)
    and returns one gradient (or None) per edge in `next_functions`.
    """

    # Hot fields are slots; rare ones (hooks, anomaly trace, a custom
    # function's ctx) default at class level and land in __dict__ when set,
    # so creating a node costs six assignments.
    __slots__ = ("name", "backward_fn", "next_functions", "input_meta", "saved", "seq",
                 "__dict__", "__weakref__")
    ctx: Any = None
    num_outputs = 1
    pre_hooks: dict | None = None    # output_nr -> [hook(grad)]
    post_hooks: list | None = None   # [hook(grad_inputs, grad_outputs)]
    retain_refs: dict | None = None  # output_nr -> weakref of a retain_grad() tensor
    trace: list | None = None        # forward stack, under with_detect_anomaly()

    def __init__(self, name: str, backward_fn: Callable, edges: tuple, input_meta: tuple,
                 saved: tuple = (), ctx: Any = None, num_outputs: int = 1) -> None:
        self.name = name
        self.backward_fn = backward_fn
        self.next_functions = edges
        self.input_meta = input_meta
        self.saved = saved
        self.seq = next(_sequence)
        if ctx is not None:
            self.ctx = ctx
        if num_outputs != 1:
            self.num_outputs = num_outputs
        if _local.anomaly:
            self.trace = traceback.format_stack()[:-3]

    def needs(self, i: int) -> bool:
        """Whether input i wants a gradient (lets a formula skip dead work)."""
        return self.next_functions[i][0] is not None

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def unpack_saved(self) -> list:
        return [s.unpack(self) if type(s) is SavedTensor else s for s in self.saved]

    def unpack_saved_data(self) -> list:
        out = []
        for s in self.saved:
            out.append(s.unpack_data(self) if type(s) is SavedTensor else s)
        return out

    def release(self) -> None:
        """Free saved tensors (plain values such as shapes cost nothing to keep)."""
        for s in self.saved:
            if type(s) is SavedTensor:
                s.tensor = None

    def register_hook(self, fn: Callable) -> "RemovableHandle":
        """Post-hook: fn(grad_inputs, grad_outputs) after this node runs."""
        if self.post_hooks is None:
            self.post_hooks = []
        return RemovableHandle(self.post_hooks, fn)

    def register_prehook(self, fn: Callable, output_nr: int = 0) -> "RemovableHandle":
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return RemovableHandle(self.pre_hooks.setdefault(output_nr, []), fn)


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds incoming gradients into `.grad`.

    The leaf owns its accumulator and the accumulator refers back weakly, so
    there is no reference cycle and one accumulator serves every graph.
    """

    __slots__ = ("_variable",)

    def __init__(self, variable: Any) -> None:
        Node.__init__(self, "AccumulateGrad", _accumulate, (), ())
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Any:
        return self._variable()


_accumulate_lock = threading.Lock()  # two threads' backward may share a leaf


def _accumulate(node: AccumulateGrad, grads: list) -> tuple:
    leaf, g = node._variable(), grads[0]
    if g is not None and leaf is not None:
        accumulate_grad(leaf, g)
    return ()


def accumulate_grad(leaf: Any, g: Any) -> None:
    """Add g into leaf.grad (differentiably when grad mode is on: create_graph)."""
    with _accumulate_lock:
        _add_to_grad(leaf, g)


def _add_to_grad(leaf: Any, g: Any) -> None:
    if is_grad_enabled():  # create_graph: the stored grad stays differentiable
        leaf.grad = g if leaf.grad is None else leaf.grad + g
    elif leaf.grad is None:
        leaf.grad = g._owned_copy()
    elif leaf.grad.grad_fn is None:
        leaf.grad._accumulate_(g)  # in place, so references to .grad see the sum
    else:
        leaf.grad = (leaf.grad + g).detach()


class RemovableHandle:
    """Returned by register_hook; `remove()` takes the hook away again."""

    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks: list, fn: Callable) -> None:
        self._hooks, self._fn = hooks, fn
        hooks.append(fn)

    def remove(self) -> None:
        try:
            self._hooks.remove(self._fn)
        except ValueError:
            pass


def grad_accumulator(tensor: Any) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made once and kept by the leaf."""
    node = tensor._accum
    if node is None:
        node = tensor._accum = AccumulateGrad(tensor)
    return node


def edge(t: Any) -> tuple:
    """The graph edge a gradient for tensor `t` should flow along."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._rg:
        node = t._accum
        return (node if node is not None else grad_accumulator(t), 0)
    return (None, 0)


# --------------------------------------------------------------------------
# The backward walk.

def run_backward(roots: Sequence[tuple], retain_graph: bool, create_graph: bool,
                 capture: Sequence[tuple] | None = None, accumulate: bool = True,
                 sum_to: Callable | None = None) -> list | None:
    """Propagate gradients from `roots` [(edge, grad), ...] through the graph.

    `capture` is a list of edges whose incoming gradient should be returned
    (autograd_grad, or backward(inputs=)); with `accumulate` False leaves are
    not touched. Nodes run in dependency order, latest-created first among
    the ready ones (PyTorch's order), and each is freed after it runs unless
    `retain_graph`.
    """
    # Dependencies: how many edges point at each node from the reachable graph.
    deps: dict[Node, int] = {}
    stack = [e[0] for e, _ in roots if e[0] is not None]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)

    captured: dict[int, Any] = {}
    capture_keys = None
    needed = None
    if capture:
        capture_keys = {(id(n), nr): i for i, (n, nr) in enumerate(capture) if n is not None}
        if not accumulate:
            needed = _needed_nodes(seen, capture)

    # Gradient buffers, one list per node (one slot per output).
    buffers: dict[Node, list] = {}
    ready: list = []
    for (node, nr), g in roots:
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    for node in buffers:
        if node not in deps:
            heapq.heappush(ready, (-node.seq, id(node), node))

    push, pop = heapq.heappush, heapq.heappop
    skip_leaves = not accumulate
    pending: list = []
    prev_mode = _local.grad
    _local.grad = create_graph
    try:
        node = pop(ready)[2] if ready else None
        while node is not None:
            grads = buffers.pop(node, None) or [None] * node.num_outputs
            leaf = type(node) is AccumulateGrad
            if leaf or node.pre_hooks or node.retain_refs:
                grads = _call_pre_hooks(node, grads)
            if capture_keys:
                for nr, g in enumerate(grads):
                    i = capture_keys.get((id(node), nr))
                    if i is not None:
                        captured[i] = g
            if leaf:
                if not skip_leaves and grads[0] is not None:
                    pending.append((node, grads))  # committed once the whole walk succeeds
                node = pop(ready)[2] if ready else None
                continue
            if (needed is not None and node not in needed) or not _any_grad(grads):
                outs = ()
            else:
                outs = _run_node(node, grads, sum_to)
                if not retain_graph and node.saved:
                    node.release()
            # Hand each input gradient to the node it came from; a node becomes
            # ready once every edge into it has been walked. When it is the only
            # ready node (a chain), run it next without going through the heap.
            i = 0
            direct = None
            for nxt, nr in node.next_functions:
                if nxt is not None:
                    g = outs[i] if outs else None
                    if g is not None:
                        buf = buffers.get(nxt)
                        if buf is None:
                            buf = buffers[nxt] = [None] * nxt.num_outputs
                        buf[nr] = g if buf[nr] is None else buf[nr] + g
                    left = deps[nxt] - 1
                    deps[nxt] = left
                    if left == 0:
                        if direct is None and not ready:
                            direct = nxt
                        else:
                            if direct is not None:
                                push(ready, (-direct.seq, id(direct), direct))
                                direct = None
                            push(ready, (-nxt.seq, id(nxt), nxt))
                i += 1
            node = direct if direct is not None else pop(ready)[2] if ready else None
        # Leaves get their gradients only now, so a failing backward leaves
        # every .grad as it was.
        for node, grads in pending:
            _run_node(node, grads, sum_to)
    finally:
        _local.grad = prev_mode

    if capture is None:
        return None
    return [captured.get(i) for i in range(len(capture))]


def _any_grad(grads: list) -> bool:
    if len(grads) == 1:
        return grads[0] is not None
    for g in grads:  # (no `in`/`count`: those would compare tensors elementwise)
        if g is not None:
            return True
    return False


def _needed_nodes(reachable: set, capture: Sequence[tuple]) -> set:
    """Nodes that lie on a path to a captured edge (only those need to run)."""
    targets = {n for n, _ in capture if n is not None}
    memo: dict[Node, bool] = {}
    for start in reachable:
        if start in memo:
            continue
        # Iterative post-order DFS.
        stack = [(start, iter(start.next_functions))]
        onpath = {start}
        while stack:
            node, it = stack[-1]
            advanced = False
            for nxt, _ in it:
                if nxt is None or nxt in onpath:
                    continue
                if nxt not in memo:
                    onpath.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    advanced = True
                    break
            if not advanced:
                stack.pop()
                onpath.discard(node)
                memo[node] = node in targets or any(
                    memo.get(n, False) for n, _ in node.next_functions if n is not None)
    return {n for n, ok in memo.items() if ok}


def _call_pre_hooks(node: Node, grads: list) -> list:
    if node.pre_hooks:
        for nr, hooks in node.pre_hooks.items():
            for hook in list(hooks):
                if grads[nr] is None:
                    continue
                new = hook(grads[nr])
                if new is not None:
                    _check_hook_result(node, new, grads[nr])
                    grads[nr] = new
    if type(node) is AccumulateGrad:
        leaf = node._variable()
        if leaf is not None and leaf._hooks and grads[0] is not None:
            for hook in list(leaf._hooks):
                new = hook(grads[0])
                if new is not None:
                    _check_hook_result(node, new, grads[0])
                    grads[0] = new
    if node.retain_refs:
        # retain_grad() hooks run last, after every other hook (PyTorch >= 2.0).
        for nr, ref in node.retain_refs.items():
            t = ref()
            g = grads[nr]
            if t is None or g is None:
                continue
            if t.grad is None:
                t.grad = g if is_grad_enabled() else g.detach().clone()
            else:
                t.grad = t.grad + g
    return grads


def _check_hook_result(node: Node, new: Any, old: Any) -> None:
    if not hasattr(new, "data") or not hasattr(new, "grad_fn"):
        raise TypeError(f"a hook on {node.name} returned {type(new).__name__}; "
                        "a hook must return a tensor or None")
    if new.shape != old.shape:
        raise RuntimeError(
            f"hook returned a gradient of shape [{', '.join(map(str, new.shape))}] but "
            f"the gradient it replaces has shape [{', '.join(map(str, old.shape))}]; "
            "a hook must return a tensor of the same shape (or None)")
    if new.data.dtype != old.data.dtype:
        raise RuntimeError(
            f"hook returned a gradient of dtype {new.dtype!r} but the gradient it replaces is "
            f"{old.dtype!r}; a hook must return a tensor of the same dtype (or None)")


def _run_node(node: Node, grads: list, sum_to: Callable) -> tuple:
    try:
        outs = node.backward_fn(node, grads)
    except Exception as err:
        if node.trace is not None:
            note = ("Error detected in " + node.name + ". Traceback of forward call that "
                    "caused the error:\n" + "".join(node.trace))
            err.add_note(note)
        raise
    if node.input_meta:
        outs = _validate(node, outs, sum_to)
    if node.post_hooks:
        for hook in list(node.post_hooks):
            hook(outs, grads)
    if node.trace is not None and _local.check_nan:
        for i, g in enumerate(outs):
            if g is not None and np.isnan(g.data).any():
                raise RuntimeError(f"Function '{node.name}' returned nan values in its "
                                   f"{i}th output.\n" + "Traceback of forward call that "
                                   "caused the error:\n" + "".join(node.trace))
    return outs


def _validate(node: Node, outs: Sequence, sum_to: Callable) -> Sequence:
    """Bring each input gradient to its input's shape and dtype, or fail clearly."""
    meta = node.input_meta
    if len(outs) != len(meta):
        raise RuntimeError(f"function {node.name} returned an incorrect number of gradients "
                           f"(expected {len(meta)}, got {len(outs)})")
    fixed = None
    i = -1
    for m in meta:
        i += 1
        if m is None:
            continue
        g = outs[i]
        if g is None:
            continue
        d = g.data
        if d.shape != m[0] or d.dtype != m[1]:
            if fixed is None:
                fixed = list(outs)
            fixed[i] = _conform(node, i, g, m, sum_to)
    return outs if fixed is None else fixed


def reduces_to(gshape: tuple, shape: tuple) -> bool:
    """Whether a gradient of gshape is a broadcast of shape (so summing fixes it)."""
    try:
        return np.broadcast_shapes(shape, gshape) == gshape
    except ValueError:
        return False


def _conform(node: Node, i: int, g: Any, meta: tuple, sum_to: Callable) -> Any:
    shape, dtype = meta
    if g.shape != shape:
        if not reduces_to(g.shape, shape):
            raise RuntimeError(
                f"Function {node.name} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, g.shape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]")
        g = sum_to(g, shape)
    if g.data.dtype != dtype:
        g = g.to(dtype=dtype)
    return g
