"""R torch's `autograd_function()` with R closures as forward and backward,
and `ctx` as R sees it."""
from __future__ import annotations

from typing import Any

from ..function import R_NODE_NAME, AutogradContext, NamedList, _apply
from .convert import _list, _undef

# --------------------------------------------------------------------------
# Custom functions with R closures


class RAutogradFunction:
    """The Python side of an R `autograd_function()`.

    `forward` and `backward` are the user's R closures (RObjects), called
    directly: forward with ctx and the arguments as the user passed them
    (non-tensors boxed, so they come back unchanged), backward with ctx and
    one gradient per output, or, as R torch does when backward takes fewer
    arguments (`n_backward`), the trailing gradients together as a list.
    """

    def __init__(self, forward: Any, backward: Any, arg_names: Any, n_backward: Any,
                 jvp: Any = None) -> None:
        self.forward = forward
        self.backward = backward
        self.jvp = jvp  # (forward mode) called with ctx and the input tangents by name
        self.arg_names = [arg_names] if isinstance(arg_names, str) else list(arg_names or [])
        self.n_backward = int(n_backward)

    def _grads_for_backward(self, grads: list) -> list:
        n = self.n_backward
        if len(grads) > n >= 1:
            return grads[:n - 1] + [list(grads[n - 1:])]
        return grads

    def apply(self, args: Any, label: str | None = None) -> Any:
        """Call it: `args` as the R wrapper collected them; `label` is the
        name the R function was called by (for error messages)."""
        values = _list(args)
        names = args.names() if isinstance(args, NamedList) else self.arg_names
        forward, backward_r = self.forward, self.backward
        fwd_names = ["", *names]

        def call(ctx: AutogradContext, fargs: list) -> Any:
            out = forward.call_named(fwd_names, [ctx, *fargs])
            if isinstance(out, NamedList):
                out = out.values()
            return out

        def backward(ctx: AutogradContext, *grads: Any) -> Any:
            gs = self._grads_for_backward(list(grads))
            out = backward_r.call_named([""] * (len(gs) + 1), [ctx, *gs])
            if isinstance(out, NamedList):
                out = NamedList(out.names(), [_undef(v) for v in out.values()])
            elif isinstance(out, list):
                raise TypeError(f"{label or 'autograd_function'}: backward must return a "
                                "named list of gradients keyed by forward's argument names "
                                f"({', '.join(self.arg_names)}), got an unnamed list")
            return _undef(out)

        jvp_r = self.jvp

        def jvp(ctx: AutogradContext, *tangents: Any) -> Any:
            out = jvp_r.call_named(fwd_names, [ctx, *tangents])
            if isinstance(out, NamedList):
                out = out.values()
            return [_undef(t) for t in out] if isinstance(out, list) else _undef(out)

        return _apply(R_NODE_NAME, label or "autograd_function", backward, names, values,
                      call, True, jvp=None if jvp_r is None else jvp)


# (what R's autograd_function() and its calls reach: R/autograd.R)
make_autograd_function = RAutogradFunction
apply_function = RAutogradFunction.apply


def ctx_get(ctx: AutogradContext, name: str) -> Any:
    if name in ("saved_variables", "saved_variable"):
        saved = ctx.saved_variables
        names = saved.names()
        if all(n == "" for n in names):
            return saved.values()
        return saved
    if name == "needs_input_grad":
        return ctx.needs_input_grad
    return None


def ctx_save(ctx: AutogradContext, values: Any) -> None:
    if isinstance(values, NamedList):
        ctx.save_named(values.names(), values.values())
    else:
        values = _list(values)
        ctx.save_named([""] * len(values), values)


def ctx_save_for_forward(ctx: AutogradContext, values: Any) -> None:
    if isinstance(values, NamedList):
        pairs = list(zip(values.names(), values.values()))
        ctx.save_for_forward(*[v for n, v in pairs if not n], **{n: v for n, v in pairs if n})
    else:
        ctx.save_for_forward(*_list(values))


def ctx_mark_dirty(ctx: AutogradContext, tensors: Any) -> None:
    ctx.mark_dirty(*_list(tensors))


def ctx_mark_non_differentiable(ctx: AutogradContext, tensors: Any) -> None:
    ctx.mark_non_differentiable(*_list(tensors))


