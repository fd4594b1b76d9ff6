"""R values as the engine's: how the bridge converts.

The C bridge (`r_compat/src/`) turns R arguments into Python values
(R doubles -> float, integers -> int, logicals -> bool, longer vectors and
arrays -> NumPy arrays through `_from_r_array`, lists -> list/NamedList, our
external pointers -> the very same Python object, anything else -> an R
object handle) and reads R_CLASSES to give results their R class. The helpers
here turn R values into the engine's (R's 1-based counting: `one_based.py`).

This module imports no R: it can be used and tested without it.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from .. import distributions
from ..constructors import Generator, MemoryFormat, QScheme
from ..engine import Node, RemovableHandle
from ..function import AutogradContext, NamedList
from ..jit import CompilationUnit, JitTuple, ScriptFunction
from ..nn.module import Module
from ..nn.packed import PackedSequence
from ..nn.utils import nn_utils_weight_norm
from ..tensor import (Layout, Storage, Tensor, as_dtype, default_complex, dtype,
                      get_default_dtype, wrap)


class RError(RuntimeError):
    """An R error raised inside an R callback, carried through Python.

    `condition` holds the original R condition (an RObject) so the bridge can
    re-signal it in R unchanged."""

    def __init__(self, message: str, condition: Any = None) -> None:
        super().__init__(message)
        self.condition = condition


class UndefinedTensor:
    """R torch's undefined tensor: what `x$grad` is before any backward."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "torch_tensor\n[ Tensor (undefined) ]"

    def __getattr__(self, name: str) -> Any:
        # An op given an undefined tensor reads its data or autograd fields.
        raise RuntimeError("this tensor is undefined (as `x$grad` is before a backward() "
                           "reached x): it has no values to operate on; check "
                           "is_undefined_tensor() first")


UNDEFINED = UndefinedTensor()


class MissingMember:
    """What `x$name` finds when a tensor has no method or field `name`: R makes
    it a function that says so when called."""

    __slots__ = ()


MISSING = MissingMember()


class Scope:
    """A grad-mode or anomaly scope opened from R and closed by on.exit."""

    __slots__ = ("restore",)

    def __init__(self, restore: Callable[[], None]) -> None:
        self.restore = restore


# Python type -> R class attribute of the external pointer holding it.
# The tensor must come first (the bridge's fast path relies on it).
R_CLASSES: list = [
    (Tensor, ("torch_tensor", "R7")),
    (UndefinedTensor, ("torch_tensor", "R7")),
    (dtype, ("torch_dtype", "R7")),
    (Layout, ("torch_layout", "R7")),
    (Node, ("autograd_node", "R6")),
    (AutogradContext, ("torch_autograd_context", "R6")),
    (RemovableHandle, ("torch_hook", "R6")),
    (Scope, ("rtorch_scope",)),
    (MissingMember, ("rtorch_missing_member",)),
    (Generator, ("torch_generator", "R7")),
    (MemoryFormat, ("torch_memory_format", "R7")),
    (QScheme, ("torch_qscheme", "R6")),
    (Storage, ("torch_storage", "R6")),
    (Module, ("nn_py_module",)),  # (R gets its callable from it: r_compat/R/nn.R)
    (PackedSequence, ("PackedSequence", "R6")),
    (nn_utils_weight_norm, ("rtorch_weight_norm",)),
    # distributions and constraints: R torch's class and its parents' (torch_Normal,
    # ..., torch_Distribution), then R6's
    *[(cls, tuple(c.r_class for c in cls.__mro__ if "r_class" in vars(c)) + ("R6",))
      for cls in (*distributions.CLASSES, *distributions.CONSTRAINT_CLASSES)],
    (ScriptFunction, ("rtorch_script_function",)),  # (r_compat/R/jit.R)
    (JitTuple, ("rtorch_jit_tuple",)),
    (CompilationUnit, ("torch_compilation_unit",)),
]


# --------------------------------------------------------------------------
# Conversions used by the C bridge

# R's vector types: double, integer, factor, logical, raw (uint8), complex
_R_DTYPES = {"d": np.float64, "i": np.int32, "f": np.int32, "l": np.int32, "r": np.uint8,
             "c": np.complex128, "I": np.int64}  # ("I": bit64's integer64, stored in doubles)


def _from_r_array(code: str, buf: bytearray, dims: tuple | None) -> np.ndarray:
    """An R atomic vector's data (a private copy) as a NumPy array with R's
    logical layout: `a[i, j]` is the R matrix's `[i, j]`."""
    arr = np.frombuffer(buf, dtype=_R_DTYPES[code])
    if code == "l":
        arr = arr != 0
    if dims is not None:
        arr = arr.reshape(dims, order="F")
    return arr


