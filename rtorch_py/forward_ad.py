"""Forward-mode AD: dual tensors, as PyTorch's `torch.autograd.forward_ad`.

Inside `dual_level()` (R: `with_dual_level(code)`), `make_dual(x, t)` gives a
tensor whose tangent is t; every op on dual tensors gives a result carrying
its tangent (the Jacobian-vector product), read back with `unpack_dual`.
One level at a time, as PyTorch's default.

The hook: while a level is active, forward mode is a mode (`modes.FORWARD_AD`), so
every op call comes here with its name, arguments and result. Calls without
a dual operand run as they are; an op with one gets its tangent by the rule
its declaration gives (`OpSpec.forward`, beside the derivative):

- "linear": the op is linear in its floating tensor operands together (views,
  shape ops, sums, indexing, cat): the tangent is the op on the tangents;
- "multilinear": linear in each floating operand separately (mul, matmul):
  the sum over dual operands of the op with that operand's tangent;
- "elementwise": one input, one output of its shape, value by value (exp,
  tanh): the Jacobian is diagonal, so one vector-Jacobian product with the
  tangent as the cotangent gives it (PyTorch's `auto_element_wise`);
- a function `(primals, tangents, result) -> tangent(s)`, arguments by name;
- none declared: derived from the op's own derivative by the double-vjp
  trick: with g(u) = vjp(op)(u) for a dummy cotangent u (linear in u), the
  tangent is the vjp of g at the input tangents.

Ops without a derivative (`differentiable=False`: integer results,
comparisons) give no tangent. `ops.forward_rule_kind(name)` says which applies
(`ops.forward_rules()` lists the ops of each kind). Functions that are not ops
(`tensor.traceable`: nn functional forms) are derived as a whole. A rule
computes with the mode suspended: the ops it calls carry no tangents.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import weakref
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import numpy as np

from .autograd import autograd_grad
from .engine import enable_grad
from .ops import REGISTRY
from .random import default_generator
from .modes import FORWARD_AD, pop_mode, push_mode
from .tensor import Tensor, wrap

ACTIVE_LEVEL: list = [None]  # the active level: a list of weak references to its dual tensors


class UnpackedDualTensor(NamedTuple):
    primal: Tensor
    tangent: Tensor | None


def tangent_of(x: Any) -> Tensor | None:
    """x's tangent at the active level (None for a tensor without one)."""
    return x.__dict__.get("_tangent") if isinstance(x, Tensor) else None


def dual_level_active() -> bool:
    return ACTIVE_LEVEL[0] is not None


def set_tangent(x: Tensor, tangent: Tensor) -> None:
    """Give x a tangent at the active level (dropped when the level exits)."""
    if "_tangent" not in x.__dict__:
        ACTIVE_LEVEL[0].append(weakref.ref(x))
    x._tangent = tangent


class dual_level:
    """`with dual_level():` the scope of dual tensors; their tangents are dropped
    when it exits."""

    def __enter__(self) -> "dual_level":
        if ACTIVE_LEVEL[0] is not None:
            raise RuntimeError(
                "a dual level is already active: nested dual levels are not supported; "
                "use one dual_level() (R: with_dual_level()) for all the dual tensors")
        ACTIVE_LEVEL[0] = []
        push_mode(_FORWARD_MODE)
        return self

    def __exit__(self, *exc: Any) -> None:
        level, ACTIVE_LEVEL[0] = ACTIVE_LEVEL[0], None
        pop_mode(_FORWARD_MODE)
        for ref in level:
            x = ref()
            if x is not None:
                x.__dict__.pop("_tangent", None)


