"""Sample inputs of the linalg ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample  # noqa: F401


def mm() -> list:
    return [sample(T((2, 3)), T((3, 4)))]


def matmul() -> list:
    return [sample(T((2, 3)), T((3, 4))), sample(T((3,)), T((3,))), sample(T((2, 3)), T((3,)))]


def dot() -> list:
    return [sample(T((3,)), T((3,)))]
