"""Sample inputs of the indexing ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample  # noqa: F401


def gather() -> list:
    return [sample(T((3, 4)), 1, T((3, 2), dtype="int64", low=0, high=4)),
            sample(T((3, 4)), 0, T((2, 4), dtype="int64", low=0, high=3)),
            sample(T((3, 4)), -1, T((2, 1), dtype="int64", low=0, high=4)),
            sample(T((3, 4), dtype="bool"), 1, T((3, 2), dtype="int64", low=0, high=4))]


def where() -> list:
    return [sample(T((2, 3), dtype="bool"), T((2, 3)), T((2, 3))),
            sample(T((2, 3), dtype="bool"), T((2, 3)), T((3,))),
            sample(T((3, 4), dtype="bool"), T((3, 4)), 0.0),
            sample(T((3, 4), dtype="bool"), 1.5, T((4,))),
            sample(T((3, 1), dtype="bool"), T((3, 4)), T((4,))),
            sample(T((3,), dtype="bool"), T((3,), dtype="int64"), T((3,)), note="int and float")]
    # (where(condition) alone gives positions: tested by hand until R's tables can
    # shift positions of that form only)


def masked_fill() -> list:
    return [sample(T((2, 3)), T((2, 3), dtype="bool"), 0.5)]


def index_select() -> list:
    return [sample(T((4, 3)), 0, T((2,), dtype="int64", low=0, high=4)),
            sample(T((4, 3)), 1, T((5,), dtype="int64", low=0, high=3), note="repeats"),
            sample(T((4, 3)), -1, T((0,), dtype="int64", low=0, high=3), note="empty"),
            sample(T((4, 3), dtype="int64"), 0, T((2,), dtype="int64", low=0, high=4))]


def take() -> list:
    return [sample(T((3, 4)), T((2, 3), dtype="int64", low=0, high=12)),
            sample(T((5,)), T((4,), dtype="int64", low=0, high=5)),
            sample(T(()), T((2,), dtype="int64", low=0, high=1)),
            sample(T((2, 3), dtype="int64"), T((2,), dtype="int64", low=0, high=6))]


def take_along_dim() -> list:
    return [sample(T((3, 4)), T((3, 2), dtype="int64", low=0, high=4), 1),
            sample(T((3, 4)), T((5,), dtype="int64", low=0, high=12)),
            sample(T((3, 4)), T((1, 4), dtype="int64", low=0, high=3), 0, note="broadcast")]


def scatter() -> list:
    # (one index a row or column: a position written twice has no defined winner; src
    # of the index's shape: PyTorch's own backward refuses a larger one)
    return [sample(T((3, 5)), 0, T((1, 5), dtype="int64", low=0, high=3), T((1, 5))),
            sample(T((3, 5)), 1, T((3, 1), dtype="int64", low=0, high=5), T((3, 1))),
            sample(T((3, 5)), 1, T((2, 2), dtype="int64", low=0, high=5), value=1.5),
            sample(T((3, 5), dtype="int64"), 0, T((1, 5), dtype="int64", low=0, high=3),
                   value=7)]


def scatter_add() -> list:
    return [sample(T((3, 5)), 0, T((4, 5), dtype="int64", low=0, high=3), T((4, 5))),
            sample(T((3, 5)), 1, T((3, 2), dtype="int64", low=0, high=5), T((3, 2)))]


def index_add() -> list:
    return [sample(T((4, 3)), 0, T((3,), dtype="int64", low=0, high=4), T((3, 3))),
            sample(T((4, 3)), 1, T((2,), dtype="int64", low=0, high=3), T((4, 2)), alpha=2.0)]


def index_copy() -> list:
    return [sample(T((4, 3)), 0, T((2,), dtype="int64", low=2, high=4) , T((2, 3)),
                   note="(distinct positions: a repeated one's winner is unspecified)"),
            sample(T((4, 3)), 1, T((1,), dtype="int64", low=0, high=3), T((4, 1)))]


def index_reduce() -> list:
    out = []
    for reduce in ("mean", "amax", "amin", "prod"):
        low = 0.5 if reduce == "prod" else -2.0
        out += [sample(T((4, 3), low=low, distinct=True), 0,
                       T((3,), dtype="int64", low=0, high=4), T((3, 3), low=low, distinct=True),
                       reduce),
                sample(T((3, 4), low=low, distinct=True), 1,
                       T((5,), dtype="int64", low=0, high=4), T((3, 5), low=low, distinct=True),
                       reduce, include_self=False)]
    return out + [sample(T((4,), dtype="int64"), 0, T((3,), dtype="int64", low=0, high=4),
                         T((3,), dtype="int64"), "mean")]


def index_fill() -> list:
    return [sample(T((4, 3)), 0, T((2,), dtype="int64", low=0, high=4), -1.0),
            sample(T((4, 3)), 1, T((2,), dtype="int64", low=0, high=3), 2.5)]


def index_put() -> list:
    return [sample(T((4, 3)), [T((2,), dtype="int64", low=0, high=2)], T((3,))),
            sample(T((4, 3)), [T((5,), dtype="int64", low=0, high=4)], T((5, 3)), True),
            sample(T((4, 3)), [T((2,), dtype="int64", low=0, high=4),
                               T((2,), dtype="int64", low=0, high=3)], T(()), True)]


def masked_select() -> list:
    return [sample(T((2, 3)), T((2, 3), dtype="bool")), sample(T((2, 3)), T((3,), dtype="bool")),
            sample(T((3,)), T((2, 3), dtype="bool"), note="broadcast self"),
            sample(T((2, 3), dtype="int64"), T((2, 3), dtype="bool"))]


def masked_scatter() -> list:
    return [sample(T((2, 3)), T((2, 3), dtype="bool"), T((2, 3))),
            sample(T((2, 3)), T((3,), dtype="bool"), T((7,)))]


def nonzero() -> list:
    return [sample(T((3, 4), dtype="int64", low=-1, high=2)), sample(T((5,), dtype="bool")),
            sample(T((0, 2)))]


def nonzero_only() -> list:
    return [sample(T((3, 4), dtype="int64", low=-1, high=2)), sample(T((5,), dtype="bool"))]


def inplace() -> list:
    return []  # (in place on a leaf that requires grad is an error: tests/test_inplace.py)


def index() -> list:
    return [sample(T((4, 4)), [T((2,), dtype="int64", low=0, high=4),
                               T((2,), dtype="int64", low=0, high=4)]),
            sample(T((4, 3)), [T((5,), dtype="int64", low=0, high=4)]),
            sample(T((4, 3, 2)), [T((2, 2), dtype="int64", low=0, high=4)])]


def triangle_indices() -> list:
    return [sample(4, 5), sample(4, 5, 1), sample(3, 3, -1), sample(0, 3)]


def scatter_reduce() -> list:
    out = []
    for reduce in ("sum", "mean", "amax", "amin", "prod"):
        low = 0.5 if reduce == "prod" else -2.0
        out += [sample(T((3, 4), low=low, distinct=True), 0,
                       T((2, 4), dtype="int64", low=0, high=3),
                       T((2, 4), low=low, distinct=True), reduce),
                sample(T((3, 4), low=low, distinct=True), 1,
                       T((3, 2), dtype="int64", low=0, high=4),
                       T((3, 2), low=low, distinct=True), reduce, include_self=False)]
    return out + [sample(T((4,), dtype="int64"), 0, T((3,), dtype="int64", low=0, high=4),
                         T((3,), dtype="int64"), "mean")]


def put() -> list:
    return [sample(T((3, 4)), T((2, 2), dtype="int64", low=0, high=12), T((2, 2))),
            sample(T((5,)), T((3,), dtype="int64", low=-5, high=5), T((3,))),
            sample(T((2, 3)), T((3,), dtype="int64", low=0, high=6), T((3,)), True),
            sample(T((2, 3)), T((4,), dtype="int64", low=0, high=2), T((4,)), True,
                   note="repeats")]
