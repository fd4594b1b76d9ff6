"""Shared test helpers: run the same code in rtorch_py and PyTorch and compare.

    from helpers import RT, check_vs_torch, gradcheck, rand

    # fn(T, *tensors): T is a namespace with PyTorch's names; in rtorch_py it maps
    # `T.cat` to `rtorch_py.torch_cat` (or `rtorch_py.cat`), in PyTorch it is `torch`.
    check_vs_torch(lambda T, a, b: a * b, rand(3, 1), rand(1, 4))
    check_vs_torch(lambda T, x: T.cat([x, x], 1), rand(2, 3), second_order=True)
    gradcheck(lambda T, x: x.exp().sum(dim=0), rand(3, 2))

`check_vs_torch` builds leaf tensors from the NumPy arrays (same dtype) in both
libraries, calls `fn`, and checks for every output: shape, dtype, values and
`grad_fn` name; then backpropagates a *random* upstream gradient through all
float outputs and checks the gradient of every input that requires grad
(`requires_grad=True` means every float input; or give one bool per input).
With `second_order=True` it also differentiates the first gradients
(`create_graph=True`) against random vectors and compares those. It returns
`(rt_outputs, torch_outputs)` for further checks.

Options: `check_names=False` where PyTorch decomposes an op into other nodes;
`scalar_nodes=True` (or the indices of the outputs it applies to) where an
output is add, sub, mul or div of a plain Python number: rtorch_py then records
R torch's node, that of libtorch's Scalar overload (MulBackward1, one input),
where PyTorch, which wraps the number in a tensor, records MulBackward0;
`atol`/`rtol` (defaults by dtype: float32 1e-5/1e-4, float64 1e-10/1e-7).
Non-array arguments (numbers, lists, None) are passed to `fn` unchanged.
`T.float64` etc. give the dtype in either library; mind that `T.tensor(2.0)` is
1-d in rtorch_py (R has no scalars) but 0-d in PyTorch.

`gradcheck(fn, *arrays)` runs `rtorch_py.autograd_gradcheck` on float64 copies
of the arrays (float inputs require grad; or one bool per input).
`assert_same(rt_tensor, torch_tensor, what)` compares shape, dtype and values.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pytest
import torch

import rtorch_py as rt

__all__ = ["RT", "check_vs_torch", "gradcheck", "rand", "to_torch", "assert_same",
           "TORCH_DTYPE", "ROOT", "needs_r", "run_r", "SCALAR_NODES", "onednn_platform",
           "passes_in_forked_child"]

# --------------------------------------------------------------------------
# Running R: `rtorch-py run` in a subprocess (a fresh embedded R, as users get it)

ROOT = Path(__file__).resolve().parents[1]
R_RUNNER = [sys.executable, "-m", "rtorch_py.tools.cli"]


def _have_r() -> bool:
    try:
        import rpy2  # noqa: F401
    except ImportError:
        return False
    return shutil.which("R") is not None


needs_r = pytest.mark.skipif(not _have_r(), reason="R and rpy2 are needed for the R bridge")


def run_r(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`rtorch-py run ARGS...` from the repository root, output captured."""
    full_env = dict(os.environ)
    # the tests' own R helpers (tests/r_support.py: rtorch_live_objects)
    full_env["RTORCH_PY_R_EXTENSIONS"] = "r_support"
    full_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "tests"), full_env.get("PYTHONPATH", "")) if p)
    full_env.update(env or {})
    return subprocess.run([*R_RUNNER, "run", *args], capture_output=True, text=True,
                       cwd=ROOT, env=full_env, timeout=timeout)


TORCH_DTYPE = {
    np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
    np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64,
    np.dtype(np.bool_): torch.bool,
}


class _RTNamespace:
    """`T.cat` -> rtorch_py.torch_cat; `T.float64` -> rtorch_py.torch_float64()."""

    _DTYPES = {"float32": "torch_float32", "float64": "torch_float64", "float": "torch_float",
               "double": "torch_double", "int32": "torch_int32", "int64": "torch_int64",
               "long": "torch_long", "int": "torch_int", "bool": "torch_bool"}

    def __getattr__(self, name: str) -> Any:
        if name in self._DTYPES:
            return getattr(rt, self._DTYPES[name])()
        for cand in ("torch_" + name, name):
            if hasattr(rt, cand):
                return getattr(rt, cand)
        if hasattr(rt.ops, name):
            return getattr(rt.ops, name)
        raise AttributeError(f"rtorch_py has no torch_{name} (nor {name})")

    def __repr__(self) -> str:
        return "RT"


RT = _RTNamespace()

_rng = np.random.default_rng(1234)


