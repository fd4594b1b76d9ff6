"""A picture of the backward graph: `autograd_graph(y)` as Graphviz DOT, and SVG
where Graphviz's `dot` program is installed (DOT text where it is not).

Nodes are named as `grad_fn` prints them (`MulBackward0`), custom functions by
their name; a custom function's saved values hang from it under the names
given to `save_for_backward`; leaves show their shape (and their name, from
`params`); outputs their shape. Arrows run as the forward pass did.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Mapping, Sequence

from .containers import NamedList
from .engine import AccumulateGrad, Node, SavedTensor, grad_accumulator
from .function import R_NODE_NAME, CustomNode
from .tensor import Tensor

_STYLE = {
    "op": dict(shape="box", style="filled", fillcolor="lightgrey"),
    "custom": dict(shape="box", style="filled,bold", fillcolor="orange"),
    "leaf": dict(shape="box", style="filled", fillcolor="lightblue"),
    "output": dict(shape="box", style="filled", fillcolor="darkolivegreen1"),
    "saved": dict(shape="box", style="filled,dashed", fillcolor="lightyellow"),
}


def walk(roots: Sequence[Node]) -> Iterator[Node]:
    """Every node reachable from `roots` once, roots first (no recursion)."""
    seen: set = set()
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None)


def function_name(node: Node) -> str:
    """How a node is shown: its grad_fn name; a custom function's own name for
    R-style custom functions (their grad_fn is libtorch's generic CppNode)."""
    ctx = getattr(node, "ctx", None)
    if ctx is None or node.name != R_NODE_NAME:
        return node.name
    label = ctx._fn_name
    named = re.fullmatch(r"custom function (?:with forward )?'(.+)'", label)
    return named.group(1) if named else label


def saved_values(node: CustomNode) -> list[tuple[str, Any]]:
    """(name, value) for what a custom function's forward saved ("" if unnamed);
    a tensor freed by backward is None."""
    names = node.ctx._saved_names
    values = [v.data if isinstance(v, SavedTensor) else v for v in node.saved]
    return list(zip(names, values))


def _shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


class AutogradGraph:
    """The picture: `source` (DOT), `svg()`; shown inline by Jupyter."""

    def __init__(self, digraph: Any) -> None:
        self.digraph = digraph  # a graphviz.Digraph
        self._svg: str | None = None

    @property
    def source(self) -> str:
        return self.digraph.source

    def svg(self) -> str | None:
        """The SVG text, or None when Graphviz's `dot` program is not installed."""
        if self._svg is None:
            import graphviz
            try:
                self._svg = self.digraph.pipe(format="svg", encoding="utf-8")
            except graphviz.ExecutableNotFound:
                return None
        return self._svg

    def _repr_svg_(self) -> str | None:
        return self.svg()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        svg = self.svg()
        return {"image/svg+xml": svg} if svg is not None else {"text/plain": self.source}

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return self.source


def autograd_graph(outputs: Any, params: Mapping[str, Tensor] | NamedList | None = None
                   ) -> AutogradGraph:
    """The backward graph of `outputs` (a tensor or a list of tensors). `params`
    names leaves (a dict or named list of tensors) for their labels."""
    import graphviz
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    for i, t in enumerate(outs):
        if not isinstance(t, Tensor):
            raise TypeError(f"autograd_graph: outputs[{i}] is a {type(t).__name__}, "
                            "expected a tensor")
        if not t.requires_grad:
            raise ValueError(f"autograd_graph: output {i} does not require grad, so it has "
                             "no backward graph; compute it from tensors created with "
                             "requires_grad = TRUE, outside with_no_grad()")
    if isinstance(params, NamedList):
        params = dict(zip(params.names(), params.values()))
    leaf_names = {id(t): name for name, t in (params or {}).items()}

    dot = graphviz.Digraph("autograd", graph_attr=dict(rankdir="TB"),
                           node_attr=dict(fontname="monospace", fontsize="11"))
    ids: dict = {}  # node -> "n0", "n1"... in the order met: the same DOT for the same graph

    def nid_of(node: Node) -> str:
        return ids.setdefault(id(node), f"n{len(ids)}")
    roots = []
    for i, t in enumerate(outs):
        dot.node(f"out{i}", f"output {i}\n{_shape(t.shape)}" if len(outs) > 1
                 else f"output\n{_shape(t.shape)}", **_STYLE["output"])
        node = t.grad_fn if t.grad_fn is not None else grad_accumulator(t)
        roots.append(node)
        dot.edge(nid_of(node), f"out{i}")
    for node in walk(roots):
        nid = nid_of(node)
        if isinstance(node, AccumulateGrad):
            v = node.variable
            lines = [leaf_names.get(id(v), "leaf")]
            if v is not None:
                lines.append(_shape(v.shape))
            dot.node(nid, "\n".join(lines + ["requires grad"]), **_STYLE["leaf"])
        elif isinstance(node, CustomNode):
            dot.node(nid, f"{function_name(node)}\ncustom function", **_STYLE["custom"])
            for k, (name, value) in enumerate(saved_values(node)):
                sid = f"{nid}_saved{k}"
                what = ("freed" if value is None else _shape(value.shape)
                        if hasattr(value, "shape") else repr(value)[:24])
                dot.node(sid, f"saved {name or f'#{k + 1}'}\n{what}", **_STYLE["saved"])
                dot.edge(sid, nid, style="dashed", arrowhead="none")
        else:
            dot.node(nid, node.name, **_STYLE["op"])
        for n, _ in node.next_functions:
            if n is not None:
                dot.edge(nid_of(n), nid)
    return AutogradGraph(dot)
