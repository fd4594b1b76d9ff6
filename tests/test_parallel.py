"""The fast paths for large elementwise work (issue 27): optimiser updates
blockwise over a thread pool (`ops.parallel`), dropout's draws in blocks, a
linear layer's weight gradient in the weight's layout. Each is checked bit for
bit against the plain path and against PyTorch (float32 and float64)."""
from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import nn
from rtorch_py import optim as ro
from rtorch_py.ops import parallel
from rtorch_py.random import distributions as D
from rtorch_py.random.generator import Generator

# one parameter past the threading threshold (several blocks, split across threads),
# one of a few blocks, one smaller than a block
SHAPES = [(parallel.PARALLEL_MIN + 1000,), (3, parallel.BLOCK + 7), (100,)]

OPTIMISERS = [
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (ro.optim_adamw, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.5)),
    (ro.optim_rmsprop, torch.optim.RMSprop, dict(lr=0.01)),
    (ro.optim_rmsprop, torch.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
]


@pytest.fixture
def threads():
    before = rt.torch_get_num_threads()
    yield rt.torch_set_num_threads
    rt.torch_set_num_threads(before)


def _steps(make, dtype, steps=3):
    """The parameters after `steps` updates with fixed gradients."""
    rng = np.random.default_rng(7)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(a.shape).astype(dtype) for a in init] for _ in range(steps)]
    params = [rt.torch_tensor(a.copy(), requires_grad=True) for a in init]
    opt = make(params)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = rt.torch_tensor(g)
        opt.step()
    return init, grads, [p.data for p in params]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ours,theirs,kwargs", OPTIMISERS)
def test_blockwise_update_is_the_plain_update_and_pytorchs(ours, theirs, kwargs, dtype,
                                                           threads, monkeypatch):
    threads(2)
    init, grads, fast = _steps(lambda ps: ours(ps, **kwargs), dtype)
    threads(1)
    _, _, one_thread = _steps(lambda ps: ours(ps, **kwargs), dtype)
    monkeypatch.setattr(parallel, "BLOCK", 1 << 40)   # every array in one piece
    _, _, plain = _steps(lambda ps: ours(ps, **kwargs), dtype)
    for a, b, c in zip(fast, one_thread, plain):
        assert np.array_equal(a, c) and np.array_equal(b, c)
    ref = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    opt = theirs(ref, **kwargs)
    for step in grads:
        for q, g in zip(ref, step):
            q.grad = torch.tensor(g)
        opt.step()
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    for a, q in zip(fast, ref):
        np.testing.assert_allclose(a, q.detach().numpy(), **tol)