# Python's words for a call without a required argument ("f() missing 1 required
# positional argument: 'other'"); R says it its own way.
_MISSING = re.compile(r"^\S*\(\) missing \d+ required (?:positional|keyword-only) "
                      r"arguments?: '([^']+)'")


def _error_message(exc: BaseException) -> str:
    msg = str(exc) if not isinstance(exc, KeyError) else str(exc.args[0] if exc.args else exc)
    if isinstance(exc, TypeError) and (missing := _MISSING.match(msg)):
        msg = f'argument "{missing.group(1)}" is missing, with no default'
    notes = getattr(exc, "__notes__", None)
    if notes and not isinstance(exc, RError):
        msg = "\n".join([msg, *notes])
    return msg or type(exc).__name__


def _undef(x: Any) -> Any:
    return None if x is UNDEFINED else x


def _r_value(x: Any) -> Any:
    """A value R will see: None tensors (gradients) are undefined tensors."""
    return UNDEFINED if x is None else x


# --------------------------------------------------------------------------
# R values as the engine's


def _list(x: Any) -> list:
    if isinstance(x, NamedList):
        return x.values()
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _r_tensor(x: Any) -> Tensor:
    """Any R value as a tensor, as R torch's torch_tensor() makes it (a number is
    a one-element vector: doubles float32, integers int64, logicals bool)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, complex)):
        x = np.asarray([x], dtype=np.bool_ if isinstance(x, bool) else
                       np.int32 if isinstance(x, int) else
                       np.complex128 if isinstance(x, complex) else np.float64)
    return wrap(_r_data(np.asarray(x)))


def _tensor_of(x: Any) -> Any:
    """R vectors given where a tensor is expected become tensors, as in R torch
    (doubles float32, integers int64, logicals bool)."""
    if isinstance(x, np.ndarray):
        return wrap(_r_data(x))
    return x


# Creation


def _r_data(data: Any, dtype: Any = None) -> np.ndarray | Any:
    """R data -> an array with torch's layout and, unless `dtype` says
    otherwise, R torch's defaults (doubles -> the default dtype, float32 unless
    set, integers -> int64, raw -> uint8, complex -> complex64)."""
    if isinstance(data, np.ndarray):
        if dtype is not None:
            target = as_dtype(dtype).np
        elif data.dtype == np.float64:
            target = get_default_dtype().np
        elif data.dtype == np.complex128:  # R complex: cfloat, as R torch (doubles: float)
            target = default_complex().np
        else:
            target = np.int64 if data.dtype == np.int32 else None
        return np.ascontiguousarray(data, dtype=target)
    if isinstance(data, (list, NamedList)):
        values = _list(data)
        if values and all(isinstance(v, Tensor) for v in values):
            return np.stack([v.data for v in values])
        if any(isinstance(v, np.ndarray) for v in values):  # list(c(1, 2), c(3, 4)): rows
            return _r_data(np.array([np.asarray(v) for v in values]), dtype)
        return values
    return data


_R_TYPES = {"closure": "function", "builtin": "function", "special": "function",
            "environment": "environment", "complex": "complex", "symbol": "symbol",
            "language": "call", "S4": "S4 object", "raw": "raw"}


def _r_kind(v: Any) -> str:
    """How R would name a value that can't become a tensor."""
    if isinstance(v, str) or (isinstance(v, list) and v and isinstance(v[0], str)):
        return "character"
    rtype = getattr(v, "rtype", None)
    if rtype is not None:
        return _R_TYPES.get(rtype, rtype)
    return type(v).__name__


def _check_r_data(data: Any) -> None:
    """Refuse what R torch refuses, in R's words and 1-based positions."""
    if isinstance(data, (list, NamedList)):
        values = _list(data)
        if values and all(isinstance(v, str) for v in values):
            raise TypeError("torch_tensor() can't make a tensor from character data; "
                            "give numeric, integer or logical vectors")
        lengths = []
        for i, v in enumerate(values, 1):
            if isinstance(v, (list, NamedList)):
                _check_r_data(v)
                lengths.append(len(_list(v)))
            elif isinstance(v, np.ndarray):
                lengths.append(v.size)
            elif isinstance(v, (bool, int, float, Tensor)):
                lengths.append(1 if not isinstance(v, Tensor) else v.numel())
            else:
                raise TypeError(f"torch_tensor() can't make a tensor from a {_r_kind(v)} "
                                f"(element {i} of the list); elements must be numeric, "
                                "integer or logical")
        if len(set(lengths)) > 1:
            raise ValueError("torch_tensor(): the list's elements must be numeric vectors of "
                             f"the same length, got lengths {', '.join(map(str, lengths))}")
    elif not isinstance(data, (np.ndarray, bool, int, float, complex, Tensor)):
        raise TypeError(f"torch_tensor() can't make a tensor from a {_r_kind(data)}; give a "
                        "numeric, integer, logical, raw or complex vector, matrix or array")
