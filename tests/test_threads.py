"""Threads: grad mode (and anomaly mode) are thread-local, and independent
forward/backward passes in concurrent threads get correct gradients."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import rtorch_py as rt
from rtorch_py import engine

TIMEOUT = 30


@pytest.fixture(autouse=True)
def fast_thread_switching():
    """Switch threads every few microseconds so the passes really interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def run_threads(*targets):
    """Run each target in its own thread; re-raise the first failure."""
    errors = []

    def wrap(fn):
        def inner():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
        return inner
    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
        assert not t.is_alive(), "thread hung"
    if errors:
        raise errors[0]


def test_with_no_grad_does_not_leak_into_another_thread():
    x = rt.torch_ones(3, requires_grad=True)
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def no_grad_thread():
        with rt.with_no_grad():
            seen["inside"] = rt.is_grad_enabled()
            seen["inside_op"] = (x * 2).grad_fn
            entered.set()
            assert checked.wait(TIMEOUT)
        seen["after"] = rt.is_grad_enabled()

    def grad_thread():
        assert entered.wait(TIMEOUT)          # the other thread is inside with_no_grad now
        seen["other"] = rt.is_grad_enabled()
        y = (x * 2).sum()
        seen["other_op"] = y.grad_fn
        (g,) = rt.autograd_grad(y, x)
        seen["other_grad"] = g.data.copy()
        checked.set()

    run_threads(no_grad_thread, grad_thread)
    assert seen["inside"] is False and seen["inside_op"] is None
    assert seen["after"] is True
    assert seen["other"] is True and seen["other_op"] is not None
    np.testing.assert_array_equal(seen["other_grad"], [2.0, 2.0, 2.0])
    assert rt.is_grad_enabled()


def test_main_thread_no_grad_does_not_reach_new_threads():
    seen = {}

    def child():
        seen["mode"] = rt.is_grad_enabled()
        seen["anomaly"] = engine.is_anomaly_enabled()
        x = rt.torch_ones(2, requires_grad=True)
        seen["records"] = (x * 3).grad_fn is not None
        rt.autograd_set_grad_mode(False)       # set and left off in the child ...

    with rt.with_no_grad():
        with rt.with_detect_anomaly():
            run_threads(child)
            assert not rt.is_grad_enabled()
    assert seen == {"mode": True, "anomaly": False, "records": True}
    assert rt.is_grad_enabled()                # ... does not reach the main thread


def test_decorated_functions_and_set_grad_mode_per_thread():
    @rt.with_no_grad
    def infer(x):
        return x * 2

    x = rt.torch_ones(2, requires_grad=True)
    barrier = threading.Barrier(4)
    results = {}

    def worker(k):
        def run():
            barrier.wait(TIMEOUT)
            for i in range(300):
                if k % 2:
                    assert infer(x).grad_fn is None
                    prev = rt.autograd_set_grad_mode(False)
                    assert prev is True and (x * 1).grad_fn is None
                    rt.autograd_set_grad_mode(True)
                else:
                    assert rt.is_grad_enabled()
                    assert (x * 1).grad_fn is not None
            results[k] = rt.is_grad_enabled()
        return run

    run_threads(*(worker(k) for k in range(4)))
    assert results == {0: True, 1: True, 2: True, 3: True}


def _model_grads(seed: int, steps: int):
    """An independent forward/backward loop; returns the final gradients."""
    rng = np.random.default_rng(seed)
    X = rt.torch_tensor(rng.standard_normal((16, 4)))
    W = rt.torch_tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b = rt.torch_tensor(rng.standard_normal(3), requires_grad=True)
    sq = rt.autograd_function(
        forward=lambda ctx, a: (ctx.save_for_backward(a=a), a * a)[1],
        backward=lambda ctx, g: {"a": 2 * ctx.saved_variables["a"] * g})
    out = []
    for _ in range(steps):
        h = (X.mm(W) + b).tanh()
        loss = sq(h).mean() + h.softmax(dim=1).max()
        loss.backward()
        out.append((W.grad.data.copy(), b.grad.data.copy()))
        W.grad = None
        b.grad = None
    return out


