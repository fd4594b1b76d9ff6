"""Sample inputs of the creation family (`rtorch_py/ops/creation.py`)."""
from __future__ import annotations

from . import T, sample


def complex_parts():
    return [sample(T((3,)), T((3,))),
            sample(T((2, 3)), T((3,)), note="broadcast"),
            sample(T(()), T(()), note="0-d"),
            sample(T((0, 2)), T((0, 2)), note="empty")]


def polar():
    return [sample(T((3,), low=0.5, high=2.0), T((3,))),
            sample(T((2, 3), low=0.5, high=2.0), T((3,)), note="broadcast"),
            sample(T((), low=0.5, high=2.0), T(()), note="0-d")]


def complex_input():
    return [sample(T((3,), dtype="complex64")),
            sample(T((2, 2), dtype="complex128"))]


def angle():
    return [sample(T((2, 3))), sample(T(())), sample(T((4,), dtype="int64", low=-3, high=3)),
            *complex_input()]


# Constructors. From R the sizes go as R gives them (several numbers); R's
# arange includes its end, so its samples end off the grid, where the two
# conventions agree (R's inclusive end is tested in tests/r/test-dtype.R).

def sizes():
    return [sample(2, 3), sample(4), sample(0, 2, note="empty"), sample((), note="0-d")]


def full():
    return [sample((2, 3), 1.5), sample((3,), 2), sample((2, 0), 1.0, note="empty")]


def eye():
    return [sample(3), sample(2, 4), sample(0, note="empty")]


def linspace():
    return [sample(0.0, 1.0, 5), sample(-2.0, 3.0, 1), sample(1.0, -1.0, 4),
            sample(0.0, 1.0, 0, note="empty")]


def logspace():
    return [sample(0.0, 2.0, 5), sample(-1.0, 1.0, 3, base=2.0), sample(1.0, 1.0, 1)]


def arange():
    return [sample(0, 5, 2), sample(1.0, 2.3, 0.5), sample(3.5, 0.2, -1.0),
            sample(0, 9, 4, note="ints stay int64")]


def like():
    return [sample(T((2, 3))), sample(T((3,), dtype="int64", low=0, high=4)),
            sample(T(()), note="0-d"), sample(T((0, 2)), note="empty")]


def full_like():
    return [sample(T((2, 3)), 2.5), sample(T((3,), dtype="int64", low=0, high=4), 7),
            sample(T(()), -1.0, note="0-d")]


def window():
    return [sample(10), sample(7, False), sample(1, note="one"), sample(0, note="empty")]


def hamming():
    return window() + [sample(8, True, 0.5, 0.5)]


def kaiser():
    return window() + [sample(6, False, 5.0)]


def new_full():
    return [sample(T((2, 3)), (3, 2), 1.5), sample(T((2,), dtype="int64", low=0, high=4), (2,), 7)]


def new_sized():
    return [sample(T((2, 3)), (3, 2)), sample(T((2,), dtype="int64", low=0, high=4), (4,)),
            sample(T((2,)), (), note="0-d")]


def cast():
    return [sample(T((2, 3), low=0.0, high=100.0)), sample(T((3,), dtype="int64", low=0, high=9))]


def vander():
    return [sample(T((4,))), sample(T((3,)), 5), sample(T((3,)), 4, True),
            sample(T((3,), dtype="int64", low=-3, high=4), 3), sample(T((2,)), 1, note="N = 1"),
            sample(T((0,)), note="empty")]


def standard_gamma_grad():
    """Each of the three regimes: x < 0.8; alpha > 8 (near alpha and not); the rest."""
    return [sample(T((3, 4), low=0.1, high=6.0, requires_grad=False),
                   T((3, 4), low=0.05, high=0.79, requires_grad=False), note="small x"),
            sample(T((5,), low=8.5, high=20.0, requires_grad=False),
                   T((5,), low=0.85, high=40.0, requires_grad=False), note="large alpha"),
            sample(T((2, 3), low=0.2, high=7.9, requires_grad=False),
                   T((2, 3), low=0.8, high=9.0, requires_grad=False), note="between"),
            sample(T((4,), low=9.0, high=9.5, requires_grad=False),
                   T((4,), low=8.5, high=9.8, requires_grad=False), note="x near alpha")]
