"""Optimisers and schedulers against torch.optim: same parameters, same
gradients, several steps, every option."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import optim as ro
from rtorch_py.optim import kernels

rng = np.random.default_rng(0)
SHAPES = [(3, 4), (4,)]


def _run(ours_fn, theirs_cls, kwargs, steps=5, ours_kwargs=None, maximize=False):
    """Same starting values and per-step gradients through both; returns the
    parameters after each step."""
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]
    ours = [rt.torch_tensor(a.copy(), requires_grad=True) for a in init]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    o = ours_fn(ours, **(ours_kwargs or kwargs))
    t = theirs_cls(theirs, **kwargs)
    for step in grads:
        for p, q, g in zip(ours, theirs, step):
            p.grad = rt.torch_tensor(g.copy())
            q.grad = torch.tensor(g.copy())
        o.step()
        t.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=1e-5, atol=1e-6)
    return o, t


CASES = [
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1)),
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3)),
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1, weight_decay=0.1, momentum=0.5)),
    (ro.optim_sgd, torch.optim.SGD, dict(lr=0.1, momentum=0.5, maximize=True)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, amsgrad=True)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, maximize=True)),
    (ro.optim_adamw, torch.optim.AdamW, dict(lr=0.01)),
    (ro.optim_adamw, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.5, amsgrad=True)),
    (ro.optim_rmsprop, torch.optim.RMSprop, dict(lr=0.01)),
    (ro.optim_rmsprop, torch.optim.RMSprop, dict(lr=0.01, alpha=0.8, weight_decay=0.1)),
    (ro.optim_rmsprop, torch.optim.RMSprop, dict(lr=0.01, momentum=0.5)),
    (ro.optim_rmsprop, torch.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (ro.optim_adagrad, torch.optim.Adagrad, dict(lr=0.1)),
    (ro.optim_adagrad, torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                                 initial_accumulator_value=0.5, eps=1e-8)),
    (ro.optim_adadelta, torch.optim.Adadelta, dict()),
    (ro.optim_adadelta, torch.optim.Adadelta, dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    (ro.optim_asgd, torch.optim.ASGD, dict(lr=0.1)),
    (ro.optim_asgd, torch.optim.ASGD, dict(lr=0.1, lambd=0.01, alpha=0.5, t0=2,
                                           weight_decay=0.1)),
    (ro.optim_rprop, torch.optim.Rprop, dict(lr=0.01)),
    (ro.optim_rprop, torch.optim.Rprop, dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.02))),
]


@pytest.mark.parametrize("ours,theirs,kwargs", CASES,
                         ids=[f"{c[1].__name__}-{i}" for i, c in enumerate(CASES)])
def test_matches_torch(ours, theirs, kwargs):
    _run(ours, theirs, kwargs, steps=6)


def test_rprop_sign_flip():
    # alternating gradients exercise the "sign changed" branch
    p = rt.torch_tensor([1.0, -2.0, 3.0], requires_grad=True)
    q = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    o, t = ro.optim_rprop([p], lr=0.1), torch.optim.Rprop([q], lr=0.1)
    for k in range(6):
        g = np.array([1.0, -1.0, 0.5], np.float32) * (-1) ** k * (k % 3 + 1)
        p.grad, q.grad = rt.torch_tensor(g), torch.tensor(g)
        o.step()
        t.step()
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=1e-6)


def test_closure_and_param_groups():
    a = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    b = rt.torch_tensor([3.0], requires_grad=True)
    opt = ro.optim_sgd([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[0]["lr"] == 0.1

    def closure():
        opt.zero_grad()
        loss = (a * a).sum() + (b * b).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == pytest.approx(14.0)
    np.testing.assert_allclose(a.data, [0.8, 1.6], rtol=1e-6)
    np.testing.assert_allclose(b.data, [0.0], atol=1e-6)


def test_bad_input_is_refused():
    x = rt.torch_tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="required"):
        ro.optim_sgd([x])
    with pytest.raises(ValueError, match="learning rate"):
        ro.optim_adam([x], lr=-1)
    with pytest.raises(ValueError, match="non-leaf"):
        ro.optim_sgd([x * 2], lr=0.1)
    with pytest.raises(TypeError, match="only optimize Tensors"):
        ro.optim_sgd([1.0], lr=0.1)


def test_zero_grad():
    x = rt.torch_tensor([1.0], requires_grad=True)
    opt = ro.optim_sgd([x], lr=0.1)
    (x * 2).sum().backward()
    grad = x.grad
    opt.zero_grad(set_to_none=False)  # (in place without the op: its fast path)
    assert x.grad is grad and x.grad.data.tolist() == [0.0]
    assert grad._version[0] == 1  # moved on, as zero_() moves it
    # a gradient zero_() refuses (read-only memory) gets zero_()'s error
    x.grad = rt.torch_tensor([3.0]).expand(1)
    x.grad.data.flags.writeable = False
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        opt.zero_grad(set_to_none=False)
    opt.zero_grad()
    assert x.grad is None


@pytest.mark.parametrize("via", ["optimizer", "module"])
def test_zero_grad_detaches_a_create_graph_gradient(via):
    """AdaHessian's pattern: backward(create_graph) then a Hessian-vector
    product, a step in place, zero_grad(set_to_none = FALSE); each step's
    product needs a gradient whose old graph zero_grad has cut, as PyTorch's."""
    init = rng.standard_normal(4).astype(np.float32)
    v = rng.standard_normal(4).astype(np.float32)
    ours = rt.torch_tensor(init.copy(), requires_grad=True)
    theirs = torch.tensor(init.copy(), requires_grad=True)
    holder = rt.nn.nn_module("H", initialize=lambda self: setattr(
        self, "x", rt.nn.nn_parameter(ours)))()
    assert holder.x is ours
    zero_ours = (ro.optim_sgd([ours], lr=0.1).zero_grad if via == "optimizer"
                 else holder.zero_grad)
    zero_theirs = torch.optim.SGD([theirs], lr=0.1).zero_grad
    for _ in range(3):
        zero_ours(set_to_none=False)
        zero_theirs(set_to_none=False)
        (ours ** 3).sum().backward(create_graph=True)
        (theirs ** 3).sum().backward(create_graph=True)
        assert ours.grad.grad_fn is not None
        hv = rt.autograd_grad(ours.grad, ours, rt.torch_tensor(v))[0]
        thv = torch.autograd.grad(theirs.grad, theirs, torch.tensor(v))[0]
        np.testing.assert_allclose(hv.data, thv.numpy(), rtol=1e-6)
        grad = ours.grad
        with rt.with_no_grad():
            ours.sub_(0.1 * ours.grad)
        with torch.no_grad():
            theirs.sub_(0.1 * theirs.grad)
        np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-6)
    zero_ours(set_to_none=False)
    zero_theirs(set_to_none=False)
    # the same tensor, zeroed, with no history, as PyTorch's
    assert ours.grad is grad and ours.grad.grad_fn is None and not ours.grad.requires_grad
    assert theirs.grad.grad_fn is None and not theirs.grad.requires_grad
    assert ours.grad.data.tolist() == [0.0] * 4


