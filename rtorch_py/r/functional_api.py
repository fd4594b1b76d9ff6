"""R's functional API, second-derivative check and graph picture: rtorch_py's
autograd_functional, gradgradcheck and graph functions as they are (R's lists,
named or not, and R closures are what they take; nested tuples of results reach R
as nested lists), the products' pairs of results as R torch's named lists."""
from __future__ import annotations

from typing import Any, Callable

from .. import autograd_functional as _fn
from ..containers import NamedList
from ..gradgradcheck import autograd_gradgradcheck
from ..graph import autograd_graph as _graph
from .binding import RFacts, r_callable
from .convert import _list


def _product(fn: Callable, result_name: str) -> Callable:
    """A product's (output, product) pair as R torch's list(output = , <result_name> = )."""
    return r_callable(fn, RFacts(fn.__name__, result_names=("output", result_name)))


def graph_parts(outputs: Any, params: Any = None) -> NamedList:
    """DOT and SVG (NULL without Graphviz's dot) of the graph, for R's autograd_graph()."""
    g = _graph(_list(outputs), params)
    return NamedList(["dot", "svg"], [g.source, g.svg()])


R_FUNCTIONS: dict[str, Callable] = {
    "autograd_vjp": _product(_fn.autograd_vjp, "vjp"),
    "autograd_jvp": _product(_fn.autograd_jvp, "jvp"),
    "autograd_hvp": _product(_fn.autograd_hvp, "hvp"),
    "autograd_vhp": _product(_fn.autograd_vhp, "vhp"),
    "autograd_jacobian": _fn.autograd_jacobian, "autograd_hessian": _fn.autograd_hessian,
    "autograd_gradgradcheck": autograd_gradgradcheck,
    ".autograd_graph_parts": graph_parts,  # (R/graph.R makes the autograd_graph object)
}
