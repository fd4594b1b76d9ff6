"""One binder: an op, an `nnf_*` function or a tensor method as R calls it.

What each argument takes comes from the function's declaration, as in R
torch's (its argument types, read from libtorch's schema):

- the Python annotation says the kind: `Tensor` takes R numbers, integers,
  logicals and arrays too, made tensors as torch_tensor() makes them (doubles
  float32, integers int64, logicals bool), and an optional one (`Tensor | None`)
  NULL or an empty `list()` as none; `Sequence[Tensor]` a list, named or
  not, of such values; `float` (a Scalar) a number or a one-element tensor;
  anything else is passed on as given;
- the R-only facts (`RFacts`, from the op's declaration or `@r_counted`) say
  which arguments R counts from 1 (dims, positions, class labels) and what the
  result looks like in R; R torch's formals, where declared (`@r_formals`), add
  R's own defaults and conventions (`declared_facts`).

R itself has matched a call: the generated closure has R torch's formals and
sends the arguments given under their Python names (`closures.py`), so no
argument is matched or renamed here. A value an argument can't take is R's
error saying what was expected.
"""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..formals import declared, python_name, python_names
from ..function import NamedList
from ..ops.registry import argument_kind, is_optional
from ..tensor import Tensor, wrap
from . import one_based
from .convert import UNDEFINED, RError, _r_tensor

# The R-only facts an op's declaration may give (`@op(r_math=("exp",))`: OpSpec.r),
# with their defaults: R operators (with fixed arguments), Math and Summary group
# generics, an invisible result, the result's names, conventions (tables.py), dims R
# torch gives as they are (0-based: its C++ type is no index, `moveaxis`), dims its R
# code counts (`movedim`: one_based.wrapper_dims).
R_FACTS: dict[str, Any] = {"r_operators": {}, "r_math": (), "r_summary": (), "invisible": False,
                           "r_result_names": (), "r_conventions": (), "r_dims_as_given": (),
                           "r_wrapper_dims": ()}


def r_fact(spec: Any, name: str) -> Any:
    """An op's R fact `name` (a key of R_FACTS), as declared or by default."""
    return spec.r.get(name, R_FACTS[name])


@dataclass(frozen=True)
class RFacts:
    """What R's side of a function needs beyond its Python signature."""
    name: str                                       # R's name (for messages)
    counted: Mapping[str, str] = field(default_factory=dict)  # argument -> how R counts it
                                                    # from 1 (a key of COUNTED)
    returns_indices: Any = False                    # True, k, or a function of the result
    result_names: tuple[str, ...] = ()              # R gets a list with these names
    arguments: tuple[Callable, ...] = ()            # (args, kw) -> (args, kw), first
    results: tuple[Callable, ...] = ()              # result -> R's form
    defaults: Mapping[str, Any] = field(default_factory=dict)  # R values for those left out
    vectors: bool = False                           # R vectors as Python tuples and numbers
                                                    # for the arguments that are no tensors


def _r_class(v: Any) -> str:
    """How R would name a value's class in a message."""
    if isinstance(v, str):
        return "a character string"
    if isinstance(v, (list, tuple, NamedList)):
        return "a list"
    rtype = getattr(v, "rtype", None)
    return f"an R {rtype}" if rtype else f"a {type(v).__name__}"


_NUMBERS = (bool, int, float, complex, np.ndarray)


def _tensor(v: Any, name: str, fn: str) -> Any:
    """A tensor argument: R numbers, logicals, integers, arrays become tensors."""
    if isinstance(v, Tensor) or v is None or v is UNDEFINED:
        return v
    if isinstance(v, _NUMBERS) and (not isinstance(v, np.ndarray) or v.dtype.kind in "biufc"):
        return _r_tensor(v)
    if type(v) is list and v and all(isinstance(x, (bool, int, float, np.ndarray)) for x in v):
        return _r_tensor(v)  # (list(1, 2): as torch_tensor() takes it)
    raise TypeError(f"{fn}(): `{name}` must be a tensor (or an R number, integer, logical or "
                    f"array), not {_r_class(v)}")