def test_state_dict_round_trip_continues_identically():
    o1, _ = _run(ro.optim_adam, torch.optim.Adam, dict(lr=0.01, amsgrad=True), steps=3)
    params2 = [rt.torch_tensor(p.data.copy(), requires_grad=True)
               for p in o1.param_groups[0]["params"]]
    o2 = ro.optim_adam(params2, lr=1.0)
    o2.load_state_dict(o1.state_dict())
    assert o2.param_groups[0]["lr"] == 0.01
    sd = o1.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    for p1, p2 in zip(o1.param_groups[0]["params"], params2):
        g = rng.standard_normal(p1.shape).astype(np.float32)
        p1.grad, p2.grad = rt.torch_tensor(g.copy()), rt.torch_tensor(g.copy())
    o1.step()
    o2.step()
    for p1, p2 in zip(o1.param_groups[0]["params"], params2):
        np.testing.assert_array_equal(p1.data, p2.data)


@pytest.mark.parametrize("kwargs", [dict(lr=0.01), dict(lr=0.01, amsgrad=True, weight_decay=0.1),
                                    dict(lr=0.01, maximize=True)])
@pytest.mark.parametrize("make", [ro.optim_adam, ro.optim_adamw])
def test_adam_foreach_fast_path_equals_the_per_parameter_path(make, kwargs, monkeypatch):
    """Small parameters' Adam states are parts of one array per state and take
    one pass for all (kernels' FAST PATH): bit for bit the per-parameter
    update, which the same optimiser falls back to when a parameter has no
    gradient in a step (its step count then differs) or a state is replaced."""
    shapes = [(6, 5), (6,), (3, 6), (3,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    fast = [rt.torch_tensor(a.copy(), requires_grad=True) for a in init]
    plain = [rt.torch_tensor(a.copy(), requires_grad=True) for a in init]
    o_fast, o_plain = make(fast, **kwargs), make(plain, **kwargs)
    flat_taken = []
    real = kernels._flat_states

    def spy(ready):
        out = real(ready)
        flat_taken.append(out is not None)
        return out
    monkeypatch.setattr(kernels, "_flat_states", spy)
    for step in range(6):
        grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        for i, (p, q, g) in enumerate(zip(fast, plain, grads)):
            skip = step == 4 and i == 1  # no gradient for one parameter in one step
            p.grad = None if skip else rt.torch_tensor(g.copy())
            q.grad = None if skip else rt.torch_tensor(g.copy())
        o_fast.step()
        monkeypatch.setattr(kernels, "_flat_states", lambda ready: None)
        o_plain.step()
        monkeypatch.setattr(kernels, "_flat_states", spy)
        for p, q in zip(fast, plain):
            np.testing.assert_array_equal(p.data, q.data)
    # the fast path ran until the step without a gradient, the per-parameter path after
    assert flat_taken == [True] * 4 + [False] * 2
    st = o_fast.state[fast[0]]
    assert st["exp_avg"].data.base is o_fast.state[fast[3]]["exp_avg"].data.base


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # (NaN, NumPy path)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("make,theirs,kwargs", [
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, maximize=True)),
    (ro.optim_adamw, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.5)),
    (ro.optim_adam, torch.optim.Adam, dict(lr=0.01, amsgrad=True)),      # (the NumPy path)
])
def test_adam_compiled_fast_path_equals_the_numpy_path(make, theirs, kwargs, dtype, threads,
                                                      monkeypatch):
    """Large parameters' Adam update in one compiled pass (optim/fused.py's FAST
    PATH): bit for bit the NumPy path's (zeros, infinities and NaN in the
    gradients too), at 1 and 2 threads (a run of elements each), and PyTorch's
    result to rounding; amsgrad keeps the NumPy path."""
    from rtorch_py import runtime
    from rtorch_py.optim import fused
    shapes = [(520, 512), (512,)]              # more than one thread's worth of elements
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    fast = [rt.torch_tensor(a.copy(), requires_grad=True) for a in init]
    plain = [rt.torch_tensor(a.copy(), requires_grad=True) for a in init]
    ref = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    o_fast, o_plain, o_ref = make(fast, **kwargs), make(plain, **kwargs), theirs(ref, **kwargs)
    taken = []
    real = fused.adam_step

    def spy(*args):
        taken.append(real(*args))
        return taken[-1]
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(threads)
    try:
        for step in range(4):
            grads = [(rng.standard_normal(s) * 10.0 ** rng.integers(-4, 4)).astype(dtype)
                     for s in shapes]
            grads[0][step, :3] = [0.0, np.inf, np.nan] if step == 3 else 0.0
            for p, q, r, g in zip(fast, plain, ref, grads):
                p.grad, q.grad, r.grad = (rt.torch_tensor(g.copy()), rt.torch_tensor(g.copy()),
                                          torch.tensor(g.copy()))
            monkeypatch.setattr(fused, "adam_step", spy)
            o_fast.step()
            monkeypatch.setattr(fused, "adam_step", lambda *args: False)
            o_plain.step()
            o_ref.step()
            for p, q, r in zip(fast, plain, ref):
                np.testing.assert_array_equal(p.data, q.data)
                if step < 3:
                    np.testing.assert_allclose(p.data, r.detach().numpy(), rtol=1e-5, atol=1e-6)
    finally:
        runtime.torch_set_num_threads(before)
    assert taken == ([] if kwargs.get("amsgrad") else [True] * 8)   # 4 steps, 2 parameters
    for k in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_array_equal(o_fast.state[fast[0]][k].data, o_plain.state[plain[0]][k].data)


