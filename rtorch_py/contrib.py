"""R torch's contrib functions: `contrib_sort_vertices`.

R torch runs it as a CUDA kernel only (from the Rotated_IoU project, for the
intersection polygons of rotated boxes); here the same algorithm runs on the
CPU, on NumPy, with no derivative (as R torch's).
"""
from __future__ import annotations

import numpy as np

from .tensor import Tensor, wrap

MAX_VERTICES = 9        # indices per polygon: up to 8 vertices, the first one repeated
INTERSECTIONS_FROM = 8  # vertices from here on are edge intersections (before: box corners)
_EPS = 1e-8
_INVALID = 10.0  # the key of an invalid vertex: after every valid one's (-1 to 5)


def _angle_key(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A key that orders points around the origin anticlockwise from the positive
    x axis: the upper half (y >= 0) by falling x|x|/r^2 (a monotone cos), then the
    lower half by rising x|x|/r^2 (the kernel's comparison, without its divisions)."""
    f = np.abs(x) * x / (x * x + y * y + _EPS)
    return np.where(y >= 0, -f, 4.0 + f)  # (upper: -1 to 1; lower: 3 to 5)


def contrib_sort_vertices(vertices: Tensor, mask: Tensor, num_valid: Tensor) -> Tensor:
    """The indices (0-based, int32, shape (B, N, 9)) of each polygon's valid
    vertices in anticlockwise order, starting at the positive x axis, with the
    first repeated after the last and the rest padded with the index of the first
    invalid intersection point (polygons of fewer than 3 valid vertices: all
    padding).

    vertices: float32 (B, N, M, 2), centred on each polygon's mean; mask: bool
    (B, N, M), which vertices are valid; num_valid: int32 (B, N), how many are.
    """
    v, m, nv = _checked(vertices, mask, num_valid)
    b, n, count = v.shape[0], v.shape[1], v.shape[2]
    key = np.where(m, _angle_key(v[..., 0], v[..., 1]), _INVALID)
    order = np.argsort(key, axis=-1, kind="stable")
    # The kernel picks, step by step, the next vertex strictly after the last one:
    # a vertex at the same angle as the one before it is never picked, and once
    # none is left each remaining step keeps index 0.
    ranked_key = np.take_along_axis(key, order, -1)
    same = np.concatenate([np.zeros((b, n, 1), bool),
                           np.abs(np.diff(ranked_key, axis=-1)) <= _EPS], -1)
    skipped = same | (ranked_key == _INVALID)
    order = np.take_along_axis(order, np.argsort(skipped, axis=-1, kind="stable"), -1)
    if count < MAX_VERTICES:
        order = np.concatenate([order, np.zeros((b, n, MAX_VERTICES - count), order.dtype)], -1)
    j = np.arange(MAX_VERTICES)
    picked = (~skipped).sum(-1, keepdims=True)
    ranked = np.where(j < picked, order[..., :MAX_VERTICES], 0)
    late = ~m[..., INTERSECTIONS_FROM:]
    pad = np.where(late.any(-1), INTERSECTIONS_FROM + late.argmax(-1), 0).astype(np.int32) \
        if late.shape[-1] else np.zeros((b, n), np.int32)
    k = nv[..., None]
    out = np.where(j < k, ranked, np.where(j == k, ranked[..., :1], pad[..., None]))
    out = np.where(k < 3, pad[..., None], out)
    # Two identical boxes: their 4 corners come twice among the first 8; keep one square.
    twice = (out[..., :4, None] == out[..., None, 4:8]).sum((-1, -2)) == 4
    same = (nv == 8) & twice
    out[..., 4] = np.where(same, out[..., 0], out[..., 4])
    out[..., 5:] = np.where(same[..., None], pad[..., None], out[..., 5:])
    return wrap(out.astype(np.int32))


def _checked(vertices: Tensor, mask: Tensor, num_valid: Tensor) -> tuple:
    for name, t in (("vertices", vertices), ("mask", mask), ("num_valid", num_valid)):
        if not isinstance(t, Tensor):
            raise TypeError(f"contrib_sort_vertices: {name} must be a tensor, got "
                            f"{type(t).__name__}")
    v, m, nv = vertices.data, mask.data, num_valid.data
    if v.dtype != np.float32 or v.ndim != 4 or v.shape[-1] != 2:
        raise RuntimeError(f"contrib_sort_vertices: vertices must be a float32 tensor of shape "
                           f"(B, N, M, 2), got {vertices.dtype!r} of shape {list(v.shape)}")
    if m.dtype != np.bool_ or m.shape != v.shape[:3]:
        raise RuntimeError(f"contrib_sort_vertices: mask must be a bool tensor of shape "
                           f"{list(v.shape[:3])}, got {mask.dtype!r} of shape {list(m.shape)}")
    if nv.dtype != np.int32 or nv.shape != v.shape[:2]:
        raise RuntimeError(f"contrib_sort_vertices: num_valid must be an int32 tensor "
                           f"(torch_int()) of shape {list(v.shape[:2])}, got {num_valid.dtype!r} "
                           f"of shape {list(nv.shape)}")
    return v, m, nv