def _optional_tensor(v: Any, name: str, fn: str) -> Any:
    """An optional tensor: NULL or an empty list() is none (R torch's own default
    for one is `list()`)."""
    if isinstance(v, (list, NamedList)) and len(v) == 0:
        return None
    return _tensor(v, name, fn)


def _tensors(v: Any, name: str, fn: str) -> Any:
    """A list of tensors: an R list, named or not, of tensors or R values."""
    if isinstance(v, NamedList):
        v = v.values()
    if isinstance(v, (list, tuple)):
        return [_tensor(x, f"{name}[[{i}]]", fn) for i, x in enumerate(v, 1)]
    if isinstance(v, Tensor):
        return v
    raise TypeError(f"{fn}(): `{name}` must be a list of tensors, not {_r_class(v)}")


def _scalar(v: Any, name: str, fn: str) -> Any:
    """A Scalar: a one-element tensor is its number, as in R torch."""
    return v.item() if isinstance(v, Tensor) and v.numel() == 1 else v


def python_value(v: Any) -> Any:
    """An R value as a Python one where no tensor is expected: vectors as tuples,
    one element as a number, whole doubles as ints, named lists as dicts."""
    if isinstance(v, np.ndarray):
        vals = v.reshape(-1).tolist()
        if v.dtype.kind == "f":
            vals = [int(x) if float(x).is_integer() else x for x in vals]
        return vals[0] if len(vals) == 1 else tuple(vals)
    if isinstance(v, NamedList):
        names = v.names()
        if all(names):
            return dict(zip(names, v.values()))
        return [python_value(x) for x in v.values()]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


CASTS: dict[str, Callable] = {"tensor": _tensor, "tensors": _tensors, "scalar": _scalar}

# Types an argument of each kind takes as they are (the fast path's test).
_AS_IS: dict[str | None, frozenset] = {
    "tensor": frozenset({Tensor, type(None)}), "tensors": frozenset(),
    "scalar": frozenset({int, float, bool, type(None)})}
_AS_IS_VECTORS = frozenset({Tensor, int, bool, str, type(None)})
_NOTHING: frozenset = frozenset()


def _position(v: Any) -> Any:
    """A position along a dim (a number, an R vector, an integer tensor, or a list of
    index tensors as torch_index takes) as 0-based."""
    if isinstance(v, list) and any(isinstance(x, Tensor) for x in v):
        return [None if x is None else _position(x) for x in v]
    if isinstance(v, Tensor):
        a = v.data
        if a.dtype.kind in "iu":
            return wrap(one_based.positions(a))
        # whole floats stay floats (ops taking index tensors refuse them), shifted
        # for those taking a number (R torch's narrow reads `start = 1 + x$sum()`)
        if a.dtype.kind == "f" and a.size and np.all(a == np.trunc(a)) and np.all(a != 0):
            return wrap(np.where(a > 0, a - 1, a).astype(a.dtype))
        return v  # (anything else is left for the op to refuse)
    if isinstance(v, np.ndarray):
        return wrap(one_based.positions(v))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return one_based.position(int(v)) if v == int(v) else v
    return v


def _dim_lists(v: Any, ndim: int | None) -> Any:
    """A count stays; lists of dims are 1-based (tensordot's `dims`)."""
    if not isinstance(v, list):
        return v
    dims = [one_based.dims(d, None) for d in v]
    return [d if isinstance(d, tuple) else (d,) for d in dims]


def _ignore_label(v: Any) -> Any:
    return None if v is None else one_based.ignore_label(v)


def _sizes(v: Any) -> Any:
    """A shape as R gives it (a vector) or one size of it, in whole numbers."""
    if v is None or isinstance(v, (list, tuple, np.ndarray, NamedList)):
        return v if v is None else one_based.sizes([v])
    return one_based.integer(v, "size")


