"""`nn_init_*`: fill a tensor in place (no gradient recorded), as R torch does:
the same in-place ops in the same order (`x$uniform_(a, b)`, `x$normal_()`,
...), with R torch's bounds, so a seed gives R torch's (and PyTorch's) values.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import constructors as _cr
from ..engine import bump_version, no_grad
from ..random import default_generator
from ..random import nn as random_nn
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


def _no_grad(tensor: Tensor, fill: Callable[[Tensor], Any]) -> Tensor:
    """fill(tensor) with its in-place ops outside autograd (R torch's
    nn_init_no_grad_*)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn_init_* expects a tensor, got {type(tensor).__name__}")
    with no_grad():
        fill(tensor)
    return tensor


def nn_init_uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    return _no_grad(tensor, lambda t: t.uniform_(a, b))


def nn_init_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    return _no_grad(tensor, lambda t: t.normal_(mean, std))


# Cody's rational Chebyshev approximations of the normal distribution function
# (W. J. Cody, Math. Comp. 1969), in the three ranges R's pnorm() uses them.
_CENTRE_NUM = (2.2352520354606839287, 161.02823106855587881, 1067.6894854603709582,
               18154.981253343561249, 0.065682337918207449113)
_CENTRE_DEN = (47.20258190468824187, 976.09855173777669322, 10260.932208618978205,
               45507.789335026729956)
_MIDDLE_NUM = (0.39894151208813466764, 8.8831497943883759412, 93.506656132177855979,
               597.27027639480026226, 2494.5375852903726711, 6848.1904505362823326,
               11602.651437647350124, 9842.7148383839780218, 1.0765576773720192317e-8)
_MIDDLE_DEN = (22.266688044328115691, 235.38790178262499861, 1519.377599407554805,
               6485.558298266760755, 18615.571640885098091, 34900.952721145977266,
               38912.003286093271411, 19685.429676859990727)
_TAIL_NUM = (0.21589853405795699, 0.1274011611602473639, 0.022235277870649807,
             0.001421619193227893466, 2.9112874951168792e-5, 0.02307344176494017303)
_TAIL_DEN = (1.28426009614491121, 0.468238212480865118, 0.0659881378689285515,
             0.00378239633202758244, 7.29751555083966205e-5)


def _gauss_tail(x: float, ratio: float) -> float:
    """ratio * exp(-x^2 / 2), the square split at a multiple of 1/16 so that
    its rounding error does not reach the exponential."""
    head = math.trunc(x * 16) / 16
    rest = (x - head) * (x + head)
    return math.exp(-head * head * 0.5) * math.exp(-rest * 0.5) * ratio


def pnorm(x: float) -> float:
    """The standard normal distribution function, as R's `stats::pnorm` computes
    it (R torch bounds trunc_normal_ with it)."""
    if math.isnan(x):
        return x
    y = abs(x)
    if y <= 0.67448975:
        num = den = 0.0
        if y > 2.0 ** -53:
            z = x * x
            num, den = _CENTRE_NUM[4] * z, z
            for i in range(3):
                num, den = (num + _CENTRE_NUM[i]) * z, (den + _CENTRE_DEN[i]) * z
        return 0.5 + x * (num + _CENTRE_NUM[3]) / (den + _CENTRE_DEN[3])
    if y <= math.sqrt(32):
        num, den = _MIDDLE_NUM[8] * y, y
        for i in range(7):
            num, den = (num + _MIDDLE_NUM[i]) * y, (den + _MIDDLE_DEN[i]) * y
        below = _gauss_tail(y, (num + _MIDDLE_NUM[7]) / (den + _MIDDLE_DEN[7]))
    elif -37.5193 < x < 8.2924:
        z = 1.0 / (x * x)
        num, den = _TAIL_NUM[5] * z, z
        for i in range(4):
            num, den = (num + _TAIL_NUM[i]) * z, (den + _TAIL_DEN[i]) * z
        ratio = (0.398942280401432677939946059934 - z * (num + _TAIL_NUM[4]) /
                 (den + _TAIL_DEN[4])) / y
        below = _gauss_tail(x, ratio)
    else:
        return 1.0 if x > 0 else 0.0
    return 1.0 - below if x > 0 else below


def nn_init_trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
                          a: float = -2.0, b: float = 2.0) -> Tensor:
    """Normal values truncated to [a, b], by the inverse distribution function:
    uniform on [2 F(a) - 1, 2 F(b) - 1], erfinv, scaled and clamped (R torch's
    steps; no redraws, so any bounds finish)."""
    low, high = pnorm((a - mean) / std), pnorm((b - mean) / std)

    def fill(t: Tensor) -> None:
        t.uniform_(2 * low - 1, 2 * high - 1)
        t.erfinv_()
        t.mul_(std * math.sqrt(2))
        t.add_(mean)
        t.clamp_(min=a, max=b)
    return _no_grad(tensor, fill)


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
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))   # (R torch's rounding)
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
    """The Q of a QR of standard normal values (float32, as R torch draws them),
    its columns' signs made those of R's diagonal."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _cr.torch_randn(rows, cols)
    if rows < cols:
        flat = flat.t()
    q, r = flat.qr()
    q = q * r.diag(0).sign()
    if rows < cols:
        q = q.t()

    def fill(t: Tensor) -> None:
        t.view_as(q).copy_(q)
        t.mul_(gain)
    return _no_grad(tensor, fill)


def nn_init_sparse_(tensor: Tensor, sparsity: float, std: float = 0.01) -> Tensor:
    """PyTorch's sparse_ (R torch has none): N(0, std) values, then in each
    column the rows of the first ceil(sparsity * rows) entries of a random
    permutation set to 0."""
    def fill(t: Tensor) -> None:
        random_nn.sparse_(default_generator, t.data, sparsity, std)
        bump_version(t)
    return _no_grad(tensor, fill)


__all__ = [n for n in list(globals()) if n.startswith("nn_init_")]
