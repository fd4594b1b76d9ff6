"""Linear algebra: matrix products, R torch's `linalg_*` (on NumPy's linalg) and
the older `torch_det`, `torch_svd`, ... forms, with PyTorch's derivatives."""
from __future__ import annotations

import builtins
import ctypes
import glob
import os
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ..formals import r_formals
from ..tensor import Tensor, wrap_dim, wrap
from .samples import linalg as S
from .operands import shape_str, whole
from .recording import (OUTPUT, Output, formula, multi_formula, needs_grad, record, record_many,
                        sum_to)
from .dispatch import op
from .indexing import where
from .pointwise import inplace_form
from .shape import UnsafeViewBackward0, ViewBackward0, cat
from .views import AliasBackward0
from .fft import _conj, real_part, real_dtype_of, to_complex
from .nn_kernels import matmul as matmul_arrays, pnorm_distance_grad


# ==========================================================================
# Linear algebra

@formula(arrays=True)
def MmBackward0(n, g, a, b, a_t, b_t):
    # An operand that was a transposed view (`a_t`, `b_t`: a linear layer's
    # `weight.t()`) gets its gradient as the transpose of a row-major product,
    # as PyTorch does: its transpose back to the parameter is then row-major
    # like the parameter (same BLAS work; an optimiser's passes stay contiguous).
    ga = gb = None
    if n.needs(0):
        ga = _adj(_prod(b, _adj(g))) if a_t else _prod(g, _adj(b))
    if n.needs(1):
        gb = _adj(_prod(_adj(g), a)) if b_t else _prod(_adj(a), g)
    return ga, gb


def _prod(x: Any, y: Any) -> Any:
    """x @ y of two arrays (through the products' one place) or two tensors (an op)."""
    return matmul_arrays(x, y) if type(x) is np.ndarray else x @ y


def _record_mm(out: np.ndarray, a: Tensor, b: Tensor) -> Tensor:
    """mm's node: each operand saved only if the other needs a gradient, and the
    layout of each that needs one."""
    ra, rb = a._rg, b._rg
    return record(out, MmBackward0, (a, b), (a if rb else None, b if ra else None,
                                             ra and _transposed(a.data),
                                             rb and _transposed(b.data)))


def _transposed(x: np.ndarray) -> bool:
    """Whether a matrix is column-major only: a transposed view."""
    f = x.flags
    return f.f_contiguous and not f.c_contiguous


def _adj(x: Any) -> Any:
    """A matrix's conjugate transpose (its transpose when real), array or tensor."""
    if type(x) is np.ndarray:
        return x.T.conj() if x.dtype.kind == "c" else x.T
    return _conj(x.T) if x.data.dtype.kind == "c" else x.T


def _cj(x: Tensor) -> Tensor:
    return _conj(x) if x.data.dtype.kind == "c" else x


def _out_dtype(out_dtype: Any, name: str) -> None:
    """libtorch 2.8's `out_dtype` forms (mm.dtype, ...) have CUDA kernels only."""
    if out_dtype is not None:
        raise NotImplementedError(
            f"Could not run 'aten::{name}.dtype' with arguments from the 'CPU' backend: "
            f"out_dtype is for CUDA devices only; leave it NULL (None) on the CPU")


@r_formals("self, mat2, out_dtype", method="mat2")
@op(samples=S.mm, names="contract", forward="multilinear", complex_half="addmm_impl_cpu_",
    onnx="MatMul", mobile="self, mat2", autocast="lower")
def mm(self: Tensor, mat2: Tensor, *, out_dtype: Any = None) -> Tensor:
    _out_dtype(out_dtype, "mm")
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: both arguments must be 2-d matrices, got {self.ndim}-d "
                           f"{shape_str(self.shape)} and {mat2.ndim}-d {shape_str(mat2.shape)}")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]}): the columns of the first must equal the rows of "
            "the second")
    if self.data.dtype is not mat2.data.dtype:
        _dtype_mismatch(self, mat2)
    out = matmul_arrays(self.data, mat2.data)
    return _record_mm(out, self, mat2)


@formula
def MatmulBackward0(n, g, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return (g * _cj(b) if n.needs(0) else None), (g * _cj(a) if n.needs(1) else None)
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    g2 = g.unsqueeze(-2) if a.ndim == 1 else g
    g2 = g2.unsqueeze(-1) if b.ndim == 1 else g2
    ga = gb = None
    if n.needs(0):
        ga = sum_to(g2.matmul(_mH(b2)), a2.shape)
        ga = ga.squeeze(0) if a.ndim == 1 else ga
    if n.needs(1):
        if b.ndim == 2 and a.ndim > 2 and a.data.size:  # a stack times one matrix: one
            # product of the stacked rows, no stack of products to sum
            gb = _mH(a.reshape(-1, a.shape[-1])).matmul(g.reshape(-1, g.shape[-1]))
        else:
            gb = sum_to(_mH(a2).matmul(g2), b2.shape)
            gb = gb.squeeze(-1) if b.ndim == 1 else gb
    return ga, gb


@op(operators=("__matmul__",), samples=S.matmul, names="contract", forward="multilinear",
    complex_half="addmm_impl_cpu_", onnx="MatMul", mobile="self, other", autocast="lower")
def matmul(self: Tensor, other: Tensor) -> Tensor:
    if self.ndim == 0 or other.ndim == 0:
        raise RuntimeError("matmul: both arguments need at least 1 dimension, got a 0-d tensor")
    if self.data.dtype is not other.data.dtype:
        _dtype_mismatch(self, other)
    try:
        a, b = self.data, other.data
        if a.ndim > 2 and b.ndim == 2 and a.shape[-1] == b.shape[0] and a.size and \
                type(a) is np.ndarray:
            # a stack times one matrix: one product of the stacked rows (as libtorch
            # folds it), not one small product per matrix of the stack
            out = matmul_arrays(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[1:])
        else:
            out = matmul_arrays(a, b)
    except ValueError:
        raise RuntimeError(
            f"matmul: shapes {shape_str(self.shape)} and {shape_str(other.shape)} don't match: "
            "the last dim of the first must equal the second-to-last (or only) dim of the second")\
            from None
    if self.ndim == 2 and other.ndim == 2:
        return _record_mm(out, self, other)
    # the node PyTorch's decomposition of matmul ends with, for these ranks
    name = ("DotBackward0" if self.ndim == 1 and other.ndim == 1 else
            "MvBackward0" if self.ndim == 2 and other.ndim == 1 else
            "SqueezeBackward4" if self.ndim == 1 and other.ndim == 2 else
            "CloneBackward0" if self.ndim == 2 else "UnsafeViewBackward0")
    return record(out, MatmulBackward0, (self, other), (self, other), name=name)


def _dtype_mismatch(a: Tensor, b: Tensor) -> None:
    raise RuntimeError(f"expected both matrices to have the same dtype, but got "
                       f"{a.dtype.r_name} and {b.dtype.r_name}; convert one to the other's "
                       "dtype first")


@op(samples=S.dot, names="unnamed", forward="multilinear")
def dot(self: Tensor, tensor: Tensor) -> Tensor:
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError("dot: 1D tensors expected, but got "
                           f"{self.ndim}D and {tensor.ndim}D tensors")
    return matmul(self, tensor)




# ==========================================================================
# Shared machinery: ops with several outputs, and small differentiable helpers
# their derivatives are written with (private: not ops of their own)

def _mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


@formula
def _DiagonalBackward(n, g, shape):
    return (_diag_embed(g, shape),)


def _diagonal(x: Tensor) -> Tensor:
    """The main diagonals of the last two dims (differentiable)."""
    out = np.diagonal(x.data, axis1=-2, axis2=-1).copy()
    return record(out, _DiagonalBackward, (x,), (x.shape,), name="DiagonalBackward0")


@formula
def _DiagEmbedBackward(n, g, shape):
    return (_diagonal(g),)


def _diag_embed(d: Tensor, shape: tuple | None = None) -> Tensor:
    """Matrices (of `shape`'s last two dims, square by default) with d on the diagonal."""
    k = d.shape[-1]
    rows, cols = (shape[-2], shape[-1]) if shape is not None else (k, k)
    out = np.zeros(d.shape[:-1] + (rows, cols), dtype=d.data.dtype)
    idx = np.arange(k)
    out[..., idx, idx] = d.data
    return record(out, _DiagEmbedBackward, (d,), (d.shape,), name="DiagEmbedBackward0")


@formula
def _TriBackward(n, g, k, lower):
    return (_tri(g, k, lower),)


def _tri(x: Tensor, k: int = 0, lower: bool = True) -> Tensor:
    """tril (lower) or triu of the last two dims (differentiable)."""
    out = np.tril(x.data, k) if lower else np.triu(x.data, k)
    return record(out, _TriBackward, (x,), (k, lower),
                  name="TrilBackward0" if lower else "TriuBackward0")


def _eye_like(x: Tensor, n: int | None = None) -> Tensor:
    n = x.shape[-1] if n is None else n
    return wrap(np.eye(n, dtype=x.data.dtype))


def _float_check(x: Tensor, what: str) -> None:
    if x.data.dtype.kind != "f":
        raise RuntimeError(f"{what}: expected a floating point tensor (float or double), got "
                           f"{x.dtype.r_name}; convert it first, e.g. x$to(dtype = torch_float())")


def _matrix_check(A: Tensor, what: str) -> None:
    _float_check(A, what)
    if A.ndim < 2:
        raise RuntimeError(f"{what}: the input must have at least 2 dimensions (a matrix or a "
                           f"batch of matrices), got {A.ndim}")


def _square_check(A: Tensor, what: str) -> None:
    _matrix_check(A, what)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{what}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _deprecated(message: str) -> None:
    """Warn on every call, as R torch does (Python would show it once per place)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(message, DeprecationWarning, stacklevel=3)


# ==========================================================================
# Products

@formula
def BmmBackward0(n, g, a, b):
    return (g.matmul(_mH(b)) if n.needs(0) else None), (_mH(a).matmul(g) if n.needs(1) else None)


@r_formals("self, mat2, out_dtype", method="mat2")
@op(samples=S.bmm, names="contract", forward="multilinear", onnx="MatMul", autocast="lower")
def bmm(self: Tensor, mat2: Tensor, *, out_dtype: Any = None) -> Tensor:
    _out_dtype(out_dtype, "bmm")
    if self.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: both arguments must be 3-d (batches of matrices), got "
                           f"{self.ndim}-d and {mat2.ndim}-d")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"bmm: shapes {shape_str(self.shape)} and {shape_str(mat2.shape)} don't "
                           "match: need the same batch size and columns of the first equal to "
                           "rows of the second")
    if self.data.dtype is not mat2.data.dtype:
        _dtype_mismatch(self, mat2)
    return record(matmul_arrays(self.data, mat2.data), BmmBackward0, (self, mat2), (self, mat2))


@formula
def MvBackward0(n, g, a, v):
    return (g.unsqueeze(-1) * _cj(v) if n.needs(0) else None), \
        (_mH(a).matmul(g) if n.needs(1) else None)


@op(samples=S.mv, names="contract", forward="multilinear", complex_half="addmv_impl_cpu")
def mv(self: Tensor, vec: Tensor) -> Tensor:
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: expected a matrix and a vector, got {self.ndim}-d and "
                           f"{vec.ndim}-d tensors")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat "
                           f"({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})")
    if self.data.dtype is not vec.data.dtype:
        _dtype_mismatch(self, vec)
    return record(self.data @ vec.data, MvBackward0, (self, vec), (self, vec))


@formula
def VdotBackward0(n, g, a, b):
    return (g * b if n.needs(0) else None), (g * a if n.needs(1) else None)


@op(samples=S.dot, names="unnamed")
def vdot(self: Tensor, other: Tensor) -> Tensor:
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError("vdot: 1D tensors expected, but got "
                           f"{self.ndim}D and {other.ndim}D tensors")
    if self.shape != other.shape:
        raise RuntimeError("vdot: inconsistent tensor size, expected tensor "
                           f"[{self.shape[0]}] and src [{other.shape[0]}] to have the same "
                           "number of elements")
    return record(np.asarray(np.dot(self.data, other.data)), VdotBackward0, (self, other),
                  (self, other))


@op(samples=S.inner, forward="multilinear")
def inner(self: Tensor, other: Tensor) -> Tensor:
    """Sum over the last dims of both (as PyTorch: a tensordot, viewed)."""
    if self.ndim == 0 or other.ndim == 0:
        return self * other
    return tensordot(self, other, ([-1], [-1]))


@op(samples=S.outer, forward="multilinear")
def outer(self: Tensor, vec2: Tensor) -> Tensor:
    if self.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expected two vectors, got {self.ndim}-d and {vec2.ndim}-d")
    return self.unsqueeze(1) * vec2


@op(samples=S.outer, forward="multilinear")
def ger(self: Tensor, vec2: Tensor) -> Tensor:
    return outer(self, vec2)


def _scaled(x: Tensor, c: Any) -> Tensor:
    return x if c == 1 else x * c


@formula(arrays=True)
def AddmmBackward0(n, g, m1, m2, beta, alpha, m1_t, m2_t):
    # as MmBackward0 (each operand saved only if the other needs a gradient, and
    # its layout): a transposed operand (nnf_linear's `weight.t()`) gets its
    # gradient in its own layout, no strided copy of a weight-sized gradient later
    ga = gb = None
    if n.needs(1):
        ga = _adj(_prod(m2, _adj(g))) if m1_t else _prod(g, _adj(m2))
    if n.needs(2):
        gb = _adj(_prod(_adj(g), m1)) if m2_t else _prod(_adj(m1), g)
    return ((_scaled(g, beta) if n.needs(0) else None),
            (None if ga is None else _scaled(ga, alpha)),
            (None if gb is None else _scaled(gb, alpha)))


def _add_product(self: Tensor, prod: np.ndarray, backward: Callable, a: Tensor, b: Tensor,
                 beta: Any, alpha: Any, saved: tuple | None = None) -> Tensor:
    """beta * self + alpha * prod, recorded (addmm and its kin; prod is a @ b's);
    `saved` replaces the node's usual (a, b, beta, alpha)."""
    # beta = 0 ignores self entirely (nan and inf in it too), as PyTorch does
    s = self.data
    if beta == 0:
        base = np.zeros(prod.shape, s.dtype)
    elif beta == 1 and s.shape in (prod.shape, prod.shape[1:]):
        base = s  # (fast path: a bias row or a whole matrix; np.add broadcasts it)
    else:
        base = np.broadcast_to(s * beta if beta != 1 else s, prod.shape)
    if alpha != 1:
        prod = prod * alpha
    if base.dtype == prod.dtype:
        out = np.add(prod, base, out=prod)  # prod is fresh: the sum goes into it
    else:
        out = (base + prod).astype(prod.dtype, copy=False)
    return record(out, backward, (self, a, b), (a, b, beta, alpha) if saved is None else saved)


@r_formals("self, mat1, mat2, out_dtype, beta = 1, alpha = 1",
           method="mat1, mat2, beta = 1L, alpha = 1L")
@op(samples=S.addmm, names="contract", complex_half="addmm_impl_cpu_", autocast="lower")
def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: float = 1, alpha: float = 1, *,
          out_dtype: Any = None) -> Tensor:
    _out_dtype(out_dtype, "addmm")
    prod = mm(mat1.detach(), mat2.detach()).data
    r1, r2 = mat1._rg, mat2._rg
    return _add_product(self, prod, AddmmBackward0, mat1, mat2, beta, alpha,
                        (mat1 if r2 else None, mat2 if r1 else None, beta, alpha,
                         r1 and _transposed(mat1.data), r2 and _transposed(mat2.data)))


@formula
def AddmvBackward0(n, g, mat, vec, beta, alpha):
    return ((_scaled(g, beta) if n.needs(0) else None),
            (_scaled(g.unsqueeze(-1) * vec, alpha) if n.needs(1) else None),
            (_scaled(_mT(mat).matmul(g), alpha) if n.needs(2) else None))


@op(samples=S.addmv, names="contract")
def addmv(self: Tensor, mat: Tensor, vec: Tensor, beta: float = 1, alpha: float = 1) -> Tensor:
    prod = mv(mat.detach(), vec.detach()).data
    return _add_product(self, prod, AddmvBackward0, mat, vec, beta, alpha)


@formula
def AddrBackward0(n, g, v1, v2, beta, alpha):
    return ((_scaled(g, beta) if n.needs(0) else None),
            (_scaled(g.matmul(v2), alpha) if n.needs(1) else None),
            (_scaled(_mT(g).matmul(v1), alpha) if n.needs(2) else None))


@op(samples=S.addr)
def addr(self: Tensor, vec1: Tensor, vec2: Tensor, beta: float = 1, alpha: float = 1) -> Tensor:
    prod = np.multiply.outer(vec1.data, vec2.data)
    return _add_product(self, prod, AddrBackward0, vec1, vec2, beta, alpha)


@formula
def BaddbmmBackward0(n, g, b1, b2, beta, alpha):
    return ((_scaled(g, beta) if n.needs(0) else None),
            (_scaled(g.matmul(_mT(b2)), alpha) if n.needs(1) else None),
            (_scaled(_mT(b1).matmul(g), alpha) if n.needs(2) else None))


@r_formals("self, batch1, batch2, out_dtype, beta = 1, alpha = 1",
           method="batch1, batch2, beta = 1L, alpha = 1L")
@op(samples=S.baddbmm, names="contract", autocast="lower")
def baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, beta: float = 1,
            alpha: float = 1, *, out_dtype: Any = None) -> Tensor:
    _out_dtype(out_dtype, "baddbmm")
    prod = bmm(batch1.detach(), batch2.detach()).data
    return _add_product(self, prod, BaddbmmBackward0, batch1, batch2, beta, alpha)


