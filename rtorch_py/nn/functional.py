"""The `nnf_*` functions (R torch's `torch.nn.functional`), 0-based as all of
the Python API: dims, and class indices of cross_entropy / nll_loss targets.

Most are compositions of tensor ops (so their derivatives come for free);
convolution, pooling, padding, erf, nll_loss and sparsemax are ops of their own
(`rtorch_py/ops/nn_primitives.py`).
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import numpy as np

from .. import autograd as _ag
from .. import constructors as _cr
from .. import ops as _ops
from ..meta import MetaArray
from ..formals import r_counted, r_formals
from ..random import default_generator
from ..random import nn as random_nn
from ..tensor import Tensor, traceable, wrap
from ..ops.nn_primitives import (avg_pool_conv, constant_pad_nd, convolution, pool_gather,
                                 silu)
from ..ops import activation as _act
from ..ops import ctc as _ctc
from ..ops import distance as _dist
from ..ops import nn_primitives as _nn_ops
from ..ops import pooling as _pool
from ..ops.pointwise import erf
from ..ops import nn_kernels as _K
from ..ops import grid_sample as _grid
from ..ops.dispatch import autocast_policy
from ..ops.out_forms import write_into

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"reduction must be one of 'mean', 'sum' or 'none', got {reduction!r}")


def _same_shape(input: Tensor, target: Tensor, fn: str) -> None:
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{fn}: target size ({list(target.shape)}) must be the same as input "
                         f"size ({list(input.shape)})")


def _t(x: Any, like: Tensor) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return wrap(np.asarray(x, dtype=like.data.dtype))


# --------------------------------------------------------------------------
# Activations


def _inplace_or(fn: Any, inplace: bool) -> Any:
    """The op, or its in-place form (`torch_elu_`) when `inplace`."""
    return _ops.REGISTRY[fn.__name__ + "_"].fn if inplace else fn


def nnf_relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _inplace_or(_ops.relu, inplace)(input)


def nnf_relu_(input: Tensor) -> Tensor:
    return nnf_relu(input, inplace=True)


def nnf_relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return nnf_hardtanh(input, 0.0, 6.0, inplace)


def nnf_hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> Tensor:
    return _inplace_or(_act.hardtanh, inplace)(input, min_val, max_val)


def nnf_hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return nnf_hardtanh(input, min_val, max_val, inplace=True)


def nnf_leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _ops.where(input > 0, input, input * negative_slope)


def nnf_elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _inplace_or(_act.elu, inplace)(input, alpha)


def nnf_elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return nnf_elu(input, alpha, inplace=True)


def nnf_celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _inplace_or(_act.celu, inplace)(input, alpha)


def nnf_celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return nnf_celu(input, alpha, inplace=True)


def nnf_selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _inplace_or(_act.selu, inplace)(input)


def nnf_selu_(input: Tensor) -> Tensor:
    return nnf_selu(input, inplace=True)


def nnf_rrelu(input: Tensor, lower: float = 1 / 8, upper: float = 1 / 3, training: bool = False,
              inplace: bool = False) -> Tensor:
    return _inplace_or(_act.rrelu, inplace)(input, lower, upper, training)


def nnf_rrelu_(input: Tensor, lower: float = 1 / 8, upper: float = 1 / 3,
               training: bool = False) -> Tensor:
    """As R torch's: the training form (slopes drawn), not in place."""
    return nnf_rrelu(input, lower, upper, training=True)


def nnf_gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2.0 / math.pi)
        return input * 0.5 * (inner.tanh() + 1.0)
    if approximate != "none":
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return input * 0.5 * (erf(input / math.sqrt(2.0)) + 1.0)


def nnf_silu(input: Tensor, inplace: bool = False) -> Tensor:
    return silu(input)


def nnf_mish(input: Tensor) -> Tensor:
    return input * nnf_softplus(input).tanh()


def nnf_sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def nnf_tanh(input: Tensor) -> Tensor:
    return input.tanh()


def _log1p_exp(z: Tensor) -> Tensor:
    """log(1 + exp(z)) without overflow; its derivative sigmoid(z) everywhere (at
    0 too: each branch is smooth, and sees only its own side of 0)."""
    above = z + (-z.clamp(min=0.0)).exp().log1p()
    below = z.clamp(max=0.0).exp().log1p()
    return _ops.where(z > 0, above, below)


def nnf_softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    z = input * beta
    soft = _log1p_exp(z) / beta
    return _ops.where(z > threshold, input, soft)


def nnf_logsigmoid(input: Tensor) -> Tensor:
    return -_log1p_exp(-input)


def nnf_softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1.0)


def nnf_tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


def nnf_hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return (input / 6.0 + 0.5).clamp(min=0.0, max=1.0)


def nnf_hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return input * nnf_hardsigmoid(input)


def nnf_hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return _act.hardshrink(input, lambd)


def nnf_softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return _ops.where(input > lambd, input - lambd,
                      _ops.where(input < -lambd, input + lambd, input * 0.0))


def nnf_threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return _inplace_or(_act.threshold, inplace)(input, threshold, value)


def nnf_threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return nnf_threshold(input, threshold, value, inplace=True)


@autocast_policy("lower")
def nnf_prelu(input: Tensor, weight: Tensor) -> Tensor:
    return _act.prelu(input, weight)


@r_counted(dim="dim")
def nnf_glu(input: Tensor, dim: int = -1) -> Tensor:
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


@r_counted(dim="dim")
def nnf_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return input.softmax(dim) if dtype is None else input.to(dtype=dtype).softmax(dim)


