"""Sample inputs of the nn primitives (see the package docstring)."""
from __future__ import annotations

from . import T, sample


def float_unary() -> list:
    """A matrix, 0-d and empty (these ops take floating tensors only)."""
    return [sample(T((2, 3), low=-3.0, high=3.0)), sample(T(())), sample(T((0, 3)))]
