"""The functional API (rtorch_py.autograd_functional, rtorch_py.func), gradgradcheck and the graph
picture, against PyTorch's torch.autograd.functional and torch.func (float64)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.functional as TAF
import torch.func as TF

import rtorch_py as rt
from rtorch_py import func as RF

RNG = np.random.default_rng(7)


def pair(*shape):
    a = RNG.standard_normal(shape)
    return rt.torch_tensor(a, dtype=rt.torch_float64()), torch.tensor(a)


def leaves(x):
    """The tensors of a (nested) result, in order."""
    if isinstance(x, (rt.Tensor, torch.Tensor)):
        return [x]
    return [t for v in x for t in leaves(v)]


def same(ours, theirs):
    ours, theirs = leaves(ours), leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-10, atol=1e-12)


# Functions written once, run on both libraries' tensors (the same method names).
# Each treats a leading batch dim row by row, so vectorize applies.
FUNCTIONS = {
    "one in, one out": (lambda x: (x.sin() * x).exp(), [(3,)]),
    "matrix in, scalar-per-row out": (lambda x: (x * x).sum(dim=-1), [(2, 3)]),
    "two in, tuple out": (lambda x, y: ((x.unsqueeze(-2) * y).tanh().sum(dim=-1),
                                        x.exp() * y[..., 0, :]), [(3,), (2, 3)]),
    "a 2-layer MLP": (lambda x, w: (x.unsqueeze(-2) * w).sum(dim=-1).tanh(), [(4,), (3, 4)]),
}
SCALARS = {
    "sum of cubes": (lambda x: (x * x * x).sum(dim=-1), [(4,)]),
    "two inputs": (lambda x, y: (x.sin() * y * x).sum(dim=-1), [(3,), (3,)]),
    "log-sum-exp": (lambda x: x.exp().sum(dim=-1).log(), [(5,)]),
}


def args(shapes):
    made = [pair(*s) for s in shapes]
    return tuple(m[0] for m in made), tuple(m[1] for m in made)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("strategy", ["reverse", "forward"])
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_against_pytorch(name, strategy, vectorize):
    f, shapes = FUNCTIONS[name]
    ours, theirs = args(shapes)
    for given in ((ours, theirs), (ours[0], theirs[0])) if len(ours) == 1 else ((ours, theirs),):
        same(rt.autograd_jacobian(f, given[0], strategy=strategy, vectorize=vectorize),
             TAF.jacobian(f, given[1], strategy=strategy + "-mode", vectorize=True))


@pytest.mark.parametrize("name", SCALARS)
@pytest.mark.parametrize("outer", ["reverse", "forward"])
@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_against_pytorch(name, outer, vectorize):
    f, shapes = SCALARS[name]
    ours, theirs = args(shapes)
    same(rt.autograd_hessian(f, ours, vectorize=vectorize, outer_jacobian_strategy=outer),
         TAF.hessian(f, theirs, vectorize=True, outer_jacobian_strategy=outer + "-mode"))
    if len(ours) == 1:
        same(rt.autograd_hessian(f, ours[0], vectorize=vectorize), TAF.hessian(f, theirs[0]))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_vjp_and_jvp_against_pytorch(name):
    f, shapes = FUNCTIONS[name]
    ours, theirs = args(shapes)
    out = f(*theirs)
    outs = out if isinstance(out, tuple) else (out,)
    v = [pair(*o.shape) for o in outs]
    v_ours, v_theirs = tuple(p[0] for p in v), tuple(p[1] for p in v)
    if not isinstance(out, tuple):
        v_ours, v_theirs = v_ours[0], v_theirs[0]
    same(rt.autograd_vjp(f, ours, v_ours), TAF.vjp(f, theirs, v_theirs))
    u_ours, u_theirs = args(shapes)
    same(rt.autograd_jvp(f, ours, u_ours), TAF.jvp(f, theirs, u_theirs))


@pytest.mark.parametrize("name", SCALARS)
def test_hvp_and_vhp_against_pytorch(name):
    f, shapes = SCALARS[name]
    ours, theirs = args(shapes)
    v_ours, v_theirs = args(shapes)
    same(rt.autograd_hvp(f, ours, v_ours), TAF.hvp(f, theirs, v_theirs))
    same(rt.autograd_vhp(f, ours, v_ours), TAF.vhp(f, theirs, v_theirs))


def test_create_graph_gives_higher_orders():
    """A Jacobian, an hvp and a jvp made with create_graph are differentiated again."""
    a = RNG.standard_normal(3)
    x, xt = rt.torch_tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    f = lambda x: (x.sin() * x * x)  # noqa: E731
    j = rt.autograd_jacobian(f, x, create_graph=True)
    jt = TAF.jacobian(f, xt, create_graph=True)
    h = rt.autograd_hvp(lambda x: f(x).sum(), x, x * 1.0, create_graph=True)[1]
    ht = TAF.hvp(lambda x: f(x).sum(), xt, xt * 1.0, create_graph=True)[1]
    _, d = rt.autograd_jvp(f, x, x.cos(), create_graph=True)
    _, dt = TAF.jvp(f, xt, xt.cos(), create_graph=True)
    for ours, theirs in ((j, jt), (h, ht), (d, dt)):
        assert ours.requires_grad
        (g,) = rt.autograd_grad((ours * ours).sum(), x)
        (gt,) = torch.autograd.grad((theirs * theirs).sum(), xt, retain_graph=True)
        np.testing.assert_allclose(g.data, gt.numpy(), rtol=1e-10)
    # vectorized too (the stacked inputs keep their history), and a Hessian
    for strategy in ("reverse", "forward"):
        j = rt.autograd_jacobian(f, x, create_graph=True, vectorize=True, strategy=strategy)
        (g,) = rt.autograd_grad((j * j).sum(), x)
        (gt,) = torch.autograd.grad((jt * jt).sum(), xt, retain_graph=True)
        np.testing.assert_allclose(g.data, gt.numpy(), rtol=1e-10)
    h = rt.autograd_hessian(lambda x: f(x).sum(dim=-1), x, create_graph=True, vectorize=True)
    ht = TAF.hessian(lambda x: f(x).sum(), xt, create_graph=True)
    (g,) = rt.autograd_grad(h.sum(), x)
    (gt,) = torch.autograd.grad(ht.sum(), xt)
    np.testing.assert_allclose(g.data, gt.numpy(), rtol=1e-10)
    # without create_graph the results carry no history
    assert not rt.autograd_jacobian(f, x).requires_grad
    assert not rt.autograd_jacobian(f, x, vectorize=True).requires_grad


def test_strict_names_an_unused_input():
    x, _ = pair(3)
    y, _ = pair(3)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        rt.autograd_jacobian(lambda a, b: a * 2, (x, y), strict=True)
    same(rt.autograd_jacobian(lambda a, b: a * 2, (x, y))[1], torch.zeros(3, 3))


# --------------------------------------------------------------------------
# torch.func-style transforms


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_func_jacobians_against_torch_func(transform, argnums):
    f, shapes = FUNCTIONS["two in, tuple out"]
    ours, theirs = args(shapes)
    same(getattr(RF, transform)(f, argnums)(*ours), getattr(TF, transform)(f, argnums)(*theirs))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_func_hessian_against_torch_func(argnums):
    f, shapes = SCALARS["two inputs"]
    ours, theirs = args(shapes)
    same(RF.hessian(f, argnums)(*ours), TF.hessian(f, argnums)(*theirs))
    # composed by hand, as torch.func allows
    same(RF.jacfwd(RF.jacrev(f, argnums), argnums)(*ours),
         TF.jacfwd(TF.jacrev(f, argnums), argnums)(*theirs))


def test_func_vjp_and_jvp_against_torch_func():
    f, shapes = FUNCTIONS["two in, tuple out"]
    ours, theirs = args(shapes)
    out, vjp_fn = RF.vjp(f, *ours)
    out_t, vjp_fn_t = TF.vjp(f, *theirs)
    same(out, out_t)
    cot = [pair(*o.shape) for o in out_t]
    for _ in range(2):  # vjp_fn may be called again
        same(vjp_fn(tuple(c[0] for c in cot)), vjp_fn_t(tuple(c[1] for c in cot)))
    tan_ours, tan_theirs = args(shapes)
    same(RF.jvp(f, ours, tan_ours), TF.jvp(f, theirs, tan_theirs))


def test_vectorized_jacobian_walks_the_graph_once(monkeypatch):
    """vectorize: one backward walk for all rows; not vectorized: one per row."""
    from rtorch_py import autograd_functional as functional
    walks = []
    real = functional.autograd_grad
    monkeypatch.setattr(functional, "autograd_grad", lambda *a, **k: walks.append(1) or
                        real(*a, **k))
    f, shapes = FUNCTIONS["a 2-layer MLP"]
    ours, _ = args(shapes)
    rt.autograd_jacobian(f, ours, vectorize=False)
    assert len(walks) == 3  # one per output element
    walks.clear()
    rt.autograd_jacobian(f, ours, vectorize=True)
    assert len(walks) == 2  # the batched walk, and the check of one random product


def test_vectorize_refuses_a_function_that_mixes_rows():
    x, _ = pair(3)
    with pytest.raises(RuntimeError, match=r"returned shape \[\], not \[1\].*vectorize = FALSE"):
        rt.autograd_jacobian(lambda a: a.sin().sum(), x, vectorize=True)
    # same values on identical rows, wrong gradient: the random product shows it
    with pytest.raises(RuntimeError, match="not independent"):
        rt.autograd_jacobian(lambda a: a * a.max(), x, vectorize=True)
    # a function that fails on the stacked inputs says why
    with pytest.raises(RuntimeError, match=r"(?s)broadcast.*raised in autograd_jacobian"):
        rt.autograd_jacobian(lambda a, b: a * b, (x, pair(2, 3)[0]), vectorize=True)


# --------------------------------------------------------------------------
# gradgradcheck


def cube_function(save_properly: bool):
    def forward(ctx, x):
        if save_properly:
            ctx.save_for_backward(x=x)
        else:
            ctx.x2 = x * x  # no history: forward does not record
        return x * x * x

    def backward(ctx, g):
        x2 = ctx.saved_variables["x"] ** 2 if save_properly else ctx.x2
        return {"x": g * 3 * x2}
    return rt.autograd_function(forward=forward, backward=backward, name="cube")


def test_gradgradcheck_passes_good_functions():
    x, _ = pair(2, 3)
    w, _ = pair(3, 2)
    x.requires_grad_(True)
    w.requires_grad_(True)
    assert rt.autograd_gradgradcheck(lambda a, b: (a.mm(b)).tanh() * a.sum(), [x, w])
    assert rt.autograd_gradgradcheck(cube_function(True), [x])
    # as PyTorch's on the same function
    xt = torch.tensor(x.data, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda a: (a * a * a), [xt])


def test_gradgradcheck_catches_tensors_kept_on_ctx():
    x, _ = pair(2, 2)
    x.requires_grad_(True)
    bad = cube_function(False)
    assert rt.autograd_gradcheck(bad, [x])  # the first derivative is right
    with pytest.raises(rt.GradcheckError,
                       match=r"(?s)custom function cube keeps x2 on ctx as plain attributes.*"
                       r"silently wrong.*save_for_backward.*second derivatives disagree"):
        rt.autograd_gradgradcheck(bad, [x])
    assert rt.autograd_gradgradcheck(bad, [x], raise_exception=False) is False


def test_gradgradcheck_catches_a_wrong_double_backward_without_a_culprit():
    class Square(rt.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x.detach()   # cuts the second derivative
    x, _ = pair(3)
    x.requires_grad_(True)
    assert rt.autograd_gradcheck(Square.apply, [x])
    with pytest.raises(rt.GradcheckError, match="second derivatives disagree") as err:
        rt.autograd_gradgradcheck(Square.apply, [x])
    assert "plain attributes" not in str(err.value)


# --------------------------------------------------------------------------
# the graph picture


def test_graph_names_nodes_saved_values_and_leaves():
    def forward(ctx, x, w):
        y = x.mm(w).exp()
        ctx.save_for_backward(input=x, weight=w, result=y)
        return y

    def backward(ctx, g):
        s = ctx.saved_variables
        gy = g * s["result"]
        return {"x": gy.mm(s["weight"].t()), "w": s["input"].t().mm(gy)}
    lin = rt.autograd_function(forward=forward, backward=backward, name="linear_exp")
    x = rt.torch_randn(2, 3, requires_grad=True)
    w = rt.torch_randn(3, 4, requires_grad=True)
    y = (lin(x, w) * 2).sum()
    src = rt.autograd_graph(y, params={"x": x, "weight": w}).source
    for label in ("SumBackward0", "MulBackward1", 'label="linear_exp\ncustom function"',
                  'label="saved input\n[2, 3]"', 'label="saved weight\n[3, 4]"',
                  'label="saved result\n[2, 4]"', 'label="x\n[2, 3]\nrequires grad"',
                  'label="weight\n[3, 4]\nrequires grad"', 'label="output\n[]"'):
        assert label in src, label
    assert src.count("->") == 8  # 3 saved, 2 leaves, lin -> mul -> sum -> output
    assert y.grad_fn.name == "SumBackward0" and str(y.grad_fn.next_functions[0][0].name) \
        == "MulBackward1"


def test_graph_of_a_class_style_function_and_an_unnamed_leaf():
    class Exp(rt.Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[0]
    x = rt.torch_ones(5, requires_grad=True)
    src = rt.autograd_graph([Exp.apply(x), x * 2]).source
    assert 'label="ExpBackward\ncustom function"' in src
    assert 'label="saved #1\n[5]"' in src
    assert 'label="leaf\n[5]\nrequires grad"' in src
    assert 'label="output 0\n[5]"' in src and 'label="output 1\n[5]"' in src


def test_graph_svg_and_its_fallback(monkeypatch):
    y = (rt.torch_ones(2, requires_grad=True) * 3).sum()
    g = rt.autograd_graph(y)
    if not __import__("shutil").which("dot"):
        pytest.skip("Graphviz's dot is not installed (scripts/setup installs it)")
    svg = g.svg()
    assert "<svg" in svg and "SumBackward0" in svg
    assert g._repr_mimebundle_() == {"image/svg+xml": svg}
    monkeypatch.setenv("PATH", "/nonexistent")
    g2 = rt.autograd_graph(y)
    assert g2.svg() is None and g2._repr_svg_() is None
    assert g2._repr_mimebundle_() == {"text/plain": g2.source}
    assert str(g2) == g2.source


def test_strict_products_name_an_unused_input():
    x, _ = pair(3)
    y, _ = pair(3)
    for product in (rt.autograd_jvp, rt.autograd_vjp):
        v = (x, y) if product is rt.autograd_jvp else x
        with pytest.raises(RuntimeError, match="independent of input 1"):
            product(lambda a, b: a * 2, (x, y), v, strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        rt.autograd_hvp(lambda a, b: (a * a).sum(), (x, y), (x, y), strict=True)


def test_graph_source_is_the_same_for_the_same_graph():
    def build():
        x = rt.torch_ones(2, requires_grad=True)
        return rt.autograd_graph((x.exp() * x).sum(), params={"x": x}).source
    assert build() == build()