def rand(*shape: int, dtype: Any = np.float64, low: float = -2.0, high: float = 2.0,
         away_from_zero: float = 0.0) -> np.ndarray:
    """Uniform random array; `away_from_zero` keeps |x| >= that (for log, div, ...)."""
    a = _rng.uniform(low, high, size=shape)
    if away_from_zero:
        a = np.where(np.abs(a) < away_from_zero, np.sign(a + 1e-12) * away_from_zero, a)
    return np.asarray(a, dtype=dtype)


def to_torch(x: Any) -> Any:
    """An rtorch_py tensor's values as a torch tensor (no grad)."""
    return torch.from_numpy(np.array(rt.as_array(x), copy=True))


def _flat(out: Any) -> list:
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    return [out]


def _np(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:  # (sparse: compared by their dense values)
            x = x.to_dense()
        return x.detach().numpy(force=True)
    if isinstance(x, rt.Tensor):
        if x.layout is not rt.tensor.strided:
            x = x.to_dense()
        return np.asarray(x.data)
    return np.asarray(x)


def _tol(dtype: np.dtype, atol: float | None, rtol: float | None) -> tuple:
    if dtype == np.float32:
        return (1e-5 if atol is None else atol), (1e-4 if rtol is None else rtol)
    return (1e-10 if atol is None else atol), (1e-7 if rtol is None else rtol)


def assert_same(r: Any, t: Any, what: str = "output", atol: float | None = None,
                rtol: float | None = None, check_dtype: bool = True) -> None:
    """An rtorch_py tensor equals a torch tensor: shape, dtype and values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(r, rt.Tensor), f"{what}: expected a tensor, got {type(r).__name__}"
        assert repr(r.layout) == str(t.layout).replace(".", "_"), \
            f"{what}: layout {r.layout!r} != torch's {t.layout}"
        rd, td = _np(r), _np(t)
        assert rd.shape == td.shape, f"{what}: shape {rd.shape} != torch's {td.shape}"
        if check_dtype:
            assert rd.dtype == td.dtype, f"{what}: dtype {rd.dtype} != torch's {td.dtype}"
        if td.dtype.kind in "fc":  # (complex: the tolerance of its real parts)
            a, rr = _tol(np.zeros(0, td.dtype).real.dtype, atol, rtol)
            np.testing.assert_allclose(rd, td, atol=a, rtol=rr, err_msg=what, equal_nan=True)
        else:
            np.testing.assert_array_equal(rd, td, err_msg=what)
    else:
        assert r == t, f"{what}: {r!r} != torch's {t!r}"


def _leaves(arrays: Sequence[Any], requires_grad: Any) -> tuple:
    if isinstance(requires_grad, bool):
        flags = [requires_grad and isinstance(a, np.ndarray) and a.dtype.kind == "f"
                 for a in arrays]
    else:
        flags = list(requires_grad)
        assert len(flags) == len(arrays), "requires_grad needs one flag per input"
    rts, tts = [], []
    for a, f in zip(arrays, flags):
        if isinstance(a, np.ndarray):
            rts.append(rt.torch_tensor(a.copy(), requires_grad=f))
            tts.append(torch.from_numpy(a.copy()).requires_grad_(f))
        else:  # numbers, lists, None...: passed through unchanged
            rts.append(a)
            tts.append(a)
    return rts, tts, flags


# The node a plain number operand gives in R torch (and rtorch_py, from R and
# Python alike: libtorch's Scalar overload) for the node PyTorch gives it.
SCALAR_NODES = {"AddBackward0": "AddBackward1", "SubBackward0": "SubBackward1",
                "MulBackward0": "MulBackward1", "DivBackward0": "DivBackward1"}


def check_vs_torch(fn: Callable, *arrays: Any, requires_grad: Any = True,
                   atol: float | None = None, rtol: float | None = None,
                   check_names: bool = True, second_order: bool = False,
                   seed: int = 0, scalar_nodes: Any = False) -> tuple:
    """Run `fn(T, *tensors)` in both libraries; compare outputs, grad_fn names, grads.

    `arrays` are NumPy arrays (become leaf tensors of the same dtype) or other
    values passed as they are. See the module docstring.
    """
    rng = np.random.default_rng(seed)
    rts, tts, flags = _leaves(arrays, requires_grad)
    r_out, t_out = fn(RT, *rts), fn(torch, *tts)
    r_flat, t_flat = _flat(r_out), _flat(t_out)
    assert len(r_flat) == len(t_flat), f"{len(r_flat)} outputs, torch gives {len(t_flat)}"
    for i, (r, t) in enumerate(zip(r_flat, t_flat)):
        assert_same(r, t, f"output {i}", atol, rtol)
        if isinstance(t, torch.Tensor):
            assert r.requires_grad == t.requires_grad, \
                f"output {i}: requires_grad {r.requires_grad} != torch's {t.requires_grad}"
            if check_names and t.grad_fn is not None:
                assert r.grad_fn is not None, \
                    f"output {i}: no grad_fn, torch has {type(t.grad_fn).__name__}"
                want = type(t.grad_fn).__name__
                if scalar_nodes is True or (scalar_nodes and i in scalar_nodes):
                    want = SCALAR_NODES.get(want, want)
                assert r.grad_fn.name == want, \
                    f"output {i}: grad_fn {r.grad_fn.name} != {want} (torch's " \
                    f"{type(t.grad_fn).__name__})"

    pairs = [(r, t) for r, t in zip(r_flat, t_flat)
             if isinstance(t, torch.Tensor) and t.requires_grad]
    wrt = [i for i, f in enumerate(flags) if f]
    if not pairs or not wrt:
        return r_out, t_out
    ups = [rng.standard_normal(t.shape).astype(_np(t).dtype) for _, t in pairs]
    r_g = rt.autograd_grad([r for r, _ in pairs], [rts[i] for i in wrt],
                           grad_outputs=[rt.torch_tensor(u) for u in ups],
                           allow_unused=True, create_graph=second_order,
                           retain_graph=True)
    t_g = torch.autograd.grad([t for _, t in pairs], [tts[i] for i in wrt],
                              grad_outputs=[torch.from_numpy(u) for u in ups],
                              allow_unused=True, create_graph=second_order)
    for i, rg, tg in zip(wrt, r_g, t_g):
        if tg is None:
            assert rg is None or not np.any(_np(rg)), f"grad of input {i}: torch has none"
            continue
        assert rg is not None, f"grad of input {i} is None; torch has one"
        assert_same(rg, tg, f"grad of input {i}", atol, rtol)

    if second_order:
        used = [k for k, tg in enumerate(t_g) if tg is not None and tg.requires_grad]
        if not used:
            return r_out, t_out
        vs = [rng.standard_normal(t_g[k].shape).astype(_np(t_g[k]).dtype) for k in used]
        # A first-order gradient with no graph is constant: it adds nothing here
        # (PyTorch may still connect it, with zero derivative, e.g. relu).
        r_used = [(k, v) for k, v in zip(used, vs) if r_g[k].requires_grad]
        r_gg = rt.autograd_grad([r_g[k] for k, _ in r_used], [rts[i] for i in wrt],
                                grad_outputs=[rt.torch_tensor(v) for _, v in r_used],
                                allow_unused=True) if r_used else [None] * len(wrt)
        t_gg = torch.autograd.grad([t_g[k] for k in used], [tts[i] for i in wrt],
                                   grad_outputs=[torch.from_numpy(v) for v in vs],
                                   allow_unused=True)
        for i, rg, tg in zip(wrt, r_gg, t_gg):
            if tg is None:
                assert rg is None or not np.any(_np(rg)), \
                    f"2nd-order grad of input {i}: torch has none"
                continue
            if rg is None:  # no graph here; PyTorch's must then be all zeros
                assert not np.any(_np(tg)), f"2nd-order grad of input {i} is None; torch's isn't 0"
                continue
            assert_same(rg, tg, f"2nd-order grad of input {i}", atol, rtol)
    return r_out, t_out


def gradcheck(fn: Callable, *arrays: Any, requires_grad: Any = True, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """Finite differences vs analytical gradients of `fn(T, *tensors)` in float64
    (via rtorch_py.autograd_gradcheck); raises GradcheckError on a mismatch."""
    arrays = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
              else a for a in arrays]
    rts, _, _ = _leaves(arrays, requires_grad)
    return rt.autograd_gradcheck(lambda *ts: fn(RT, *ts), rts, eps=eps, atol=atol, rtol=rtol)


def passes_in_forked_child(check: Callable[[], bool], what: str) -> bool:
    """Whether check() returns true in a forked child (which must finish within a
    minute: GNU OpenMP's pool would hang a child that used it)."""
    import time
    pid = os.fork()
    if pid == 0:
        os._exit(0 if check() else 1)
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.1)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child did not finish its {what}")


# oneDNN's wheel (onednn-cpu-gomp) exists for x86-64 Linux only: its tests
# skip elsewhere
onednn_platform = pytest.mark.skipif(
    not (sys.platform == "linux" and platform.machine() == "x86_64"),
    reason="onednn-cpu-gomp is installed on x86-64 Linux only")
