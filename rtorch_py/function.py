"""Custom differentiable functions.

Two front ends over one mechanism (`_apply`):
- R torch's `autograd_function(forward=, backward=)`: arguments are named by
  forward's signature and backward returns a mapping of gradients by name;
- PyTorch's `Function` class: `forward(ctx, *args)` or `forward(*args)` plus
  `setup_context(ctx, inputs, output)`, backward returning a tuple in order.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import engine
from .containers import NamedList, named_list
from .engine import Node, SavedTensor, edge
from .forward_ad import ACTIVE_LEVEL as _DUAL_LEVEL, set_tangent, tangent_of
from .ops.recording import sum_to
from .tensor import DTYPES_BY_NP, Tensor, wrap

# R torch's custom nodes are libtorch CppNodes around its LanternFunction.
R_NODE_NAME = "torch::autograd::CppNode<torch::autograd::LanternFunction>"

_state = engine.thread_state()  # grad mode, read on every call
_NO_EDGE = (None, 0)  # the edge of an input that needs no gradient


class AutogradContext:
    """`ctx`: what forward tells backward (R torch's and PyTorch's methods)."""

    # Defaults at class level: a ctx is made on every call, so it sets only
    # what every call has.
    _needs_view: Any = None      # needs_input_grad, built on first use
    _saved_names: list = []      # names of the saved values ("" if unnamed), in order
    _to_save: list | None = []   # the values as given in forward; None once the node has them
    _saved_view: Any = None      # cached while one backward runs
    _dirty: tuple | list = ()
    _non_diff: tuple | list = ()
    _node: Node | None = None    # set only while backward runs (no cycle)
    _fw_names: list = []         # names and values kept with save_for_forward, for jvp
    _fw_saved: list = []
    _in_jvp = False              # jvp is running: saved_variables are save_for_forward's
    materialize_grads = True
    output_meta: list = []       # (shape, dtype) of each output, when there are several

    def __init__(self, fn_name: str, arg_names: Sequence[str], needs: list) -> None:
        self._fn_name = fn_name
        self._arg_names = arg_names
        self._needs = needs

    @property
    def needs_input_grad(self) -> Any:
        """Named list (R style) of whether each forward argument needs a gradient."""
        if self._needs_view is None:
            self._needs_view = NamedList(self._arg_names, self._needs)
        return self._needs_view

    @needs_input_grad.setter
    def needs_input_grad(self, value: Any) -> None:
        self._needs_view = value

    # -- called in forward -------------------------------------------------
    def save_for_backward(self, *args: Any, **kwargs: Any) -> None:
        """Keep tensors or any other values for backward, in order, with names."""
        if args:
            self._saved_names = [""] * len(args) + list(kwargs)
            self._to_save = [*args, *kwargs.values()]
        else:  # (all by name: the usual R-style call)
            self._saved_names = list(kwargs)
            self._to_save = list(kwargs.values())

    def save_for_forward(self, *args: Any, **kwargs: Any) -> None:
        """Keep values for jvp (forward mode), which reads them as saved_variables."""
        self._fw_names = [""] * len(args) + list(kwargs)
        self._fw_saved = [*args, *kwargs.values()]

    def save_named(self, names: Sequence[str], values: Sequence[Any]) -> None:
        """`save_for_backward` with the names as a list ("" for an unnamed value),
        e.g. from an R named list."""
        if len(names) != len(values):
            raise ValueError(f"save_named: {len(names)} names for {len(values)} values")
        self._saved_names = list(names)
        self._to_save = list(values)

    def mark_dirty(self, *tensors: Any) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"{self._fn_name}: mark_dirty() takes tensors, got "
                                f"{_kind(t)}")
        self._dirty = [*self._dirty, *tensors]

    def mark_non_differentiable(self, *tensors: Any) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"{self._fn_name}: mark_non_differentiable() takes tensors, "
                                f"got {_kind(t)}")
        self._non_diff = [*self._non_diff, *tensors]

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    # -- read in backward --------------------------------------------------
    def _unpacked(self) -> list:
        if self._in_jvp:
            return list(self._fw_saved)
        if self._node is not None:
            return self._node.unpack_saved()  # the node keeps them (and frees them)
        if self._to_save is not None:  # in forward, or no graph: the values as given
            return list(self._to_save)
        return [None] * len(self._saved_names)  # after forward: only backward sees them

    @property
    def saved_variables(self) -> NamedList:
        view = self._saved_view
        if view is None:
            node = self._node
            if node is not None:  # in backward: kept while it runs
                values = []  # (node.unpack_saved(), inline: a custom node's are a list)
                for s in node.saved:
                    values.append(s.unpack(node) if type(s) is SavedTensor else s)
                view = self._saved_view = named_list(self._saved_names, values)
            else:
                view = NamedList(self._fw_names if self._in_jvp else self._saved_names,
                                 self._unpacked())
        return view

    saved_variable = saved_variables  # the spelling in R torch's reference example

    @property
    def saved_tensors(self) -> tuple:
        return tuple(self._unpacked())


# --------------------------------------------------------------------------
# The shared mechanism


class CustomNode(Node):
    """The node of a custom function call: it keeps the call's ctx."""

    __slots__ = ("ctx",)


