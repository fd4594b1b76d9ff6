"""Forward-mode AD (rtorch_py/forward_ad.py): every registered op, on every
sample input of its declaration, gives the tangent `torch.func.jvp` gives
(values and dtypes; where PyTorch has no forward rule for the op, central
finite differences along the tangent in float64); dual tensors' interface and
errors; custom functions with `jvp` against PyTorch `Function`s with the same
rule; `autograd_gradcheck(check_forward_ad=True)`.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import RT, _flat, _np, _tol
from op_cases import FLOAT_DTYPES, Case, cases, materialize, torch_call
from rtorch_py.forward_ad import dual_level, jvp, make_dual, unpack_dual
from rtorch_py.ops import REGISTRY, forward_rule_kind, forward_rules

# (samples whose inputs are all integers have nothing to carry a tangent)
CASES = [c for c in cases() if any(materialize(c.sample, np.float64)[1])]


def _our_tangents(case: Case, arrays: list, flags: list, tangents: list, rebuild) -> list:
    """(output, tangent) of each output of the op on dual tensors (tangent None: none)."""
    with dual_level():
        tensors = [make_dual(rt.torch_tensor(a.copy()), rt.torch_tensor(t)) if f
                   else rt.torch_tensor(a.copy()) for a, f, t in zip(arrays, flags, tangents)]
        args, kwargs = rebuild(tensors)
        outs = _flat(case.spec.fn(*args, **kwargs))
        return [(o, unpack_dual(o).tangent if isinstance(o, rt.Tensor) else None)
                for o in outs]


def _torch_tangents(case: Case, arrays: list, flags: list, tangents: list, rebuild) -> list:
    tfn = torch_call(case.spec)
    fixed = [torch.from_numpy(a.copy()) for a in arrays]
    wrt = [i for i, f in enumerate(flags) if f]

    def f(*primals):
        ts = list(fixed)
        for i, p in zip(wrt, primals):
            ts[i] = p
        args, kwargs = rebuild(ts)
        out = tfn(*args, **kwargs)
        return tuple(_flat(out)) if isinstance(out, (list, tuple)) else out
    _, tout = torch.func.jvp(f, tuple(fixed[i] for i in wrt),
                             tuple(torch.from_numpy(tangents[i]) for i in wrt))
    return _flat(tout)


def _finite_differences(case: Case, arrays: list, tangents: list, flags: list, rebuild,
                        eps: float = 1e-4) -> list:
    def at(sign: float) -> list:
        ts = [rt.torch_tensor((a + sign * eps * t).astype(np.float64) if f and
                              a.dtype.kind == "f" else a.copy())
              for a, f, t in zip(arrays, flags, tangents)]
        args, kwargs = rebuild(ts)
        return [_np(o).astype(np.float64) if isinstance(o, rt.Tensor) else None
                for o in _flat(case.spec.fn(*args, **kwargs))]
    rt.torch_manual_seed(0)
    plus = at(1)
    rt.torch_manual_seed(0)
    minus = at(-1)
    return [None if p is None else (p - m) / (2 * eps) for p, m in zip(plus, minus)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_forward_ad_matches_pytorch(case: Case, dtype) -> None:
    arrays, flags, rebuild = materialize(case.sample, dtype)
    rng = np.random.default_rng(1)
    tangents = [rng.standard_normal(a.shape).astype(a.dtype) if f else None
                for a, f in zip(arrays, flags)]
    rt.torch_manual_seed(0)
    try:
        ours = _our_tangents(case, arrays, flags, tangents, rebuild)
    except NotImplementedError:  # refused (ctc_loss): PyTorch must refuse it too
        with pytest.raises((RuntimeError, NotImplementedError), match="forward AD"):
            _torch_tangents(case, arrays, flags, tangents, rebuild)
        return
    floating = [i for i, (o, _) in enumerate(ours)
                if isinstance(o, rt.Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)]
    for i, (o, t) in enumerate(ours):
        if i not in floating:
            assert t is None, f"output {i} ({o.dtype if isinstance(o, rt.Tensor) else o}) " \
                              "has a tangent"
    if not case.spec.differentiable:
        for i in floating:
            assert ours[i][1] is None, f"output {i} of an op without derivative has a tangent"
        return
    try:
        torch.manual_seed(0)
        want = _torch_tangents(case, arrays, flags, tangents, rebuild)
    except (RuntimeError, NotImplementedError) as err:  # no forward rule in PyTorch
        want, why = None, f"PyTorch has no forward rule: {str(err)[:80]}"
    fd = None
    differentiable = _differentiable_outputs(case, arrays, flags, rebuild)
    for i in floating:
        got = ours[i][1]
        if not differentiable[i]:
            assert got is None, f"output {i} has no derivative but has a tangent"
            continue
        assert got is not None, f"output {i}: no tangent"
        if want is not None:
            w = want[i]
            assert _np(got).dtype == _np(w).dtype, \
                f"output {i}: tangent dtype {got.dtype} != PyTorch's {w.dtype}"
            atol, rtol = _tol(np.zeros(0, _np(w).dtype).real.dtype, None, None)
            if np.allclose(_np(got), _np(w), atol=atol * 10, rtol=rtol * 10, equal_nan=True):
                continue
            why = f"differs from PyTorch's {_np(w)}"
        # No PyTorch rule, or PyTorch's tangent differs: finite differences decide, and
        # where PyTorch's tangent differs they must show PyTorch's wrong.
        if fd is None:
            fd = _finite_differences(case, *_float64(arrays, tangents), flags, rebuild)
        np.testing.assert_allclose(_np(got), fd[i], atol=1e-3, rtol=1e-3,
                                   err_msg=f"output {i} vs finite differences ({why})")
        if want is not None:
            assert not np.allclose(_np(want[i]), fd[i], atol=1e-3, rtol=1e-3), \
                f"output {i}: PyTorch's tangent agrees with finite differences, ours not"


def _differentiable_outputs(case: Case, arrays: list, flags: list, rebuild) -> list:
    """Whether each output has a derivative (requires grad in reverse mode)."""
    args, kwargs = rebuild([rt.torch_tensor(a.copy(), requires_grad=f)
                            for a, f in zip(arrays, flags)])
    rt.torch_manual_seed(0)
    return [isinstance(o, rt.Tensor) and o.requires_grad
            for o in _flat(case.spec.fn(*args, **kwargs))]


def _float64(arrays: list, tangents: list) -> tuple:
    return ([a.astype(np.float64) if a.dtype == np.float32 else a for a in arrays],
            [None if t is None else t.astype(np.float64) for t in tangents])


def test_every_op_has_a_forward_rule_kind() -> None:
    kinds = {name: forward_rule_kind(name) for name in REGISTRY}
    assert set(kinds.values()) <= {"native", "derived", "none"}
    for name, kind in kinds.items():
        assert (kind == "none") == (not REGISTRY[name].differentiable), name
        assert (kind == "native") == (REGISTRY[name].forward is not None and
                                      REGISTRY[name].differentiable), name
    listed = forward_rules()
    assert sorted(sum(listed.values(), [])) == sorted(REGISTRY)
    assert all(forward_rule_kind(n) == k for k, names in listed.items() for n in names)
    assert {"mul", "matmul", "exp", "sum", "cat", "add"} <= set(listed["native"])


# --------------------------------------------------------------------------
# Custom functions with jvp, against PyTorch Functions with the same rule


class TorchScaledExp(torch.autograd.Function):
    @staticmethod
    def forward(x, y):
        return x * y.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y = inputs
        ctx.save_for_forward(x, y)
        ctx.save_for_backward(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y.exp(), g * x * y.exp()

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        out = torch.zeros_like(x * y)
        if tx is not None:
            out = out + tx * y.exp()
        if ty is not None:
            out = out + x * y.exp() * ty
        return out


class ScaledExp(rt.Function):
    @staticmethod
    def forward(x, y):
        return x * y.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y = inputs
        ctx.save_for_forward(x, y)
        ctx.save_for_backward(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y.exp(), g * x * y.exp()

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        out = rt.torch_zeros_like(x * y)
        if tx is not None:
            out = out + tx * y.exp()
        if ty is not None:
            out = out + x * y.exp() * ty
        return out


def _r_style_scaled_exp(seen: list):
    def forward(ctx, x, y):
        ctx.save_for_forward(x=x, y=y)
        return x * y.exp()

    def jvp(ctx, x, y):  # (the tangents by forward's argument names)
        seen.append((x is None, y is None))
        s = ctx.saved_variables
        out = rt.torch_zeros_like(s["x"])
        if x is not None:
            out = out + x * s["y"].exp()
        if y is not None:
            out = out + s["x"] * s["y"].exp() * y
        return out
    return rt.autograd_function(forward, lambda ctx, g: {"x": g, "y": g}, jvp=jvp)


@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("style", ["class", "r"])
def test_custom_function_jvp_matches_pytorch(duals, style) -> None:
    rng = np.random.default_rng(3)
    x, y, tx, ty = (rng.standard_normal(3) for _ in range(4))
    tangents = (tx, ty)
    wrt = [i for i, d in enumerate(duals) if d]

    def torch_f(*ps):
        args = [torch.from_numpy(x), torch.from_numpy(y)]
        for i, p in zip(wrt, ps):
            args[i] = p
        return TorchScaledExp.apply(*args)
    want_out, want = torch.func.jvp(torch_f, tuple(torch.from_numpy((x, y)[i]) for i in wrt),
                                    tuple(torch.from_numpy(tangents[i]) for i in wrt))
    seen: list = []
    fn = ScaledExp.apply if style == "class" else _r_style_scaled_exp(seen)
    with dual_level():
        args = [make_dual(rt.torch_tensor(v), rt.torch_tensor(t)) if d else rt.torch_tensor(v)
                for v, t, d in zip((x, y), tangents, duals)]
        out, got = unpack_dual(fn(*args))
    np.testing.assert_allclose(_np(out), want_out.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-12)
    if style == "r":
        assert seen == [(not duals[0], not duals[1])]


def test_custom_function_jvp_and_reverse_mode_together() -> None:
    """A dual input that requires grad: the tangent from jvp, the gradient from backward."""
    x = rt.torch_tensor([0.5, 1.5], requires_grad=True)
    y = rt.torch_tensor([0.1, -0.2])
    with dual_level():
        out = ScaledExp.apply(make_dual(x, rt.torch_ones(2, dtype=rt.torch_float64())), y)
        tangent = unpack_dual(out).tangent
    out.sum().backward()
    np.testing.assert_allclose(_np(tangent), np.exp([0.1, -0.2]))
    np.testing.assert_allclose(_np(x.grad), np.exp([0.1, -0.2]))


def test_gradcheck_checks_forward_mode() -> None:
    x = rt.torch_tensor(np.array([0.3, 0.7, -0.2]), requires_grad=True)
    assert rt.autograd_gradcheck(lambda v: (v.exp() * v).cumsum(0).softmax(0), [x],
                                 check_forward_ad=True)
    wrong_jvp = rt.autograd_function(lambda ctx, x: x * x, lambda ctx, g: {"x": g * 0 + 1},
                                     jvp=lambda ctx, x: x * 0)
    right_backward = rt.autograd_function(
        lambda ctx, x: (ctx.save_for_backward(x), x * x)[1],
        lambda ctx, g: {"x": 2 * ctx.saved_tensors[0] * g}, jvp=lambda ctx, x: x * 3)
    assert rt.autograd_gradcheck(right_backward, [x])  # (reverse mode alone: fine)
    with pytest.raises(rt.GradcheckError, match="Forward-mode Jacobian mismatch"):
        rt.autograd_gradcheck(right_backward, [x], check_forward_ad=True)
    with pytest.raises(rt.GradcheckError, match="^Jacobian mismatch"):
        rt.autograd_gradcheck(wrong_jvp, [x], check_forward_ad=True)


# --------------------------------------------------------------------------
# Dual tensors


def test_tangents_live_in_their_level_and_the_fast_path_returns() -> None:
    from rtorch_py.tensor import MODES
    x = rt.torch_tensor([1.0, 2.0])
    with dual_level():
        d = make_dual(x, rt.torch_tensor([1.0, 0.0]))
        y = d.exp()
        assert unpack_dual(y).tangent is not None
        primal, tangent = unpack_dual(d)
        assert unpack_dual(primal).tangent is None and tangent.tolist() == [1.0, 0.0]
        assert unpack_dual(x).tangent is None  # (make_dual leaves x alone)
    assert unpack_dual(y).tangent is None and unpack_dual(d).tangent is None
    assert not MODES


def test_nn_functional_forms_and_in_place_ops_carry_tangents() -> None:
    """Functions made of ops (nnf_linear, nnf_gelu) and in-place ops, against torch.func.jvp."""
    rng = np.random.default_rng(5)
    x, t, w, b = (rng.standard_normal(s) for s in ((4, 3), (4, 3), (2, 3), (2,)))

    def ours(v):
        h = rt.nnf_linear(v, rt.torch_tensor(w), rt.torch_tensor(b))
        h = rt.nnf_gelu(h)
        h.mul_(2.0)
        return rt.nnf_log_softmax(h, dim=1)

    def theirs(v):
        h = torch.nn.functional.linear(v, torch.from_numpy(w), torch.from_numpy(b))
        h = torch.nn.functional.gelu(h) * 2.0
        return torch.nn.functional.log_softmax(h, dim=1)
    with dual_level():
        got = unpack_dual(ours(make_dual(rt.torch_tensor(x), rt.torch_tensor(t)))).tangent
    _, want = torch.func.jvp(theirs, (torch.from_numpy(x),), (torch.from_numpy(t),))
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-7, atol=1e-10)


def test_make_dual_keeps_the_reverse_graph() -> None:
    x = rt.torch_tensor([0.5, 1.0], requires_grad=True)
    with dual_level():
        y = (make_dual(x, rt.torch_ones(2, dtype=rt.torch_float64())) ** 2).sum()
        assert unpack_dual(y).tangent.item() == pytest.approx(3.0)
    y.backward()
    assert x.grad.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("name", ["nnf_dropout", "nnf_rrelu", "nnf_alpha_dropout"])
def test_random_functions_derive_with_the_primal_draws(name) -> None:
    """A random function's tangent uses the draws its primal used (dropout's mask)."""
    x = rt.torch_tensor(np.linspace(-1, 1, 40).reshape(4, 10))
    fn = getattr(rt, name)
    with dual_level():
        rt.torch_manual_seed(7)
        y = fn(make_dual(x, rt.torch_ones_like(x)), training=True)
        primal, tangent = unpack_dual(y)
    rt.torch_manual_seed(7)  # (the same draws, by finite differences)
    plus = fn(x + 1e-6, training=True)
    rt.torch_manual_seed(7)
    minus = fn(x - 1e-6, training=True)
    np.testing.assert_allclose(_np(tangent), (_np(plus) - _np(minus)) / 2e-6, atol=1e-6)


def test_jvp_helper_keeps_the_output_structure() -> None:
    """forward_ad.jvp (what the functional API calls): outputs and tangents in one pass."""
    x = rt.torch_tensor(np.array([0.2, 0.4]))
    t = rt.torch_tensor(np.array([1.0, -1.0]))
    out, tangent = jvp(lambda v: v.sin(), [x], [t])
    np.testing.assert_allclose(_np(tangent), np.cos([0.2, 0.4]) * [1, -1])
    outs, tangents = jvp(lambda v, w: (v * w, w.exp()), [x, x], [t, None])
    assert isinstance(outs, tuple) and len(tangents) == 2
    np.testing.assert_allclose(_np(tangents[0]), 2 * np.array([0.2, 0.4]) * [1, -1] / 2)
    np.testing.assert_allclose(_np(tangents[1]), [0.0, 0.0])



def test_in_place_ops_and_setitem_update_tangents_as_pytorch() -> None:
    import torch.autograd.forward_ad as fw
    a, t = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])

    def run(T, make, unpack, d):
        x = T.zeros(3, dtype=T.float64)
        x.add_(d * 2)
        y = T.ones(3, dtype=T.float64)
        y[1] = d[2] * 3
        z = d.clone()
        z.mul_(d)
        return [_np(unpack(v).tangent) for v in (x, y, z)]
    with dual_level():
        ours = run(RT, make_dual, unpack_dual,
                   make_dual(rt.torch_tensor(a), rt.torch_tensor(t)))
    with fw.dual_level():
        want = run(torch, fw.make_dual, fw.unpack_dual,
                   fw.make_dual(torch.from_numpy(a), torch.from_numpy(t)))
    for got, w in zip(ours, want):
        np.testing.assert_allclose(got, w)


@pytest.mark.parametrize("name, fn", [
    ("mul", lambda a: a * a),
    ("matmul", lambda a: a.matmul(a.t())),
    ("einsum", lambda a: rt.torch_einsum("ij,kj->ik", [a, a])),
])
def test_a_tensor_in_two_places_of_a_multilinear_op(name, fn) -> None:
    # (one term per place the operand takes: x * x's tangent is 2 x t, not 2 t t)
    x = np.random.default_rng(5).standard_normal((2, 3))
    t = np.random.default_rng(6).standard_normal((2, 3))
    want_fn = {"mul": lambda a: a * a, "matmul": lambda a: a @ a.T,
               "einsum": lambda a: torch.einsum("ij,kj->ik", a, a)}[name]
    _, want = torch.func.jvp(want_fn, (torch.from_numpy(x),), (torch.from_numpy(t),))
    _, got = jvp(fn, [rt.torch_tensor(x)], [rt.torch_tensor(t)])
    np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-12)