# How R counts an argument from 1: (value, the first tensor's ndim) -> 0-based.
COUNTED: dict[str, Callable[[Any, int | None], Any]] = {
    "dim": one_based.dims,
    "new_dim": lambda v, n: one_based.dims(v, None if n is None else n + 1),
    "dim_lists": _dim_lists,
    "position": lambda v, n: _position(v),
    "label": lambda v, n: one_based.index_tensor(v),
    "ignore_label": lambda v, n: _ignore_label(v),
    "wrapper_dim": lambda v, n: one_based.wrapper_dims(v),
    "zero_based": lambda v, n: python_value(v),  # (as R torch gives it: whole doubles as ints)
    # (no counting, but R's whole numbers all the same: a count, a shape)
    "integer": lambda v, n: v if v is None else one_based.integer(v),
    "sizes": lambda v, n: _sizes(v),
}
_NEEDS_NDIM = frozenset({"dim", "new_dim"})


def _counted_step(how: str, name: str) -> Callable[[Any, int | None], Any]:
    """COUNTED's step for argument `name` (a whole number's error names it)."""
    if how == "integer":
        return lambda v, n: v if v is None else one_based.integer(v, name)
    return COUNTED[how]


def _ndim(first: Any) -> int | None:
    if isinstance(first, Tensor):
        return first.ndim
    if isinstance(first, (list, tuple)) and first and isinstance(first[0], Tensor):
        return first[0].ndim
    return None


def _run(fn: Callable, args: Any, kw: dict) -> Any:
    """fn's call; an error naming dims or positions says them as R counts them: its
    own R message (`one_based`), or libtorch's counted as R torch counts it."""
    try:
        return fn(*args, **kw)
    except RError:
        raise  # (R's own error, from R code the call ran: R's counting already)
    except Exception as e:
        r_msg = getattr(e, "one_based", None)
        if r_msg is None:
            r_msg = one_based.message_to_r(str(e))
        if r_msg != str(e):
            err = type(e)(r_msg)
            if hasattr(e, "__notes__"):
                err.__notes__ = e.__notes__
            raise err from None
        raise


def _plan(params: list, facts: RFacts) -> tuple[dict, dict]:
    """Per argument: its step from R's value to Python's, (value, ndim) -> value, and
    the types it takes as they are (the fast path's test)."""
    steps: dict[str, Callable] = {}
    as_is: dict[str, frozenset] = {}
    for p in params:
        if p.name == "self" and p.annotation is p.empty:
            continue  # (a layer's forward: the module, as it is)
        counted, k = facts.counted.get(p.name), argument_kind(p.annotation)
        if counted is not None and k == "tensor" and "label" in counted:
            # class labels given as an R vector: the tensor torch_tensor() makes, counted
            steps[p.name] = lambda v, n, count=COUNTED[counted], a=p.name: \
                count(_tensor(v, a, facts.name), n)
            as_is[p.name] = _NOTHING
        elif counted is not None:
            steps[p.name], as_is[p.name] = _counted_step(counted, p.name), _NOTHING
        elif k is not None:
            cast = _optional_tensor if k == "tensor" and is_optional(p.annotation) else CASTS[k]
            steps[p.name] = lambda v, n, cast=cast, a=p.name: cast(v, a, facts.name)
            as_is[p.name] = _AS_IS[k]
        elif facts.vectors:
            steps[p.name], as_is[p.name] = lambda v, n: python_value(v), _AS_IS_VECTORS
    for name, how in facts.counted.items():  # (one a `**kw` takes: by name)
        steps.setdefault(name, _counted_step(how, name))
        as_is.setdefault(name, _NOTHING)
    return steps, as_is


def _in_r_form(out: Any, facts: RFacts) -> Any:
    """A result as R gets it: positions 1-based, a named list, R's conventions."""
    which = facts.returns_indices
    which = which(out) if callable(which) else which
    if which is True:
        out = one_based.to_r(out)
    elif which is not False and isinstance(out, (tuple, list)):
        out = list(out)
        out[which] = one_based.to_r(out[which])
    if facts.result_names:
        return NamedList(list(facts.result_names), list(out))
    for convention in facts.results:
        out = convention(out)
    return out


