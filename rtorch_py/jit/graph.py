"""A traced graph: the calls a function made on tensors, replayable on new inputs.

A `Graph` holds its inputs (the traced function's arguments: tensors, and lists,
tuples and dicts of them), its nodes (one per call the tracer saw: an op, an nn
functional form, a recurrence; `Node`), and its outputs. Tensors in them are
`Value`s: an input, a module's parameter or buffer (an attribute, read from the
module when the graph runs), a constant (a tensor the traced code made or found:
kept as it was), or a node's output. Non-tensor arguments are kept as given.

Running the graph (`run`) calls each node's function again, through the public
entry (`TRACEABLE` or the op registry), so that a graph run while another trace
is recorded is seen by that tracer too. Printing it (`format_graph`) follows
libtorch's listing: `graph(%0 : Float(3, strides=[1], requires_grad=0, device=cpu)):`,
one line per node (`aten::relu(%0)`), its constants as `prim::Constant` lines.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from ..containers import NamedList
from ..ops.registry import REGISTRY
from ..tensor import TRACEABLE, Tensor, dtype
from . import aten


class Value:
    """A tensor of the graph. `kind`: "input", "attr" (a module's parameter or
    buffer: `path` from the root module), "const" (`tensor`), "output"."""

    __slots__ = ("kind", "path", "tensor", "type", "name")

    def __init__(self, kind: str, type: "TensorType", path: tuple = (),
                 tensor: Tensor | None = None) -> None:
        self.kind, self.type, self.path, self.tensor = kind, type, path, tensor
        self.name: str | None = None  # its name in listings and code, given when printed

    def __repr__(self) -> str:
        return f"<Value {self.kind} {'.'.join(self.path)}{self.type}>"


@dataclass(frozen=True)
class TensorType:
    """What a traced tensor was: dtype, shape, strides, requires_grad."""
    dtype: dtype
    shape: tuple
    strides: tuple
    requires_grad: bool

    @staticmethod
    def of(x: Tensor) -> "TensorType":
        arr = x.data
        item = arr.itemsize or 1
        strides = tuple(s // item for s in arr.strides) if hasattr(arr, "strides") else ()
        return TensorType(x.dtype, tuple(arr.shape), strides, bool(x.requires_grad))

    def __str__(self) -> str:
        dims = ", ".join(map(str, self.shape))
        return (f"{self.dtype.r_name}({dims}{', ' if dims else ''}strides=["
                f"{', '.join(map(str, self.strides))}], requires_grad={int(self.requires_grad)}, "
                "device=cpu)")


@dataclass
class Node:
    """One call: its `kind` (an op's name in the registry, or a name `traceable`
    gave), its arguments by parameter name (Values for tensors) and its outputs."""
    kind: str
    arguments: dict
    outputs: Any

    @property
    def signature(self) -> inspect.Signature:
        return signature(self.kind)

    def call(self, arguments: dict) -> Any:
        bound = inspect.BoundArguments(self.signature, arguments)  # type: ignore[arg-type]
        return function(self.kind)(*bound.args, **bound.kwargs)


def function(kind: str) -> Callable:
    """The public entry of a node's call."""
    fn = TRACEABLE.get(kind)
    return fn if fn is not None else REGISTRY[kind].fn


_SIGNATURES: dict[str, inspect.Signature] = {}


def signature(kind: str) -> inspect.Signature:
    sig = _SIGNATURES.get(kind)
    if sig is None:
        fn = TRACEABLE[kind].__wrapped__ if kind in TRACEABLE else REGISTRY[kind].impl
        sig = _SIGNATURES[kind] = inspect.signature(fn)
    return sig


@dataclass
class Graph:
    """A traced function: `inputs` (one structure per argument), `nodes`,
    `outputs` (a structure), and the class of the module it is a method of."""
    inputs: list
    nodes: list = field(default_factory=list)
    outputs: Any = None
    self_type: str | None = None
    module_types: dict = field(default_factory=dict)  # path of a child -> its class

    def values(self) -> list[Value]:
        """Every Value, in order of appearance (inputs, then each node's arguments
        and outputs, then the outputs)."""
        seen: dict[int, Value] = {}
        for v in walk(self.inputs):
            seen.setdefault(id(v), v)
        for node in self.nodes:
            for v in walk(list(node.arguments.values())):
                seen.setdefault(id(v), v)
            for v in walk(node.outputs):
                seen.setdefault(id(v), v)
        for v in walk(self.outputs):
            seen.setdefault(id(v), v)
        return list(seen.values())


# --------------------------------------------------------------------------
# Structures: tensors (Values) inside lists, tuples, dicts and named lists


def walk(x: Any) -> list[Value]:
    """The Values in a structure, in order."""
    if isinstance(x, Value):
        return [x]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in walk(item)]
    if isinstance(x, NamedList):
        return walk(x.values())
    if isinstance(x, dict):
        return walk(list(x.values()))
    return []