@r_counted(dim="dim")
def nnf_softmin(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return nnf_softmax(-input, dim, dtype)


@r_counted(dim="dim")
@r_formals("input, dim = NULL, dtype = NULL")
def nnf_log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return input.log_softmax(dim) if dtype is None else input.to(dtype=dtype).log_softmax(dim)


# --------------------------------------------------------------------------
# Linear


@autocast_policy("lower")
def nnf_linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    # as libtorch's linear: a bias is fused into addmm on a matrix, and on a contiguous
    # input of other ranks flattened to one (so the grad_fn is AddmmBackward0 or
    # ViewBackward0); otherwise matmul, then the bias added
    if bias is not None and bias.ndim == 1 and (input.ndim == 2 or input.data.flags.c_contiguous):
        if input.ndim == 2:
            return _ops.addmm(bias, input, weight.t())
        flat = input.reshape(-1, input.shape[-1])
        return _ops.addmm(bias, flat, weight.t()).view(*input.shape[:-1], weight.shape[0])
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def nnf_bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
                 bias: Tensor | None = None) -> Tensor:
    # y[n, o] = x1[n, i] W[o, i, j] x2[n, j]
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out_f, in1, in2 = weight.shape
    t = x1.matmul(weight.permute(1, 0, 2).reshape(in1, out_f * in2))  # n, o*j
    y = (t.reshape(-1, out_f, in2) * x2.unsqueeze(1)).sum(dim=-1)
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, out_f)


# --------------------------------------------------------------------------
# Dropout


def check_dropout_p(p: float) -> float:
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return p


def _dropout(input: Tensor, p: float, training: bool, feature: bool = False,
             alpha: bool = False) -> Tensor:
    """libtorch's dropout family: `input * noise` (alpha: `+ b`), the noise
    Bernoulli(1 - p) from the default generator on an array like the input
    (feature: one per (N, C) channel); nothing drawn when p is 0 or 1."""
    p = check_dropout_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:   # (a zero of the input's own dtype: an integer input stays integer)
        return input * wrap(np.zeros((), input.data.dtype))
    if input.data.dtype.kind not in "fc":  # (libtorch scales in the input's dtype: refused)
        raise RuntimeError(f"dropout: result type Float can't be cast to the desired output "
                           f"type {input.dtype.r_name}")
    if isinstance(input.data, MetaArray):   # (no values, nothing to draw)
        return input * 1.0
    if alpha:
        a, b = random_nn.alpha_dropout_noise(default_generator, input.data, p, feature)
        return input * wrap(a) + wrap(b)
    return input * wrap(random_nn.dropout_noise(default_generator, input.data, p, feature))


def nnf_dropout(input: Tensor, p: float = 0.5, training: bool = True,
                inplace: bool = False) -> Tensor:
    return _dropout(input, p, training)


def nnf_dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
                  inplace: bool = False) -> Tensor:
    """Channel dropout: one draw per (N, C) (a 3-D input is (N, C, L))."""
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated; give a 3-D (C, H, W) or 4-D (N, C, H, W) input.", stacklevel=2)
    elif input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L). "
                      "Use dropout1d for 1-D dropout.", stacklevel=2)
    return _dropout(input, p, training, feature=True)


def nnf_dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
                  inplace: bool = False) -> Tensor:
    return _dropout(input, p, training, feature=True)


def nnf_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                      inplace: bool = False) -> Tensor:
    return _dropout(input, p, training, alpha=True)


def nnf_feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                              inplace: bool = False) -> Tensor:
    return _dropout(input, p, training, feature=True, alpha=True)



# --------------------------------------------------------------------------
# Losses (targets of class-index losses are 0-based here)


def _warn_broadcast(input: Tensor, target: Tensor) -> None:
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({list(target.shape)}) that is different to the "
                      f"input size ({list(input.shape)}). This will likely lead to incorrect "
                      "results due to broadcasting. Please ensure they have the same size.",
                      stacklevel=3)


@autocast_policy("fp32")
def nnf_mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _warn_broadcast(input, target)
    d = input - target
    return _reduce(d * d, reduction)


@autocast_policy("fp32")
def nnf_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _warn_broadcast(input, target)
    return _reduce((input - target).abs(), reduction)


@autocast_policy("fp32")
@r_formals("input, target, reduction = 'mean'")
def nnf_smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                       beta: float = 1.0) -> Tensor:
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = _ops.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def nnf_huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   delta: float = 1.0) -> Tensor:
    d = (input - target).abs()
    loss = _ops.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    return _reduce(loss, reduction)


def _log_clamped(x: Tensor) -> Tensor:
    # as torch: log is clamped at -100 so that 0 * log(0) stays finite
    return x.log().clamp(min=-100.0)