def make_dual(tensor: Tensor, tangent: Tensor) -> Tensor:
    """A tensor with tensor's values (a view of it) and tangent `tangent`."""
    if ACTIVE_LEVEL[0] is None:
        raise RuntimeError("make_dual: no dual level is active; make dual tensors inside "
                           "`with dual_level():` (R: with_dual_level({ ... }))")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual: the primal and the tangent must be tensors")
    if not (tensor.dtype.is_floating_point and tangent.dtype.is_floating_point):
        raise TypeError(f"make_dual: only floating point tensors have tangents (got primal "
                        f"{tensor.dtype} and tangent {tangent.dtype})")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"make_dual: the tangent's shape [{', '.join(map(str, tangent.shape))}]"
                           f" differs from the primal's [{', '.join(map(str, tensor.shape))}]; "
                           "give a tangent of the primal's shape")
    dual = tensor.view_as(tensor) if tensor.requires_grad else tensor._alias()
    set_tangent(dual, tangent if tangent.dtype == tensor.dtype else tangent.to(dtype=tensor.dtype))
    return dual


def unpack_dual(tensor: Tensor) -> UnpackedDualTensor:
    """(primal, tangent): the values as a tensor without tangent, and the tangent
    (None where there is none)."""
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    primal = tensor.view_as(tensor) if tensor.requires_grad else tensor._alias()
    return UnpackedDualTensor(primal, tangent)


def jvp(fn: Callable, primals: Sequence[Tensor], tangents: Sequence[Tensor | None]) -> tuple:
    """(fn(*primals), its tangent) in one forward pass, fn's output structure kept
    (a tensor, or a list/tuple of them; an output without tangent gets zeros)."""
    with dual_level():
        duals = [p if t is None else make_dual(p, t) for p, t in zip(primals, tangents)]
        out = fn(*duals)
        pairs = [unpack_dual(o) for o in _flat_outputs(out)]
    zeros = [t if t is not None or not _floating(p) else _zero_tangent(p) for p, t in pairs]
    if isinstance(out, Tensor):
        return pairs[0].primal, zeros[0]
    return type(out)(p for p, _ in pairs), type(out)(zeros)


def _flat_outputs(out: Any) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and all(isinstance(o, Tensor) for o in out):
        return list(out)
    raise TypeError(f"jvp: fn must return a tensor or a list of tensors, got "
                    f"{type(out).__name__}")


# --------------------------------------------------------------------------
# The mode


def _duals(args: tuple, kwargs: dict) -> bool:
    for v in (*args, *kwargs.values()):
        if isinstance(v, Tensor):
            if "_tangent" in v.__dict__:
                return True
        elif type(v) is list or type(v) is tuple:
            if any(isinstance(x, Tensor) and "_tangent" in x.__dict__ for x in v):
                return True
    return False


class _ForwardMode:
    order = FORWARD_AD  # (inside a trace: the tracer records the primal calls)

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        if _RULE_RUNNING[0] or not _duals(args, kwargs):
            return fn(*args, **kwargs)
        spec = REGISTRY.get(name)
        if spec is not None and not spec.differentiable:
            return _detached(fn(*args, **kwargs))
        # A function that is not an op (`traceable`: nn functional forms) is derived as a
        # whole (what it calls inside may bypass the ops' public functions); random draws
        # are replayed for the derivation, so it sees the primal's (dropout's mask).
        rule = spec.forward if spec is not None else None
        inplace = name.endswith("_") and not name.endswith("__") or name == "__setitem__"
        rng = default_generator.get_state() if rule is None or inplace else None
        if inplace:
            with _rule_running():  # (in place: the tangent from the operands as they were)
                tangents = _derived(fn, args, kwargs, rng, inplace=True)
            default_generator.set_state(rng)
            result = fn(*args, **kwargs)
        else:
            with _rule_running():
                result = fn(*args, **kwargs)
                tangents = _tangents(rule, fn, args, kwargs, result, spec, rng)
        outs = _flat(result)
        touts = ([None] * len(outs) if tangents is None else
                 tangents if type(tangents) is list else _flat(tangents))
        for out, t in zip(outs, touts):
            if out is not None and _floating(out) and t is not _NOT_DIFFERENTIABLE:
                if t is None:  # (an output that does not depend on the dual operands)
                    t = _zero_tangent(out)
                if t.shape != out.shape:
                    t = t.expand(*out.shape)
                if t.dtype != out.dtype:
                    t = t.to(dtype=out.dtype)
                set_tangent(out, t)
            elif out is not None:
                out.__dict__.pop("_tangent", None)
        return result

    def converted(self, x: Tensor, what: str) -> None:
        pass


