"""The shape of the R closures the bridge makes (`r_compat/src/calls.c`).

- An exported function generated from the Python tables (`torch_*`, `nnf_*`,
  `nn_init_*`, ...) is an R closure with real formals, R torch's where the
  function declares them (`@r_formals`), else the Python function's as R sees
  them (`python_formals`), so that `args()` and RStudio's completion show them.
  Its body is one `.External` that reads the call's frame (R has matched the
  arguments: R's is the one matcher): the arguments given go to Python under
  their Python names (`.weight` as `_weight`, a declared rename), the leading
  ones by position while R's order is Python's, the others by name
  (`FunctionShape`); those left out stay out, so the Python side's defaults
  apply (R torch's own, where they differ, are the binding's:
  `binding.declared_facts`).
- A tensor method `x$name()` is made the same way, once at load; per access
  (`C_method`) a copy of it gets `x`, sent first. What it returns is a policy
  declared here (`METHOD_POLICIES`), read by the bridge at load: `self` for an
  in-place method (the trailing `_`), the tensor with the R attributes of `x`
  kept (`detach`, `clone`), or the result invisibly.

- A method `x$name()` of another Python object R calls the methods of (a distribution,
  a constraint, a storage, a generator: `api.BOUND`) is made the same way from the
  Python method's signature (`bound_shape`), once per class and name when first asked
  (`R/bridge.R`'s `.bound_method`); per access (`C_bind`) a copy of it gets `x`.

`rtorch-py signatures` reads the same formals (`shim_formals`).
"""
from __future__ import annotations

import functools
import inspect
import keyword
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..formals import counted, declared, python_name, python_names
from ..function import NamedList
from ..ops import REGISTRY, OpSpec
from ..ops.out_forms import out_name
from . import nn_api

__all__ = ["NO_DEFAULT", "python_formals", "shim_formals", "r_name", "FunctionShape",
           "function_shape", "bound_shape", "bound_closure", "alist", "r_source", "Names",
           "METHOD_POLICIES", "method_policy"]

NO_DEFAULT = None  # a formal without a default: ("name", NO_DEFAULT, False)
Formal = tuple  # (name, default, has_default)


def python_formals(fn: Callable, shifted: Sequence[str] = (), defaults: dict | None = None,
                   drop_first: bool = False) -> list[tuple[str, Any, bool]]:
    """(name, default, has_default) per argument of a Python function as R calls it:
    `*args` is R's `...`, `**kwargs` is left out; a non-negative whole default of an
    argument in `shifted` (a dim, a position) is one more (R counts from 1), one in
    `defaults` is R's own."""
    params = list(inspect.signature(fn).parameters.values())
    out = []
    for p in params[1:] if drop_first else params:
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:
            out.append(("...", NO_DEFAULT, False))
            continue
        if defaults and p.name in defaults:
            out.append((p.name, defaults[p.name], True))
            continue
        if p.default is p.empty:
            out.append((p.name, NO_DEFAULT, False))
            continue
        d = p.default
        if p.name in shifted and isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            d += 1
        out.append((p.name, d, True))
    return out


def _spec_formals(spec: OpSpec, drop_first: bool = False) -> list:
    return _declared_or(spec.fn, drop_first) or python_formals(
        spec.fn, (*spec.dims, *spec.new_dims, *spec.indices), drop_first=drop_first)


def _declared_or(fn: Callable, drop_first: bool = False) -> list | None:
    """R torch's formals declared for `fn` (rtorch_py.formals), if any: what R sees."""
    formals = declared(fn, method=drop_first)  # (a method's formals: the tensor first)
    if formals is None:
        return None
    return list(formals[1:] if drop_first else formals)


def _op_of(name: str) -> tuple[OpSpec | None, OpSpec | None]:
    """The op whose R function (`torch_<name>`) or out form (`torch_<name>_out`) this is."""
    functions, outs = _op_index(len(REGISTRY))
    spec = functions.get(name)
    return (spec, None) if spec is not None else (None, outs.get(name))


@functools.lru_cache(maxsize=1)
def _op_index(size: int) -> tuple[dict, dict]:
    """The ops by R function name and by out form name, made once per registry size
    (R's load asks for a thousand functions: one scan, not one per function)."""
    functions: dict[str, OpSpec] = {}
    outs: dict[str, OpSpec] = {}
    for s in REGISTRY.values():
        if s.function:
            functions.setdefault(s.function_name, s)
        o = out_name(s)
        if o is not None:
            outs.setdefault(o, s)
    return functions, outs


