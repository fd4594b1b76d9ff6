"""ONNX export of traced graphs: `jit_export_onnx()` (R torch has no ONNX export;
the name follows its `jit_*` family).

Each node of a traced graph becomes ONNX nodes (opset 17 by default) by the
function `CONVERTERS` holds for its kind (an elementwise op's ONNX operator is
declared on the op: `onnx="Relu"`, ops/registry.py); parameters, buffers and constants
become initializers with their current values. Shapes are the traced ones
(the trace fixed them; `dynamic_batch` lets the first dim of the inputs and
outputs vary, for graphs whose shape arithmetic doesn't depend on it). A node
with no converter, or arguments a converter can't express (a training-mode
dropout, in-place ops), is refused by name. The `onnx` package builds and
checks the model; ONNX Runtime runs it (tests/test_jit_onnx.py compares).
"""
from __future__ import annotations

import inspect
import math
import os
from typing import Any, Callable

import numpy as np

from ..ops.registry import REGISTRY, OpSpec
from ..tensor import TRACEABLE, Tensor, bool_, dtype, promote_types
from .aten import Unsupported, display_name
from .graph import Graph, TensorType, Value, attribute, walk
from .script import ScriptFunction, ScriptModule

DEFAULT_OPSET = 17

_ONNX_TYPES = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7,
               "bool": 9, "float16": 10, "float64": 11, "complex64": 14, "complex128": 15,
               "bfloat16": 16}


def _onnx():
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError:
        raise ImportError("jit_export_onnx() needs the Python package onnx: pip install onnx "
                          "(rtorch-py's extra: pip install 'rtorch-py[onnx]')") from None
    return onnx, helper, numpy_helper


class _Builder:
    """The ONNX graph under construction: nodes, initializers, names."""

    def __init__(self, helper: Any, numpy_helper: Any, opset: int) -> None:
        self.helper, self.numpy_helper, self.opset = helper, numpy_helper, opset
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict[int, str] = {}
        self.types: dict[str, TensorType] = {}
        self.counter = 0
        self.constants: dict[Any, str] = {}

    def fresh(self, base: str = "t") -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    def node(self, op: str, inputs: list, n_outputs: int = 1, **attrs: Any) -> list[str]:
        outs = [self.fresh(op.lower()) for _ in range(n_outputs)]
        self.nodes.append(self.helper.make_node(op, inputs, outs, **attrs))
        return outs

    def one(self, op: str, inputs: list, **attrs: Any) -> str:
        return self.node(op, inputs, 1, **attrs)[0]

    def array(self, arr: np.ndarray, base: str = "const") -> str:
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        got = self.constants.get(key)
        if got is None:
            got = self.constants[key] = self.fresh(base)
            self.initializers.append(self.numpy_helper.from_array(np.asarray(arr), got))
        return got

    def ints(self, values: Any) -> str:
        return self.array(np.asarray(list(values), dtype=np.int64))

    def scalar(self, value: Any, like: Any) -> str:
        """A number as a 0-d constant of the dtype of the tensor named `like`."""
        t = self.types.get(like) if isinstance(like, str) else None
        np_dtype = t.dtype.np if t is not None else np.float32
        return self.array(np.asarray(value, dtype=np_dtype))

    def operand(self, x: Any, like: str | None = None) -> str:
        """The name of a tensor Value, or of a constant made of a number."""
        if isinstance(x, Value):
            return self.names[id(x)]
        if isinstance(x, Tensor):
            return self.array(np.asarray(x.data))
        if isinstance(x, (bool, int, float)):
            return self.scalar(x, like)
        raise Unsupported(f"the operand {x!r}")

    def type_of(self, name: str) -> TensorType:
        return self.types[name]


# --------------------------------------------------------------------------
# Converters: (builder, node arguments, the node's output Values) -> output names


CONVERTERS: dict[str, Callable] = {}


def converter(*kinds: str) -> Callable:
    def register(fn: Callable) -> Callable:
        for k in kinds:
            CONVERTERS[k] = fn
        return fn
    return register


def _arg(args: dict, *names: str, default: Any = None) -> Any:
    for n in names:
        if n in args:
            return args[n]
    return default


def _x(b: _Builder, args: dict) -> str:
    return b.operand(_arg(args, "self", "input"))


def _elementwise(tensors: int) -> dict[str, str]:
    """{op: ONNX operator} of the ops declaring one (`onnx="Relu"`) that take
    `tensors` tensors (their required positional arguments)."""
    return {name: spec.onnx for name, spec in REGISTRY.items()
            if isinstance(spec.onnx, str) and _required(spec) == tensors}


def _required(spec: OpSpec) -> int:
    return sum(p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
               for p in inspect.signature(spec.impl).parameters.values())