_FORWARD_MODE = _ForwardMode()
_RULE_RUNNING = [False]  # while a rule computes a tangent, its own ops carry none
_NOT_DIFFERENTIABLE = object()  # the tangent of an output without derivative (batch statistics)


@contextlib.contextmanager
def _rule_running() -> Iterator[None]:
    before, _RULE_RUNNING[0] = _RULE_RUNNING[0], True
    try:
        yield
    finally:
        _RULE_RUNNING[0] = before


def _detached(result: Any) -> Any:
    """An op without derivative: its results carry no tangent (an in-place one's drops it)."""
    for out in _flat(result):
        if out is not None:
            out.__dict__.pop("_tangent", None)
    return result


def _flat(v: Any) -> list:
    if isinstance(v, Tensor) or v is None:
        return [v]
    if type(v) is not list and not isinstance(v, tuple):
        return []  # (a plain value: allclose's bool)
    return [x if isinstance(x, Tensor) or x is None else None for x in v]


def _replace(v: Any, new: Callable) -> Any:
    """v with each tensor (at the top level or in a list) replaced by new(tensor)."""
    if isinstance(v, Tensor):
        return new(v)
    if type(v) is list or type(v) is tuple:
        return type(v)(new(x) if isinstance(x, Tensor) else x for x in v)
    return v


def _floating(x: Tensor) -> bool:
    return x.dtype.is_floating_point or x.dtype.is_complex


def _zero_tangent(x: Tensor) -> Tensor:
    return wrap(np.zeros(tuple(x.shape), x.dtype.np))  # (dense, for a sparse x too)


def _tangents(rule: Any, fn: Callable, args: tuple, kwargs: dict, result: Any, spec: Any,
              rng: Any) -> Any:
    if rule is None:
        return _derived(fn, args, kwargs, rng)
    if rule == "linear":
        def tangent_or_zero(x: Tensor) -> Tensor:
            t = tangent_of(x)
            return t if t is not None else _zero_tangent(x) if _floating(x) else x

        def operand(v: Any) -> Any:
            # (a list with a floating tensor is a list of operands, cat's: an integer
            # one adds zeros; integer tensors elsewhere are indices, kept)
            if type(v) in (list, tuple) and any(isinstance(x, Tensor) and _floating(x)
                                                for x in v):
                return _replace(v, lambda x: tangent_or_zero(x) if _floating(x)
                                else _zero_tangent(x))
            return _replace(v, tangent_or_zero)
        return fn(*map(operand, args), **{k: operand(v) for k, v in kwargs.items()})
    if rule == "multilinear":
        return _multilinear(fn, args, kwargs)
    if rule == "elementwise":
        duals = [a for a in (*args, *kwargs.values()) if tangent_of(a) is not None]
        if len(duals) != 1 or duals[0].dtype.is_complex:  # (a complex vjp conjugates)
            return _derived(fn, args, kwargs, None)
        x = duals[0]
        with enable_grad():
            leaf = x.detach().requires_grad_()
            out = fn(*_replace_one(args, x, leaf), **_replace_one(kwargs, x, leaf))
            if not out.requires_grad:
                return None
            return autograd_grad([out], [leaf], [tangent_of(x)])[0]
    bound = _signature(spec.impl).bind(*args, **kwargs)
    bound.apply_defaults()
    primals = bound.arguments
    tangents = {name: (tangent_of(v) if type(v) is Tensor else
                       [tangent_of(x) for x in v] if type(v) in (list, tuple) else None)
                for name, v in primals.items()}
    return rule(primals, tangents, result)


@functools.lru_cache(maxsize=None)
def _signature(fn: Callable) -> inspect.Signature:
    return inspect.signature(fn)


def _replace_one(v: Any, x: Tensor, new: Tensor) -> Any:
    if type(v) is dict:
        return {k: _replace(a, lambda t: new if t is x else t) for k, a in v.items()}
    return [_replace(a, lambda t: new if t is x else t) for a in v]