def substitute(x: Any, env: dict) -> Any:
    """A structure with each Value replaced by its object in env."""
    if isinstance(x, Value):
        return env[x]
    if isinstance(x, list):
        return [substitute(v, env) for v in x]
    if isinstance(x, tuple):
        return tuple(substitute(v, env) for v in x)
    if isinstance(x, NamedList):
        return NamedList(x.names(), [substitute(v, env) for v in x.values()])
    if isinstance(x, dict):
        return {k: substitute(v, env) for k, v in x.items()}
    return x


def kind_of(x: Any) -> str:
    """How TorchScript names a traced structure's type (in errors)."""
    if isinstance(x, (Tensor, Value)):
        return "Tensor"
    if isinstance(x, tuple):
        return "Tuple[" + ", ".join(kind_of(v) for v in x) + "]"
    if isinstance(x, list):
        return "List[" + (kind_of(x[0]) if x else "Tensor") + "]"
    if isinstance(x, (dict, NamedList)):
        values = list(x.values())
        return "Dict[str, " + (kind_of(values[0]) if values else "Tensor") + "]"
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(x), type(x).__name__)


def bind(pattern: Any, x: Any, env: dict, what: str = "input") -> None:
    """Match x against a structure of Values, binding each Value to its part of x;
    a mismatch is an error naming both types."""
    if isinstance(pattern, Value):
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected a value of type 'Tensor' for {what} but got "
                               f"'{kind_of(x)}'")
        env[pattern] = x
        return
    if isinstance(pattern, (list, tuple)):
        if not isinstance(x, type(pattern)):
            raise RuntimeError(f"Expected a value of type '{kind_of(pattern)}' for {what} "
                               f"but got '{kind_of(x)}'")
        if len(x) != len(pattern):
            kind = "tuple" if isinstance(pattern, tuple) else "list"
            raise RuntimeError(f"Expected {len(pattern)} elements in a {kind} but found "
                               f"{len(x)}")
        for p, v in zip(pattern, x):
            bind(p, v, env, what)
        return
    if isinstance(pattern, (dict, NamedList)):
        items = dict(x.items()) if isinstance(x, (dict, NamedList)) else None
        if items is None:
            raise RuntimeError(f"Expected a value of type '{kind_of(pattern)}' for {what} "
                               f"but got '{kind_of(x)}'")
        keys = list(pattern.keys()) if isinstance(pattern, dict) else pattern.names()
        if sorted(items) != sorted(keys):
            raise RuntimeError(f"Expected a dict with keys {list(keys)} for {what} but got "
                               f"{list(items)}")
        for k, p in zip(keys, pattern.values()):
            bind(p, items[k], env, what)
        return
    if pattern != x and not (isinstance(pattern, float) and pattern != pattern):
        # a non-tensor part of the output, kept as traced
        return


# --------------------------------------------------------------------------
# Running


def run(graph: Graph, args: tuple, module: Any = None) -> Any:
    """The graph's outputs for new inputs (`module`: the root module whose
    parameters and buffers attribute values read)."""
    if len(args) != len(graph.inputs):
        raise RuntimeError(f"forward() expected {len(graph.inputs)} argument(s) but got "
                           f"{len(args)}: a traced function takes the arguments it was "
                           "traced with")
    env: dict = {}
    for i, (pattern, x) in enumerate(zip(graph.inputs, args)):
        bind(pattern, x, env, f"argument {i + 1}")
    for v in graph.values():
        if v.kind == "const":
            env[v] = v.tensor
        elif v.kind == "attr":
            env[v] = attribute(module, v.path)
    for node in graph.nodes:
        out = node.call({k: substitute(a, env) for k, a in node.arguments.items()})
        _bind_output(node.outputs, out, env)
    return substitute(graph.outputs, env)


def _bind_output(pattern: Any, out: Any, env: dict) -> None:
    if isinstance(pattern, Value):
        env[pattern] = out
    elif isinstance(pattern, (list, tuple)):
        out = list(out) if isinstance(out, (list, tuple)) else out
        if not isinstance(out, list) or len(out) != len(pattern):
            n = len(out) if isinstance(out, list) else 1
            raise RuntimeError(f"Expected {len(pattern)} elements in a list but found {n}")
        for p, o in zip(pattern, out):
            _bind_output(p, o, env)


def attribute(module: Any, path: tuple) -> Any:
    """A parameter, buffer or child of `module` by its path (`("fc", "weight")`)."""
    obj = module
    for part in path:
        d = obj.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            t = d.get(table)
            if t is not None and part in t:
                obj = t[part]
                break
        else:
            obj = getattr(obj, part)
    return obj


# --------------------------------------------------------------------------
# libtorch's listing


def format_graph(graph: Graph) -> str:
    """The graph as libtorch prints it (`traced$graph`)."""
    return _Printer(graph).text()


