"""Sample inputs of the linalg ops (see the package docstring).

Matrices are random in [-2, 2): square ones are then (almost surely) invertible
and well conditioned enough for float32. Positive-definite inputs (cholesky)
are not expressible with `T` beyond 1x1 blocks: tests/test_linalg_ops.py
covers larger ones. Eigenvector and singular-vector signs are LAPACK's
choice, so only samples where NumPy's and PyTorch's LAPACK agree are
listed for svd/eigh (tests/test_linalg_ops.py checks the rest sign-free).
"""
from __future__ import annotations

from . import T, sample  # noqa: F401


def mm() -> list:
    return [sample(T((2, 3)), T((3, 4))), sample(T((0, 3)), T((3, 2))),
            sample(T((2, 3), dtype="int64"), T((3, 2), dtype="int64")),
            sample(T((3, 4), requires_grad=False), T((4, 2)))]


def matmul() -> list:
    return [sample(T((2, 3)), T((3, 4))), sample(T((3,)), T((3,))), sample(T((2, 3)), T((3,))),
            sample(T((3,)), T((3, 2))), sample(T((2, 3, 4)), T((4, 5))),
            sample(T((2, 1, 3, 4)), T((5, 4, 2))), sample(T((3,)), T((2, 3, 4))),
            sample(T((2, 3, 4)), T((4,))), sample(T((2, 3)), T((4, 3, 2))),
            sample(T((2, 3, 4)), T((2, 4, 5))), sample(T((2, 2, 3, 4)), T((4, 2))),
            sample(T((2, 0, 3)), T((3, 2))),
            sample(T((2, 3), dtype="int64"), T((3,), dtype="int64"))]


def dot() -> list:
    return [sample(T((3,)), T((3,))), sample(T((0,)), T((0,)))]


def bmm() -> list:
    return [sample(T((2, 2, 3)), T((2, 3, 4))), sample(T((0, 2, 3)), T((0, 3, 1)))]


def mv() -> list:
    return [sample(T((2, 3)), T((3,))), sample(T((0, 3)), T((3,)))]


def inner() -> list:
    return [sample(T((3,)), T((3,))), sample(T((2, 3)), T((4, 3)))]


def outer() -> list:
    return [sample(T((3,)), T((2,))), sample(T((0,)), T((2,)))]


def addmm() -> list:
    return [sample(T((2, 4)), T((2, 3)), T((3, 4))),
            sample(T((4,)), T((2, 3)), T((3, 4)), beta=0.5, alpha=2.0),
            sample(T(()), T((2, 3)), T((3, 4)), alpha=-1.0)]


def addmv() -> list:
    return [sample(T((2,)), T((2, 3)), T((3,))),
            sample(T(()), T((2, 3)), T((3,)), beta=2.0, alpha=0.5)]


def addr() -> list:
    return [sample(T((3, 2)), T((3,)), T((2,))),
            sample(T((2,)), T((3,)), T((2,)), beta=0.5, alpha=-2.0)]


def baddbmm() -> list:
    return [sample(T((2, 2, 4)), T((2, 2, 3)), T((2, 3, 4))),
            sample(T((2, 4)), T((2, 2, 3)), T((2, 3, 4)), beta=0.5, alpha=2.0)]


def addbmm() -> list:
    return [sample(T((2, 4)), T((3, 2, 5)), T((3, 5, 4))),
            sample(T((4,)), T((3, 2, 5)), T((3, 5, 4)), beta=2.0, alpha=0.5)]


def trace() -> list:
    return [sample(T((3, 3))), sample(T((2, 4))), sample(T((3, 2)))]


def tensordot() -> list:
    return [sample(T((2, 3, 4)), T((3, 4, 5))), sample(T((2, 3)), T((3, 4)), 1),
            sample(T((2, 3)), T((4, 5)), 0)]


def kron() -> list:
    return [sample(T((2, 3)), T((2, 2))), sample(T((3,)), T((2, 2))),
            sample(T((2, 1, 2)), T((2,)))]


def cross() -> list:
    return [sample(T((3,)), T((3,))), sample(T((2, 3)), T((2, 3)), dim=1),
            sample(T((3, 2)), T((3, 1)), dim=0)]


def multi_dot() -> list:
    return [sample([T((2, 3)), T((3, 4)), T((4, 2))]), sample([T((3,)), T((3, 2))]),
            sample([T((3,)), T((3, 4)), T((4,))])]


def chain_matmul() -> list:
    return [sample(T((2, 3)), T((3, 4)), T((4, 2))), sample(T((2, 3)), T((3, 2)))]


def square() -> list:
    return [sample(T((3, 3))), sample(T((2, 2, 2))), sample(T((1, 1), away_from_zero=True))]


def solve() -> list:
    return [sample(T((3, 3)), T((3, 2))), sample(T((3, 3)), T((3,))),
            sample(T((2, 3, 3)), T((3, 1))), sample(T((2, 2, 2)), T((2, 2))),
            sample(T((3, 3)), T((2, 3)), left=False)]


