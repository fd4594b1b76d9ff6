"""Script functions and script modules: what tracing, loading and compiling give.

A `ScriptFunction` runs one method: a traced `Graph` (replayed on our ops) or a
TorchScript function read from a file or compiled (run by the interpreter). A
`ScriptModule` is a module (parameters, buffers, children, train/eval, state
dict: `rtorch_py.nn.Module`) whose methods are script functions: `forward`, or,
traced in both modes (R torch's `respect_mode`), `trainforward` and
`evalforward`, of which `forward` runs the one for the module's mode.

`jit_trace()` and `jit_trace_module()` are R torch's, in Python: the example
inputs are the traced function's arguments (tensors, and lists, tuples and
dicts of them).
"""
from __future__ import annotations

from typing import Any, Callable

from ..nn.module import Module
from ..tensor import Tensor
from .graph import Graph, format_graph, run
from .tracer import trace


# how libtorch reports an error raised while a script function runs
_FAILED = ("The following operation failed in the TorchScript interpreter.\n"
           "Traceback of TorchScript (most recent call last):\n")


class JitTuple(tuple):
    """A tuple that R's `jit_tuple()` made (its elements may be named): traced and
    run as a tuple."""

    def __new__(cls, values: Any, names: Any = None) -> "JitTuple":
        t = super().__new__(cls, values)
        t.names = list(names) if names else None
        return t


def jit_tuple(x: Any) -> tuple:
    """x (a list, tuple or dict) as a TorchScript tuple."""
    if isinstance(x, dict):
        return JitTuple(x.values(), list(x.keys()))
    if not isinstance(x, (list, tuple)):
        raise ValueError("jit_tuple() takes a list (R) or a list, tuple or dict (Python)")
    return JitTuple(x)


def jit_scalar(x: Any) -> Any:
    """x as a TorchScript scalar (in Python, numbers and strings already are)."""
    if isinstance(x, (list, tuple)):
        if len(x) != 1:
            raise ValueError("jit_scalar() needs a single value (length 1)")
        x = x[0]
    if not isinstance(x, (bool, int, float, str)):
        raise ValueError(f"jit_scalar() takes a number, a logical or a string, got "
                         f"{type(x).__name__}")
    return x


class GraphListing(str):
    """A graph's listing: prints as libtorch prints `traced$graph`."""

    def __repr__(self) -> str:
        return str(self)


class ScriptFunction:
    """One TorchScript function: a traced graph, or TorchScript code.

    `graph` is a traced function's graph; `code` a function read from TorchScript,
    called as `code(self_module, *args)`."""

    def __init__(self, graph: Graph | None = None, code: Callable | None = None,
                 name: str = "forward", source: str | None = None) -> None:
        self._graph, self._code, self.name, self.source = graph, code, name, source
        self.owner: Any = None  # the module it is a method of

    def __call__(self, *args: Any) -> Any:
        try:
            if self._graph is not None:
                return run(self._graph, args, self.owner)
            return self._code(self.owner, *args)  # type: ignore[misc]
        except RuntimeError as e:
            if str(e).startswith(_FAILED):
                raise
            raise type(e)(f"{_FAILED}{type(e).__name__}: {e}\n") from e

    @property
    def graph(self) -> GraphListing:
        if self._graph is None:
            return GraphListing(self.source or f"<TorchScript function {self.name}>\n")
        return GraphListing(format_graph(self._graph))

    @property
    def traced(self) -> Graph | None:
        return self._graph

    @property
    def code(self) -> Callable | None:
        return self._code

    def __repr__(self) -> str:
        return "<script_function>"


class ScriptModule(Module):
    """A module whose methods are script functions (see the module doc)."""

    def __init__(self, type_name: str = "Module") -> None:
        super().__init__()
        self.__dict__["_methods"] = {}
        self.__dict__["_type_name"] = type_name
        self.__dict__["_constants"] = {}

    def add_method(self, name: str, fn: ScriptFunction) -> None:
        fn.owner = self
        self._methods[name] = fn

    def find_method(self, name: str) -> ScriptFunction | None:
        return self._methods.get(name)

    @property
    def method_names(self) -> list[str]:
        return list(self._methods)

    @property
    def respects_mode(self) -> bool:
        """Traced in both modes, forward choosing by the module's mode."""
        m = self._methods
        return "forward" not in m and "trainforward" in m and "evalforward" in m

    def forward(self, *args: Any) -> Any:
        return self._forward_method()(*args)

    def _forward_method(self) -> ScriptFunction:
        m = self._methods
        if "forward" in m:
            return m["forward"]
        if self.respects_mode:
            return m["trainforward" if self.training else "evalforward"]
        raise RuntimeError("Forward is not defined. Methods from submodules of traced modules "
                           "are not traced. Are you trying to call from a submodule?")

    @property
    def graph(self) -> GraphListing:
        """The listing of the forward method (of the module's mode)."""
        return self._forward_method().graph

    def __getattr__(self, name: str) -> Any:
        methods = self.__dict__.get("_methods")
        if methods is not None and name in methods:
            return methods[name]
        constants = self.__dict__.get("_constants")
        if constants is not None and name in constants:
            return constants[name]
        return super().__getattr__(name)


