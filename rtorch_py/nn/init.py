"""`nn_init_*`: fill a tensor in place (no gradient recorded), as R torch does.

Random values come from the package's generator (`torch_manual_seed`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import creation as _cr
from ..tensor import Tensor
from .module import write_


def _fill(tensor: Tensor, arr: np.ndarray) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn_init_* expects a tensor, got {type(tensor).__name__}")
    return write_(tensor, np.asarray(arr, dtype=tensor.data.dtype).reshape(tensor.shape))


def _fans(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def nn_init_calculate_gain(nonlinearity: str, param: Any = None) -> float:
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity!r}")


def _rand(shape: tuple) -> np.ndarray:
    return _cr.torch_rand(*shape, dtype="float64").data


def _randn(shape: tuple) -> np.ndarray:
    return _cr.torch_randn(*shape, dtype="float64").data


def nn_init_uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    return _fill(tensor, a + (b - a) * _rand(tensor.shape))


def nn_init_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    return _fill(tensor, mean + std * _randn(tensor.shape))


def nn_init_trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
                          a: float = -2.0, b: float = 2.0) -> Tensor:
    out = mean + std * _randn(tensor.shape)
    bad = (out < a) | (out > b)
    while bad.any():  # redraw the few values outside [a, b]
        out[bad] = mean + std * _randn((int(bad.sum()),))
        bad = (out < a) | (out > b)
    return _fill(tensor, out)


def nn_init_constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, np.full(tensor.shape, val))


def nn_init_ones_(tensor: Tensor) -> Tensor:
    return nn_init_constant_(tensor, 1.0)


def nn_init_zeros_(tensor: Tensor) -> Tensor:
    return nn_init_constant_(tensor, 0.0)


def nn_init_eye_(tensor: Tensor) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def nn_init_dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out = np.zeros(tensor.shape)
    og = tensor.shape[0] // groups
    centre = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(og, tensor.shape[1])):
            out[(g * og + d, d) + centre] = 1
    return _fill(tensor, out)


def nn_init_xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return nn_init_uniform_(tensor, -a, a)


def nn_init_xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _fans(tensor)
    return nn_init_normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return nn_init_calculate_gain(nonlinearity, a) / math.sqrt(fan)


def nn_init_kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                             nonlinearity: str = "leaky_relu") -> Tensor:
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return nn_init_uniform_(tensor, -bound, bound)


def nn_init_kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                            nonlinearity: str = "leaky_relu") -> Tensor:
    return nn_init_normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))


def nn_init_orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _randn((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q)


def nn_init_sparse_(tensor: Tensor, sparsity: float, std: float = 0.01) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    out = std * _randn((rows, cols))
    zeros = int(math.ceil(sparsity * rows))
    for c in range(cols):  # a random permutation per column, from the package's generator
        out[np.argsort(_rand((rows,)), kind="stable")[:zeros], c] = 0
    return _fill(tensor, out)


__all__ = [n for n in list(globals()) if n.startswith("nn_init_")]
