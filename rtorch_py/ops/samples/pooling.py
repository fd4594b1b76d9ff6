"""Sample inputs of the pooling ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample


def avg_pool1d() -> list:
    return [sample(T((2, 3, 7)), 3), sample(T((2, 3, 8)), 3, 2, 1, note="stride, padding"),
            sample(T((3, 7)), 2, note="no batch"),
            sample(T((1, 2, 7)), 3, 2, 1, True, False, note="ceil_mode, padding excluded")]


def max_unpool2d() -> list:
    """One value per plane (positions drawn at random can't collide); unpooling
    real max pooling's positions is tested in tests/test_nn_names.py."""
    return [sample(T((2, 3, 1, 1)), T((2, 3, 1, 1), dtype="int64", low=0, high=6), (2, 3)),
            sample(T((3, 1, 1)), T((3, 1, 1), dtype="int64", low=0, high=4), (2, 2),
                   note="no batch")]


def max_unpool3d() -> list:
    return [sample(T((2, 2, 1, 1, 1)), T((2, 2, 1, 1, 1), dtype="int64", low=0, high=8),
                   (2, 2, 2), (2, 2, 2), (0, 0, 0))]


def fractional_max_pool2d() -> list:
    return [sample(T((1, 2, 7, 6), distinct=True), 2, (3, 3),
                   T((1, 2, 2), low=0.0, high=1.0, requires_grad=False)),
            sample(T((2, 1, 5, 9), distinct=True), (2, 3), (4, 3),
                   T((2, 1, 2), low=0.0, high=1.0, requires_grad=False), note="rectangular"),
            sample(T((2, 6, 6), distinct=True), 3, 2,
                   T((1, 2, 2), low=0.0, high=1.0, requires_grad=False), note="no batch")]


def fractional_max_pool3d() -> list:
    return [sample(T((1, 2, 5, 6, 7), distinct=True), 2, (3, 4, 2),
                   T((1, 2, 3), low=0.0, high=1.0, requires_grad=False))]


def im2col() -> list:
    return [sample(T((2, 3, 5, 4)), (2, 2), (1, 1), (0, 0), (1, 1)),
            sample(T((1, 2, 6, 7)), (3, 2), (2, 1), (1, 2), (2, 3),
                   note="dilation, padding, stride"),
            sample(T((2, 4, 4)), 3, 1, 1, 1, note="no batch, one int each")]


def col2im() -> list:
    return [sample(T((2, 12, 12)), (5, 4), (2, 2), (1, 1), (0, 0), (1, 1)),
            sample(T((1, 12, 8)), (6, 7), (3, 2), (2, 1), (1, 2), (2, 3),
                   note="dilation, padding, stride"),
            sample(T((18, 16)), (4, 4), 3, 1, 1, 1, note="no batch, one int each")]
