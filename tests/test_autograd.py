"""The engine's semantics, checked against PyTorch's behaviour."""
import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import rtorch_py as rt


def both(data, requires_grad=True):
    return (rt.torch_tensor(np.asarray(data, dtype=np.float64), requires_grad=requires_grad),
            torch.tensor(np.asarray(data, dtype=np.float64), requires_grad=requires_grad))


def close(ours, theirs, rtol=1e-10):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                               atol=1e-12)


# -- accumulation, retain_graph, freeing -----------------------------------------

def test_gradients_accumulate_into_leaves():
    x, tx = both([1.0, 2.0, 3.0])
    for _ in range(3):
        (x * x).sum().backward()
        (tx * tx).sum().backward()
    close(x.grad, tx.grad)


def test_grad_is_not_aliased_between_leaves():
    # AddBackward hands the same gradient to both inputs; zeroing one leaf's
    # .grad must not zero the other's.
    a = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    b = rt.torch_tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.zero_()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])
    (a + b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0])


def test_user_gradient_is_not_aliased_into_grad():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    g = rt.torch_tensor([5.0, 6.0])
    x.backward(g)
    x.grad.zero_()
    np.testing.assert_array_equal(g.numpy(), [5.0, 6.0])


def test_gradients_passed_through_unchanged_are_not_aliased():
    # add/sub/expand/view formulas hand the incoming gradient on as it is; the
    # leaf must still get its own array (the user's gradient, a broadcast view
    # or another leaf's gradient must never become .grad itself).
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    y = rt.torch_tensor([3.0, 4.0], requires_grad=True)
    s = rt.torch_tensor([1.0], requires_grad=True)
    g = rt.torch_tensor([5.0, 6.0])
    (x + 0).backward(g)
    ((y - 0) + s.expand(2)).backward(g, retain_graph=False)
    for t in (x, y):
        t.grad.add_(1)
    np.testing.assert_array_equal(g.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 7.0])
    np.testing.assert_array_equal(y.grad.numpy(), [6.0, 7.0])
    np.testing.assert_array_equal(s.grad.numpy(), [11.0])
    assert not np.shares_memory(x.grad.data, y.grad.data)


def test_several_roots_and_a_root_reachable_from_another():
    x, tx = both([1.0, -2.0, 0.5])
    a, ta = x * 3, tx * 3
    b, tb = a.tanh(), ta.tanh()
    rt.autograd_backward([b.sum(), a.sum(), (a * b).sum()])
    torch.autograd.backward([tb.sum(), ta.sum(), (ta * tb).sum()])
    close(x.grad, tx.grad)


def test_nodes_run_latest_created_first_like_pytorch():
    # A diamond whose branches are created out of order: each node must run once,
    # after every node that feeds it, in PyTorch's order.
    x, tx = both([0.3, 0.7])
    order, torder = [], []
    for (v, log) in ((x, order), (tx, torder)):
        p = v * 2
        q = v.exp()
        r = p.sin()
        out = (q * r + p).sum()
        for name, t in (("p", p), ("q", q), ("r", r)):
            t.register_hook(lambda g, name=name, log=log: log.append(name))
        out.backward()
    assert order == torder
    close(x.grad, tx.grad)


def test_backward_twice_without_retain_graph_fails_then_works_with_it():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])


def test_graph_without_saved_tensors_can_run_twice_like_pytorch():
    x = rt.torch_tensor([1.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.item() == 2.0


def test_saved_tensors_are_freed_after_backward():
    x = rt.torch_tensor(np.ones(10), requires_grad=True)
    h = x * 2
    y = h.log()  # LogBackward0 saves its input h
    ref = weakref.ref(h)
    out = y.sum()
    del h, y
    gc.collect()
    assert ref() is not None  # held by the graph
    out.backward()
    gc.collect()
    assert ref() is None  # released by backward


def test_implicit_gradient_needs_a_scalar():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_backward_on_tensor_without_grad_fails():
    x = rt.torch_tensor([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        x.sum().backward()


def test_requires_grad_only_for_floats():
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_tensor([1, 2], requires_grad=True)
    x = rt.torch_tensor([True])
    with pytest.raises(RuntimeError, match="floating point"):
        x.requires_grad_()
    assert not x.requires_grad


# -- version counters and in-place ----------------------------------------------

def test_inplace_on_saved_tensor_is_caught():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = (h * h).sum()
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert x.grad is None
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_inplace_on_saved_output_is_caught():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = y.sum()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="inplace operation"):
        z.backward()


def test_inplace_on_leaf_requiring_grad_fails_and_leaves_it_intact():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0])
    with rt.with_no_grad():
        x.add_(1)
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 3.0])


def test_inplace_on_nonleaf_records_history():
    x, tx = both([1.0, -2.0, 3.0])
    y = x * 2
    ty = tx * 2
    y.mul_(x)
    ty.mul_(tx)
    y.clamp_(min=0)
    ty.clamp_(min=0)
    assert y.grad_fn.name == type(ty.grad_fn).__name__
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad)