def _apply(name: str, label: str, backward: Callable, arg_names: Sequence[str],
           args: Sequence[Any], call_forward: Callable, by_name: bool,
           positional: bool = False, jvp: Callable | None = None) -> Any:
    """Run a custom forward without recording, then attach one node `name` for it.
    `label` names the function in error messages. `call_forward(ctx, args)` runs
    the user's forward; with `positional` it is the forward itself, `(ctx, *args)`.
    Under forward mode, `jvp(ctx, *input_tangents)` gives the outputs' tangents."""
    tangents: Sequence = ()
    if _DUAL_LEVEL[0] is not None:  # (forward mode: the inputs' tangents, if any)
        tangents = [tangent_of(a) for a in args]
        if all(t is None for t in tangents):
            tangents = ()
        elif jvp is None:
            raise RuntimeError(
                f"{label} has a dual input (forward-mode AD) but no jvp: give "
                "it a jvp returning the outputs' tangents (R: autograd_function_with_jvp("
                "forward, backward, jvp = function(ctx, ...)); Python: autograd_function("
                "..., jvp=) or a jvp staticmethod)")
    state = _state
    grad_on = state.grad
    # forward sees tensors that require grad detached (same data and version);
    # `originals` maps what it saw back to the caller's tensors. The node's edges
    # and input shapes are taken here too, as every node's are (ops.recording);
    # the shapes stay with the ctx, which checks the user's gradients against
    # them (`_match_grads`).
    needs, fwd_args, originals, edges, meta = [], [], {}, [], []
    for a in args:
        if grad_on and type(a) is Tensor and a._rg:
            alias = a._alias()
            originals[id(alias)] = a
            needs.append(True)
            fwd_args.append(alias)
            edges.append((a.grad_fn, a._output_nr) if a.grad_fn is not None else edge(a))
            d = a.data
            meta.append((d.shape, d.dtype))
        else:
            needs.append(False)  # (forward sees a dual input without its tangent)
            fwd_args.append(a._alias() if tangents and tangent_of(a) is not None else a)
            edges.append(_NO_EDGE)
            meta.append(None)
    ctx = AutogradContext(label, arg_names, needs)
    state.grad = False
    try:
        out = call_forward(ctx, *fwd_args) if positional else call_forward(ctx, fwd_args)
    except Exception as err:
        err.add_note(f"(raised in the forward of {label})")
        raise
    finally:
        state.grad = grad_on
    outputs, is_seq = ([out], False) if type(out) is Tensor else _outputs(out, label)
    out_tangents = _jvp(jvp, ctx, tangents, outputs, label) if tangents else ()
    if not originals:
        if out_tangents:
            _set_tangents(outputs, out_tangents)
        return out  # nothing to differentiate: no node, outputs as forward gave them

    dirty_ids = _dirty_ids(ctx, originals, args, label) if ctx._dirty else ()
    non_diff = {id(t) for t in ctx._non_diff} if ctx._non_diff else ()
    ctx._backward, ctx._by_name, ctx._meta = backward, by_name, meta
    node = CustomNode(name, _custom_backward, tuple(edges), ())
    node.ctx = ctx
    if len(outputs) != 1:  # (the outputs' shapes: zeros for those given no gradient)
        node.num_outputs = len(outputs)
        ctx.output_meta = [(t.data.shape, t.data.dtype) for t in outputs]

    final = []
    for i, t in enumerate(outputs):
        d = t.data
        res = t
        if dirty_ids and id(t) in dirty_ids:
            res = originals.get(id(t), t)   # the caller's tensor, now modified
        elif id(t) in originals:
            res = t._alias()                # an input returned as is: a new alias
        if d.dtype.kind != "f" or (non_diff and id(t) in non_diff):
            if res is not t:
                res.grad_fn, res._rg = None, False
        else:
            res.grad_fn, res._rg = node, True
            if res._output_nr != i:
                res._output_nr = i
        final.append(res)

    # Saved inputs are kept as the caller's tensors (so create_graph can flow
    # through them); saved outputs without their node, to avoid a cycle. The
    # values now live in the node; the ctx keeps their names.
    packed = []
    for v in ctx._to_save:
        if type(v) is Tensor:
            for i, t in enumerate(outputs):
                if t is v and not (dirty_ids and id(v) in dirty_ids):
                    v = SavedTensor(final[i], True, i)
                    break
            else:
                v = SavedTensor(originals.get(id(v), v))
        packed.append(v)
    node.saved = packed  # (a Packed list)
    ctx._to_save = None
    if out_tangents:
        _set_tangents(final, out_tangents)
    if not is_seq:
        return final[0]
    return tuple(final) if isinstance(out, tuple) else final


