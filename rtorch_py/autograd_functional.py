"""The functional API (as PyTorch's `torch.autograd.functional`): vector-Jacobian
and Jacobian-vector products, Jacobians, Hessians and their products, of a
function of tensors at given inputs.

Vector-Jacobian products are reverse walks of the graph (`autograd_grad`);
Jacobian-vector products all go through one function, `jvp_at`: forward-mode AD
(dual tensors) where it can, else the double-vjp trick.

`vectorize=True` runs the function once on its inputs stacked along a new
first dim (one row per Jacobian row) and walks the graph once with a batch of
one-hot cotangents (or tangents), instead of one walk per row. It needs a
function that treats a leading batch dim row by row (as PyTorch's `vmap`
does by construction): the rows are checked against the unbatched call and
one random product, and a function that mixes rows is refused.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .autograd import ForwardOverReverseError, autograd_grad
from .containers import NamedList
from .forward_ad import dual_level_active, jvp as forward_jvp
from .ops.shape import stack
from .tensor import Tensor, wrap

Tensors = Any  # a tensor or a tuple/list (or NamedList) of tensors


def as_tensor_tuple(x: Any, what: str, fn: str) -> tuple[tuple, bool]:
    """(the tensors, whether given as a sequence: a named list is one, in order)."""
    if isinstance(x, NamedList):
        x = x.values()
    if isinstance(x, Tensor):
        return (x,), False
    if isinstance(x, (list, tuple)) and all(isinstance(t, Tensor) for t in x):
        return tuple(x), True
    kind = type(x).__name__ if not isinstance(x, (list, tuple)) else \
        "a list holding " + ", ".join(sorted({type(t).__name__ for t in x
                                              if not isinstance(t, Tensor)}))
    raise TypeError(f"{fn}: {what} must be a tensor or a list of tensors, got {kind}")


def untuple(xs: Sequence, is_tuple: bool) -> Any:
    return tuple(xs) if is_tuple else xs[0]


def fresh_leaves(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs to differentiate at: fresh leaves, or (create_graph) views that keep
    the caller's history so the result can be differentiated again."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(True) for x in inputs)


def call_with(func: Callable, inputs: tuple, fn: str) -> tuple[tuple, bool]:
    return as_tensor_tuple(func(*inputs), "the function's output", fn)


def _zeros(like: Tensor) -> Tensor:
    return wrap(np.zeros(like.shape, like.data.dtype))


def gradients(outputs: tuple, inputs: tuple, cotangents: tuple, create_graph: bool,
              retain_graph: bool | None = None, strict: bool = False, fn: str = "") -> tuple:
    """The gradients of sum(outputs * cotangents) w.r.t. inputs, zeros where an
    input does not reach the outputs (an error with `strict`)."""
    keep = [k for k, o in enumerate(outputs) if o.requires_grad]
    got = [None] * len(inputs)
    if keep:
        got = autograd_grad([outputs[k] for k in keep], list(inputs),
                            [cotangents[k] for k in keep], retain_graph=retain_graph,
                            create_graph=create_graph, allow_unused=True)
    if strict:
        for i, g in enumerate(got):
            if g is None:
                raise RuntimeError(f"{fn}: the output is independent of input {i} "
                                   "(strict = TRUE); pass strict = FALSE to get zeros")
    return tuple(_zeros(x) if g is None else g for x, g in zip(inputs, got))


def jvp_at(func: Callable, primals: tuple, tangents: tuple, create_graph: bool,
           fn: str = "autograd_jvp", strict: bool = False,
           through_reverse: bool = False) -> tuple[tuple, bool, tuple]:
    """Run `func` at `primals` (leaves that require grad) and push `tangents`
    (one per primal, same shapes) forward: (outputs, outputs given as a
    sequence, output tangents, zeros where an output does not depend on the
    primals). With `create_graph` the tangents keep their graph; with `strict`
    a primal the outputs do not depend on is an error.

    By forward-mode AD (dual tensors: one pass) where it can; else by the
    double-vjp trick (u -> J^T u is linear in u, so its vjp w.r.t. u with
    cotangent v is J v): when the tangents need a graph of their own (forward
    mode's don't carry one), for `strict` (the reverse walk sees unused
    inputs), inside a dual level (levels don't nest), and when `func` takes
    gradients itself (`through_reverse`: hvp's gradient; a function found to
    do so, as jacfwd(jacrev(f)), is run again the other way)."""
    if not (create_graph or strict or through_reverse or dual_level_active()):
        given_as_sequence = []

        def run(*xs: Tensor) -> list:
            outputs, is_tuple = call_with(func, xs, fn)
            given_as_sequence.append(is_tuple)
            return list(outputs)
        try:
            outputs, out_tangents = forward_jvp(run, list(primals), list(tangents))
        except ForwardOverReverseError:
            pass
        else:
            return tuple(outputs), given_as_sequence[0], tuple(out_tangents)
    outputs, is_tuple = call_with(func, primals, fn)
    dummies = tuple(_zeros(o).requires_grad_(True) for o in outputs)
    grads = gradients(outputs, primals, dummies, create_graph=True, strict=strict, fn=fn)
    out_tangents = gradients(grads, dummies, tangents, create_graph=create_graph, fn=fn)
    return outputs, is_tuple, out_tangents


def check_cotangents(v: Any, outputs: tuple, fn: str, what: str) -> tuple:
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError(f"{fn}: {what} may be omitted only when the function returns "
                               "a single-element tensor; pass one tensor per output, each "
                               "of its output's shape")
        return (wrap(np.ones(outputs[0].shape, outputs[0].data.dtype)),)
    vs, _ = as_tensor_tuple(v, what, fn)
    if len(vs) != len(outputs):
        raise RuntimeError(f"{fn}: {what} has {len(vs)} tensors but there are "
                           f"{len(outputs)}; give one per {'output' if what == 'v' else 'input'}")
    for i, (t, o) in enumerate(zip(vs, outputs)):
        if tuple(t.shape) != tuple(o.shape):
            raise RuntimeError(f"{fn}: {what}[{i}] has shape {list(t.shape)} but must have "
                               f"the shape of its tensor, {list(o.shape)}")
    return vs


def as_results(xs: Sequence, create_graph: bool) -> tuple:
    return tuple(x if create_graph else x.detach() for x in xs)


# --------------------------------------------------------------------------
# Products

def autograd_vjp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
                 strict: bool = False) -> tuple:
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`, `v` one
    tensor per output (may be omitted for a single-element output)."""
    fn = "autograd_vjp"
    inputs, in_tuple = as_tensor_tuple(inputs, "inputs", fn)
    leaves = fresh_leaves(inputs, create_graph)
    outputs, out_tuple = call_with(func, leaves, fn)
    vs = check_cotangents(v, outputs, fn, "v")
    grads = gradients(outputs, leaves, vs, create_graph, strict=strict, fn=fn)
    return (untuple(as_results(outputs, create_graph), out_tuple),
            untuple(as_results(grads, create_graph), in_tuple))


def autograd_jvp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
                 strict: bool = False) -> tuple:
    """(func(inputs), J v): the Jacobian-vector product at `inputs` along the
    tangents `v`, one per input (may be omitted for a single-element input)."""
    fn = "autograd_jvp"
    inputs, in_tuple = as_tensor_tuple(inputs, "inputs", fn)
    leaves = fresh_leaves(inputs, create_graph)
    vs = check_cotangents(v, inputs, fn, "v (the tangents)")
    outputs, out_tuple, tangents = jvp_at(func, leaves, vs, create_graph, fn, strict)
    return (untuple(as_results(outputs, create_graph), out_tuple),
            untuple(as_results(tangents, create_graph), out_tuple))


