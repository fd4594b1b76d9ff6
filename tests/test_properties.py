"""Property tests (hypothesis), in float64, against PyTorch and against built-in ops.

1. Random expression graphs over the differentiable ops with random
   broadcastable shapes: values, gradients and create_graph second derivatives
   agree with PyTorch; where PyTorch rejects a shape combination, so do we.
2. Random custom functions (R style and class style, both class styles) agree
   with the same math written with built-in ops, first and second order.

The example budget is bounded (see SETTINGS) so the file runs in well under a
minute on two cores.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtorch_py as rt

torch = pytest.importorskip("torch")

# RTORCH_HYPOTHESIS_EXAMPLES=1000 for a longer bug hunt; CI keeps the default.
MAX_EXAMPLES = int(os.environ.get("RTORCH_HYPOTHESIS_EXAMPLES", "40"))
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])
RTOL, ATOL = 1e-6, 1e-8


class NS:
    """The handful of free functions the ops below need, per library."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        if lib == "rt":
            self.cat, self.stack, self.where = rt.torch_cat, rt.torch_stack, rt.torch_where
            self.maximum, self.minimum = rt.torch_maximum, rt.torch_minimum
            self.long = lambda v: rt.torch_tensor(v, dtype=rt.torch_long())
            self.zeros_long = lambda s: rt.torch_zeros(*s, dtype=rt.torch_long())
        else:
            self.cat, self.stack, self.where = torch.cat, torch.stack, torch.where
            self.maximum, self.minimum = torch.maximum, torch.minimum
            self.long = lambda v: torch.tensor(v, dtype=torch.long)
            self.zeros_long = lambda s: torch.zeros(*s, dtype=torch.long)


RT, TH = NS("rt"), NS("torch")


def to_np(t) -> np.ndarray:
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)
    return np.asarray(t.data)


def close(a, b, what: str) -> None:
    a, b = to_np(a), to_np(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=what)


# --------------------------------------------------------------------------
# The op library: each op is written once and run on both libraries (the
# method names agree); `p` holds the op's drawn parameters.

