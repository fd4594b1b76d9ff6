"""Sample inputs for the generated op tests, in the style of PyTorch's OpInfo.

An op's declaration names a generator of its family's module here
(`@op(samples=S.binary_arith)` in pointwise.py, from `samples/pointwise.py`);
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
    sorted: bool = False             # ascending along the last dim (boundaries)


@dataclass(frozen=True)
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    note: str = ""


def sample(*args: Any, note: str = "", **kwargs: Any) -> Sample:
    """A sample: the op's arguments as given (tensors described with T)."""
    return Sample(args, kwargs, note=note)


def unary() -> list:
    """The common samples of a one-tensor op: a matrix, 0-d, empty, integers."""
    return [sample(T((2, 3))), sample(T(())), sample(T((0, 3))), sample(T((4,), dtype="int64"))]