def test_adam_foreach_sees_a_replaced_state():
    p = [rt.torch_tensor(np.ones((2, 2), np.float32), requires_grad=True),
         rt.torch_tensor(np.ones(2, np.float32), requires_grad=True)]
    opt = ro.optim_adam(p, lr=0.1)
    for _ in range(2):
        for t in p:
            t.grad = rt.torch_tensor(np.full(t.shape, 0.5, np.float32))
        opt.step()
    opt.state[p[1]]["exp_avg"] = rt.torch_tensor(np.zeros(2, np.float32))  # replaced
    ready = [(t.data, t.grad.data, (0.1, 0.1), [opt.state[t][k].data for k in
                                                 ("exp_avg", "exp_avg_sq")]) for t in p]
    assert kernels._flat_states(ready) is None


def test_step_bumps_version_so_stale_graphs_fail():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    opt = ro.optim_sgd([x], lr=0.1)
    y = (x * x).sum()
    x.grad = rt.torch_tensor([1.0, 1.0])
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# -- LBFGS ---------------------------------------------------------------------

def _rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_matches_torch(line_search):
    p = rt.torch_tensor([-1.5, 2.0], dtype=rt.torch_float64(), requires_grad=True)
    q = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)
    o = ro.optim_lbfgs([p], lr=1, max_iter=10, line_search_fn=line_search, history_size=5)
    t = torch.optim.LBFGS([q], lr=1, max_iter=10, line_search_fn=line_search, history_size=5)

    def closure_ours():
        o.zero_grad()
        loss = _rosenbrock(p)
        loss.backward()
        return loss

    def closure_theirs():
        t.zero_grad()
        loss = _rosenbrock(q)
        loss.backward()
        return loss

    for _ in range(4):
        lo, lt = o.step(closure_ours), t.step(closure_theirs)
        assert float(lo) == pytest.approx(float(lt.detach()), rel=1e-6, abs=1e-9)
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=1e-6, atol=1e-9)
    assert o.state[p]["func_evals"] == t.state[q]["func_evals"]
    assert o.state[p]["n_iter"] == t.state[q]["n_iter"]