def solve_triangular() -> list:
    return [sample(T((3, 3), away_from_zero=True), T((3, 2)), upper=True),
            sample(T((3, 3), away_from_zero=True), T((3, 2)), upper=False),
            sample(T((2, 3, 3), away_from_zero=True), T((2, 3)), upper=True, left=False),
            sample(T((3, 3)), T((3, 2)), upper=False, unitriangular=True)]


def triangular_solve() -> list:
    return [sample(T((3, 2)), T((3, 3), away_from_zero=True)),
            sample(T((3, 2)), T((3, 3), away_from_zero=True), upper=False),
            sample(T((3, 2)), T((3, 3), away_from_zero=True), transpose=True)]


def spd() -> list:
    return [sample(T((1, 1), low=0.5, high=2.0)), sample(T((3, 1, 1), low=0.5, high=2.0)),
            sample(T((1, 1), low=0.5, high=2.0), upper=True)]


def cholesky_solve() -> list:
    return [sample(T((1, 2)), T((1, 1), low=0.5, high=2.0)),
            sample(T((1, 2)), T((1, 1), low=0.5, high=2.0), upper=True)]


def cholesky_factor() -> list:
    return [sample(T((1, 1), low=0.5, high=2.0)), sample(T((1, 1), low=0.5, high=2.0), upper=True)]


def qr() -> list:
    return [sample(T((3, 3))), sample(T((4, 3))), sample(T((2, 3, 2)))]


def svd() -> list:
    return [sample(T((3, 3)))]


def symmetric() -> list:
    # (1x1 only: eigh's derivative is PyTorch's symmetric one, which finite differences
    # on a non-symmetric input do not give; tests/test_linalg_ops.py checks larger ones)
    # (UPLO = "U" and other string arguments: tests/test_linalg_ops.py, until the R
    # calls of the generated tests pass strings)
    return [sample(T((1, 1))), sample(T((2, 1, 1)))]


def vector_norm() -> list:
    return [sample(T((2, 3))), sample(T((2, 3)), 1), sample(T((2, 3)), 3.0, dim=1),
            sample(T((2, 3), distinct=True), float("inf"), dim=0, keepdim=True),
            sample(T((2, 3), distinct=True), float("-inf")), sample(T((2, 3)), 0),
            sample(T((2, 3, 2)), 2, dim=(0, 2)), sample(T(())), sample(T((0, 3)), dim=1)]


def matrix_norm() -> list:
    return [sample(T((3, 3))), sample(T((2, 3, 4)), keepdim=True),
            sample(T((3, 3), distinct=True), 1), sample(T((3, 4), distinct=True), float("-inf")),
            sample(T((2, 3), distinct=True), -1, dim=(1, 0)),
            sample(T((3, 3)), 2), sample(T((4, 3)), -2)]


def linalg_norm() -> list:
    return [sample(T((2, 3))), sample(T((4,)), 3.0),
            sample(T((2, 3)), dim=1), sample(T((2, 3, 2)), dim=(0, 1)),
            sample(T((3, 3), distinct=True), float("inf")), sample(T((2, 3)), 1, dim=0)]


def logdet() -> list:
    return [sample(T((1, 1), low=0.5, high=2.0)), sample(T((2, 1, 1), low=0.5, high=2.0)),
            sample(T((3, 3)))]


def cond() -> list:
    # (PyTorch 2.13's own backward of cond(A, "fro") and other inverse-based orders fails
    # with an in-place error: tests/test_linalg_ops.py checks those by finite differences)
    return [sample(T((3, 3))), sample(T((2, 3, 3)), 2), sample(T((3, 3)), -2)]


def pinv() -> list:
    return [sample(T((3, 3))), sample(T((2, 4))), sample(T((4, 2))), sample(T((2, 3, 2)))]


def matrix_rank() -> list:
    return [sample(T((3, 3))), sample(T((2, 4, 3))), sample(T((3, 3)), hermitian=True),
            sample(T((3, 3)), atol=1.0)]


def lstsq() -> list:
    return [sample(T((4, 3)), T((4, 2))), sample(T((1, 3, 3)), T((2, 3, 3))),
            sample(T((3, 3)), T((3,)))]


def matrix_exp() -> list:
    return [sample(T((3, 3))), sample(T((2, 2, 2))), sample(T((1, 1)))]


def matrix_power() -> list:
    return [sample(T((3, 3)), 2), sample(T((3, 3)), 3), sample(T((2, 2, 2)), 1),
            sample(T((3, 3)), -1), sample(T((3, 3)), 0)]


def tensorinv() -> list:
    return [sample(T((2, 3, 6))), sample(T((3, 3)), ind=1)]


def tensorsolve() -> list:
    return [sample(T((2, 3, 6)), T((2, 3))), sample(T((6, 2, 3)), T((2, 3)), dims=(0,))]


def geqrf() -> list:
    return [sample(T((3, 3))), sample(T((4, 3)))]


def householder() -> list:
    return [sample(T((3, 3)), T((2,))), sample(T((4, 3)), T((3,)))]