def _jvp(jvp: Callable, ctx: AutogradContext, tangents: list, outputs: list,
         label: str) -> list:
    """The outputs' tangents by the user's jvp, checked against the outputs."""
    ctx._in_jvp, ctx._saved_view = True, None
    try:
        got = jvp(ctx, *tangents)
    except Exception as err:
        err.add_note(f"(raised in the jvp of {label})")
        raise
    finally:
        ctx._in_jvp, ctx._saved_view = False, None
    got = list(_as_mapping(got).values()) if isinstance(got, (dict, NamedList)) else \
        [got] if isinstance(got, Tensor) or got is None else list(got)
    if len(got) != len(outputs):
        raise RuntimeError(f"{label}: jvp returned {len(got)} tangents for {len(outputs)} "
                           "outputs; return one tangent per output of forward")
    for i, (t, o) in enumerate(zip(got, outputs)):
        if t is not None and (not isinstance(t, Tensor) or t.shape != o.shape):
            got_kind = (f"a tangent of shape [{', '.join(map(str, t.shape))}]"
                        if isinstance(t, Tensor) else _kind(t))
            raise RuntimeError(
                f"{label}: jvp returned {got_kind} for output {i + 1}, whose shape is "
                f"[{', '.join(map(str, o.shape))}]; the tangent must be a tensor of the "
                "output's shape")
    return got


def _set_tangents(outputs: list, tangents: Sequence) -> None:
    for o, t in zip(outputs, tangents):
        if t is not None and o.dtype.is_floating_point:
            set_tangent(o, t if t.dtype == o.dtype else t.to(dtype=o.dtype))


def _dirty_ids(ctx: AutogradContext, originals: dict, args: Sequence, label: str) -> set:
    """ids of the tensors forward marked dirty, checked to be inputs that may change."""
    dirty = set()
    for t in ctx._dirty:
        orig = originals.get(id(t))
        if orig is None and not any(t is a for a in args):
            raise RuntimeError(f"{label}: mark_dirty() was given a tensor that is not an "
                               "input of forward; only inputs modified in place can be "
                               "marked dirty")
        if orig is not None and orig.grad_fn is None:
            raise RuntimeError(
                f"{label}: a leaf Variable that requires grad has been used in an in-place "
                "operation (mark_dirty). Clone it before passing it to the function.")
        dirty.add(id(t))
    return dirty


def _outputs(out: Any, name: str) -> tuple:
    if isinstance(out, Tensor):
        return [out], False
    if isinstance(out, (list, tuple)) and out and all(isinstance(t, Tensor) for t in out):
        return list(out), True
    if isinstance(out, (list, tuple)):
        bad = [_kind(t) for t in out if not isinstance(t, Tensor)]
        raise TypeError(f"{name}: forward must return a tensor or a list of tensors, but the "
                        f"list it returned holds {', '.join(bad) or 'nothing'}")
    raise TypeError(f"{name}: forward must return a tensor or a list of tensors, got "
                    f"{_kind(out)}")


@engine.backward_function
def _custom_backward(node: Node, grads: list) -> tuple:
    ctx = node.ctx
    arrays = not _state.grad  # the walk carries arrays: the user's code sees tensors
    if arrays:
        tensors = []
        for g in grads:
            tensors.append(None if g is None else wrap(g))
        grads = tensors
    if ctx.materialize_grads and len(grads) > 1:
        grads = [wrap(np.zeros(*m)) if g is None else g for g, m in zip(grads, ctx.output_meta)]
    ctx._node = node
    try:
        return _match_grads(ctx._backward(ctx, *grads), ctx, arrays)
    except Exception as err:
        err.add_note(f"(raised in the backward of {ctx._fn_name})")
        raise
    finally:
        ctx._node = ctx._saved_view = None


