"""Sample inputs of the distance ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample


def cosine_similarity() -> list:
    return [sample(T((3, 4)), T((3, 4))), sample(T((2, 3, 4)), T((3, 1)), dim=0),
            sample(T((4,)), T((4,)), 0, 1e-6, note="vectors"),
            sample(T((2, 3)), T((2, 3)), dim=-1)]


def pairwise_distance() -> list:
    return [sample(T((3, 4)), T((3, 4))), sample(T((3, 4)), T((4,)), p=1.0),
            sample(T((2, 3)), T((2, 3)), 3.0, 1e-3, True, note="p = 3, keepdim"),
            sample(T((5,)), T((5,)))]


def pdist() -> list:
    return [sample(T((4, 3))), sample(T((5, 2)), 1.0), sample(T((3, 4)), 3.0),
            sample(T((4, 2)), 0.5, note="p < 1"), sample(T((1, 3)), note="one row")]


def renorm() -> list:
    """Slices above and below maxnorm."""
    return [sample(T((3, 4)), 2.0, 0, 2.0), sample(T((2, 3, 2)), 1.0, 1, 1.5),
            sample(T((3, 4)), 3.0, -1, 1.0)]


def norm_except_dim() -> list:
    return [sample(T((4, 3))), sample(T((4, 3)), 2, 1), sample(T((2, 3, 4)), 2, 1),
            sample(T((3, 4)), 2, -1, note="all of v"), sample(T((2, 3)), 1, 0)]


def weight_norm() -> list:
    return [sample(T((4, 3)), T((4, 1))), sample(T((4, 3)), T((1, 3)), 1),
            sample(T((2, 3, 2)), T((1, 3, 1)), 1, note="a middle dim: ops"),
            sample(T((3, 2)), T(()), -1, note="all of v")]