def ormqr() -> list:
    """Reflectors and taus (random: any values define a Q), from either side, Q or
    its transpose, a batch."""
    return [sample(T((4, 3)), T((3,)), T((4, 2))),
            sample(T((4, 3)), T((3,)), T((4, 2)), transpose=True),
            sample(T((3, 2)), T((2,)), T((2, 3)), False, note="from the right"),
            sample(T((3, 3)), T((3,)), T((5, 3)), False, True, note="right, transposed"),
            sample(T((2, 4, 3)), T((2, 3)), T((2, 4, 2)), note="batch")]


def einsum() -> list:
    return [sample("ij,jk->ik", T((2, 3)), T((3, 4))), sample("ij->ji", T((2, 3))),
            sample("ij->", T((2, 3))), sample("ii->i", T((3, 3))), sample("i,j->ij", T((3,)), T((2,))),
            sample("bij,bjk->bik", T((2, 2, 3)), T((2, 3, 4))), sample("ij,ij->i", T((2, 3)), T((2, 3))),
            sample("...ij,...jk", T((2, 2, 3)), T((3, 4))), sample("ij,jk,kl->il", T((2, 3)), T((3, 4)), T((4, 2))),
            sample("ijk->kj", T((2, 3, 4))), sample("i,i->", T((3,)), T((3,)))]


def lu() -> list:
    return [sample(T((3, 3))), sample(T((2, 3, 3)))]


def lu_unpack() -> list:
    # (LU made by the op under test's own factorization would need two steps:
    # a packed matrix of random values and valid row swaps stand in for it)
    # (P is a constant output, which rtorch_py's gradcheck can't differentiate yet:
    # tests/test_linalg_ops.py compares P with PyTorch's)
    return [sample(T((3, 3)), T((3,), dtype="int32", low=1, high=4), unpack_pivots=False),
            sample(T((2, 3, 3)), T((2, 3), dtype="int32", low=1, high=4), unpack_pivots=False)]


def lu_solve() -> list:
    return [sample(T((3, 3)), T((3,), dtype="int32", low=1, high=4), T((3, 2))),
            sample(T((3, 3)), T((3,), dtype="int32", low=1, high=4), T((2, 3)), left=False),
            sample(T((3, 3)), T((3,), dtype="int32", low=1, high=4), T((3, 2)), adjoint=True)]


def lu_solve_old() -> list:
    return [sample(T((3, 2)), T((3, 3)), T((3,), dtype="int32", low=1, high=4))]


def eig() -> list:
    # 1x1 blocks: eigenvectors are defined up to a phase, which LAPACK builds
    # choose differently for larger ones (tests/test_linalg_ops.py has those)
    return [sample(T((1, 1))), sample(T((3, 1, 1)))]


def cholesky_solve_helper() -> list:
    """A factor's other triangle is ignored; batches already matching."""
    return [sample(T((3, 2)), T((3, 3), low=0.5, high=2.0), False),
            sample(T((2, 3, 1)), T((2, 3, 3), low=0.5, high=2.0), True)]


def cdist_backward() -> list:
    """Every kind of p; `cdist` is any positive tensor of the pairs' shape."""
    def one(p, note=""):
        return sample(T((3, 4)), T((3, 2)), T((4, 2)), p, T((3, 4), low=0.5, high=2.0),
                      note=note)
    return [one(1.0), one(2.0), one(0.5, "p < 1"), one(1.5, "1 < p < 2"), one(3.0),
            one(float("inf"), "max norm"), one(0.0, "p = 0"),
            sample(T((2, 3, 2)), T((2, 3, 2)), T((2, 2, 2)), 2.0, T((2, 3, 2), low=0.5),
                   note="batched")]


def cdist() -> list:
    """Each kind of p, batch dims broadcast, and the matrix-product form (p = 2
    with more than 25 rows, or asked for)."""
    return [sample(T((3, 2)), T((4, 2))), sample(T((3, 2)), T((4, 2)), 1.0),
            sample(T((3, 2)), T((4, 2)), 0.5, note="p < 1"),
            sample(T((3, 2)), T((4, 2)), 3.0), sample(T((3, 2)), T((4, 2)), float("inf")),
            sample(T((3, 2)), T((4, 2)), 0.0, note="p = 0"),
            sample(T((2, 1, 3, 2)), T((3, 4, 2)), note="batch dims broadcast"),
            sample(T((27, 2)), T((3, 2)), note="matrix product"),
            sample(T((2, 3, 2)), T((1, 4, 2)), 2.0, "use_mm_for_euclid_dist",
                   note="matrix product asked for"),
            sample(T((27, 2)), T((3, 2)), 2.0, "donot_use_mm_for_euclid_dist")]


def cov() -> list:
    fw, aw = T((4,), dtype="int64", low=1, high=3), T((4,), low=0.5, high=1.0)
    return [sample(T((3, 5))), sample(T((5,))), sample(T((2, 4)), correction=0),
            sample(T((2, 4)), correction=2), sample(T((3, 4)), fweights=fw),
            sample(T((3, 4)), aweights=aw), sample(T((3, 4)), fweights=fw, aweights=aw),
            sample(T((3, 4)), correction=0, fweights=fw, aweights=aw)]


def corrcoef() -> list:
    return [sample(T((3, 5))), sample(T((5,))), sample(T((2, 4)))]
