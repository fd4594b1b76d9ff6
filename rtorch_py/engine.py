"""The autograd engine: graph nodes, grad mode, and the backward walk.

It knows nothing of individual ops or of R, and of tensors only what the
`TensorLike` protocol below lists; it makes tensors (for hooks, custom
backward functions and results) through the factory given to `connect()`.
"""
from __future__ import annotations

import heapq
import threading
import traceback
import weakref
from sys import getrefcount
from contextlib import contextmanager
from itertools import count
from typing import Any, Callable, Iterator, Protocol, Sequence

import numpy as np

# --------------------------------------------------------------------------
# Grad mode and anomaly mode (thread-local, like PyTorch's).

class _ThreadState(threading.local):
    # Class-level defaults make every new thread start with grad mode on,
    # and keep the lookup a plain attribute read (it is on every op's path).
    grad = True
    anomaly = False
    check_nan = True
    in_backward: Any = False  # the backward walk running (ops called by derivatives), or False


_local = _ThreadState()


def thread_state() -> _ThreadState:
    """This thread's modes (`.grad`, `.anomaly`): read on every op by the recorder."""
    return _local


def is_grad_enabled() -> bool:
    return _local.grad


def set_grad_enabled(mode: bool) -> bool:
    """Set grad mode for this thread; returns the previous mode."""
    prev = _local.grad
    _local.grad = bool(mode)
    return prev


def is_anomaly_enabled() -> bool:
    return _local.anomaly


class GradMode:
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
            with GradMode(mode):
                return fn(*args, **kwargs)

        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        return wrapped


def no_grad() -> GradMode:
    return GradMode(False)


def enable_grad() -> GradMode:
    return GradMode(True)


# How many anomaly blocks are open in any thread: while none is, making a node
# skips the thread-local lookup (it is on every op's path).
anomaly_blocks = 0
_anomaly_lock = threading.Lock()


@contextmanager
def detect_anomaly(check_nan: bool = True) -> Iterator[None]:
    global anomaly_blocks
    prev = _local.anomaly, _local.check_nan
    _local.anomaly, _local.check_nan = True, check_nan
    with _anomaly_lock:
        anomaly_blocks += 1
    try:
        yield
    finally:
        with _anomaly_lock:
            anomaly_blocks -= 1
        _local.anomaly, _local.check_nan = prev


# --------------------------------------------------------------------------
# Graph nodes.

next_seq = count().__next__  # creation order: every edge points to an older node

class TensorLike(Protocol):
    """What the engine needs of a tensor."""
    data: np.ndarray            # the values
    grad_fn: "Node | None"      # the node that made it (None for leaves)
    _rg: bool                   # requires grad
    _output_nr: int             # which output of grad_fn it is
    _version: Any               # version counter (NEW_VERSION until one is needed)
    _accum: "AccumulateGrad | None"  # a leaf's accumulator
    _grad: Any                  # a leaf's gradient (set through `.grad`)

    def memory_order(self) -> str:
        """The memory order a new gradient takes: "C", "F" or "K" (PyTorch's
        layout contract: a gradient is laid out like its tensor)."""


def _no_factory(arr: np.ndarray) -> Any:
    raise RuntimeError("the engine has no tensor type: call engine.connect() first")


make_tensor: Callable[[np.ndarray], TensorLike] = _no_factory


def connect(tensor_factory: Callable[[np.ndarray], TensorLike]) -> None:
    """Give the engine the function that wraps an array as a tensor (no copy): it
    hands tensors to hooks, custom backward functions and callers."""
    global make_tensor
    make_tensor = tensor_factory


# Version counters: a one-item list shared by a tensor and its aliases and views,
# bumped by every in-place change. A new tensor starts with the shared read-only
# NEW_VERSION and gets its own list only when something must follow it (saved for
# backward, aliased, viewed, changed in place): most never do.
NEW_VERSION = (0,)


