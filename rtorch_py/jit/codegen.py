"""Traced graphs as TorchScript source, the code PyTorch's `torch.jit.load` compiles.

A script module's class is written as PyTorch writes a traced module's:

    class nn_linear(Module):
      __parameters__ = ["weight", "bias", ]
      __buffers__ = []
      weight : Tensor
      bias : Tensor
      training : bool
      def forward(self: __torch__.nn_linear,
        argument_1: Tensor) -> Tensor:
        weight = self.weight
        bias = self.bias
        _0 = torch.linear(argument_1, weight, bias)
        return _0

each node one statement (its aten form, `aten.emit`), tensor constants as
`CONSTANTS.c<i>` (constants.pkl). A module traced in both modes gets a `forward`
that calls `trainforward` or `evalforward` by `self.training`, so PyTorch's
`module(x)` runs the mode's trace. Classes read from a file keep their code.
"""
from __future__ import annotations

from typing import Any

from ..containers import NamedList
from ..tensor import Tensor, dtype
from .aten import Unsupported, display_name, emit, python_literal
from .graph import Graph, Value, walk
from .script import ScriptFunction, ScriptModule


class Constants:
    """The tensor constants of an archive (constants.pkl), shared by its code."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.index: dict[int, int] = {}

    def name(self, t: Tensor) -> str:
        i = self.index.get(id(t))
        if i is None:
            i = self.index[id(t)] = len(self.tensors)
            self.tensors.append(t)
        return f"CONSTANTS.c{i}"


def type_of(x: Any) -> str:
    """The TorchScript type of a traced structure."""
    if isinstance(x, Value):
        return "Tensor"
    if isinstance(x, tuple):
        return "Tuple[" + ", ".join(type_of(v) for v in x) + "]"
    if isinstance(x, list):
        return "List[" + (type_of(x[0]) if x else "Tensor") + "]"
    if isinstance(x, dict):
        values = list(x.values())
        return "Dict[str, " + (type_of(values[0]) if values else "Tensor") + "]"
    if x is None:
        return "NoneType"
    return {bool: "bool", int: "int", float: "float", str: "str"}[type(x)]


class _Method:
    """One traced method as TorchScript statements."""

    def __init__(self, graph: Graph, constants: Constants) -> None:
        self.graph, self.constants = graph, constants
        self.names: dict[int, str] = {}
        self.used: set[str] = {"self"}
        self.counter = 0
        self.lines: list[str] = []

    def fresh(self, base: str | None = None) -> str:
        if base is not None and base not in self.used and base.isidentifier():
            self.used.add(base)
            return base
        while True:
            name = f"{base or ''}_{self.counter}" if base else f"_{self.counter}"
            self.counter += 1
            if name not in self.used:
                self.used.add(name)
                return name

    def render(self, x: Any) -> str:
        if isinstance(x, Value):
            if x.kind == "const":
                return self.constants.name(x.tensor)  # type: ignore[arg-type]
            return self.names[id(x)]
        if isinstance(x, (list, tuple)):
            return "[" + ", ".join(self.render(v) for v in x) + "]"
        if isinstance(x, (dict, NamedList)):
            return "{" + ", ".join(f"{python_literal(str(k))}: {self.render(v)}"
                                   for k, v in x.items()) + "}"
        if isinstance(x, Tensor):
            return self.constants.name(x)
        if isinstance(x, dtype) or x is None or isinstance(x, (bool, int, float, str)):
            return python_literal(x)
        raise Unsupported(f"the argument {x!r} has no TorchScript form")

    def render_output(self, x: Any) -> str:
        if isinstance(x, tuple):
            parts = [self.render_output(v) for v in x]
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if isinstance(x, list):
            return "[" + ", ".join(self.render_output(v) for v in x) + "]"
        if isinstance(x, dict):
            return "{" + ", ".join(f"{python_literal(str(k))}: {self.render_output(v)}"
                                   for k, v in x.items()) + "}"
        return self.render(x)

    def unpack(self, pattern: Any, source: str) -> None:
        """Name the Values of an argument's structure (`a, b, = xs`)."""
        if isinstance(pattern, Value):
            self.names[id(pattern)] = source
            return
        if isinstance(pattern, dict):
            for k, p in pattern.items():
                name = self.fresh()
                self.lines.append(f"{name} = {source}[{python_literal(str(k))}]")
                self.unpack(p, name)
            return
        names = [self.fresh() for _ in pattern]
        if names:
            self.lines.append(", ".join(names) + ", = " + source)
        for p, name in zip(pattern, names):
            self.unpack(p, name)

    def write(self, name: str, self_type: str) -> str:
        g = self.graph
        params = [f"self: {self_type}"]
        for i, pattern in enumerate(g.inputs, 1):
            arg = self.fresh(f"argument_{i}")
            params.append(f"{arg}: {type_of(pattern)}")
            self.unpack(pattern, arg)
        self._attributes()
        for node in g.nodes:
            try:
                expr = emit(node.kind, node.arguments, self.render)
            except Unsupported as e:
                raise Unsupported(f"jit_save: {e}; the trace can't be written as TorchScript "
                                  f"(the call was {display_name(node.kind)})") from None
            outs = node.outputs
            if isinstance(outs, Value):
                target = self.names[id(outs)] = self.fresh()
                self.lines.append(f"{target} = {expr}")
            elif isinstance(outs, (list, tuple)) and outs and \
                    all(isinstance(v, Value) for v in outs):
                names = [self.fresh() for _ in outs]
                for v, n in zip(outs, names):
                    self.names[id(v)] = n
                self.lines.append(", ".join(names) + ", = " + expr)
            else:
                self.lines.append(f"{self.fresh()} = {expr}")
        ret = type_of(g.outputs)
        self.lines.append(f"return {self.render_output(g.outputs)}")
        head = f"  def {name}(" + ",\n    ".join(params) + f") -> {ret}:"
        return "\n".join([head] + ["    " + line for line in self.lines])

    def _attributes(self) -> None:
        """The parameters and buffers the method reads, first use last (as PyTorch)."""
        seen: dict[tuple, Value] = {}
        for v in self.graph.values():
            if v.kind == "attr" and v.path not in seen:
                seen[v.path] = v
        modules: dict[tuple, str] = {(): "self"}
        for path, v in reversed(list(seen.items())):
            for i in range(1, len(path)):
                prefix = path[:i]
                if prefix not in modules:
                    modules[prefix] = self.fresh(prefix[-1] if prefix[-1].isidentifier()
                                                 else None)
                    self.lines.append(f"{modules[prefix]} = "
                                      f"{_attr(modules[prefix[:-1]], prefix[-1])}")
            name = self.names[id(v)] = self.fresh(path[-1])
            self.lines.append(f"{name} = {_attr(modules[path[:-1]], path[-1])}")
        for v in self.graph.values():
            if v.kind == "attr" and id(v) not in self.names:
                self.names[id(v)] = self.names[id(seen[v.path])]