def test_blockwise_splits_contiguous_arrays_only(threads):
    threads(2)
    n = parallel.PARALLEL_MIN + 5
    calls = []

    def record(x, y, tmp):
        calls.append((x.shape, tmp.shape))
        np.add(x, 1, out=tmp)
        y += tmp
    x, y = np.arange(n, dtype=np.float64), np.zeros(n)
    parallel.blockwise(record, [x, y], np.float64)
    assert np.array_equal(y, x + 1) and len(calls) == -(-n // parallel.BLOCK)
    calls.clear()
    m = np.zeros((3, n)).T                                 # not contiguous: one call
    parallel.blockwise(record, [m, m.copy()], np.float64)
    assert calls == [((n, 3), (n, 3))]


def test_blockwise_passes_errors_from_the_pool(threads):
    threads(2)
    a = np.zeros(parallel.PARALLEL_MIN * 2, np.float32)

    def fail(x, tmp):
        raise ValueError("from a block")
    with pytest.raises(ValueError, match="from a block"):
        parallel.blockwise(fail, [a], np.float32)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_the_pool_works_in_a_forked_child(threads):
    threads(2)
    a = np.zeros(parallel.PARALLEL_MIN * 2, np.float32)

    def add_one(x, tmp):
        x += 1
    parallel.blockwise(add_one, [a])      # the parent's pool exists
    pid = os.fork()
    if pid == 0:                          # child: its own pool, or it would hang
        parallel.blockwise(add_one, [a])
        os._exit(0 if (a == 2).all() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and (a == 1).all()


def test_set_num_threads_governs_blas(threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    threads(1)
    assert all(i["num_threads"] == 1 for i in threadpoolctl.threadpool_info()
               if i["user_api"] == "blas")
    assert parallel.threads_for(parallel.PARALLEL_MIN * 8) == 1
    threads(2)
    assert parallel.threads_for(parallel.PARALLEL_MIN * 8) == 2
    assert parallel.threads_for(parallel.PARALLEL_MIN - 1) == 1


@pytest.mark.parametrize("env", [{}, {"OMP_NUM_THREADS": "1"}, {"MKL_NUM_THREADS": "1"},
                                 {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "2"},
                                 {"OMP_NUM_THREADS": "0"}, {"OMP_NUM_THREADS": "two"}])
def test_the_thread_count_at_start_follows_the_environment_as_libtorchs(env):
    # (PyTorch's default intra-op count, read in a fresh process under the same variables)
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    code = ("import rtorch_py, torch; "
            "print(rtorch_py.torch_get_num_threads(), torch.get_num_threads())")
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == out[1], (env, out)
    if env.get("MKL_NUM_THREADS") or env.get("OMP_NUM_THREADS") == "1":
        assert out[0] == env.get("MKL_NUM_THREADS", "1")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 7, D._BLOCK - 1, D._BLOCK, 2 * D._BLOCK + 3])
@pytest.mark.parametrize("p", [0.0, 1.0, 0.9, 0.5, 1 / 3, 5e-324])
def test_bernoulli_in_blocks_is_the_plain_draw_and_pytorchs(n, p, dtype):
    fast_gen, plain_gen = Generator(11), Generator(11)
    fast = D.bernoulli_(fast_gen, np.empty(n, dtype), p)
    plain = (D._unit_double(plain_gen, n) < p).astype(dtype)
    assert fast.dtype == dtype and np.array_equal(fast, plain)
    assert np.array_equal(fast_gen.get_state(), plain_gen.get_state())   # same draws used
    torch.manual_seed(11)
    ref = torch.empty(n, dtype=torch.float32 if dtype == np.float32 else torch.float64)
    assert np.array_equal(ref.bernoulli_(p).numpy(), fast)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_is_pytorchs(dtype):
    x = np.random.default_rng(3).standard_normal((70, 1000)).astype(dtype)
    rt.torch_manual_seed(5)
    ours = nn.nnf_dropout(rt.torch_tensor(x), 0.3)
    torch.manual_seed(5)
    theirs = torch.nn.functional.dropout(torch.from_numpy(x), 0.3)
    assert np.array_equal(ours.data, theirs.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_weight_gradient_in_the_weights_layout(dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5)).astype(dtype)
    w = rng.standard_normal((3, 5)).astype(dtype)
    b = rng.standard_normal(3).astype(dtype)
    X = rt.torch_tensor(x, requires_grad=True)
    W, B = rt.torch_tensor(w, requires_grad=True), rt.torch_tensor(b, requires_grad=True)
    (nn.nnf_linear(X, W, B) ** 2).sum().backward()
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    (torch.nn.functional.linear(tx, tw, tb) ** 2).sum().backward()
    assert W.grad.data.flags.c_contiguous
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for ours, theirs in ((X, tx), (W, tw), (B, tb)):
        np.testing.assert_allclose(ours.grad.data, theirs.grad.numpy(), rtol=tol, atol=tol)
    # a transposed first operand gets its gradient in its layout too
    A = rt.torch_tensor(np.ascontiguousarray(x.T), requires_grad=True)
    rt.torch_addmm(B, A.t(), W.t()).sum().backward()
    ta = torch.tensor(np.ascontiguousarray(x.T), requires_grad=True)
    torch.addmm(tb, ta.t(), tw.t()).sum().backward()
    np.testing.assert_allclose(A.grad.data, ta.grad.numpy(), rtol=tol, atol=tol)
    assert A.grad.data.flags.c_contiguous and not math.isnan(A.grad.data.sum())
