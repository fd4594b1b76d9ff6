"""The tracer: a mode (rtorch_py.modes.TRACE) that records every call on tensors.

While a function runs under `trace()`, each op, nn functional form and
recurrence it calls reaches the tracer (`call`), which records one node with
its arguments (tensors as graph Values) and outputs. Calls made inside a
recorded call are not recorded again: the outermost call is the node, as
libtorch records `aten::linear`, not the matmul inside it. A module's parameters
and buffers become attribute values (read from the module each run); any other
tensor the traced code uses that the trace did not make is a constant.

A tensor's values leaving for Python or R during the trace (`x.item()`,
`bool(x)`, R's `as.numeric(x)`) make the trace depend on this input's values:
the tracer warns, as libtorch does (TracerWarning).
"""
from __future__ import annotations

import threading
import warnings
from typing import Any, Callable

from ..containers import NamedList
from ..modes import TRACE, pop_mode, push_mode
from ..tensor import Tensor
from .graph import Graph, Node, TensorType, Value, signature


class TracerWarning(UserWarning):
    """The trace may not generalise to other inputs."""


class Tracer:
    """Records the calls made in one thread while it is an active mode."""
    order = TRACE  # (its place in the stack: outside forward mode, autocast...)

    def __init__(self, attributes: dict | None = None) -> None:
        self.values: dict[int, Value] = {}   # id(tensor) -> its Value
        self.keep: list = []                 # the tensors of those ids, alive while tracing
        self.attributes = attributes or {}   # id(tensor) -> its path in the traced module
        self.nodes: list[Node] = []
        self.depth = 0
        self.thread = threading.get_ident()
        self.warnings: list[str] = []  # given when the trace ends (seen by its caller, even
                                       # one in R, whose traced function called back here)

    # -- the mode's two methods ----------------------------------------------
    def call(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        if self.depth or threading.get_ident() != self.thread:
            return fn(*args, **kwargs)
        self.depth += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            self.depth -= 1
        bound = signature(name).bind(*args, **kwargs)
        arguments = {k: self.operand(v) for k, v in bound.arguments.items()}
        self.nodes.append(Node(name, arguments, self.result(out)))
        return out

    def converted(self, x: Tensor, what: str) -> None:
        if self.depth or threading.get_ident() != self.thread:
            return
        v = self.values.get(id(x))
        if v is None and id(x) not in self.attributes:
            return  # (a constant: its values are the same every run)
        language = "R" if " R " in what else "Python"
        message = (f"Converting a tensor to {what} might cause the trace to be incorrect. We "
                   f"can't record the data flow of {language} values, so this value will be "
                   "treated as a constant in the future. This means that the trace might not "
                   "generalize to other inputs!")
        if message not in self.warnings:
            self.warnings.append(message)

    # -- values --------------------------------------------------------------
    def value(self, x: Tensor, kind: str, path: tuple = ()) -> Value:
        v = Value(kind, TensorType.of(x), path, x if kind == "const" else None)
        self.values[id(x)] = v
        self.keep.append(x)
        return v

    def operand(self, x: Any) -> Any:
        """An argument with each tensor as its Value (a new constant if unknown)."""
        if isinstance(x, Tensor):
            v = self.values.get(id(x))
            if v is not None:
                return v
            path = self.attributes.get(id(x))
            return self.value(x, "attr", path) if path is not None else self.value(x, "const")
        if isinstance(x, list):
            return [self.operand(v) for v in x]
        if isinstance(x, tuple):
            return tuple(self.operand(v) for v in x)
        if isinstance(x, NamedList):
            return NamedList(x.names(), [self.operand(v) for v in x.values()])
        if isinstance(x, dict):
            return {k: self.operand(v) for k, v in x.items()}
        return x

    def result(self, out: Any) -> Any:
        """A call's result with each tensor a new Value (an in-place op's tensor too)."""
        if isinstance(out, Tensor):
            return self.value(out, "output")
        if isinstance(out, tuple):
            return tuple(self.result(v) for v in out)
        if isinstance(out, list):
            return [self.result(v) for v in out]
        return out

    def input(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            return self.values.get(id(x)) or self.value(x, "input")
        if isinstance(x, tuple):
            return tuple(self.input(v) for v in x)
        if isinstance(x, list):
            return [self.input(v) for v in x]
        if isinstance(x, NamedList):
            return {k: self.input(v) for k, v in x.items()}
        if isinstance(x, dict):
            return {k: self.input(v) for k, v in x.items()}
        raise RuntimeError("Only tensors or (possibly nested) dict or tuples of tensors can be "
                           f"inputs to traced functions. Got {_type_name(x)}")

    def output(self, x: Any, strict: bool) -> Any:
        if isinstance(x, Tensor):
            return self.operand(x)
        if isinstance(x, tuple):
            return tuple(self.output(v, strict) for v in x)
        if isinstance(x, list):
            if strict:
                raise RuntimeError(_STRICT.format(kind="list", fix="tuple"))
            return [self.output(v, strict) for v in x]
        if isinstance(x, (dict, NamedList)):
            if strict:
                raise RuntimeError(_STRICT.format(kind="dict", fix="NamedTuple"))
            return {k: self.output(v, strict) for k, v in x.items()}
        raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors "
                           f"can be output from traced functions (got {_type_name(x)})")


_STRICT = ("Encountering a {kind} at the output of the tracer might cause the trace to be "
           "incorrect, this is only valid if the container structure does not change based on "
           "the module's inputs. Consider using a constant container instead (e.g. for `list`, "
           "use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you absolutely "
           "need this and know the side effects, pass strict = FALSE to jit_trace() to allow "
           "this behavior.")


def _type_name(x: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(x),
                                                                      type(x).__name__)


def trace(fn: Callable, inputs: tuple, strict: bool = True, module: Any = None,
          self_type: str | None = None, module_types: dict | None = None) -> Graph:
    """Run fn(*inputs), recording its calls: the traced Graph (`module`: the root
    module whose parameters and buffers become attribute values; `self_type`,
    `module_types`: the classes of it and its children, by path, for listings)."""
    tracer = Tracer(_attribute_paths(module) if module is not None else None)
    graph_inputs = [tracer.input(x) for x in inputs]
    push_mode(tracer)
    try:
        out = fn(*inputs)
    finally:
        pop_mode(tracer)
    for message in tracer.warnings:
        warnings.warn(TracerWarning(message), stacklevel=3)
    outputs = tracer.output(out, strict)
    return Graph(graph_inputs, tracer.nodes, outputs, self_type, module_types or {})


def _attribute_paths(module: Any) -> dict[int, tuple]:
    """id(tensor) -> its path, for every parameter and buffer under module."""
    out: dict[int, tuple] = {}

    def visit(m: Any, prefix: tuple) -> None:
        for table in ("_parameters", "_buffers"):
            for name, t in m.__dict__.get(table, {}).items():
                if t is not None:
                    out.setdefault(id(t), prefix + (name,))
        for name, child in m.__dict__.get("_modules", {}).items():
            if child is not None:
                visit(child, prefix + (name,))
    visit(module, ())
    return out
