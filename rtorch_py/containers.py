"""Plain containers shared by every layer: `NamedList`, R's named list.

This module imports nothing from the project.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence


class NamedList:
    """An R-like named list: `s["weight"]`, `s.weight`, `s[0]` (0-based in
    Python), iteration over values, `names()`, `len()`."""

    # The instance __dict__ holds the values by name too, so that `s.weight`
    # is a plain attribute read (a __getattr__ fallback costs an exception).
    __slots__ = ("_names", "_values", "__dict__")

    def __init__(self, names: Sequence[str], values: Sequence[Any]) -> None:
        # lists are kept as given (nobody changes them afterwards: it is read-only)
        names = names if type(names) is list else list(names)
        values = values if type(values) is list else list(values)
        _fill(self, names, values)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return self._values[self._names.index(key)]
            except ValueError:
                raise KeyError(f"no element named {key!r}; names are {self._names}") from None
        return self._values[key]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._values[self._names.index(name)]
        except ValueError:
            raise AttributeError(f"no element named {name!r}; names are {self._names}") \
                from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a NamedList is read-only")

    def get(self, key: str, default: Any = None) -> Any:
        return self._values[self._names.index(key)] if key in self._names else default

    def __contains__(self, key: Any) -> bool:
        return key in self._names

    def __iter__(self) -> Iterator:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def names(self) -> list:
        return list(self._names)

    def items(self) -> list:
        return list(zip(self._names, self._values))

    def keys(self) -> list:
        return list(self._names)

    def values(self) -> list:
        return list(self._values)

    def __repr__(self) -> str:
        return "NamedList(" + ", ".join(f"{n or '<unnamed>'}={v!r}"
                                        for n, v in zip(self._names, self._values)) + ")"


_set_names = NamedList._names.__set__
_set_values = NamedList._values.__set__
_RESERVED = frozenset(n for n in dir(NamedList) if not n.startswith("_"))
_new = object.__new__


def named_list(names: list, values: list) -> NamedList:
    """`NamedList(names, values)` from two lists the caller gives up (kept, not
    copied): the constructor without its checks, for per-call paths (a custom
    function's saved values)."""
    nl = _new(NamedList)
    _fill(nl, names, values)
    return nl


def _fill(nl: NamedList, names: list, values: list) -> None:
    _set_names(nl, names)
    _set_values(nl, values)
    by_name = nl.__dict__
    i = 0
    for n in names:  # (cheaper than a zip)
        # the first of repeated names wins, as with R's `$`; methods keep their names
        if n and n not in by_name and n not in _RESERVED and n[0] != "_":
            by_name[n] = values[i]
        i += 1