def _attr(owner: str, name: str) -> str:
    return f"{owner}.{name}" if name.isidentifier() else f"getattr({owner}, \"{name}\")"


def _dispatch_forward(self_type: str, graph: Graph) -> str:
    """forward(): the trace of the module's mode."""
    params = [f"self: {self_type}"]
    args = []
    for i, pattern in enumerate(graph.inputs, 1):
        params.append(f"argument_{i}: {type_of(pattern)}")
        args.append(f"argument_{i}")
    call = ", ".join(args)
    ret = type_of(graph.outputs)
    return "\n".join([f"  def forward(" + ",\n    ".join(params) + f") -> {ret}:",
                      "    if self.training:",
                      f"      _0 = (self).trainforward({call})",
                      "    else:",
                      f"      _0 = (self).evalforward({call})",
                      "    return _0"])


def class_source(sm: ScriptModule, constants: Constants) -> str:
    """A traced script module's class."""
    qual = "__torch__." + sm._type_name
    name = sm._type_name.rpartition(".")[2]
    params = [n for n, t in sm._parameters.items() if t is not None]
    buffers = [n for n, t in sm._buffers.items() if t is not None]
    lines = [f"class {name}(Module):",
             "  __parameters__ = [" + "".join(f"\"{n}\", " for n in params) + "]",
             "  __buffers__ = [" + "".join(f"\"{n}\", " for n in buffers) + "]"]
    lines += [_decl(n, "Tensor") for n in params + buffers]
    lines.append("  training : bool")
    for n, child in sm._modules.items():
        if child is not None:
            lines.append(_decl(n, f"__torch__.{child._type_name}"))
    methods = []
    for mname, fn in sm._methods.items():
        if fn.traced is None:
            raise Unsupported(f"jit_save: method {mname} of {name} was not traced here")
        methods.append(_Method(fn.traced, constants).write(mname, qual))
    if sm.respects_mode:
        methods.insert(0, _dispatch_forward(qual, sm._methods["trainforward"].traced))
    return "\n".join(lines + methods) + "\n"


def _decl(name: str, type_: str) -> str:
    """An attribute's declaration (a name like "0" as PyTorch writes it)."""
    return f"  {name} : {type_}" if name.isidentifier() else \
        f"  __annotations__[\"{name}\"] = {type_}"


def function_module(fn: ScriptFunction) -> ScriptModule:
    """A traced function as a module whose forward it is (PyTorch saves one so)."""
    if fn.traced is None:
        raise Unsupported("jit_save: this function was not traced here")
    sm = ScriptModule("PlaceholderModule")
    sm.add_method("forward", ScriptFunction(fn.traced, name="forward"))
    return sm


def sources(root: ScriptModule, constants: Constants) -> dict[str, str]:
    """The code files of an archive: path under code/ -> source."""
    files: dict[str, list[str]] = {}
    done: set[int] = set()

    def visit(sm: ScriptModule) -> None:
        if id(sm) in done:
            return
        done.add(id(sm))
        kept = sm.__dict__.get("_code_files")
        if kept is not None:  # read from a file: its code as it was
            for path, text in kept.items():
                files.setdefault(path, [text])
        else:
            parent = sm._type_name.rpartition(".")[0]
            path = "__torch__" + ("/" + parent.replace(".", "/") if parent else "") + ".py"
            files.setdefault(path, []).append(class_source(sm, constants))
        for child in sm._modules.values():
            if child is not None:
                visit(child)
    visit(root)
    return {path: "".join(parts) for path, parts in files.items()}


__all__ = ["sources", "function_module", "Constants", "type_of", "walk"]
