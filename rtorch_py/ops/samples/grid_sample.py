"""Sample inputs of the grid sampler and affine grid ops: every mode and padding
mode, align_corners both ways, grid points inside and outside [-1, 1]."""
from __future__ import annotations

from . import T, sample


def _grid(shape: tuple) -> T:
    return T(shape, low=-1.3, high=1.3)


def grid_sampler_2d() -> list:
    out = []
    for mode in (0, 1, 2):
        for padding in (0, 1, 2):
            for align in (False, True):
                out.append(sample(T((2, 2, 4, 5)), _grid((2, 3, 2, 2)), mode, padding, align,
                                  note=f"mode {mode}, padding {padding}, align {align}"))
    return out


def grid_sampler_3d() -> list:
    return [sample(T((1, 2, 3, 4, 3)), _grid((1, 2, 2, 3, 3)), mode, padding, align,
                   note=f"mode {mode}, padding {padding}, align {align}")
            for mode in (0, 1) for padding in (0, 1, 2) for align in (False, True)]


def grid_sampler() -> list:
    return [sample(T((1, 2, 3, 4)), _grid((1, 2, 3, 2)), 0, 0, False),
            sample(T((1, 1, 2, 3, 3)), _grid((1, 2, 1, 2, 3)), 0, 1, True, note="5-d")]


def affine_grid_generator() -> list:
    return [sample(T((2, 2, 3)), (2, 3, 4, 5), False), sample(T((2, 2, 3)), (2, 1, 4, 5), True),
            sample(T((1, 3, 4)), (1, 2, 2, 3, 4), False, note="3-d"),
            sample(T((1, 3, 4)), (1, 1, 3, 2, 2), True, note="3-d, align"),
            sample(T((1, 2, 3)), (1, 1, 1, 3), False, note="one row")]