def _multilinear(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Sum over the dual operands of the op with that operand replaced by its
    tangent, operand by position (x * x has two terms, one per place x takes)."""
    total: Any = None
    for key, i in _dual_slots(args, kwargs):
        a, k = list(args), dict(kwargs)
        box = a if type(key) is int else k
        if i is None:
            box[key] = tangent_of(box[key])
        else:
            seq = list(box[key])
            seq[i] = tangent_of(seq[i])
            box[key] = type(box[key])(seq)
        term = fn(*a, **k)
        total = term if total is None else (
            total + term if isinstance(term, Tensor) else
            type(term)(a + b for a, b in zip(total, term)))
    return total


def _dual_slots(args: tuple, kwargs: dict) -> list:
    """Where the dual operands are: (argument position or name, index in its list or None)."""
    slots = []
    for key, v in (*enumerate(args), *kwargs.items()):
        if type(v) is Tensor:
            if tangent_of(v) is not None:
                slots.append((key, None))
        elif type(v) is list or type(v) is tuple:
            slots += [(key, i) for i, x in enumerate(v)
                      if type(x) is Tensor and tangent_of(x) is not None]
    return slots


def _derived(fn: Callable, args: tuple, kwargs: dict, rng: Any, inplace: bool = False) -> Any:
    """The tangent by the double-vjp trick through the op's own derivative (the
    random draws replayed from generator state `rng`, unless None)."""
    leaves, tangents = [], []

    def leaf_for(x: Tensor) -> Tensor:
        t = tangent_of(x)
        if t is None or not _floating(x):
            return x.detach().clone() if inplace and x is args[0] else x.detach()
        leaf = x.detach().requires_grad_()
        leaves.append(leaf)
        tangents.append(t)
        return leaf.clone() if inplace and x is args[0] else leaf
    with enable_grad():
        a2 = [_replace(a, leaf_for) for a in args]
        k2 = {k: _replace(v, leaf_for) for k, v in kwargs.items()}
        if rng is not None:
            after = default_generator.get_state()
            default_generator.set_state(rng)
        result = fn(*a2, **k2)
        if rng is not None:
            default_generator.set_state(after)
        outs = [o for o in _flat(result) if o is not None and _floating(o) and o.requires_grad]
        if not outs:
            return _NOT_DIFFERENTIABLE if isinstance(result, Tensor) else None
        us = [_zero_tangent(o).requires_grad_() for o in outs]
        gs = autograd_grad(outs, leaves, us, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, tangents) if g is not None]
        try:
            if any(not g.requires_grad for g, _ in pairs):
                raise RuntimeError("a derivative that is not differentiable")
            touts = autograd_grad([g for g, _ in pairs], us, [t for _, t in pairs],
                                  allow_unused=True) if pairs else [None] * len(us)
        except RuntimeError:  # (a gradient kernel without derivative: cdist, grid_sampler)
            touts = [_row_by_row(o, leaves, tangents) for o in outs]
    by_output = dict(zip(map(id, outs), touts))
    flat = [by_output.get(id(o), _NOT_DIFFERENTIABLE) for o in _flat(result)]
    return flat[0] if isinstance(result, Tensor) else flat


def _row_by_row(out: Tensor, leaves: list, tangents: list) -> Tensor:
    """The tangent of `out` one element at a time: element j is the vjp of the
    j-th unit cotangent (a row of the Jacobian) dotted with the input tangents,
    for the ops whose derivative cannot be differentiated once more."""
    flat = np.zeros(out.data.size, out.data.dtype)
    for j in range(flat.size):
        unit = np.zeros(out.data.size, out.data.dtype)
        unit[j] = 1
        rows = autograd_grad([out], leaves, [wrap(unit.reshape(out.data.shape))],
                             retain_graph=True, allow_unused=True)
        flat[j] = sum(np.vdot(r.data, t.data) for r, t in zip(rows, tangents) if r is not None)
    return wrap(flat.reshape(out.data.shape))