@formula
def AddbmmBackward0(n, g, b1, b2, beta, alpha):
    gb = g.unsqueeze(0)
    return ((_scaled(g, beta) if n.needs(0) else None),
            (_scaled(gb.matmul(_mT(b2)), alpha) if n.needs(1) else None),
            (_scaled(_mT(b1).matmul(gb), alpha) if n.needs(2) else None))


@op(samples=S.addbmm, names="contract", autocast="lower")
def addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, beta: float = 1,
           alpha: float = 1) -> Tensor:
    prod = bmm(batch1.detach(), batch2.detach()).data.sum(axis=0)
    return _add_product(self, prod, AddbmmBackward0, batch1, batch2, beta, alpha)


for _fn in (addmm, addmv, addr, baddbmm, addbmm):  # (x$addmm_(...): x takes the result)
    op(_fn.__name__ + "_", function=False)(inplace_form(_fn, _fn.__name__ + "_"))


# --------------------------------------------------------------------------
# cov and corrcoef (tensor methods in R torch): libtorch's composite, op by op,
# so the gradient and the nodes are its own


def _observation_weights(w: Any, n: int, name: str, integral: bool) -> Tensor:
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if integral != (w.data.dtype.kind in "iu"):
        kind = "an integral" if integral else "a floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got "
                           f"{w.dtype.r_name}")
    if w.numel() and w.data.min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


@op(function=False, samples=S.cov)
def cov(self: Tensor, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance of the rows (variables) over the columns (observations),
    optionally weighted by frequency and importance weights."""
    if self.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {self.ndim} dimensions")
    x = self.view(1, -1) if self.ndim < 2 else self
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _observation_weights(fweights, n, "fweights", integral=True)
    if aweights is not None:
        aw = _observation_weights(aweights, n, "aweights", integral=False)
        w = aw if w is None else w * aw
    w_sum = w.sum() if w is not None else wrap(np.asarray(n, np.int64))
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if float(norm_factor.data) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = mm(x, (x * w if w is not None else x).t().conj())
    return (c / norm_factor).squeeze()


@op(function=False, samples=S.corrcoef)
def corrcoef(self: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the rows, clipped to [-1, 1]."""
    if self.is_complex():
        raise NotImplementedError("corrcoef: complex tensors are not supported here")
    c = cov(self)
    if c.ndim == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


@formula
def TraceBackward0(n, g, shape):
    return (_diag_embed(g.unsqueeze(0).expand(builtins.min(shape)), shape),)


@op(samples=S.trace, forward="linear", complex_half="addmm_impl_cpu_", autocast="fp32")
def trace(self: Tensor) -> Tensor:
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    return record(np.asarray(np.trace(self.data)), TraceBackward0, (self,), (self.shape,))


def _dims_pair(a: Tensor, b: Tensor, dims: Any) -> tuple:
    if isinstance(dims, Tensor):
        dims = dims.data.tolist()
    if isinstance(dims, (int, float, np.integer)):
        k = whole(dims, "dims")
        if k < 0 or k > builtins.min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot: dims must be between 0 and {builtins.min(a.ndim, b.ndim)}"
                               f", got {k}")
        return list(range(a.ndim - k, a.ndim)), list(range(k))
    da, db = dims
    da = [da] if isinstance(da, (int, np.integer)) else list(da)
    db = [db] if isinstance(db, (int, np.integer)) else list(db)
    return ([wrap_dim(whole(d, "dims"), a.ndim) for d in da],
            [wrap_dim(whole(d, "dims"), b.ndim) for d in db])


