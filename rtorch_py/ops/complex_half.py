"""complex32 (torch_chalf(), libtorch's ComplexHalf) at the ops' door.

NumPy has no complex32: a complex32 tensor holds complex64 values whose parts are
float16 numbers (`tensor.ComplexHalfArray`), as bfloat16 is computed in float32
and rounded. libtorch's CPU kernels take ComplexHalf for a few ops only (PyTorch
2.13 warns "ComplexHalf support is experimental"); once the dtype is named, this
mode is active (rtorch_py.modes.COMPLEX32, the outermost) and every op call passes
here:

- an op libtorch runs on ComplexHalf (declared `complex_half=True`, or "real") runs
  on the complex64 values and its result is rounded back: complex results of
  complex32 operands (by PyTorch's promotion) or asked for with
  `dtype = torch_chalf()` become complex32, and the real results of `abs`, `real`,
  `view_as_real`... float16 (those computed in float32 by the ops declared "real");
  in place, the values written are rounded;
- any other op is refused as libtorch refuses it: `"exp_vml_cpu" not implemented
  for 'ComplexHalf'`, naming libtorch's kernel where its declaration names one
  (`complex_half="exp_vml_cpu"`), else the op.

Which ops libtorch 2.13's CPU kernels run on ComplexHalf was tried one by one
against PyTorch (tests/test_complex32.py); the declarations say so (ops/registry.py).

Derivatives run unchecked, on the complex64 values (libtorch's backward kernels
for these ops take ComplexHalf): a complex32 leaf's gradient is complex64 here
(PyTorch's is complex32, its values the same to float16 precision).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from ..engine import thread_state
from ..modes import COMPLEX32, Mode, define
from ..tensor import ComplexHalfArray, Tensor, complex32, complex_half, dtype, result_type
from .registry import REGISTRY

_running = threading.local()  # inside an op already let through: its own calls pass
_engine_state = thread_state()


def involved(args: tuple, kwargs: dict) -> bool:
    """Whether a complex32 tensor (or the dtype itself) is among the arguments."""
    for v in (*args, *kwargs.values()):
        if v is complex32 or _holds_complex32(v):
            return True
        if type(v) in (list, tuple) and any(_holds_complex32(t) for t in v):
            return True
    return False


def _holds_complex32(v: Any) -> bool:
    # (a tensor of another layout is a subclass, and has no array to look at)
    return type(v) is Tensor and type(v.data) is ComplexHalfArray


class _ComplexHalfMode(Mode):
    order, functions = COMPLEX32, False

    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """The op `name` (fn: the rest of the stack) as libtorch runs it on ComplexHalf."""
        if getattr(_running, "on", False) or _engine_state.in_backward or \
                not involved(args, kwargs):
            return fn(*args, **kwargs)  # (derivatives use what libtorch has for ComplexHalf)
        policy = REGISTRY[name].complex_half
        if policy is False or (isinstance(policy, str) and policy != "real"):
            raise NotImplementedError(f'"{policy or name}" not implemented for \'ComplexHalf\'')
        _running.on = True
        try:
            result = fn(*args, **kwargs)
        finally:
            _running.on = False
        return _narrowed(policy == "real", result, args, kwargs)


define(_ComplexHalfMode())


def _operands(args: tuple, kwargs: dict) -> list:
    out = []
    for v in (*args, *kwargs.values()):
        if type(v) is Tensor:
            out.append(v)
        elif type(v) in (list, tuple):
            out.extend(t for t in v if type(t) is Tensor)
    return out


def _narrowed(real: bool, result: Any, args: tuple, kwargs: dict) -> Any:
    operands = _operands(args, kwargs)
    asked = next((v for v in (*args, *kwargs.values()) if isinstance(v, dtype)), None)
    narrow = asked is complex32 if asked is not None else \
        bool(operands) and result_type(*operands) is complex32
    chalf = [t.data for t in operands if type(t.data) is ComplexHalfArray]
    outs = result if type(result) in (list, tuple) else [result]
    for out in outs:
        if not isinstance(out, Tensor):
            continue
        data = out.data
        if type(data) is ComplexHalfArray:  # (in place, or a view: its values rounded)
            if data.flags.writeable:
                data[...] = complex_half(data)
        elif narrow and data.dtype == np.complex64:
            shared = any(np.shares_memory(data, c) for c in chalf)
            out.data = data.view(ComplexHalfArray) if shared else complex_half(data)
        elif chalf and real and data.dtype == np.float32:
            out.data = data.astype(np.float16)
    return result
