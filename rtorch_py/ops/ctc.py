"""The connectionist temporal classification loss (Graves et al., 2006), as
libtorch computes it: the negative log-likelihood of each target sequence
summed over its alignments with the input (the forward variables alpha, in log
space), then reduced.

Its derivative is libtorch's: with respect to the log-probabilities, assumed
to be a log_softmax's output, exp(log_probs) minus each symbol's posterior
occupancy (the forward-backward products), so that it passes through the
log_softmax unchanged. It is not the derivative of the loss's values for
arbitrary inputs (finite differences don't apply), and has no derivative of its
own, as in PyTorch.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .dispatch import op
from .indexing import where
from .linalg import NoDerivative
from .recording import formula, record
from .samples import ctc as S
from .shape import squeeze, unsqueeze

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _lengths(v: Any, what: str) -> np.ndarray:
    a = np.asarray(v.data if isinstance(v, Tensor) else v).reshape(-1)
    if a.dtype.kind == "f" and np.any(a != np.round(a)):
        raise RuntimeError(f"ctc_loss: {what} must hold whole numbers")
    return a.astype(np.int64)


def _targets_rows(targets: np.ndarray, target_lengths: np.ndarray, batch: int) -> list:
    """Each batch element's target sequence (padded rows, or one concatenation)."""
    if targets.ndim == 1 and batch > 0 and not (targets.size == 0 and batch == 0):
        if targets.size < target_lengths.sum():
            raise RuntimeError(f"ctc_loss: the concatenated targets hold {targets.size} "
                               f"labels, but target_lengths add up to {target_lengths.sum()}")
        ends = np.cumsum(target_lengths)
        return [targets[e - k:e] for e, k in zip(ends, target_lengths)]
    if targets.ndim != 2 or targets.shape[0] != batch:
        raise RuntimeError(f"ctc_loss: targets must be (batch, max target length) or the "
                           f"targets concatenated, got shape {list(targets.shape)}")
    if np.any(target_lengths > targets.shape[1]):
        raise RuntimeError(f"Expected tensor to have size at least {target_lengths.max()} at "
                           f"dimension 1, but got size {targets.shape[1]} for argument #2 "
                           "'targets' (while checking arguments for ctc_loss_cpu)")
    return [targets[n, :k] for n, k in enumerate(target_lengths)]


def _logaddexp(*xs: np.ndarray) -> np.ndarray:
    m = np.maximum.reduce(xs)
    safe = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        return np.where(np.isneginf(m), -np.inf,
                        safe + np.log(sum(np.exp(x - safe) for x in xs)))


class _Lattice:
    """The extended label sequences (blanks between and around the labels) of a
    batch, padded to one length, and which states may be skipped into."""

    def __init__(self, rows: list, blank: int) -> None:
        self.n = len(rows)
        self.size = np.array([2 * len(r) + 1 for r in rows], dtype=np.int64)
        width = int(self.size.max(initial=1))
        self.labels = np.full((self.n, width), blank, dtype=np.int64)
        for i, r in enumerate(rows):
            self.labels[i, 1:2 * len(r):2] = r
        self.valid = np.arange(width) < self.size[:, None]
        # a state holding a label may be reached from two states back (over a blank)
        # when that holds a different label
        skip = np.zeros_like(self.valid)
        skip[:, 2:] = (self.labels[:, 2:] != blank) & (self.labels[:, 2:] != self.labels[:, :-2])
        self.skip = skip


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    out = np.full_like(a, -np.inf)
    out[:, k:] = a[:, :a.shape[1] - k]
    return out


def _forward(lp: np.ndarray, lat: _Lattice, lengths: np.ndarray) -> tuple:
    """log alpha (T, N, states), and each element's negative log-likelihood."""
    T = lp.shape[0]
    emit = np.take_along_axis(lp, np.broadcast_to(lat.labels, (T,) + lat.labels.shape), 2)
    alpha = np.full(emit.shape, -np.inf)
    if T:
        alpha[0, :, :2] = emit[0, :, :2]
        alpha[0][~lat.valid] = -np.inf
    for t in range(1, T):
        prev = alpha[t - 1]
        step = _logaddexp(prev, _shift(prev, 1), np.where(lat.skip, _shift(prev, 2), -np.inf))
        alpha[t] = np.where(lat.valid, step + emit[t], -np.inf)
    rows = np.arange(lat.n)
    last = np.maximum(lengths - 1, 0)
    end = alpha[last, rows]
    final = _logaddexp(end[rows, lat.size - 1],
                       np.where(lat.size > 1, end[rows, np.maximum(lat.size - 2, 0)], -np.inf))
    nll = np.where(lengths > 0, -final, np.where(lat.size == 1, 0.0, np.inf))
    return alpha, emit, nll