def version_box(t: Any) -> list:
    """t's version counter, made now if t had none of its own."""
    box = t._version
    if box is NEW_VERSION:
        box = t._version = [0]
    return box


def bump_version(t: Any) -> None:
    """Record an in-place change of t (and so of every alias and view of it)."""
    version_box(t)[0] += 1


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    An input is kept as the tensor given (so create_graph flows through its
    history); an op's own output only as its array and version counter (the
    tensor would hold its node: a cycle); unpacking gives it back its node,
    so higher-order gradients flow.
    """

    __slots__ = ("tensor", "data", "version_box", "version", "output_nr")

    def __init__(self, tensor: Any, is_output: bool = False, output_nr: int = 0) -> None:
        box = tensor._version
        if box is NEW_VERSION:
            box = tensor._version = [0]
        self.tensor = None if is_output else tensor
        self.data = tensor.data
        self.version_box = box
        self.version = box[0]
        self.output_nr = output_nr

    def checked(self, node: "Node") -> np.ndarray:
        """The saved values, once sure they are still there and unchanged (the
        version check: an in-place change since saving is node's error)."""
        d = self.data
        if d is None or self.version_box[0] != self.version:
            self._fail(node)
        return d

    def unpack(self, node: "Node") -> Any:
        d = self.data
        if d is None or self.version_box[0] != self.version:  # (checked(), inline)
            self._fail(node)
        t = self.tensor
        if t is None:  # the op's output: a new alias that has the node again
            t = make_tensor(d)
            t._version = self.version_box
            t.grad_fn, t._rg = node, True
            if self.output_nr:  # (0 is the class default: no __dict__ for it)
                t._output_nr = self.output_nr
        return t

    def _fail(self, node: "Node") -> None:
        if self.data is None:
            raise RuntimeError(_FREED_MESSAGE)
        t = self.tensor
        if t is None:
            t = make_tensor(self.data)
            t._version = self.version_box
        raise RuntimeError(self._modified_message(t, node))

    def _modified_message(self, t: Any, node: "Node") -> str:
        # Name the op that produced the tensor's current value, as PyTorch does.
        is_output = self.tensor is None
        producer = node if is_output else t.grad_fn
        where = (f", which is output {self.output_nr if is_output else t._output_nr} "
                 f"of {producer.name}," if producer is not None else "")
        return ("one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t._type_string()} [{', '.join(map(str, t.shape))}]]"
                f"{where} is at version {t._version[0]}; expected version {self.version} "
                "instead. Hint: enable anomaly detection to find the operation that failed to "
                "compute its gradient, with torch.autograd.set_detect_anomaly(True).")


_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class _FreedValues:
    """A node's plain saved values (a tuple holding arrays: max pooling's indices)
    once a walk has freed them: reading them again is a second walk's error."""

    __slots__ = ()

    def __iter__(self) -> Iterator:
        raise RuntimeError(_FREED_MESSAGE)

    def __getitem__(self, i: Any) -> Any:
        raise RuntimeError(_FREED_MESSAGE)


FREED_VALUES = _FreedValues()


# A node's saved values are a tuple when they are plain values (formulas get it
# as it is; releasing frees nothing), and a list when some are SavedTensors (a
# list, not a tuple subclass: it is made for most nodes and is cheaper).
Packed = list


class Node:
    """One recorded operation: how to map output grads to input grads.

    `backward_fn(node, grads)` receives the gradient for each output (a list)
    and returns one gradient (or None) per edge in `next_functions`.
    """

    # Hot fields are slots; rare ones (hooks, anomaly trace, more than one
    # output) default at class level and land in __dict__ when set, so
    # creating a node costs six assignments.
    __slots__ = ("_name", "backward_fn", "next_functions", "input_meta", "saved", "seq",
                 "__dict__", "__weakref__")
    num_outputs = 1
    hooked = False                   # any of the four below set: the walk looks at them
    pre_hooks: dict | None = None    # output_nr -> [hook(grad)]
    post_hooks: list | None = None   # [hook(grad_inputs, grad_outputs)]
    retain_refs: dict | None = None  # output_nr -> weakref of a retain_grad() tensor
    trace: list | None = None        # forward stack, under with_detect_anomaly()

    # (ops.recording.record sets these six fields inline, without the call: keep in step)
    def __init__(self, name: str | None, backward_fn: Callable, edges: tuple,
                 input_meta: tuple, saved: tuple = ()) -> None:
        self._name = name  # None: the backward function's name (read only when shown)
        self.backward_fn = backward_fn
        self.next_functions = edges
        self.input_meta = input_meta
        self.saved = saved
        self.seq = next_seq()
        if anomaly_blocks and _local.anomaly:
            self.trace = traceback.format_stack()[:-3]
            self.hooked = True

    @property
    def name(self) -> str:
        """PyTorch's name for the node (`MulBackward0`)."""
        name = self._name
        return name if name is not None else self.backward_fn.__name__

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def needs(self, i: int) -> bool:
        """Whether input i wants a gradient (lets a formula skip dead work)."""
        return self.next_functions[i][0] is not None

    def __repr__(self) -> str:
        return f"<{self.name}>"

    # (Loops, not comprehensions, on these hot paths: in Python 3.11 a
    # comprehension costs a function call of its own.)
    def unpack_saved(self) -> Sequence:
        saved = self.saved
        if type(saved) is not Packed:
            return saved
        out = []
        for s in saved:
            out.append(s.unpack(self) if type(s) is SavedTensor else s)
        return out

    def unpack_saved_data(self) -> Sequence:
        saved = self.saved
        if type(saved) is not Packed:
            return saved
        out = []
        for s in saved:
            if type(s) is SavedTensor:
                d = s.data
                if d is None or s.version_box[0] != s.version:  # (checked(), inline)
                    s._fail(self)
                s = d
            out.append(s)
        return out

    def register_hook(self, fn: Callable) -> "RemovableHandle":
        """Post-hook: fn(grad_inputs, grad_outputs) after this node runs."""
        if self.post_hooks is None:
            self.post_hooks = []
        self.hooked = True
        return RemovableHandle(self.post_hooks, fn)

    def register_prehook(self, fn: Callable, output_nr: int = 0) -> "RemovableHandle":
        if self.pre_hooks is None:
            self.pre_hooks = {}
        self.hooked = True
        return RemovableHandle(self.pre_hooks.setdefault(output_nr, []), fn)

    def retain(self, output_nr: int, ref: weakref.ref) -> None:
        """retain_grad(): keep output `output_nr`'s gradient in the tensor `ref` names."""
        if self.retain_refs is None:
            self.retain_refs = {}
        self.retain_refs[output_nr] = ref
        self.hooked = True


def backward_function(fn: Callable) -> Callable:
    """Mark fn(node, grads) as a backward function with no formula for the
    walk's array fast path (op derivatives get theirs from `ops.formula`). The
    walk reads `array_formula` of every node's backward function: one that
    lacks it works too, but the lookup then costs an exception."""
    fn.array_formula = None
    return fn


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


@backward_function
def _accumulate(node: AccumulateGrad, grads: list) -> tuple:
    """A leaf's backward: add the incoming gradient into `.grad`."""
    leaf, g = node._variable(), grads[0]
    if g is None or leaf is None:
        return ()
    if _local.grad:  # create_graph: g is a tensor and .grad stays differentiable
        accumulate_grad(leaf, g)
    elif leaf._grad is not None:  # (added into the .grad there is: owning g is moot)
        _add_array(leaf, g, False)
    else:
        # The walk's array may become .grad itself only if nobody else can see
        # it: not a view, writable, and referenced just by `grads` and the local
        # `g` (getrefcount adds one). A view of the whole of such an array (the
        # transpose of a transpose: a linear layer's weight gradient) passes
        # its array on instead.
        owned = type(g) is np.ndarray and g.flags.writeable and getrefcount(g) <= 3
        if owned and g.base is not None:
            b = g.base
            # refs to b: g's base, the local, getrefcount's argument
            owned = type(b) is np.ndarray and b.base is None and b.shape == g.shape and \
                b.strides == g.strides and getrefcount(b) <= 3
            if owned:
                g = b
        _add_array(leaf, g, owned)
    return ()


def accumulate_grad(leaf: Any, g: Any) -> None:
    """Add tensor g into leaf.grad (differentiably when grad mode is on: create_graph)."""
    if _local.grad:
        with _accumulate_lock:
            leaf.grad = g if leaf.grad is None else leaf.grad + g
    else:
        _add_array(leaf, g.data, False)


def _add_array(leaf: Any, g: np.ndarray, owned: bool) -> None:
    """Add array g into leaf.grad, recording nothing: in place into a plain .grad
    (so that references to it see the sum); g itself becomes .grad only if owned."""
    _accumulate_lock.acquire()  # (cheaper than `with` on this per-leaf path)
    try:
        grad = leaf._grad
        if grad is None:
            order = leaf.memory_order()
            if not owned or (order == "C" and not g.flags.c_contiguous):
                # a new .grad takes the leaf's memory layout: a transposed gradient
                # (a linear layer's weight) would make every optimiser pass over
                # it stride across memory
                g = np.array(g, order=order)
            leaf.grad = make_tensor(g)
        elif grad.grad_fn is None:
            d = grad.data
            if d.size == 1:  # (NumPy's in-place ufunc is slow on one element)
                if d.shape == g.shape:  # and NumPy scalars add faster than arrays:
                    i = (0,) * d.ndim   # the same sum, in the same dtypes
                    d[i] = d[i] + g[i]
                else:
                    d[...] = d + g
            else:
                np.add(d, g, out=d, casting="unsafe")
            box = grad._version  # (bump_version, inline)
            if box is NEW_VERSION:
                box = grad._version = [0]
            box[0] += 1
        else:
            leaf.grad = make_tensor(grad.data + g)
    finally:
        _accumulate_lock.release()


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
# The backward walk: one loop, in the shape of HIPS autograd's backward_pass.
#
# Its fast paths, all of them, are here and labelled; inside `plain_walk()` a
# walk takes none, and tests run the same graphs both ways and compare the
# gradients (tests/test_engine_walk.py):
#
#   FAST PATH 1 (array formulas): with create_graph off, an op's formula that
#     NumPy arrays and tensors share (`formula(arrays=True)`) runs straight on
#     the arrays the walk carries. Plain: the node's backward function runs the
#     formula on tensors, as under create_graph.
#   FAST PATH 2 (the next node at hand): a node handed a gradient while no other
#     node holds any runs next without going through the heap, so a chain never
#     touches it. Plain: every node waits in the heap.
#   FAST PATH 3 (the last leaf): a leaf's accumulator that is the walk's last
#     node (nothing in the heap, no leaf deferred before it) adds its gradient
#     at once, as committing would next. Plain: it is deferred and committed.
#   FAST PATH 4 (a sum in place): a node's gradient that meets another in its
#     buffer is added into it when the walk alone holds a large one (see give()).
#     Plain: a new array for every sum.
#   FAST PATH 5 (handed on early): a formula may give one input's gradient to
#     the walk before its other work, where it meets one the walk holds (see
#     hand_on()). Plain: every gradient comes back from the formula.

FAST_WALK = [True]  # False inside plain_walk() (read once per walk, and by ops.recording)
_IN_PLACE_MIN = 1 << 12  # elements: below this a new array costs less than the ufunc's overhead


@contextmanager
def plain_walk() -> Iterator[None]:
    """Backward walks in this block take no fast path (tests compare the two)."""
    prev, FAST_WALK[0] = FAST_WALK[0], False
    try:
        yield
    finally:
        FAST_WALK[0] = prev


def run_backward(roots: Sequence[tuple], retain_graph: bool, create_graph: bool,
                 capture: Sequence[tuple] | None = None, accumulate: bool = True,
                 sum_to: Callable | None = None) -> list | None:
    """Propagate gradients from `roots` [(edge, grad), ...] through the graph.

    The latest-created node holding a gradient runs next. Every edge points to
    an older node, so by then all its senders have run: no dependency count is
    needed, and the order is PyTorch's. Gradients travel as NumPy arrays, or as
    tensors recording a graph of their own under `create_graph` (grad mode is
    on exactly then). `capture` lists edges whose incoming gradient is returned
    (autograd_grad, backward(inputs=)); with `accumulate` False leaves are not
    touched. Saved tensors are freed as nodes run unless `retain_graph`.
    """
    walk = _Walk(roots, retain_graph, create_graph, capture, accumulate, sum_to)
    fast, arrays, needed, keys, heap = FAST_WALK[0], not create_graph, walk.needed, \
        walk.keys, walk.heap
    formulas, release = walk.formulas, not retain_graph
    prev_mode, _local.grad = _local.grad, create_graph
    prev_walk, _local.in_backward = _local.in_backward, walk
    try:
        node, grads = walk.start(roots, fast)
        hand_g: Any = None
        while node is not None:
            at_hand = None  # FAST PATH 2: the next node, when it alone holds a gradient
            if needed is None or node in needed:  # (autograd_grad skips nodes it needs not)
                if node.hooked or keys:
                    grads = walk.arrive(node, grads)  # tensor hooks, retain_grad(), capture
                if type(node) is AccumulateGrad:
                    if fast and not heap and walk.pending == [] and not node.hooked:
                        node.backward_fn(node, grads)  # FAST PATH 3: the walk's last node
                    else:
                        walk.defer(node, grads)  # leaves change once the walk succeeded
                else:
                    meta = node.input_meta  # a gradient per input, then saved ones freed:
                    if node.hooked and (node.post_hooks or node.trace):
                        outs = _run_node(node, grads, walk.sum_to)  # anomaly notes, post-hooks
                    else:
                        f = formulas and getattr(node.backward_fn, "array_formula", None)
                        if f:  # FAST PATH 1: the op's formula straight on the arrays
                            saved = node.saved
                            outs = f(node, grads[0], *(node.unpack_saved_data()
                                                       if type(saved) is Packed else saved))
                        else:
                            outs = node.backward_fn(node, grads)
                        if meta and len(outs) != len(meta):
                            raise _wrong_count(node, outs)
                    if release and node.saved:
                        _release(node)
                    i = -1
                    for nxt, nr in node.next_functions:  # each to the node its input came from
                        i += 1
                        g = outs[i]
                        if nxt is None or g is None:
                            continue
                        m = meta[i] if meta else None
                        if m is not None:  # in its input's shape and dtype
                            d = g if arrays else g.data
                            if d.dtype is not m[1] or d.shape != m[0]:
                                g = _conform(node, i, g, m, walk.sum_to, arrays)
                        if fast and not heap and nxt.num_outputs == 1:  # FAST PATH 2
                            if at_hand is None:
                                at_hand, hand_g = nxt, g
                                continue
                            if at_hand is nxt:  # (x * x: both gradients to one node)
                                hand_g = hand_g + g
                                continue
                        if at_hand is not None:  # a second node gets one: both wait
                            walk.give(at_hand, 0, hand_g)
                            at_hand = None
                        walk.give(nxt, nr, g)
                    # (a gradient summed into another's buffer goes now, not during the next node)
                    outs = g = None
            node, grads = (at_hand, [hand_g]) if at_hand is not None else \
                walk.next() if heap else (None, None)
        if walk.pending:
            # the last node's gradients, no longer referenced here, can become the
            # leaves' .grad as they are (_accumulate's ownership check), not copies
            outs = g = d = hand_g = None
            walk.commit()
    finally:
        _local.grad, _local.in_backward = prev_mode, prev_walk
    return None if capture is None else walk.captured_grads()


def waiting(node: Node, i: int) -> bool:
    """Whether the running walk holds a gradient for node's input i already
    (one from elsewhere in the graph, which input i's will be summed into),
    and `hand_on` would take input i's now."""
    walk = _local.in_backward
    if not walk or not walk.formulas or node.hooked:
        return False
    nxt, nr = node.next_functions[i]
    buf = walk.held.get(nxt)
    return buf is not None and buf[nr] is not None


def hand_on(node: Node, i: int, g: Any) -> bool:
    """FAST PATH 5: a running formula gives the walk input i's gradient g (an
    array in the input's shape and dtype) before its other work, where `waiting`:
    summed at once into the one held, g is freed before that work's buffers are
    made (a residual block's convolution). True if taken; the formula then
    returns None for input i."""
    meta = node.input_meta[i] if node.input_meta else None
    if not waiting(node, i) or type(g) is not np.ndarray or \
            (meta is not None and (g.dtype is not meta[1] or g.shape != meta[0])):
        return False
    _local.in_backward.give(*node.next_functions[i], g)
    return True


def _release(node: Node) -> None:
    """Free what node saved, once it ran (a second walk through it fails clearly)."""
    saved = node.saved
    if type(saved) is Packed:
        for s in saved:
            if type(s) is SavedTensor:
                s.tensor = s.data = None
    elif type(saved) is tuple:
        for v in saved:
            if type(v) is np.ndarray:  # (arrays among plain values: all go)
                node.saved = FREED_VALUES
                break


class _Walk:
    """One backward pass: the nodes holding gradients, what is captured, what is
    deferred, and what running a node takes."""

    # (hot state in slots; what only autograd_grad uses defaults at class level)
    __slots__ = ("retain_graph", "create_graph", "formulas", "sum_to", "held", "heap",
                 "pending", "__dict__")
    keys: dict | None = None     # captured edge -> its position in `capture`
    captured: dict = {}          # position -> gradient
    needed: set | None = None    # the nodes worth running (None: all)

    def __init__(self, roots: Sequence[tuple], retain_graph: bool, create_graph: bool,
                 capture: Sequence[tuple] | None, accumulate: bool,
                 sum_to: Callable | None) -> None:
        self.retain_graph, self.create_graph, self.sum_to = retain_graph, create_graph, sum_to
        self.formulas = FAST_WALK[0] and not create_graph  # FAST PATH 1 applies
        self.held: dict[Node, list] = {}  # nodes holding gradients, a slot per output
        self.heap: list = []              # the same nodes, as a heap of (-seq, node)
        self.pending = [] if accumulate else None  # leaves and their gradients, for commit()
        if capture is not None:
            self.keys = {(id(n), nr): i for i, (n, nr) in enumerate(capture) if n is not None}
            self.captured = dict.fromkeys(range(len(capture)))
            if not accumulate:
                self.needed = _needed_nodes([e[0] for e, _ in roots], capture)

    def start(self, roots: Sequence[tuple], fast: bool) -> tuple:
        """The first node to run and its gradients: the roots' (one root is at hand,
        FAST PATH 2), the others wait."""
        arrays = not self.create_graph
        if fast and len(roots) == 1:
            (node, nr), g = roots[0]
            if node is not None and node.num_outputs == 1:
                return node, [g.data if arrays and type(g) is not np.ndarray else g]
        for (node, nr), g in roots:
            if node is not None:
                self.give(node, nr, g.data if arrays and type(g) is not np.ndarray else g)
        return self.next()

    def give(self, node: Node, nr: int, g: Any) -> None:
        """Hand gradient g to output nr of node (summed with what it already holds)."""
        buf = self.held.get(node)
        if buf is None:
            buf = self.held[node] = [None] * node.num_outputs
            heapq.heappush(self.heap, (-node.seq, node))
        old = buf[nr]
        if old is None:
            buf[nr] = g
        elif type(old) is np.ndarray and old.size >= _IN_PLACE_MIN and FAST_WALK[0] and \
                type(g) is np.ndarray and old.dtype is g.dtype and old.shape == g.shape and \
                old.base is None and old.flags.writeable and getrefcount(old) <= 3:
            # FAST PATH 4: a large array only this buffer holds (refs: the slot, `old`,
            # getrefcount's argument) takes the sum in place: the same values, one
            # gradient-sized array less at once (where a residual block's branches meet)
            np.add(old, g, out=old)
        else:
            buf[nr] = old + g

    def next(self) -> tuple:
        """The latest-created node holding a gradient, and its gradients."""
        if self.heap:
            node = heapq.heappop(self.heap)[1]
            return node, self.held.pop(node)
        return None, None

    def arrive(self, node: Node, grads: list) -> list:
        if node.hooked and (node.pre_hooks or node.retain_refs):
            grads = _call_pre_hooks(node, grads)
        if self.keys:
            for nr, g in enumerate(grads):
                i = self.keys.get((id(node), nr))
                if i is not None:
                    self.captured[i] = g
        return grads

    def defer(self, node: AccumulateGrad, grads: list) -> None:
        if self.pending is not None and grads[0] is not None:
            self.pending.append((node, grads))

    def commit(self) -> None:
        """Add every deferred gradient into its leaf."""
        for node, grads in self.pending or ():
            if node.hooked and (node.post_hooks or node.trace):
                _run_node(node, grads, self.sum_to)
            else:
                node.backward_fn(node, grads)

    def captured_grads(self) -> list:
        """The captured gradients, in capture's order (as tensors)."""
        got = list(self.captured.values())
        return got if self.create_graph else [None if g is None else make_tensor(g) for g in got]


_ONES: dict = {}


def implicit_grad(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """The gradient `backward()` starts from on a one-element tensor: ones, made
    once per shape and dtype and read-only (copied before anyone keeps it)."""
    key = (shape, dtype)
    arr = _ONES.get(key)
    if arr is None:
        arr = np.ones(shape, dtype=dtype)
        arr.flags.writeable = False
        _ONES[key] = arr
    return arr


def _needed_nodes(roots: Sequence, capture: Sequence[tuple]) -> set:
    """Nodes that lie on a path to a captured edge (only those need to run)."""
    targets = {n for n, _ in capture if n is not None}
    memo: dict[Node, bool] = {}
    for start in roots:
        if start is None or start in memo:
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
    """Tensor hooks, then retain_grad(); hooks see tensors whatever the walk carries."""
    arrays = not _local.grad

    def call(hook: Callable, g: Any) -> Any:
        new = hook(make_tensor(g) if arrays else g)
        if new is None:
            return g
        _check_hook_result(node, new, g if arrays else g.data)
        return new.data if arrays else new

    grads = list(grads)
    if node.pre_hooks:
        for nr, hooks in node.pre_hooks.items():
            for hook in list(hooks):
                if grads[nr] is not None:
                    grads[nr] = call(hook, grads[nr])
    if node.retain_refs:
        # retain_grad() hooks run last, after every other hook (PyTorch >= 2.0).
        for nr, ref in node.retain_refs.items():
            t = ref()
            g = grads[nr]
            if t is None or g is None:
                continue
            if arrays:
                g = make_tensor(np.array(g))  # its own copy: the walk's array moves on
            if t.grad is None:
                t.grad = g
            else:
                t.grad = t.grad + g
    return grads


def _check_hook_result(node: Node, new: Any, old: np.ndarray) -> None:
    if not hasattr(new, "data") or not hasattr(new, "grad_fn"):
        raise TypeError(f"a hook on {node.name} returned {type(new).__name__}; "
                        "a hook must return a tensor or None")
    if new.shape != old.shape:
        raise RuntimeError(
            f"hook returned a gradient of shape [{', '.join(map(str, new.shape))}] but "
            f"the gradient it replaces has shape [{', '.join(map(str, old.shape))}]; "
            "a hook must return a tensor of the same shape (or None)")
    if new.data.dtype != old.dtype:
        raise RuntimeError(
            f"hook returned a gradient of dtype {new.dtype!r} but the gradient it replaces is "
            f"{make_tensor(np.asarray(old)).dtype!r}; a hook must return a tensor of the same "
            "dtype (or None)")


def _run_node(node: Node, grads: list, sum_to: Callable) -> list:
    """Run one node with everything optional: anomaly notes, post-hooks (which see
    the gradients in their inputs' shapes and dtypes), the NaN check."""
    try:
        outs = node.backward_fn(node, grads)
    except Exception as err:
        if node.trace is not None:
            note = ("Error detected in " + node.name + ". Traceback of forward call that "
                    "caused the error:\n" + "".join(node.trace))
            err.add_note(note)
        raise
    arrays = not _local.grad
    meta = node.input_meta
    if meta:
        if len(outs) != len(meta):
            raise _wrong_count(node, outs)
        outs = [g if m is None or g is None else _conform(node, i, g, m, sum_to, arrays)
                for i, (g, m) in enumerate(zip(outs, meta))]
    if node.post_hooks:
        as_t = (lambda gs: [None if g is None else make_tensor(g) for g in gs]) if arrays \
            else list
        for hook in list(node.post_hooks):
            hook(as_t(outs), as_t(grads))
    if node.trace is not None and _local.check_nan:
        for i, g in enumerate(outs):
            if g is not None and np.isnan(g if arrays else g.data).any():
                raise RuntimeError(f"Function '{node.name}' returned nan values in its "
                                   f"{i}th output.\n" + "Traceback of forward call that "
                                   "caused the error:\n" + "".join(node.trace))
    return outs


def _wrong_count(node: Node, outs: Sequence) -> RuntimeError:
    return RuntimeError(f"function {node.name} returned an incorrect number of gradients "
                        f"(expected {len(node.input_meta)}, got {len(outs)})")


def reduces_to(gshape: tuple, shape: tuple) -> bool:
    """Whether a gradient of gshape is a broadcast of shape (so summing fixes it)."""
    if gshape[max(len(gshape) - len(shape), 0):] == shape:  # (fast path: leading dims
        return True                                          # only, a bias's gradient)
    try:
        return np.broadcast_shapes(shape, gshape) == gshape
    except ValueError:
        return False


def broadcast_axes(gshape: tuple, shape: tuple) -> tuple:
    """The axes to sum a gradient of gshape over to bring it back to `shape`."""
    lead = len(gshape) - len(shape)
    return tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)


def sum_to_shape(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum an array broadcast from `shape` back down to it."""
    axes = broadcast_axes(g.shape, shape)
    return np.asarray(g.sum(axis=axes, keepdims=True) if axes else g).reshape(shape)


def _conform(node: Node, i: int, g: Any, meta: tuple, sum_to: Callable, arrays: bool) -> Any:
    """Input i's gradient g (an array, or a tensor under create_graph) in the
    input's shape and dtype: a broadcast one summed back, another dtype cast;
    any other shape is the node's error. The one place a gradient is conformed."""
    shape, dtype = meta
    d = g if arrays else g.data
    if d.shape != shape:
        if not reduces_to(d.shape, shape):
            raise RuntimeError(
                f"Function {node.name} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, d.shape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]")
        g = sum_to_shape(g, shape) if arrays else sum_to(g, shape)
        d = g if arrays else g.data
    if d.dtype == dtype:
        return g
    return g.astype(dtype) if arrays else g.to(dtype=dtype)
