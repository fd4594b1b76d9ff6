"""Every registered op, on every sample input of its declaration, against
PyTorch 2.13 (values, dtypes, node names, gradients with a random upstream
gradient, second derivatives) and finite differences in float64; then every
such call made from R, which must give the same result with dims and
positions 1-based. Generated from the registry: an op added there is tested
here without a line of test code.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT, check_vs_torch, gradcheck, needs_r
from op_cases import FLOAT_DTYPES, Case, cases, materialize, torch_call
from rtorch_py.ops import REGISTRY

CASES = cases()


def _fn(case: Case, rebuild) -> callable:
    spec, tfn = case.spec, torch_call(case.spec)

    def fn(T, *tensors):
        args, kwargs = rebuild(tensors)
        return (spec.fn if T is not __import__("torch") else tfn)(*args, **kwargs)
    return fn


def test_every_op_with_a_derivative_has_samples() -> None:
    """The registry's own check: an op without samples would go untested."""
    untested = sorted(s.key for s in REGISTRY.values()
                      if not s.samples and s.function)
    assert untested == [], f"ops declared as functions without sample inputs: {untested}"


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_matches_pytorch(case: Case, dtype) -> None:
    arrays, flags, rebuild = materialize(case.sample, dtype)
    diff = case.spec.differentiable
    check_vs_torch(_fn(case, rebuild), *arrays,
                   requires_grad=flags if diff else False,
                   second_order=diff and case.spec.second_order and dtype is np.float64)


# (samples whose inputs are all integers have nothing to differentiate; an op whose
# derivative is not its values' own, as PyTorch defines it, is compared with PyTorch only)
DIFFERENTIABLE = [c for c in CASES if c.spec.differentiable and c.spec.finite_differences and
                  any(materialize(c.sample, np.float64)[1])]


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=[c.id for c in DIFFERENTIABLE])
def test_op_gradcheck(case: Case) -> None:
    arrays, flags, rebuild = materialize(case.sample, np.float64)
    assert gradcheck(_fn(case, rebuild), *arrays, requires_grad=flags)


@pytest.fixture(scope="module")
def r_results() -> dict:
    """Every case called from R, in one subprocess with the shim in its embedded R."""
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "r_op_calls.py")],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


# (an op that is neither a function nor a method is a node R reaches through an nnf_
# function, tested with it)
R_CASES = [c for c in CASES if c.spec.function or c.spec.method]


@needs_r
@pytest.mark.parametrize("case", R_CASES, ids=[c.id for c in R_CASES])
def test_op_from_r_equals_python(case: Case, r_results: dict) -> None:
    got = r_results[case.id]
    assert got["ok"], got["error"]

