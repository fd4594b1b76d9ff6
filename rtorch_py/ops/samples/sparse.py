"""Sample inputs of the sparse conversions (see the package docstring): dense
operands only (the generated tests can make no sparse one); the results, sparse,
are compared with PyTorch's through their dense values and layout."""
from __future__ import annotations

from . import T, sample  # noqa: F401


def to_sparse() -> list:
    return [sample(T((3, 4))), sample(T((3, 4)), 1), sample(T((5,))),
            sample(T((2, 3, 4)), sparse_dim=2), sample(T((2, 3, 4)), dense_dim=1),
            sample(T((2, 3, 4)), dense_dim=0), sample(T((0, 3)))]


def to_sparse_csr() -> list:
    return [sample(T((3, 4))), sample(T((1, 5))), sample(T((4, 1))), sample(T((2, 3, 4)))]


def to_sparse_private() -> list:
    return [sample(T((3, 4))), sample(T((2, 3, 4)), sparse_dim=2)]


def to_sparse_csc() -> list:
    return [sample(T((3, 4))), sample(T((1, 5))), sample(T((3, 2, 2)), dense_dim=1),
            sample(T((2, 3, 2)))]  # (a batch dim: random values, so every batch is full)


def to_sparse_bsr() -> list:
    return [sample(T((4, 6)), (2, 3)), sample(T((2, 4)), (1, 2)),
            sample(T((2, 2, 3)), (2, 1), dense_dim=1), sample(T((2, 2, 4)), (1, 2))]


to_sparse_bsc = to_sparse_bsr