@op(samples=S.tensordot, method=False, dim_lists=("dims",), names="tensordot",
    forward="multilinear", autocast="lower")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Contract dims of a with dims of b: permute and reshape to one matmul."""
    da, db = _dims_pair(a, b, dims)
    if len(da) != len(db):
        raise RuntimeError(f"tensordot: both dim lists should have the same length, got "
                           f"{len(da)} and {len(db)}")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has "
                               f"size {a.shape[i]} in dim {i} and second has size {b.shape[j]} "
                               f"in dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da], dtype=np.int64))
    ra = int(np.prod([a.shape[d] for d in fa], dtype=np.int64))
    rb = int(np.prod([b.shape[d] for d in fb], dtype=np.int64))
    am = a.permute(*fa, *da).reshape(ra, k)
    bm = b.permute(*db, *fb).reshape(k, rb)
    return mm(am, bm).view(tuple([a.shape[d] for d in fa] + [b.shape[d] for d in fb]))


@op(samples=S.kron, forward="multilinear")
def kron(self: Tensor, other: Tensor) -> Tensor:
    """Kronecker product, as a broadcast product of interleaved dims."""
    nd = builtins.max(self.ndim, other.ndim)
    a = self.reshape(*([1] * (nd - self.ndim)), *self.shape)
    b = other.reshape(*([1] * (nd - other.ndim)), *other.shape)
    ai = a.reshape(*[s for d in a.shape for s in (d, 1)])
    bi = b.reshape(*[s for d in b.shape for s in (1, d)])
    prod = ai * bi
    shape = tuple(x * y for x, y in zip(a.shape, b.shape))
    # (PyTorch's last step is an _unsafe_view of the product)
    return record(prod.data.reshape(shape), UnsafeViewBackward0, (prod,), (prod.shape,))


@formula
def LinalgCrossBackward0(n, g, a, b, dim):
    return ((linalg_cross(b, g, dim=dim) if n.needs(0) else None),
            (linalg_cross(g, a, dim=dim) if n.needs(1) else None))


@op(function="linalg_cross", method=False, torch_name="linalg.cross", dims=("dim",),
    samples=S.cross, forward="multilinear")
def linalg_cross(input: Tensor, other: Tensor, dim: int = -1) -> Tensor:
    try:
        shape = np.broadcast_shapes(input.shape, other.shape)
    except ValueError:
        raise RuntimeError(f"linalg.cross: inputs of shapes {shape_str(input.shape)} and "
                           f"{shape_str(other.shape)} cannot be broadcast together") from None
    d = wrap_dim(dim, len(shape))
    if shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d] if d < input.ndim else '?'} and "
                           f"{other.shape[d] if d < other.ndim else '?'}")
    out = np.cross(np.broadcast_to(input.data, shape), np.broadcast_to(other.data, shape),
                   axis=d)
    return record(out, LinalgCrossBackward0, (input, other), (input, other, d))


@op(dims=("dim",), samples=S.cross, forward="multilinear")
def cross(self: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:  # the first dim of size 3 (deprecated in PyTorch, kept by R torch)
        dim = next((i for i, s in enumerate(np.broadcast_shapes(self.shape, other.shape))
                    if s == 3), -1)
    return linalg_cross(self, other, dim=dim)


@op(function="linalg_multi_dot", method=False, torch_name="linalg.multi_dot",
    samples=S.multi_dot, forward="multilinear", autocast="lower")
def linalg_multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        if t.ndim not in ((1, 2) if i in (0, len(tensors) - 1) else (2,)):
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D (the first and last may "
                               f"be 1D), but got {t.ndim}D")
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = [tensors[0].unsqueeze(0) if first else tensors[0], *tensors[1:-1],
            tensors[-1].unsqueeze(1) if last else tensors[-1]]
    out = mats[0]
    for m in mats[1:]:
        out = mm(out, m)
    # (PyTorch ends with a view to the result's shape, whatever the ranks)
    shape = tuple(s for i, s in enumerate(out.shape) if not (i == 0 and first or i == 1 and last))
    return out.view(shape)


@r_formals("matrices")
@op(method=False, samples=S.chain_matmul, forward="multilinear", autocast="lower")
def chain_matmul(matrices: Sequence[Tensor], *more: Tensor) -> Tensor:
    """R torch takes a list of matrices; PyTorch takes them one by one: both work."""
    matrices = [matrices, *more] if isinstance(matrices, Tensor) else list(matrices)
    if len(matrices) == 1:
        return matrices[0].clone()
    return linalg_multi_dot(matrices)


# ==========================================================================
# Determinants, inverses, solves

def _lapack(what: str, fn: Callable, *arrays: np.ndarray) -> Any:
    try:
        return fn(*arrays)
    except np.linalg.LinAlgError as err:
        raise RuntimeError(f"{what}: {err} (the input is singular or not positive-definite)") \
            from None


@formula
def LinalgDetBackward0(n, g, A, det):
    return ((g * det).unsqueeze(-1).unsqueeze(-1) * _mT(linalg_inv(A)),)


@op(function="linalg_det", method=False, torch_name="linalg.det", samples=S.square)
def linalg_det(A: Tensor) -> Tensor:
    _square_check(A, "linalg.det")
    out = np.linalg.det(A.data).astype(A.data.dtype, copy=False)
    return record(np.asarray(out), LinalgDetBackward0, (A,), (A, OUTPUT))


@op(samples=S.square)
def det(self: Tensor) -> Tensor:
    return linalg_det(self)


@multi_formula
def LinalgSlogdetBackward0(n, grads, A):
    g = grads[1]
    if g is None:
        return (None,)
    return (g.unsqueeze(-1).unsqueeze(-1) * _mT(linalg_inv(A)),)


@op(function="linalg_slogdet", method=False, torch_name="linalg.slogdet", samples=S.square)
def linalg_slogdet(A: Tensor) -> tuple:
    _square_check(A, "linalg.slogdet")
    sign, logabs = np.linalg.slogdet(A.data)
    dt = A.data.dtype
    return record_many([np.asarray(sign, dt), np.asarray(logabs, dt)], LinalgSlogdetBackward0,
                        (A,), (A,))


@op(samples=S.square)
def slogdet(self: Tensor) -> tuple:
    return linalg_slogdet(self)


@op(samples=S.logdet)
def logdet(self: Tensor) -> Tensor:
    sign, logabs = linalg_slogdet(self)
    # nan for a negative determinant, as PyTorch
    return where(sign < 0, wrap(np.asarray(np.nan, self.data.dtype)), logabs)


@formula
def LinalgInvExBackward0(n, g, inv):
    invT = _mT(inv)
    return (-(invT.matmul(g).matmul(invT)),)


def _inv(A: Tensor, what: str) -> Tensor:
    _square_check(A, what)
    out = _lapack(what, np.linalg.inv, A.data).astype(A.data.dtype, copy=False)
    return record(out, LinalgInvExBackward0, (A,), (OUTPUT,))


@op(function="linalg_inv", method=False, torch_name="linalg.inv", samples=S.square, autocast="fp32")
def linalg_inv(A: Tensor) -> Tensor:
    return _inv(A, "linalg.inv")


@op(function="linalg_inv_ex", method=False, torch_name="linalg.inv_ex", samples=S.square,
    r_result_names=("inverse", "info"), autocast="fp32")
def linalg_inv_ex(A: Tensor, check_errors: bool = False) -> tuple:
    """(inverse, info): info is 0 where the inverse exists (else the inverse is nan)."""
    _square_check(A, "linalg.inv_ex")
    try:
        return _inv(A, "linalg.inv_ex"), wrap(np.zeros(A.shape[:-2], np.int32))
    except RuntimeError:
        if check_errors:
            raise
    # (some matrix in the batch is singular: invert one by one)
    flat = A.data.reshape(-1, *A.shape[-2:])
    inv = np.full(flat.shape, np.nan, A.data.dtype)
    info = np.zeros(len(flat), np.int32)
    for i, m in enumerate(flat):
        try:
            inv[i] = np.linalg.inv(m)
        except np.linalg.LinAlgError:
            info[i] = 1
    return wrap(inv.reshape(A.shape)), wrap(info.reshape(A.shape[:-2]))


@op(samples=S.square, autocast="fp32")
def inverse(self: Tensor) -> Tensor:
    return _inv(self, "inverse")


def _vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-d, or has one dim
    fewer than A with matching batch dims."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape[:-1] == A.shape[:-2])


def _solve_arrays(A: np.ndarray, B: np.ndarray, left: bool, vector: bool) -> np.ndarray:
    if vector:
        B = B[..., None]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        A, B = np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    X = np.linalg.solve(np.broadcast_to(A, batch + A.shape[-2:]),
                        np.broadcast_to(B, batch + B.shape[-2:]))
    if not left:
        X = np.swapaxes(X, -1, -2)
    return X[..., 0] if vector else X


@formula
def LinalgSolveExBackward0(n, g, A, X, left, vector):
    gB = linalg_solve(_mT(A), g, left=left)
    gA = None
    if n.needs(0):
        g2, X2 = (gB.unsqueeze(-1), X.unsqueeze(-1)) if vector else (gB, X)
        gA = -(g2.matmul(_mT(X2))) if left else -(_mT(X2).matmul(g2))
    return gA, (gB if n.needs(1) else None)


@r_formals("A, B")
@op(function="linalg_solve", method=False, torch_name="linalg.solve", samples=S.solve, autocast="fp32")
def linalg_solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    _square_check(A, "linalg.solve")
    if A.data.dtype is not B.data.dtype:
        _dtype_mismatch(A, B)
    vector = left and _vector_rhs(A, B)
    n = A.shape[-1]
    if (B.shape[-1] if vector else B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve: incompatible shapes of A {shape_str(A.shape)} and B "
                           f"{shape_str(B.shape)}: the rows of B must equal the size of A")
    try:
        X = _lapack("linalg.solve", _solve_arrays, A.data, B.data, left, vector)
    except ValueError:
        raise RuntimeError(f"linalg.solve: the batch dims of A {shape_str(A.shape)} and B "
                           f"{shape_str(B.shape)} cannot be broadcast together") from None
    return record(X, LinalgSolveExBackward0, (A, B), (A, OUTPUT, left, vector))


def _tri_solve(A: np.ndarray, B: np.ndarray, upper: bool, left: bool,
               unitriangular: bool) -> np.ndarray:
    """Solve with a triangular A (its other triangle ignored, as LAPACK does)."""
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        n = A.shape[-1]
        T = T.copy()
        T[..., np.arange(n), np.arange(n)] = 1
    return _solve_arrays(T, B, left, False)


@formula
def LinalgSolveTriangularBackward0(n, g, A, X, upper, left, unitriangular):
    # gB solves the transposed (so lower <-> upper) system
    gB = linalg_solve_triangular(_mT(A), g, upper=not upper, left=left,
                                 unitriangular=unitriangular)
    gA = None
    if n.needs(0):
        gA = -(gB.matmul(_mT(X))) if left else -(_mT(X).matmul(gB))
        gA = _tri(gA, -1 if unitriangular else 0, lower=not upper) if upper is False else \
            _tri(gA, 1 if unitriangular else 0, lower=False)
    return gA, (gB if n.needs(1) else None)


@r_formals("A, B, ..., upper, left = TRUE, unitriangular = FALSE")
@op(function="linalg_solve_triangular", method=False, torch_name="linalg.solve_triangular",
    samples=S.solve_triangular)
def linalg_solve_triangular(A: Tensor, B: Tensor, upper: bool, left: bool = True,
                            unitriangular: bool = False) -> Tensor:
    _square_check(A, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: B must have at least 2 dimensions, got "
                           f"{B.ndim}")
    if A.data.dtype is not B.data.dtype:
        _dtype_mismatch(A, B)
    X = _lapack("linalg.solve_triangular", _tri_solve, A.data, B.data, bool(upper), bool(left),
                bool(unitriangular))
    return record(X, LinalgSolveTriangularBackward0, (A, B),
                  (A, OUTPUT, bool(upper), bool(left), bool(unitriangular)))


@multi_formula
def TriangularSolveBackward0(n, grads, B, A, X, upper, transpose, unitriangular):
    gX, gM = grads
    gB = gA = None
    if gX is not None:
        gB = triangular_solve(gX, A, upper, not transpose, unitriangular)[0]
        if n.needs(1):
            gA = -(X.matmul(_mT(gB))) if transpose else -(gB.matmul(_mT(X)))
            gA = _tri(gA, 0, lower=not upper)
            if unitriangular:
                gA = gA - _diag_embed(_diagonal(gA))
    if gM is not None and n.needs(1):
        gA = gM if gA is None else gA + gM
    return (gB if n.needs(0) else None), gA


@op(samples=S.triangular_solve, autocast="fp32")
def triangular_solve(self: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> tuple:
    """(solution, a copy of A): the older form of linalg_solve_triangular."""
    _square_check(A, "triangular_solve")
    M = np.swapaxes(A.data, -1, -2) if transpose else A.data
    X = _lapack("triangular_solve", _tri_solve, M, self.data, bool(upper) != bool(transpose),
                True, bool(unitriangular))
    return record_many([X, A.data.copy()], TriangularSolveBackward0, (self, A),
                        (self, A, Output(0), bool(upper), bool(transpose), bool(unitriangular)))


# ==========================================================================
# Factorizations

@formula
def LinalgCholeskyExBackward0(n, g, L, upper):
    if upper:
        L, g = _mT(L), _mT(g)
    phi = _tri(_mT(L).matmul(g), 0, lower=True)
    phi = phi - _diag_embed(_diagonal(phi) * 0.5)
    # gA = L^-T phi L^-1, symmetrized
    Y = linalg_solve_triangular(_mT(L), phi, upper=True)
    gA = linalg_solve_triangular(L, Y, upper=False, left=False)
    return ((gA + _mT(gA)) * 0.5,)


def _cholesky(A: Tensor, upper: bool, what: str, name: str = "LinalgCholeskyExBackward0") -> Tensor:
    _square_check(A, what)
    try:  # (NumPy reads the lower triangle: upper's is A^H's)
        L = np.linalg.cholesky(np.swapaxes(A.data, -1, -2).conj() if upper else A.data)
    except np.linalg.LinAlgError:
        raise RuntimeError(f"{what}: The factorization could not be completed because the "
                           "input is not positive-definite") from None
    L = L.astype(A.data.dtype, copy=False)
    if upper:
        L = np.ascontiguousarray(np.swapaxes(L, -1, -2).conj())
    return record(L, LinalgCholeskyExBackward0, (A,), (OUTPUT, bool(upper)), name=name)


@r_formals("A")
@op(function="linalg_cholesky", method=False, torch_name="linalg.cholesky", samples=S.spd, autocast="fp32")
def linalg_cholesky(A: Tensor, upper: bool = False) -> Tensor:
    return _cholesky(A, upper, "linalg.cholesky")


@r_formals("A, check_errors = FALSE")
@op(function="linalg_cholesky_ex", method=False, torch_name="linalg.cholesky_ex",
    r_result_names=("L", "info"),
    samples=S.spd, autocast="fp32")
def linalg_cholesky_ex(A: Tensor, check_errors: bool = False, upper: bool = False) -> tuple:
    """(L, info): info is 0 where the factorization succeeded, else the 1-based
    column where it stopped, L then as LAPACK's potrf leaves it."""
    try:
        L = _cholesky(A, upper, "linalg.cholesky_ex")
        return L, wrap(np.zeros(A.shape[:-2], np.int32))
    except RuntimeError:
        if check_errors:
            raise
    _square_check(A, "linalg.cholesky_ex")
    a = np.swapaxes(A.data, -1, -2).conj() if upper else A.data
    lower = np.array(a)  # (a copy, each matrix factored in place)
    flat = lower.reshape(-1, *lower.shape[-2:])
    info = np.array([_potf2_lower(m) for m in flat], np.int32).reshape(A.shape[:-2])
    lower = np.tril(lower)
    L = np.ascontiguousarray(np.swapaxes(lower, -1, -2).conj()) if upper else lower
    return wrap(L), wrap(info)


