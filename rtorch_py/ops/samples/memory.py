"""Sample inputs of the memory and view internals and the private methods
(`ops/memory.py`)."""
from __future__ import annotations

from . import T, sample
from .creation import complex_input  # noqa: F401


def view_of() -> list:
    return [sample(T((2, 3))), sample(T(())), sample(T((0, 3))),
            sample(T((4,), dtype="int64"))]


def floats() -> list:
    return [sample(T((2, 3))), sample(T(())), sample(T((0, 3)))]


def any_tensor() -> list:
    return [sample(T((2, 3))), sample(T((2,), dtype="int64")), sample(T((0,), dtype="bool"))]


def bools() -> list:
    return [sample(T((2, 3), dtype="bool")), sample(T((), dtype="bool")),
            sample(T((0,), dtype="bool"), note="empty"), sample(T((4,), dtype="bool"))]


def as_strided_scatter() -> list:
    # (self's gradient is checked by finite differences in tests/test_internals.py:
    # PyTorch 2.13's formula for it gives the opposite of the derivative)
    base = {"requires_grad": False}
    return [sample(T((3, 4), **base), T((2, 2)), (2, 2), (1, 2)),
            sample(T((6,), **base), T((2, 2)), (2, 2), (1, 2), 1),
            sample(T((3, 3), **base), T((2,)), (2,), (4,), note="the diagonal"),
            sample(T((2, 3), **base), T((2, 3)), (2, 3), (3, 1), note="everything")]


def slice_inverse() -> list:
    # (self is all of src here; tests/test_internals.py takes a real slice's view)
    return [sample(T((2, 3)), T((2, 3)), 1, 0, 3),
            sample(T((2, 3)), T((2, 3)), 0)]


def reshape_alias() -> list:
    return [sample(T((2, 3)), (3, 2), (2, 1)), sample(T((2, 3)), (6,), (1,)),
            sample(T((0, 3)), (3, 0), (0, 1))]


def set_() -> list:
    return [sample(T((2, 3)), T((3,))), sample(T((2, 3)), T((2, 2))), sample(T((4,)))]


def same_shape_pair() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2,)), T((3,)))]


def resize_as_() -> list:
    return [sample(T((2, 3)), T((4,))), sample(T((2, 3)), T((3, 2))),
            sample(T((2, 3)), T((0,)))]


def nonzero_static() -> list:
    ints = {"dtype": "int64", "low": 0, "high": 2}
    # (PyTorch takes size and fill_value by name only)
    return [sample(T((3, 4), **ints), size=5), sample(T((3, 4), **ints), size=20),
            sample(T((3, 4), **ints), size=20, fill_value=7), sample(T((2, 3)), size=0),
            sample(T((5,), **ints), size=3, fill_value=-2), sample(T((), **ints), size=2)]


def addmm_activation() -> list:
    return [sample(T((2, 3)), T((2, 4)), T((4, 3))),
            sample(T((2, 3)), T((2, 4)), T((4, 3)), use_gelu=True),
            sample(T((3,)), T((2, 4)), T((4, 3)), beta=0.5, alpha=2.0, note="broadcast self"),
            sample(T((3,)), T((2, 4)), T((4, 3)), beta=0.5, alpha=2.0, use_gelu=True)]


def autocast_full() -> list:
    return [sample(T((2, 3)), False, True), sample(T((2, 3)), False, False)]