@autocast_policy("fp32")
def nnf_binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                             reduction: str = "mean") -> Tensor:
    _same_shape(input, target, "binary_cross_entropy")
    if np.any((input.data < 0) | (input.data > 1)):
        raise ValueError("binary_cross_entropy: all elements of input should be between 0 and 1")
    loss = -(target * _log_clamped(input) + (1.0 - target) * _log_clamped(1.0 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def nnf_binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                         weight: Tensor | None = None,
                                         reduction: str = "mean",
                                         pos_weight: Tensor | None = None) -> Tensor:
    _same_shape(input, target, "binary_cross_entropy_with_logits")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of 'mean', 'sum' or 'none', got {reduction!r}")
    return _nn_ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def _class_dim_last(x: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N * d1 * ..., C)."""
    if x.ndim <= 2:
        return x if x.ndim == 2 else x.unsqueeze(0)
    perm = (0,) + tuple(range(2, x.ndim)) + (1,)
    return x.permute(*perm).reshape(-1, x.shape[1])


@r_counted(target="label", ignore_index="ignore_label")
@autocast_policy("fp32")
def nnf_nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                 ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    if target.data.dtype.kind not in "iu":
        raise TypeError(f"nll_loss: the target must hold class indices (an integer tensor), "
                        f"got {target.dtype}")
    logp = _class_dim_last(input)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of 'mean', 'sum' or 'none', got {reduction!r}")
    return _nn_ops.nll_loss(logp, target, weight, ignore_index, reduction)


@r_counted(target="label", ignore_index="ignore_label")
@autocast_policy("fp32")
@r_formals("input, target, weight = NULL, ignore_index = -100, "
           "reduction = c('mean', 'sum', 'none')")
def nnf_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                      ignore_index: int = -100, reduction: str = "mean",
                      label_smoothing: float = 0.0) -> Tensor:
    logp = input.log_softmax(1 if input.ndim > 1 else 0)
    if target.data.dtype.kind == "f":  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise TypeError(
                f"cross_entropy: a {target.dtype} target must hold class probabilities, of "
                f"the input's shape {list(input.shape)}; got shape {list(target.shape)}. For "
                "class indices give an integer tensor (dtype = torch_long()).")
        n_class = input.shape[1] if input.ndim > 1 else input.shape[0]
        if label_smoothing > 0:
            target = target * (1.0 - label_smoothing) + label_smoothing / n_class
        loss = -(logp * target)
        if weight is not None:
            shape = (1, -1) + (1,) * (input.ndim - 2)
            loss = loss * weight.reshape(*shape)
        loss = loss.sum(dim=1 if input.ndim > 1 else 0)
        return _reduce(loss, reduction)
    loss = nnf_nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing > 0:
        # the smoothing term, as torch: (weighted) sum over classes of -log p, / C
        rows = _class_dim_last(logp)
        n_class = rows.shape[1]
        if weight is not None:
            rows = rows * weight.reshape(1, -1)
        smooth = -rows.sum(dim=1) / float(n_class)
        tgt = target.data.reshape(-1)
        valid = tgt != ignore_index
        smooth = smooth * wrap(valid.astype(input.data.dtype))
        if reduction == "mean":
            denom = valid.sum() if weight is None else \
                weight.data[np.where(valid, tgt, 0)][valid].sum()
            smooth = smooth.sum() / float(denom)
        elif reduction == "sum":
            smooth = smooth.sum()
        else:
            smooth = smooth.reshape(*target.shape)
        loss = loss * (1.0 - label_smoothing) + smooth * label_smoothing
    return loss


@autocast_policy("fp32")
@r_formals("input, target, reduction = 'mean'")
def nnf_kl_div(input: Tensor, target: Tensor, reduction: str = "mean",
               log_target: bool = False) -> Tensor:
    if log_target:
        loss = target.exp() * (target - input)
    else:
        t = target.data
        logt = np.where(t > 0, np.log(np.where(t > 0, t, 1)), 0).astype(t.dtype)
        loss = target * (wrap(logt) - input)
    if reduction == "batchmean":
        return loss.sum() / float(input.shape[0])
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size. 'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.", stacklevel=2)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def nnf_poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                         full: bool = False, eps: float = 1e-8,
                         reduction: str = "mean") -> Tensor:
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        t = target.data
        st = np.where(t > 1, t * np.log(np.where(t > 1, t, 1)) - t +
                      0.5 * np.log(2 * np.pi * np.where(t > 1, t, 1)), 0).astype(t.dtype)
        loss = loss + wrap(st)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def nnf_margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor,
                            margin: float = 0.0, reduction: str = "mean") -> Tensor:
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0.0), reduction)


@autocast_policy("fp32")
def nnf_hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                             reduction: str = "mean") -> Tensor:
    neg = (-input + margin).clamp(min=0.0)
    zero = input * 0.0
    loss = _ops.where(target == 1, input, zero) + _ops.where(target == -1, neg, zero)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def nnf_soft_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return _reduce(_log1p_exp(-target * input), reduction)


@r_counted(dim="dim")
def nnf_cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    return _dist.cosine_similarity(x1, x2, dim, eps)


@autocast_policy("fp32")
def nnf_cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                              margin: float = 0.0, reduction: str = "mean") -> Tensor:
    cos = nnf_cosine_similarity(input1, input2, dim=-1, eps=1e-12)
    zero = cos * 0.0
    loss = _ops.where(target == 1, 1.0 - cos, zero) + \
        _ops.where(target == -1, (cos - margin).clamp(min=0.0), zero)
    return _reduce(loss, reduction)


def nnf_pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                          keepdim: bool = False) -> Tensor:
    return _dist.pairwise_distance(x1, x2, p, eps, keepdim)


def nnf_pdist(input: Tensor, p: float = 2) -> Tensor:
    return _dist.pdist(input, p)


@autocast_policy("fp32")
def nnf_triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                            margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                            swap: bool = False, reduction: str = "mean") -> Tensor:
    dp = nnf_pairwise_distance(anchor, positive, p, eps)
    dn = nnf_pairwise_distance(anchor, negative, p, eps)
    if swap:
        ds = nnf_pairwise_distance(positive, negative, p, eps)
        dn = _ops.minimum(dn, ds)
    return _reduce((dp - dn + margin).clamp(min=0.0), reduction)


def nnf_triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                                          distance_function: Any = None, margin: float = 1.0,
                                          swap: bool = False,
                                          reduction: str = "mean") -> Tensor:
    """The triplet loss with any distance (a function of two tensors; the
    pairwise distance by default)."""
    dist = nnf_pairwise_distance if distance_function is None else distance_function
    dp = dist(anchor, positive)
    dn = dist(anchor, negative)
    if swap:
        dn = _ops.minimum(dn, dist(positive, negative))
    return _reduce((dp - dn + margin).clamp(min=0.0), reduction)


def nnf_ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
                 blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of log-probabilities (T, N, C) (ops/ctc.py); targets and blank
    are class numbers from 0 (the blank), in R too, as in R torch."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of 'mean', 'sum' or 'none', got {reduction!r}")
    return _ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         {"none": 0, "mean": 1, "sum": 2}[reduction], zero_infinity)


def nnf_multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                    reduction: str = "mean") -> Tensor:
    loss = -(target * nnf_logsigmoid(input) + (1.0 - target) * nnf_logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.mean(dim=-1), reduction)


@r_counted(target="label")
@autocast_policy("fp32")
def nnf_multilabel_margin_loss(input: Tensor, target: Tensor,
                               reduction: str = "mean") -> Tensor:
    """Each row's targets are the class indices before its first -1; every
    (target, non-target) pair adds max(0, 1 - (x[target] - x[other])) / C."""
    x = input if input.ndim == 2 else input.unsqueeze(0)
    tgt = target.data.reshape(x.shape).astype(np.int64)
    n, c = x.shape
    is_target = np.zeros((n, c), dtype=bool)
    for r in range(n):  # a loop over rows (samples), reading their label lists
        for v in tgt[r]:
            if v == -1:
                break
            if not 0 <= v < c:  # (libtorch's words: no number to count from 1 in R)
                raise RuntimeError("argument #2 'target' is out of range")
            is_target[r, v] = True
    pairs = (is_target[:, :, None] & ~is_target[:, None, :]).astype(x.data.dtype)
    hinge = (x.unsqueeze(1) - x.unsqueeze(2) + 1.0).clamp(min=0.0)  # [n, j, i]
    loss = (hinge * wrap(pairs)).sum(dim=(1, 2)) / float(c)
    if input.ndim == 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def nnf_area_under_min_fpr_fnr(input: Tensor, target: Tensor) -> Tensor:
    """AUM (Hillman & Hocking): the area under min(FPR, FNR) over all thresholds
    of the scores `input`; positives are where `target` has its largest value."""
    x = input.reshape(-1)
    t = target.data.reshape(-1)
    if t.shape != x.shape:
        raise ValueError(f"area_under_min_fpr_fnr: target has {t.size} values, input "
                         f"{x.shape[0]}")
    pos = t == t.max() if t.size else t.astype(bool)
    neg = ~pos
    if not pos.any() or not neg.any():   # no error to measure
        return (input * 0.0).sum()
    order = np.argsort(-x.data, kind="stable")
    thresh = -x[wrap(order.astype(np.int64))]            # ascending thresholds (differentiable)
    fp = np.cumsum(neg[order]) / neg.sum()                # FPR once past each threshold
    fn = np.cumsum(pos[order][::-1])[::-1] / pos.sum()    # FNR up to each threshold
    changes = np.diff(thresh.data) != 0
    last = np.append(changes, True)                       # last of each group of ties
    first = np.insert(changes, 0, True)                   # first of each group
    uniq = thresh[wrap(np.nonzero(last)[0].astype(np.int64))]
    low = np.minimum(fp[last][:-1], fn[first][1:]).astype(input.data.dtype)
    if low.size == 0:
        return (input * 0.0).sum()
    return (wrap(low) * (uniq[1:] - uniq[:-1])).sum()


@r_counted(dim="wrapper_dim")
def nnf_contrib_sparsemax(input: Tensor, dim: int = -1) -> Tensor:
    return _nn_ops.sparsemax(input, dim)


@r_counted(target="label")
def nnf_multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                          weight: Tensor | None = None, reduction: str = "mean") -> Tensor:
    return _nn_ops.multi_margin_loss(input, target, p, margin, weight, reduction)


# --------------------------------------------------------------------------
# Normalisation


def nnf_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
                   bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) \
        else tuple(normalized_shape)
    if _fused_layer_norm(input, weight, bias):
        return _nn_ops.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean = input.mean(dim=dims, keepdim=True)
    xc = input - mean
    var = (xc * xc).mean(dim=dims, keepdim=True)
    out = xc / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _fused_layer_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> bool:
    """Whether the one-node kernel takes it: float32/float64 arrays of one dtype
    (half precision and meta tensors are composed from ops)."""
    d = input.data
    if type(d) is not np.ndarray or d.dtype not in (np.float32, np.float64):
        return False
    return all(t is None or (type(t.data) is np.ndarray and t.data.dtype == d.dtype)
               for t in (weight, bias))


def nnf_group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
                   bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    n, c = input.shape[:2]
    if c % num_groups:
        raise ValueError(f"group_norm: the {c} channels can't be split into {num_groups} groups")
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(dim=2, keepdim=True)
    xc = x - mean
    var = (xc * xc).mean(dim=2, keepdim=True)
    out = (xc / (var + eps).sqrt()).reshape(*input.shape)
    shape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(*shape)
    if bias is not None:
        out = out + bias.reshape(*shape)
    return out


def nnf_batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                   weight: Tensor | None = None, bias: Tensor | None = None,
                   training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """PyTorch's batch-norm kernel (one NativeBatchNormBackward0 node); the batch's
    statistics when training or without running ones, which training updates. (One value
    per channel is allowed, as in libtorch: the "more than 1 value" check is PyTorch's
    Python layer, which R torch doesn't have.)"""
    return _nn_ops._batch_norm_impl_index(input, weight, bias, running_mean, running_var,
                                          training or running_mean is None, momentum, eps,
                                          False)[0]


def nnf_instance_norm(input: Tensor, running_mean: Tensor | None = None,
                      running_var: Tensor | None = None, weight: Tensor | None = None,
                      bias: Tensor | None = None, use_input_stats: bool = True,
                      momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if running_mean is not None or running_var is not None or not use_input_stats:
        raise NotImplementedError("instance_norm: running statistics are not supported; "
                                  "it normalises with each instance's own statistics")
    dims = tuple(range(2, input.ndim))
    mean = input.mean(dim=dims, keepdim=True)
    xc = input - mean
    var = (xc * xc).mean(dim=dims, keepdim=True)
    out = xc / (var + eps).sqrt()
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(*shape)
    if bias is not None:
        out = out + bias.reshape(*shape)
    return out


@r_counted(dim="dim")
def nnf_normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
                  out: Tensor | None = None) -> Tensor:
    """`out`: the tensor to write the result into (returned)."""
    norm = (input.abs() ** p).sum(dim=dim, keepdim=True) ** (1.0 / p)
    result = input / norm.clamp(min=eps)
    return result if out is None else write_into(out, result, "nnf_normalize", "torch_div")


# --------------------------------------------------------------------------
# Embedding, one-hot, shape helpers


@r_counted(input="label", padding_idx="label")
def nnf_embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
                  max_norm: float | None = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    if input.data.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be an integer tensor, got {input.dtype}")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: scale_grad_by_freq = TRUE is not supported")
    idx = input.data
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")  # (libtorch's words)
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    return _nn_ops.embedding(input, weight, padding_idx)


def _renorm_rows(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """The rows `idx` picks of `weight` rescaled in place to a norm of at most max_norm."""
    with _ag.with_no_grad():
        rows = np.unique(idx)
        w = weight.data[rows]
        norms = (np.abs(w) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.data[rows] = (w * scale[:, None]).astype(weight.data.dtype)


@r_counted(input="label", padding_idx="label")
def nnf_embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                      max_norm: float | None = None, norm_type: float = 2.0,
                      scale_grad_by_freq: bool = False, mode: str = "mean",
                      sparse: bool = False, per_sample_weights: Tensor | None = None,
                      include_last_offset: bool = False,
                      padding_idx: int | None = None) -> Tensor:
    """Bags of embeddings reduced by `mode`; the bags are 2-D input's rows, or start
    at `offsets` (`include_last_offset`: its last one ends the last bag). `sparse`
    gradients are given dense, as every gradient here."""
    if scale_grad_by_freq:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq = TRUE is not supported")
    if max_norm is not None:
        _renorm_rows(weight, input.data.reshape(-1), max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise ValueError("embedding_bag: per_sample_weights only work with mode = 'sum'")
    psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets must not be given when input is 2-D "
                             "(each row is a bag)")
        width = input.shape[1]
        spans = [(i * width, (i + 1) * width) for i in range(input.shape[0])]
    else:
        if offsets is None:
            raise ValueError("embedding_bag: offsets are needed when input is 1-D")
        off = list(offsets.data.reshape(-1).astype(np.int64))
        off += [] if include_last_offset else [input.shape[0]]
        spans = [(off[i], off[i + 1]) for i in range(len(off) - 1)]
    flat = input.data.reshape(-1)
    outs = []
    for a, z in spans:  # one bag at a time (bags have different sizes)
        pos = np.arange(a, z)
        if padding_idx is not None:
            pos = pos[flat[pos] != padding_idx]
        if pos.size == 0:
            outs.append(weight.sum(dim=0) * 0.0)
            continue
        rows = weight[wrap(flat[pos].astype(np.int64))]
        if psw is not None:
            rows = rows * psw[wrap(pos)].unsqueeze(1)
        if mode == "sum":
            outs.append(rows.sum(dim=0))
        elif mode == "mean":
            outs.append(rows.mean(dim=0))
        elif mode == "max":
            outs.append(rows.max(dim=0)[0])
        else:
            raise ValueError(f"mode must be 'sum', 'mean' or 'max', got {mode!r}")
    return _ops.stack(outs, 0)


@r_counted(tensor="label")
def nnf_one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    return _nn_ops.one_hot(tensor, num_classes)


def nnf_pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
            value: float | None = None) -> Tensor:
    if len(pad) % 2:
        raise ValueError("pad: the padding list must have an even length (pairs of "
                         "left/right amounts, last dimension first)")
    if len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: padding for {len(pad) // 2} dims, but the input has only "
                         f"{input.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"pad mode must be 'constant', 'reflect', 'replicate' or 'circular', "
                         f"got {mode!r}")
    pad = [int(p) for p in pad]
    if mode == "constant":
        return constant_pad_nd(input, tuple(pad), 0.0 if value is None else float(value))
    # the other modes pick input positions: one gather with NumPy's pad of the positions
    nd = len(pad) // 2
    spatial = input.shape[input.ndim - nd:]
    widths = [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(nd))]
    if mode == "reflect" and any(max(w) >= s for w, s in zip(widths, spatial)):
        raise ValueError(f"pad: reflect padding must be smaller than the padded dimension "
                         f"(sizes {list(spatial)}, padding {list(pad)})")
    pos = np.pad(np.arange(int(np.prod(spatial))).reshape(spatial), widths,
                 mode={"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode])
    lead = tuple(input.shape[:input.ndim - nd])
    flat = input.reshape(*lead, -1)
    idx = np.ascontiguousarray(np.broadcast_to(pos.reshape(-1), lead + (pos.size,)))
    return flat.gather(len(lead), wrap(idx.astype(np.int64))).reshape(*lead, *pos.shape)


# --------------------------------------------------------------------------
# Convolution and pooling


def _conv_args(x: Tensor, w: Tensor, nd: int, stride, padding, dilation) -> tuple:
    if x.ndim != nd + 2:
        raise ValueError(f"conv{nd}d expects a {nd + 2}-D input (batch, channels, "
                         f"{nd} spatial dims), got {x.ndim}-D of shape {list(x.shape)}")
    return _K._tuple(stride, nd), padding, _K._tuple(dilation, nd)


def _same_padding(w: Tensor, dilation: tuple) -> tuple:
    tot = [d * (k - 1) for k, d in zip(w.shape[2:], dilation)]
    return tuple(t // 2 for t in tot), tuple(t - t // 2 for t in tot)


def _conv(nd: int):
    def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
             padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
        unbatched = input.ndim == nd + 1
        x = input.unsqueeze(0) if unbatched else input
        stride, _, dilation = _conv_args(x, weight, nd, stride, padding, dilation)
        _nn_ops.check_channels(x.shape, weight.shape, False, int(groups))
        if isinstance(padding, str):
            if padding == "valid":
                pads = (0,) * nd
            elif padding == "same":
                lo, hi = _same_padding(weight, dilation)
                if lo != hi:
                    x = nnf_pad(x, [v for pair in zip(reversed(lo), reversed(hi))
                                    for v in (0, pair[1] - pair[0])])
                pads = lo
            else:
                raise ValueError(f"padding must be 'valid', 'same' or numbers, got {padding!r}")
        else:
            pads = _K._tuple(padding, nd)
        out = convolution(x, weight, bias, stride, pads, dilation, False, (0,) * nd,
                          int(groups))
        return out.squeeze(0) if unbatched else out
    conv.__name__ = f"nnf_conv{nd}d"
    return conv


nnf_conv1d = _conv(1)
nnf_conv2d = _conv(2)
nnf_conv3d = _conv(3)


def nnf_conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution of time-major input (time, batch, channels)."""
    return _nn_ops.conv_tbc(input, weight, bias, pad)


def _conv_transpose(nd: int):
    def conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                       stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                       groups: int = 1, dilation: Any = 1) -> Tensor:
        unbatched = input.ndim == nd + 1
        x = input.unsqueeze(0) if unbatched else input
        out = convolution(x, weight, bias, _K._tuple(stride, nd),
                          _K._tuple(padding, nd), _K._tuple(dilation, nd), True,
                          _K._tuple(output_padding, nd), int(groups))
        return out.squeeze(0) if unbatched else out
    conv_transpose.__name__ = f"nnf_conv_transpose{nd}d"
    return conv_transpose


nnf_conv_transpose1d = _conv_transpose(1)
nnf_conv_transpose2d = _conv_transpose(2)
nnf_conv_transpose3d = _conv_transpose(3)


def _pool_input(input: Tensor, nd: int) -> tuple[Tensor, bool]:
    if input.ndim == nd + 1:
        return input.unsqueeze(0), True
    if input.ndim != nd + 2:
        raise ValueError(f"pool{nd}d expects a {nd + 1}-D or {nd + 2}-D input, got shape "
                         f"{list(input.shape)}")
    return input, False


def _max_pool_gather(x: Tensor, k: tuple, s: tuple, p: tuple, d: tuple,
                     ceil_mode: bool) -> tuple:
    """Max pooling as the positions of the maxima (found on arrays) and one
    gather of them: its derivatives, of every order, are the gather's."""
    idx, best = _K.max_pool_arrays(x.data, k, s, p, d, ceil_mode)  # N, C, *O (flat, 0-based)
    unique = all(st >= (kk - 1) * dd + 1 for st, kk, dd in zip(s, k, d))  # windows apart
    return pool_gather(x, idx, unique, best), wrap(idx)


def _max_pool(nd: int):
    def max_pool(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, ceil_mode: bool = False,
                 return_indices: bool = False) -> Any:
        x, unbatched = _pool_input(input, nd)
        k = _K._tuple(kernel_size, nd)
        s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
            else _K._tuple(stride, nd)
        p = _K._tuple(padding, nd)
        if any(pp * 2 > kk for pp, kk in zip(p, k)):
            raise ValueError("pad should be at most half of effective kernel size")
        out, idx = _max_pool_gather(x, k, s, p, _K._tuple(dilation, nd), bool(ceil_mode))
        if unbatched:
            out, idx = out.squeeze(0), idx.squeeze(0)
        return (out, idx) if return_indices else out
    max_pool.__name__ = f"nnf_max_pool{nd}d"
    return max_pool


nnf_max_pool1d = _max_pool(1)
nnf_max_pool2d = _max_pool(2)
nnf_max_pool3d = _max_pool(3)


def _avg_pool(nd: int):
    def avg_pool(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: Any = None) -> Tensor:
        x, unbatched = _pool_input(input, nd)
        k = _K._tuple(kernel_size, nd)
        s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
            else _K._tuple(stride, nd)
        out = avg_pool_conv(x, k, s, _K._tuple(padding, nd), bool(ceil_mode),
                             bool(count_include_pad), divisor_override)
        return out.squeeze(0) if unbatched else out
    avg_pool.__name__ = f"nnf_avg_pool{nd}d"
    return avg_pool


def nnf_avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                   ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    return _pool.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


nnf_avg_pool2d = _avg_pool(2)
nnf_avg_pool3d = _avg_pool(3)


def _lp_pool(nd: int):
    def lp_pool(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
                ceil_mode: bool = False) -> Tensor:
        k = _K._tuple(kernel_size, nd)
        avg = _avg_pool(nd)(input ** norm_type, k, stride, 0, ceil_mode)
        n = float(np.prod(k))
        return (avg.sign() * avg.abs().relu() * n) ** (1.0 / norm_type)
    lp_pool.__name__ = f"nnf_lp_pool{nd}d"
    return lp_pool


nnf_lp_pool1d = _lp_pool(1)
nnf_lp_pool2d = _lp_pool(2)


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    return [(int(math.floor(i * size / out)), int(math.ceil((i + 1) * size / out)))
            for i in range(out)]


def _adaptive(nd: int, kind: str):
    def adaptive(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
        x, unbatched = _pool_input(input, nd)
        sizes = output_size if isinstance(output_size, (list, tuple)) else [output_size] * nd
        sizes = [x.shape[2 + i] if s is None else int(s) for i, s in enumerate(sizes)]
        if kind == "avg":  # the pooling ops (PyTorch's nodes)
            return _nn_ops.adaptive_avg_pool1d(input, sizes) if nd == 1 else \
                _nn_ops.adaptive_avg(nd, input, sizes)
        in_sz = x.shape[2:]
        if all(i % o == 0 for i, o in zip(in_sz, sizes)):
            k = tuple(i // o for i, o in zip(in_sz, sizes))
            if kind == "avg":
                out = avg_pool_conv(x, k, k, (0,) * nd, False, True, None)
            else:
                out, idx = _max_pool_gather(x, k, k, (0,) * nd, (1,) * nd, False)
                if return_indices:
                    return (out.squeeze(0), idx.squeeze(0)) if unbatched else (out, idx)
            return out.squeeze(0) if unbatched else out
        # uneven windows: one reduction per output cell along each dim in turn
        y = x
        for d in range(nd):
            axis = 2 + d
            parts = []
            for a, b in _adaptive_bounds(in_sz[d], sizes[d]):
                seg = y.narrow(axis, a, b - a)
                parts.append(seg.mean(dim=axis, keepdim=True) if kind == "avg"
                             else seg.max(dim=axis, keepdim=True)[0])
            y = _ops.cat(parts, axis)
        if return_indices:
            raise NotImplementedError("return_indices for uneven adaptive max pooling")
        return y.squeeze(0) if unbatched else y
    adaptive.__name__ = f"nnf_adaptive_{kind}_pool{nd}d"
    return adaptive


nnf_adaptive_avg_pool1d = r_formals("input, output_size")(_adaptive(1, "avg"))
nnf_adaptive_avg_pool2d = r_formals("input, output_size")(_adaptive(2, "avg"))
nnf_adaptive_avg_pool3d = r_formals("input, output_size")(_adaptive(3, "avg"))
nnf_adaptive_max_pool1d = _adaptive(1, "max")
nnf_adaptive_max_pool2d = _adaptive(2, "max")
nnf_adaptive_max_pool3d = _adaptive(3, "max")


# --------------------------------------------------------------------------
# Unpooling and fractional max pooling (ops/pooling.py), with R torch's
# argument handling


def _unpool_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                 output_size: Any) -> tuple:
    """The unpooled spatial size: max pooling's input size, or `output_size`
    (its last dims: a full size with batch and channels may be given)."""
    nd = len(kernel)
    if output_size is None:
        return tuple((input.shape[input.ndim - nd + d] - 1) * stride[d] + kernel[d] -
                     2 * padding[d] for d in range(nd))
    size = tuple(int(s) for s in np.asarray(output_size).reshape(-1))
    if len(size) == nd + 2:
        size = size[2:]
    if len(size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(size)}'")
    return size


def _unpool_args(kernel_size: Any, stride: Any, padding: Any, nd: int) -> tuple:
    k = _K._tuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _K._tuple(stride, nd)
    return k, s, _K._tuple(padding, nd)


@r_counted(indices="label")
def nnf_max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                     padding: Any = 0, output_size: Any = None) -> Tensor:
    """As R torch's: unpooled as 2-d planes of width 1, (N, C, L, 1) (R torch's
    squeeze of the width misses it)."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_size(input, k, s, p, output_size) + (1,)
    return _pool.max_unpool2d(input.unsqueeze(2), indices.unsqueeze(2), size)


@r_counted(indices="label")
def nnf_max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                     padding: Any = 0, output_size: Any = None) -> Tensor:
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    return _pool.max_unpool2d(input, indices, _unpool_size(input, k, s, p, output_size))


@r_counted(indices="label")
def nnf_max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                     padding: Any = 0, output_size: Any = None) -> Tensor:
    k, s, p = _unpool_args(kernel_size, stride, padding, 3)
    return _pool.max_unpool3d(input, indices, _unpool_size(input, k, s, p, output_size), s, p)


def _fractional_max_pool(nd: int):
    def fractional_max_pool(input: Tensor, kernel_size: Any, output_size: Any = None,
                            output_ratio: Any = None, return_indices: bool = False,
                            random_samples: Tensor | None = None) -> Any:
        if output_size is None:
            if output_ratio is None:
                raise ValueError("output_ratio should not be NULL if output_size is NULL")
            ratio = tuple(float(r) for r in np.broadcast_to(np.asarray(output_ratio,
                                                                       dtype=float), (nd,)))
            output_size = tuple(int(input.shape[input.ndim - nd + d] * ratio[d])
                                for d in range(nd))
        if random_samples is None:  # one sample per plane and spatial dim
            batch = input.shape[0] if input.ndim == nd + 2 else 1
            random_samples = _cr.torch_rand(batch, input.shape[input.ndim - nd - 1], nd,
                                            dtype=input.dtype)
        op = _pool.fractional_max_pool2d if nd == 2 else _pool.fractional_max_pool3d
        out = op(input, kernel_size, output_size, random_samples)
        return out if return_indices else out[0]
    fractional_max_pool.__name__ = f"nnf_fractional_max_pool{nd}d"
    return fractional_max_pool


nnf_fractional_max_pool2d = _fractional_max_pool(2)
nnf_fractional_max_pool3d = _fractional_max_pool(3)


def nnf_unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
               stride: Any = 1) -> Tensor:
    """Every kernel_size window of a (N, C, H, W) input as a column:
    (N, C * kh * kw, blocks)."""
    return _pool.im2col(input, kernel_size, dilation, padding, stride)


def nnf_fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
             padding: Any = 0, stride: Any = 1) -> Tensor:
    """nnf_unfold's adjoint: columns summed back into (N, C, *output_size)."""
    return _pool.col2im(input, output_size, kernel_size, dilation, padding, stride)


def nnf_pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    return _ops.REGISTRY["pixel_shuffle"].fn(input, upscale_factor)


def nnf_local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                            k: float = 1.0) -> Tensor:
    """Each value divided by (k + alpha * the mean square over `size` neighbouring
    channels) ^ beta, composed as libtorch does it (average pooling of the
    padded squares)."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    size = int(size)
    div = (input * input).unsqueeze(1)
    if input.ndim == 3:
        div = nnf_pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = nnf_avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = nnf_pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = nnf_avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.reshape(*sizes)
    return input / (div * alpha + k) ** beta


@r_counted(dim="dim")
def nnf_gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False,
                       dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) with g the log of Exp(1) draws, as R torch
    computes its noise; `hard`: the one-hot of the argmax, with the soft
    result's gradient."""
    noise = _cr.torch_empty(*logits.shape, dtype=logits.dtype)
    gumbels = (logits + noise.exponential_().log()) / tau
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _ops.creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


@r_counted(start_dim="dim", end_dim="dim")
def nnf_flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return input.flatten(start_dim, end_dim)


@r_counted(dim="dim")
def nnf_unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = dim % input.ndim
    shape = tuple(input.shape[:d]) + tuple(int(s) for s in sizes) + tuple(input.shape[d + 1:])
    return input.reshape(*shape)


# --------------------------------------------------------------------------
# Interpolation (R torch's nnf_interpolate, PyTorch's F.interpolate): an
# upsample op of rtorch_py/ops/upsample.py chosen by the mode and the input's
# dims (3-D: 1 spatial dim, 4-D: 2, 5-D: 3); "area" is adaptive average pooling.

_INTERPOLATE = {("nearest", 1): "upsample_nearest1d", ("nearest", 2): "upsample_nearest2d",
                ("nearest", 3): "upsample_nearest3d", ("linear", 1): "upsample_linear1d",
                ("bilinear", 2): "upsample_bilinear2d", ("bicubic", 2): "upsample_bicubic2d",
                ("trilinear", 3): "upsample_trilinear3d"}
_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _per_dim(v: Any, nd: int, what: str, cast: Any) -> tuple:
    vals = list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]
    if len(vals) == 1:
        vals = vals * nd
    if len(vals) != nd:
        raise ValueError(f"nnf_interpolate: {what} must have one value or one per spatial dim "
                         f"({nd} for a {nd + 2}-D input), got {len(vals)}")
    return tuple(cast(x) for x in vals)


@r_formals("input, size = NULL, scale_factor = NULL, mode = 'nearest', align_corners = FALSE, "
           "recompute_scale_factor = NULL")
def nnf_interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                    mode: str = "nearest", align_corners: bool | None = None,
                    recompute_scale_factor: bool | None = None) -> Tensor:
    """Resample the spatial dims of a (N, C, *S) input to `size`, or by
    `scale_factor` (one of the two); `mode`: nearest, linear (3-D input),
    bilinear or bicubic (4-D), trilinear (5-D), area."""
    nd = input.ndim - 2
    if nd not in (1, 2, 3):
        raise NotImplementedError(f"nnf_interpolate: only 3-D, 4-D and 5-D inputs (batch, "
                                  f"channels, 1 to 3 spatial dims) are supported, got "
                                  f"{input.ndim}-D (mode {mode!r})")
    if size is not None and scale_factor is not None:
        raise ValueError("nnf_interpolate: only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("nnf_interpolate: either size or scale_factor should be defined")
    output_size = scale_factors = None
    if size is not None:
        output_size = _per_dim(size, nd, "size", int)
    else:
        scale_factors = _per_dim(scale_factor, nd, "scale_factor", float)
        if recompute_scale_factor or mode == "area":
            # the size from the factors; the op then scales by in / out sizes
            output_size = tuple(int(math.floor(float(input.shape[2 + i]) * f))
                                for i, f in enumerate(scale_factors))
            scale_factors = None
    if mode == "area":
        return globals()[f"nnf_adaptive_avg_pool{nd}d"](input, output_size)
    if mode not in ("nearest",) + tuple(_MODE_DIMS):
        raise NotImplementedError(f"nnf_interpolate: unknown mode {mode!r}; use one of nearest, "
                                  "linear, bilinear, bicubic, trilinear, area")
    if mode != "nearest" and _MODE_DIMS[mode] != nd:
        need = _MODE_DIMS[mode] + 2
        raise NotImplementedError(f"nnf_interpolate: got a {input.ndim}-D input, but {mode} "
                                  f"mode needs a {need}-D input")
    fn = _ops.REGISTRY[_INTERPOLATE[(mode, nd)]].fn
    if mode == "nearest":
        return fn(input, output_size, scale_factors)
    return fn(input, output_size, bool(align_corners), scale_factors)


def nnf_upsample(input: Tensor, size: Any = None, scale_factor: Any = None,
                 mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """PyTorch's F.upsample: nnf_interpolate under its older name."""
    return nnf_interpolate(input, size, scale_factor, mode, align_corners)


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def nnf_grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                    padding_mode: str = "zeros", align_corners: bool = False) -> Tensor:
    """The input sampled at the grid's points (coordinates in [-1, 1], x first)."""
    if mode not in _GRID_MODES:
        raise ValueError(f"Unknown mode name '{mode}'. Supported modes are 'bilinear', "
                         "'nearest' and 'bicubic'.")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError(f"Unknown padding mode name '{padding_mode}'. Supported modes are "
                         "'zeros', 'border' and 'reflection'.")
    return _grid.grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
                              align_corners)


def nnf_affine_grid(theta: Tensor, size: Any, align_corners: bool = False) -> Tensor:
    """The sampling grid of the affine maps theta (N, 2, 3) or (N, 3, 4) for an output
    of `size` (N, C, H, W) or (N, C, D, H, W)."""
    return _grid.affine_grid_generator(theta, size, align_corners)


__all__ = [n for n in list(globals()) if n.startswith("nnf_")]

# Each nnf_ function is one call for the active modes (the tracer of rtorch_py.jit
# records it as one node, as libtorch records aten::linear, aten::max_pool2d...).
for _name in __all__:
    globals()[_name] = traceable(_name)(globals()[_name])