# --------------------------------------------------------------------------
# Tracing

_TYPE_NAMES: set[str] = set()


def unique_type_name(base: str) -> str:
    """A new class name for a script module: base, base1, base2... as R torch names them."""
    name, k = base, 0
    while name in _TYPE_NAMES:
        k += 1
        name = f"{base}{k}"
    _TYPE_NAMES.add(name)
    return name


def script_module_of(module: Module, classname: Callable[[Module], str]) -> ScriptModule:
    """A script module holding module's very parameters and buffers, its children
    as script modules (a script module child is kept as it is)."""
    if isinstance(module, ScriptModule):
        return module
    sm = ScriptModule(unique_type_name(classname(module)))
    d, mine = module.__dict__, sm.__dict__
    mine["_parameters"].update(d["_parameters"])
    mine["_buffers"].update(d["_buffers"])
    mine["_non_persistent"].update(d["_non_persistent"])
    for name, child in d["_modules"].items():
        mine["_modules"][name] = None if child is None else script_module_of(child, classname)
    mine["training"] = module.training
    return sm


def _inputs(x: Any) -> tuple:
    """Example inputs as the arguments of the traced method (a tensor is one argument)."""
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def jit_trace(func: Any, *example_inputs: Any, strict: bool = True,
              respect_mode: bool = True) -> Any:
    """Trace `func` (a function or a module) on example inputs: a ScriptFunction
    (a ScriptModule for a module, traced with `jit_trace_module`)."""
    if isinstance(func, Module):
        return jit_trace_module(func, forward=example_inputs, strict=strict,
                                respect_mode=respect_mode)
    if isinstance(func, type) and issubclass(func, Module):
        raise ValueError("You must initialize the nn_module before tracing.")
    if not callable(func):
        raise ValueError("jit_trace needs a function or nn_module.")
    return ScriptFunction(trace(func, example_inputs, strict))


def jit_trace_module(mod: Module, strict: bool = True, respect_mode: bool = True,
                     methods: dict | None = None,
                     classname: Callable[[Module], str] | None = None,
                     **inputs: Any) -> ScriptModule:
    """Trace the methods of `mod` named in `inputs` (each given its example
    arguments: a tuple or list of them, or one tensor) into one ScriptModule.
    `forward` is traced in train and eval mode when `respect_mode`.
    (`methods`: the callables to trace by name, where they are not attributes of
    `mod`; `classname`: the class names script modules take.)"""
    if not isinstance(mod, Module):
        raise ValueError("`mod` must be a `nn_module()`.")
    if not isinstance(respect_mode, bool):
        raise ValueError("`respect_mode` must be a logical(1).")
    if "evalforward" in inputs or "trainforward" in inputs:
        raise ValueError("Methods `evalforward` and `trainforward` are reserved.")
    methods = methods or {}
    sm = script_module_of(mod, classname or (lambda m: type(m).__name__))
    types = {tuple(path.split(".")): m._type_name for path, m in sm.modules.items() if path}
    was_training = mod.training
    try:
        for name, example in inputs.items():
            fn = methods.get(name)
            if fn is None:
                fn = getattr(mod, name, None)
                if not callable(fn) or isinstance(fn, (Tensor, Module)):
                    raise ValueError(f"Method '{name}' does not exist in `mod` and therefore "
                                     "can't be traced.")
            args = _inputs(example)
            modes = [("trainforward", True), ("evalforward", False)] \
                if name == "forward" and respect_mode else [(name, was_training)]
            for method, training in modes:
                mod.train(training)
                graph = trace(fn, args, strict, mod, sm._type_name, types)
                sm.add_method(method, ScriptFunction(graph, name=method))
    finally:
        mod.train(was_training)
    sm.train(was_training)
    return sm
