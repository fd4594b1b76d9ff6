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
from helpers import _flat, _np, _tol
from op_cases import FLOAT_DTYPES, Case, cases, materialize, torch_call
from rtorch_py.forward_ad import (dual_level, forward_rule_kind, make_dual, unpack_dual)
from rtorch_py.ops import REGISTRY

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
    ours = _our_tangents(case, arrays, flags, tangents, rebuild)
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
    assert sum(k == "native" for k in kinds.values()) > 0
