"""Linear algebra cases the generated tests (rtorch_py/ops/samples/linalg.py) can't
express: positive-definite and symmetric inputs (built inside the function so
finite differences see the same structure PyTorch's derivative assumes),
sign-free comparisons of eigen- and singular vectors (LAPACK picks their signs),
string arguments, errors, and calls from R.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import check_vs_torch, gradcheck, needs_r, rand, run_r

FLOATS = [np.float32, np.float64]


def _spd(T, x):
    """A symmetric positive-definite matrix (batch) from any square x."""
    return x.matmul(x.transpose(-2, -1)) + T.eye(x.shape[-1], dtype=x.dtype) * 0.5


def _linalg(T, name):
    return getattr(T.linalg, name) if T is torch else getattr(rt, "linalg_" + name)


# --------------------------------------------------------------------------
# Cholesky on positive-definite matrices


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_vs_torch(shape, upper, dtype):
    x = rand(*shape, dtype=dtype)
    check_vs_torch(lambda T, x: _linalg(T, "cholesky")(_spd(T, x), upper=upper), x,
                   second_order=dtype == np.float64)
    check_vs_torch(lambda T, x: T.cholesky(_spd(T, x), upper=upper), x)


def test_cholesky_gradcheck_and_old_forms():
    x, b = rand(3, 3), rand(3, 2)
    assert gradcheck(lambda T, x: _linalg(T, "cholesky")(_spd(T, x)), x)
    # cholesky_solve / cholesky_inverse take the factor
    check_vs_torch(lambda T, x, b: T.cholesky_solve(b, _linalg(T, "cholesky")(_spd(T, x))),
                   x, b, second_order=True)
    check_vs_torch(lambda T, x, b: T.cholesky_solve(
        b, _linalg(T, "cholesky")(_spd(T, x)).transpose(-2, -1), upper=True), x, b)
    check_vs_torch(lambda T, x: T.cholesky_inverse(_linalg(T, "cholesky")(_spd(T, x))), x,
                   second_order=True)
    assert gradcheck(lambda T, x, b: T.cholesky_solve(
        b, _linalg(T, "cholesky")(_spd(T, x))), x, b)


def test_cholesky_errors_and_ex():
    bad = rt.torch_tensor(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match="not positive-definite"):
        rt.linalg_cholesky(bad)
    L, info = rt.linalg_cholesky_ex(bad)
    assert int(info.item()) > 0
    L, info = rt.linalg_cholesky_ex(rt.torch_eye(3))
    assert int(info.item()) == 0
    np.testing.assert_array_equal(L.data, np.eye(3, dtype=np.float32))
    with pytest.raises(RuntimeError, match="not positive-definite"):
        rt.linalg_cholesky_ex(bad, check_errors=True)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_ex_of_a_matrix_not_positive_definite_is_lapacks(upper, dtype):
    # info names the column where the factorization stopped; L holds the columns
    # before it, that column's pivot, the rest as they were: as PyTorch's
    # (a batch mixing factored and stopped matrices, and a negative first pivot)
    mats = np.array([[[4, 0, 0, 0], [2, 5, 0, 0], [2, 3, 1, 0], [1, 1, 1, 1]],
                     [[4, 0, 0, 0], [2, 1, 0, 0], [2, 3, 5, 0], [1, 1, 1, 1]],
                     [[-1.3, 7, 0, 0], [0.15, 1.9, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
                     np.eye(4) * 2], dtype=dtype)
    if upper:
        mats = np.ascontiguousarray(np.swapaxes(mats, -1, -2))
    L, info = rt.linalg_cholesky_ex(rt.torch_tensor(mats), upper=upper)
    want_L, want_info = torch.linalg.cholesky_ex(torch.from_numpy(mats), upper=upper)
    np.testing.assert_array_equal(info.data, want_info.numpy())
    np.testing.assert_allclose(L.data, want_L.numpy(), rtol=1e-6)
    assert L.dtype == rt.torch_tensor(mats).dtype


# --------------------------------------------------------------------------
# eigh and svd: vectors compared without their signs


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_vs_torch(shape, uplo, dtype):
    x = rand(*shape, dtype=dtype)

    def fn(T, x):
        A = x + x.transpose(-2, -1)   # symmetric: the derivative PyTorch gives is this one's
        L, V = _linalg(T, "eigh")(A, UPLO=uplo)
        return L, V * V, _linalg(T, "eigvalsh")(A, UPLO=uplo)
    check_vs_torch(fn, x, second_order=dtype == np.float64)
    if dtype == np.float64:
        assert gradcheck(fn, x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 5), (2, 4, 3)])
def test_svd_vs_torch(shape, dtype):
    x = rand(*shape, dtype=dtype)

    def fn(T, x):
        U, S, Vh = _linalg(T, "svd")(x, full_matrices=False)
        # (u_i, v_i) is defined up to a common sign: products of the two are not
        return S, U * U, Vh * Vh, U[..., :, :1] * Vh[..., :1, :]
    check_vs_torch(fn, x, second_order=dtype == np.float64)
    if dtype == np.float64:
        assert gradcheck(fn, x)
        assert gradcheck(lambda T, x: _linalg(T, "svdvals")(x), x)


def test_svd_full_matrices_and_old_svd():
    x = rand(4, 3)
    U, S, Vh = rt.linalg_svd(rt.torch_tensor(x))
    assert U.shape == (4, 4) and S.shape == (3,) and Vh.shape == (3, 3)
    rebuilt = U.data[:, :3] * S.data @ Vh.data
    np.testing.assert_allclose(rebuilt, x, atol=1e-12)
    # torch_svd returns V, not V^T
    U2, S2, V2 = rt.torch_svd(rt.torch_tensor(x))
    np.testing.assert_allclose(V2.data, Vh.data.T, atol=1e-12)
    assert gradcheck(lambda T, x: T.svd(x)[1], x)


# --------------------------------------------------------------------------
# String arguments and the orders PyTorch's own backward can't check


@pytest.mark.parametrize("dtype", FLOATS)
def test_norm_orders_vs_torch(dtype):
    a = rand(3, 3, dtype=dtype)
    for ord in ["fro", "nuc"]:
        check_vs_torch(lambda T, a: _linalg(T, "matrix_norm")(a, ord), a)
        check_vs_torch(lambda T, a: _linalg(T, "norm")(a, ord), a)
    check_vs_torch(lambda T, a: _linalg(T, "matrix_norm")(a, "nuc", keepdim=True), a)
    assert gradcheck(lambda T, a: _linalg(T, "matrix_norm")(a, "nuc"), a)


def test_cond_orders():
    a = rand(3, 3)
    for p in ["fro", "nuc", 1, -1, float("inf"), float("-inf")]:
        got = rt.linalg_cond(rt.torch_tensor(a), p).item()
        assert got == pytest.approx(torch.linalg.cond(torch.from_numpy(a), p).item(), rel=1e-10)
        # (PyTorch 2.13 fails in its own backward for these: finite differences instead)
        assert gradcheck(lambda T, a: _linalg(T, "cond")(a, p), a)


@pytest.mark.parametrize("a", [np.ones((2, 2)), [[1.0, 2.0], [2.0, 4.0]],
                               [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]])
def test_cond_of_singular_matrices(a):
    """PyTorch's answer at a singular matrix. Orders fro, 1, -1, inf, -inf go through
    the inverse: where LU meets an exact zero pivot, inf. Orders 2, -2 and nuc divide by
    the smallest singular value as LAPACK rounds it, 0 or about eps times the largest
    (PyTorch 2.13 gives 5.96e16 for ones(2, 2) with MKL, so does NumPy 2.4's OpenBLAS):
    what both libraries promise there is an answer beyond 1/eps (below eps at -2)."""
    a = np.asarray(a)
    big = 1 / (16 * np.finfo(np.float64).eps)
    for cond in (lambda p: rt.linalg_cond(rt.torch_tensor(a), p).item(),
                 lambda p: torch.linalg.cond(torch.from_numpy(a), p).item()):
        for p in ["fro", 1, -1, float("inf"), float("-inf")]:
            assert np.isinf(cond(p)), p
        for p in [None, 2, "nuc"]:
            assert cond(p) >= big, p
        assert cond(-2) <= 1 / big


@pytest.mark.parametrize("a", [np.ones((2, 2)), [[1.0, 2.0], [2.0, 4.0]],
                               np.arange(1.0, 10.0).reshape(3, 3), [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]])
def test_float32_cond_of_singular_matrices_is_at_float32_scale(a):
    """libtorch takes float32 singular values from single-precision LAPACK, so
    the one zero singular value of these float32 matrices comes out 0 or about
    float eps times the largest: cond inf or about 1e8 (PyTorch 2.13 with MKL:
    inf or 5e7-1e8; with OpenBLAS, as here, 1.48e8 for ones(2, 2)), never
    double's 1e16. (A second zero one, ones(3, 3)'s, can come out anywhere
    below that.)"""
    a = np.asarray(a, np.float32)
    for cond in (lambda p: rt.linalg_cond(rt.torch_tensor(a), p).item(),
                 lambda p: torch.linalg.cond(torch.from_numpy(a), p).item()):
        for p in [None, 2] + (["nuc"] if a.shape[0] == a.shape[1] else []):
            assert np.isinf(cond(p)) or 1e6 <= cond(p) <= 1e10, p
        assert cond(-2) == 0 or 1e-10 <= cond(-2) <= 1e-6


@pytest.mark.parametrize("a", [[[1.0, 1.0], [1.0, 1.000001]], [[1.0, 0.0], [0.0, 1e-7]],
                               1 / (np.arange(5)[:, None] + np.arange(5) + 1.0)])
def test_float32_cond_of_ill_conditioned_matrices_as_pytorch(a):
    """Near-singular float32 matrices: within float32's rounding of PyTorch's (a
    condition number of 4e6 is known to about 4e6 * eps, 10%)."""
    a = np.asarray(a, np.float32)
    for p in [None, -2, "nuc"]:
        got = rt.linalg_cond(rt.torch_tensor(a), p).item()
        assert got == pytest.approx(torch.linalg.cond(torch.from_numpy(a), p).item(), rel=0.1)


def test_float32_cond_gradient_through_single_precision_values():
    a = rand(3, 3, dtype=np.float32)
    check_vs_torch(lambda T, a: _linalg(T, "cond")(a), a, check_names=False)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes(mode):
    x = rand(4, 3)
    Q, R = rt.linalg_qr(rt.torch_tensor(x), mode=mode)
    tQ, tR = torch.linalg.qr(torch.from_numpy(x), mode=mode)
    np.testing.assert_allclose(R.data, tR.numpy(), atol=1e-12)
    np.testing.assert_allclose(Q.data, tQ.numpy(), atol=1e-12)
    if mode == "r":
        with pytest.raises(RuntimeError, match="mode='reduced'"):
            t = rt.torch_tensor(x, requires_grad=True)
            rt.linalg_qr(t, mode="r")[1].sum().backward()


def test_householder_product_is_qr():
    x = rt.torch_tensor(rand(5, 3))
    h, tau = rt.torch_geqrf(x)
    np.testing.assert_array_equal(rt.linalg_householder_product(h, tau).data,
                                  rt.linalg_qr(x)[0].data)


def test_tensordot_dim_lists():
    a, b = rand(2, 3, 4), rand(4, 3, 2)
    check_vs_torch(lambda T, a, b: T.tensordot(a, b, dims=([1, 2], [1, 0])), a, b,
                   check_names=False)


# --------------------------------------------------------------------------
# Errors: what was wrong, and how to fix it


def test_errors():
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        rt.linalg_det(rt.torch_ones(2, 3))
    with pytest.raises(RuntimeError, match="singular"):
        rt.linalg_inv(rt.torch_ones(2, 2))
    with pytest.raises(RuntimeError, match="same dtype"):
        rt.linalg_solve(rt.torch_eye(2), rt.torch_ones(2, dtype=rt.torch_float64()))
    with pytest.raises(RuntimeError, match="floating point"):
        rt.linalg_det(rt.torch_tensor(np.eye(2, dtype=np.int64)))
    with pytest.raises(RuntimeError, match="ord must be a number"):
        rt.linalg_vector_norm(rt.torch_ones(3), "fro")
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        rt.torch_tensordot(rt.torch_ones(2, 3), rt.torch_ones(2, 3), 1)
    with pytest.raises(RuntimeError, match="UPLO"):
        rt.linalg_eigh(rt.torch_eye(2), UPLO="X")
    with pytest.raises(RuntimeError, match="must have length 3"):
        rt.linalg_cross(rt.torch_ones(2), rt.torch_ones(2))
    _, info = rt.linalg_inv_ex(rt.torch_ones(2, 2))
    assert int(info.item()) > 0


def test_deprecated_arguments_warn_every_time():
    a = rt.torch_eye(3)
    for _ in range(2):
        with pytest.warns(DeprecationWarning, match="atol"):
            assert rt.linalg_matrix_rank(a, tol=0.1).item() == 3
        with pytest.warns(DeprecationWarning, match="rtol"):
            rt.linalg_pinv(a, rcond=1e-15)


# --------------------------------------------------------------------------
# From R: 1-based dims, R torch's argument names, strings


@needs_r
def test_linalg_from_r():
    script = r'''
library(torch)
a <- torch_arange(0, 8, dtype = torch_float()) - 4
b <- a$reshape(c(3, 3))
stopifnot(isTRUE(all.equal(as_array(linalg_norm(b, "fro")), as_array(linalg_norm(a)))))
stopifnot(as_array(linalg_norm(b, Inf)) == 9, as_array(linalg_norm(b, -1)) == 6)
stopifnot(linalg_norm(b, dim = 2)$numel() == 3)
stopifnot(as_array(linalg_matrix_norm(b, ord = -1)) == 6)
e <- linalg_eigh(b + b$t(), UPLO = "U")
stopifnot(length(e) == 2, all(e[[1]]$shape == 3))
qr <- linalg_qr(torch_tensor(rbind(c(12, -51, 4), c(6, 167, -68), c(-4, 24, -41))))
stopifnot(isTRUE(all.equal(as_array(torch_mm(qr[[1]], qr[[2]])$round()),
                           rbind(c(12, -51, 4), c(6, 167, -68), c(-4, 24, -41)))))
x <- torch_tensor(rbind(c(1, 0, -1), c(0, 1, 0), c(1, 0, 1)))
stopifnot(abs(as_array(linalg_cond(x, "nuc")) - 9.2426) < 1e-4)
A <- torch_eye(4 * 6)$reshape(c(4, 6, 8, 3))
stopifnot(all(linalg_tensorinv(A, ind = 3)$shape == c(8, 3, 4, 6)))
X <- linalg_tensorsolve(torch_randn(6, 4, 4, 3, 2), torch_randn(4, 3, 2), dims = c(1, 3))
stopifnot(all(X$shape == c(6, 4)))
s <- linalg_slogdet(torch_eye(3) * 2)
stopifnot(length(s) == 2, abs(as_array(s[[2]]) - 3 * log(2)) < 1e-6)
v <- torch_tensor(c(1, 2, 3), requires_grad = TRUE)
y <- torch_cross(v, torch_tensor(c(0, 0, 1)), dim = 1)
y$sum()$backward()
stopifnot(all(as_array(v$grad) == c(-1, 1, 0)))
a <- torch_randn(2, 3)
b <- torch_randn(3, 4)
stopifnot(isTRUE(all.equal(as_array(torch_einsum("ij,jk->ik", list(a, b))),
                           as_array(torch_mm(a, b)), tolerance = 1e-6)))
stopifnot(as_array(torch_einsum("ii", list(torch_eye(3)))) == 3)
lu <- torch_lu(torch_tensor(rbind(c(0, 1), c(2, 3))))
stopifnot(all(as_array(lu[[2]]) == c(2, 2)))
cat("OK\n")
'''
    res = run_r("-e", script)
    assert "OK" in res.stdout, res.stdout + res.stderr


# --------------------------------------------------------------------------
# LU


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_lu_unpack_with_pivots(shape):
    x = rand(*shape)

    def fn(T, x):
        LU, piv = T.linalg.lu_factor(x) if T is torch else rt.linalg_lu_factor(x)
        P, L, U = T.lu_unpack(LU, piv)
        return P, L, U, P.matmul(L).matmul(U)
    r, t = check_vs_torch(fn, x, second_order=True)
    np.testing.assert_allclose(r[3].data, x, atol=1e-12)
    assert r[1].data.dtype == np.float64 and t[0].requires_grad is False


def test_lu_pivots_and_infos():
    x = rand(3, 3)
    LU, piv = rt.torch_lu(rt.torch_tensor(x))
    tLU, tpiv = torch.linalg.lu_factor(torch.from_numpy(x))
    np.testing.assert_array_equal(piv.data, tpiv.numpy())   # 1-based, as LAPACK's
    LU, piv, info = rt.torch_lu(rt.torch_tensor(np.ones((2, 2))), get_infos=True)
    assert int(info.item()) == 2
    with pytest.raises(RuntimeError, match="pivot = TRUE"):
        rt.torch_lu(rt.torch_tensor(x), pivot=False)


# --------------------------------------------------------------------------
# eig / eigvals: complex results


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eig_vs_torch(shape, dtype):
    x = rand(*shape, dtype=dtype)
    L, V = rt.linalg_eig(rt.torch_tensor(x))
    tL, tV = torch.linalg.eig(torch.from_numpy(x))
    assert L.data.dtype == tL.numpy().dtype and V.data.dtype == tV.numpy().dtype
    tol = 1e-4 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(np.sort_complex(L.data.reshape(-1)),
                               np.sort_complex(tL.numpy().reshape(-1)), rtol=tol, atol=tol)
    # A V = V diag(L), with unit eigenvectors
    np.testing.assert_allclose(x @ V.data, V.data * L.data[..., None, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(V.data, axis=-2), 1, rtol=tol)
    np.testing.assert_allclose(rt.linalg_eigvals(rt.torch_tensor(x)).data, L.data)


def test_eig_gradients_vs_torch():
    x = rand(3, 3)
    a = rt.torch_tensor(x, requires_grad=True)
    ta = torch.from_numpy(x).requires_grad_(True)
    L, V = rt.linalg_eig(a)
    tL, tV = torch.linalg.eig(ta)
    assert L.grad_fn.name == type(tL.grad_fn).__name__
    # symmetric in the eigenvalues and invariant to the eigenvectors' phases
    (g,) = rt.autograd_grad([L], [a], grad_outputs=[rt.torch_tensor(np.conj(L.data))],
                            retain_graph=True)
    (tg,) = torch.autograd.grad([tL], [ta], grad_outputs=[tL.detach().conj()],
                                retain_graph=True)
    np.testing.assert_allclose(g.data, tg.numpy(), rtol=1e-8, atol=1e-10)
    W = np.abs(V.data) ** 0 * np.arange(9).reshape(3, 3)     # |V|^2 weighted: phase-free
    (g,) = rt.autograd_grad([V], [a], grad_outputs=[rt.torch_tensor(V.data * W)])
    (tg,) = torch.autograd.grad([tV], [ta], grad_outputs=[tV.detach() * torch.from_numpy(W)])
    np.testing.assert_allclose(g.data, tg.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (3,)),
                                   ((2, 2, 3), (2, 3, 4)), ((3,), (2, 3, 4))])
def test_complex_matmul_gradients(sa, sb):
    # PyTorch's convention for complex inputs: conjugated operands in the derivative
    rng = np.random.default_rng(0)
    x = rng.standard_normal(sa) + 1j * rng.standard_normal(sa)
    y = rng.standard_normal(sb) + 1j * rng.standard_normal(sb)
    a, b = rt.torch_tensor(x, requires_grad=True), rt.torch_tensor(y, requires_grad=True)
    ta, tb = (torch.from_numpy(v).requires_grad_(True) for v in (x, y))
    out, tout = a.matmul(b), ta.matmul(tb)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
    up = np.asarray(rng.standard_normal(tout.shape) + 1j * rng.standard_normal(tout.shape))
    g = rt.autograd_grad([out], [a, b], grad_outputs=[rt.torch_tensor(up)])
    tg = torch.autograd.grad([tout], [ta, tb], grad_outputs=[torch.from_numpy(up)])
    for r, t in zip(g, tg):
        np.testing.assert_allclose(r.data, t.numpy(), rtol=1e-12, atol=1e-12)