_UNARY = _elementwise(1)
_ROUNDING = {"Floor", "Ceil", "Round"}


def _cast(b: _Builder, name: str, to: dtype) -> str:
    """name cast to a dtype, when its (known) dtype is another."""
    t = b.types.get(name)
    if t is not None and t.dtype is to:
        return name
    out = b.one("Cast", [name], to=_ONNX_TYPES[to.name])
    b.types[out] = TensorType(to, t.shape if t else (), (), False)
    return out


for _kind, _op in _UNARY.items():
    def _unary(b: _Builder, args: dict, outs: list, _op: str = _op) -> list:
        x = _x(b, args)
        src, out = b.type_of(x).dtype, outs[0].type.dtype
        if not src.is_floating_point:  # (ONNX's float ops on PyTorch's integer cases)
            if _op in _ROUNDING:
                return [b.one("Identity", [x])]
            if _op == "Relu" and out is src:
                return [b.one("Max", [x, b.scalar(0, x)])]
            if _op == "IsNaN":
                return [b.one("Not", [b.one("Equal", [x, x])])]
            if _op == "Not":
                return [b.one("Not", [_cast(b, x, bool_)])]
        if _op == "Not":
            return [b.one("Not", [_cast(b, x, bool_)])]
        return [b.one(_op, [_cast(b, x, out) if out.is_floating_point else x])]
    CONVERTERS[_kind] = _unary
    if "nnf_" + _kind in TRACEABLE:
        CONVERTERS["nnf_" + _kind] = _unary


@converter("contiguous", "clone", "nnf_dropout", "nnf_dropout2d", "nnf_dropout3d",
           "nnf_alpha_dropout")
def _identity(b: _Builder, args: dict, outs: list) -> list:
    if args.get("training"):
        raise Unsupported("dropout in training mode (export the module in eval mode: "
                          "$eval() before jit_trace(), or trace with respect_mode)")
    return [b.one("Identity", [_x(b, args)])]


_BINARY = _elementwise(2)
_COMPARISONS = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}
_LOGICAL = {"And", "Or", "Xor"}


def _operands(b: _Builder, args: dict, compute: dtype) -> tuple[str, str]:
    """A binary op's two operands in one dtype (ONNX has no type promotion)."""
    left = _arg(args, "self", "input")
    right = _arg(args, "other", "mat2", "exponent")
    x = b.operand(left) if isinstance(left, (Value, Tensor)) else None
    y = b.operand(right, like=x) if isinstance(right, (Value, Tensor)) or x is not None else None
    if x is None:
        x = b.operand(left, like=y)
    if not isinstance(left, (Value, Tensor)):
        b.types[x] = TensorType(compute, (), (), False)
    if not isinstance(right, (Value, Tensor)):
        b.types[y] = TensorType(compute, (), (), False)
    return _cast(b, x, compute), _cast(b, y, compute)


for _kind, _op in _BINARY.items():
    def _binary(b: _Builder, args: dict, outs: list, _op: str = _op, _kind: str = _kind) -> list:
        out = outs[0].type.dtype
        left, right = _arg(args, "self", "input"), _arg(args, "other", "mat2", "exponent")
        if _op in _COMPARISONS or _op in _LOGICAL:
            kinds = [v.type.dtype if isinstance(v, Value) else v.dtype for v in (left, right)
                     if isinstance(v, (Value, Tensor))]
            compute = kinds[0] if len(kinds) == 1 else promote_types(*kinds)
            if _op in _LOGICAL:
                if compute is not bool_:
                    raise Unsupported("bitwise and/or/xor of integers (ONNX's opset "
                                      f"{b.opset} has them on booleans only)")
        else:
            compute = out
        x, y = _operands(b, args, compute)
        if _kind in ("add", "sub") and args.get("alpha", 1) != 1:
            y = b.one("Mul", [y, b.scalar(args["alpha"], x)])
        if _kind == "div" and args.get("rounding_mode") is not None:
            if args["rounding_mode"] != "floor":
                raise Unsupported(f"div with rounding_mode = '{args['rounding_mode']}'")
            return [b.one("Floor", [b.one("Div", [x, y])])]
        if _kind == "remainder" and compute.is_floating_point:  # x - floor(x / y) * y
            q = b.one("Floor", [b.one("Div", [x, y])])
            return [b.one("Sub", [x, b.one("Mul", [q, y])])]
        if _kind == "remainder":
            return [b.one("Mod", [x, y], fmod=0)]
        if _kind == "ne":
            return [b.one("Not", [b.one("Equal", [x, y])])]
        return [b.one(_op, [x, y])]
    CONVERTERS[_kind] = _binary


