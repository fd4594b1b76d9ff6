"""Sample inputs of the upsample ops (see the package docstring): up and down,
by 2 exactly (nearest's shortcut) and by other ratios, both call forms
(output_size with optional scales; None and scale_factors), align_corners
both ways, an output of one position, an empty batch, uint8 for nearest."""
from __future__ import annotations

from . import T, sample


def nearest1d() -> list:
    return [sample(T((2, 3, 4)), (7,)), sample(T((2, 3, 4)), (8,), note="2x"),
            sample(T((1, 2, 5)), (3,), note="down"),
            sample(T((2, 2, 3)), None, (2.5,), note="scale_factors"),
            sample(T((2, 2, 3)), (5,), scales=1.5, note="scales"),
            sample(T((0, 2, 3)), (5,), note="empty batch"),
            sample(T((1, 2, 4), dtype="uint8", low=0, high=200), (6,), note="uint8")]


def nearest2d() -> list:
    return [sample(T((2, 2, 3, 4)), (5, 7)), sample(T((1, 1, 3, 3)), None, (2.0, 1.5)),
            sample(T((1, 2, 4, 3)), (3, 5), scales_h=0.8, scales_w=1.7, note="scales"),
            sample(T((1, 1, 3, 4)), None, (2.1, 1.2), note="2x and same size, other scales")]


def nearest3d() -> list:
    return [sample(T((1, 2, 2, 3, 2)), (3, 4, 4)),
            sample(T((1, 1, 2, 2, 3)), None, (1.5, 2.0, 1.0))]


def linear1d() -> list:
    return [sample(T((2, 3, 4)), (7,), False), sample(T((2, 3, 4)), (7,), True),
            sample(T((1, 2, 6)), (4,), False, note="down"),
            sample(T((2, 2, 3)), None, False, (2.5,), note="scale_factors"),
            sample(T((1, 1, 4)), (1,), True, note="one output"),
            sample(T((1, 2, 4)), (4,), False, note="same size"),
            sample(T((1, 2, 3)), (5,), False, scales=2.0, note="scales")]


def bilinear2d() -> list:
    return [sample(T((2, 2, 3, 4)), (5, 6), False), sample(T((2, 2, 3, 4)), (5, 6), True),
            sample(T((1, 2, 3, 3)), None, True, (2.0, 1.5), note="scale_factors"),
            sample(T((1, 1, 5, 4)), (3, 2), False, scales_h=0.5, scales_w=0.6,
                   note="down, scales")]


def bicubic2d() -> list:
    return [sample(T((1, 2, 4, 3)), (6, 5), False), sample(T((1, 2, 4, 3)), (6, 5), True),
            sample(T((1, 1, 5, 6)), (3, 4), False, note="down"),
            sample(T((1, 1, 3, 3)), None, False, (2.0, 1.5), note="scale_factors")]


def trilinear3d() -> list:
    return [sample(T((1, 2, 2, 3, 2)), (3, 4, 4), False),
            sample(T((1, 2, 2, 3, 2)), (3, 4, 4), True),
            sample(T((1, 1, 2, 2, 3)), None, False, (1.5, 2.0, 1.0), note="scale_factors")]


def nearest1d_backward() -> list:
    return [sample(T((2, 3, 7)), (7,), (2, 3, 4)), sample(T((1, 2, 3)), (3,), (1, 2, 5)),
            sample(T((2, 2, 5)), (5,), (2, 2, 3), scales=1.5, note="scales")]


def nearest2d_backward() -> list:
    return [sample(T((2, 2, 5, 7)), (5, 7), (2, 2, 3, 4))]


def nearest3d_backward() -> list:
    return [sample(T((1, 2, 3, 4, 4)), (3, 4, 4), (1, 2, 2, 3, 2))]


def linear1d_backward() -> list:
    return [sample(T((2, 3, 7)), (7,), (2, 3, 4), False),
            sample(T((2, 3, 7)), (7,), (2, 3, 4), True),
            sample(T((1, 2, 4)), (4,), (1, 2, 6), False, note="down")]


def bilinear2d_backward() -> list:
    return [sample(T((2, 2, 5, 6)), (5, 6), (2, 2, 3, 4), False),
            sample(T((2, 2, 5, 6)), (5, 6), (2, 2, 3, 4), True)]


def bicubic2d_backward() -> list:
    return [sample(T((1, 2, 6, 5)), (6, 5), (1, 2, 4, 3), False),
            sample(T((1, 1, 3, 4)), (3, 4), (1, 1, 5, 6), True, note="down")]


def trilinear3d_backward() -> list:
    return [sample(T((1, 2, 3, 4, 4)), (3, 4, 4), (1, 2, 2, 3, 2), False),
            sample(T((1, 2, 3, 4, 4)), (3, 4, 4), (1, 2, 2, 3, 2), True)]
