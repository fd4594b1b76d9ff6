"""Named tensors' user API: `rename()`, `rename_()`, `refine_names()`,
`align_to()` (Tensor methods, attached by the public face), and the same as R
calls them.

A tensor's dim names are its own data (`rtorch_py/tensor.py`: `x.names`,
`x.has_names()`, `names=` in the creation functions); an op's result gets
names by the op's rule (`rtorch_py/ops/names.py`), and dims may be given by
name to every op (`rtorch_py/ops/dispatch.py`). In R, `x$names` is NULL for an
unnamed tensor and a character vector otherwise ("*" for an unnamed dim, as
libtorch says it).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .ops.views import alias
from .tensor import (ELLIPSIS, Tensor, check_names, describe_names, get_names, names_of,
                     position, set_names, show_names)

__all__ = ["rename", "rename_", "refine_names", "align_to", "align_as", "r_names", "r_methods",
           "position", "set_names"]  # (the last two: what R's tensor API reads here)


def _flat(names: Sequence) -> list:
    """Names given one by one or as one list (R's `c(...)`)."""
    if len(names) == 1 and isinstance(names[0], (list, tuple)):
        return list(names[0])
    return list(names)


def _expand(given: Sequence, ndim: int, fill: Sequence, what: str) -> list:
    """Names with "..." standing for the dims not mentioned (filled from `fill`)."""
    given = list(given)
    if ELLIPSIS not in given:
        return given
    if given.count(ELLIPSIS) > 1:
        raise RuntimeError(f"{what}: '...' may appear once in {show_names(given)}")
    i = given.index(ELLIPSIS)
    k = ndim - (len(given) - 1)
    if k < 0:
        raise RuntimeError(f"{what}: {len(given) - 1} names {show_names(given)} given for a "
                           f"tensor with {ndim} dims")
    return given[:i] + list(fill[i:i + k]) + given[i + 1:]


def _alias(x: Tensor, names: tuple | None) -> Tensor:
    """A view of x (same data, gradient passed through) with these names."""
    return set_names(alias(x), names)


def rename(self: Tensor, *names: Any, **rename_map: str) -> Tensor:
    """A view with new names: positionally (`rename("a", "b")`, "..." for the
    dims left as they are, `rename(None)` to drop them) or by mapping
    (`rename(W = "a")`)."""
    return _alias(self, _renamed(self, names, rename_map, "rename"))


def rename_(self: Tensor, *names: Any, **rename_map: str) -> Tensor:
    """rename() in place."""
    return set_names(self, _renamed(self, names, rename_map, "rename_"))


def _renamed(x: Tensor, names: Sequence, mapping: dict, what: str) -> tuple | None:
    ndim = x.data.ndim
    current = get_names(x)
    if names and mapping:
        raise RuntimeError(f"{what}: give new names either one per dim or as old = new, "
                           "not both")
    if mapping:
        if names_of(x) is None:
            raise RuntimeError(f"{what}: the tensor has no names "
                               f"({describe_names(None, ndim)}), so no dim can be renamed by "
                               f"name ({', '.join(mapping)}); give one name per dim instead, "
                               "e.g. rename('a', 'b')")
        new = list(current)
        for old, to in mapping.items():
            if old not in current:
                raise RuntimeError(f"{what}: no dim is called '{old}' in "
                                   f"{describe_names(current, ndim)}, so it can't be renamed to "
                                   f"'{to}'")
            new[current.index(old)] = to
        return check_names(new, ndim)
    given = _flat(names)
    if given == [None] or not given:
        return None
    return check_names(_expand(given, ndim, current, what), ndim)


def refine_names(self: Tensor, *names: Any) -> Tensor:
    """A view whose unnamed dims get these names; named dims must keep theirs."""
    ndim = self.data.ndim
    current = get_names(self)
    new = _expand(_flat(names), ndim, current, "refine_names")
    new = list(check_names(new, ndim) or (None,) * ndim)
    for i, (old, to) in enumerate(zip(current, new)):
        if old is not None and old != to:
            raise RuntimeError(f"refine_names: dim {i} is already called '{old}' in "
                               f"{describe_names(current, ndim)}; it can't be refined to "
                               f"{'None' if to is None else repr(to)} (use rename() to change "
                               "a name)")
    return _alias(self, check_names(new, ndim))


def align_to(self: Tensor, *names: Any) -> Tensor:
    """The dims permuted into this order of names ("..." for the others in
    their order); a name the tensor lacks becomes a new dim of size 1."""
    current = names_of(self)
    ndim = self.data.ndim
    if current is None or None in current:
        raise RuntimeError(f"align_to: every dim of the tensor must be named, got "
                           f"{describe_names(current, ndim)}; name them first with rename()")
    given = _flat(names)
    if ELLIPSIS in given:
        rest = [n for n in current if n not in given]
        i = given.index(ELLIPSIS)
        given = given[:i] + rest + given[i + 1:]
    missing = [n for n in current if n not in given]
    if missing:
        raise RuntimeError(f"align_to: the order {show_names(given)} leaves out dims "
                           f"{show_names(missing)} of {describe_names(current, ndim)}; list "
                           "every dim (or '...')")
    check_names(given, len(given))
    perm = [current.index(n) for n in given if n in current]
    out = _alias(self, None)  # (reshape takes no named tensor)
    if perm != list(range(ndim)):
        out = out.permute(perm)
    shape = [self.data.shape[current.index(n)] if n in current else 1 for n in given]
    if len(shape) != ndim:
        out = out.reshape(tuple(shape))
    return set_names(out, given)


def align_as(self: Tensor, other: Tensor) -> Tensor:
    """align_to(other's names): the dims permuted, and new ones of size 1, as other's."""
    names = names_of(other)
    if names is None or None in names:
        raise RuntimeError(f"align_as: `other` must have every dim named, got "
                           f"{describe_names(names, other.data.ndim)}")
    return align_to(self, names)


def r_names(x: Any) -> Any:
    """R torch's `x$names`: NULL for an unnamed tensor, else "*" for an unnamed dim."""
    n = names_of(x) if isinstance(x, Tensor) else None
    return None if n is None else ["*" if v is None else v for v in n]


def _r_refine_names(self: Tensor, names: Any) -> Tensor:
    """R torch's `x$refine_names(names)`: the names as one vector."""
    return refine_names(self, names)


def _r_align_to(self: Tensor, names: Any = None, order: Any = None,
                ellipsis_idx: Any = None) -> Tensor:
    """R torch's `x$align_to(names)`, or libtorch's other form `x$align_to(order,
    ellipsis_idx)`: the names in `order` with "..." at position `ellipsis_idx`."""
    if names is not None:
        return align_to(self, names)
    order = list(_flat([order]))
    order.insert(int(ellipsis_idx), "...")
    return align_to(self, order)


def r_methods() -> dict[str, Callable]:
    """The same methods as R calls them (`x$rename(W = "a")`, `x$refine_names(c(...))`,
    with R torch's arguments)."""
    return {"has_names": Tensor.has_names, "rename": rename, "rename_": rename_,
            "refine_names": _r_refine_names, "align_to": _r_align_to, "align_as": align_as}