UNARY = {
    "neg": lambda ns, x, p: -x,
    "exp": lambda ns, x, p: x.clamp(min=-4.0, max=4.0).exp(),
    "log": lambda ns, x, p: (x * x + 1.0).log(),
    "sqrt": lambda ns, x, p: (x * x + 0.5).sqrt(),
    "abs": lambda ns, x, p: x.abs(),
    "sin": lambda ns, x, p: x.sin(),
    "cos": lambda ns, x, p: x.cos(),
    "tanh": lambda ns, x, p: x.tanh(),
    "sigmoid": lambda ns, x, p: x.sigmoid(),
    "relu": lambda ns, x, p: x.relu(),
    "square": lambda ns, x, p: x.square(),
    "pow_int": lambda ns, x, p: x ** 3,
    "pow_frac": lambda ns, x, p: (x.abs() + 0.5) ** 1.5,
    "rpow": lambda ns, x, p: 2.0 ** x.clamp(min=-3.0, max=3.0),
    "clamp": lambda ns, x, p: x.clamp(min=-0.5, max=0.7),
    "rdiv": lambda ns, x, p: 1.0 / (x * x + 1.0),
    "rsub": lambda ns, x, p: 2.0 - x,
    "scale": lambda ns, x, p: 3.0 * x + 0.5,
    "clone": lambda ns, x, p: x.clone(),
    "masked_fill": lambda ns, x, p: x.masked_fill(x > 0.3, 0.25),
    "sum_all": lambda ns, x, p: x.sum(),
    "mean_all": lambda ns, x, p: x.mean(),
    "max_all": lambda ns, x, p: x.max(),
    "flatten": lambda ns, x, p: x.flatten(),
    "reshape": lambda ns, x, p: x.reshape(-1),
    "squeeze": lambda ns, x, p: x.squeeze(),
    "unsqueeze": lambda ns, x, p: x.unsqueeze(p["d_new"]),
    "expand": lambda ns, x, p: x.expand(2, *x.shape),
}
# ops with a dim argument (need ndim >= 1)
DIMMED = {
    "sum_dim": lambda ns, x, p: x.sum(dim=p["d"], keepdim=p["keep"]),
    "mean_dim": lambda ns, x, p: x.mean(dim=p["d"], keepdim=p["keep"]),
    "max_dim": lambda ns, x, p: x.max(dim=p["d"], keepdim=p["keep"])[0],
    "min_dim": lambda ns, x, p: x.min(dim=p["d"])[0],
    "softmax": lambda ns, x, p: x.softmax(dim=p["d"]),
    "log_softmax": lambda ns, x, p: x.log_softmax(dim=p["d"]),
    "index0": lambda ns, x, p: x[0],
    "index_last": lambda ns, x, p: x[-1],
    "slice_step": lambda ns, x, p: x[..., ::2],
    "transpose": lambda ns, x, p: x.transpose(p["d"], p["d2"]),
    "permute": lambda ns, x, p: x.permute(*p["perm"]),
    "t": lambda ns, x, p: x.t() if x.ndim <= 2 else x.transpose(0, 1),
    "cat_self": lambda ns, x, p: ns.cat([x, x * 2.0], dim=p["d"]),
    "stack_self": lambda ns, x, p: ns.stack([x, -x], dim=p["d_new"]),
    "matmul_self_t": lambda ns, x, p: x.matmul(x.transpose(-1, -2)) if x.ndim >= 2
    else x.matmul(x),
    "index_long": lambda ns, x, p: x[ns.long([0, x.shape[0] - 1, 0])],   # repeats accumulate
    "index_mask": lambda ns, x, p: x[x > 0.1],
    "chunk": lambda ns, x, p: x.chunk(2, dim=p["d"])[-1],
    "split": lambda ns, x, p: x.split(1, dim=p["d"])[0],
    "unbind": lambda ns, x, p: x.unbind(p["d"])[-1],
    "narrow": lambda ns, x, p: x.narrow(p["d"], 0, 1),
    "select": lambda ns, x, p: x.select(p["d"], -1),
    "gather": lambda ns, x, p: x.gather(p["d"], ns.zeros_long(x.shape)),
    "prod": lambda ns, x, p: x.prod(),
    "argmax_pick": lambda ns, x, p: x.flatten()[x.flatten().argmax()],
    # in-place ops inside the graph (on a non-leaf)
    "mul_": lambda ns, x, p: (x * 1.0).mul_(x.tanh()),
    "add_sub_div_": lambda ns, x, p: (x + 0.0).add_(x.sin()).sub_(0.5).div_(2.0),
    "div_": lambda ns, x, p: (x * 1.0).div_(x.cos() + 2.0),
    "clamp_": lambda ns, x, p: (x * 1.0).clamp_(min=-0.3, max=0.4),
    "masked_fill_": lambda ns, x, p: (x * 2.0).masked_fill_(x < 0.0, 0.1),
    "setitem": lambda ns, x, p: _setitem(x * 1.0, 0, x[-1] * 3.0),
    "copy_": lambda ns, x, p: (x * 1.0).copy_(x.exp().clamp(max=10.0)),
}


# Ops whose create_graph gradient is known to be wrong (each with a strict xfail
# regression test below) are listed here and left out of the second-order
# property only. Empty now: mul_/div_ were fixed (test_inplace_second_order).
KNOWN_SECOND_ORDER_BUGS: frozenset = frozenset()
# In-place ops on a 0-d result of arithmetic fail (its data is a NumPy scalar);
# see test_inplace_on_zero_dim_arithmetic_result. Skipped on 0-d inputs until fixed.
INPLACE_OPS = {"mul_", "div_", "add_sub_div_", "clamp_", "masked_fill_", "setitem", "copy_",
               "add_", "setitem_t"}