def _match_grads(result: Any, ctx: AutogradContext, arrays: bool) -> list:
    """backward's result as one gradient per input (None where none is needed),
    checked against the inputs; their arrays when the walk carries arrays."""
    arg_names, name = ctx._arg_names, ctx._fn_name
    n = len(arg_names)
    if ctx._by_name:
        if type(result) is not dict:
            result = _as_mapping(result)
            if result is None or not isinstance(result, Mapping):
                if n == 1 and (isinstance(result, Tensor) or result is None):
                    result = {arg_names[0]: result}
                else:
                    raise TypeError(
                        f"{name}: backward must return a named list of gradients keyed by "
                        f"forward's argument names ({', '.join(arg_names)}), got "
                        f"{_kind(result)}")
        grads: list = [None] * n
        for key, g in result.items():
            try:
                grads[arg_names.index(key)] = g
            except ValueError:
                raise RuntimeError(
                    f"{name}: backward returned a gradient named '{key}', which is not an "
                    f"argument of forward (its arguments are: {', '.join(arg_names)})") from None
    else:
        if isinstance(result, Tensor) or result is None:
            result = (result,)
        if not isinstance(result, (tuple, list)):
            raise TypeError(f"{name}: backward must return a tuple of gradients, got "
                            f"{_kind(result)}")
        if len(result) != n:
            raise RuntimeError(f"{name}: backward returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        grads = list(result)
    # Check each gradient against its input (the node skips the engine's generic
    # check: these messages name the function and the argument).
    needs = ctx._needs
    meta = ctx._meta
    for i, g in enumerate(grads):
        if g is None:
            continue
        if not needs[i]:
            grads[i] = None       # gradients for inputs that need none are ignored
            continue
        if type(g) is not Tensor:
            raise TypeError(f"{name}: backward returned {_kind(g)} as the gradient "
                            f"for '{arg_names[i]}'; gradients must be tensors (or NULL/None)")
        shape, dtype = meta[i]
        d = g.data
        if d.dtype is not dtype or d.shape != shape:  # (rare: the common case skips this)
            g = _conform_grad(g, shape, dtype, name, arg_names[i])
            d = g.data
        grads[i] = d if arrays else g
    return grads


def _conform_grad(g: Tensor, shape: tuple, dtype: np.dtype, name: str, arg: str) -> Tensor:
    """A user's gradient g for input `arg` brought to its shape (if a broadcast of
    it) and dtype; another shape or a non-floating dtype is an error."""
    d = g.data
    if d.dtype.kind != "f":
        raise TypeError(f"{name}: backward returned a gradient of dtype {g.dtype} for "
                        f"'{arg}', which is {_dtname(dtype)}; gradients must "
                        "be floating point")
    if d.shape != shape:
        if not engine.reduces_to(d.shape, shape):
            raise RuntimeError(
                f"{name}: backward returned a gradient of shape "
                f"[{', '.join(map(str, g.shape))}] for '{arg}', whose shape is "
                f"[{', '.join(map(str, shape))}]; the gradient must have the input's shape")
        g = sum_to(g, shape)
    return g if g.data.dtype == dtype else g.to(dtype=dtype)


def _kind(v: Any) -> str:
    """A value's kind in words that read right from R and from Python."""
    if v is None:
        return "NULL (None)"
    if isinstance(v, bool):
        return "a logical (bool)"
    if isinstance(v, (int, float)):
        return f"a number ({type(v).__name__})"
    if isinstance(v, str):
        return "a string (str)"
    if isinstance(v, (list, tuple, NamedList)):
        return "a list"
    if isinstance(v, np.ndarray):
        return "a NumPy array"
    return f"a {type(v).__name__}"


def _as_mapping(result: Any) -> Any:
    if isinstance(result, NamedList):
        return dict(result.items())
    return result


def _dtname(d: np.dtype) -> str:
    return repr(DTYPES_BY_NP[d])


# --------------------------------------------------------------------------
# R torch style


class AutogradFunction:
    """What `autograd_function()` returns: call it like forward, minus ctx."""

    def __init__(self, forward: Callable, backward: Callable, name: str | None = None,
                 jvp: Callable | None = None) -> None:
        """`name` labels the function in error messages (default: forward's name); `jvp`
        (forward mode) takes ctx and the input tangents by name, returns the outputs'."""
        if not callable(forward) or not callable(backward):
            raise TypeError("autograd_function() needs forward and backward functions")
        sig = inspect.signature(forward)
        params = list(sig.parameters.values())
        if not params:
            raise TypeError("forward must take ctx as its first argument")
        self.forward, self.backward, self.jvp = forward, backward, jvp
        self._sig = sig.replace(parameters=params[1:])
        self._simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params[1:])
        self.arg_names = [p.name for p in params[1:]]
        fname = getattr(forward, "__name__", "")
        self.label = (f"custom function '{name}'" if name else
                      f"custom function with forward '{fname}'" if fname and fname != "<lambda>"
                      else "custom function")
        self.__signature__ = self._sig

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = self.arg_names
        if self._simple and not kwargs and len(args) == len(names):
            values: Sequence = args
        else:
            try:
                bound = self._sig.bind(*args, **kwargs)
            except TypeError as err:
                n = len(self.arg_names)
                raise TypeError(
                    f"{self.label} takes {n} argument{'s' if n != 1 else ''} "
                    f"({', '.join(self.arg_names)}) but was called with {len(args)} positional "
                    f"and {len(kwargs)} named: {err}") from None
            bound.apply_defaults()
            values, names = _flatten_bound(bound)
        jvp = None if self.jvp is None else _by_name(self.jvp, names)
        if names is self.arg_names:
            return _apply(R_NODE_NAME, self.label, self.backward, names, values, self.forward,
                          True, positional=True, jvp=jvp)

        def call(ctx, fargs, _names=names):
            pos, kw = _rebuild(self._sig, _names, fargs)
            return self.forward(ctx, *pos, **kw)
        return _apply(R_NODE_NAME, self.label, self.backward, names, values, call, True,
                      jvp=jvp)


