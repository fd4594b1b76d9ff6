"""R's argument matching for a function whose R formals are declared
(`rtorch_py.formals.r_formals`): R torch's formals, not the Python signature's.

`bind(name, fn)` gives the callable R calls (`matcher()` the matching alone, which
the ops' R callables run inside theirs, tables.r_callable): it matches the arguments against
R torch's formals as R does (by exact name, then by position up to `...`), so
an argument R torch's function has not is R's error ("unused argument", E71;
a `...` that R torch keeps empty, E72), fills R's constant defaults where they
are not Python's, and calls `fn` with its Python names (R's `.weight` is
Python's `_weight`; a `from` Python's `from_`; R torch's `options`, a list of
tensor options, is spread into Python's keywords). A function declaring none
is returned as it is.

Fast path (labelled): where R's formals are the Python function's first ones,
in order and with the same names (PyTorch's extra arguments left out), the
arguments go on as given, after a check of their count and names.
"""
from __future__ import annotations

import inspect
import keyword
from typing import Any, Callable

import numpy as np

from ..formals import NO_DEFAULT, declared, python_names
from ..function import NamedList

_SPREAD = "options"  # R torch's list of tensor options (dtype, device, requires_grad)


def python_name(r_name: str) -> str:
    """An R argument's Python name: `.weight` is `_weight`, `from` is `from_`."""
    if r_name.startswith("."):
        return "_" + r_name[1:]
    return r_name + "_" if keyword.iskeyword(r_name) else r_name


def _r_text(v: Any) -> str:
    """A value as R would show it in an error message, where it is short."""
    if isinstance(v, np.ndarray) and v.size == 1:
        v = v.reshape(-1)[0].item()
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return f"{v:.15g}"
    if isinstance(v, str):
        return f'"{v}"'
    return "..."


def unused(name: str, given: list[tuple[str | None, Any]], formals: tuple) -> TypeError:
    """R's error for arguments a function has not (E71)."""
    shown = ", ".join(f"{k} = {_r_text(v)}" if k else _r_text(v) for k, v in given)
    return TypeError(f"unused argument{'s' if len(given) > 1 else ''} ({shown})\n"
                     f"i {name}() takes R torch's arguments: "
                     f"{', '.join(f[0] for f in formals) or 'none'}")


def dots_not_empty(name: str, given: list[tuple[str | None, Any]]) -> TypeError:
    """R torch's `rlang::check_dots_empty()` (E72)."""
    shown = "\n".join(f"* {k or '..' + str(i + 1)}" for i, (k, _) in enumerate(given))
    return TypeError(f"`...` must be empty.\nx Problematic argument{'s' if len(given) > 1 else ''}:"
                     f"\n{shown}\ni {name}() has no such argument; those after its `...` are "
                     "given by name.")


def _same(r: Any, py: Any) -> bool:
    if isinstance(r, bool) or isinstance(py, bool):
        return type(r) is type(py) and r == py
    if r == () and py is None:  # list(): R torch's optional list
        return True
    if isinstance(r, tuple) and r and all(isinstance(x, str) for x in r):
        return py == r[0]  # match.arg()'s choices: the first
    return r == py


def by_r_positions(names: list[str], args: tuple, kw: dict) -> tuple[dict, list]:
    """R's matching after names: the arguments given by name, then the positional
    ones bound in order to the `names` not given by name (`f(x, offset = 0, -2, -1)`);
    and the positional ones left over, as (None, value)."""
    bound = dict(kw)
    free = [n for n in names if n not in bound]
    bound.update(zip(free, args))
    return bound, [(None, v) for v in args[len(free):]]