def _setitem(t, k, v):
    t[k] = v
    return t
BINARY = {
    "add": lambda ns, x, y, p: x + y,
    "sub": lambda ns, x, y, p: x - y,
    "mul": lambda ns, x, y, p: x * y,
    "div": lambda ns, x, y, p: x / (y * y + 1.0),
    "pow": lambda ns, x, y, p: (x.abs() + 0.5) ** y.clamp(min=-2.0, max=2.0),
    "maximum": lambda ns, x, y, p: ns.maximum(x, y),
    "minimum": lambda ns, x, y, p: ns.minimum(x, y),
    "where": lambda ns, x, y, p: ns.where(x > y, x, y * 0.5),
    "matmul": lambda ns, x, y, p: x.matmul(y),
    "cat": lambda ns, x, y, p: ns.cat([x, y], dim=p["d"]),
    "stack": lambda ns, x, y, p: ns.stack([x, y], dim=0),
    "dot": lambda ns, x, y, p: x.dot(y),
    "expand_as": lambda ns, x, y, p: x.expand_as(y),
    "add_": lambda ns, x, y, p: (x * 1.0).add_(y),
    "setitem_t": lambda ns, x, y, p: _setitem(x * 1.0, (Ellipsis, 0), y.sum()),
}


@st.composite
def leaf_shapes(draw):
    base = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    n = draw(st.integers(1, 3))
    shapes = []
    for _ in range(n):
        drop = draw(st.integers(0, len(base) - 1))
        s = [1 if draw(st.booleans()) and draw(st.booleans()) else d for d in base[drop:]]
        shapes.append(tuple(s))
    return shapes


def _params(draw, x):
    nd = x.ndim
    p = {"keep": draw(st.booleans()),
         "d_new": draw(st.integers(-nd - 1, nd))}
    p["d"], p["d2"], p["perm"] = 0, 0, []
    if nd:
        p["d"] = draw(st.integers(-nd, nd - 1))
        p["d2"] = draw(st.integers(-nd, nd - 1))
        p["perm"] = draw(st.permutations(list(range(nd))))
    return p


def _run_both(fn, rt_args, th_args, p):
    """Run on torch first; if torch rejects the shapes, rt must reject them too."""
    try:
        th_out = fn(TH, *th_args, p)
    except (RuntimeError, IndexError) as err:
        with pytest.raises(Exception):
            fn(RT, *rt_args, p)
        return None, None, str(err)
    return fn(RT, *rt_args, p), th_out, None


@st.composite
def programs(draw):
    """Leaves (values and shapes) plus a list of op names and parameters."""
    shapes = draw(leaf_shapes())
    seed = draw(st.integers(0, 2**32 - 1))
    n_steps = draw(st.integers(1, 7))
    return shapes, seed, n_steps


