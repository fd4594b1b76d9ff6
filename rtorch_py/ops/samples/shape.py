"""Sample inputs of the shape ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample, unary  # noqa: F401


def matrix() -> list:
    return [sample(T((2, 3))), sample(T((4,)))]


def transpose() -> list:
    return [sample(T((2, 3, 4)), 0, 2), sample(T((2, 3)), -1, 0), sample(T((2, 3, 4)), -1, -2),
            sample(T((2, 3, 4)), 1, 0)]


def permute() -> list:
    return [sample(T((2, 3, 4)), (2, 0, 1)), sample(T((2, 3, 4)), [1, 2, 0]),
            sample(T((2, 3, 4)), (-1, 0, 1))]
    # (the method's own form `x.permute(2, 0, 1)`: tests/test_shape_indexing.py)


def reshape() -> list:
    return [sample(T((2, 3)), (3, 2)), sample(T((2, 3)), (-1,)), sample(T((6,)), (2, 3)),
            sample(T((2, 3, 4)), (4, 6)), sample(T((2, 3, 4)), (6, -1)), sample(T(()), (1, 1)),
            sample(T((2, 3, 4)), (6, 4))]


def unsqueeze() -> list:
    return [sample(T((2, 3)), 0), sample(T((2, 3)), 2), sample(T((2, 3)), -1), sample(T(()), 0),
            sample(T((2, 3)), 1)]


def squeeze() -> list:
    return [sample(T((2, 1, 3))), sample(T((2, 1, 3)), 1), sample(T((1, 3, 1))),
            sample(T((1, 3, 1)), 0), sample(T((1, 3, 1)), -1), sample(T((2, 3)), 1, note="no-op"),
            sample(T((1, 3))), sample(T((1, 3, 1)), (0, 2)), sample(T((1, 3, 1)), (1, -1))]


def expand() -> list:
    return [sample(T((3, 1)), (3, 4)), sample(T((3,)), (2, 3)), sample(T((3, 1)), (2, 3, 4)),
            sample(T((3, 1)), (-1, 5)), sample(T((1,)), [4]), sample(T(()), (2, 2))]


def expand_as() -> list:
    return [sample(T((1, 4)), T((3, 4), requires_grad=False)),
            sample(T((3, 1)), T((2, 3, 4), requires_grad=False))]


def flatten() -> list:
    return [sample(T((2, 3, 4))), sample(T((2, 3, 4)), 1), sample(T((2, 3, 4)), 0, 1),
            sample(T((2, 3, 4, 5)), 1, 2), sample(T(())), sample(T((2, 3)))]


def cat() -> list:
    return [sample([T((2, 3)), T((1, 3))]), sample([T((2, 3)), T((2, 2))], 1),
            sample([T((2, 3)), T((2, 3)), T((2, 3))], 1), sample([T((2, 3)), T((2, 5))], -1),
            sample([T((2, 3))], 0), sample([T((2, 2)), T((2, 2), dtype="int64")], note="mixed"),
            sample([T((2, 2)), T((2, 2), dtype="float64")], note="mixed floats"),
            sample([T((2, 3)), T((0,))], note="empty 1-d skipped")]


def stack() -> list:
    return [sample([T((2, 3)), T((2, 3))]), sample([T((2, 3)), T((2, 3))], 2),
            sample([T((2, 3)), T((2, 3)), T((2, 3))], 1), sample([T((2, 3)), T((2, 3))], -1),
            sample([T(()), T(())]), sample([T((2,), dtype="bool"), T((2,), dtype="bool")])]


def narrow() -> list:
    return [sample(T((4, 3)), 0, 1, 2), sample(T((4, 3)), 1, -2, 2)]


def slice_view() -> list:
    return [sample(T((5, 3)), 0, 1, 4), sample(T((4, 6)), 1, 0, 6, 2), sample(T((4, 3))),
            sample(T((5, 3)), 0, -3, None, note="from the end"),
            sample(T((4, 3)), -1, 1, 10, note="end clamped"), sample(T((4, 3)), 0, 3, 1, 1,
                                                                    note="empty")]


def select() -> list:
    return [sample(T((4, 3)), 0, 1), sample(T((4, 3)), 1, -1)]


def split() -> list:
    return [sample(T((5, 3)), 2), sample(T((5, 3)), [1, 4]), sample(T((5, 4)), 3, 1),
            sample(T((6, 2)), [1, 2, 3]), sample(T((3, 5)), 2, dim=1), sample(T((6, 2)), [4, 2], 0)]


def chunk() -> list:
    return [sample(T((5, 3)), 2), sample(T((5, 4)), 2, 1), sample(T((6, 3)), 2),
            sample(T((7, 3)), 4, dim=0), sample(T((2, 5)), 3, 1), sample(T((6, 2)), 3)]


def dim_op() -> list:
    return [sample(T((2, 3)), 0), sample(T((2, 3)), 1), sample(T((2, 3)), -1)]


def unbind() -> list:
    return dim_op() + [sample(T((3, 4))), sample(T((2, 3, 4)), -1)]


def flip() -> list:
    return [sample(T((2, 3, 4)), (0, 2)), sample(T((2, 3)), (-1,)), sample(T((0, 3)), (1,)),
            sample(T((4,), dtype="int64"), (0,))]


def matrix_only() -> list:
    return [sample(T((2, 3))), sample(T((2, 3, 2)))]


def roll() -> list:
    return [sample(T((2, 3)), 1), sample(T((2, 3)), -4), sample(T((3, 4)), (1, -1), (0, 1)),
            sample(T((3, 4)), 2, 1), sample(T((4,), dtype="int64"), 1)]


def rot90() -> list:
    return [sample(T((2, 3))), sample(T((2, 3)), 2), sample(T((2, 3, 4)), -1, (2, 1)),
            sample(T((2, 3)), 3, (0, 1))]


def repeat() -> list:
    return [sample(T((2, 3)), (2, 1)), sample(T((3,)), (2, 2)), sample(T(()), (3,)),
            sample(T((2, 1)), (1, 3, 2)), sample(T((2, 2), dtype="bool"), (2, 1))]


def tile() -> list:
    return [sample(T((2, 3)), (2,)), sample(T((3,)), (2, 2)), sample(T((2, 3)), (2, 1)),
            sample(T((3,), dtype="int64"), (2,))]


def repeat_interleave() -> list:
    return [sample(T((2, 3)), 2), sample(T((2, 3)), 3, 0), sample(T((2, 3)), 2, -1),
            sample(T((2, 3)), T((3,), dtype="int64", low=0, high=3), 1),
            sample(T((3,), dtype="int64"), 2)]


def movedim() -> list:
    return [sample(T((2, 3, 4)), 0, 2), sample(T((2, 3, 4)), (0, 1), (2, 0)),
            sample(T((2, 3, 4)), -1, 0)]


def unflatten() -> list:
    return [sample(T((2, 6)), 1, (2, 3)), sample(T((6, 2)), 0, (3, -1)),
            sample(T((2, 6)), -1, (6,))]


def like_other() -> list:
    return [sample(T((2, 3)), T((3, 2), requires_grad=False)),
            sample(T((6,)), T((2, 3), requires_grad=False))]


def tensor_list() -> list:
    return [sample([T((2, 3)), T((3,))]), sample([T((2, 1)), T((1, 3)), T(())])]


def meshgrid() -> list:
    return [sample([T((2,)), T((3,))], indexing="ij"), sample([T((2,)), T((3,))], indexing="xy"),
            sample([T((2,)), T((3,)), T((4,))], indexing="xy"), sample([T(()), T((3,))])]


def atleast() -> list:
    return [sample(T(())), sample(T((3,))), sample(T((2, 3))), sample(T((2, 3, 2))),
            sample([T(()), T((3,)), T((2, 3))])]


def stack_list() -> list:
    return [sample([T((2, 3)), T((2, 3))]), sample([T((3,)), T((3,))]), sample([T(()), T(())]),
            sample([T((2, 3, 2)), T((2, 3, 2))])]


def tensor_split() -> list:
    return [sample(T((5, 3)), sections=2), sample(T((5, 3)), indices=(1, 3)),
            sample(T((3, 7)), sections=3, dim=1), sample(T((5, 3)), indices=(2, 9)),
            sample(T((5, 3)), 2)]


def hsplit() -> list:
    return [sample(T((3, 4)), 2), sample(T((3, 4)), (1, 3)), sample(T((6,)), 3)]


def vsplit() -> list:
    return [sample(T((4, 3)), 2), sample(T((4, 3)), (1, 3))]


def dsplit() -> list:
    return [sample(T((2, 2, 4)), 2), sample(T((2, 2, 4)), (1, 3))]


def triangle() -> list:
    return [sample(T((3, 4))), sample(T((3, 4)), 1), sample(T((3, 4)), -1),
            sample(T((2, 3, 3)), 0), sample(T((3, 3), dtype="int64"), 0)]


def diagonal() -> list:
    return [sample(T((3, 4))), sample(T((3, 4)), 1), sample(T((3, 4)), -2),
            sample(T((2, 3, 4)), 0, 2, 0), sample(T((2, 3, 4)), -1, -1, 1)]


def diag_embed() -> list:
    return [sample(T((2, 3))), sample(T((3,)), 1), sample(T((2, 3)), -1, 0, 2),
            sample(T((2, 3)), 0, -1, 0)]


def diag() -> list:
    return [sample(T((3,))), sample(T((3,)), 1), sample(T((3, 4))), sample(T((3, 4)), -1),
            sample(T((3, 4)), 2), sample(T((3,), dtype="int64"), 1)]


def diagflat() -> list:
    return [sample(T((3,))), sample(T((2, 2)), 1), sample(T((3,)), -1)]


def narrow_copy() -> list:
    return [sample(T((4, 3)), 0, 1, 2), sample(T((4, 3)), 1, 0, 3), sample(T((4, 3)), -1, 2, 1)]


def broadcast_shapes() -> list:
    return [sample((2, 1), (2, 3)), sample((3,), (2, 1), (1, 1, 1)), sample(4, (1,))]


def block_diag() -> list:
    return [sample([T((2, 3)), T((1, 2))]), sample([T((2,)), T(()), T((2, 2))]),
            sample([T((2, 2)), T((2, 1), dtype="int64")])]


def cartesian_prod() -> list:
    return [sample([T((2,)), T((3,))]), sample([T((2,)), T((2,)), T((2,))]), sample([T((3,))])]


def combinations() -> list:
    return [sample(T((4,))), sample(T((4,)), 3), sample(T((3,)), 2, True)]


def inplace() -> list:
    return []  # (in place on a leaf that requires grad is an error: tests/test_inplace.py)


def unfold() -> list:
    return [sample(T((7,)), 0, 2, 1), sample(T((3, 7)), 1, 3, 2), sample(T((4, 3)), 0, 2, 2),
            sample(T((3, 5, 2)), -2, 5, 1), sample(T((4,), dtype="int64"), 0, 1, 1)]


def diff() -> list:
    return [sample(T((5,))), sample(T((3, 4)), 2, 0), sample(T((3, 4)), 1, -1, T((3, 1))),
            sample(T((3, 4)), 1, 1, append=T((3, 2))), sample(T((4,), dtype="int64")),
            sample(T((4,), dtype="bool")), sample(T((2, 3)), 1, 0, T((1, 3)), T((2, 3)))]


def split_with_sizes() -> list:
    return [sample(T((5, 3)), [1, 4]), sample(T((3, 5)), [2, 0, 3], 1)]


def unsafe_split() -> list:
    return [sample(T((5, 3)), 2), sample(T((3, 5)), 3, 1)]


def ravel() -> list:
    return [sample(T((2, 3))), sample(T(())), sample(T((2, 3, 2)))]


def select_scatter() -> list:
    return [sample(T((3, 4)), T((4,)), 0, 1), sample(T((3, 4)), T((3,)), 1, -1),
            sample(T((2, 3, 4)), T((2, 4)), 1, 2)]


def slice_scatter() -> list:
    return [sample(T((4, 3)), T((2, 3)), 0, 1, 3), sample(T((3, 6)), T((3, 3)), 1, 0, 6, 2),
            sample(T((4, 3)), T((4, 3)))]


def diagonal_scatter() -> list:
    return [sample(T((3, 4)), T((3,))), sample(T((3, 4)), T((3,)), 1),
            sample(T((2, 3, 4)), T((2, 3)), 0, 2, 1), sample(T((3, 3)), T((2,)), -1)]


def as_strided() -> list:
    return [sample(T((3, 4)), (2, 2), (1, 2)), sample(T((3, 4)), (2, 3), (4, 1), 1),
            sample(T((6,)), (4, 3), (1, 1), note="overlapping windows"),
            sample(T((3, 4)), (3,), (5,)), sample(T((2, 3)), (3, 2), (1, 3))]


def channel_shuffle() -> list:
    return [sample(T((2, 6, 3)), 3), sample(T((1, 4, 2, 2)), 2), sample(T((2, 4, 3)), 1),
            sample(T((1, 6, 1, 2, 1)), 2, note="3 spatial dims")]


def pixel_shuffle() -> list:
    return [sample(T((1, 8, 2, 3)), 2), sample(T((9, 2, 2)), 3, note="no batch"),
            sample(T((2, 1, 4, 2, 2)), 2, note="two batch dims")]


def pixel_unshuffle() -> list:
    return [sample(T((1, 2, 4, 6)), 2), sample(T((1, 3, 3)), 3, note="no batch"),
            sample(T((2, 1, 1, 4, 2)), 2, note="two batch dims")]


def matrices() -> list:
    return [sample(T((2, 3))), sample(T((2, 3, 4))), sample(T((3, 2), dtype="complex64"))]


def real_or_complex_matrix() -> list:
    return [sample(T((2, 3))), sample(T((3, 2), dtype="complex64"))]


def sum_to_size() -> list:
    return [sample(T((2, 3, 4)), (3, 1)), sample(T((2, 3, 4)), (1, 3, 4)),
            sample(T((2, 3)), (2, 3)), sample(T((4, 1, 3)), 1, 1, 3), sample(T((2, 3)), (3,))]