class _Printer:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.counter = 0
        self.lines: list[str] = []

    def fresh(self) -> str:
        while str(self.counter) in self.used:
            self.counter += 1
        name = str(self.counter)
        self.counter += 1
        self.used.add(name)
        return name

    def named(self, base: str) -> str:
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}.{k}"
        self.used.add(name)
        return name

    def name(self, v: Value) -> str:
        got = self.names.get(id(v))
        if got is None:
            got = self.names[id(v)] = self.fresh()
        return got

    def text(self) -> str:
        g = self.graph
        params = []
        if g.self_type is not None:
            self.used.add("self")
            params.append(f"%self : __torch__.{g.self_type}")
        attributes = self._attributes()
        if g.self_type is not None:  # (libtorch numbers a method's inputs after its
            self.counter = len(attributes) + 2  # self and attribute reads)
        for v in walk(g.inputs):
            params.append(f"%{self.name(v)} : {v.type}")
        self.lines[:0] = attributes
        for node in g.nodes:
            self._node(node)
        out = self._operand(g.outputs)
        head = "graph(" + ",\n      ".join(params) + "):"
        return "\n".join([head] + ["  " + line for line in self.lines] +
                         [f"  return ({out})"]) + "\n"

    def _attributes(self) -> list[str]:
        """The lines reading parameters and buffers, first use last (as libtorch lists
        them)."""
        seen: dict[tuple, Value] = {}
        for v in self.graph.values():
            if v.kind == "attr":
                seen.setdefault(v.path, v)
        modules: dict[tuple, str] = {(): "self"}
        types = self.graph.module_types
        for path, v in reversed(list(seen.items())):
            for i in range(1, len(path)):
                prefix = path[:i]
                if prefix not in modules:
                    modules[prefix] = self.named(prefix[-1])
                    self.lines.append(f"%{modules[prefix]} : __torch__."
                                      f"{types.get(prefix, 'Module')} = "
                                      f"prim::GetAttr[name=\"{prefix[-1]}\"]"
                                      f"(%{modules[prefix[:-1]]})")
            self.names[id(v)] = name = self.named(path[-1])
            self.lines.append(f"%{name} : Tensor = prim::GetAttr[name=\"{path[-1]}\"]"
                              f"(%{modules[path[:-1]]})")
        for v in self.graph.values():
            if v.kind == "attr" and id(v) not in self.names:
                self.names[id(v)] = self.names[id(seen[v.path])]
        lines, self.lines = self.lines, []
        return lines

    def _operand(self, x: Any) -> str:
        """The name of a value for x, with the lines that make it (constants, lists)."""
        if isinstance(x, Value):
            if x.kind == "const" and id(x) not in self.names:
                name = self.name(x)
                self.lines.append(f"%{name} : {x.type} = prim::Constant[value=<Tensor>]()")
            return "%" + self.name(x)
        if isinstance(x, (list, tuple)):
            parts = [self._operand(v) for v in x]
            name = self.fresh()
            kind = "prim::TupleConstruct" if isinstance(x, tuple) else "prim::ListConstruct"
            self.lines.append(f"%{name} : {_list_type(x)} = {kind}({', '.join(parts)})")
            return "%" + name
        if isinstance(x, (dict, NamedList)):
            parts = []
            for k, v in x.items():
                key = self.fresh()
                self.lines.append(f"%{key} : str = prim::Constant[value=\"{k}\"]()")
                parts += ["%" + key, self._operand(v)]
            name = self.fresh()
            self.lines.append(f"%{name} : Dict(str, Tensor) = prim::DictConstruct"
                              f"({', '.join(parts)})")
            return "%" + name
        name = self.fresh()
        if x is None:
            self.lines.append(f"%{name} : NoneType = prim::Constant()")
        else:
            self.lines.append(f"%{name} : {_scalar_type(x)} = prim::Constant[value="
                              f"{_scalar_text(x)}]()")
        return "%" + name

    def _node(self, node: Node) -> None:
        args = [self._operand(a) for a in aten.listed_arguments(node)]
        outs = walk(node.outputs)
        lhs = ", ".join(f"%{self.name(v)} : {v.type}" for v in outs)
        self.lines.append(f"{lhs} = {aten.graph_name(node.kind)}({', '.join(args)})")


def _scalar_type(x: Any) -> str:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    if isinstance(x, str):
        return "str"
    if isinstance(x, dtype):
        return "int"
    return type(x).__name__


def _scalar_text(x: Any) -> str:
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, float):
        return repr(x)
    if isinstance(x, str):
        return f"\"{x}\""
    if isinstance(x, dtype):
        return str(aten.scalar_type(x))
    return str(x)


def _list_type(x: Any) -> str:
    if not x:
        return "int[]"
    first = x[0]
    if isinstance(x, tuple):
        return "(" + ", ".join("Tensor" if isinstance(v, Value) else _scalar_type(v)
                               for v in x) + ")"
    return ("Tensor" if isinstance(first, Value) else _scalar_type(first)) + "[]"