def _potf2_lower(a: np.ndarray) -> int:
    """LAPACK's unblocked Cholesky (potf2, lower) in place, in a's dtype: 0, or the
    1-based column whose pivot is not positive (left there, with the columns after
    it as they were)."""
    for j in range(a.shape[0]):
        row = a[j, :j]
        ajj = a[j, j].real - np.vdot(row, row).real
        if not ajj > 0:  # (NaN too)
            a[j, j] = ajj
            return j + 1
        ajj = np.sqrt(ajj)
        a[j, j] = ajj
        a[j + 1:, j] = (a[j + 1:, j] - a[j + 1:, :j] @ row.conj()) / ajj
    return 0


@op(samples=S.spd, autocast="fp32")
def cholesky(self: Tensor, upper: bool = False) -> Tensor:
    return _cholesky(self, upper, "cholesky", "CholeskyBackward0")


@formula
def CholeskySolveBackward0(n, g, B, L, X, upper):
    gB = cholesky_solve(g, L, upper)
    gL = None
    if n.needs(1):
        common = gB.matmul(_mT(X))
        common = common + _mT(common)
        gL = -(L.matmul(common)) if upper else -(common.matmul(L))
    return (gB if n.needs(0) else None), gL


@op(samples=S.cholesky_solve, autocast="fp32")
def cholesky_solve(self: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """Solve A X = B (self) given A's Cholesky factor (input2)."""
    L = input2.data
    U = L if upper else np.swapaxes(L, -1, -2)
    Y = _tri_solve(np.swapaxes(U, -1, -2), self.data, False, True, False)
    X = _tri_solve(U, Y, True, True, False)
    return record(X, CholeskySolveBackward0, (self, input2), (self, input2, OUTPUT, bool(upper)))


@formula
def CholeskyInverseBackward0(n, g, L, inv, upper):
    common = g + _mT(g)
    common = inv.matmul(common).matmul(inv)
    return (-(L.matmul(common)) if upper else -(common.matmul(L)),)


@op(samples=S.cholesky_factor, autocast="fp32")
def cholesky_inverse(self: Tensor, upper: bool = False) -> Tensor:
    """The inverse of A from its Cholesky factor."""
    L = np.swapaxes(self.data, -1, -2) if upper else self.data
    A = L @ np.swapaxes(L, -1, -2)
    inv = _lapack("cholesky_inverse", np.linalg.inv, A).astype(self.data.dtype, copy=False)
    return record(inv, CholeskyInverseBackward0, (self,), (self, OUTPUT, bool(upper)))


@multi_formula
def LinalgQrBackward0(n, grads, A, Q, R, mode):
    gQ, gR = grads
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    m, k = A.shape[-2], A.shape[-1]
    if m < k:
        raise RuntimeError("linalg.qr: the derivative is implemented only for matrices with "
                           "at least as many rows as columns (m >= n)")
    if mode == "complete" and m > k:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    M = 0
    if gR is not None:
        M = R.matmul(_mT(gR))
    if gQ is not None:
        M = M - _mT(gQ).matmul(Q)
    # copy the lower triangle to the upper one
    if not isinstance(M, int):
        low = _tri(M, -1, lower=True)
        M = low + _mT(low) + _diag_embed(_diagonal(M))
    X = (gQ if gQ is not None else 0) + (Q.matmul(M) if not isinstance(M, int) else 0)
    # X R^{-T}
    return (linalg_solve_triangular(_mT(R), X, upper=False, left=False),)

@op(function="linalg_qr", method=False, torch_name="linalg.qr", samples=S.qr, autocast="fp32")
def linalg_qr(A: Tensor, mode: str = "reduced") -> tuple:
    _matrix_check(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    dt = A.data.dtype
    m, k = A.shape[-2], A.shape[-1]
    # geqrf, then Q from its reflectors (so Q is exactly linalg_householder_product's)
    h, tau = _geqrf(A.data)
    cols = m if mode == "complete" else builtins.min(m, k)
    r = np.triu(h[..., :cols, :])
    if mode == "r":
        q = np.zeros((0,), dt)
    else:
        hq = h if cols <= k else np.concatenate(
            [h, np.zeros(h.shape[:-1] + (cols - k,), dt)], axis=-1)
        q = _householder(hq[..., :cols], tau)
    return record_many([q.astype(dt, copy=False), r.astype(dt, copy=False)], LinalgQrBackward0,
                        (A,), (A, Output(0), Output(1), mode))


@op(samples=S.qr, autocast="fp32")
def qr(self: Tensor, some: bool = True) -> tuple:
    return linalg_qr(self, "reduced" if some else "complete")


@multi_formula
def LinalgSvdBackward0(n, grads, A, U, S, Vh, full):
    gU, gS, gVh = grads
    m, k_ = A.shape[-2], A.shape[-1]
    k = builtins.min(m, k_)
    if full and m != k_:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = gU.narrow(-1, 0, k) if gU is not None else None
        gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
    V = _mT(Vh)
    if gU is None and gVh is None:
        return ((U * gS.unsqueeze(-2)).matmul(Vh) if gS is not None else None,)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)          # E_ij = s_j^2 - s_i^2
    E = E + _eye_like(S.unsqueeze(-1), k)            # (1 on the diagonal: no division by 0)
    inner = _diag_embed(gS) if gS is not None else 0
    Sinv = 1 / S
    tail = 0
    if gU is not None:
        UtgU = _mT(U).matmul(gU)
        inner = inner + ((UtgU - _mT(UtgU)) / E) * S.unsqueeze(-2)
        if m > k:  # (I - U U^T) gU S^-1 V^T
            proj = gU - U.matmul(UtgU)
            tail = tail + (proj * Sinv.unsqueeze(-2)).matmul(Vh)
    if gVh is not None:
        gV = _mT(gVh)
        VtgV = _mT(V).matmul(gV)
        inner = inner + S.unsqueeze(-1) * ((VtgV - _mT(VtgV)) / E)
        if k_ > k:  # U S^-1 gV^T (I - V V^T)
            proj = gV - V.matmul(VtgV)
            tail = tail + (U * Sinv.unsqueeze(-2)).matmul(_mT(proj))
    return (U.matmul(inner).matmul(Vh) + tail,)

@op(function="linalg_svd", method=False, torch_name="linalg.svd", samples=S.svd, autocast="fp32")
def linalg_svd(A: Tensor, full_matrices: bool = True) -> tuple:
    _matrix_check(A, "linalg.svd")
    u, s, vh = _lapack("linalg.svd", lambda a: np.linalg.svd(a, full_matrices=full_matrices),
                       A.data)
    dt = A.data.dtype
    return record_many([u.astype(dt, copy=False), s.astype(dt, copy=False),
                         vh.astype(dt, copy=False)], LinalgSvdBackward0, (A,),
                        (A, Output(0), Output(1), Output(2), bool(full_matrices)))


@op(function="linalg_svdvals", method=False, torch_name="linalg.svdvals", samples=S.svd, autocast="fp32")
def linalg_svdvals(A: Tensor) -> Tensor:
    _matrix_check(A, "linalg.svdvals")
    if not needs_grad(A):
        return wrap(_lapack("linalg.svdvals", lambda a: np.linalg.svd(a, compute_uv=False),
                            A.data).astype(A.data.dtype, copy=False))
    # U and V are needed by the derivative (and by its derivative)
    return linalg_svd(A, full_matrices=False)[1]


@op(samples=S.svd, autocast="fp32")
def svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> tuple:
    """(U, S, V) with V, not V^T (the older form of linalg_svd)."""
    U, S_, Vh = linalg_svd(self, full_matrices=not some)
    if not compute_uv:
        return (wrap(np.zeros_like(U.data)), S_, wrap(np.zeros_like(Vh.data)))
    return U, S_, _mT(Vh)


@multi_formula
def LinalgEighBackward0(n, grads, L, V):
    gL, gV = grads
    inner = _diag_embed(gL) if gL is not None else 0
    if gV is not None:
        VtgV = _mT(V).matmul(gV)
        E = L.unsqueeze(-2) - L.unsqueeze(-1)        # E_ij = l_j - l_i
        E = E + _eye_like(L.unsqueeze(-1), L.shape[-1])
        inner = inner + ((VtgV - _mT(VtgV)) * 0.5) / E
    if isinstance(inner, int):
        return (None,)
    return (V.matmul(inner).matmul(_mT(V)),)
def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


@op(function="linalg_eigh", method=False, torch_name="linalg.eigh", samples=S.symmetric, autocast="fp32")
def linalg_eigh(A: Tensor, UPLO: str = "L") -> tuple:
    _square_check(A, "linalg.eigh")
    w, v = np.linalg.eigh(A.data, UPLO=_uplo(UPLO))
    dt = A.data.dtype
    return record_many([w.astype(dt, copy=False), v.astype(dt, copy=False)], LinalgEighBackward0,
                        (A,), (Output(0), Output(1)))


@op(function="linalg_eigvalsh", method=False, torch_name="linalg.eigvalsh",
    samples=S.symmetric, autocast="fp32")
def linalg_eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    _square_check(A, "linalg.eigvalsh")
    if not needs_grad(A):
        return wrap(np.linalg.eigvalsh(A.data, UPLO=_uplo(UPLO)).astype(A.data.dtype,
                                                                         copy=False))
    return linalg_eigh(A, UPLO)[0]


# ==========================================================================
# Norms

def _norm_dims(x: Tensor, dim: Any) -> tuple | None:
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer, float)):
        return (wrap_dim(whole(dim, "dim"), x.ndim),)
    return tuple(wrap_dim(whole(d, "dim"), x.ndim) for d in dim)


def _ord(ord: Any) -> Any:
    if isinstance(ord, Tensor):
        ord = ord.item()
    return float(ord) if isinstance(ord, (int, float, np.number)) else ord


@formula
def LinalgVectorNormBackward0(n, g, x, norm, ord, dims, keepdim):
    if not keepdim and dims is not None:
        for d in sorted(dims):
            g, norm = g.unsqueeze(d), norm.unsqueeze(d)
    elif not keepdim:
        g = g.reshape((1,) * x.ndim)
        norm = norm.reshape((1,) * x.ndim)
    if ord == 0:
        return (x * 0,)
    if ord == 1:
        return (x.sign() * g,)
    if ord == 2:
        return (x * where(norm == 0, wrap(np.zeros((), x.data.dtype)), g / norm),)
    if np.isinf(ord):
        ax = x.abs()
        hit = (ax == norm).to(dtype=x.dtype)
        count = hit.sum(dim=dims, keepdim=True) if dims is not None else hit.sum()
        return (x.sign() * hit * (g / count),)
    ax = x.abs()
    # x |x|^(p-2) / norm^(p-1), 0 where the norm is 0
    scale = where(norm == 0, wrap(np.zeros((), x.data.dtype)), g / norm.pow(ord - 1))
    return (x.sign() * ax.pow(ord - 1) * scale,)