@pytest.mark.parametrize("n_threads", [2, 4])
def test_concurrent_independent_backward_passes(n_threads):
    steps = 150
    expected = {k: _model_grads(k, 1)[0] for k in range(n_threads)}
    barrier = threading.Barrier(n_threads)
    got = {}

    def worker(k):
        def run():
            barrier.wait(TIMEOUT)
            got[k] = _model_grads(k, steps)
        return run

    run_threads(*(worker(k) for k in range(n_threads)))
    for k in range(n_threads):
        assert len(got[k]) == steps
        for gw, gb in got[k]:
            np.testing.assert_allclose(gw, expected[k][0], rtol=1e-12)
            np.testing.assert_allclose(gb, expected[k][1], rtol=1e-12)


def test_concurrent_passes_with_grad_mode_flipping():
    """One thread trains while another runs inference under with_no_grad in a tight loop."""
    stop = threading.Event()
    expected = _model_grads(7, 1)[0]
    got = {}

    def trainer():
        try:
            got["grads"] = _model_grads(7, 100)
        finally:
            stop.set()

    def inferrer():
        x = rt.torch_ones(4, 4, requires_grad=True)
        n = 0
        while not stop.is_set():
            with rt.with_no_grad():
                y = x.mm(x).tanh()
                assert y.grad_fn is None
            n += 1
        got["inference_iterations"] = n

    run_threads(trainer, inferrer)
    for gw, gb in got["grads"]:
        np.testing.assert_allclose(gw, expected[0], rtol=1e-12)
        np.testing.assert_allclose(gb, expected[1], rtol=1e-12)
    assert got["inference_iterations"] > 0


# Not strict: the failure is a data race, so it shows up with high probability
# (tens of thousands of wrong elements per run on two cores) but not always.
def test_concurrent_backward_into_a_shared_leaf_accumulates_every_pass():
    w = rt.torch_tensor(np.zeros(2_000_000), requires_grad=True)
    n, threads = 40, 2
    barrier = threading.Barrier(threads)

    def run():
        barrier.wait(TIMEOUT)
        for _ in range(n):
            (w * 1.0).sum().backward()

    run_threads(*([run] * threads))
    wrong = int((w.grad.data != n * threads).sum())
    # first accumulation: both threads see .grad is None and one result is dropped
    lost = 0
    for _ in range(200):
        v = rt.torch_tensor(np.zeros(10), requires_grad=True)
        b = threading.Barrier(2)

        def first():
            b.wait(TIMEOUT)
            (v * 1.0).sum().backward()
        run_threads(first, first)
        lost += int(v.grad.data[0] != 2)
    assert (wrong, lost) == (0, 0), f"{wrong} elements wrong; {lost}/200 first updates lost"


def test_concurrent_autograd_grad_on_graphs_sharing_a_leaf():
    """autograd_grad does not touch .grad, so threads may share parameters freely;
    they may also walk one retained graph at the same time."""
    rng = np.random.default_rng(3)
    W = rt.torch_tensor(rng.standard_normal((5, 5)), requires_grad=True)
    shared = (W.tanh() * 2.0).sum()                   # one graph, walked by every thread
    expected_shared = 2.0 * (1 - np.tanh(W.data) ** 2)
    xs = [rt.torch_tensor(rng.standard_normal((3, 5))) for _ in range(4)]
    expected = [rt.autograd_grad(x.mm(W).sin().sum(), W)[0].data.copy() for x in xs]
    barrier = threading.Barrier(4)
    bad = []

    def worker(k):
        def run():
            barrier.wait(TIMEOUT)
            for _ in range(100):
                (g,) = rt.autograd_grad(xs[k].mm(W).sin().sum(), W)
                if not np.allclose(g.data, expected[k], rtol=1e-12):
                    bad.append(("own", k))
                (g,) = rt.autograd_grad(shared, W, retain_graph=True)
                if not np.allclose(g.data, expected_shared, rtol=1e-12):
                    bad.append(("shared", k))
        return run

    run_threads(*(worker(k) for k in range(4)))
    assert not bad, bad[:5]
    assert W.grad is None
