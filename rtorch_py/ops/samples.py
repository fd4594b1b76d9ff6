"""Sample inputs for the generated op tests, in the style of PyTorch's OpInfo.

An op's declaration names one of these generators (`@op(samples=S.unary)`);
`tests/test_op_registry.py` runs every registered op on every sample against
PyTorch (values, dtypes, node names, gradients, second derivatives, finite
differences) and from R. Tensor operands are described, not made, so the
test can build the same values for both libraries: `T(shape)` is a tensor of
the test's floating dtype that requires grad; `dtype=` fixes another dtype.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class T:
    """A tensor operand: random values in [low, high) (whole numbers for ints)."""
    shape: tuple
    dtype: str | None = None         # None: the test's float dtype; else "int64", "bool", ...
    low: float = -2.0
    high: float = 2.0
    requires_grad: bool = True       # (only floating tensors ever do)
    away_from_zero: bool = False     # |value| >= 0.5 (divisors, non-smooth points)
    distinct: bool = False           # no ties (max, min, sort)


@dataclass(frozen=True)
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    note: str = ""


def _s(*args: Any, note: str = "", **kwargs: Any) -> Sample:
    return Sample(args, kwargs, note=note)


def unary() -> list:
    return [_s(T((2, 3))), _s(T(())), _s(T((0, 3))), _s(T((4,), dtype="int64"))]


def positive() -> list:
    return [_s(T((2, 3), low=0.5, high=3.0)), _s(T((), low=0.5, high=3.0))]


def matrix() -> list:
    return [_s(T((2, 3))), _s(T((4,)))]


def binary_float() -> list:
    return [_s(T((2, 3)), T((2, 3))), _s(T((2, 3)), T((3,))), _s(T(()), T((2, 1)))]


def binary_arith() -> list:
    return binary_float() + [
        _s(T((2, 3)), 2.5, note="number"), _s(T((2, 3)), T((), dtype="int64")),
        _s(T((2, 3), dtype="int64"), T((3,), dtype="int64")), _s(T((0, 3)), T((3,)))]


def binary_div() -> list:
    return [_s(T((2, 3), low=-4.0, high=4.0), T((2, 3), away_from_zero=True)),
            _s(T((2, 3), low=-4.0, high=4.0), T((3,), away_from_zero=True)),
            _s(T((3,), low=-7.0, high=7.0), 3.0, note="negative dividend"),
            _s(T((3,), low=-7.0, high=7.0), -3.0, note="negative divisor")]


def binary_pow() -> list:
    return [_s(T((2, 3), low=0.5, high=2.0), T((2, 3))), _s(T((2, 3)), 2),
            _s(T((2, 3), low=0.5, high=2.0), 0.5)]


def tensor_number() -> list:
    return [_s(T((2, 3)), 2.0)]


def compare() -> list:
    return [_s(T((2, 3)), T((2, 3))), _s(T((2, 3)), T((3,))), _s(T((2, 3)), 0.5)]


def logical() -> list:
    return [_s(T((2, 3), dtype="bool"), T((2, 3), dtype="bool")),
            _s(T((2, 3), dtype="bool"), T((3,), dtype="bool"))]


def logical_unary() -> list:
    return [_s(T((2, 3), dtype="bool")), _s(T((4,)))]


def logical_reduction() -> list:
    return [_s(T((2, 3), dtype="bool")), _s(T((2, 3), dtype="bool"), 1),
            _s(T((2, 3), dtype="bool"), 0, True)]


def clamp() -> list:
    return [_s(T((2, 3)), -0.5, 0.5), _s(T((2, 3)), min=0.0), _s(T((2, 3)), max=0.0)]


def mm() -> list:
    return [_s(T((2, 3)), T((3, 4)))]


def matmul() -> list:
    return [_s(T((2, 3)), T((3, 4))), _s(T((3,)), T((3,))), _s(T((2, 3)), T((3,)))]


def dot() -> list:
    return [_s(T((3,)), T((3,)))]


def transpose() -> list:
    return [_s(T((2, 3, 4)), 0, 2), _s(T((2, 3)), -1, 0)]


def permute() -> list:
    return [_s(T((2, 3, 4)), (2, 0, 1))]


def reshape() -> list:
    return [_s(T((2, 3)), (3, 2)), _s(T((2, 3)), (-1,)), _s(T((6,)), (2, 3))]


def unsqueeze() -> list:
    return [_s(T((2, 3)), 0), _s(T((2, 3)), 2), _s(T((2, 3)), -1)]


def squeeze() -> list:
    return [_s(T((2, 1, 3))), _s(T((2, 1, 3)), 1)]


def expand() -> list:
    return [_s(T((3, 1)), (3, 4)), _s(T((3,)), (2, 3))]


def flatten() -> list:
    return [_s(T((2, 3, 4))), _s(T((2, 3, 4)), 1), _s(T((2, 3, 4)), 0, 1)]


def cat() -> list:
    return [_s([T((2, 3)), T((1, 3))]), _s([T((2, 3)), T((2, 2))], 1)]


def stack() -> list:
    return [_s([T((2, 3)), T((2, 3))]), _s([T((2, 3)), T((2, 3))], 2)]


def narrow() -> list:
    return [_s(T((4, 3)), 0, 1, 2), _s(T((4, 3)), 1, -2, 2)]


def select() -> list:
    return [_s(T((4, 3)), 0, 1), _s(T((4, 3)), 1, -1)]


def split() -> list:
    return [_s(T((5, 3)), 2), _s(T((5, 3)), [1, 4]), _s(T((5, 4)), 3, 1)]


def chunk() -> list:
    return [_s(T((5, 3)), 2), _s(T((5, 4)), 2, 1)]


def dim_op() -> list:
    return [_s(T((2, 3)), 0), _s(T((2, 3)), 1), _s(T((2, 3)), -1)]


def reduction() -> list:
    return [_s(T((2, 3))), _s(T((2, 3)), 0), _s(T((2, 3, 4)), (0, 2)),
            _s(T((2, 3)), 1, True), _s(T(()))]


def extreme() -> list:
    return [_s(T((2, 3), distinct=True)), _s(T((2, 3), distinct=True), 1),
            _s(T((2, 3), distinct=True), 0, True)]


def arg_reduction() -> list:
    return [_s(T((2, 3), distinct=True)), _s(T((2, 3), distinct=True), 1),
            _s(T((2, 3), distinct=True), 0, True)]


def gather() -> list:
    return [_s(T((3, 4)), 1, T((3, 2), dtype="int64", low=0, high=4)),
            _s(T((3, 4)), 0, T((2, 4), dtype="int64", low=0, high=3))]


def where() -> list:
    return [_s(T((2, 3), dtype="bool"), T((2, 3)), T((2, 3))),
            _s(T((2, 3), dtype="bool"), T((2, 3)), T((3,)))]


def masked_fill() -> list:
    return [_s(T((2, 3)), T((2, 3), dtype="bool"), 0.5)]
