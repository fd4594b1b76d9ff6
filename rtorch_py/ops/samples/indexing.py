"""Sample inputs of the indexing ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample  # noqa: F401


def gather() -> list:
    return [sample(T((3, 4)), 1, T((3, 2), dtype="int64", low=0, high=4)),
            sample(T((3, 4)), 0, T((2, 4), dtype="int64", low=0, high=3))]


def where() -> list:
    return [sample(T((2, 3), dtype="bool"), T((2, 3)), T((2, 3))),
            sample(T((2, 3), dtype="bool"), T((2, 3)), T((3,)))]


def masked_fill() -> list:
    return [sample(T((2, 3)), T((2, 3), dtype="bool"), 0.5)]
