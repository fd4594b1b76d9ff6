"""The `_out` forms: `torch_<name>_out(out, ...)` writes `torch_<name>(...)`'s
result into `out` and returns `out`, as libtorch's out= overloads (and R
torch's `torch_*_out` functions) do. Made here from the registry for every op
declared as a `torch_*` function with one tensor result (its return
annotation says `Tensor`, or `Any` and the call gives one), in Python (0-based,
from the op itself) and in R (from the op's R form, `rtorch_py/r/tables.py`).

As in libtorch: `out` takes the result's values cast to its own dtype (a cast
that loses kind, e.g. float into int, is refused); an `out` of another shape is
resized (with libtorch's warning when it held elements, except for the
factories, whose size argument is the point); ops with a `dtype` argument get
`out`'s dtype when none is given; nothing is recorded for autograd, so a
call where an argument (or `out`) requires grad is refused while grad mode is
on. A `_backward` op's tensor is called `grad_input`, as in libtorch.
"""
from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable

import numpy as np

from ..engine import bump_version, is_grad_enabled
from ..tensor import Tensor
from .registry import REGISTRY, OpSpec


def out_name(spec: OpSpec) -> str | None:
    """`torch_<name>_out` when the op gets an out form, else None."""
    if spec.function is not True or spec.name.endswith("_"):
        return None
    ret = inspect.signature(spec.fn).return_annotation
    if ret not in ("Tensor", "Any", Tensor, Any):
        return None
    return spec.function_name + "_out"


def _can_cast(src: np.dtype, dst: np.dtype) -> bool:
    """libtorch's canCast: no complex into non-complex, no floating into
    integral, nothing but bool into bool."""
    if src.kind == "c" and dst.kind != "c":
        return False
    if src.kind == "f" and dst.kind in "iub":
        return False
    return not (src.kind != "b" and dst.kind == "b")


def write_into(out: Any, result: Any, name: str, plain: str, resize_warns: bool = True) -> Tensor:
    """`result` written into `out` (resized if needed); `out` returned."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}: the first argument is the tensor to write the result into; "
                        f"got {type(out).__name__}")
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}: {plain}() gives {type(result).__name__}, not one tensor, "
                        f"for these arguments; {name} writes one tensor, call {plain}() instead")
    if is_grad_enabled():
        if out.requires_grad and out.is_leaf:
            raise RuntimeError(f"{name}: out is a leaf that requires grad; it can't be written "
                               "in place (write under with_no_grad(), or pass a tensor that "
                               "doesn't require grad)")
        if out.requires_grad or result.requires_grad:
            raise RuntimeError(f"{name}: functions with out= don't support automatic "
                               f"differentiation, but an argument requires grad; call {plain}() "
                               "for a differentiable result, or write under with_no_grad()")
    res, dst = result.data, out.data.dtype
    if not _can_cast(res.dtype, dst):
        raise RuntimeError(f"{name}: result type {result.dtype.r_name} can't be cast to the "
                           f"desired output type {out.dtype.r_name} (out's dtype); pass an out "
                           f"of dtype {result.dtype.r_name}")
    if out.data.shape == res.shape:
        np.copyto(out.data, res, casting="unsafe")
    else:
        if resize_warns and out.data.size:
            warnings.warn(f"{name}: an output with one or more elements was resized since it had "
                          f"shape {list(out.data.shape)}, which does not match the required "
                          f"output shape {list(res.shape)}; pass an empty out (or one of the "
                          "right shape) to avoid this", UserWarning, stacklevel=3)
        out.data = np.array(res, dtype=dst, copy=True)
    bump_version(out)
    return out


def out_form(spec: OpSpec, fn: Callable) -> Callable:
    """`fn` (the op, or its R form) as `torch_<name>_out(out, ...)`."""
    name = out_name(spec)
    plain = spec.function_name
    out_arg = "grad_input" if spec.name.endswith("_backward") else "out"
    params = inspect.signature(spec.fn).parameters
    d = params.get("dtype")   # where a positional dtype would be (keyword-only: never)
    dtype_at = None if d is None else \
        10 ** 6 if d.kind is inspect.Parameter.KEYWORD_ONLY else list(params).index("dtype")
    factory = "size" in params

    def call(*args: Any, **kw: Any) -> Tensor:
        if out_arg in kw:
            out = kw.pop(out_arg)
        elif args:
            out, args = args[0], args[1:]
        else:
            raise TypeError(f"{name}() needs the tensor to write into: as its first argument "
                            f"or as {out_arg} =")
        if dtype_at is not None and "dtype" not in kw and len(args) <= dtype_at and \
                isinstance(out, Tensor):
            kw["dtype"] = out.dtype
        return write_into(out, fn(*args, **kw), name, plain, resize_warns=not factory)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{plain}(...) written into `{out_arg}` (returned); see rtorch_py.ops.out_forms"
    return call


def out_functions() -> dict[str, Callable]:
    """`torch_<name>_out` for Python, for every op that has one."""
    forms = {}
    for spec in REGISTRY.values():
        name = out_name(spec)
        if name is not None and name not in forms:
            forms[name] = out_form(spec, spec.fn)
    return forms
