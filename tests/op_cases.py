"""The generated op tests' cases: every registered op on every sample input of
its declaration (`rtorch_py/ops/samples.py`), with the operands made as NumPy
arrays, so the same values go to rtorch_py, to PyTorch and to R.

Used by tests/test_op_registry.py, and by tests/r_op_calls.py in a subprocess
whose embedded R calls each op.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from rtorch_py.ops import REGISTRY, OpSpec
from rtorch_py.ops.samples import Sample, T

FLOAT_DTYPES = (np.float32, np.float64)


@dataclass
class Case:
    spec: OpSpec
    index: int
    sample: Sample

    @property
    def id(self) -> str:
        return f"{self.spec.key}-{self.index}"


def cases() -> list[Case]:
    return [Case(spec, i, s) for spec in REGISTRY.values() if spec.samples
            for i, s in enumerate(spec.samples())]


class Slot:
    """Where the n-th tensor operand goes in the rebuilt arguments."""

    def __init__(self, n: int) -> None:
        self.n = n


def make_array(t: T, float_dtype: Any, rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(t.dtype) if t.dtype else np.dtype(float_dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(t.shape) < 0.5)
    if dtype.kind in "iu":
        return rng.integers(int(t.low), int(t.high), size=t.shape).astype(dtype)
    if t.distinct:
        n = int(np.prod(t.shape))
        vals = (rng.permutation(n) + rng.random(n) * 0.5) / max(n, 1) * (t.high - t.low) + t.low
        return vals.reshape(t.shape).astype(dtype)
    x = rng.uniform(t.low, t.high, size=t.shape)
    if t.away_from_zero:
        x = np.sign(x + (x == 0)) * (0.5 + np.abs(x))
    if t.sorted:
        x = np.sort(x, axis=-1)
    return np.asarray(x, dtype=dtype)


def materialize(sample: Sample, float_dtype: Any, seed: int = 0) -> tuple:
    """(arrays, grad flags, rebuild): `rebuild(tensors)` gives (args, kwargs)
    with the sample's tensor operands replaced, in order, by `tensors`."""
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    flags: list[bool] = []

    def walk(v: Any) -> Any:
        if isinstance(v, T):
            a = make_array(v, float_dtype, rng)
            arrays.append(a)
            flags.append(v.requires_grad and a.dtype.kind == "f")
            return Slot(len(arrays) - 1)
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    args = [walk(a) for a in sample.args]
    kwargs = {k: walk(v) for k, v in sample.kwargs.items()}

    def rebuild(tensors: Any) -> tuple:
        def put(v: Any) -> Any:
            if isinstance(v, Slot):
                return tensors[v.n]
            if isinstance(v, list):
                return [put(x) for x in v]
            return v
        return [put(a) for a in args], {k: put(v) for k, v in kwargs.items()}
    return arrays, flags, rebuild


def bound_arguments(spec: OpSpec, args: list, kwargs: dict) -> list[tuple[str, Any, str]]:
    """The call's arguments as (parameter name, value, kind), kind being
    "dim", "new_dim", "position" or "" (what R gets 1-based; not the dims R torch
    gives as they are, the op's R fact `r_dims_as_given`)."""
    sig = inspect.signature(spec.fn)
    bound = sig.bind(*args, **kwargs)
    out = []
    for name, value in bound.arguments.items():
        kind = ("" if name in spec.r.get("r_dims_as_given", ()) else
                "dim" if name in spec.dims else "new_dim" if name in spec.new_dims else
                "position" if name in spec.indices else "")
        param = sig.parameters[name]
        if param.kind is param.VAR_POSITIONAL:
            out.extend((name, v, kind) for v in value)
        else:
            out.append((name, value, kind))
    return out


# The ops with a Scalar overload, which R torch calls for a plain number operand:
# rtorch_py records its node (MulBackward1) from Python too, where PyTorch's
# Python wraps the number (MulBackward0); libtorch's own overload is the oracle.
SCALAR_OVERLOADS = {"add", "sub", "mul", "div", "multiply", "subtract", "divide",
                    "true_divide"}


def torch_call(spec: OpSpec) -> Callable:
    """PyTorch's form of the op: `torch.<name>` where it exists, else the method
    (the Scalar overload for a plain number `other`, as R torch calls it)."""
    import torch
    name = spec.torch_name or spec.name
    if name in SCALAR_OVERLOADS:
        tensor_form = getattr(torch, name)
        scalar_form = getattr(torch.ops.aten, name).Scalar

        def call(self: Any, other: Any, *args: Any, **kw: Any) -> Any:
            number = type(other) in (bool, int, float)
            return (scalar_form if number else tensor_form)(self, other, *args, **kw)
        return call
    if spec.torch_name and "." in name:  # e.g. "linalg.det"
        obj = torch
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    if spec.function and hasattr(torch, name):
        return getattr(torch, name)
    return lambda self, *args, **kw: getattr(self, name)(*args, **kw)
