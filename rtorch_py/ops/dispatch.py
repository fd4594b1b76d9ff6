"""Declaring an op (`@op`) and calling it: each op's public function.

`@op(...)` on an op's function registers its declaration (registry.py) and
makes its public function, the one `torch_<name>`, the Tensor method and R
call. While no dispatch mode is active (rtorch_py.modes: the stack is empty)
that function calls the op straight away: the plain path. Otherwise the call
walks the active modes that act on the op, in the stack's order, then the op.
This module defines the modes of the ops' own facts:

- AUTOCAST (R torch's `set_autocast()`; active while it is on in some thread):
  the ops that declare an autocast policy (`@op(autocast="lower")`, libtorch's
  CPU lists) cast their floating operands first;
- DIMS (never pushed: on the slow path of every op with dims): dims given by
  name (`x.sum(dim = "a")`, every argument the declaration marks as a dim or a
  list of dims) become positions; an unknown name is an error naming the dim and
  the tensor's names (docs/errors.md, E46; names that don't fit a tensor are E47).
  On the plain path an op with dims looks at those arguments before the call, and
  takes the slow path when one holds a name;
- LAYOUT (once a sparse tensor exists): an operand of another layout goes to the
  op's implementation for that layout, when one is registered (`implements`);
- NAMES (once a named tensor exists): with named operands the op runs on unnamed
  twins of them, and its result gets names by the op's rule (names.py); an op
  with no rule refuses named operands, as libtorch does, and an in-place op keeps
  its tensor's names.

An op's operands (looked at for layouts and names) are its parameters annotated
as taking tensors (`registry.tensor_parameters`).
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable

from ..engine import grad_accumulator, version_box
from ..modes import AUTOCAST as _AUTOCAST_PLACE
from ..modes import DIMS, LAYOUT, NAMES, STACK, Mode, define, in_mode, pop_mode, push_mode
from ..tensor import (Layout, Tensor, as_dtype, describe_names, position, promote_types,
                      strided)
from . import complex_half  # noqa: F401  (defines the COMPLEX32 mode)
from .names import Call, rule_of
from .registry import REGISTRY, OpSpec, register, tensor_parameters

# --------------------------------------------------------------------------
# Autocast (R torch's set_autocast(device_type = "cpu")): libtorch's CPU policies.
# While it is on, the ops declaring a policy (`@op(autocast=...)`: libtorch's CPU
# lists, those this engine has; einsum, tensordot and multi_dot are libtorch
# composites of bmm/mm, so they are lowered too, as there) cast their floating
# operands (not float64) first: "lower" to the autocast dtype (bfloat16 by
# default), "fp32" to float32, "promote" to the widest operand's. Functions made
# of several ops take their policy with `autocast_policy` (nn functional's linear,
# the losses).
_POLICIES = ("lower", "fp32", "promote")


class _AutocastState(threading.local):
    enabled = False
    dtype: Any = None      # the lower precision (a Dtype); None: bfloat16
    cache_enabled = True   # (accepted and reported; casts are not cached)
    nesting = 0


AUTOCAST = _AutocastState()


_autocast_threads = [0]  # threads with autocast on: the mode is active while any is
_autocast_lock = threading.Lock()


def autocast_set(enabled: bool, dtype: Any, cache_enabled: bool | None) -> list:
    """Turn CPU autocast on or off; returns [enabled, dtype, cache_enabled] as they were."""
    before = [AUTOCAST.enabled, AUTOCAST.dtype, AUTOCAST.cache_enabled]
    AUTOCAST.enabled, AUTOCAST.dtype = bool(enabled), dtype
    if cache_enabled is not None:
        AUTOCAST.cache_enabled = bool(cache_enabled)
    if AUTOCAST.enabled != before[0]:
        with _autocast_lock:
            _autocast_threads[0] += 1 if AUTOCAST.enabled else -1
            if AUTOCAST.enabled and _autocast_threads[0] == 1:
                push_mode(_AUTOCAST_MODE)
            elif not AUTOCAST.enabled and _autocast_threads[0] == 0:
                pop_mode(_AUTOCAST_MODE)
    return before


def _eligible(x: Any) -> bool:
    return isinstance(x, Tensor) and x.dtype.is_floating_point and x.data.dtype.itemsize != 8


def _cast_all(v: Any, cast: Callable) -> Any:
    if type(v) is list or type(v) is tuple:
        return type(v)(_cast_all(x, cast) for x in v)
    return cast(v) if _eligible(v) else v


def autocast_args(policy: str, args: tuple, kwargs: dict) -> tuple:
    """The arguments of a call under autocast, cast as `policy` says."""
    if policy == "promote":
        found = [x.dtype for v in (*args, *kwargs.values())
                 for x in (v if type(v) in _LISTS else (v,)) if _eligible(x)]
        if not found:
            return args, kwargs
        target = functools.reduce(promote_types, found)
    else:
        target = as_dtype("float32" if policy == "fp32" else (AUTOCAST.dtype or "bfloat16"))

    def cast(x: Tensor) -> Tensor:
        return x if x.dtype == target else x.to(dtype=target)
    return (tuple(_cast_all(v, cast) for v in args),
            {k: _cast_all(v, cast) for k, v in kwargs.items()})


def autocast_policy(policy: str) -> Callable:
    """Decorate a function made of several ops (not an op: an op declares its policy
    with `@op(autocast=...)`) with the autocast policy libtorch gives its aten op
    (its operands are cast once, on the way in)."""
    if policy not in _POLICIES:
        raise ValueError(f"autocast policy {policy!r}: one of {_POLICIES}")

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def under_autocast(*args: Any, **kwargs: Any) -> Any:
            if STACK[0] and AUTOCAST.enabled:
                args, kwargs = autocast_args(policy, args, kwargs)
            return fn(*args, **kwargs)
        return under_autocast
    return wrap


_NAMEABLE = frozenset({str, list, tuple})  # a dim argument that may hold a name
_LISTS = frozenset({list, tuple})
_running = threading.local()  # the ops running on an operand of another layout
_DISPATCHERS: dict = {}  # op name -> its _Dispatcher
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD


def op(name: str | None = None, *, r_operators: Any = (), **fields: Any) -> Callable:
    """Declare the decorated function an op (see OpSpec for the fields) and
    return it unchanged: inside the ops package an op calls another directly;
    the public function is `REGISTRY[name].fn` (and `.operator`, as Python
    calls the op's operators).

    `r_operators` may name R operators (`("+",)`), or map each to fixed
    arguments (`{"%/%": {"rounding_mode": "trunc"}}`); it and the other R-only
    facts (`r_*`, `invisible`) go to OpSpec.r, which only rtorch_py.r reads."""
    r = {k: fields.pop(k) for k in [k for k in fields if k.startswith("r_") or k == "invisible"]}
    r["r_operators"] = dict(r_operators) if isinstance(r_operators, dict) else \
        {o: {} for o in r_operators}
    if fields.get("autocast") not in (None, *_POLICIES):
        raise ValueError(f"autocast={fields['autocast']!r}: one of {_POLICIES}, or None")

    def declare(fn: Callable) -> Callable:
        key = name or fn.__name__
        d = _DISPATCHERS[key] = _Dispatcher(key, fn, fields, {})
        operator = None
        if fields.get("operators") or key.startswith("__"):
            operator = operator_function(d, fields.get("operators", ()) or (key,))
        register(OpSpec(key, public_function(d), fn, operator=operator, r=r,
                        layouts=d.layouts, **fields))
        return fn
    return declare


def running_op() -> str | None:
    """The op running on an operand of another layout (a sparse tensor), if any:
    the one a sparse tensor names when asked for a dense array."""
    ops = getattr(_running, "ops", None)
    return ops[-1] if ops else None


def implements(name: str, layout: Layout) -> Callable:
    """Register the decorated function as op `name`'s implementation for
    operands of `layout` (its first tensor operand's)."""
    def register_layout(impl: Callable) -> Callable:
        spec = REGISTRY[name]
        if not _DISPATCHERS[name].operands:
            raise RuntimeError(f"op {name!r} has no tensor operand to dispatch on")
        spec.layouts[layout] = impl
        return impl
    return register_layout


# --------------------------------------------------------------------------
# The public function: the plain path while the mode stack is empty, else the
# dispatcher's `call` (the slow path). FAST PATH (fixed arity): an op taking just
# `(self)` or `(self, other)`, or a Python operator (called with its operands only),
# gets a function of that many arguments (the cheapest call); the others forward
# what they are given. An op with dims also looks at its dim arguments for a name
# first, and takes the slow path when one holds one.


def public_function(d: "_Dispatcher", arity: int | None = None) -> Callable:
    """The op as published (see the module doc); `arity`: a Python operator's."""
    fn, call, stack = d.fn, d.call, STACK
    if arity is None and d.shape in (("self",), ("self", "other")):
        arity = len(d.shape)
    if len(d.dim_slots) == 1 and d.dim_slots[0][2] is not _VAR_POSITIONAL:
        (i, arg, _), = d.dim_slots  # FAST PATH: one dim argument, looked at inline

        def op(*args: Any, **kwargs: Any) -> Any:
            if stack[0]:
                return call(args, kwargs)
            v = args[i] if len(args) > i else kwargs.get(arg) if kwargs else None
            if type(v) in _NAMEABLE and _holds_name(v):
                return call(args, kwargs)  # (a dim by name)
            return fn(*args, **kwargs)  # the plain path
    elif len(d.dim_slots) == 2 and _VAR_POSITIONAL not in (d.dim_slots[0][2], d.dim_slots[1][2]):
        (i, arg, _), (j, arg2, _) = d.dim_slots  # FAST PATH: two (transpose's), inline

        def op(*args: Any, **kwargs: Any) -> Any:
            if stack[0]:
                return call(args, kwargs)
            n = len(args)
            v = args[i] if n > i else kwargs.get(arg) if kwargs else None
            w = args[j] if n > j else kwargs.get(arg2) if kwargs else None
            if type(v) in _NAMEABLE and _holds_name(v) or type(w) in _NAMEABLE and _holds_name(w):
                return call(args, kwargs)  # (a dim by name)
            return fn(*args, **kwargs)  # the plain path
    elif d.dim_slots:
        named_dim = functools.partial(_dims_by_name, d.dim_slots)

        def op(*args: Any, **kwargs: Any) -> Any:
            if stack[0] or named_dim(args, kwargs):
                return call(args, kwargs)
            return fn(*args, **kwargs)  # the plain path
    elif arity == 1:
        def op(self: Any) -> Any:
            if stack[0]:
                return call((self,), {})
            return fn(self)  # the plain path
    elif arity == 2:
        def op(self: Any, other: Any) -> Any:
            if stack[0]:
                return call((self, other), {})
            return fn(self, other)  # the plain path
    elif arity == 3:
        def op(self: Any, key: Any, value: Any) -> Any:
            if stack[0]:
                return call((self, key, value), {})
            return fn(self, key, value)  # the plain path
    else:
        def op(*args: Any, **kwargs: Any) -> Any:
            if stack[0]:
                return call(args, kwargs)
            return fn(*args, **kwargs)  # the plain path
    return functools.update_wrapper(op, fn)


def operator_function(d: "_Dispatcher", dunders: tuple) -> Callable:
    """The op as Python calls its operators: `x + y` is `__add__(x, y)`, `-x`
    `__neg__(x)`, `x[k] = v` `__setitem__(x, k, v)`: a function of that many
    arguments (with dims, the public function)."""
    if all(name in _UNARY_DUNDERS for name in dunders):
        return public_function(d, 1)
    return public_function(d, 3 if dunders == ("__setitem__",) else 2)


_UNARY_DUNDERS = frozenset({"__neg__", "__pos__", "__abs__", "__invert__"})


def _dims_by_name(slots: tuple, args: tuple, kwargs: dict) -> bool:
    """Whether a dim argument holds a name (a str, or a list holding one: tensordot's
    `dims`, lists of them)."""
    n = len(args)
    for i, arg, kind in slots:
        if kind is _VAR_POSITIONAL:  # (permute's `*dims`: all of them)
            for v in args[i:]:
                if type(v) in _NAMEABLE and _holds_name(v):
                    return True
            continue
        v = args[i] if i < n else kwargs.get(arg) if kwargs else None
        if type(v) in _NAMEABLE and _holds_name(v):
            return True
    return False


def _holds_name(v: Any) -> bool:
    return type(v) is str or type(v) in _LISTS and any(_holds_name(d) for d in v)


class _Dispatcher:
    """What an op's public function and the modes need to know of its declaration."""

    def __init__(self, name: str, fn: Callable, fields: dict, layouts: dict) -> None:
        self.name, self.fn, self.layouts = name, fn, layouts
        self.sig = inspect.signature(fn)
        params = list(self.sig.parameters.values())
        # the parameters' names when all are plain and required (`("self", "other")`)
        plain = all(p.kind is _POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params)
        self.shape = tuple(p.name for p in params) if plain else None
        self.first = params[0].name if params else None
        self.rule = rule_of(fields.get("names"))
        self.dims = tuple(fields.get("dims", ()))
        self.inplace = name.endswith("_") and not name.endswith("__")
        self.autocast = fields.get("autocast")

        def slot(arg: str) -> tuple:
            """(position, name, kind) of an argument; a keyword-only one has no position."""
            p = self.sig.parameters[arg]
            i = params.index(p) if p.kind is not p.KEYWORD_ONLY else len(params)
            return (i, arg, p.kind)
        # (position, name, "dim" or "list"): arguments that may be dims given by name
        self.dim_slots = tuple(slot(a) for a in self.dims) + \
            tuple(slot(a)[:2] + ("list",) for a in fields.get("dim_lists", ()))
        # the tensor operands, looked at for layouts and names
        operands = [slot(p)[:2] for p in tensor_parameters(fn)]
        if self.rule is None and self.inplace:
            operands = []  # (in place: the tensor keeps its names)
        self.operands = tuple(operands)
        self._walk: tuple = (None, None)  # (the stack, the op through its modes) last called

    def call(self, args: tuple, kwargs: dict) -> Any:
        """The op called through the active modes that act on it (the slow path)."""
        stack, run = self._walk
        if stack is not STACK[0]:
            stack = STACK[0]
            run = self._through(stack)
            self._walk = (stack, run)
        return run(*args, **kwargs)

    def _through(self, stack: tuple) -> Callable:
        """The op as the modes of `stack` that act on it run it (outermost first)."""
        modes = [m for m in stack if getattr(m, "applies", None) is None or m.applies(self)]
        if self.dim_slots:
            modes.append(_DIMS_MODE)
        modes.sort(key=lambda m: getattr(m, "order", 0))
        run = self.fn
        for mode in reversed(modes):
            run = in_mode(mode, self.name, run)
        return run

    def operand_values(self, args: tuple, kwargs: dict) -> list:
        n = len(args)
        return [args[i] if i < n else kwargs.get(arg) for i, arg in self.operands]

    def first_value(self, args: tuple, kwargs: dict) -> Any:
        return args[0] if args else kwargs.get(self.first)

    def positions(self, args: tuple, kwargs: dict) -> tuple:
        """The arguments with dims given by name replaced by positions."""
        first = self.first_value(args, kwargs)
        args = list(args)
        n = len(args)
        for i, arg, kind in self.dim_slots:
            if kind is _VAR_POSITIONAL:
                args[i:] = [_positions(first, v, arg) for v in args[i:]]
                continue
            v = args[i] if i < n else kwargs.get(arg)
            if type(v) not in _NAMEABLE:
                continue
            if kind == "list":  # tensordot's `dims`: one list of dims per operand
                second = args[1] if n > 1 else kwargs.get(list(self.sig.parameters)[1])
                v = _dim_lists_positions((first, second), v, arg)
            else:
                v = _positions(first, v, arg)
            if i < n:
                args[i] = v
            else:
                kwargs = {**kwargs, arg: v}
        return tuple(args), kwargs

    def named_call(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """Run the op (fn: the rest of the stack) on unnamed twins of its operands
        (in place: on the tensor itself) and name its result by the rule."""
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        given = dict(bound.arguments)
        first = given[self.first]
        if isinstance(first, Tensor):  # (names and shape before the call)
            shape = first.data.shape
            names = first._names
            if names is None or len(names) != len(shape):
                names = (None,) * len(shape)
        else:
            shape, names = (), ()
        if not self.inplace:
            for _, arg in self.operands:
                bound.arguments[arg] = _twin(bound.arguments[arg])
        out = _untwin(fn(*bound.args, **bound.kwargs))
        self.rule(out, Call(self.name, self.dims, given, names, shape))
        return out

    def refused(self, operand: Any) -> RuntimeError:
        names = _names_in(operand)
        return RuntimeError(f"{self.name} is not yet supported with named tensors (got "
                            f"{describe_names(names, len(names))}): drop the names first "
                            f"(x.rename(None); in R x$rename(NULL)), call {self.name}, and "
                            "name its result with rename()")


# --------------------------------------------------------------------------
# The modes of the ops' facts (their places: rtorch_py.modes). Each sees ops only
# (`functions = False`); `applies` says which ops, asked once per op and stack.


class _AutocastMode(Mode):
    order, functions = _AUTOCAST_PLACE, False

    def applies(self, op: _Dispatcher) -> bool:
        return op.autocast is not None

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        if AUTOCAST.enabled:  # (on in this thread)
            args, kwargs = autocast_args(_DISPATCHERS[name].autocast, args, kwargs)
        return fn(*args, **kwargs)


class _DimsMode(Mode):
    order, functions = DIMS, False

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        args, kwargs = _DISPATCHERS[name].positions(args, kwargs)
        return fn(*args, **kwargs)


class _LayoutMode(Mode):
    order, functions = LAYOUT, False

    def applies(self, op: _Dispatcher) -> bool:
        return bool(op.operands)

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        d = _DISPATCHERS[name]
        layout = next((v.layout for v in (d.first_value(args, kwargs),
                                          *d.operand_values(args, kwargs))
                       if isinstance(v, Tensor) and v.layout is not strided), None)
        if layout is None:
            return fn(*args, **kwargs)
        impl = d.layouts.get(layout)  # its implementation, or the op's own (which
        if impl is not None:          # refuses it, by name)
            return impl(*args, **kwargs)
        _running.ops = ops = getattr(_running, "ops", [])
        ops.append(name)
        try:
            return fn(*args, **kwargs)
        finally:
            ops.pop()


class _NamesMode(Mode):
    order, functions = NAMES, False

    def applies(self, op: _Dispatcher) -> bool:
        return bool(op.operands)

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        d = _DISPATCHERS[name]
        named = [v for v in d.operand_values(args, kwargs) if _named(v)]
        if d.rule is None:
            if named:
                raise d.refused(named[0])
            return fn(*args, **kwargs)
        if not named and not _named(d.first_value(args, kwargs)):
            return fn(*args, **kwargs)
        return d.named_call(fn, args, kwargs)


_AUTOCAST_MODE = _AutocastMode()
_DIMS_MODE = _DimsMode()
define(_LayoutMode())
define(_NamesMode())


# --------------------------------------------------------------------------
# Helpers of the slow path


def _named(v: Any) -> bool:
    """Whether v is a tensor with names, or a list holding one."""
    if type(v) is list or type(v) is tuple:
        return any(isinstance(t, Tensor) and t._names is not None for t in v)
    return isinstance(v, Tensor) and v._names is not None


def _names_in(v: Any) -> tuple:
    if isinstance(v, (list, tuple)):
        return next(t._names for t in v if isinstance(t, Tensor) and t._names is not None)
    return v._names


def _positions(x: Any, v: Any, arg: str) -> Any:
    """A dim argument with its names (alone or in a list) replaced by positions."""
    if type(v) is str:
        return position(x, v, arg)
    if isinstance(v, (list, tuple)) and any(type(d) is str for d in v):
        return type(v)(position(x, d, arg) if type(d) is str else d for d in v)
    return v


def _dim_lists_positions(tensors: tuple, v: Any, arg: str) -> Any:
    """tensordot's `dims`: a count, or one list of dims per tensor (names of that tensor)."""
    if not isinstance(v, (list, tuple)) or not any(isinstance(d, (list, tuple, str)) for d in v):
        return v
    out = []
    for t, dims in zip(tensors, v):
        out.append(_positions(t, dims, arg) if isinstance(dims, (str, list, tuple)) else dims)
    return type(v)(out)


def _twin(x: Any) -> Any:
    """An unnamed tensor that is x in all else: its data, version counter, place
    in the graph (a leaf's gradient goes to x's accumulator), base."""
    if type(x) is list or type(x) is tuple:
        return type(x)(_twin(t) for t in x)
    if not isinstance(x, Tensor) or x._names is None:
        return x
    t = object.__new__(type(x))
    t.data, t._rg, t.grad_fn, t._version = x.data, x._rg, x.grad_fn, version_box(x)
    t._twin_of = x
    if x._output_nr:
        t._output_nr = x._output_nr
    t._base = x._base if x._base is not None else x  # (views made of it are views of x)
    if x._rg and x.grad_fn is None:
        t._accum = grad_accumulator(x)
    return t


def _untwin(out: Any) -> Any:
    """An op that returned its operand (`to()` of the same dtype) returns the
    original, not its twin."""
    original = getattr(out, "_twin_of", None) if isinstance(out, Tensor) else None
    return original if original is not None else out