def gradient_function(func: Callable, fn: str, seen: list) -> Callable:
    """x -> the gradient of func (a scalar function) at x, with its graph; the
    outputs of func land in `seen`."""
    def gradient(*xs: Tensor) -> tuple:
        outputs, _ = call_with(func, xs, fn)
        if len(outputs) != 1:
            raise RuntimeError(f"{fn}: the function must return a single tensor with one "
                               f"element, it returned {len(outputs)} tensors")
        out = outputs[0]
        seen[:] = [out]
        ones = wrap(np.ones(out.shape, out.data.dtype))
        return gradients((out,), xs, (ones,), create_graph=True, fn=fn)
    return gradient


def _scalar_output(func: Callable, inputs: tuple, fn: str) -> None:
    out = func(*inputs)
    if not isinstance(out, Tensor) or out.numel() != 1:
        got = f"shape {list(out.shape)}" if isinstance(out, Tensor) else type(out).__name__
        raise RuntimeError(f"{fn}: the function must return a single tensor with one "
                           f"element (a scalar), got {got}")


def autograd_vhp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
                 strict: bool = False) -> tuple:
    """(func(inputs), v^T H): the vector-Hessian product of a scalar function."""
    fn = "autograd_vhp"
    inputs, in_tuple = as_tensor_tuple(inputs, "inputs", fn)
    _scalar_output(func, inputs, fn)
    leaves = fresh_leaves(inputs, create_graph)
    seen: list = []
    grads = gradient_function(func, fn, seen)(*leaves)
    vs = check_cotangents(v, inputs, fn, "v (one per input)")
    out = gradients(grads, leaves, vs, create_graph, strict=strict, fn=fn)
    return (as_results(seen, create_graph)[0], untuple(as_results(out, create_graph), in_tuple))


