"""`jit_ops`: libtorch's operators called by name, as R torch's `jit_ops$aten$matmul()`.

Arguments are given in the operator's order (no defaults needed where ours
have them), positions and dims 0-based. `jit_ops.aten.<name>` is `torch.<name>`
of TorchScript code (`interpreter.call_builtin`); printing an operator shows its
schema as R torch prints it (argument names and types, from our signature).
"""
from __future__ import annotations

import inspect
from typing import Any

from ..ops.registry import REGISTRY, takes_tensors
from ..tensor import Tensor
from . import aten
from .interpreter import call_builtin


class Operator:
    """One operator, `aten::matmul`: callable, printed as its schema."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:
        namespace, _, op = self.name.partition("::")
        path = ("torch." + op) if namespace == "aten" else f"ops.{namespace}.{op}"
        try:
            return call_builtin(path, list(args), {})
        except TypeError:
            if not (args and isinstance(args[-1], Tensor)):
                raise
        out = call_builtin(path, list(args[:-1]), {})  # the `out` form: the result into it
        target = args[-1]
        if tuple(target.shape) != tuple(out.shape):
            raise RuntimeError(f"{self.name}: the `out` tensor has shape {list(target.shape)}, "
                               f"the result {list(out.shape)}")
        target.copy_(out)
        return target

    def schema(self) -> tuple[list[tuple[str, str]], list[str]]:
        """([(argument, type)], [return types]); empty lists when unknown."""
        namespace, _, op = self.name.partition("::")
        if namespace != "aten":
            return [], []
        forms = [e for e in aten.ENTRIES.values() for e in e if e.aten == op]
        if forms:
            sig = aten.signature_of(forms[0].kind)
            args = [(p.aten, _type(sig.parameters.get(p.ours) if p.ours else None, p.default))
                    for p in forms[0].params]
            return args, ["TensorType"]
        spec = REGISTRY.get(op)
        if spec is None:
            return [], []
        sig = inspect.signature(spec.impl)
        args = [(n, _type(p, p.default)) for n, p in sig.parameters.items()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY)]
        return args, ["TensorType"]

    def __repr__(self) -> str:
        args, returns = self.schema()
        arguments = ", ".join(f"{n} - {t}" for n, t in args) if args else "<none>"
        return (f"function_schema (name = {self.name})\narguments: {arguments} \nreturns: "
                f"{', '.join(returns) if returns else '<none>'} \n")


def _type(p: inspect.Parameter | None, default: Any) -> str:
    """A parameter's TorchScript type, from its annotation (the op's declaration)
    and its default."""
    if p is not None and takes_tensors(p.annotation) and default is inspect.Parameter.empty:
        return "TensorType"
    if default is None:
        return "OptionalType"
    for kind, name in ((bool, "BoolType"), (int, "IntType"), (float, "FloatType"),
                       (str, "StringType"), ((list, tuple), "ListType")):
        if isinstance(default, kind):
            return name
    if p is not None and p.annotation in ("int", int):
        return "IntType"
    return "TensorType" if p is not None and takes_tensors(p.annotation) else "AnyType"


class Namespace:
    """`jit_ops.aten`: its operators by attribute."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, op: str) -> Operator:
        if op.startswith("__"):
            raise AttributeError(op)
        return Operator(f"{self.name}::{op}")

    def __repr__(self) -> str:
        return f"<torch_ops>: Handle to namespace  {self.name} \n"


class Ops:
    """`jit_ops`: the operator namespaces (`jit_ops.aten.matmul(x, y)`)."""

    def __getattr__(self, namespace: str) -> Namespace:
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        return Namespace(namespace)

    def __repr__(self) -> str:
        return "Object of class <torch_ops>\n"


jit_ops = Ops()
