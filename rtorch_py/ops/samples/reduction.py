"""Sample inputs of the reduction ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample, unary  # noqa: F401
from .shape import dim_op  # noqa: F401


def reduction() -> list:
    return [sample(T((2, 3))), sample(T((2, 3)), 0), sample(T((2, 3, 4)), (0, 2)),
            sample(T((2, 3)), 1, True), sample(T(()))]


def extreme() -> list:
    return [sample(T((2, 3), distinct=True)), sample(T((2, 3), distinct=True), 1),
            sample(T((2, 3), distinct=True), 0, True)]


def arg_reduction() -> list:
    return [sample(T((2, 3), distinct=True)), sample(T((2, 3), distinct=True), 1),
            sample(T((2, 3), distinct=True), 0, True)]


def logical_reduction() -> list:
    return [sample(T((2, 3), dtype="bool")), sample(T((2, 3), dtype="bool"), 1),
            sample(T((2, 3), dtype="bool"), 0, True)]