def _shifted(fn: Callable) -> tuple[str, ...]:
    """The arguments of `fn` (or of the function it binds) that R counts from 1 and
    whose defaults it shows so (dims, class labels: `@r_counted`)."""
    return tuple(k for k, c in counted(fn).items() if c in ("dim", "label"))


def shim_formals(kind: str, name: str, table: dict) -> list:
    """The formals R sees of a shim function (kind "function") or tensor method
    ("method") generated from the Python tables: R torch's where the function
    declares them (`@r_formals`), else the Python function's as R calls it."""
    if kind == "method":
        spec = REGISTRY.get(name)
        if spec is not None and spec.method:
            return _spec_formals(spec, drop_first=True)
        fn = table["METHODS"][name]
        return _declared_or(fn, True) or python_formals(fn, drop_first=True)
    spec, out_of = _op_of(name)
    if spec is not None:
        return _spec_formals(spec)
    if out_of is not None:
        out_arg = "grad_input" if out_of.name.endswith("_backward") else "out"
        return [(out_arg, NO_DEFAULT, False), *_spec_formals(out_of)]
    if name in nn_api.LAYERS:
        cls = nn_api.LAYERS[name]
        return _declared_or(cls) or python_formals(cls.__init__, _shifted(cls), drop_first=True)
    fn = table["FUNCTIONS"][name]  # (a bound one's signature: the function it binds)
    return _declared_or(fn) or python_formals(fn, _shifted(fn))


def r_name(name: str) -> str:
    """A Python argument as R names it: `from_` is R's `from` (a Python keyword); the
    bridge takes R's `from_` too (R torch's torch_can_cast(from_, to)); `_weight` is
    R's `.weight` (rtorch_py.formals.python_name)."""
    if name.startswith("_") and len(name) > 1:
        return "." + name[1:]
    return name[:-1] if name.endswith("_") and keyword.iskeyword(name[:-1]) else name


# --------------------------------------------------------------------------
# Exported functions: formals, and how the frame's arguments reach Python


@dataclass(frozen=True)
class FunctionShape:
    """An exported R function's closure: its formals as R source (`alist(...)`), the
    name each formal is sent to Python under (the callable's own), and how many
    leading formals may go by position (when given, and none before them left out)."""
    formals: str
    send_as: tuple[str, ...]
    positional: int


def _positional_params(fn: Callable, drop_first: bool = False) -> list[str]:
    """The leading parameters that may go by position: those without a default. One
    with a default goes by name, where the R conventions look for it (arange's `dtype`
    given by position in R must not land among arange's numbers)."""
    names = []
    for p in list(inspect.signature(fn).parameters.values())[int(drop_first):]:
        if not (p.kind is p.POSITIONAL_ONLY or
                (p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty)):
            break
        names.append(p.name)
    return names


def _has_kwargs(fn: Callable) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())


def function_shape(name: str, table: dict, kind: str = "function") -> FunctionShape:
    """The closure of the generated R function `name` (a key of table["FUNCTIONS"]), or
    with kind "method" of the tensor method `x$name` (of table["METHODS"]; the tensor,
    not among its formals, goes first), or with kind "class_method" of a built-in layer's
    class method (`nn_embedding_bag$from_pretrained`, nn_api.class_methods), or with kind
    "layer" the formals alone of the built-in layer's generator `name` (nn_api.LAYERS; its
    body is R's, `r_compat/R/nn.R`)."""
    if kind == "layer":  # (a layer's generator: R matches, R passes on what was given)
        formals = shim_formals("function", name, table)
        if declared(nn_api.LAYERS[name]) is not None:  # (R torch's `1` is a double)
            formals = [(n, float(d) if type(d) is int else d, has) for n, d, has in formals]
        return FunctionShape(alist([(r_name(n), d, has) for n, d, has in formals]), (), 0)
    method, out_of = kind == "method", None
    if kind == "class_method":  # (`nn_embedding_bag$from_pretrained`: nn_api.class_methods)
        layer, m = name.split("$")
        source = getattr(nn_api.LAYERS[layer], m)
        formals = _declared_or(source) or python_formals(source)
    else:
        formals = shim_formals(kind, name, table)
    if method:
        spec = REGISTRY.get(name)
        source = spec.fn if spec is not None and spec.method else table["METHODS"][name]
    elif kind == "function":
        spec, out_of = _op_of(name)
        source = (spec or out_of).fn if (spec or out_of) else table["FUNCTIONS"][name]
    return _shape(formals, source, method, out_of is not None)