def _vector_norm_arrays(a: np.ndarray, ord: float, dims: tuple | None, keepdim: bool) -> np.ndarray:
    ax = np.abs(a)
    if ord == np.inf:
        return np.max(ax, axis=dims, keepdims=keepdim)
    if ord == -np.inf:
        return np.min(ax, axis=dims, keepdims=keepdim)
    if ord == 0:
        return np.sum(ax != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    if ord == 1:
        return np.sum(ax, axis=dims, keepdims=keepdim)
    if ord == 2:
        return np.sqrt(np.sum(ax * ax, axis=dims, keepdims=keepdim))
    return np.sum(ax ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)


@op(function="linalg_vector_norm", method=False, torch_name="linalg.vector_norm",
    dims=("dim",), samples=S.vector_norm)
def linalg_vector_norm(A: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False,
                       dtype: Any = None) -> Tensor:
    x = A.to(dtype=dtype) if dtype is not None else A
    _float_check(x, "linalg.vector_norm")
    ord = _ord(ord)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got '{ord}' (use "
                           "linalg_matrix_norm for 'fro' and 'nuc')")
    dims = _norm_dims(x, dim)
    if x.data.size == 0 and ord < 0:
        raise RuntimeError("linalg.vector_norm cannot compute the "
                           f"{ord} norm on an empty tensor because the operation does not "
                           "have an identity")
    out = _vector_norm_arrays(x.data, ord, dims, keepdim).astype(x.data.dtype, copy=False)
    return record(np.asarray(out), LinalgVectorNormBackward0, (x,),
                  (x, OUTPUT, ord, dims, keepdim))


def _matrix_dims(A: Tensor, dim: Any) -> tuple:
    dims = _norm_dims(A, dim)
    if dims is None or len(dims) != 2 or dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple of different dims, "
                           f"got {dim}")
    return dims


@formula
def _ExtremeBackward(n, g, x, out, dim, keepdim):
    if not keepdim:
        g, out = g.unsqueeze(dim), out.unsqueeze(dim)
    hit = (x == out).to(dtype=x.dtype)
    return (hit * (g / hit.sum(dim=dim, keepdim=True)),)


def _amax(x: Tensor, dim: int, keepdim: bool = False, largest: bool = True) -> Tensor:
    """amax/amin over one dim: ties share the gradient equally (as PyTorch's)."""
    d = wrap_dim(dim, x.ndim)
    out = (np.max if largest else np.min)(x.data, axis=d, keepdims=keepdim)
    return record(np.asarray(out), _ExtremeBackward, (x,), (x, OUTPUT, d, keepdim),
                  name="AmaxBackward0" if largest else "AminBackward0")


@formula
def NanToNumBackward0(n, g, x):
    return (g * wrap(np.isfinite(x.data).astype(g.data.dtype)),)  # (a constant mask)


def _nan_to_num(x: Tensor) -> Tensor:
    """nan -> inf (a singular matrix's condition number), as PyTorch's cond."""
    return record(np.where(np.isnan(x.data), np.inf, x.data).astype(x.data.dtype, copy=False),
                  NanToNumBackward0, (x,), (x,))


@op(function="linalg_matrix_norm", method=False, torch_name="linalg.matrix_norm",
    dims=("dim",), samples=S.matrix_norm)
def linalg_matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False,
                       dtype: Any = None) -> Tensor:
    x = A.to(dtype=dtype) if dtype is not None else A
    _matrix_check(x, "linalg.matrix_norm")
    ord = _ord(ord)
    d0, d1 = _matrix_dims(x, dim)
    if ord == "fro":
        return linalg_vector_norm(x, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2.0, -2.0):
        # singular values of the matrices moved to the last two dims
        perm = [d for d in range(x.ndim) if d not in (d0, d1)] + [d0, d1]
        s = linalg_svdvals(x.permute(*perm))
        out = s.sum(dim=-1, keepdim=keepdim) if ord == "nuc" else \
            _amax(s, -1, keepdim, largest=ord > 0)
        if keepdim:  # back to the input's dim order
            return out.unsqueeze(-1).permute(*np.argsort(perm).tolist())
    elif ord in (1.0, -1.0, np.inf, -np.inf):
        # max/min over one dim of the abs sums over the other
        sum_dim, red_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = x.abs().sum(dim=sum_dim, keepdim=keepdim)
        if not keepdim and red_dim > sum_dim:
            red_dim -= 1
        return _amax(sums, red_dim, keepdim, largest=ord > 0)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported (use 'fro', 'nuc', "
                           "1, -1, 2, -2, Inf or -Inf)")
    if keepdim:
        out = out.unsqueeze(builtins.min(d0, d1)).unsqueeze(builtins.max(d0, d1))
    return out


@op(function="linalg_norm", method=False, torch_name="linalg.norm", dims=("dim",),
    samples=S.linalg_norm, complex_half="real")
def linalg_norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False,
                dtype: Any = None) -> Tensor:
    ord = _ord(ord)
    dims = _norm_dims(A, dim)
    if dims is not None and len(dims) == 2 or \
            (dims is None and ord is not None and A.ndim == 2) or isinstance(ord, str):
        return linalg_matrix_norm(A, "fro" if ord is None else ord,
                                  dims if dims is not None else (-2, -1), keepdim, dtype)
    if dims is None and ord is not None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.ndim}D.")
    return linalg_vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype)


# R torch also exports ATen's own name for it (`torch_linalg_norm`)
op("linalg_norm_aten", function="torch_linalg_norm", method=False, torch_name="linalg.norm",
   dims=("dim",), samples=S.linalg_norm)(linalg_norm)


_SGESDD: list = []   # [LAPACKE's sgesdd, or None where not found], once looked up


def _sgesdd() -> Any:
    """LAPACKE_sgesdd of the OpenBLAS NumPy's wheel bundles (ILP64, symbols
    prefixed scipy_), through ctypes; None without it."""
    if not _SGESDD:
        found = glob.glob(os.path.join(os.path.dirname(os.path.dirname(np.__file__)),
                                       "numpy.libs", "libscipy_openblas64_*.so"))
        fn = None
        try:
            lib = ctypes.CDLL(found[0]) if found else None
            fn = getattr(lib, "scipy_LAPACKE_sgesdd64_")
        except (OSError, AttributeError):
            pass
        if fn is not None:
            i64, ptr = ctypes.c_int64, ctypes.c_void_p
            fn.restype = i64
            fn.argtypes = [ctypes.c_int, ctypes.c_char, i64, i64, ptr, i64, ptr, ptr, i64, ptr,
                           i64]
        _SGESDD.append(fn)
    return _SGESDD[0]


def _single_precision_svdvals(a: np.ndarray) -> np.ndarray | None:
    """The singular values of float32 matrices from LAPACK's single-precision
    gesdd, as libtorch computes them. (NumPy's linalg runs
    in double and rounds to float: a singular matrix's zero singular value then
    comes out at double's rounding, 3.4e-17 for ones(2, 2), where float's
    gesdd gives 0 or about 1e-8, so linalg_cond was 6e16 instead of inf or
    about 1e8.) None for other dtypes, empty or non-finite input (NumPy's path
    errors as before) or without the library."""
    if a.dtype != np.float32 or a.size == 0 or not np.isfinite(a).all():
        return None
    gesdd = _sgesdd()
    if gesdd is None:
        return None
    m, n = a.shape[-2:]
    mats = np.array(a.reshape(-1, m, n), order="C")     # (a copy: gesdd overwrites it)
    out = np.empty((mats.shape[0], builtins.min(m, n)), np.float32)
    for mat, s in zip(mats, out):
        # row-major (101), singular values only ("N")
        if gesdd(101, b"N", m, n, mat.ctypes.data, n, s.ctypes.data, None, 1, None, 1):
            return None
    return out.reshape(a.shape[:-2] + out.shape[-1:])


def _cond_svdvals(A: Tensor) -> Tensor:
    """linalg_svdvals(A), its values from single-precision gesdd for float32
    (what libtorch divides by); the gradient is linalg_svdvals'."""
    s = linalg_svdvals(A)
    single = _single_precision_svdvals(A.data)
    if single is None:
        return s
    return record(single, AliasBackward0, (s,)) if needs_grad(s) else wrap(single)


@op(function="linalg_cond", method=False, torch_name="linalg.cond", samples=S.cond, autocast="fp32")
def linalg_cond(A: Tensor, p: Any = None) -> Tensor:
    p = _ord(p)
    _matrix_check(A, "linalg.cond")
    if p is None or p in (2.0, -2.0):
        s = _cond_svdvals(A)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        out = (big / small) if p != -2.0 else (small / big)
        return out.squeeze(-1)
    _square_check(A, "linalg.cond")
    if p == "nuc":  # from the singular values, as PyTorch: a zero one gives inf, no error
        s = _cond_svdvals(A)
        return s.sum(dim=-1) * s.reciprocal().sum(dim=-1)
    # Through the inverse, as PyTorch: where LU meets an exact zero pivot (PyTorch's
    # decision that A is singular) the inverse is nan and the condition number inf.
    # At 2 and -2 (above) a singular A's answer is LAPACK's rounding in both libraries:
    # its smallest singular value comes out 0 (inf) or about eps * the largest (the
    # dtype's eps: float32 matrices go through single-precision gesdd, as in libtorch).
    inv = linalg_inv_ex(A)[0]
    return _nan_to_num(linalg_matrix_norm(A, p) * linalg_matrix_norm(inv, p))


# ==========================================================================
# Least squares, pseudo-inverse, rank, powers, exponential

@formula
def LinalgPinvBackward0(n, g, A, P):
    m, k = A.shape[-2], A.shape[-1]
    Ph, gh = _mT(P), _mT(g)
    if m <= k:
        K = gh.matmul(P)
        KPh = K.matmul(Ph)
        gA = -_mT(P.matmul(K)) + KPh - A.matmul(P).matmul(KPh) + \
            Ph.matmul(P).matmul(gh - K.matmul(A))
    else:
        K = P.matmul(gh)
        PhK = Ph.matmul(K)
        gA = -_mT(K.matmul(P)) + (gh - A.matmul(K)).matmul(P).matmul(Ph) + PhK - \
            PhK.matmul(P).matmul(A)
    return (gA,)


