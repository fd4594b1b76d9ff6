"""Sample inputs of the sorting ops (see the package docstring). Values are
distinct where positions are compared (ties may come in any order), or
integers with repeats where the op's tie rule is defined (stable sort, mode,
cummax, unique)."""
from __future__ import annotations

from . import T, sample


def _d(shape: tuple) -> T:
    return T(shape, distinct=True)


def _ints(shape: tuple) -> T:
    return T(shape, dtype="int64", low=0, high=3)


def sort() -> list:
    return [sample(_d((2, 3))), sample(_d((2, 3)), 0), sample(_d((2, 3)), -1, True),
            sample(_d((3, 2)), dim=0, descending=True, stable=True), sample(T(())),
            sample(T((0, 3)), 1), sample(_ints((2, 6)), stable=True),
            sample(_ints((2, 6)), dim=1, descending=True, stable=True)]


def msort() -> list:
    return [sample(_d((3, 2))), sample(_d((4,)))]


def topk() -> list:
    return [sample(_d((2, 4)), 2), sample(_d((3, 2)), 1, 0), sample(_d((2, 4)), 3, 1, False),
            sample(_d((5,)), 0)]


def kthvalue() -> list:
    return [sample(_d((2, 4)), 2), sample(_d((3, 2)), 1, 0, True), sample(_d((5,)), 3),
            sample(_d((5,)), 5, 0)]


def median() -> list:
    return [sample(_d((2, 3))), sample(_d((2, 4))), sample(_d((2, 4)), 1),
            sample(_d((3, 3)), 0, True), sample(T(())), sample(T(()), 0)]


def mode() -> list:
    return [sample(_ints((3, 5))), sample(_ints((3, 5)), 0), sample(_ints((4, 5)), 1, True),
            sample(_d((2, 3))), sample(_d((2, 3)), 0)]


def cumulative() -> list:
    return [sample(_d((2, 3)), 1), sample(_d((2, 3)), 0), sample(_d((3, 4)), -1),
            sample(_ints((6,)), 0), sample(T(()), 0)]


def quantile() -> list:
    q = T((3,), low=0.0, high=1.0, requires_grad=False)
    return [sample(_d((2, 5)), 0.3), sample(_d((2, 5)), 0.3, 1), sample(_d((3, 4)), 0.5, 0, True),
            sample(_d((2, 5)), q), sample(_d((2, 5)), q, 1), sample(_d((2, 3)), q, 0, True),
            sample(_d((4,)), 1.0), sample(_d((4,)), 0.0, keepdim=True)]


def unique() -> list:
    return [sample(_ints((8,))), sample(_ints((8,)), return_inverse=True),
            sample(_ints((2, 4)), return_inverse=True, return_counts=True),
            sample(_ints((4, 2)), return_counts=True, dim=0),
            sample(T((0,), dtype="int64"))]


def bincount() -> list:
    return [sample(T((8,), dtype="int64", low=0, high=5)),
            sample(T((8,), dtype="int64", low=0, high=5), minlength=7),
            sample(T((6,), dtype="int64", low=0, high=4),
                   T((6,), requires_grad=False))]


def histc() -> list:
    return [sample(T((20,))), sample(T((4, 5)), 4), sample(T((20,)), 5, -1.0, 1.0),
            sample(T((6,), low=0.0, high=0.5), bins=3, min=0.0, max=3.0)]


def histogram() -> list:
    return [sample(T((20,))), sample(T((4, 5)), 4), sample(T((20,)), 5, range=(-1.0, 1.0)),
            sample(T((6,), low=0.0, high=0.5), 3, range=(0.0, 3.0), density=True),
            sample(T((3, 4)), 6, weight=T((3, 4), low=0.0, high=1.0), density=True),
            sample(T((10,)), T((4,), sorted=True)), sample(T((1,)), 2, note="one value")]


def bucketize() -> list:
    # (T can't draw sorted boundaries: these are all zeros; tests/test_reduction_special.py
    # checks real ones)
    return [sample(T((2, 3), dtype="int64", low=-3, high=4), T((4,), dtype="int64", low=0, high=1)),
            sample(T((5,), dtype="int64", low=-3, high=4), T((1,), dtype="int64"), right=True)]


def searchsorted() -> list:
    zeros = T((6,), dtype="int64", low=0, high=1)
    return [sample(zeros, T((2, 3), dtype="int64", low=-2, high=3)),
            sample(zeros, T((4,), dtype="int64", low=-2, high=3), right=True),
            sample(T((2, 4), dtype="int64", low=0, high=1), T((2, 3), dtype="int64", low=-1, high=2)),
            sample(zeros, T((3,), dtype="int64", low=-1, high=2), out_int32=True)]