def build(data, shapes, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    rt_leaves = [rt.torch_tensor(a.copy(), requires_grad=True) for a in arrays]
    th_leaves = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    return rng, rt_leaves, th_leaves


def grow(data, n_steps, rt_pool, th_pool, trail, exclude=frozenset()):
    for _ in range(n_steps):
        i = data.draw(st.integers(0, len(rt_pool) - 1))
        x, tx = rt_pool[i], th_pool[i]
        kind = data.draw(st.sampled_from(["unary", "dimmed", "binary"]))
        p = _params(data.draw, tx)
        if kind == "binary":
            j = data.draw(st.integers(0, len(rt_pool) - 1))
            name = data.draw(st.sampled_from(sorted(BINARY)))
            fn, args_rt, args_th = BINARY[name], (x, rt_pool[j]), (tx, th_pool[j])
        elif kind == "dimmed" and tx.ndim >= 1:
            name = data.draw(st.sampled_from(sorted(DIMMED)))
            fn, args_rt, args_th = DIMMED[name], (x,), (tx,)
        else:
            name = data.draw(st.sampled_from(sorted(UNARY)))
            fn, args_rt, args_th = UNARY[name], (x,), (tx,)
        if name in exclude or (name in INPLACE_OPS and tx.ndim == 0):
            continue
        if tx.numel() > 400 and name in ("expand", "stack_self", "stack", "cat", "cat_self"):
            continue
        out, tout, err = _run_both(lambda ns, *a: fn(ns, *a), args_rt, args_th, p)
        trail.append((name, tuple(tx.shape), err))
        if out is None:
            continue
        close(out, tout, f"value after {trail}")
        assert out.requires_grad == tout.requires_grad, f"requires_grad after {trail}"
        rt_pool.append(out)
        th_pool.append(tout)


def loss_of(rng, rt_pool, th_pool, n_leaves):
    """Sum of every computed node, each weighted by a random tensor."""
    rt_loss, th_loss = None, None
    for x, tx in zip(rt_pool[n_leaves:], th_pool[n_leaves:]):
        w = rng.standard_normal(tuple(tx.shape))
        a = (x * rt.torch_tensor(w)).sum()
        b = (tx * torch.tensor(w)).sum()
        rt_loss = a if rt_loss is None else rt_loss + a
        th_loss = b if th_loss is None else th_loss + b
    return rt_loss, th_loss


def grads_both(rt_out, th_out, rt_in, th_in, create_graph=False, retain_graph=None):
    g_rt = rt.autograd_grad(rt_out, rt_in, allow_unused=True, create_graph=create_graph,
                            retain_graph=retain_graph)
    g_th = torch.autograd.grad(th_out, th_in, allow_unused=True, create_graph=create_graph,
                               retain_graph=retain_graph)
    return g_rt, g_th


def zeros_if_none(g, like):
    return np.zeros(tuple(like.shape)) if g is None else to_np(g)


@SETTINGS
@given(prog=programs(), data=st.data())
def test_random_graphs_match_pytorch(prog, data):
    shapes, seed, n_steps = prog
    rng, rt_leaves, th_leaves = build(data, shapes, seed)
    rt_pool, th_pool, trail = list(rt_leaves), list(th_leaves), []
    grow(data, n_steps, rt_pool, th_pool, trail)
    rt_loss, th_loss = loss_of(rng, rt_pool, th_pool, len(rt_leaves))
    if rt_loss is None:
        return
    close(rt_loss, th_loss, f"loss after {trail}")
    g_rt, g_th = grads_both(rt_loss, th_loss, rt_leaves, th_leaves, retain_graph=True)
    for k, (a, b, leaf) in enumerate(zip(g_rt, g_th, th_leaves)):
        np.testing.assert_allclose(zeros_if_none(a, leaf), zeros_if_none(b, leaf),
                                   rtol=RTOL, atol=ATOL, err_msg=f"grad of leaf {k}: {trail}")
    # the same through .backward(), accumulating into .grad twice
    rt_loss.backward(retain_graph=True)
    rt_loss.backward()
    for k, (leaf, b, tleaf) in enumerate(zip(rt_leaves, g_th, th_leaves)):
        np.testing.assert_allclose(zeros_if_none(leaf.grad, tleaf) / 2,
                                   zeros_if_none(b, tleaf), rtol=RTOL, atol=ATOL,
                                   err_msg=f".grad of leaf {k}: {trail}")


@SETTINGS
@given(prog=programs(), data=st.data())
def test_random_graphs_with_hooks_and_retain_grad_match_pytorch(prog, data):
    """Tensor hooks that rescale gradients, and retain_grad(), on random nodes."""
    shapes, seed, n_steps = prog
    rng, rt_leaves, th_leaves = build(data, shapes, seed)
    rt_pool, th_pool, trail = list(rt_leaves), list(th_leaves), []
    grow(data, n_steps, rt_pool, th_pool, trail)
    retained = []
    for k, (x, tx) in enumerate(zip(rt_pool, th_pool)):
        # PyTorch returns the input object itself from some no-op shape ops
        # (flatten of a 1-d tensor): a hook there would land on the input.
        if not tx.requires_grad or any(tx is t for t in th_pool[:k]):
            continue
        c = data.draw(st.sampled_from([None, None, 0.5, -2.0, 3.0]))
        if c is not None:
            x.register_hook(lambda g, c=c: g * c)
            tx.register_hook(lambda g, c=c: g * c)
            trail.append(("hook", k, c))
        if k >= len(rt_leaves) and data.draw(st.booleans()):
            x.retain_grad()
            tx.retain_grad()
            retained.append(k)
            trail.append(("retain_grad", k))
    rt_loss, th_loss = loss_of(rng, rt_pool, th_pool, len(rt_leaves))
    if rt_loss is None:
        return
    rt_loss.backward()
    th_loss.backward()
    for k in range(len(rt_leaves)):
        np.testing.assert_allclose(zeros_if_none(rt_leaves[k].grad, th_leaves[k]),
                                   zeros_if_none(th_leaves[k].grad, th_leaves[k]),
                                   rtol=RTOL, atol=ATOL, err_msg=f".grad of leaf {k}: {trail}")
    for k in retained:
        a, b = rt_pool[k].grad, th_pool[k].grad
        assert (a is None) == (b is None), f"retained grad of node {k}: {trail}"
        if a is not None:
            close(a, b, f"retained grad of node {k}: {trail}")


def _second_order(rt_loss, th_loss, rt_leaves, th_leaves, rng, trail):
    g_rt, g_th = grads_both(rt_loss, th_loss, rt_leaves, th_leaves, create_graph=True)
    rt_s, th_s = None, None
    for a, b, leaf in zip(g_rt, g_th, th_leaves):
        v = rng.standard_normal(tuple(leaf.shape))
        if b is not None:
            np.testing.assert_allclose(to_np(a), to_np(b), rtol=RTOL, atol=ATOL,
                                       err_msg=f"first-order grad: {trail}")
            tb = (b * torch.tensor(v)).sum()
            th_s = tb if th_s is None else th_s + tb
        if a is not None:
            ta = (a * rt.torch_tensor(v)).sum()
            rt_s = ta if rt_s is None else rt_s + ta
    second_th = [None] * len(th_leaves)
    if th_s is not None and th_s.requires_grad:
        second_th = torch.autograd.grad(th_s, th_leaves, allow_unused=True)
    second_rt = [None] * len(rt_leaves)
    if rt_s is not None and rt_s.requires_grad:
        second_rt = rt.autograd_grad(rt_s, rt_leaves, allow_unused=True)
    for k, (a, b, leaf) in enumerate(zip(second_rt, second_th, th_leaves)):
        np.testing.assert_allclose(zeros_if_none(a, leaf), zeros_if_none(b, leaf),
                                   rtol=1e-5, atol=1e-7,
                                   err_msg=f"second derivative of leaf {k}: {trail}")


@SETTINGS
@given(prog=programs(), data=st.data())
def test_random_graphs_second_derivatives_match_pytorch(prog, data):
    shapes, seed, n_steps = prog
    rng, rt_leaves, th_leaves = build(data, shapes, seed)
    rt_pool, th_pool, trail = list(rt_leaves), list(th_leaves), []
    grow(data, min(n_steps, 5), rt_pool, th_pool, trail, exclude=KNOWN_SECOND_ORDER_BUGS)
    rt_loss, th_loss = loss_of(rng, rt_pool, th_pool, len(rt_leaves))
    if rt_loss is None:
        return
    _second_order(rt_loss, th_loss, rt_leaves, th_leaves, rng, trail)


# --------------------------------------------------------------------------
# Random custom functions vs the same math with built-in ops.
# f(x, y, scale) = A(x) * B(y) + scale * x, with A, B from a library of
# elementwise functions with their derivatives (written with differentiable ops,
# so create_graph works through the custom function).

ELEMENTWISE = {
    "sin": (lambda x: x.sin(), lambda x: x.cos()),
    "exp": (lambda x: x.exp(), lambda x: x.exp()),
    "tanh": (lambda x: x.tanh(), lambda x: 1 - x.tanh() * x.tanh()),
    "square": (lambda x: x * x, lambda x: 2 * x),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: x.sigmoid() * (1 - x.sigmoid())),
    "identity": (lambda x: x * 1, lambda x: x * 0 + 1),
    "cube": (lambda x: x ** 3, lambda x: 3 * x ** 2),
}