def autograd_hvp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
                 strict: bool = False) -> tuple:
    """(func(inputs), H v): the Hessian-vector product of a scalar function
    (a Jacobian-vector product of its gradient)."""
    fn = "autograd_hvp"
    inputs, in_tuple = as_tensor_tuple(inputs, "inputs", fn)
    _scalar_output(func, inputs, fn)
    leaves = fresh_leaves(inputs, create_graph)
    vs = check_cotangents(v, inputs, fn, "v (one per input)")
    seen: list = []
    _, _, out = jvp_at(gradient_function(func, fn, seen), leaves, vs, create_graph, fn, strict,
                       through_reverse=True)
    return (as_results(seen, create_graph)[0], untuple(as_results(out, create_graph), in_tuple))


# --------------------------------------------------------------------------
# Jacobians and Hessians

def _one_hot_rows(blocks: Sequence[Tensor]) -> list:
    """One-hot seeds for tensors t_1..t_k of n elements in all: per tensor an
    array of shape (n, *t.shape) whose row r is one-hot at the tensors' flat
    element r (zero where r falls in another tensor)."""
    n = sum(t.numel() for t in blocks)
    out, start = [], 0
    for t in blocks:
        m = t.numel()
        rows = np.zeros((n, m), t.data.dtype)
        rows[start:start + m] = np.eye(m, dtype=t.data.dtype)
        out.append(rows.reshape((n, *t.shape)))
        start += m
    return out


def _batched_rows(inputs: tuple, outputs: tuple, walk: Callable, n: int, fn: str) -> Any:
    """`walk(stacked)` runs the function once on its inputs stacked n times along
    a new first dim, does the one walk and returns (the function's outputs, the
    per-row results); the rows are checked to be its unbatched result, of its
    shape. The stack is recorded, so create_graph reaches the inputs through it."""
    stacked = tuple(stack([x] * n) for x in inputs)
    try:
        outs_b, rows = walk(stacked)
    except Exception as err:
        err.add_note(f"(raised in {fn}(vectorize = TRUE), which runs the function once on "
                     "its inputs stacked along a new first dim: it must treat that dim row "
                     "by row; or use vectorize = FALSE)")
        raise
    for o, ob in zip(outputs, outs_b):
        if tuple(ob.shape) != (n, *o.shape):
            raise _not_row_wise(fn, f"given {n} stacked copies of its inputs it returned "
                                f"shape {list(ob.shape)}, not {[n, *o.shape]}")
        if not np.allclose(ob.data, np.broadcast_to(o.data, ob.shape), **_tolerance(o)):
            raise _not_row_wise(fn, "given stacked copies of its inputs it returned rows "
                                "that differ from its unbatched result")
    return rows