def _tolerances(S: np.ndarray, atol: Any, rtol: Any, shape: tuple, dt: np.dtype) -> np.ndarray:
    """PyTorch's cut-off: max(atol, rtol * largest singular value)."""
    a = 0.0 if atol is None else (atol.data if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rtol = 0.0 if (atol is not None and np.any(np.asarray(a) > 0)) else \
            np.finfo(dt).eps * builtins.max(shape[-2:])
    r = rtol.data if isinstance(rtol, Tensor) else rtol
    smax = S[..., :1] if S.shape[-1] else np.zeros(S.shape[:-1] + (1,), dt)
    return np.maximum(np.asarray(a)[..., None] if np.ndim(a) else a,
                      (np.asarray(r)[..., None] if np.ndim(r) else r) * smax)


@op(function="linalg_pinv", method=False, torch_name="linalg.pinv", samples=S.pinv)
def linalg_pinv(A: Tensor, rcond: Any = None, hermitian: bool = False, atol: Any = None,
                rtol: Any = None) -> Tensor:
    _matrix_check(A, "linalg.pinv")
    if rcond is not None:
        _deprecated("`rcond` is deprecated in favor of `rtol`.")
        rtol = rcond
    dt = A.data.dtype
    u, s, vh = _lapack("linalg.pinv", lambda a: np.linalg.svd(a, full_matrices=False), A.data)
    cut = _tolerances(s, atol, rtol, A.shape, dt)
    sinv = np.where(s > cut, 1 / np.where(s == 0, 1, s), 0)
    P = (np.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ np.swapaxes(u, -1, -2)
    return record(P.astype(dt, copy=False), LinalgPinvBackward0, (A,), (A, OUTPUT))


@op(samples=S.pinv, autocast="fp32")
def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
    return linalg_pinv(self, rtol=rcond)


@r_formals("A, ..., atol = NULL, rtol = NULL, tol = NULL, hermitian = FALSE")
@op(function="linalg_matrix_rank", method=False, torch_name="linalg.matrix_rank",
    samples=S.matrix_rank, differentiable=False, autocast="fp32")
def linalg_matrix_rank(A: Tensor, atol: Any = None, rtol: Any = None, tol: Any = None,
                       hermitian: bool = False) -> Tensor:
    _matrix_check(A, "linalg.matrix_rank")
    if tol is not None:
        _deprecated("`tol` argument is deprecated in favor of `atol` and `rtol`.")
        atol, rtol = tol, 0.0
    s = np.abs(np.linalg.eigvalsh(A.data)) if hermitian else \
        np.linalg.svd(A.data, compute_uv=False)
    if hermitian:
        s = -np.sort(-s, axis=-1)
    cut = _tolerances(s, atol, rtol, A.shape, A.data.dtype)
    return wrap(np.asarray(np.sum(s > cut, axis=-1), np.int64))


@multi_formula
def LinalgLstsqBackward0(n, grads, A, B, X):
    g = grads[0]
    if g is None:
        return None, None
    P = linalg_pinv(A)
    vector = B.ndim == A.ndim - 1
    gB = P.transpose(-1, -2).matmul(g.unsqueeze(-1) if vector else g)
    gB = gB.squeeze(-1) if vector else gB
    gA = None
    if n.needs(0):
        # (through X = pinv(A) B)
        gP = (g.unsqueeze(-1) if vector else g).matmul(_mT(B.unsqueeze(-1) if vector else B))
        gA = LinalgPinvBackward0.formula(n, gP, A, P)[0]
    return gA, (gB if n.needs(1) else None)
@r_formals("A, B, rcond = NULL, ..., driver = NULL")
@op(function="linalg_lstsq", method=False, torch_name="linalg.lstsq", samples=S.lstsq,
    r_result_names=("solution", "residuals", "rank", "singular_values"), autocast="fp32")
def linalg_lstsq(A: Tensor, B: Tensor, rcond: Any = None, driver: Any = None) -> tuple:
    """(solution, residuals, rank, singular_values), as PyTorch's default CPU driver
    (gelsy) fills them: residuals and singular values empty, rank given."""
    _matrix_check(A, "linalg.lstsq")
    if A.data.dtype is not B.data.dtype:
        _dtype_mismatch(A, B)
    vector = B.ndim == A.ndim - 1
    Bm = B.data[..., None] if vector else B.data
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"linalg.lstsq: input.size(-2) should match other.size(-2), got "
                           f"{A.shape[-2]} and {Bm.shape[-2]}")
    dt = A.data.dtype
    batch = np.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    Ab = np.broadcast_to(A.data, batch + A.shape[-2:]).reshape(-1, *A.shape[-2:])
    Bb = np.broadcast_to(Bm, batch + Bm.shape[-2:]).reshape(-1, *Bm.shape[-2:])
    rc = None if rcond is None else float(rcond)
    if rc is None:
        rc = np.finfo(dt).eps * builtins.max(A.shape[-2:])
    sols = [np.linalg.lstsq(a, b, rcond=rc)[0] for a, b in zip(Ab, Bb)]
    # (the rank is A's, over A's own batch dims, as PyTorch gives it)
    ranks = [np.linalg.matrix_rank(a, rc * np.linalg.norm(a, 2)) if a.size else 0
             for a in A.data.reshape(-1, *A.shape[-2:])]
    X = np.array(sols, dt).reshape(batch + (A.shape[-1], Bm.shape[-1]))
    X = X[..., 0] if vector else X
    empty = np.zeros((0,), dt)
    return record_many([X, empty, np.asarray(ranks, np.int64).reshape(A.shape[:-2]), empty.copy()],
                        LinalgLstsqBackward0, (A, B), (A, B, Output(0)),
                        differentiable=(True, True, False, False))


@formula
def LinalgMatrixExpBackward0(n, g, A):
    # the upper right block of exp([[A^T, g], [0, A^T]])
    k = A.shape[-1]
    At = _mT(A)
    top = cat([At, g], dim=-1)
    bottom = cat([At * 0, At], dim=-1)
    big = linalg_matrix_exp(cat([top, bottom], dim=-2))
    return (big.narrow(-2, 0, k).narrow(-1, k, k),)


def _expm(a: np.ndarray) -> np.ndarray:
    """Matrix exponential by scaling and squaring a Taylor series (to machine precision)."""
    norm = np.max(np.sum(np.abs(a), axis=-2), axis=-1) if a.size else np.zeros(a.shape[:-2])
    s = int(np.max(np.maximum(0, np.ceil(np.log2(np.maximum(norm, 1e-300) / 0.25))))) \
        if a.size else 0
    x = a / (2.0 ** s)
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    out, term = eye.copy(), eye.copy()
    for i in range(1, 20):
        term = term @ x / i
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


@op(function="linalg_matrix_exp", method=False, torch_name="linalg.matrix_exp",
    samples=S.matrix_exp)
def linalg_matrix_exp(A: Tensor) -> Tensor:
    _square_check(A, "linalg.matrix_exp")
    return record(_expm(A.data.astype(np.float64)).astype(A.data.dtype),
                  LinalgMatrixExpBackward0, (A,), (A,))


@op(samples=S.matrix_exp)
def matrix_exp(self: Tensor) -> Tensor:
    return linalg_matrix_exp(self)


@formula
def _ZeroBackward(n, g):
    return (g * 0,)


@op(function="linalg_matrix_power", method=False, torch_name="linalg.matrix_power",
    samples=S.matrix_power)
def linalg_matrix_power(A: Tensor, n: int) -> Tensor:
    _square_check(A, "linalg.matrix_power")
    n = whole(n, "n")
    if n == 0:
        eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A.data.dtype), A.shape).copy()
        return record(eye, _ZeroBackward, (A,), name="CopyBackwards")
    base = A if n > 0 else linalg_inv(A)
    if abs(n) == 1:
        return base.clone() if n > 0 else base
    out = None
    # binary powering, as PyTorch
    z = base
    k = abs(n)
    while k:
        if k & 1:
            out = z if out is None else out.matmul(z)
        k >>= 1
        if k:
            z = z.matmul(z)
    return out


@op(samples=S.matrix_power)
def matrix_power(self: Tensor, n: int) -> Tensor:
    return linalg_matrix_power(self, n)


# ==========================================================================
# Tensor inverses and solves

@op(function="linalg_tensorinv", method=False, torch_name="linalg.tensorinv", dims=("ind",),
    samples=S.tensorinv, autocast="fp32")
def linalg_tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    ind = whole(ind, "ind")
    if ind <= 0:
        raise RuntimeError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', "
                           f"but got {ind}")
    out_shape, in_shape = A.shape[:ind], A.shape[ind:]
    rows = int(np.prod(out_shape, dtype=np.int64))
    cols = int(np.prod(in_shape, dtype=np.int64))
    if rows != cols:
        raise RuntimeError("linalg.tensorinv: Expected self to satisfy the requirement "
                           "prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
                           f"{cols} != {rows}")
    inv = linalg_inv(A.reshape(rows, cols))
    shape = tuple(in_shape) + tuple(out_shape)
    return record(inv.data.reshape(shape), ViewBackward0, (inv,), (inv.shape,),
                  name="ReshapeAliasBackward0")


@op(function="linalg_tensorsolve", method=False, torch_name="linalg.tensorsolve",
    dims=("dims",), samples=S.tensorsolve, autocast="fp32")
def linalg_tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    if dims is not None:
        ds = [dims] if isinstance(dims, (int, np.integer)) else list(dims)
        ds = [wrap_dim(whole(d, "dims"), A.ndim) for d in ds]
        rest = [d for d in range(A.ndim) if d not in ds]
        A = A.permute(*rest, *ds)
    x_shape = A.shape[B.ndim:]
    rows = int(np.prod(B.shape, dtype=np.int64))
    cols = int(np.prod(x_shape, dtype=np.int64))
    if rows != cols:
        raise RuntimeError("linalg.tensorsolve: Expected self to satisfy the requirement "
                           "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {cols} != {rows}")
    return linalg_solve(A.reshape(rows, cols), B.reshape(rows)).reshape(tuple(x_shape))


# ==========================================================================
# Householder

def _geqrf(a: np.ndarray) -> tuple:
    """LAPACK's geqrf: R on and above the diagonal, Householder vectors below, and tau."""
    h, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(np.swapaxes(h, -1, -2)), tau


