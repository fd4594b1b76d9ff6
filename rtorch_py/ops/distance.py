"""Distances and norms of slices: cosine_similarity, pairwise_distance, pdist,
renorm. The first two are compositions of ops in libtorch (their nodes are
those ops'), pdist and renorm record nodes of their own."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import no_grad
from ..tensor import Tensor, wrap_dim, result_type
from .dispatch import op
from .indexing import where
from .linalg import NoDerivative
from .nn_kernels import pnorm_distance_grad
from .operands import whole
from .pointwise import inplace_form
from .recording import OUTPUT, formula, record
from .reduction import LinalgVectorNormBackward0, float_input, vector_norm_array, norm, sum as _sum
from .samples import distance as S
from .shape import broadcast_tensors


def _as_floats(x: Tensor) -> Tensor:
    return x if x.data.dtype.kind in "fcV" else x.to(dtype=result_type(x, 1.0))


@op(dims=("dim",), method=False, samples=S.cosine_similarity)
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between x1 and x2 along `dim` (broadcast): each
    divided by its 2-norm (at least eps; the floor takes no part in the
    gradient) before the product is summed, as libtorch computes it."""
    x1, x2 = broadcast_tensors([_as_floats(x1), _as_floats(x2)])
    n1 = norm(x1, 2, dim, True).clone()
    n2 = norm(x2, 2, dim, True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return _sum((x1 / n1) * (x2 / n2), dim)


@op(method=False, samples=S.pairwise_distance)
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim (of the broadcast shape)."""
    d = x1 - x2 + eps
    d = _as_floats(d)
    axes = (d.ndim - 1,) if d.ndim else ()
    p = float(p)
    return record(vector_norm_array(float_input(d, "pairwise_distance"), p, axes, keepdim),
                  LinalgVectorNormBackward0, (d,), (d, OUTPUT, p, axes, keepdim),
                  name="NormBackward1")


# --------------------------------------------------------------------------
# pdist: the p-norm distance between each pair of rows i < j, in row order


_PDIST_BACKWARD = (
    "the derivative for '_pdist_backward' is not implemented (a gradient kernel, with no "
    "derivative of its own, as in PyTorch); for second derivatives compute the distances "
    "with differentiable ops, e.g. (x[i] - x[j])$norm()")


def _pairs(n: int) -> tuple:
    return np.triu_indices(n, 1)


def _pdist_grad(g: np.ndarray, x: np.ndarray, p: float, dist: np.ndarray) -> np.ndarray:
    """Each pair's share of the p-norm's derivative, added to both its rows."""
    i, j = _pairs(x.shape[0])
    diff = x[i] - x[j]
    each = pnorm_distance_grad(diff, dist[:, None], g[:, None], p)
    out = np.zeros_like(x)
    np.add.at(out, i, each)
    np.add.at(out, j, -each)
    return out


@formula
def PdistBackward0(n, g, x, p, result):
    out = _pdist_grad(g.data, x.data, p, result.data)
    return (record(out.astype(x.data.dtype, copy=False), NoDerivative, (g, x, result),
                   (_PDIST_BACKWARD,), name="PdistBackwardBackward0"),)


@op(method=False, samples=S.pdist, second_order=False)
def pdist(self: Tensor, p: float = 2) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    if self.data.dtype.kind not in "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    p = float(p)
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    x = self.data
    i, j = _pairs(x.shape[0])
    out = vector_norm_array(x[i] - x[j], p, (1,), False) if len(i) else \
        np.zeros(0, x.dtype)
    return record(np.ascontiguousarray(out, dtype=x.dtype), PdistBackward0, (self,),
                  (self, p, OUTPUT))


# --------------------------------------------------------------------------
# renorm: each slice along `dim` whose p-norm is above maxnorm scaled down to it


def _slice_axes(x: Tensor, dim: int) -> tuple:
    return tuple(a for a in range(x.ndim) if a != dim)


@formula
def RenormBackward0(n, g, x, p, dim, maxnorm):
    axes = _slice_axes(x, dim)
    norms = norm(x, p, axes, True)
    over = norms > maxnorm
    scale = maxnorm / (norms + 1e-7)
    # x * scale(x): the scale's derivative through the norm, where a slice is scaled
    d_norm = -(g * x).sum(dim=axes, keepdim=True) * maxnorm / ((norms + 1e-7) ** 2)
    d_x = LinalgVectorNormBackward0.formula(n, d_norm, x, norms, p, axes, True)[0]
    return (where(over, g * scale + d_x, g),)


@op(dims=("dim",), samples=S.renorm)
def renorm(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    p, maxnorm = float(p), float(maxnorm)
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (got p = {p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = float_input(self, "renorm")
    dim = wrap_dim(whole(dim, "dim"), self.ndim)
    axes = _slice_axes(self, dim)
    norms = vector_norm_array(d, p, axes, True)
    with np.errstate(divide="ignore"):
        scale = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return record((d * scale).astype(d.dtype, copy=False), RenormBackward0, (self,),
                  (self, p, dim, maxnorm))


op("renorm_", function=False, dims=("dim",))(inplace_form(renorm, "renorm_"))


# --------------------------------------------------------------------------
# Weight normalisation: w = g * v / ||v||, the norm over every dim but `dim`
# (dim = -1: over all of v)


@op(method=False, dims=("dim",), samples=S.norm_except_dim)
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The pow-norm of v over every dim but `dim`, shaped to broadcast against v
    (dim = -1: the norm of all of v, 0-d)."""
    if dim == -1:  # (libtorch's Tensor.norm(pow): its own node name)
        axes, p = tuple(range(v.ndim)), float(pow)
        return record(vector_norm_array(float_input(v, "norm_except_dim"), p, axes, False),
                      LinalgVectorNormBackward0, (v,), (v, OUTPUT, p, axes, False),
                      name="NormBackward0")
    dim = wrap_dim(whole(dim, "dim"), v.ndim)
    shape = tuple(v.shape[i] if i == dim else 1 for i in range(v.ndim))
    if dim == 0:
        return norm(v.contiguous().reshape(v.shape[0], -1), pow, 1).reshape(shape)
    if dim == v.ndim - 1:
        return norm(v.contiguous().reshape(-1, v.shape[dim]), pow, 0).reshape(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@formula
def WeightNormInterfaceBackward0(n, g, v, w_g, norms, axes):
    scale = w_g / norms
    dot = (g * v).sum(dim=axes, keepdim=True)
    grad_g = dot / norms if n.needs(1) else None
    grad_v = scale * (g - v * (dot / (norms * norms))) if n.needs(0) else None
    return grad_v, grad_g


@op(method=False, dims=("dim",), samples=S.weight_norm)
def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """v * (g / norm_except_dim(v, 2, dim)): one node where libtorch fuses it (dim
    the first or the last), else those ops."""
    if dim != -1:
        dim = wrap_dim(whole(dim, "dim"), v.ndim)
    if dim not in (0, v.ndim - 1):
        return v * (g / norm_except_dim(v, 2, dim))
    axes = _slice_axes(v, dim)
    norms = vector_norm_array(float_input(v, "_weight_norm"), 2.0, axes, True)
    out = v.data * (g.data / norms)
    return record(out.astype(v.data.dtype, copy=False), WeightNormInterfaceBackward0, (v, g),
                  (v, g, Tensor(norms), axes))