def r_style(A, dA, B, dB, save_named: bool, key_order: list, honour_needs: bool):
    def forward(ctx, x, y, scale=0.5):
        if save_named:
            ctx.save_for_backward(x=x, y=y, scale=scale)
        else:
            ctx.save_for_backward(x, y, scale)
        return A(x) * B(y) + scale * x

    def backward(ctx, g):
        s = ctx.saved_variables
        x, y, scale = (s["x"], s["y"], s["scale"]) if save_named else (s[0], s[1], s[2])
        out = {}
        for k in key_order:
            if honour_needs and not ctx.needs_input_grad[k]:
                out[k] = None
            elif k == "x":
                out[k] = g * (dA(x) * B(y) + scale)
            elif k == "y":
                out[k] = g * A(x) * dB(y)
            else:
                out[k] = None        # scale: a constant
        return out
    return rt.autograd_function(forward=forward, backward=backward)


def class_style(A, dA, B, dB, separate: bool):
    def fwd(x, y, scale):
        return A(x) * B(y) + scale * x

    def bwd(ctx, g):
        x, y = ctx.saved_tensors
        scale = ctx.scale
        gx = g * (dA(x) * B(y) + scale) if ctx.needs_input_grad[0] else None
        gy = g * A(x) * dB(y) if ctx.needs_input_grad[1] else None
        return gx, gy, None

    if separate:
        class F(rt.Function):
            @staticmethod
            def forward(x, y, scale):
                return fwd(x, y, scale)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y, scale = inputs
                ctx.save_for_backward(x, y)
                ctx.scale = scale

            backward = staticmethod(bwd)
    else:
        class F(rt.Function):
            @staticmethod
            def forward(ctx, x, y, scale):
                ctx.save_for_backward(x, y)
                ctx.scale = scale
                return fwd(x, y, scale)

            backward = staticmethod(bwd)
    return F