class Matcher:
    """R torch's formals of one function, ready to match a call's arguments."""

    def __init__(self, name: str, formals: tuple, fn: Callable,
                 renamed: dict[str, str] | None = None, method: bool = False) -> None:
        self.shown = formals[1:] if method else formals  # (a method's: without the tensor)
        self.name, self.renamed = name, renamed or {}
        params = inspect.signature(fn).parameters
        if method:  # (the tensor: the Python function's first argument, whatever its name)
            formals = ((next(iter(params)), NO_DEFAULT, False), *formals[1:])
        names = [f[0] for f in formals]
        self.dots = "..." in names
        self.before = names[:names.index("...")] if self.dots else names  # by position
        # R's names, each with its position (those after `...`: by name only)
        self.position = {n: (i if i < len(self.before) else len(names))
                          for i, n in enumerate(names) if n != "..."}
        self.py_params = frozenset(p.name for p in params.values()
                                   if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
        # R's constant defaults that are not Python's: given when the call leaves them out
        self.fill = {}
        for i, (n, d, has) in enumerate(formals):
            p = params.get(self.python_name(n))
            if has and not (isinstance(d, tuple) and d[:1] == ("expr",)) and n != _SPREAD and \
                    (p is None or p.default is p.empty or not _same(d, p.default)):
                self.fill[n] = (i, d[0] if isinstance(d, tuple) and d and
                                all(isinstance(x, str) for x in d) else d)
        positional = [p.name for p in params.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        # R's first positions that are Python's too (given on as they are)
        self.direct = 0
        while self.direct < min(len(self.before), len(positional)) and \
                positional[self.direct] == self.before[self.direct]:
            self.direct += 1
        # fast path: R's names are Python's (R's later positions: Python keywords)
        self.simple = all(self.python_name(n) == n and n in self.py_params
                          for n in self.position) and _SPREAD not in self.position
        # fast path: a call by position alone in this range is Python's as it is (no
        # name to check, no R default to fill in)
        self.least = max((i + 1 for i, _ in self.fill.values()), default=0)
        self.most = self.direct if self.simple else -1

    def python_name(self, r_name: str) -> str:
        return self.renamed.get(r_name) or python_name(r_name)

    def __call__(self, args: tuple, kw: dict) -> tuple[tuple, dict]:
        """A call's arguments as R matched them, in Python's names."""
        n = len(args)
        if n > len(self.before):
            extra = [(None, v) for v in args[len(self.before):]]
            if self.dots:
                raise dots_not_empty(self.name, extra)
            raise unused(self.name, extra, self.shown)
        shifted = False  # (a name for one of the first n formals: R's positions move past it)
        for k in kw:
            i = self.position.get(k)
            if i is None:
                if not self.dots:
                    raise unused(self.name, [(k, kw[k])], self.shown)
                if k not in self.py_params:  # (`...` passes on what Python takes by name)
                    raise dots_not_empty(self.name, [(k, kw[k])])
            elif i < n:
                shifted = True
        if self.simple and not shifted:  # the fast path
            if n > self.direct or self.fill:
                kw = dict(kw)
                for k, v in zip(self.before[self.direct:], args[self.direct:]):
                    if k in kw:
                        raise TypeError(f"formal argument \"{k}\" matched by multiple "
                                        f"actual arguments")
                    kw[k] = v
                args = args[:self.direct]
                for k, (i, v) in self.fill.items():
                    if i >= n and k not in kw:
                        kw[k] = v
            return args, kw
        bound, extra = by_r_positions(self.before, args, kw)
        if extra:
            raise dots_not_empty(self.name, extra) if self.dots else \
                unused(self.name, extra, self.shown)
        for k, (_, v) in self.fill.items():
            bound.setdefault(k, v)
        out: dict = {}
        for k, v in bound.items():
            if k == _SPREAD and _SPREAD not in self.py_params:
                out.update(_options(v))
            else:
                out[self.python_name(k)] = v
        return (), out


def _options(v: Any) -> dict:
    """R torch's `options = list(dtype = ..., device = ...)` as keywords."""
    if v is None or v == ():
        return {}
    if isinstance(v, NamedList) and all(v.names()):
        return dict(zip(v.names(), v.values()))
    if isinstance(v, dict):
        return v
    raise TypeError("`options` must be a named list of tensor options "
                    "(list(dtype = torch_float(), device = \"cpu\", requires_grad = TRUE))")


def matcher(name: str, declared_by: Callable, method: bool = False) -> Matcher | None:
    """The matcher of R torch's formals declared for `declared_by` (as a tensor method
    with `method`), or None where none are."""
    formals = declared(declared_by, method)
    if formals is None:
        return None
    source = declared_by
    while getattr(source, "__r_formals__", None) is None:
        source = source.__wrapped__  # (the signature is the declared function's)
    return Matcher(f"x${name}" if method else name, formals, source, python_names(source),
                   method)


def bind(name: str, fn: Callable, declared_by: Callable | None = None,
         method: bool = False) -> Callable:
    """`fn` as R calls it (as a tensor method with `method`), under the R formals
    declared for `declared_by` (default: `fn`); `fn` itself where none are."""
    match = matcher(name, fn if declared_by is None else declared_by, method)
    if match is None:
        return fn
    least, most = match.least, match.most

    def call(*args: Any, **kw: Any) -> Any:
        if not kw and least <= len(args) <= most:  # the fast path
            return fn(*args)
        args, kw = match(args, kw)
        return fn(*args, **kw)
    call.__name__ = call.__qualname__ = getattr(fn, "__name__", name)
    call.__wrapped__ = declared_by or fn  # type: ignore[attr-defined] (its formals)
    return call