def _same(r: Any, py: Any) -> bool:
    """Whether R's default (as Python gets it) is Python's."""
    if isinstance(r, bool) or isinstance(py, bool):
        return type(r) is type(py) and r == py
    if r == () and py is None:  # list(): R torch's optional list
        return True
    try:
        return bool(r == py)
    except (TypeError, ValueError):
        return False


def _spread_options(args: list, kw: dict) -> tuple:
    """R torch's `options = list(dtype = ..., requires_grad = ...)` as keywords."""
    v = kw.pop("options", None)
    if isinstance(v, NamedList) and all(v.names()):
        v = dict(zip(v.names(), v.values()))
    if isinstance(v, dict):
        kw.update(v)
    elif not (v is None or isinstance(v, (list, tuple, NamedList)) and not len(v)):
        raise TypeError("`options` must be a named list of tensor options "
                        "(list(dtype = torch_float(), device = \"cpu\", requires_grad = TRUE))")
    return args, kw


def dots_not_empty(name: str, given: list[tuple[str | None, Any]]) -> TypeError:
    """R torch's `rlang::check_dots_empty()` (E72)."""
    shown = "\n".join(f"* {k or '..' + str(i + 1)}" for i, (k, _) in enumerate(given))
    return TypeError(f"`...` must be empty.\nx Problematic argument{'s' if len(given) > 1 else ''}:"
                     f"\n{shown}\ni {name}() has no such argument; those after its `...` are "
                     "given by name.")


def _dots_empty(name: str, before: int, takes: frozenset) -> Callable:
    """The check of a `...` R torch keeps empty (R torch's `check_dots_empty()`): the
    closure sends what `...` got after the `before` formals it sends by position, or
    under a name no formal has; what Python takes by name passes (torch_normal's dtype)."""
    def check(args: list, kw: dict) -> tuple:
        extra = [(None, v) for v in args[before:]] + [(k, v) for k, v in kw.items()
                                                     if k not in takes]
        if extra:
            raise dots_not_empty(name, extra)
        return args, kw
    return check


def declared_facts(name: str, fn: Callable, method: bool = False,
                   counted: Mapping[str, str] | None = None) -> tuple[dict, tuple]:
    """What R torch's formals declared for `fn` (rtorch_py.formals) add to its R
    callable: R's constant defaults that are not Python's (`nan = NULL`; R's 1-based
    dims compared counted from 0), filled where a call leaves them out; and argument
    conventions: `options` spread into keywords, a `...` R torch keeps empty checked."""
    formals = declared(fn, method)
    if formals is None:
        return {}, ()
    renamed = python_names(fn)
    params = inspect.signature(fn).parameters
    takes = frozenset(n for n, p in params.items() if p.kind is not p.VAR_KEYWORD)
    defaults = {}
    for r_name, d, has in formals[int(method):]:
        n = python_name(r_name, renamed)
        if not has or r_name == "options" or (isinstance(d, tuple) and d[:1] == ("expr",)):
            continue
        if isinstance(d, tuple) and d and all(isinstance(x, str) for x in d):
            d = d[0]  # (match.arg()'s choices: the first)
        p, how = params.get(n), (counted or {}).get(n)
        try:
            given = COUNTED[how](d, None) if how is not None and d is not None else d
        except (TypeError, ValueError, IndexError):
            given = d
        if p is None or p.default is p.empty or not _same(given, p.default):
            defaults[n] = d
    conventions: tuple = ()
    names = [f[0] for f in formals]
    if "options" in names and "options" not in params:
        conventions += (_spread_options,)
    if "..." in names and not any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        # (the closure sends by position the leading formals in Python's order)
        order = [p for p in params if params[p].kind in (params[p].POSITIONAL_ONLY,
                                                           params[p].POSITIONAL_OR_KEYWORD)]
        sent = [python_name(r, renamed) for r in names[:names.index("...")]]
        before = next((i for i, (a, b) in enumerate(zip(sent, order)) if a != b),
                      min(len(sent), len(order)))
        conventions += (_dots_empty(name, before, takes),)
    return defaults, conventions


