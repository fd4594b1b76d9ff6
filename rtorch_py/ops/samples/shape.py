"""Sample inputs of the shape ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample, unary  # noqa: F401


def matrix() -> list:
    return [sample(T((2, 3))), sample(T((4,)))]


def transpose() -> list:
    return [sample(T((2, 3, 4)), 0, 2), sample(T((2, 3)), -1, 0)]


def permute() -> list:
    return [sample(T((2, 3, 4)), (2, 0, 1))]


def reshape() -> list:
    return [sample(T((2, 3)), (3, 2)), sample(T((2, 3)), (-1,)), sample(T((6,)), (2, 3))]


def unsqueeze() -> list:
    return [sample(T((2, 3)), 0), sample(T((2, 3)), 2), sample(T((2, 3)), -1)]


def squeeze() -> list:
    return [sample(T((2, 1, 3))), sample(T((2, 1, 3)), 1)]


def expand() -> list:
    return [sample(T((3, 1)), (3, 4)), sample(T((3,)), (2, 3))]


def flatten() -> list:
    return [sample(T((2, 3, 4))), sample(T((2, 3, 4)), 1), sample(T((2, 3, 4)), 0, 1)]


def cat() -> list:
    return [sample([T((2, 3)), T((1, 3))]), sample([T((2, 3)), T((2, 2))], 1)]


def stack() -> list:
    return [sample([T((2, 3)), T((2, 3))]), sample([T((2, 3)), T((2, 3))], 2)]


def narrow() -> list:
    return [sample(T((4, 3)), 0, 1, 2), sample(T((4, 3)), 1, -2, 2)]


def select() -> list:
    return [sample(T((4, 3)), 0, 1), sample(T((4, 3)), 1, -1)]


def split() -> list:
    return [sample(T((5, 3)), 2), sample(T((5, 3)), [1, 4]), sample(T((5, 4)), 3, 1)]


def chunk() -> list:
    return [sample(T((5, 3)), 2), sample(T((5, 4)), 2, 1)]


def dim_op() -> list:
    return [sample(T((2, 3)), 0), sample(T((2, 3)), 1), sample(T((2, 3)), -1)]