def _by_name(jvp: Callable, names: Sequence[str]) -> Callable:
    """jvp called with the tangents by forward's argument names (None: no tangent)."""
    def call(ctx, *tangents):
        return jvp(ctx, *[t for n, t in zip(names, tangents) if not n],
                   **{n: t for n, t in zip(names, tangents) if n})
    return call


def _flatten_bound(bound: inspect.BoundArguments) -> tuple:
    names, values = [], []
    for pname, v in bound.arguments.items():
        kind = bound.signature.parameters[pname].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            names += [""] * len(v)
            values += list(v)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            names += list(v)
            values += list(v.values())
        else:
            names.append(pname)
            values.append(v)
    return values, names


def _rebuild(sig: inspect.Signature, names: list, values: list) -> tuple:
    pos, kw = [], {}
    params = sig.parameters
    for n, v in zip(names, values):
        p = params.get(n)
        if n == "" or (p is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                       and not kw):
            pos.append(v)
        else:
            kw[n] = v
    return pos, kw


def autograd_function(forward: Callable, backward: Callable, name: str | None = None,
                      jvp: Callable | None = None) -> AutogradFunction:
    """R torch's `autograd_function(forward = , backward = )`, with `jvp` for forward mode."""
    return AutogradFunction(forward, backward, name, jvp)


# --------------------------------------------------------------------------
# PyTorch style


class FunctionCtx(AutogradContext):
    """ctx of the class style: `needs_input_grad` is a tuple."""


class Function:
    """Subclass with static `forward` (and optionally `setup_context`) and
    `backward`, then call `MyFunction.apply(*args)`."""

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    setup_context = None
    jvp: Any = None  # a staticmethod jvp(ctx, *input_tangents) -> output tangents (forward mode)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            sig = inspect.signature(cls.forward)
            params = list(sig.parameters.values())
            combined = cls.setup_context is None or cls.setup_context is Function.setup_context
            if combined:
                sig = sig.replace(parameters=params[1:])
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())
        name = cls.__name__ + "Backward"
        separate = cls.setup_context is not None and cls.setup_context is not Function.setup_context
        arg_names = _class_arg_names(cls, len(args), skip_ctx=not separate)

        def call(ctx, fargs):
            ctx.needs_input_grad = tuple(ctx._needs)
            if separate:
                out = cls.forward(*fargs)
                cls.setup_context(ctx, tuple(fargs), out)
                return out
            return cls.forward(ctx, *fargs)

        return _apply(name, f"custom function {cls.__name__}", _tuple_backward(cls), arg_names,
                      list(args), call, False, jvp=cls.jvp)


def _class_arg_names(cls: type, n: int, skip_ctx: bool) -> list:
    """forward's parameter names (for messages), padded for *args."""
    try:
        params = list(inspect.signature(cls.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[int(skip_ctx):]
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (names + [f"input{i}" for i in range(len(names), n)])[:n]


def _tuple_backward(cls: type) -> Callable:
    def backward(ctx, *grads):
        if not isinstance(ctx.needs_input_grad, tuple):
            ctx.needs_input_grad = tuple(ctx._needs)
        return cls.backward(ctx, *grads)
    return backward
