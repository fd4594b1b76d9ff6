"""R torch's formal arguments, declared where they are not the Python function's.

A function of the package has PyTorch's signature in Python. Where R torch's
function has other formals (PyTorch's extra arguments it lacks, one `shape`
vector where Python takes sizes one by one, other defaults, another order), the
function's declaration says so once, in R's own words:

    @r_formals("self, dim, unbiased = TRUE, keepdim = FALSE")
    @op(dims=("dim",), ...)
    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None): ...

Both sides read it: the generated R function has these formals, so R matches a
call as R torch's (an argument R torch has not is R's "unused argument" error),
and sends what it was given under the Python names (`rtorch_py.r.closures`); the
R binding fills R's constant defaults that are not Python's (`rtorch_py.r.binding`);
the signature check
(`rtorch-py signatures`) compares them with R torch's. For a tensor method the
first formal is the tensor (R torch's `x$std(dim)` has no `self`); a method's
formals may be declared apart (`method=`).
"""
from __future__ import annotations

import keyword
import re
from typing import Any, Callable, TypeVar

__all__ = ["r_formals", "r_counted", "declared", "counted", "python_names", "python_name",
           "parse", "NO_DEFAULT"]

NO_DEFAULT = None  # a formal without a default: ("name", NO_DEFAULT, False)
Formal = tuple  # (name, default, has_default); an expression default is ("expr", text)
F = TypeVar("F", bound=Callable)

_NUMBER = re.compile(r"-?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+)L?$")
_CONSTANTS = {"TRUE": True, "FALSE": False, "NULL": None, "c()": None, "list()": (),
              "Inf": float("inf"), "-Inf": float("-inf"), "NaN": float("nan")}


def _split(text: str) -> list[str]:
    """`text` cut at its top-level commas (not those inside brackets or strings)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _value(text: str) -> Any:
    """An R default as a value (TRUE, NULL, 1L, -100, 1e-12, "mean", c("a", "b")),
    or ("expr", text) for anything computed (`torch_int64()`)."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    if _NUMBER.match(text):
        t = text.rstrip("L")
        return int(t) if re.fullmatch(r"-?\d+", t) else float(t)
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text.startswith("c(") and text.endswith(")"):
        items = [_value(x) for x in _split(text[2:-1])]
        if not any(isinstance(x, tuple) and x[:1] == ("expr",) for x in items):
            return tuple(items)
    return ("expr", text)


def parse(text: str) -> tuple[Formal, ...]:
    """R formals as written in R (`"self, dim = 1L, ..."`): (name, default, has_default)."""
    out = []
    for part in _split(text):
        name, eq, default = part.partition("=")
        name = name.strip()
        out.append((name, _value(default.strip()), True) if eq else (name, NO_DEFAULT, False))
    return tuple(out)


def r_formals(text: str, *, method: str | None = None,
              python_names: dict[str, str] | None = None) -> Callable[[F], F]:
    """Declare R torch's formals of the decorated function (see the module doc);
    `method`: the tensor method's where they are not the function's (R torch's
    `x$mm(mat2)` beside `torch_mm(self, mat2, out_dtype)`), without the tensor;
    `python_names`: an R argument's Python name where it is another (R torch's
    `avg_weights`, PyTorch's `average_attn_weights`)."""
    formals = {"function": parse(text),
               "method": parse(text) if method is None else parse("self, " + method),
               "python_names": dict(python_names or {})}

    def declare(fn: F) -> F:
        fn.__r_formals__ = formals  # type: ignore[attr-defined]
        return fn
    return declare


def r_counted(**how: str) -> Callable[[F], F]:
    """Declare the arguments of the decorated function that R counts from 1, and
    how: `@r_counted(target="label", ignore_index="ignore_label", dim="dim")`
    (the kinds: rtorch_py.r.binding.COUNTED). R gives them 1-based; a label left
    out takes its declared default as R's."""
    def declare(fn: F) -> F:
        fn.__r_counted__ = dict(how)  # type: ignore[attr-defined]
        return fn
    return declare


def counted(fn: Any) -> dict[str, str]:
    """The arguments of `fn` (or a function it wraps) that R counts from 1, and how."""
    while fn is not None:
        found = getattr(fn, "__r_counted__", None)
        if found is not None:
            return found
        fn = getattr(fn, "__wrapped__", None)
    return {}


def _declaration(fn: Any) -> dict | None:
    """The `@r_formals` declaration of `fn`, a function it wraps, or a class (its own:
    a layer's subclasses declare theirs)."""
    while fn is not None:
        found = vars(fn).get("__r_formals__") if isinstance(fn, type) else \
            getattr(fn, "__r_formals__", None)
        if found is not None:
            return found
        fn = getattr(fn, "__wrapped__", None)
    return None


def declared(fn: Any, method: bool = False) -> tuple[Formal, ...] | None:
    """The R formals declared for `fn`, if any; those of the tensor method with
    `method` (the tensor first)."""
    found = _declaration(fn)
    return None if found is None else found["method" if method else "function"]


def python_names(fn: Any) -> dict[str, str]:
    """R argument -> Python argument, where `fn`'s declaration renames one."""
    found = _declaration(fn)
    return {} if found is None else found["python_names"]


def python_name(r_name: str, renamed: dict[str, str] | None = None) -> str:
    """An R argument's Python name: as a declaration renames it (`renamed`, from
    `python_names`), else `.weight` is `_weight` and `from` is `from_`."""
    if renamed and r_name in renamed:
        return renamed[r_name]
    if r_name.startswith("."):
        return "_" + r_name[1:]
    return r_name + "_" if keyword.iskeyword(r_name) else r_name
