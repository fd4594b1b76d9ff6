"""PyTorch's `torch.func` transforms (`vjp`, `jvp`, `jacrev`, `jacfwd`, `hessian`):
functions in, functions (or products) out, over the functional API.

They compose (`jacfwd(jacrev(f))`): a transform called on tensors that require
grad (an outer transform's inputs) keeps its result's graph, so the outer one
can differentiate it.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .engine import is_grad_enabled
from .autograd_functional import (as_results, as_tensor_tuple, call_with, check_cotangents,
                                  fresh_leaves, gradient_function, gradients, jacobian_of, jvp_at,
                                  untuple)
from .tensor import Tensor


def _nested(tensors: Sequence[Tensor]) -> bool:
    """Whether the call is inside an outer transform (keep the graph for it)."""
    return is_grad_enabled() and any(t.requires_grad for t in tensors)


def vjp(func: Callable, *primals: Tensor) -> tuple[Any, Callable]:
    """(func(*primals), vjp_fn): `vjp_fn(cotangents)` gives the vector-Jacobian
    product, a tuple with one tensor per primal; it may be called again."""
    fn = "vjp"
    primals, _ = as_tensor_tuple(primals, "primals", fn)
    keep = _nested(primals)
    leaves = fresh_leaves(primals, keep)
    outputs, out_tuple = call_with(func, leaves, fn)

    def vjp_fn(cotangents: Any) -> tuple:
        vs = check_cotangents(cotangents, outputs, fn, "v")
        return as_results(gradients(outputs, leaves, vs, keep, retain_graph=True, fn=fn), keep)
    return untuple(as_results(outputs, keep), out_tuple), vjp_fn


def jvp(func: Callable, primals: Sequence[Tensor], tangents: Sequence[Tensor]) -> tuple:
    """(func(*primals), J tangents): primals and tangents are tuples of tensors."""
    fn = "jvp"
    primals, _ = as_tensor_tuple(tuple(primals), "primals", fn)
    keep = _nested(primals)
    vs = check_cotangents(tuple(tangents), primals, fn, "tangents")
    outputs, out_tuple, out_tangents = jvp_at(func, fresh_leaves(primals, keep), vs, keep, fn)
    return (untuple(as_results(outputs, keep), out_tuple),
            untuple(as_results(out_tangents, keep), out_tuple))


def _transform(func: Callable, argnums: int | tuple, fn: str, strategy: str,
               vectorize: bool, of_gradient: bool) -> Callable:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def transformed(*args: Any) -> Any:
        for a in nums:
            if not -len(args) <= a < len(args) or not isinstance(args[a], Tensor):
                raise ValueError(f"{fn}: argnums {argnums} must name tensor arguments of the "
                                 f"{len(args)} given (0-based)")
        diff = tuple(args[a] for a in nums)

        def at(*xs: Tensor) -> Any:
            full = list(args)
            for a, x in zip(nums, xs):
                full[a] = x
            return func(*full)
        target = gradient_function(at, fn, []) if of_gradient else at
        jac = jacobian_of(target, diff if isinstance(argnums, tuple) else diff[0],
                          _nested(diff), False, vectorize, strategy, fn)
        return jac[0] if of_gradient and not isinstance(argnums, tuple) else jac
    return transformed


def jacrev(func: Callable, argnums: int | tuple = 0, *, vectorize: bool = False) -> Callable:
    """The function computing func's Jacobian w.r.t. the arguments `argnums`
    (0-based), row by row from vector-Jacobian products."""
    return _transform(func, argnums, "jacrev", "reverse", vectorize, False)


def jacfwd(func: Callable, argnums: int | tuple = 0, *, vectorize: bool = False) -> Callable:
    """As `jacrev`, column by column from Jacobian-vector products."""
    return _transform(func, argnums, "jacfwd", "forward", vectorize, False)


def hessian(func: Callable, argnums: int | tuple = 0, *, vectorize: bool = False) -> Callable:
    """The function computing the Hessian of a scalar func w.r.t. `argnums`:
    forward over reverse, as PyTorch's."""
    return _transform(func, argnums, "hessian", "forward", vectorize, True)