def second(s, inputs):
    """Gradient of s (None where constant in an input, all None if s is constant)."""
    if not s.requires_grad:
        return [None] * len(inputs)
    return rt.autograd_grad(s, inputs, allow_unused=True)


@st.composite
def custom_cases(draw):
    shapes = draw(leaf_shapes())
    while len(shapes) < 2:
        shapes.append(shapes[0])
    return dict(
        shapes=shapes[:2],
        seed=draw(st.integers(0, 2**32 - 1)),
        A=draw(st.sampled_from(sorted(ELEMENTWISE))),
        B=draw(st.sampled_from(sorted(ELEMENTWISE))),
        style=draw(st.sampled_from(["r", "class", "class_setup_context"])),
        save_named=draw(st.booleans()),
        key_order=draw(st.permutations(["x", "y", "scale"])),
        honour_needs=draw(st.booleans()),
        needs=draw(st.sampled_from([(True, True), (True, False), (False, True)])),
        scale=draw(st.sampled_from([None, 0.0, -1.5, 2.0])),
        post=draw(st.sampled_from(["none", "tanh", "mul_self"])),
    )


@SETTINGS
@given(case=custom_cases())
def test_random_custom_functions_match_builtin_math(case):
    A, dA = ELEMENTWISE[case["A"]]
    B, dB = ELEMENTWISE[case["B"]]
    rng = np.random.default_rng(case["seed"])
    arrays = [rng.standard_normal(s) for s in case["shapes"]]
    scale = case["scale"]
    scale_v = 0.5 if scale is None else scale

    def leaves():
        return [rt.torch_tensor(a.copy(), requires_grad=n)
                for a, n in zip(arrays, case["needs"])]

    if case["style"] == "r":
        f = r_style(A, dA, B, dB, case["save_named"], case["key_order"],
                    case["honour_needs"])
        call = (lambda x, y: f(x, y)) if scale is None else (lambda x, y: f(x, y, scale=scale))
    else:
        F = class_style(A, dA, B, dB, separate=case["style"] == "class_setup_context")
        call = lambda x, y: F.apply(x, y, scale_v)  # noqa: E731

    def builtin(x, y):
        return A(x) * B(y) + scale_v * x

    def post(z):
        return {"none": z, "tanh": z.tanh(), "mul_self": z * z}[case["post"]]

    xs_c, xs_b = leaves(), leaves()
    out_c, out_b = post(call(*xs_c)), post(builtin(*xs_b))
    close(out_c, out_b.data, f"custom value {case}")
    assert out_c.requires_grad
    w = rt.torch_tensor(rng.standard_normal(out_b.shape))
    loss_c, loss_b = (out_c * w).sum(), (out_b * w).sum()
    want = [t for t in xs_c if t.requires_grad]
    want_b = [t for t in xs_b if t.requires_grad]
    g_c = rt.autograd_grad(loss_c, want, create_graph=True)
    g_b = rt.autograd_grad(loss_b, want_b, create_graph=True)
    for a, b in zip(g_c, g_b):
        close(a, b.data, f"custom grad {case}")
    # second order through the custom function's (differentiable) backward
    v = [rt.torch_tensor(rng.standard_normal(t.shape)) for t in want]
    s_c = sum(((g * vi).sum() for g, vi in zip(g_c, v)), rt.torch_zeros(1, dtype="float64"))
    s_b = sum(((g * vi).sum() for g, vi in zip(g_b, v)), rt.torch_zeros(1, dtype="float64"))
    h_c, h_b = second(s_c, want), second(s_b, want_b)
    for a, b, t in zip(h_c, h_b, want):
        np.testing.assert_allclose(zeros_if_none(a, t), zeros_if_none(b, t), rtol=1e-5,
                                   atol=1e-7, err_msg=f"custom 2nd derivative {case}")
    # and .backward() accumulates the same as the built-in graph
    xs_c2 = leaves()
    (post(call(*xs_c2)) * w).sum().backward()
    for t, b in zip([t for t in xs_c2 if t.requires_grad], g_b):
        close(t.grad, b.data, f"custom .grad {case}")


