"""Dispatch modes: one ordered stack, as PyTorch's dispatch keys or JAX's trace stack.

While no mode is active, an op's public function calls its kernel at once (the
plain path, rtorch_py/ops/dispatch.py). A mode is pushed when what it handles
comes to exist or begins (a named tensor is made, autocast is turned on, a trace
begins) and popped when that ends; while any is active, each op call walks the
active modes that act on that op, outermost first, each handing the call on to
the next, and then the kernel.

The order, outermost (sees the call first) to innermost (next to the kernel):

  COMPLEX32   (rtorch_py.ops.complex_half; once the dtype is named, for good)
              refuses the ops libtorch has no ComplexHalf kernel for, rounds the
              results of the others;
  TRACE       (rtorch_py.jit's tracer, while a trace runs; also any mode pushed
              without a place) sees the call as written;
  FORWARD_AD  (rtorch_py.forward_ad, inside a dual level) gives the result its tangent;
  AUTOCAST    (ops.dispatch, while autocast is on in some thread) casts the
              operands of the ops with an autocast policy;
  DIMS        (ops.dispatch; never pushed: part of every op with dims on the slow
              path, and taken when a dim is given by name) names of dims become
              positions, or a clear error;
  LAYOUT      (ops.dispatch, once a sparse tensor exists, for good) an operand of
              another layout goes to the op's implementation for it;
  NAMES       (ops.dispatch, once a named tensor exists, for good) the op runs on
              unnamed twins of its named operands and names its result by its rule,
              or refuses them.

A mode is an object with the methods of `Mode` (those it lacks take Mode's):
`order`, `functions` (whether it also sees functions that are not ops:
`tensor.traceable`), `applies(op)` (whether it can act on the op with this
dispatcher at all: asked once per op and stack), `call(name, fn, args, kwargs)`
(runs fn(*args, **kwargs), the rest of the stack, possibly changed) and
`converted(x, what)` (a tensor's values leave for Python or R as `what`).

The persistent modes are defined by the ops layer and switched on from below
(`switch_on(NAMES)` from the tensor module, which cannot import them).

This module imports nothing of the package.
"""
from __future__ import annotations

from typing import Any, Callable

COMPLEX32, TRACE, FORWARD_AD, AUTOCAST, DIMS, LAYOUT, NAMES = 10, 20, 30, 40, 50, 60, 70


class Mode:
    """A mode's methods, as the stack reads them (see the module doc)."""
    order = TRACE
    functions = True

    def applies(self, op: Any) -> bool:
        return True

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        return fn(*args, **kwargs)

    def converted(self, x: Any, what: str) -> None:
        pass


# The active modes, outermost first: a tuple, replaced at each change (a call
# walks the stack it found). Empty: every op takes its plain path.
STACK: list[tuple] = [()]
# The active modes that see every call, ops and functions (the tracer, forward mode),
# outermost first: what code that is not an op asks (`if MODES:`).
MODES: list = []

_DEFINED: dict[int, Any] = {}  # order -> the persistent mode of that place
_SWITCHED_ON: set[int] = set()  # places switched on before their mode was defined


def _order(mode: Any) -> int:
    return getattr(mode, "order", TRACE)


def _restack(modes: list) -> None:
    STACK[0] = tuple(sorted(modes, key=_order))  # (stable: equal places keep their order)
    MODES[:] = [m for m in STACK[0] if getattr(m, "functions", True)]


def push_mode(mode: Any) -> None:
    """Make `mode` active, at its place; among modes of one place the one pushed last
    is outermost."""
    modes = list(STACK[0])
    i = next((i for i, m in enumerate(modes) if _order(m) >= _order(mode)), len(modes))
    modes.insert(i, mode)
    _restack(modes)


def pop_mode(mode: Any) -> None:
    modes = list(STACK[0])
    modes.remove(mode)
    _restack(modes)


def define(mode: Any) -> None:
    """Declare the persistent mode of its place (pushed once switched on)."""
    _DEFINED[mode.order] = mode
    if mode.order in _SWITCHED_ON:
        push_mode(mode)


def switch_on(order: int) -> None:
    """Make the persistent mode of this place active from now on (idempotent)."""
    if order in _SWITCHED_ON:
        return
    _SWITCHED_ON.add(order)
    mode = _DEFINED.get(order)
    if mode is not None:
        push_mode(mode)


def active(order: int) -> bool:
    """Whether a mode of this place is active."""
    return any(_order(m) == order for m in STACK[0])


def through(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """fn(*args, **kwargs), a call of a function that is not an op, run by the
    active modes that see functions."""
    for mode in reversed(MODES):
        fn = in_mode(mode, name, fn)
    return fn(*args, **kwargs)


def in_mode(mode: Any, name: str, fn: Callable) -> Callable:
    """fn as `mode` runs it (a call of `name`)."""
    call = mode.call
    return lambda *args, **kwargs: call(name, fn, args, kwargs)


def converted(x: Any, what: str) -> None:
    """Tell the active modes that x's values leave for the host language as `what`."""
    for mode in list(MODES):
        mode.converted(x, what)
