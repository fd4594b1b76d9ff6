"""Sample inputs of the reduction ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample, unary  # noqa: F401


def reduction() -> list:
    x3 = T((2, 3, 4))
    return [sample(T((2, 3))), sample(T((2, 3)), 0), sample(T((2, 3, 4)), (0, 2)),
            sample(T((2, 3)), 1, True), sample(T(())), sample(T(()), 0),
            sample(x3, -1), sample(x3, (0, -1), True), sample(x3, [2, 1]),
            sample(x3, 2, keepdim=True), sample(T((1, 1, 1)), 0), sample(T((3, 1, 2)), 1),
            sample(T((0, 3))), sample(T((0, 3)), 0)]


def sum_() -> list:
    """sum's: also integers and bools (summed as int64)."""
    return reduction() + [sample(T((3, 4), dtype="int64", low=-5, high=5)),
                          sample(T((3, 4), dtype="int32", low=-5, high=5), 1),
                          sample(T((3, 4), dtype="bool"), 0)]


def extreme() -> list:
    x3 = T((2, 3, 4), distinct=True)
    return [sample(T((2, 3), distinct=True)), sample(T((2, 3), distinct=True), 1),
            sample(T((2, 3), distinct=True), 0, True), sample(x3), sample(x3, 2),
            sample(x3, -1, True), sample(T((3, 1, 2), distinct=True), 0),
            sample(T((1, 1, 1)), 1), sample(T(())), sample(T(()), 0),
            sample(T((3, 4), dtype="int64", low=-5, high=5)),
            sample(T((3, 4), dtype="int64", low=-5, high=5), 0)]


def arg_reduction() -> list:
    return [sample(T((2, 3), distinct=True)), sample(T((2, 3), distinct=True), 1),
            sample(T((2, 3), distinct=True), 0, True)]


def softmax() -> list:
    return [sample(T((2, 3)), 0), sample(T((2, 3)), 1), sample(T((3, 4)), -1),
            sample(T((2, 3, 4)), 1), sample(T((2, 3, 4), low=-6, high=6), -1)]


def logical_reduction() -> list:
    return [sample(T((2, 3), dtype="bool")), sample(T((2, 3), dtype="bool"), 1),
            sample(T((2, 3), dtype="bool"), 0, True), sample(T((2, 3), dtype="bool"), -1),
            sample(T((0, 3), dtype="bool")), sample(T((2, 3), dtype="bool"), (0, 1)),
            sample(T((2, 3), dtype="int64", low=0, high=2), 1)]


def prod() -> list:
    return [sample(T((2, 3))), sample(T((2, 3)), 1), sample(T((2, 3)), 0, True),
            sample(T(())), sample(T(()), 0), sample(T((0, 3))), sample(T((0, 3)), 1),
            sample(T((4,), dtype="int64", low=-3, high=4)),
            sample(T((2, 3), dtype="int64", low=-3, high=4), 1)]


def moments() -> list:
    return [sample(T((2, 3))), sample(T((2, 3)), 1), sample(T((2, 3, 4)), (0, 2)),
            sample(T((2, 3)), 0, False, True), sample(T((3, 4)), 1, correction=0),
            sample(T((3, 4)), -1, keepdim=True, correction=2)]


def logsumexp() -> list:
    return [sample(T((2, 3)), 1), sample(T((2, 3)), (0, 1)), sample(T((2, 3)), 0, True),
            sample(T(()), 0), sample(T((4,), dtype="int64", low=-3, high=4), 0)]


def norm() -> list:
    return [sample(T((2, 3))), sample(T((2, 3)), 1), sample(T((2, 3)), 3, 1),
            sample(T((2, 3)), 2, 1, True), sample(T((2, 3, 2)), 2, (0, 2)),
            sample(T((2, 3), distinct=True), float("inf"), 1), sample(T(()))]


def frobenius_norm() -> list:
    return [sample(T((2, 3)), (0, 1)), sample(T((2, 3)), [1]), sample(T((2, 3, 2)), (0, 2), True)]


def dist() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,)), 1),
            sample(T((2, 3)), T((2, 3)), 3)]


def cumulative() -> list:
    return [sample(T((2, 3), away_from_zero=True), 1), sample(T((2, 3), away_from_zero=True), 0),
            sample(T((3, 4), away_from_zero=True), -1), sample(T(()), 0),
            sample(T((0, 3)), 1), sample(T((5,), dtype="int64", low=-3, high=4), 0)]


def cumulative_float() -> list:
    return [sample(T((2, 3)), 1), sample(T((2, 3)), 0), sample(T(()), 0)]


def amax() -> list:
    return [sample(T((2, 3), distinct=True)), sample(T((2, 3), distinct=True), 1),
            sample(T((2, 3, 2), distinct=True), (0, 2), True), sample(T(()))]


def aminmax() -> list:
    return [sample(T((2, 3), distinct=True)), sample(T((2, 3), distinct=True), dim=1),
            sample(T((2, 3), distinct=True), dim=0, keepdim=True)]


def count_nonzero() -> list:
    return [sample(T((3, 4), dtype="int64", low=-1, high=2)),
            sample(T((3, 4), dtype="int64", low=-1, high=2), 1),
            sample(T((3, 4), dtype="int64", low=-1, high=2), (0, 1)),
            sample(T((3, 4), dtype="bool"), 0), sample(T((2, 3)), 1)]


def trapz() -> list:
    return [sample(T((2, 5))), sample(T((2, 5)), dx=0.5), sample(T((4, 3)), dim=0),
            sample(T((2, 4)), x=T((4,), sorted=True), note="points x"),
            sample(T((3, 4)), x=T((3, 4), sorted=True), dim=1, note="x like y"),
            sample(T((2, 3, 4)), x=T((3, 1), sorted=True), dim=1, note="x broadcast"),
            sample(T((1,)), note="one sample")]
