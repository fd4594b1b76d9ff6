"""Long and large runs: deep graphs, memory released after backward, flat RSS
over a training loop. Each test takes a few seconds at most; the figures are
printed (run with `-s` to see them) and only loosely asserted.

    .venv/bin/python -m pytest tests/test_long_runs.py -s -q
"""
from __future__ import annotations

import gc
import math
import os
import resource
import sys
import time
import tracemalloc

import numpy as np
import pytest

import rtorch_py as rt
from rtorch_py import engine
from rtorch_py.engine import AccumulateGrad, Node

MB = 1024 * 1024


def report(label: str, **figures) -> None:
    parts = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                      for k, v in figures.items())
    print(f"\n[figures] {label}: {parts}", file=sys.stderr)


def rss_bytes() -> int:
    """Current resident set size (Linux /proc; falls back to the peak)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - non-Linux
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def chain(n: int, x):
    """An n-op chain mixing a few node types; d(out)/dx = 1.00001 ** (n // 2)."""
    y = x
    for i in range(n // 2):
        y = y * 1.00001
        y = y + 0.5
    return y


def timed_chain(n: int) -> tuple:
    x = rt.torch_tensor([1.0], dtype=rt.torch_float64(), requires_grad=True)
    t0 = time.perf_counter()
    y = chain(n, x)
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return x, t1 - t0, t2 - t1


def test_100k_op_chain_backward_is_iterative_and_linear(monkeypatch):
    # Linear work, checked without timing anything: every node runs exactly
    # once. (Times are reported with -s, never asserted: speed is measured in
    # benchmarks/.)
    runs = []

    def counted(fn):
        return lambda node, grads: (runs.append(node), fn(node, grads))[1]
    # ops look their formulas up (in their family's module) when they record a
    # node; the leaf's is the engine's
    from rtorch_py import ops
    for name in ("MulBackward1", "AddBackward1", "SumBackward0"):
        fn = getattr(ops, name)
        monkeypatch.setattr(sys.modules[fn.formula.__module__], name, counted(fn))
    monkeypatch.setattr(engine, "_accumulate", counted(engine._accumulate))
    limit = sys.getrecursionlimit()
    x, fwd_small, bwd_small = timed_chain(10_000)
    assert len(runs) == 10_000 + 2 and len(set(map(id, runs))) == len(runs)  # + sum + leaf
    runs.clear()
    x, fwd_big, bwd_big = timed_chain(100_000)
    assert len(runs) == 100_000 + 2 and len(set(map(id, runs))) == len(runs)
    assert sys.getrecursionlimit() == limit             # nobody raised it to get through
    np.testing.assert_allclose(x.grad.data, [1.00001 ** 50_000], rtol=1e-9)
    report("chain backward", n_small=10_000, fwd_small_s=fwd_small, bwd_small_s=bwd_small,
           n_big=100_000, fwd_big_s=fwd_big, bwd_big_s=bwd_big,
           bwd_ratio=bwd_big / bwd_small, fwd_ratio=fwd_big / fwd_small)


def test_100k_chain_other_entry_points_and_teardown():
    x = rt.torch_tensor([2.0], dtype=rt.torch_float64(), requires_grad=True)
    y = chain(100_000, x).sum()
    (g,) = rt.autograd_grad(y, x, retain_graph=True)
    np.testing.assert_allclose(g.data, [1.00001 ** 50_000], rtol=1e-9)
    y.backward()                                         # the retained graph again
    np.testing.assert_allclose(x.grad.data, [1.00001 ** 50_000], rtol=1e-9)
    # a 100k-node graph that is never backwarded is dropped without a crash
    z = chain(100_000, x)
    assert z.grad_fn is not None
    del z, y
    gc.collect()
    # a deep chain of custom functions too (R style), and of hooks along the way
    f = rt.autograd_function(forward=lambda ctx, a: a * 1.0001,
                             backward=lambda ctx, g: {"a": g * 1.0001})
    w = rt.torch_tensor([1.0], dtype=rt.torch_float64(), requires_grad=True)
    y = w
    for i in range(10_000):
        y = f(y)
        if i % 2500 == 0:
            y.register_hook(lambda g: g * 1.0)
    y.sum().backward()
    np.testing.assert_allclose(w.grad.data, [1.0001 ** 10_000], rtol=1e-9)


def _graph_with_saved_buffers(x, depth: int):
    y = x
    for _ in range(depth):
        y = (y * 1.01).sin()     # sin saves its input: one buffer per step
    return y.sum()


@pytest.mark.parametrize("entry", ["backward", "autograd_grad"])
@pytest.mark.parametrize("retain", [False, True])
def test_saved_buffers_released_after_backward(retain, entry):
    n, depth = 250_000, 8                        # 2 MB per float64 buffer
    buf = n * 8
    # one-time costs (the compiled sum's first import and compilation) belong to no graph
    _graph_with_saved_buffers(rt.torch_tensor(np.linspace(-1, 1, n)), 1)
    gc.collect()
    tracemalloc.start()
    try:
        x = rt.torch_tensor(np.linspace(-1, 1, n), requires_grad=True)
        base = tracemalloc.get_traced_memory()[0]
        loss = _graph_with_saved_buffers(x, depth)
        after_fwd = tracemalloc.get_traced_memory()[0]
        if entry == "backward":
            loss.backward(retain_graph=retain)
        else:
            (x.grad,) = rt.autograd_grad(loss, x, retain_graph=retain)
        gc.collect()
        after_bwd = tracemalloc.get_traced_memory()[0]
        held_fwd = after_fwd - base
        held_bwd = after_bwd - base - buf        # minus x.grad, which is meant to stay
        report(f"saved buffers ({entry}, retain_graph={retain})", buffer_mb=buf / MB, depth=depth,
               after_forward_mb=held_fwd / MB, after_backward_mb=held_bwd / MB)
        assert held_fwd >= depth * buf * 0.9     # the graph really held the buffers
        if retain:
            assert held_bwd >= 0.9 * held_fwd    # kept, as asked
            loss.backward()                      # and usable once more
            gc.collect()
            freed = tracemalloc.get_traced_memory()[0] - base - buf
            report("saved buffers after the last backward", held_mb=freed / MB)
            assert freed < 1.5 * buf
        else:
            assert held_bwd < 1.5 * buf          # all saved buffers are gone
        # dropping the loss frees what is left of the graph
        del loss
        gc.collect()
        assert tracemalloc.get_traced_memory()[0] - base - buf < 0.5 * buf
    finally:
        tracemalloc.stop()


def test_custom_function_saved_values_released():
    n = 250_000
    buf = n * 8

    def forward(ctx, a, b):
        ctx.save_for_backward(a=a, b=b, extra=a * 2.0)
        return a * b

    def backward(ctx, g):
        s = ctx.saved_variables
        return {"a": g * s["b"], "b": g * s["a"]}

    f = rt.autograd_function(forward=forward, backward=backward)
    gc.collect()
    tracemalloc.start()
    try:
        a = rt.torch_tensor(np.ones(n), requires_grad=True)
        b = rt.torch_tensor(np.ones(n), requires_grad=True)
        base = tracemalloc.get_traced_memory()[0]
        loss = f(a * 1.0, b * 1.0).sum()
        held_fwd = tracemalloc.get_traced_memory()[0] - base
        loss.backward()
        gc.collect()
        held_bwd = tracemalloc.get_traced_memory()[0] - base - 2 * buf   # a.grad, b.grad
        report("custom function saved values", after_forward_mb=held_fwd / MB,
               after_backward_mb=held_bwd / MB)
        assert held_fwd >= 3 * buf * 0.9
        assert held_bwd < 1.5 * buf
    finally:
        tracemalloc.stop()


def _live_nodes() -> int:
    kinds = (Node, AccumulateGrad)
    return sum(1 for o in gc.get_objects() if type(o) in kinds)


def test_1500_training_steps_rss_flat():
    rng = np.random.default_rng(0)
    X = rt.torch_tensor(rng.standard_normal((64, 10)))
    true_w = rng.standard_normal((10, 1))
    Y = rt.torch_tensor(X.data @ true_w + 0.01 * rng.standard_normal((64, 1)))
    W1 = rt.torch_tensor(rng.standard_normal((10, 32)) * 0.3, requires_grad=True)
    b1 = rt.torch_zeros(32, requires_grad=True)
    W2 = rt.torch_tensor(rng.standard_normal((32, 1)) * 0.3, requires_grad=True)
    params = [W1, b1, W2]
    scale = rt.autograd_function(
        forward=lambda ctx, h, s=2.0: (ctx.save_for_backward(s=s), h * s)[1],
        backward=lambda ctx, g: {"h": g * ctx.saved_variables["s"]})
    lr = 0.01

    def step():
        h = (X.mm(W1) + b1).relu()
        out = scale(h.mm(W2), 0.5)
        loss = ((out - Y) ** 2).mean()
        loss.backward()
        with rt.with_no_grad():
            for p in params:
                p.sub_(p.grad * lr)
                p.grad.zero_()
        return loss.item()

    first = step()
    for _ in range(199):                                  # warm up allocators and caches
        step()
    gc.collect()
    rss_start, nodes_start = rss_bytes(), _live_nodes()
    t0 = time.perf_counter()
    for i in range(1300):
        last = step()
        if i == 649:
            rss_mid = rss_bytes()
    elapsed = time.perf_counter() - t0
    gc.collect()
    rss_end, nodes_end = rss_bytes(), _live_nodes()
    report("1500 training steps", rss_start_mb=rss_start / MB, rss_mid_mb=rss_mid / MB,
           rss_end_mb=rss_end / MB, growth_mb=(rss_end - rss_start) / MB,
           live_nodes_start=nodes_start, live_nodes_end=nodes_end,
           ms_per_step=1000 * elapsed / 1300, loss_first=first, loss_last=last)
    assert math.isfinite(last) and last < first / 5      # it did train
    assert nodes_end <= nodes_start + 5                   # no graph is kept alive
    assert rss_end - rss_start < 20 * MB                  # generous: flat in practice


def test_repeated_errors_leave_nothing_behind():
    """1,000 failing forwards and 1,000 failing backwards: no nodes, graphs or
    memory are left behind, and the parameter's gradient is untouched."""
    w = rt.torch_tensor(np.ones(1000), requires_grad=True)
    (w * 2).sum().backward()
    before = w.grad.data.copy()

    def bad_forward(ctx, x):
        ctx.save_for_backward(x, x * 2)
        raise ValueError("forward failed")

    def bad_backward(ctx, g):
        raise ValueError("backward failed")

    f_fwd = rt.autograd_function(forward=bad_forward, backward=lambda ctx, g: {"x": g})
    f_bwd = rt.autograd_function(forward=lambda ctx, x: x * 3, backward=bad_backward)

    def one_round():
        with pytest.raises(ValueError, match="forward failed"):
            f_fwd(w * 1.0)
        with pytest.raises(ValueError, match="backward failed"):
            f_bwd(w.sin()).sum().backward()
        with pytest.raises(RuntimeError, match="broadcast"):
            (w.exp() + rt.torch_ones(7)).sum().backward()

    for _ in range(100):
        one_round()
    gc.collect()
    rss0, nodes0 = rss_bytes(), _live_nodes()
    for _ in range(1000):
        one_round()
    gc.collect()
    rss1, nodes1 = rss_bytes(), _live_nodes()
    report("1000 rounds of failing forward/backward", rss_growth_mb=(rss1 - rss0) / MB,
           live_nodes_before=nodes0, live_nodes_after=nodes1)
    np.testing.assert_array_equal(w.grad.data, before)
    assert rt.is_grad_enabled()
    assert nodes1 <= nodes0 + 5
    assert rss1 - rss0 < 20 * MB


def test_deep_chain_second_derivative():
    """create_graph through a 15,000-op chain: the gradient graph is as deep, and
    differentiating it again is iterative too."""
    x = rt.torch_tensor(np.array([0.3]), requires_grad=True)
    y = x
    for _ in range(5_000):
        y = (y * 1.0001).sin() * 1.0
    t0 = time.perf_counter()
    (g,) = rt.autograd_grad(y.sum(), x, create_graph=True)
    (h,) = rt.autograd_grad(g.sum(), x)
    elapsed = time.perf_counter() - t0
    # the same with finite differences of the first derivative
    def first(v):
        xv = rt.torch_tensor(np.array([v]), requires_grad=True)
        z = xv
        for _ in range(5_000):
            z = (z * 1.0001).sin() * 1.0
        return rt.autograd_grad(z.sum(), xv)[0].data[0]
    eps = 1e-6
    fd = (first(0.3 + eps) - first(0.3 - eps)) / (2 * eps)
    report("second derivative through a 15,000-op chain", seconds=elapsed,
           first=float(g.data[0]), second=float(h.data[0]), finite_difference=fd)
    assert h.data[0] == pytest.approx(fd, rel=1e-4, abs=1e-9)