def _tolerance(t: Tensor) -> dict:
    return dict(rtol=1e-9, atol=1e-12) if t.data.dtype == np.float64 else \
        dict(rtol=1e-4, atol=1e-5)


def _not_row_wise(fn: str, detail: str) -> RuntimeError:
    return RuntimeError(
        f"{fn}(vectorize = TRUE): the function does not treat a leading batch dim row by "
        f"row: {detail}. vectorize runs it once on its inputs stacked along a new first dim; "
        "write it so that each row is computed alone (e.g. sum(dim = -1) rather than sum(), "
        "x[.., 1] rather than x[1]), or use vectorize = FALSE")


def _reverse_blocks(func: Callable, inputs: tuple, outputs: tuple, create_graph: bool,
                    strict: bool, vectorize: bool, fn: str) -> list:
    """blocks[k][j]: d out_k / d in_j, shape (*out_k, *in_j), one row per output
    element from vector-Jacobian products."""
    n = sum(o.numel() for o in outputs)
    seeds = _one_hot_rows(outputs)
    if vectorize:
        def walk(stacked: tuple) -> tuple:
            outs_b, _ = call_with(func, stacked, fn)
            if [tuple(o.shape) for o in outs_b] != [(n, *o.shape) for o in outputs]:
                return outs_b, None  # (refused by _batched_rows)
            cot = tuple(wrap(s) for s in seeds)
            return outs_b, gradients(outs_b, stacked, cot, create_graph, strict=strict, fn=fn)
        per_in = _batched_rows(inputs, outputs, walk, n, fn)
    else:
        rows: list = [[] for _ in inputs]
        for r in range(n):
            cot = tuple(wrap(s[r]) for s in seeds)
            for j, g in enumerate(gradients(outputs, inputs, cot, create_graph, retain_graph=True,
                                            strict=strict, fn=fn)):
                rows[j].append(g)
        per_in = [_stack_rows(rs, create_graph) for rs in rows]
    blocks, start = [], 0
    for o in outputs:
        m = o.numel()
        blocks.append([p[start:start + m].reshape((*o.shape, *x.shape))
                       for p, x in zip(per_in, inputs)])
        start += m
    return blocks


def _forward_blocks(func: Callable, inputs: tuple, outputs: tuple, create_graph: bool,
                    vectorize: bool, fn: str) -> list:
    """The same blocks, one column per input element from Jacobian-vector products."""
    n = sum(x.numel() for x in inputs)
    seeds = _one_hot_rows(inputs)
    if vectorize:
        def walk(stacked: tuple) -> tuple:
            outs_b, _, tangents = jvp_at(func, stacked, tuple(wrap(s) for s in seeds),
                                         create_graph, fn)
            return outs_b, tangents
        per_out = _batched_rows(inputs, outputs, walk, n, fn)
    else:
        cols: list = [[] for _ in outputs]
        for c in range(n):
            _, _, tangents = jvp_at(func, inputs, tuple(wrap(s[c]) for s in seeds),
                                    create_graph, fn)
            for k, t in enumerate(tangents):
                cols[k].append(t)
        per_out = [_stack_rows(cs, create_graph) for cs in cols]
    blocks = []
    for o, p in zip(outputs, per_out):
        row, start = [], 0
        for x in inputs:
            m = x.numel()
            # (input elements, output elements) -> (*out, *in)
            row.append(p[start:start + m].reshape((m, o.numel())).t()
                       .reshape((*o.shape, *x.shape)))
            start += m
        blocks.append(row)
    return blocks