def bound_shape(fn: Callable) -> FunctionShape:
    """The closure of `obj$name` of a Python object R calls the methods of (a distribution,
    a storage, a generator: `api.BOUND`): the formals of its Python method `fn` without
    `self` (R torch's where declared); the object, not among them, goes first."""
    return _shape(_declared_or(fn, True) or python_formals(fn, drop_first=True), fn, True)


def bound_closure(call: Callable, source: Callable) -> NamedList:
    """What R makes the closure of `obj$name` (or of a class's `$new`) of (R/bridge.R's
    .closure_of): list(fn = call, formals, send_as, positional, invisible), the formals
    those of the Python method `source` without `self`, invisible if it returns None."""
    s = bound_shape(source)
    invisible = inspect.signature(source).return_annotation in (None, "None")
    return NamedList(["fn", "formals", "send_as", "positional", "invisible"],
                     [call, s.formals, Names(s.send_as), s.positional, invisible])


def _shape(formals: list, source: Callable, method: bool, out_form: bool = False
           ) -> FunctionShape:
    """The closure of the Python function `source` whose formals R shows are `formals`:
    what each is sent under, and how many lead by position."""
    renamed = python_names(source)
    if declared(source, method) is not None and not out_form:
        # R torch's formals: each sent under its Python name, by position while R's
        # order is Python's (the rest by name: R has matched them)
        send = tuple(n if n == "..." else python_name(n, renamed) for n, _, _ in formals)
        params = [p.name for p in list(inspect.signature(source).parameters.values())
                  [int(method):] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    else:
        # the Python function's: its names; by position while R's formals are its own
        # positional parameters (an out form: the tensor to write into first)
        lead = [formals[0][0]] if out_form else []
        params = lead + _positional_params(source, drop_first=method)
        send = tuple(n if n == "..." or n in lead else python_name(n, renamed)
                     for n, _, _ in formals)
        formals = [(r_name(n), d, has) for n, d, has in formals]
        if _has_kwargs(source) and all(f[0] != "..." for f in formals):
            formals.append(("...", NO_DEFAULT, False))  # (names it takes beyond its formals)
            send += ("...",)
    positional = 0
    while positional < min(len(send), len(params)) and send[positional] == params[positional]:
        positional += 1
    return FunctionShape(alist(formals), send, positional)


def alist(formals: Sequence[Formal]) -> str:
    """R source of the formals, `alist(self = , dim = 1L, ...)`."""
    def one(name: str, default: Any, has: bool) -> str:
        shown = name if name == "..." or _syntactic(name) else f"`{name}`"
        text = r_source(default) if has else None
        return f"{shown} = " + (text or "")
    return "alist(" + ", ".join(one(*f) for f in formals) + ")"


def _syntactic(name: str) -> bool:
    return name.replace(".", "a").replace("_", "a").isalnum() and not name[0].isdigit() and \
        not name.startswith("_") and name not in ("function", "if", "else", "for", "while",
                                                  "repeat", "break", "next", "TRUE", "FALSE",
                                                  "NULL", "NA", "Inf", "NaN", "in")


def r_source(v: Any) -> str | None:
    """A default as R writes it (None where R can't: the formal is shown without one,
    and, left out, still takes the Python side's default)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return f"{v}L" if abs(v) < 2 ** 31 else repr(float(v))
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Inf" if v > 0 else "-Inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, tuple) and v[:1] == ("expr",) and len(v) == 2:
        return v[1]
    if isinstance(v, (tuple, list)):
        items = [r_source(x) for x in v]
        if any(x is None for x in items):
            return None
        return "list()" if not items and isinstance(v, tuple) else f"c({', '.join(items)})"
    return None


class Names(tuple):
    """The names a function's formals are sent under: held by R as a Python object
    (a plain tuple would become an R list)."""


# --------------------------------------------------------------------------
# Tensor methods: what `x$name(...)` returns

# policy -> how the bridge shapes the method's result (calls.c, C_method):
#   "value": the result as it comes; "self": x itself (in-place methods);
#   "keep_attributes": the result with x's R attributes; "invisible": invisibly
METHOD_POLICIES = ("value", "self", "keep_attributes", "invisible")
_KEEP_ATTRIBUTES = frozenset({"detach", "clone"})


def method_policy(name: str, invisible: frozenset | set = frozenset()) -> str:
    """The policy of the tensor method `name` (`invisible`: the invisible ones)."""
    if name in invisible:
        return "invisible"
    if name.endswith("_"):
        return "self"
    return "keep_attributes" if name in _KEEP_ATTRIBUTES else "value"