def with_declared(name: str, fn: Callable, method: bool = False) -> Callable:
    """`fn` with what its declared R formals add (declared_facts); `fn` itself where
    they add nothing (R has matched the call against them)."""
    if getattr(fn, "r_bound", False):  # (bound already: an nnf_* function, nn_api)
        return fn
    defaults, conventions = declared_facts(name, fn, method)
    if not defaults and not conventions:
        return fn
    return r_callable(fn, RFacts(name, defaults=defaults, arguments=conventions),
                      cast=False)


def _translated_default(step: Callable | None, v: Any) -> Any:
    """An R default as the function takes it: its value counted from 0 where R
    counts it from 1 (a default depends on no operand's ndim)."""
    return v if step is None or v is None else step(v, None)


def r_callable(fn: Callable, facts: RFacts, declared_by: Callable | None = None,
               cast: bool = True) -> Callable:
    """`fn` as R calls it (R has matched the arguments against the closure's formals,
    which sends them under their Python names): cast by their declared kinds (unless
    not `cast`) and counted as R counts them, R's own defaults filled, its result in
    R's form. `declared_by`: the function whose signature declares the arguments
    (default `fn`)."""
    params = list(inspect.signature(declared_by or fn).parameters.values())
    steps, as_is = _plan(params, facts) if cast else ({}, {})
    plain_result = facts.returns_indices is False and not facts.result_names and \
        not facts.results
    fast = plain_result and not facts.arguments and not facts.defaults
    if not steps and fast:
        return fn
    ndim_needed = any(facts.counted.get(n) in _NEEDS_NDIM for n in steps)
    first = params[0].name
    var = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    position = {n: i for i, n in enumerate(positional)}
    at = [steps.get(n) for n in (*positional, var)]  # (the last: for any further)
    last = len(at) - 1
    # the fast path's test per position (None: any value), a `*more`'s repeated
    fine = tuple(as_is.get(n) for n in (*positional, *[var] * (8 if var else 0)))
    # R's defaults as Python takes them, translated once (`ignore_index = 3`: 2)
    defaults = {k: _translated_default(steps.get(k), v) for k, v in facts.defaults.items()}

    def translated(args: tuple, kw: dict) -> Any:
        for convention in facts.arguments:
            args, kw = convention(list(args), kw)
        ndim = _ndim(args[0] if args else kw.get(first)) if ndim_needed else None
        args = [v if (step := at[min(i, last)]) is None else step(v, ndim)
                for i, v in enumerate(args)]
        kw = {k: (steps[k](v, ndim) if k in steps else v) for k, v in kw.items()}
        for k, v in defaults.items():
            if k not in kw and position.get(k, sys.maxsize) >= len(args):
                kw[k] = v
        out = _run(fn, args, kw)
        return out if plain_result else _in_r_form(out, facts)

    def call(*args: Any, **kw: Any) -> Any:
        if fast and len(args) <= len(fine):
            # Fast path (labelled): every value one its argument takes as it is
            # (`x$mm(w)`, `x$sum()`, `x$clamp(min = 0)`): no translation
            for v, ok in zip(args, fine):
                if ok is not None and type(v) not in ok:
                    break
            else:
                for k in kw:
                    if k in steps and type(kw[k]) not in as_is[k]:
                        break
                else:
                    return _run(fn, args, kw)
        return translated(args, kw)
    call.__name__ = call.__qualname__ = getattr(fn, "__name__", facts.name)
    call.__wrapped__ = declared_by or fn  # type: ignore[attr-defined] (its signature)
    call.r_bound = True  # type: ignore[attr-defined]
    return call