# --------------------------------------------------------------------------
# Regression tests for what the properties found


@pytest.mark.parametrize("name", ["mul_", "div_"])
def test_inplace_second_order(name):
    """mul_/div_ by a tensor that requires grad: the saved old value must stay
    differentiable so create_graph gives the right second derivative."""
    f = {"mul_": lambda x: (x * 1.0).mul_(x.tanh()),
         "div_": lambda x: (x * 1.0).div_(x.cos() + 2.0)}[name]
    x = rt.torch_tensor(np.array([0.7, -1.3]), requires_grad=True)
    tx = torch.tensor([0.7, -1.3], dtype=torch.float64, requires_grad=True)
    (g,) = rt.autograd_grad(f(x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(f(tx).sum(), tx, create_graph=True)
    close(g, tg, "first order")
    close(rt.autograd_grad(g.sum(), x)[0], torch.autograd.grad(tg.sum(), tx)[0], "second")


def test_inplace_on_zero_dim_arithmetic_result():
    s = rt.torch_tensor(np.array([1.0, 2.0])).sum()      # 0-d
    y = s * 1.0
    assert isinstance(y.data, np.ndarray) and y.shape == ()
    y.add_(1.0)
    assert y.item() == 4.0
    x = rt.torch_tensor(np.array([1.0, 2.0]), requires_grad=True)
    z = (x.sum() * 2.0).add_(x[0])
    (g,) = rt.autograd_grad(z, x)
    np.testing.assert_array_equal(g.data, [3.0, 2.0])


def test_float64_from_python_floats_is_exact():
    assert rt.torch_tensor([0.7], dtype=rt.torch_float64()).data[0] == 0.7
    assert rt.torch_tensor([[0.1, 1e-300]], dtype=rt.torch_double()).data.tolist() == \
        [[0.1, 1e-300]]
    assert rt.torch_tensor(0.7, dtype=rt.torch_float64()).item() == 0.7


# --------------------------------------------------------------------------
# Random two-output custom functions: list outputs, unused outputs (their
# gradient arrives as zeros), mark_non_differentiable, and gradcheck.


def two_output_function(A, dA, B, dB, non_diff: bool):
    def forward(ctx, x, y):
        ctx.save_for_backward(x=x, y=y)
        u = A(x) * B(y)
        v = x.sum() * y if not non_diff else (x > 0).to(dtype=x.dtype)
        if non_diff:
            ctx.mark_non_differentiable(v)
        return [u, v]

    def backward(ctx, gu, gv):
        s = ctx.saved_variables
        x, y = s["x"], s["y"]
        gx = gu * dA(x) * B(y)
        gy = gu * A(x) * dB(y)
        if not non_diff:
            gx = gx + (gv * y).sum()
            gy = gy + gv * x.sum()
        return {"y": gy, "x": gx}
    return rt.autograd_function(forward=forward, backward=backward)


@SETTINGS
@given(A=st.sampled_from(sorted(ELEMENTWISE)), B=st.sampled_from(sorted(ELEMENTWISE)),
       n=st.integers(1, 4), seed=st.integers(0, 2**32 - 1), non_diff=st.booleans(),
       use=st.sampled_from(["u", "v", "both"]))
def test_random_two_output_custom_functions(A, B, n, seed, non_diff, use):
    (fA, dA), (fB, dB) = ELEMENTWISE[A], ELEMENTWISE[B]
    rng = np.random.default_rng(seed)
    ax, ay = rng.standard_normal(n), rng.standard_normal(n)
    f = two_output_function(fA, dA, fB, dB, non_diff)

    def builtin(x, y):
        u = fA(x) * fB(y)
        v = (x > 0).to(dtype=x.dtype) if non_diff else x.sum() * y
        return u, v

    x1, y1 = (rt.torch_tensor(a.copy(), requires_grad=True) for a in (ax, ay))
    x2, y2 = (rt.torch_tensor(a.copy(), requires_grad=True) for a in (ax, ay))
    (u1, v1), (u2, v2) = f(x1, y1), builtin(x2, y2)
    close(u1, u2.data, "u")
    close(v1, v2.data, "v")
    assert v1.requires_grad is (not non_diff)
    wu, wv = rt.torch_tensor(rng.standard_normal(n)), rt.torch_tensor(rng.standard_normal(n))
    if use == "v" and non_diff:
        use = "both"

    def loss(u, v):
        parts = {"u": [(u * wu).sum()], "v": [(v * wv).sum()],
                 "both": [(u * wu).sum(), (v * wv).sum()]}[use]
        return sum(parts[1:], parts[0])
    g1 = rt.autograd_grad(loss(u1, v1), [x1, y1], allow_unused=True)
    g2 = rt.autograd_grad(loss(u2, v2), [x2, y2], allow_unused=True)
    for a, b, t in zip(g1, g2, (x1, y1)):
        np.testing.assert_allclose(zeros_if_none(a, t), zeros_if_none(b, t), rtol=RTOL,
                                   atol=ATOL, err_msg=f"{A} {B} {use} non_diff={non_diff}")
    # finite differences agree with the custom backward too
    assert rt.autograd_gradcheck(lambda x, y: f(x, y)[0], [x1, y1])