def _householder(h: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T (v_i from h's
    column i below the diagonal, 1 on it), in float64."""
    m, n = h.shape[-2], h.shape[-1]
    batch = np.broadcast_shapes(h.shape[:-2], tau.shape[:-1])
    h = np.broadcast_to(h, batch + (m, n)).astype(np.float64)
    tau = np.broadcast_to(tau, batch + tau.shape[-1:]).astype(np.float64)
    Q = np.broadcast_to(np.eye(m, n), batch + (m, n)).copy()
    for i in reversed(range(tau.shape[-1])):
        v = np.zeros(batch + (m,))
        v[..., i] = 1.0
        v[..., i + 1:] = h[..., i + 1:, i]
        Q -= tau[..., i, None, None] * v[..., :, None] * (v[..., None, :] @ Q)
    return Q


@op(samples=S.geqrf, differentiable=False, autocast="fp32")
def geqrf(self: Tensor) -> tuple:
    """(a, tau) of LAPACK's geqrf (the input of linalg_householder_product)."""
    _matrix_check(self, "geqrf")
    h, tau = _geqrf(self.data)
    return wrap(h.astype(self.data.dtype, copy=False)), wrap(tau.astype(self.data.dtype,
                                                                         copy=False))


@op(function="linalg_householder_product", method=False,
    torch_name="linalg.householder_product", samples=S.householder, differentiable=False, autocast="fp32")
def linalg_householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """Q from geqrf's Householder reflectors (linalg_qr computes its Q the same way)."""
    _matrix_check(A, "linalg.householder_product")
    m, n = A.shape[-2], A.shape[-1]
    if n > m or tau.shape[-1] > n:
        raise RuntimeError("linalg.householder_product: need input.shape[-2] >= "
                           "input.shape[-1] >= tau.shape[-1]")
    return wrap(_householder(A.data, tau.data).astype(A.data.dtype))


@op(samples=S.householder, differentiable=False, autocast="fp32")
def orgqr(self: Tensor, input2: Tensor) -> Tensor:
    return linalg_householder_product(self, input2)


@op(samples=S.ormqr, differentiable=False, autocast="fp32")
def ormqr(self: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """`input3` multiplied by Q (geqrf's reflectors `self`, `input2` their taus),
    from the left or the right, Q or its transpose: as a householder product,
    without its derivative (linalg_householder_product has none here)."""
    _matrix_check(self, "ormqr")
    _matrix_check(input3, "ormqr")
    if self.data.dtype.kind == "c":
        raise NotImplementedError("ormqr: complex tensors are not supported here")
    m = input3.shape[-2] if left else input3.shape[-1]
    k = input2.shape[-1]
    if self.shape[-2] != m or k > self.shape[-1]:
        raise RuntimeError(f"ormqr: input.shape[-2] must be other.shape[{-2 if left else -1}] "
                           f"({m}), and tau no longer than input.shape[-1]; got input "
                           f"{list(self.shape)}, tau {list(input2.shape)}")
    h = np.zeros(self.shape[:-1] + (m,))
    h[..., :k] = self.data[..., :k]
    Q = _householder(h, input2.data)
    Q = np.swapaxes(Q, -1, -2) if transpose else Q
    c = input3.data.astype(np.float64)
    out = Q @ c if left else c @ Q
    return wrap(out.astype(np.result_type(self.data, input3.data)))


# ==========================================================================
# einsum: composed of permutes, sums, products and bmm, as PyTorch composes it
# (so the nodes, and their names, are PyTorch's)

def _einsum_parse(equation: str, operands: Sequence[Tensor]) -> tuple:
    """Subscripts per operand and for the output, '...' spelled out as letters."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) != len(operands):
        raise RuntimeError(f"einsum(): {len(subs)} operands in the equation '{equation}' but "
                           f"{len(operands)} tensors were given")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
    n_ell = builtins.max([t.ndim - (len(s) - 3) for s, t in zip(subs, operands) if "..." in s]
                         or [0])
    ell = "".join(spare[:n_ell])
    out_subs = []
    for s, t in zip(subs, operands):
        if "..." in s:
            k = t.ndim - (len(s) - 3)
            s = s.replace("...", ell[n_ell - k:] if k else "")
        if not all(c.isalpha() for c in s) or len(s) != t.ndim:
            raise RuntimeError(f"einsum(): the subscripts '{s}' don't fit an operand with "
                               f"{t.ndim} dims (equation '{equation}')")
        out_subs.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:  # implicit: the broadcast dims, then the letters used once, in order
        letters = "".join(out_subs)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))
    for c in out:
        if c not in "".join(out_subs):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                               f"equation for any input operand")
    return out_subs, out


def _einsum_diagonals(t: Tensor, s: str) -> tuple:
    """Repeated letters in one operand: take the diagonal."""
    while len(set(s)) != len(s):
        c = next(c for c in s if s.count(c) > 1)
        i, j = s.index(c), s.index(c, s.index(c) + 1)
        rest = [d for d in range(t.ndim) if d not in (i, j)]
        t = _diagonal(t.permute(*rest, i, j))
        s = "".join(s[d] for d in rest) + c
    return t, s


def _einsum_sum_out(t: Tensor, s: str, keep: str) -> tuple:
    """Sum the letters of t that no one else needs."""
    gone = [i for i, c in enumerate(s) if c not in keep]
    if gone:
        t = t.sum(dim=tuple(gone))
        s = "".join(c for c in s if c in keep)
    return t, s


def _einsum_pair(a: Tensor, sa: str, b: Tensor, sb: str, keep: str) -> tuple:
    """Contract two operands over their shared letters not kept (one bmm)."""
    sizes = {**{c: n for c, n in zip(sa, a.shape)}, **{c: n for c, n in zip(sb, b.shape)}}
    for c in set(sa) & set(sb):  # broadcast size-1 dims
        sizes[c] = builtins.max(a.shape[sa.index(c)], b.shape[sb.index(c)])
    contract = [c for c in sa if c in sb and c not in keep]
    if not contract:  # an outer product with broadcasting
        letters = sa + "".join(c for c in sb if c not in sa)
        return _einsum_align(a, sa, letters) * _einsum_align(b, sb, letters), letters
    batch = [c for c in sa if c in sb and c in keep]
    la = [c for c in sa if c not in sb]
    lb = [c for c in sb if c not in sa]

    def prep(t: Tensor, s: str, order: list) -> Tensor:
        t = t.permute(*[s.index(c) for c in order])
        shape = tuple(sizes[c] for c in order)
        return t.expand(shape) if t.shape != shape else t

    nb = int(np.prod([sizes[c] for c in batch], dtype=np.int64))
    nk = int(np.prod([sizes[c] for c in contract], dtype=np.int64))
    na = int(np.prod([sizes[c] for c in la], dtype=np.int64))
    nbb = int(np.prod([sizes[c] for c in lb], dtype=np.int64))
    A = prep(a, sa, batch + la + contract).reshape(nb, na, nk)
    B = prep(b, sb, batch + contract + lb).reshape(nb, nk, nbb)
    out = bmm(A, B).view(tuple(sizes[c] for c in batch + la + lb))
    return out, "".join(batch + la + lb)


def _einsum_align(t: Tensor, s: str, letters: str) -> Tensor:
    """t with its dims in `letters`' order, size 1 where it lacks a letter."""
    order = [s.index(c) for c in letters if c in s]
    if order != list(range(t.ndim)):
        t = t.permute(*order)
    shape = tuple(t.shape[[c for c in letters if c in s].index(c)] if c in s else 1
                  for c in letters)
    return t.reshape(shape) if shape != t.shape else t


@r_formals("equation, tensors, path = NULL")
@op(method=False, samples=S.einsum, forward="multilinear", autocast="lower")
def einsum(equation: str, tensors: Sequence[Tensor], *more: Tensor, path: Any = None) -> Tensor:
    """Einstein summation: R torch passes a list of tensors, PyTorch them one by one."""
    ops = [tensors, *more] if isinstance(tensors, Tensor) else list(tensors) + list(more)
    subs, out = _einsum_parse(equation, ops)
    items = [_einsum_diagonals(t, s) for t, s in zip(ops, subs)]
    t, s = items[0]
    if len(items) == 1:  # the output's letters first (PyTorch permutes even when in order)
        order = [s.index(c) for c in out] + [i for i, c in enumerate(s) if c not in out]
        t = t.permute(*order)
        s = "".join(s[i] for i in order)
    for i in range(1, len(items)):
        later = out + "".join(x[1] for x in items[i:])
        t, s = _einsum_sum_out(t, s, later)
        u, su = _einsum_sum_out(*items[i], out + s + "".join(x[1] for x in items[i + 1:]))
        t, s = _einsum_pair(t, s, u, su, out + "".join(x[1] for x in items[i + 1:]))
    t, s = _einsum_sum_out(t, s, out)
    if s != out:
        t = t.permute(*[s.index(c) for c in out])
    return t


# ==========================================================================
# LU with partial pivoting (pivots 1-based, as LAPACK and PyTorch give them)

def _lu_arrays(a: np.ndarray) -> tuple:
    """getrf on a batch: (LU packed, pivots (int32, 1-based row swaps), info)."""
    m, n = a.shape[-2], a.shape[-1]
    lu = np.array(a, dtype=np.float64).reshape(-1, m, n)
    k = builtins.min(m, n)
    piv = np.zeros((lu.shape[0], k), np.int32)
    info = np.zeros(lu.shape[0], np.int32)
    rows = np.arange(lu.shape[0])
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        swap = lu[rows, p].copy()
        lu[rows, p] = lu[:, j]
        lu[:, j] = swap
        pivot = lu[:, j, j]
        zero = pivot == 0
        info[zero & (info == 0)] = j + 1
        safe = np.where(zero, 1.0, pivot)
        lu[:, j + 1:, j] /= safe[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    batch = a.shape[:-2]
    return lu.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _permutation(piv: np.ndarray, m: int, dt: np.dtype) -> np.ndarray:
    """P with A = P L U, from the sequential row swaps."""
    flat = piv.reshape(-1, piv.shape[-1]).astype(np.int64) - 1
    perms = np.tile(np.arange(m), (flat.shape[0], 1))
    for j in range(flat.shape[1]):
        rows = np.arange(flat.shape[0])
        a, b = perms[rows, j].copy(), perms[rows, flat[:, j]].copy()
        perms[rows, j], perms[rows, flat[:, j]] = b, a
    P = np.zeros((flat.shape[0], m, m), dt)
    for i, perm in enumerate(perms):
        P[i, perm, np.arange(m)] = 1
    return P.reshape(piv.shape[:-1] + (m, m))


def _unpack(LU: np.ndarray) -> tuple:
    m, n = LU.shape[-2], LU.shape[-1]
    k = builtins.min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
    U = np.triu(LU[..., :k, :])
    return L, U


def _lu_grad(P: Tensor, L: Tensor, U: Tensor, gL: Any, gU: Any) -> Tensor:
    """dA for A = P L U (square): P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T."""
    if L.shape[-1] != U.shape[-2] or L.shape[-2] != U.shape[-1]:
        raise RuntimeError("the derivative of the LU decomposition is implemented for square "
                           "matrices only")
    phi = 0
    if gL is not None:
        phi = _tri(_mT(L).matmul(gL), -1, lower=True)
    if gU is not None:
        phi = phi + _tri(gU.matmul(_mT(U)), 0, lower=False)
    X = linalg_solve_triangular(_mT(U), phi, upper=False, left=False)
    Y = linalg_solve_triangular(_mT(L), X, upper=True, unitriangular=True)
    return P.matmul(Y)


@multi_formula
def LinalgLuFactorExBackward0(n, grads, LU, piv):
    g = grads[0]
    if g is None:
        return (None,)
    P = wrap(_permutation(piv, LU.shape[-2], LU.data.dtype))
    L = _tri(LU, -1, lower=True) + _eye_like(LU)   # (from the output: higher orders flow)
    U = _tri(LU, 0, lower=False)
    return (_lu_grad(P, L, U, _tri(g, -1, lower=True), _tri(g, 0, lower=False)),)
def _lu_factor(A: Tensor, pivot: bool, what: str, extra: int) -> tuple:
    _matrix_check(A, what)
    if not pivot:
        raise RuntimeError(f"{what}: LU without pivoting is not implemented on the CPU "
                           "(PyTorch supports it only on CUDA); use pivot = TRUE")
    lu, piv, info = _lu_arrays(A.data)
    dt = A.data.dtype
    outs = [lu.astype(dt), piv, info][:2 + extra]
    return record_many(outs, LinalgLuFactorExBackward0, (A,), (Output(0), piv),
                       differentiable=(True, False, False))


@op(function="linalg_lu_factor", method=False, torch_name="linalg.lu_factor",
    samples=S.lu)
def linalg_lu_factor(A: Tensor, pivot: bool = True) -> tuple:
    """(LU, pivots): L below the diagonal (unit diagonal implied), U on and above."""
    return _lu_factor(A, pivot, "linalg.lu_factor", 0)


@op(function="linalg_lu_factor_ex", method=False, torch_name="linalg.lu_factor_ex",
    samples=S.lu)
def linalg_lu_factor_ex(A: Tensor, pivot: bool = True, check_errors: bool = False) -> tuple:
    """(LU, pivots, info): info > 0 where U has a zero on its diagonal."""
    out = _lu_factor(A, pivot, "linalg.lu_factor_ex", 1)
    if check_errors and np.any(out[2].data):
        raise RuntimeError("linalg.lu_factor_ex: the factorization is singular (a zero "
                           "pivot in U)")
    return out


@op(method=True, samples=S.lu, torchscript=False)
@r_formals("A, pivot = TRUE, get_infos = FALSE, out = NULL")
def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> tuple:
    """R torch's torch_lu: (LU, pivots), with the infos when get_infos; written into
    the tensors of `out` (as many) when given."""
    result = _lu_factor(A, pivot, "lu", 1 if get_infos else 0)
    if out is None:
        return result
    if len(out) != len(result):
        raise ValueError(f"torch_lu: `out` must hold {len(result)} tensors (LU, pivots"
                         f"{', infos' if get_infos else ''}), got {len(out)}")
    for o, r in zip(out, result):
        o.resize_(r.shape).copy_(r.detach())
    return tuple(out)


@multi_formula
def LuUnpackBackward0(n, grads, m, k):
    gP, gL, gU = grads
    parts = []
    if gL is not None:
        parts.append(_tri(gL.narrow(-1, 0, k) if gL.shape[-1] != k else gL, -1, lower=True))
    if gU is not None:
        parts.append(_tri(gU, 0, lower=False))
    if not parts:
        return (None,)
    return (parts[0] if len(parts) == 1 else parts[0] + parts[1],)


@op(samples=S.lu_unpack, method=False)
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> tuple:
    """(P, L, U) from lu's packed result."""
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    dt = LU_data.data.dtype
    L, U = _unpack(LU_data.data)
    P = _permutation(LU_pivots.data, m, dt) if unpack_pivots else np.zeros((0,), dt)
    if not unpack_data:
        L, U = np.zeros((0,), dt), np.zeros((0,), dt)
    return record_many([P, L.astype(dt, copy=False), U.astype(dt, copy=False)],
                       LuUnpackBackward0, (LU_data,), (m, builtins.min(m, n)),
                       differentiable=(False, unpack_data, unpack_data))


@formula
def LinalgLuSolveBackward0(n, g, LU, piv, B, X, left, adjoint):
    P = wrap(_permutation(piv, LU.shape[-2], LU.data.dtype))
    gB = linalg_lu_solve(LU, wrap(piv), g, left=left, adjoint=not adjoint)
    gLU = None
    if n.needs(0):
        # X = op(A)^-1 B with A = P L U: the derivative through A
        gop = -(gB.matmul(_mT(X))) if left else -(_mT(X).matmul(gB))
        gA = _mT(gop) if adjoint else gop
        L = _tri(LU, -1, lower=True) + _eye_like(LU)
        U = _tri(LU, 0, lower=False)
        PtgA = _mT(P).matmul(gA)
        gLU = _tri(PtgA.matmul(_mT(U)), -1, lower=True) + _tri(_mT(L).matmul(PtgA), 0, lower=False)
    return gLU, None, (gB if n.needs(2) else None)


@op(function="linalg_lu_solve", method=False, torch_name="linalg.lu_solve",
    samples=S.lu_solve)
def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, left: bool = True,
                    adjoint: bool = False) -> Tensor:
    """Solve A X = B (or X A = B; A^T with adjoint) given lu_factor's result."""
    L, U = _unpack(LU.data)
    P = _permutation(pivots.data, LU.shape[-2], LU.data.dtype)
    A = P @ L @ U
    if adjoint:
        A = np.swapaxes(A, -1, -2)
    X = _lapack("linalg.lu_solve", _solve_arrays, A, B.data, bool(left), False)
    return record(X.astype(B.data.dtype, copy=False), LinalgLuSolveBackward0, (LU, None, B),
                  (LU, pivots.data, B, OUTPUT, bool(left), bool(adjoint)))


@op(samples=S.lu_solve_old, autocast="fp32")
def lu_solve(self: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """The older argument order: the right-hand side first."""
    return linalg_lu_solve(LU_data, LU_pivots, self)


# ==========================================================================
# Eigen-decomposition of general matrices: complex results

def _mH(x: Tensor) -> Tensor:
    return _conj(_mT(x)) if x.data.dtype.kind == "c" else _mT(x)


@formula
def _ComplexSolveBackward(n, g, A, X):
    gB = _solve_any(_mH(A), g)
    gA = -(gB.matmul(_mH(X))) if n.needs(0) else None
    return gA, (gB if n.needs(1) else None)


def _solve_any(A: Tensor, B: Tensor) -> Tensor:
    """A X = B for real or complex matrices (the derivatives of complex results)."""
    dt = np.result_type(A.data.dtype, B.data.dtype)
    X = np.linalg.solve(A.data.astype(dt, copy=False), B.data.astype(dt, copy=False))
    return record(X, _ComplexSolveBackward, (A, B), (A, OUTPUT),
                  name="LinalgSolveExBackward0")


@multi_formula
def LinalgEigBackward0(n, grads, A, L, V):
    """PyTorch's linalg_eig_backward (written with differentiable ops: any order)."""
    gL, gV = grads
    k = L.shape[-1]
    Vh = _mH(V)
    if gV is not None:
        VhgV = Vh.matmul(gV)
        diag = real_part(_diagonal(VhgV))
        VhgV = VhgV - Vh.matmul(V * to_complex(diag).unsqueeze(-2))
        E = _conj(L.unsqueeze(-2) - L.unsqueeze(-1)) + wrap(np.eye(k, dtype=L.data.dtype))
        off = wrap(1 - np.eye(k, dtype=real_dtype_of(L.data.dtype)))
        gA = (VhgV / E) * to_complex(off)
        if gL is not None:
            gA = gA + _diag_embed(gL)
    else:
        gA = _diag_embed(gL)
    gA = _solve_any(Vh, gA.matmul(Vh))
    return (real_part(gA) if A.data.dtype.kind == "f" else gA,)


def _complex_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if dt == np.float64 or dt == np.complex128 else np.complex64)


# (eigenvectors are defined up to a phase: a random upstream gradient makes the
# loss ill-defined, and PyTorch refuses it; the derivative is checked with
# phase-invariant losses in tests/test_linalg_ops.py)
@op(function="linalg_eig", method=False, torch_name="linalg.eig", samples=S.eig,
    differentiable=False, autocast="fp32")
def linalg_eig(A: Tensor) -> tuple:
    """(eigenvalues, eigenvectors), complex (eigenvectors of unit norm, as LAPACK's geev)."""
    if A.data.dtype.kind not in "fc":
        _float_check(A, "linalg.eig")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.eig: A must be batches of square matrices, got shape "
                           f"{shape_str(A.shape)}")
    w, v = _lapack("linalg.eig", np.linalg.eig, A.data)
    ct = _complex_dtype(A.data.dtype)
    return record_many([w.astype(ct), v.astype(ct)], LinalgEigBackward0, (A,),
                        (A, Output(0), Output(1)))


@op(function="linalg_eigvals", method=False, torch_name="linalg.eigvals", samples=S.eig, autocast="fp32")
def linalg_eigvals(A: Tensor) -> Tensor:
    if not needs_grad(A):
        if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
            raise RuntimeError(f"linalg.eigvals: A must be batches of square matrices, got "
                               f"shape {shape_str(A.shape)}")
        if A.data.dtype.kind not in "fc":
            _float_check(A, "linalg.eigvals")
        return wrap(_lapack("linalg.eigvals", np.linalg.eigvals, A.data)
                    .astype(_complex_dtype(A.data.dtype)))
    return linalg_eig(A)[0]


# --------------------------------------------------------------------------
# Internal kernels R torch exposes (torch__cholesky_solve_helper,
# torch__cdist_backward). PyTorch gives them no derivative: their results
# carry a node that refuses to be differentiated, as PyTorch's do.


@formula
def NoDerivative(n, g, message):
    # the node of a kernel PyTorch gives no derivative, under PyTorch's name for it
    raise RuntimeError(message)


_CHOLESKY_SOLVE_HELPER = (
    "derivative for aten::_cholesky_solve_helper is not implemented (a kernel without a "
    "derivative, as in PyTorch); use torch_cholesky_solve(), which has one")


@op(method=False, samples=S.cholesky_solve_helper, differentiable=False,
    torch_name="ops.aten._cholesky_solve_helper")
def _cholesky_solve_helper(self: Tensor, A: Tensor, upper: bool) -> Tensor:
    """cholesky_solve's kernel: solve A A^H X = self (upper: A^H A X = self)
    for A a Cholesky factor, batch dims already matching."""
    if self.ndim < 2 or A.ndim < 2 or A.shape[-1] != A.shape[-2] or \
            A.shape[-1] != self.shape[-2]:
        raise RuntimeError(f"_cholesky_solve_helper: A must be square matrices of the size of "
                           f"self's rows, got self {list(self.shape)} and A {list(A.shape)}")
    U = A.data if upper else np.conj(np.swapaxes(A.data, -1, -2))
    Y = _tri_solve(np.conj(np.swapaxes(U, -1, -2)), self.data, False, True, False)
    X = _tri_solve(U, Y, True, True, False)
    X = np.ascontiguousarray(X, dtype=np.result_type(self.data, A.data))
    return record(X, NoDerivative, (self, A), (_CHOLESKY_SOLVE_HELPER,), name="NotImplemented")


_CDIST_BACKWARD = (
    "the derivative for '_cdist_backward' is not implemented (a gradient kernel, with no "
    "derivative of its own, as in PyTorch); to differentiate cdist twice, use p = 2 with "
    "compute_mode = 'use_mm_for_euclid_dist', or differentiable ops")


@op(method=False, samples=S.cdist_backward, differentiable=False,
    torch_name="ops.aten._cdist_backward")
def _cdist_backward(grad: Tensor, x1: Tensor, x2: Tensor, p: float, cdist: Tensor) -> Tensor:
    """The gradient of cdist(x1, x2, p) (= `cdist`) with respect to x1, for the
    output gradient `grad`: each pair's share of the p-norm's derivative."""
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"_cdist_backward: x1 and x2 must be matrices (batches of rows) "
                           f"with as many columns, got {list(x1.shape)} and {list(x2.shape)}")
    want = tuple(cdist.shape)
    if tuple(grad.shape) != want or want[-2:] != (x1.shape[-2], x2.shape[-2]):
        raise RuntimeError(f"_cdist_backward: grad and cdist must be of size [..., "
                           f"{x1.shape[-2]}, {x2.shape[-2]}], got {list(grad.shape)} and "
                           f"{list(want)}")
    p = float(p)
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    diff = x1.data[..., :, None, :] - x2.data[..., None, :, :]      # (..., r1, r2, m)
    dist = cdist.data[..., None]
    each = pnorm_distance_grad(diff, dist, grad.data[..., None], p)
    out = np.ascontiguousarray(each.sum(axis=-2), dtype=x1.data.dtype)
    return record(out, NoDerivative, (grad, x1, x2, cdist), (_CDIST_BACKWARD,),
                  name="CdistBackwardBackward0")


