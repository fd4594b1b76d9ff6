"""User-facing autograd entry points: backward, grad, grad mode helpers.

`backward` is the Tensor method `x.backward()` (the public face,
`rtorch_py/__init__.py`, attaches it)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import engine
from .engine import edge, grad_accumulator, implicit_grad, run_backward
from .ops.recording import sum_to
from .tensor import MODES, Tensor, to_array, wrap


def _as_list(x: Any) -> list:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


class ForwardOverReverseError(RuntimeError):
    """A create_graph gradient of a dual tensor: forward mode can't see through it."""


def _root_grads(tensors: list, grad_tensors: list | None, create_graph: bool,
                check_shapes: bool = True) -> list:
    if grad_tensors and len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors; "
                           "give one gradient per tensor (or None)")
    roots = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward: expected tensors, got {type(t).__name__} at position {i}")
        if not t.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn: "
                "nothing here depends on a tensor created with requires_grad = TRUE")
        if create_graph and MODES and "_tangent" in t.__dict__:
            raise ForwardOverReverseError(  # (forward_ad: the walk's formulas call ops directly)
                "a gradient with create_graph = TRUE of a dual tensor (forward-mode AD) is "
                "not supported: its tangent would be wrong (forward-over-reverse); take the "
                "gradient outside with_dual_level(), and compute Hessian-vector products by "
                "reverse mode twice (autograd_grad(..., create_graph = TRUE) of a gradient)")
        if t.device == "meta":  # (PyTorch gives meta gradients; not done here)
            raise NotImplementedError(
                "backward() from a meta tensor is not supported here: a meta tensor has "
                "only a shape and a dtype; compute on the cpu device to get gradients")
        g = grad_tensors[i] if grad_tensors else None
        if g is None:
            if t.data.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs: this tensor has "
                    f"shape [{', '.join(map(str, t.shape))}]; pass a gradient of that shape, "
                    "e.g. backward(gradient = torch_ones_like(y)), or reduce it with sum()")
            g = wrap(implicit_grad(t.data.shape, t.data.dtype))
        else:
            if not isinstance(g, Tensor):
                g = Tensor(to_array(g, t.dtype))
            if check_shapes and g.shape != t.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"[{', '.join(map(str, g.shape))}] and output[{i}] has a shape of "
                    f"[{', '.join(map(str, t.shape))}].")
            if not create_graph:
                g = g.detach()
        roots.append((edge(t), g))
    return roots


def autograd_backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
                      create_graph: bool = False, inputs: Any = None, *,
                      check_shapes: bool = True) -> None:
    """Accumulate d(tensors)/d(leaves) into the leaves' `.grad`.

    `check_shapes=False` lets a gradient of another shape than its tensor flow
    into the graph unchecked, as libtorch's C++ API (and so R torch) does."""
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) if grad_tensors is not None else None
    retain = create_graph if retain_graph is None else retain_graph
    roots = _root_grads(tensors, grads, create_graph, check_shapes)
    if inputs is None:
        run_backward(roots, retain, create_graph, sum_to=sum_to)
        return
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    # Only accumulate into the given inputs: capture their grads, then add.
    edges = [_input_edge(t, i) for i, t in enumerate(inputs)]
    got = run_backward(roots, retain, create_graph, capture=edges, accumulate=False,
                       sum_to=sum_to)
    with engine.GradMode(create_graph):
        for t, g in zip(inputs, got):
            if g is not None:
                engine.accumulate_grad(t, g)


def backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """`x.backward()`: autograd_backward of this one tensor."""
    if gradient is None and inputs is None and not create_graph and self._rg and \
            self.data.size == 1 and type(self.data) is np.ndarray:  # (not meta)
        # Fast path: the common `loss.backward()`, with no argument to check.
        d, fn = self.data, self.grad_fn
        run_backward([((fn, self._output_nr) if fn is not None else edge(self),
                       implicit_grad(d.shape, d.dtype))], bool(retain_graph), False)
        return
    autograd_backward([self], None if gradient is None else [gradient], retain_graph,
                      create_graph, inputs)


def _input_edge(t: Any, i: int) -> tuple:
    if not isinstance(t, Tensor):
        raise TypeError(f"inputs[{i}] is a {type(t).__name__}, expected a tensor")
    if not t.requires_grad:
        raise RuntimeError(f"One of the differentiated Tensors (inputs[{i}]) does not require "
                           "grad")
    return (t.grad_fn, t._output_nr) if t.grad_fn is not None else (grad_accumulator(t), 0)


def autograd_grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
                  retain_graph: bool | None = None, create_graph: bool = False,
                  allow_unused: bool = False, *, check_shapes: bool = True) -> list:
    """Gradients of `outputs` w.r.t. `inputs`, returned (not accumulated).
    `check_shapes` as for autograd_backward."""
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    grads = _as_list(grad_outputs) if grad_outputs is not None else None
    retain = create_graph if retain_graph is None else retain_graph
    roots = _root_grads(outputs, grads, create_graph, check_shapes)
    edges = [_input_edge(t, i) for i, t in enumerate(inputs)]
    got = run_backward(roots, retain, create_graph, capture=edges, accumulate=False,
                       sum_to=sum_to)
    out = []
    for i, g in enumerate(got):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (inputs[{i}]) appears to not have been "
                "used in the graph. Set allow_unused=True if this is the desired behavior.")
        out.append(g if g is None or create_graph else g.detach())
    return out


# Grad mode, R torch's names (all usable as `with` blocks; the first two as decorators too).

def with_no_grad(fn: Callable | None = None) -> Any:
    """`with with_no_grad():` block, or `@with_no_grad` / `@with_no_grad()` decorator."""
    return engine.no_grad() if fn is None else engine.no_grad()(fn)


def with_enable_grad(fn: Callable | None = None) -> Any:
    return engine.enable_grad() if fn is None else engine.enable_grad()(fn)


def with_detect_anomaly(fn: Callable | None = None) -> Any:
    """`with with_detect_anomaly():` — name the forward op behind a failing backward."""
    if fn is None:
        return engine.detect_anomaly()

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with engine.detect_anomaly():
            return fn(*args, **kwargs)
    return wrapped


def autograd_set_grad_mode(enabled: bool) -> bool:
    """Set grad mode for this thread; returns the previous mode."""
    return engine.set_grad_enabled(enabled)


def autograd_is_grad_enabled() -> bool:
    return engine.is_grad_enabled()


no_grad = engine.no_grad
enable_grad = engine.enable_grad
set_grad_enabled = engine.set_grad_enabled
is_grad_enabled = engine.is_grad_enabled