def _backward(emit: np.ndarray, lat: _Lattice, lengths: np.ndarray) -> np.ndarray:
    """log beta (T, N, states): each state's log-probability of the rest."""
    T = emit.shape[0]
    beta = np.full(emit.shape, -np.inf)
    rows = np.arange(lat.n)
    for t in range(T - 1, -1, -1):
        at_end = lengths - 1 == t
        nxt = beta[t + 1] if t + 1 < T else np.full(emit.shape[1:], -np.inf)
        # the reverse moves: to s + 1, and to s + 2 where s + 2 may be skipped into
        skip_next = np.zeros_like(lat.skip)
        skip_next[:, :-2] = lat.skip[:, 2:]
        step = _logaddexp(nxt, _shift(nxt[:, ::-1], 1)[:, ::-1],
                          np.where(skip_next, _shift(nxt[:, ::-1], 2)[:, ::-1], -np.inf))
        b = np.where(lat.valid & (t < lengths - 1)[:, None], step + emit[t], -np.inf)
        start = np.full(emit.shape[1:], -np.inf)
        start[rows, lat.size - 1] = 0
        start[rows[lat.size > 1], (lat.size - 2)[lat.size > 1]] = 0
        beta[t] = np.where(at_end[:, None], start + emit[t], b)
    return beta


_CTC_BACKWARD = ("derivative for aten::_ctc_loss_backward is not implemented (as in PyTorch): "
                 "ctc_loss can be differentiated once")


@formula
def CtcLossBackward0(n, g, log_probs, lp, lat, lengths, nll, zero_infinity):
    alpha, emit, _ = _forward(lp, lat, lengths)
    beta = _backward(emit, lat, lengths)
    T, N, C = lp.shape
    # each symbol's log occupancy: the alpha beta products of its states
    occ = np.full((T, N, C), -np.inf)
    ab = alpha + beta
    for s in range(lat.labels.shape[1]):
        cols = lat.labels[:, s]
        occ[:, np.arange(N), cols] = _logaddexp(occ[:, np.arange(N), cols], ab[:, :, s])
    with np.errstate(over="ignore", invalid="ignore"):
        grad = np.exp(lp) - np.exp(occ + nll[None, :, None] - lp)
    grad = grad * g.data.reshape(1, N, 1)
    grad[np.arange(T)[:, None] >= lengths[None, :]] = 0
    if zero_infinity:
        grad[:, np.isinf(nll)] = 0
    grad = grad.astype(log_probs.data.dtype)
    return (record(grad, NoDerivative, (g, log_probs), (_CTC_BACKWARD,), name="NotImplemented"),)


def _no_forward_rule(primals: dict, tangents: dict, result: Any) -> Any:
    """Forward mode refused, as PyTorch refuses it: libtorch's derivative (above) is
    not the values' own, so no tangent can be derived from it."""
    raise NotImplementedError("Trying to use forward AD with ctc_loss that does not support it "
                              "(as in PyTorch); differentiate it in reverse mode")


@op(method=False, samples=S.ctc_loss, second_order=False, finite_differences=False,
    forward=_no_forward_rule)
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    """`log_probs` (T, N, C) (or (T, C) for one sequence), `targets` padded rows
    (N, S) or concatenated; `reduction` libtorch's enum (0 none, 1 mean, 2 sum:
    torch_reduction_mean() ...)."""
    if log_probs.data.dtype.kind != "f":
        raise RuntimeError(f"ctc_loss: log_probs must be floating point, got "
                           f"{log_probs.dtype.r_name}")
    mode = _REDUCTIONS.get(int(reduction))
    if mode is None:
        raise ValueError(f"ctc_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got "
                         f"{reduction}")
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss: log_probs must be 2-D (T, C) or 3-D (T, N, C), got "
                           f"{log_probs.ndim}-D")
    lp = log_probs.data if batched else log_probs.data[:, None]
    T, N, C = lp.shape
    blank = int(blank)
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    if len(il) != N or len(tl) != N:
        raise RuntimeError(f"input_lengths and target_lengths must have one value per batch "
                           f"element ({N}), got {len(il)} and {len(tl)}")
    if np.any(il > T):
        raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value "
                           f"{int(il.max())} (while checking arguments for ctc_loss_cpu)")
    tg = np.asarray(targets.data if isinstance(targets, Tensor) else targets).astype(np.int64)
    tg = tg if batched or tg.ndim == 1 else tg.reshape(1, -1)
    rows = _targets_rows(tg, tl, N)
    lat = _Lattice(rows, blank)
    lp64 = lp.astype(np.float64)
    _, _, nll = _forward(lp64, lat, il)
    out = nll.astype(lp.dtype)
    source = log_probs if batched else unsqueeze(log_probs, 1)
    loss = record(out, CtcLossBackward0, (source,),
                  (source, lp64, lat, il, nll, bool(zero_infinity)))
    if zero_infinity:
        loss = where(loss == np.inf, 0.0, loss)
    if mode == "mean":
        return (loss / Tensor(np.maximum(tl, 1).astype(lp.dtype))).mean()
    if mode == "sum":
        return loss.sum()
    return loss if batched else squeeze(loss, 0)