# --------------------------------------------------------------------------
# cdist: the p-norm distance between each row of x1 and each row of x2 (over
# broadcast batch dims). As PyTorch: directly (CdistBackward0, whose gradients
# are _cdist_backward's), or, for p = 2 with more than 25 rows (or when asked),
# through a matrix product (|a|^2 - 2 a.b + |b|^2: EuclideanDistBackward0,
# then a view).

_CDIST_MODES = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0,
                "use_mm_for_euclid_dist": 1, "donot_use_mm_for_euclid_dist": 2}


@formula
def CdistBackward0(n, g, x1, x2, p, result):
    return (_cdist_backward(g, x1, x2, p, result) if n.needs(0) else None,
            _cdist_backward(_mT(g), x2, x1, p, _mT(result)) if n.needs(1) else None)


def _cdist_forward(x1: Tensor, x2: Tensor, p: float) -> Tensor:
    diff = np.abs(x1.data[..., :, None, :] - x2.data[..., None, :, :])
    if p == 0:
        out = (diff != 0).sum(axis=-1)
    elif p == 1:
        out = diff.sum(axis=-1)
    elif p == 2:
        out = np.sqrt((diff * diff).sum(axis=-1))
    elif np.isinf(p):
        out = diff.max(axis=-1, initial=0)
    else:
        out = (diff ** p).sum(axis=-1) ** (1 / p)
    out = np.ascontiguousarray(out, dtype=np.result_type(x1.data, x2.data))
    return record(out, CdistBackward0, (x1, x2), (x1, x2, p, OUTPUT))


@formula
def EuclideanDistBackward0(n, g, x1, x2, result):
    zero = result == 0                       # (a subgradient of 0 where the distance is 0)
    ratio = (g / where(zero, 1, result)).masked_fill(zero, 0)
    return (x1 * ratio.sum(dim=-1, keepdim=True) - ratio.matmul(x2) if n.needs(0) else None,
            x2 * ratio.sum(dim=-2).unsqueeze(-1) - _mT(ratio).matmul(x1)
            if n.needs(1) else None)


def _euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    a, b = x1.data, x2.data
    n1, n2 = (a * a).sum(-1, keepdims=True), (b * b).sum(-1, keepdims=True)
    a_ = np.concatenate([a * -2, n1, np.ones_like(n1)], axis=-1)
    b_ = np.concatenate([b, np.ones_like(n2), n2], axis=-1)
    out = np.sqrt(np.maximum(a_ @ np.swapaxes(b_, -1, -2), 0))
    return record(out, EuclideanDistBackward0, (x1, x2), (x1, x2, OUTPUT))


@op(method=False, samples=S.cdist, second_order=False, autocast="fp32")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: Any = None) -> Tensor:
    """Distances (..., r1, r2) between the rows of x1 (..., r1, m) and x2 (..., r2, m)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 "
                           f"got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for x in (x1, x2):
        if x.data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{1 if x is x1 else 2} "
                               f"got: {x.dtype}")
    p = float(p)
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    mode = compute_mode if isinstance(compute_mode, str) or compute_mode is None else \
        whole(compute_mode, "compute_mode")
    if mode not in _CDIST_MODES and mode not in (0, 1, 2):
        raise ValueError(f"{compute_mode!r} is not a valid value for compute_mode (give "
                         f"'use_mm_for_euclid_dist_if_necessary', 'use_mm_for_euclid_dist' or "
                         f"'donot_use_mm_for_euclid_dist')")
    mode = _CDIST_MODES.get(mode, mode)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if x1.numel() and x2.numel() and p == 2 and (mode == 1 or (mode == 0 and
                                                                 (r1 > 25 or r2 > 25))):
        batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
        e1 = x1.expand(*batch, r1, x1.shape[-1]).reshape(-1, r1, x1.shape[-1])
        e2 = x2.expand(*batch, r2, x2.shape[-1]).reshape(-1, r2, x2.shape[-1])
        return _euclidean_dist(e1, e2).view(*batch, r1, r2)
    return _cdist_forward(x1, x2, p)
