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