# -- schedulers ----------------------------------------------------------------

def _pair(opt_ours, opt_theirs_cls, **kw):
    a = rt.torch_tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    return opt_ours([a], **kw), opt_theirs_cls([b], **kw)


def _compare_schedule(make_ours, make_theirs, steps=12, opt=(ro.optim_sgd, torch.optim.SGD),
                      opt_kw=None):
    o, t = _pair(*opt, **(opt_kw or dict(lr=0.5, momentum=0.9)))
    so, st = make_ours(o), make_theirs(t)
    for _ in range(steps):
        assert o.param_groups[0]["lr"] == pytest.approx(t.param_groups[0]["lr"], rel=1e-9)
        if "momentum" in t.param_groups[0]:
            assert o.param_groups[0]["momentum"] == pytest.approx(t.param_groups[0]["momentum"])
        t.step()
        so.step()
        st.step()


def test_lr_step():
    _compare_schedule(lambda o: ro.lr_step(o, 3, gamma=0.5),
                      lambda t: torch.optim.lr_scheduler.StepLR(t, 3, gamma=0.5))


def test_lr_lambda_and_multiplicative():
    f = lambda e: 0.9 ** e + 0.1  # noqa: E731
    _compare_schedule(lambda o: ro.lr_lambda(o, f),
                      lambda t: torch.optim.lr_scheduler.LambdaLR(t, f))
    _compare_schedule(lambda o: ro.lr_multiplicative(o, lambda e: 0.95),
                      lambda t: torch.optim.lr_scheduler.MultiplicativeLR(t, lambda e: 0.95))