@converter("rsub")
def _rsub(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    other = b.operand(args["other"], like=x)
    if args.get("alpha", 1) != 1:
        x = b.one("Mul", [x, b.scalar(args["alpha"], x)])
    return [b.one("Sub", [other, x])]


@converter("rdiv")
def _rdiv(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    return [b.one("Div", [b.operand(args["other"], like=x), x])]


@converter("nnf_linear")
def _linear(b: _Builder, args: dict, outs: list) -> list:
    x, w = b.operand(args["input"]), b.operand(args["weight"])
    bias = args.get("bias")
    if len(b.type_of(x).shape) == 2:
        inputs = [x, w] + ([b.operand(bias)] if bias is not None else [])
        return [b.one("Gemm", inputs, transB=1)]
    y = b.one("MatMul", [x, b.one("Transpose", [w], perm=[1, 0])])
    return [b.one("Add", [y, b.operand(bias)]) if bias is not None else y]


def _pairs(v: Any, n: int) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [int(v)] * n


for _nd in (1, 2, 3):
    def _conv(b: _Builder, args: dict, outs: list, _nd: int = _nd) -> list:
        x, w = b.operand(args["input"]), b.operand(args["weight"])
        wshape = b.type_of(w).shape
        dilation = _pairs(args.get("dilation", 1), _nd)
        padding = args.get("padding", 0)
        if isinstance(padding, str):
            if padding == "valid":
                pads = [0] * (2 * _nd)
            else:  # "same": PyTorch puts the odd one at the end
                total = [d * (k - 1) for d, k in zip(dilation, wshape[2:])]
                pads = [t // 2 for t in total] + [t - t // 2 for t in total]
        else:
            p = _pairs(padding, _nd)
            pads = p + p
        inputs = [x, w] + ([b.operand(args["bias"])] if args.get("bias") is not None else [])
        return [b.one("Conv", inputs, kernel_shape=list(wshape[2:]), pads=pads,
                      strides=_pairs(args.get("stride", 1), _nd), dilations=dilation,
                      group=int(args.get("groups", 1)))]
    CONVERTERS[f"nnf_conv{_nd}d"] = _conv

    def _conv_t(b: _Builder, args: dict, outs: list, _nd: int = _nd) -> list:
        x, w = b.operand(args["input"]), b.operand(args["weight"])
        p = _pairs(args.get("padding", 0), _nd)
        inputs = [x, w] + ([b.operand(args["bias"])] if args.get("bias") is not None else [])
        return [b.one("ConvTranspose", inputs, kernel_shape=list(b.type_of(w).shape[2:]),
                      pads=p + p, strides=_pairs(args.get("stride", 1), _nd),
                      dilations=_pairs(args.get("dilation", 1), _nd),
                      output_padding=_pairs(args.get("output_padding", 0), _nd),
                      group=int(args.get("groups", 1)))]
    CONVERTERS[f"nnf_conv_transpose{_nd}d"] = _conv_t

    def _max_pool(b: _Builder, args: dict, outs: list, _nd: int = _nd) -> list:
        if args.get("return_indices"):
            raise Unsupported("max pooling with return_indices")
        k = _pairs(args["kernel_size"], _nd)
        stride = args.get("stride")
        s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
            else _pairs(stride, _nd)
        p = _pairs(args.get("padding", 0), _nd)
        return [b.one("MaxPool", [_x(b, args)], kernel_shape=k, strides=s, pads=p + p,
                      dilations=_pairs(args.get("dilation", 1), _nd),
                      ceil_mode=int(bool(args.get("ceil_mode"))))]
    CONVERTERS[f"nnf_max_pool{_nd}d"] = _max_pool

    def _avg_pool(b: _Builder, args: dict, outs: list, _nd: int = _nd) -> list:
        if args.get("divisor_override") is not None:
            raise Unsupported("average pooling with divisor_override")
        k = _pairs(args["kernel_size"], _nd)
        stride = args.get("stride")
        s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
            else _pairs(stride, _nd)
        p = _pairs(args.get("padding", 0), _nd)
        return [b.one("AveragePool", [_x(b, args)], kernel_shape=k, strides=s, pads=p + p,
                      ceil_mode=int(bool(args.get("ceil_mode"))),
                      count_include_pad=int(bool(args.get("count_include_pad", True))))]
    CONVERTERS[f"nnf_avg_pool{_nd}d"] = _avg_pool

    def _adaptive(b: _Builder, args: dict, outs: list, _nd: int = _nd,
                  _kind: str = "avg") -> list:
        if args.get("return_indices"):
            raise Unsupported("adaptive max pooling with return_indices")
        x = _x(b, args)
        size_in = b.type_of(x).shape[-_nd:]
        size_out = outs[0].type.shape[-_nd:]
        if all(o == 1 for o in size_out):
            return [b.one("GlobalAveragePool" if _kind == "avg" else "GlobalMaxPool", [x])]
        if any(i % o for i, o in zip(size_in, size_out)):
            raise Unsupported(f"adaptive pooling from {list(size_in)} to {list(size_out)} "
                              "(windows of unequal sizes)")
        k = [i // o for i, o in zip(size_in, size_out)]
        op = "AveragePool" if _kind == "avg" else "MaxPool"
        return [b.one(op, [x], kernel_shape=k, strides=k)]
    CONVERTERS[f"nnf_adaptive_avg_pool{_nd}d"] = _adaptive
    CONVERTERS[f"nnf_adaptive_max_pool{_nd}d"] = \
        lambda b, a, o, _nd=_nd: _adaptive(b, a, o, _nd, "max")


@converter("nnf_batch_norm")
def _batch_norm(b: _Builder, args: dict, outs: list) -> list:
    if args.get("training") or args.get("running_mean") is None:
        raise Unsupported("batch norm in training mode, or without running statistics "
                          "(export the module in eval mode)")
    x = b.operand(args["input"])
    n = b.type_of(x).shape[1]
    np_dtype = b.type_of(x).dtype.np
    scale = b.operand(args["weight"]) if args.get("weight") is not None else \
        b.array(np.ones(n, dtype=np_dtype))
    bias = b.operand(args["bias"]) if args.get("bias") is not None else \
        b.array(np.zeros(n, dtype=np_dtype))
    return [b.one("BatchNormalization", [x, scale, bias, b.operand(args["running_mean"]),
                                         b.operand(args["running_var"])],
                  epsilon=float(args.get("eps", 1e-5)))]


@converter("nnf_layer_norm")
def _layer_norm(b: _Builder, args: dict, outs: list) -> list:
    x = b.operand(args["input"])
    shape = list(args["normalized_shape"]) if isinstance(args["normalized_shape"],
                                                         (list, tuple)) \
        else [int(args["normalized_shape"])]
    np_dtype = b.type_of(x).dtype.np
    scale = b.operand(args["weight"]) if args.get("weight") is not None else \
        b.array(np.ones(shape, dtype=np_dtype))
    inputs = [x, scale] + ([b.operand(args["bias"])] if args.get("bias") is not None else [])
    return [b.one("LayerNormalization", inputs, axis=-len(shape),
                  epsilon=float(args.get("eps", 1e-5)))]


@converter("nnf_embedding")
def _embedding(b: _Builder, args: dict, outs: list) -> list:
    if args.get("max_norm") is not None:
        raise Unsupported("embedding with max_norm (it renormalises the weight in place)")
    return [b.one("Gather", [b.operand(args["weight"]), b.operand(args["input"])], axis=0)]


@converter("softmax", "log_softmax", "nnf_softmax", "nnf_log_softmax")
def _softmax(b: _Builder, args: dict, outs: list) -> list:
    if args.get("dtype") is not None:
        raise Unsupported("softmax with a dtype")
    x = _x(b, args)
    op = "LogSoftmax" if "log" in outs[0].kind else "Softmax"
    return [b.one(op, [x], axis=int(args["dim"]))]


@converter("nnf_leaky_relu")
def _leaky_relu(b: _Builder, args: dict, outs: list) -> list:
    return [b.one("LeakyRelu", [_x(b, args)], alpha=float(args.get("negative_slope", 0.01)))]


@converter("nnf_elu")
def _elu(b: _Builder, args: dict, outs: list) -> list:
    return [b.one("Elu", [_x(b, args)], alpha=float(args.get("alpha", 1.0)))]


@converter("nnf_gelu")
def _gelu(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    if args.get("approximate", "none") != "none":
        raise Unsupported("gelu with approximate = 'tanh'")
    inner = b.one("Erf", [b.one("Div", [x, b.scalar(math.sqrt(2.0), x)])])
    half = b.one("Mul", [x, b.scalar(0.5, x)])
    return [b.one("Mul", [half, b.one("Add", [inner, b.scalar(1.0, x)])])]


@converter("nnf_silu", "silu")
def _silu(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    return [b.one("Mul", [x, b.one("Sigmoid", [x])])]


@converter("nnf_softplus")
def _softplus(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    beta = float(args.get("beta", 1.0))
    if beta == 1.0 and float(args.get("threshold", 20.0)) >= 20.0:
        return [b.one("Softplus", [x])]
    raise Unsupported("softplus with beta or threshold other than 1 and 20")


@converter("nnf_hardtanh", "clamp")
def _clip(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    lo = _arg(args, "min_val", "min")
    hi = _arg(args, "max_val", "max")
    shapes = [v.type.shape if isinstance(v, Value) else v.shape
              for v in (lo, hi) if isinstance(v, (Value, Tensor))]
    if any(shapes):
        # ONNX's Clip takes scalar bounds only: tensor bounds broadcast by Max and Min
        if lo is not None:
            x = b.one("Max", [x, b.operand(lo, like=x)])
        return [b.one("Min", [x, b.operand(hi, like=x)]) if hi is not None else x]
    inputs = [x, b.operand(lo, like=x) if lo is not None else "",
              b.operand(hi, like=x) if hi is not None else ""]
    while inputs[-1] == "":
        inputs.pop()
    return [b.one("Clip", inputs)]


@converter("nnf_relu6")
def _relu6(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    return [b.one("Clip", [x, b.scalar(0.0, x), b.scalar(6.0, x)])]


@converter("nnf_hardsigmoid")
def _hardsigmoid(b: _Builder, args: dict, outs: list) -> list:
    return [b.one("HardSigmoid", [_x(b, args)], alpha=1.0 / 6.0, beta=0.5)]


@converter("nnf_hardswish")
def _hardswish(b: _Builder, args: dict, outs: list) -> list:
    return [b.one("HardSwish", [_x(b, args)])]


# Shape ops: the traced output shape, reached by Reshape (static shapes)
@converter("reshape", "view", "flatten", "nnf_flatten", "unflatten", "nnf_unflatten",
           "squeeze", "unsqueeze")
def _reshape(b: _Builder, args: dict, outs: list) -> list:
    return [b.one("Reshape", [_x(b, args), b.ints(outs[0].type.shape)])]


@converter("transpose", "t", "permute")
def _transpose(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    n = len(b.type_of(x).shape)
    perm = list(range(n))
    if "dims" in args or "more" in args:
        dims = args.get("dims", ())
        dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
        perm = [d % n for d in dims + list(args.get("more", ()))]
    elif n >= 2:
        d0 = int(args.get("dim0", 0)) % n
        d1 = int(args.get("dim1", 1)) % n
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return [b.one("Transpose", [x], perm=perm)]


@converter("cat")
def _cat(b: _Builder, args: dict, outs: list) -> list:
    out = outs[0].type.dtype
    return [b.one("Concat", [_cast(b, b.operand(t), out) for t in args["tensors"]],
                  axis=int(args.get("dim", 0)))]


@converter("stack")
def _stack(b: _Builder, args: dict, outs: list) -> list:
    dim = int(args.get("dim", 0))
    parts = [b.one("Unsqueeze", [b.operand(t), b.ints([dim])]) for t in args["tensors"]]
    return [b.one("Concat", parts, axis=dim)]


@converter("chunk", "split")
def _split(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    dim = int(args.get("dim", 0)) % len(b.type_of(x).shape)
    return b.node("Split", [x, b.ints([o.type.shape[dim] for o in outs])], len(outs), axis=dim)


@converter("unbind")
def _unbind(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    dim = int(args.get("dim", 0)) % len(b.type_of(x).shape)
    parts = b.node("Split", [x, b.ints([1] * len(outs))], len(outs), axis=dim)
    return [b.one("Squeeze", [p, b.ints([dim])]) for p in parts]


def _reduce(op: str, with_input_axes: bool) -> Callable:
    def reduce(b: _Builder, args: dict, outs: list) -> list:
        x = _cast(b, _x(b, args), outs[0].type.dtype)  # (sum of bools: int64, as PyTorch)
        rank = len(b.type_of(_x(b, args)).shape)
        dim = args.get("dim")
        keep = int(bool(args.get("keepdim", False)))
        axes = list(range(rank)) if dim is None or dim == () or dim == [] else \
            [int(d) for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
        if rank == 0:
            return [b.one("Identity", [x])]
        if (with_input_axes and b.opset >= 13) or b.opset >= 18:  # (axes: an input)
            return [b.one(op, [x, b.ints(axes)], keepdims=keep)]
        return [b.one(op, [x], axes=axes, keepdims=keep)]
    return reduce


CONVERTERS["sum"] = _reduce("ReduceSum", True)
CONVERTERS["mean"] = _reduce("ReduceMean", False)
CONVERTERS["amax"] = _reduce("ReduceMax", False)


@converter("argmax", "argmin")
def _argmax(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    if args.get("dim") is None:
        x = b.one("Reshape", [x, b.ints([-1])])
        dim = 0
    else:
        dim = int(args["dim"])
    op = "ArgMax" if outs[0].kind == "argmax" else "ArgMin"
    return [b.one(op, [x], axis=dim, keepdims=int(bool(args.get("keepdim", False))))]


@converter("max", "min")
def _max(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    is_max = outs[0].kind == "max"
    if args.get("other") is not None:
        return [b.one("Max" if is_max else "Min", [x, b.operand(args["other"], like=x)])]
    keep = int(bool(args.get("keepdim", False)))
    if len(b.type_of(x).shape) == 0:
        return [b.one("Identity", [x])] * (1 if args.get("dim") is None else 1) + \
            ([b.array(np.asarray(0, dtype=np.int64))] if args.get("dim") is not None else [])
    if args.get("dim") is None:
        return [b.one("ReduceMax" if is_max else "ReduceMin", [x], keepdims=0)]
    dim = int(args["dim"])
    values = b.one("ReduceMax" if is_max else "ReduceMin", [x], axes=[dim], keepdims=keep)
    index = b.one("ArgMax" if is_max else "ArgMin", [x], axis=dim, keepdims=keep)
    return [values, index]


@converter("where")
def _where(b: _Builder, args: dict, outs: list) -> list:
    c = b.operand(args["condition"])
    x = b.operand(args["self"]) if isinstance(args["self"], (Value, Tensor)) else None
    y = b.operand(args["other"], like=x) if x is not None else b.operand(args["other"])
    if x is None:
        x = b.operand(args["self"], like=y)
    out = outs[0].type.dtype
    return [b.one("Where", [c, _cast(b, x, out), _cast(b, y, out)])]


@converter("masked_fill")
def _masked_fill(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    return [b.one("Where", [b.operand(args["mask"]), b.operand(args["value"], like=x), x])]


@converter("to", "float", "double", "long", "int", "bool", "half")
def _to(b: _Builder, args: dict, outs: list) -> list:
    return [b.one("Cast", [_x(b, args)], to=_ONNX_TYPES[outs[0].type.dtype.name])]


@converter("expand", "expand_as")
def _expand(b: _Builder, args: dict, outs: list) -> list:
    return [b.one("Expand", [_x(b, args), b.ints(outs[0].type.shape)])]


@converter("repeat")
def _repeat(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    reps = args.get("sizes")
    reps = list(reps) if isinstance(reps, (list, tuple)) else [reps]
    reps = reps + list(args.get("more", ()))
    n = len(b.type_of(x).shape)
    if len(reps) > n:
        x = b.one("Reshape", [x, b.ints((1,) * (len(reps) - n) + b.type_of(x).shape)])
    return [b.one("Tile", [x, b.ints(reps)])]


@converter("select")
def _select(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    return [b.one("Gather", [x, b.array(np.asarray(int(args["index"]), dtype=np.int64))],
                  axis=int(args["dim"]))]


@converter("narrow")
def _narrow(b: _Builder, args: dict, outs: list) -> list:
    x = _x(b, args)
    dim = int(args["dim"])
    start = int(args["start"]) % max(b.type_of(x).shape[dim], 1)
    return [b.one("Slice", [x, b.ints([start]), b.ints([start + int(args["length"])]),
                            b.ints([dim])])]


@converter("index")
def _index(b: _Builder, args: dict, outs: list) -> list:
    """Basic indexing (numbers, slices, None, ...): Slice, then the traced shape."""
    x = _x(b, args)
    shape = b.type_of(x).shape
    key = args["indices"] if isinstance(args["indices"], tuple) else (args["indices"],)
    if any(isinstance(k, (Value, Tensor, list)) for k in key):
        tensors = [(i, k) for i, k in enumerate(key) if isinstance(k, (Value, Tensor))]
        if len(tensors) == 1 and all(k == slice(None) for i, k in enumerate(key)
                                     if i != tensors[0][0]):
            i, k = tensors[0]
            if (k.type.dtype if isinstance(k, Value) else k.dtype).name != "bool":
                return [b.one("Gather", [x, b.operand(k)], axis=i)]
        raise Unsupported("indexing with tensors (other than one integer tensor along one dim)")
    starts, ends, axes, steps = [], [], [], []
    axis = 0
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is Ellipsis:
            axis += len(shape) - n_real
        elif k is None:
            continue
        elif isinstance(k, slice):
            if k != slice(None):
                starts.append(0 if k.start is None else k.start)
                ends.append(2 ** 62 if k.stop is None else k.stop)
                steps.append(1 if k.step is None else k.step)
                axes.append(axis)
            axis += 1
        else:
            i = int(k)
            starts.append(i)
            ends.append(i + 1 if i != -1 else 2 ** 62)
            steps.append(1)
            axes.append(axis)
            axis += 1
    y = x
    if axes:
        y = b.one("Slice", [x, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)])
    return [b.one("Reshape", [y, b.ints(outs[0].type.shape)])]


# Recurrences: ONNX's LSTM / GRU / RNN, one per layer (ONNX's gate orders: i o f c for
# the LSTM where PyTorch has i f g o; z r h for the GRU where PyTorch has r z n)
_GATE_ORDER = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_tanh": [0], "rnn_relu": [0]}


def _reordered(b: _Builder, w: str, kind: str) -> str:
    """A weight's or bias's gate blocks (along dim 0) in ONNX's order."""
    order = _GATE_ORDER[kind]
    if len(order) == 1:
        return w
    blocks = b.node("Split", [w, b.ints([b.type_of(w).shape[0] // len(order)] * len(order))],
                    len(order), axis=0)
    return b.one("Concat", [blocks[i] for i in order], axis=0)


def _gates(b: _Builder, w: str, kind: str) -> str:
    """A weight in ONNX's gate order, with a leading direction dim."""
    return b.one("Unsqueeze", [_reordered(b, w, kind), b.ints([0])])


def _bias(b: _Builder, b_ih: str, b_hh: str, kind: str) -> str:
    """ONNX's bias of one direction: [Wb, Rb] in its gate order, direction dim first."""
    both = b.one("Concat", [_reordered(b, b_ih, kind), _reordered(b, b_hh, kind)], axis=0)
    return b.one("Unsqueeze", [both, b.ints([0])])


@converter("lstm", "gru", "rnn_tanh", "rnn_relu")
def _recurrence(b: _Builder, args: dict, outs: list) -> list:
    kind = outs[0].kind
    if args.get("train") and args.get("dropout"):
        raise Unsupported("dropout between layers in training mode (export in eval mode)")
    x = b.operand(args["input"])
    params = [b.operand(p) for p in args["params"]]
    layers, bidir = int(args["num_layers"]), bool(args["bidirectional"])
    dirs, per = (2 if bidir else 1), (4 if args["has_biases"] else 2)
    hidden = b.type_of(params[1]).shape[1]
    if args["batch_first"]:
        x = b.one("Transpose", [x], perm=[1, 0, 2])
    hx = args.get("hx")
    h0 = c0 = None
    if hx is not None:
        h0 = b.operand(hx[0] if kind == "lstm" else hx)
        c0 = b.operand(hx[1]) if kind == "lstm" else None
    op = {"lstm": "LSTM", "gru": "GRU"}.get(kind, "RNN")
    attrs: dict = {"hidden_size": hidden, "direction": "bidirectional" if bidir else "forward"}
    if kind == "gru":
        attrs["linear_before_reset"] = 1  # (PyTorch's GRU)
    if kind.startswith("rnn_"):
        attrs["activations"] = ["Tanh" if kind == "rnn_tanh" else "Relu"] * dirs
    hs, cs = [], []
    for layer in range(layers):
        ws, rs, bs = [], [], []
        for d in range(dirs):
            k = (layer * dirs + d) * per
            ws.append(_gates(b, params[k], kind))
            rs.append(_gates(b, params[k + 1], kind))
            if per == 4:
                bs.append(_bias(b, params[k + 2], params[k + 3], kind))
        w = ws[0] if dirs == 1 else b.one("Concat", ws, axis=0)
        r = rs[0] if dirs == 1 else b.one("Concat", rs, axis=0)
        inputs = [x, w, r, (bs[0] if dirs == 1 else b.one("Concat", bs, axis=0)) if bs else "",
                  ""]
        if h0 is not None:
            rows = [b.ints([layer * dirs]), b.ints([(layer + 1) * dirs]), b.ints([0])]
            inputs.append(b.one("Slice", [h0, *rows]))
            if c0 is not None:
                inputs.append(b.one("Slice", [c0, *rows]))
        n_out = 3 if kind == "lstm" else 2
        y, *states = b.node(op, inputs, n_out, **attrs)
        hs.append(states[0])
        if kind == "lstm":
            cs.append(states[1])
        # (seq, dirs, batch, hidden) -> (seq, batch, dirs * hidden): the next layer's input
        y = b.one("Transpose", [y], perm=[0, 2, 1, 3])
        x = b.one("Reshape", [y, b.ints([0, 0, dirs * hidden])])
    out = b.one("Transpose", [x], perm=[1, 0, 2]) if args["batch_first"] else x
    h_n = hs[0] if layers == 1 else b.one("Concat", hs, axis=0)
    if kind == "lstm":
        return [out, h_n, cs[0] if layers == 1 else b.one("Concat", cs, axis=0)]
    return [out, h_n]


# --------------------------------------------------------------------------
# The model


def _graph_of(obj: Any) -> tuple[Graph, Any]:
    if isinstance(obj, ScriptFunction):
        if obj.traced is None:
            raise Unsupported("jit_export_onnx: only traced functions and modules can be "
                              "exported (this one was loaded or compiled)")
        return obj.traced, obj.owner
    if isinstance(obj, ScriptModule):
        method = obj.find_method("forward") or obj.find_method("evalforward")
        if method is None or method.traced is None:
            raise Unsupported("jit_export_onnx: the module has no traced forward (export a "
                              "module made by jit_trace())")
        return method.traced, obj
    raise TypeError("jit_export_onnx() exports a traced script function or module (made by "
                    "jit_trace())")


def _io_names(given: Any, count: int, what: str) -> list:
    """The graph's input (or output) names: those given (one name: a string), else
    input_1, input_2, ..."""
    given = [given] if isinstance(given, str) else given
    names = list(given) if given else [f"{what}_{i + 1}" for i in range(count)]
    if len(names) != count:
        raise ValueError(f"jit_export_onnx: {len(names)} {what} names for {count} {what}s")
    return names


def jit_export_onnx(obj: Any, path: Any, opset_version: int = DEFAULT_OPSET,
                    input_names: Any = None, output_names: Any = None,
                    dynamic_batch: bool = False) -> Any:
    """Write a traced function or module (its eval-mode trace) as an ONNX model
    that ONNX Runtime runs. Returns the model (an onnx.ModelProto)."""
    onnx, helper, numpy_helper = _onnx()
    graph, owner = _graph_of(obj)
    b = _Builder(helper, numpy_helper, int(opset_version))
    inputs = walk(graph.inputs)
    in_names = _io_names(input_names, len(inputs), "input")
    graph_inputs = []
    for v, name in zip(inputs, in_names):
        b.names[id(v)] = name
        b.types[name] = v.type
        graph_inputs.append(_value_info(helper, name, v.type, dynamic_batch))
    for v in graph.values():
        if v.kind in ("attr", "const"):
            t = v.tensor if v.kind == "const" else attribute(owner, v.path)
            name = b.array(np.asarray(t.data), "_".join(v.path) or "const")
            b.names[id(v)] = name
            b.types[name] = TensorType.of(t)
    for node in graph.nodes:
        fn = CONVERTERS.get(node.kind)
        if fn is None or node.kind.endswith("_") and not node.kind.endswith("__"):
            raise Unsupported(f"jit_export_onnx: {display_name(node.kind)} has no ONNX export "
                              f"here (in-place ops and ops outside the list in the README's "
                              f"\"Models in and out\" are refused)")
        outs = walk(node.outputs)
        try:
            names = fn(b, node.arguments, [_Out(v, node.kind) for v in outs])
        except Unsupported as e:
            raise Unsupported(f"jit_export_onnx: {display_name(node.kind)}: {e}") from None
        if len(names) != len(outs):
            raise Unsupported(f"jit_export_onnx: {display_name(node.kind)} gave "
                              f"{len(names)} outputs for {len(outs)}")
        for v, name in zip(outs, names):
            b.names[id(v)] = name
            b.types[name] = v.type
    outputs = walk(graph.outputs)
    out_names = _io_names(output_names, len(outputs), "output")
    graph_outputs = []
    for v, name in zip(outputs, out_names):
        b.nodes.append(helper.make_node("Identity", [b.names[id(v)]], [name]))
        graph_outputs.append(_value_info(helper, name, v.type, dynamic_batch))
    model = helper.make_model(
        helper.make_graph(b.nodes, "rtorch_py", graph_inputs, graph_outputs, b.initializers),
        opset_imports=[helper.make_opsetid("", int(opset_version))],
        producer_name="rtorch-py")
    model.ir_version = min(model.ir_version, 9)
    onnx.checker.check_model(model)
    if path is not None:
        onnx.save(model, os.path.expanduser(os.fspath(path)))
    return model


class _Out:
    """A node's output as converters see it: its traced type, the node's kind."""

    __slots__ = ("type", "kind")

    def __init__(self, v: Value, kind: str) -> None:
        self.type, self.kind = v.type, kind


def _value_info(helper: Any, name: str, t: TensorType, dynamic_batch: bool) -> Any:
    shape: list = list(t.shape)
    if dynamic_batch and shape:
        shape[0] = "batch"
    return helper.make_tensor_value_info(name, _ONNX_TYPES[t.dtype.name], shape)


def supported_ops() -> list[str]:
    """Our calls that export to ONNX, by the names users know them by."""
    return sorted({display_name(k) for k in CONVERTERS})


__all__ = ["jit_export_onnx", "supported_ops", "CONVERTERS", "DEFAULT_OPSET"]