def test_index_assignment_with_mask_like_custom_relu():
    x, tx = both([[1.0, -1.0], [-2.0, 3.0]])
    y, ty = x * 3, tx * 3
    y[x < 0] = 0
    ty[tx < 0] = 0
    assert y.grad_fn.name == type(ty.grad_fn).__name__
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    close(x.grad, tx.grad)


# -- higher order ----------------------------------------------------------------

def test_create_graph_second_and_third_derivative():
    x, tx = both([0.3, -0.7, 1.1])
    y, ty = (x.tanh() * x.exp()).sum(), (tx.tanh() * tx.exp()).sum()
    (g,) = rt.autograd_grad(y, x, create_graph=True)
    (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
    close(g, tg)
    (g2,) = rt.autograd_grad(g.sum(), x, create_graph=True)
    (tg2,) = torch.autograd.grad(tg.sum(), tx, create_graph=True)
    close(g2, tg2)
    (g3,) = rt.autograd_grad(g2.sum(), x)
    (tg3,) = torch.autograd.grad(tg2.sum(), tx)
    close(g3, tg3)


def test_backward_create_graph_then_grad_of_grad():
    x, tx = both([1.5, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    (tx ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    close(x.grad, tx.grad)
    (gg,) = rt.autograd_grad(x.grad.sum(), x)
    (tgg,) = torch.autograd.grad(tx.grad.sum(), tx)
    close(gg, tgg)


def test_create_graph_through_custom_function():
    def fwd(ctx, x):
        ctx.save_for_backward(x=x)
        return x * x * x

    def bwd(ctx, g):
        x = ctx.saved_variables.x
        return {"x": g * 3 * x * x}

    cube = rt.autograd_function(fwd, bwd)
    x, tx = both([0.5, -1.5])
    (g,) = rt.autograd_grad(cube(x).sum(), x, create_graph=True)
    (gg,) = rt.autograd_grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * np.array([0.5, -1.5]))


# -- autograd_grad / autograd_backward --------------------------------------------

def test_autograd_grad_does_not_touch_grad_and_returns_list():
    x, _ = both([1.0, 2.0])
    y, _ = both([3.0, 4.0])
    out = rt.autograd_grad((x * y).sum(), [x, y])
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[0].numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(out[1].numpy(), [1.0, 2.0])
    assert x.grad is None and y.grad is None


def test_autograd_grad_allow_unused():
    x, _ = both([1.0])
    z, _ = both([1.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        rt.autograd_grad(y, [x, z], retain_graph=True)
    gx, gz = rt.autograd_grad(y, [x, z], allow_unused=True)
    assert gz is None and gx.item() == 2.0


def test_autograd_grad_runs_nothing_past_the_inputs_asked_for():
    # Nodes that lead only away from the captured inputs are pruned before their
    # hooks run: a hook on the leaf behind them is never called, .grad untouched.
    x = rt.torch_randn(2, 2, requires_grad=True)
    a, b = x * 2, x + 1
    calls = []
    x.register_hook(lambda g: calls.append(g))
    go = rt.torch_ones(2, 2)
    ga, gb = rt.autograd_grad(a + 2 * b, [a, b], grad_outputs=go, create_graph=True)
    assert np.array_equal(ga.data, go.data) and np.array_equal(gb.data, 2 * go.data)
    assert calls == [] and x.grad is None


def test_autograd_grad_of_intermediate():
    x, tx = both([1.0, 2.0])
    h, th = x.exp(), tx.exp()
    (g,) = rt.autograd_grad((h * h).sum(), h)
    (tg,) = torch.autograd.grad((th * th).sum(), th)
    close(g, tg)


def test_autograd_backward_with_grad_tensors():
    x, tx = both([1.0, 2.0])
    a, b = x * 2, x.exp()
    ta, tb = tx * 2, tx.exp()
    rt.autograd_backward([a, b], [rt.torch_ones(2, dtype=rt.torch_float64()),
                                  rt.torch_tensor(np.array([0.5, 2.0]))])
    torch.autograd.backward([ta, tb], [torch.ones(2, dtype=torch.float64),
                                       torch.tensor([0.5, 2.0], dtype=torch.float64)])
    close(x.grad, tx.grad)


def test_backward_inputs_only_accumulates_there():
    x, _ = both([1.0])
    y, _ = both([2.0])
    (x * y).sum().backward(inputs=[x])
    assert x.grad.item() == 2.0 and y.grad is None


def test_gradient_shape_mismatch_is_reported():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(rt.torch_ones(3))


# -- hooks -------------------------------------------------------------------------

def test_hooks_can_replace_gradient_and_be_removed():
    x, tx = both([1.0, 2.0])
    y, ty = x * 2, tx * 2
    h = y.register_hook(lambda g: g * 10)
    ty.register_hook(lambda g: g * 10)
    (y * y).sum().backward(retain_graph=True)
    (ty * ty).sum().backward(retain_graph=True)
    close(x.grad, tx.grad)
    h.remove()
    x.grad = None
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 16.0])


def test_leaf_hook_sees_and_replaces_gradient():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    x.register_hook(lambda g: g + 1)
    (x * 3).sum().backward()
    np.testing.assert_array_equal(seen[0], [3.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])


def test_hook_order_matches_pytorch():
    order, torder = [], []
    x, tx = both([1.0])
    a, ta = x * 2, tx * 2
    b, tb = x * 3, tx * 3
    a.register_hook(lambda g: order.append("a"))
    b.register_hook(lambda g: order.append("b"))
    x.register_hook(lambda g: order.append("x"))
    ta.register_hook(lambda g: torder.append("a"))
    tb.register_hook(lambda g: torder.append("b"))
    tx.register_hook(lambda g: torder.append("x"))
    (a + b).sum().backward()
    (ta + tb).sum().backward()
    assert order == torder


def test_hook_may_run_backward_on_another_graph():
    w = rt.torch_tensor([2.0], requires_grad=True)
    x = rt.torch_tensor([1.0], requires_grad=True)

    other = (w * w).sum()  # built outside: hooks run in backward's grad mode

    def hook(g):
        other.backward()
        return None

    y = x * 5
    y.register_hook(hook)
    y.sum().backward()
    assert w.grad.item() == 4.0 and x.grad.item() == 5.0


def test_hook_returning_wrong_shape_fails_clearly():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: rt.torch_ones(3))
    with pytest.raises(RuntimeError, match="hook returned a gradient of shape"):
        y.sum().backward()


def test_retain_grad():
    x, tx = both([1.0, 2.0])
    y, ty = x * x, tx * tx
    y.retain_grad()
    ty.retain_grad()
    assert y.retains_grad
    (y * 3).sum().backward()
    (ty * 3).sum().backward()
    close(y.grad, ty.grad)
    assert y.grad.grad_fn is None


# -- grad_fn names and next_functions --------------------------------------------------

def test_grad_fn_names_and_next_functions_match_pytorch():
    x1 = rt.torch_ones(2, 2, requires_grad=True)
    x2 = rt.torch_tensor([1.1], requires_grad=True)
    t1 = torch.ones(2, 2, requires_grad=True)
    t2 = torch.tensor([1.1], requires_grad=True)
    out = ((x1 * (x2 + 2)).pow(2) * 3).mean()
    # (libtorch called as R torch calls it: a number operand takes the Scalar overload)
    aten = torch.ops.aten
    tout = aten.mul.Scalar((t1 * aten.add.Scalar(t2, 2)).pow(2), 3).mean()

    def walk(ours, theirs):
        assert ours.name == type(theirs).__name__
        assert len(ours.next_functions) == len(theirs.next_functions)
        for (n, nr), (tn, tnr) in zip(ours.next_functions, theirs.next_functions):
            assert (n is None) == (tn is None)
            assert nr == tnr
            if n is not None:
                walk(n, tn)

    walk(out.grad_fn, tout.grad_fn)
    leaf = out.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0] \
        .next_functions[0][0]
    assert isinstance(leaf, rt.AccumulateGrad) and leaf.variable is x1
    assert repr(out.grad_fn) == "<MeanBackward0>"
    assert x1.is_leaf and not out.is_leaf


# -- grad mode ---------------------------------------------------------------------------

def test_no_grad_block_decorator_and_set_grad_mode():
    x = rt.torch_tensor([1.0], requires_grad=True)
    with rt.with_no_grad():
        assert not (x * 2).requires_grad
        with rt.with_enable_grad():
            assert (x * 2).requires_grad

    @rt.with_no_grad
    def f(v):
        return v * 2

    assert not f(x).requires_grad
    prev = rt.autograd_set_grad_mode(False)
    try:
        assert prev is True and not (x * 2).requires_grad
    finally:
        rt.autograd_set_grad_mode(True)
    assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    x = rt.torch_tensor([1.0], requires_grad=True)
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def other():
        with rt.with_no_grad():
            entered.set()
            release.wait(5)

    t = threading.Thread(target=other)
    t.start()
    entered.wait(5)
    seen["main"] = (x * 2).requires_grad
    release.set()
    t.join()
    assert seen["main"] is True


# -- anomaly ------------------------------------------------------------------------------

def test_detect_anomaly_names_forward_op_on_nan():
    x = rt.torch_tensor([0.0], requires_grad=True)
    with rt.with_detect_anomaly():
        y = x.sqrt() * 0  # backward of sqrt at 0 gives inf * 0 = nan
        with pytest.raises(RuntimeError, match="returned nan values") as err:
            y.sum().backward()
    assert "sqrt" in str(err.value) or "Sqrt" in str(err.value) or "Mul" in str(err.value)


def test_detect_anomaly_adds_forward_trace_to_errors():
    def fwd(ctx, x):
        return x * 2

    def bwd(ctx, g):
        raise ValueError("boom in backward")

    f = rt.autograd_function(fwd, bwd)
    x = rt.torch_tensor([1.0], requires_grad=True)
    with rt.with_detect_anomaly():
        y = f(x)
        with pytest.raises(ValueError, match="boom in backward") as err:
            y.sum().backward()
    notes = "\n".join(getattr(err.value, "__notes__", []))
    assert "Traceback of forward call" in notes and "test_autograd.py" in notes


# -- scale ---------------------------------------------------------------------------------

def test_long_chain_has_no_recursion_limit():
    x = rt.torch_tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0