def test_lr_cosine_annealing():
    _compare_schedule(lambda o: ro.lr_cosine_annealing(o, T_max=4, eta_min=0.01),
                      lambda t: torch.optim.lr_scheduler.CosineAnnealingLR(t, T_max=4,
                                                                            eta_min=0.01))


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_lr_one_cycle(strategy):
    kw = dict(max_lr=1.0, total_steps=12, anneal_strategy=strategy, div_factor=5)
    _compare_schedule(lambda o: ro.lr_one_cycle(o, **kw),
                      lambda t: torch.optim.lr_scheduler.OneCycleLR(t, **kw), steps=12)
    o, t = _pair(ro.optim_adam, torch.optim.Adam, lr=0.1)
    so = ro.lr_one_cycle(o, max_lr=1.0, epochs=2, steps_per_epoch=3)
    st = torch.optim.lr_scheduler.OneCycleLR(t, max_lr=1.0, epochs=2, steps_per_epoch=3)
    for _ in range(6):
        assert o.param_groups[0]["betas"][0] == pytest.approx(t.param_groups[0]["betas"][0])
        assert o.param_groups[0]["lr"] == pytest.approx(t.param_groups[0]["lr"])
        t.step()
        so.step()
        st.step()
    with pytest.raises(ValueError, match="Tried to step 7 times"):
        so.step()


@pytest.mark.parametrize("kw", [dict(), dict(mode="max"), dict(threshold_mode="abs"),
                                dict(cooldown=2, patience=1), dict(patience=0, factor=0.3)])
def test_lr_reduce_on_plateau(kw):
    o, t = _pair(ro.optim_sgd, torch.optim.SGD, lr=1.0)
    so = ro.lr_reduce_on_plateau(o, **kw)
    st = torch.optim.lr_scheduler.ReduceLROnPlateau(t, **kw)
    for v in [5, 4, 4, 4, 4, 3.9999, 6, 6, 6, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]:
        so.step(v)
        st.step(v)
        assert o.param_groups[0]["lr"] == pytest.approx(t.param_groups[0]["lr"], rel=1e-12)


def test_lbfgs_small_lr_least_squares_matches_torch():
    # R torch's "lbfgs works" set-up: a linear model, lr = 0.01, one step of 20 iterations
    x = rng.standard_normal((100, 10)).astype(np.float32)
    y = x.sum(1, keepdims=True)
    w0 = rng.standard_normal((1, 10)).astype(np.float32) * 0.3
    ours_w = rt.torch_tensor(w0.copy(), requires_grad=True)
    theirs_w = torch.tensor(w0.copy(), requires_grad=True)
    o = ro.optim_lbfgs([ours_w], lr=0.01)
    t = torch.optim.LBFGS([theirs_w], lr=0.01)
    xo, yo, xt, yt = rt.torch_tensor(x), rt.torch_tensor(y), torch.tensor(x), torch.tensor(y)

    def c_ours():
        o.zero_grad()
        loss = ((xo.matmul(ours_w.t()) - yo) ** 2).mean()
        loss.backward()
        return loss

    def c_theirs():
        t.zero_grad()
        loss = ((xt @ theirs_w.t() - yt) ** 2).mean()
        loss.backward()
        return loss

    o.step(c_ours)
    t.step(c_theirs)
    np.testing.assert_allclose(ours_w.data, theirs_w.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_lbfgs_rounds_as_torch_in_float32():
    """R torch's documented example (Rosenbrock, two steps): float32 bit for bit,
    which needs PyTorch's rounding of each scalar and its fused x + t d."""
    def rosen(x, a=1, b=5):
        return (a - x[0:1]) ** 2 + b * (x[1:2] - x[0:1] ** 2) ** 2

    ours = rt.torch_tensor([-1.0, 1.0], requires_grad=True)
    theirs = torch.tensor([-1.0, 1.0], requires_grad=True)
    o, t = ro.optim_lbfgs([ours]), torch.optim.LBFGS([theirs])
    for opt, x in ((o, ours), (t, theirs)):
        def closure(opt=opt, x=x):
            opt.zero_grad()
            v = rosen(x)
            v.backward()
            return v
        for _ in range(2):
            opt.step(closure)
    assert ours.data.tolist() == theirs.detach().tolist()
    assert rosen(ours).data.tolist() == rosen(theirs).detach().tolist()