def _check_product(blocks: list, inputs: tuple, outputs: tuple, fn: str) -> None:
    """A vectorized Jacobian against one unbatched vector-Jacobian product along a
    random vector: a function that mixes rows while keeping their values shows here."""
    rng = np.random.default_rng(0)
    vs = tuple(wrap(rng.standard_normal(o.shape).astype(o.data.dtype)) for o in outputs)
    want = gradients(outputs, inputs, vs, create_graph=False, retain_graph=True, fn=fn)
    for j, x in enumerate(inputs):
        got = sum(v.data.reshape(-1) @ blocks[k][j].data.reshape(o.numel(), x.numel())
                  for k, (v, o) in enumerate(zip(vs, outputs)))
        if not np.allclose(got, want[j].data.reshape(-1), **_tolerance(x)):
            raise _not_row_wise(fn, "its stacked rows are not independent (a random "
                                "vector-Jacobian product disagrees with the batched "
                                "Jacobian)")


def _stack_rows(rows: list, create_graph: bool) -> Tensor:
    return stack(rows) if create_graph else wrap(np.stack([r.data for r in rows]))


def _nest(blocks: list, out_tuple: bool, in_tuple: bool, create_graph: bool) -> Any:
    blocks = [as_results(row, create_graph) for row in blocks]
    rows = [row if in_tuple else row[0] for row in blocks]
    return tuple(rows) if out_tuple else rows[0]


def autograd_jacobian(func: Callable, inputs: Tensors, create_graph: bool = False,
                      strict: bool = False, vectorize: bool = False,
                      strategy: str = "reverse") -> Any:
    """The Jacobian of `func` at `inputs`: for output k and input j, a tensor of
    shape (*output_k.shape, *input_j.shape); nested as PyTorch's (a tensor, a
    tuple over inputs or outputs, or a tuple over outputs of tuples over inputs).
    `strategy`: "reverse" (a vector-Jacobian product per output element) or
    "forward" (a Jacobian-vector product per input element), also spelt as
    PyTorch's "reverse-mode" and "forward-mode"; `vectorize`: all of them in one
    walk (see the module's docstring)."""
    return jacobian_of(func, inputs, create_graph, strict, vectorize, strategy,
                       "autograd_jacobian")


STRATEGIES = {"reverse": "reverse", "forward": "forward",
              "reverse-mode": "reverse", "forward-mode": "forward"}


def jacobian_of(func: Callable, inputs: Tensors, create_graph: bool, strict: bool,
                vectorize: bool, strategy: str, fn: str) -> Any:
    if strategy not in STRATEGIES:
        raise ValueError(f'{fn}: strategy must be "reverse" or "forward" (or PyTorch\'s '
                         f'"reverse-mode", "forward-mode"), got {strategy!r}')
    strategy = STRATEGIES[strategy]
    if strict and strategy == "forward":
        raise ValueError(f'{fn}: strict = TRUE needs strategy = "reverse"')
    inputs, in_tuple = as_tensor_tuple(inputs, "inputs", fn)
    leaves = fresh_leaves(inputs, create_graph)
    outputs, out_tuple = call_with(func, leaves, fn)
    if strategy == "reverse":
        blocks = _reverse_blocks(func, leaves, outputs, create_graph, strict, vectorize, fn)
    else:
        blocks = _forward_blocks(func, leaves, outputs, create_graph, vectorize, fn)
    if vectorize:
        _check_product(blocks, leaves, outputs, fn)
    return _nest(blocks, out_tuple, in_tuple, create_graph)


def autograd_hessian(func: Callable, inputs: Tensors, create_graph: bool = False,
                     strict: bool = False, vectorize: bool = False,
                     outer_jacobian_strategy: str = "reverse") -> Any:
    """The Hessian of a scalar function at `inputs`: for inputs i and j, a tensor
    of shape (*input_i.shape, *input_j.shape) (a tensor for one input, else a
    tuple of tuples): the Jacobian of its gradient."""
    fn = "autograd_hessian"
    inputs_t, in_tuple = as_tensor_tuple(inputs, "inputs", fn)
    _scalar_output(func, inputs_t, fn)
    jac = jacobian_of(gradient_function(func, fn, []), inputs_t if in_tuple else inputs_t[0],
                      create_graph, strict, vectorize, outer_jacobian_strategy, fn)
    return jac if in_tuple else jac[0]
