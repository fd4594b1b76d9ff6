"""What R's `jit_*` functions call (r_compat/R/jit.R): tracing R functions and
modules, calling script functions, saving and loading archives, `jit_ops`.

R gives tuples made by `jit_tuple()` as `JitTuple`s (`.jit_tuple_py`), so a
traced tuple stays a tuple; named lists arrive as named lists (TorchScript's
dicts), lists as lists.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..containers import NamedList
from ..jit import (CompilationUnit, JitTuple, ScriptFunction, ScriptModule, jit_compile,
                   jit_export_onnx, jit_load, jit_save, jit_save_for_mobile, jit_serialize,
                   jit_trace, jit_trace_module, jit_unserialize)
from ..jit.operators import Operator
from ..nn.module import Module
from .convert import RError, _list
from .modules import FRONTS


def _classname(module: Module) -> str:
    """A module's R class (R torch names script module classes after it)."""
    got = FRONTS.get(module)
    return got.classname if got is not None else type(module).__name__


def _tracer_failure(e: Exception) -> RuntimeError:
    """A failed trace as R torch's tracer (cpp_trace_function) reports it: libtorch's
    message, which ends with libtorch's C++ backtrace and its line break (the
    backtrace is the build machine's, not reproduced here), then ": " and the R
    error the traced function met (none when a check of libtorch's failed: an R
    error is signalled as itself)."""
    return RuntimeError(f"{e}\n: ")


def trace_function(fn: Any, inputs: Any, strict: bool) -> ScriptFunction:
    try:
        return jit_trace(fn, *_list(inputs), strict=bool(strict))
    except RError:
        raise
    except Exception as e:
        raise _tracer_failure(e) from e


def trace_module(module: Module, methods: Any, inputs: Any, strict: bool,
                 respect_mode: bool) -> ScriptModule:
    methods = dict(methods.items()) if isinstance(methods, NamedList) else {}
    examples = dict(inputs.items()) if isinstance(inputs, NamedList) else {}
    try:
        return jit_trace_module(module, strict=bool(strict), respect_mode=bool(respect_mode),
                                methods=methods, classname=_classname,
                                **{k: tuple(_list(v)) for k, v in examples.items()})
    except RError:
        raise
    except Exception as e:
        raise _tracer_failure(e) from e


def call(fn: Any, args: Any) -> Any:
    """A script function or module called with R's arguments."""
    return fn(*_list(args))


def tuple_py(values: Any) -> JitTuple:
    if isinstance(values, NamedList):
        return JitTuple(values.values(), values.names())
    return JitTuple(_list(values))


def tuple_values(t: JitTuple) -> Any:
    return NamedList(t.names, list(t)) if t.names else list(t)


def graph(obj: Any) -> str:
    return str(obj.graph)


def find_method(module: Any, name: str) -> ScriptFunction | None:
    return module.find_method(name) if isinstance(module, ScriptModule) else None


def method_names(module: ScriptModule) -> list:
    return list(module.method_names)


def unserialize(raw: Any) -> ScriptModule:
    data = raw.tobytes() if isinstance(raw, np.ndarray) else raw
    return jit_unserialize(data)


def compilation_unit_get(cu: CompilationUnit, name: str) -> ScriptFunction | None:
    return cu.__dict__["_functions"].get(name)


def compilation_unit_names(cu: CompilationUnit) -> list:
    return cu.names


def ops_call(name: str, args: Any) -> Any:
    return Operator(name)(*_list(args))


def ops_info(name: str) -> str:
    return repr(Operator(name))


R_FUNCTIONS: dict[str, Callable] = {
    ".jit_trace_fn": trace_function, ".jit_trace_module": trace_module, ".jit_call": call,
    ".jit_tuple_py": tuple_py, ".jit_tuple_values": tuple_values, ".jit_graph": graph,
    ".jit_find_method": find_method, ".jit_method_names": method_names,
    ".jit_save": jit_save, ".jit_save_for_mobile": jit_save_for_mobile,
    ".jit_load": jit_load, ".jit_serialize": jit_serialize,
    ".jit_unserialize": unserialize, ".jit_compile": jit_compile,
    ".jit_cu_get": compilation_unit_get, ".jit_cu_names": compilation_unit_names,
    ".jit_ops_call": ops_call, ".jit_ops_info": ops_info, ".jit_export_onnx": jit_export_onnx,
}
