"""Sample inputs of the pointwise ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample, unary  # noqa: F401


def positive() -> list:
    return [sample(T((2, 3), low=0.5, high=3.0)), sample(T((), low=0.5, high=3.0))]


def binary_float() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,))), sample(T(()), T((2, 1)))]


def binary_arith() -> list:
    return binary_float() + [
        sample(T((2, 3)), 2.5, note="number"), sample(T((2, 3)), T((), dtype="int64")),
        sample(T((2, 3), dtype="int64"), T((3,), dtype="int64")), sample(T((0, 3)), T((3,)))]


def binary_div() -> list:
    return [sample(T((2, 3), low=-4.0, high=4.0), T((2, 3), away_from_zero=True)),
            sample(T((2, 3), low=-4.0, high=4.0), T((3,), away_from_zero=True)),
            sample(T((3,), low=-7.0, high=7.0), 3.0, note="negative dividend"),
            sample(T((3,), low=-7.0, high=7.0), -3.0, note="negative divisor")]


def binary_pow() -> list:
    return [sample(T((2, 3), low=0.5, high=2.0), T((2, 3))), sample(T((2, 3)), 2),
            sample(T((2, 3), low=0.5, high=2.0), 0.5)]


def tensor_number() -> list:
    return [sample(T((2, 3)), 2.0)]


def compare() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,))), sample(T((2, 3)), 0.5)]


def logical() -> list:
    return [sample(T((2, 3), dtype="bool"), T((2, 3), dtype="bool")),
            sample(T((2, 3), dtype="bool"), T((3,), dtype="bool"))]


def logical_unary() -> list:
    return [sample(T((2, 3), dtype="bool")), sample(T((4,)))]


def clamp() -> list:
    return [sample(T((2, 3)), -0.5, 0.5), sample(T((2, 3)), min=0.0), sample(T((2, 3)), max=0.0)]
