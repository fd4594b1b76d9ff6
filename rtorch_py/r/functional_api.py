"""R's functional API, second-derivative check and graph picture: thin forms of
rtorch_py.autograd_functional, .gradgradcheck and .graph (R closures as functions, R
lists as sequences, pairs of results as named lists)."""
from __future__ import annotations

from typing import Any, Callable

from .. import autograd_functional as _fn
from ..containers import NamedList
from ..gradgradcheck import autograd_gradgradcheck as _gradgradcheck
from ..graph import autograd_graph as _graph
from .convert import _list
from .tensor_api import _r_callable


def _seq(x: Any) -> Any:
    """An R list of tensors as a tuple (results come back as lists); a tensor as is."""
    return tuple(_list(x)) if isinstance(x, (list, tuple, NamedList)) else x


def _r(x: Any) -> Any:
    """Nested tuples of results as (nested) R lists."""
    return [_r(v) for v in x] if isinstance(x, tuple) else x


def _product(fn: Callable, result_name: str) -> Callable:
    def product(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
                strict: bool = False) -> NamedList:
        out, res = fn(_r_callable(func), _seq(inputs), None if v is None else _seq(v),
                      create_graph=bool(create_graph), strict=bool(strict))
        return NamedList(["output", result_name], [_r(out), _r(res)])
    return product


def autograd_jacobian(func: Callable, inputs: Any, create_graph: bool = False,
                      strict: bool = False, vectorize: bool = False,
                      strategy: str = "reverse") -> Any:
    return _r(_fn.autograd_jacobian(_r_callable(func), _seq(inputs), bool(create_graph),
                                    bool(strict), bool(vectorize), strategy))


def autograd_hessian(func: Callable, inputs: Any, create_graph: bool = False,
                     strict: bool = False, vectorize: bool = False,
                     outer_jacobian_strategy: str = "reverse") -> Any:
    return _r(_fn.autograd_hessian(_r_callable(func), _seq(inputs), bool(create_graph),
                                   bool(strict), bool(vectorize), outer_jacobian_strategy))


def autograd_gradgradcheck(fn: Callable, inputs: Any, grad_outputs: Any = None,
                           eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                           raise_exception: bool = True) -> bool:
    return _gradgradcheck(_r_callable(fn), _list(inputs),
                          None if grad_outputs is None else _list(grad_outputs), eps=eps,
                          atol=atol, rtol=rtol, raise_exception=bool(raise_exception))


def graph_parts(outputs: Any, params: Any = None) -> NamedList:
    """DOT and SVG (NULL without Graphviz's dot) of the graph, for R's autograd_graph()."""
    g = _graph(_list(outputs), params)
    return NamedList(["dot", "svg"], [g.source, g.svg()])


R_FUNCTIONS: dict[str, Callable] = {
    "autograd_vjp": _product(_fn.autograd_vjp, "vjp"),
    "autograd_jvp": _product(_fn.autograd_jvp, "jvp"),
    "autograd_hvp": _product(_fn.autograd_hvp, "hvp"),
    "autograd_vhp": _product(_fn.autograd_vhp, "vhp"),
    "autograd_jacobian": autograd_jacobian, "autograd_hessian": autograd_hessian,
    "autograd_gradgradcheck": autograd_gradgradcheck,
    ".autograd_graph_parts": graph_parts,  # (R/graph.R makes the autograd_graph object)
}
