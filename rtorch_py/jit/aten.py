"""Our calls as libtorch's operators (aten::...), and back.

A traced node is one of our calls: an op (its registry name, "sum"), an nn
functional form ("nnf_linear") or a recurrence ("lstm"). TorchScript code names
libtorch's operators: `torch.linear(input, weight, bias)`. `ENTRIES` says, for
each of our calls whose aten form differs from its own signature, that form:
aten's name and parameters, and how each comes from ours. It serves all three
directions: the graph listing (`graph_name`, `listed_arguments`), writing
TorchScript (`emit`), and running TorchScript read from a file (`resolve`).

An op with no entry is its own aten form: `torch.<name>(self, <the other
arguments by name>)`, and a call `torch.<name>(...)` in a file calls the op of
that name with the same arguments.
"""
from __future__ import annotations

import ast
import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable

from ..ops.registry import REGISTRY
from ..tensor import TRACEABLE, Tensor, as_dtype, dtype

# libtorch's ScalarType codes (what TorchScript code passes as `dtype=6`)
SCALAR_TYPES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                "float32": 6, "float64": 7, "complex64": 9, "complex128": 10, "bool": 11,
                "bfloat16": 15}
_DTYPE_OF_CODE = {code: name for name, code in SCALAR_TYPES.items()}
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def scalar_type(d: dtype) -> int:
    return SCALAR_TYPES[d.name]


def dtype_of_code(code: int) -> dtype:
    if code not in _DTYPE_OF_CODE:
        raise RuntimeError(f"unsupported ScalarType code {code} in TorchScript code")
    return as_dtype(_DTYPE_OF_CODE[code])


class Unsupported(RuntimeError):
    """A call that has no TorchScript (or ONNX) form here."""


# --------------------------------------------------------------------------
# Entries


_MISSING = inspect.Parameter.empty


@dataclass
class Param:
    aten: str               # aten's name for it
    ours: str | None        # our parameter it comes from (None: aten's default, fixed)
    default: Any = _MISSING  # aten's default
    keyword: bool = False   # keyword-only in aten's schema
    out: Callable | None = None   # our value -> aten's (written)
    back: Callable | None = None  # aten's value -> ours (read)


@dataclass
class Entry:
    """One of our calls as an aten operator."""
    kind: str
    aten: str
    params: list[Param]
    when: Callable[[dict], bool] | None = None  # for which arguments (else: another entry)
    result: str | None = None  # how the aten result gives ours: "first" (a tuple's first)

    def emit(self, args: dict, render: Callable[[Any], str]) -> str:
        pos, kws = [], []
        ours = signature_of(self.kind).parameters
        for p in self.params:
            value = args.get(p.ours, _MISSING) if p.ours else _MISSING
            if value is _MISSING and p.ours is not None and p.default is _MISSING:
                value = ours[p.ours].default  # (left to our default)
            if value is _MISSING:
                value = p.default
            elif p.out is not None:
                value = p.out(value)
            if p.keyword:
                if value is not _MISSING and not _same(value, p.default):
                    kws.append(f"{p.aten}={render(value)}")
            else:
                pos.append(render(value))
        call = f"torch.{self.aten}({', '.join(pos + kws)})"
        return f"({call})[0]" if self.result == "first" else call

    def bind(self, args: tuple, kwargs: dict) -> dict:
        """Our arguments for a call of the aten form."""
        positional = [p for p in self.params if not p.keyword]
        if len(args) > len(positional):
            raise TypeError(f"torch.{self.aten}() takes at most {len(positional)} positional "
                            f"arguments ({len(args)} given)")
        given = {p.aten: a for p, a in zip(positional, args)}
        given.update(kwargs)
        ours: dict = {}
        for p in self.params:
            if p.aten not in given:
                if p.default is _MISSING and p.ours is not None:
                    raise TypeError(f"torch.{self.aten}() missing argument '{p.aten}'")
                continue
            if p.ours is not None:
                v = given.pop(p.aten)
                ours[p.ours] = p.back(v) if p.back is not None else v
            else:
                given.pop(p.aten)
        if given:
            raise TypeError(f"torch.{self.aten}() got unexpected arguments {sorted(given)}")
        return ours


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and a == b
    except Exception:  # (arrays)
        return False


def _params(schema: str, kind: str, renames: dict, convert: dict) -> list[Param]:
    """Parameters from a Python-like schema, `"self, dim, keepdim=False, *, dtype=None"`."""
    tree = ast.parse(f"def f({schema}): pass").body[0].args  # type: ignore[attr-defined]
    sig = signature_of(kind)
    ours = set(sig.parameters)
    out = []
    plain = tree.args
    defaults = [_MISSING] * (len(plain) - len(tree.defaults)) + \
        [ast.literal_eval(d) for d in tree.defaults]
    kw_defaults = [ast.literal_eval(d) if d is not None else _MISSING for d in tree.kw_defaults]
    for args, dflts, keyword in ((plain, defaults, False), (tree.kwonlyargs, kw_defaults, True)):
        for a, d in zip(args, dflts):
            name = a.arg
            mine = renames.get(name, name if name in ours else
                               "input" if name == "self" and "input" in ours else
                               "self" if name == "input" and "self" in ours else None)
            if mine is not None and mine not in ours:
                raise RuntimeError(f"{kind}: no parameter {mine!r} for aten's {name!r}")
            out_fn, back_fn = convert.get(name, (None, None))
            out.append(Param(name, mine, d, keyword, out_fn, back_fn))
    return out


ENTRIES: dict[str, list[Entry]] = {}   # our kind -> its aten forms
_BY_ATEN: dict[str, list[Entry]] = {}  # aten name -> the entries of that name


def entry(kind: str, aten: str, schema: str, renames: dict | None = None,
          convert: dict | None = None, when: Callable | None = None,
          result: str | None = None) -> None:
    e = Entry(kind, aten, _params(schema, kind, renames or {}, convert or {}), when, result)
    ENTRIES.setdefault(kind, []).append(e)
    _BY_ATEN.setdefault(aten, []).append(e)


def signature_of(kind: str) -> inspect.Signature:
    fn = TRACEABLE[kind].__wrapped__ if kind in TRACEABLE else REGISTRY[kind].impl
    return inspect.signature(fn)


def entry_for(kind: str, args: dict) -> Entry | None:
    for e in ENTRIES.get(kind, ()):
        if e.when is None or e.when(args):
            return e
    return None


# Conversions of argument values
def _reduction_out(r: str) -> int:
    return _REDUCTIONS[r]


def _reduction_back(r: int) -> str:
    return {v: k for k, v in _REDUCTIONS.items()}[r]


_REDUCTION = {"reduction": (_reduction_out, _reduction_back)}


def _ints(v: Any) -> Any:
    return list(v) if isinstance(v, (list, tuple)) else v


def _stride_out(v: Any) -> Any:
    return [] if v is None else _ints(v)


def _stride_back(v: Any) -> Any:
    return None if v == [] else v


def _padding_idx_out(v: Any) -> int:
    return -1 if v is None else v


def _padding_idx_back(v: Any) -> Any:
    return None if v == -1 else v


# --------------------------------------------------------------------------
# The nn functional forms (their aten operators, as PyTorch's traces write them)

for _nd in (1, 2, 3):
    entry(f"nnf_conv{_nd}d", f"conv{_nd}d",
          "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
          convert={"stride": (_ints, None), "padding": (_ints, None),
                   "dilation": (_ints, None)})
    entry(f"nnf_conv_transpose{_nd}d", f"conv_transpose{_nd}d",
          "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, "
          "dilation=1", convert={k: (_ints, None) for k in ("stride", "padding",
                                                              "output_padding", "dilation")})
    entry(f"nnf_max_pool{_nd}d", f"max_pool{_nd}d",
          "self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False",
          convert={"stride": (_stride_out, _stride_back), "kernel_size": (_ints, None),
                   "padding": (_ints, None), "dilation": (_ints, None)},
          when=lambda a: not a.get("return_indices"))
    entry(f"nnf_max_pool{_nd}d", f"max_pool{_nd}d_with_indices",
          "self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False",
          convert={"stride": (_stride_out, _stride_back), "kernel_size": (_ints, None),
                   "padding": (_ints, None), "dilation": (_ints, None)})
    entry(f"nnf_avg_pool{_nd}d", f"avg_pool{_nd}d",
          "self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True"
          + (", divisor_override=None" if _nd > 1 else ""),
          convert={"stride": (_stride_out, _stride_back), "kernel_size": (_ints, None),
                   "padding": (_ints, None)})
    entry(f"nnf_adaptive_avg_pool{_nd}d", f"adaptive_avg_pool{_nd}d", "self, output_size",
          convert={"output_size": (_ints, None)})
    entry(f"nnf_adaptive_max_pool{_nd}d", f"adaptive_max_pool{_nd}d", "self, output_size",
          convert={"output_size": (_ints, None)}, when=lambda a: not a.get("return_indices"),
          result="first")

entry("convolution", "_convolution", "input, weight, bias, stride, padding, dilation, "
      "transposed, output_padding, groups, benchmark=False, deterministic=False, "
      "cudnn_enabled=True, allow_tf32=True")
entry("convolution", "convolution", "input, weight, bias, stride, padding, dilation, "
      "transposed, output_padding, groups")
entry("nnf_linear", "linear", "input, weight, bias=None")
entry("nnf_bilinear", "bilinear", "input1, input2, weight, bias=None")
entry("nnf_batch_norm", "batch_norm",
      "input, weight, bias, running_mean, running_var, training, momentum, eps, "
      "cudnn_enabled=True")
entry("nnf_instance_norm", "instance_norm",
      "input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, "
      "cudnn_enabled=True")
entry("nnf_layer_norm", "layer_norm",
      "input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True",
      convert={"normalized_shape": (_ints, None)})
entry("nnf_group_norm", "group_norm",
      "input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True")
entry("nnf_embedding", "embedding",
      "weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False",
      renames={"indices": "input"},
      convert={"padding_idx": (_padding_idx_out, _padding_idx_back)},
      when=lambda a: a.get("max_norm") is None)
entry("nnf_dropout", "dropout", "input, p, train", renames={"train": "training"})
entry("nnf_dropout2d", "feature_dropout", "input, p, train", renames={"train": "training"})
entry("nnf_dropout3d", "feature_dropout", "input, p, train", renames={"train": "training"})
entry("nnf_alpha_dropout", "alpha_dropout", "input, p, train", renames={"train": "training"})
for _name in ("relu", "relu6", "selu", "silu", "mish", "sigmoid", "tanh", "hardsigmoid",
              "hardswish"):
    entry(f"nnf_{_name}", _name, "self")
entry("nnf_logsigmoid", "log_sigmoid", "self")
entry("nnf_gelu", "gelu", "self, *, approximate='none'")
entry("nnf_leaky_relu", "leaky_relu", "self, negative_slope=0.01")
entry("nnf_elu", "elu", "self, alpha=1, scale=1, input_scale=1")
entry("nnf_celu", "celu", "self, alpha=1.0")
entry("nnf_hardtanh", "hardtanh", "self, min_val=-1, max_val=1")
entry("nnf_softplus", "softplus", "self, beta=1, threshold=20")
entry("nnf_hardshrink", "hardshrink", "self, lambd=0.5")
entry("nnf_softshrink", "softshrink", "self, lambd=0.5")
entry("nnf_threshold", "threshold", "self, threshold, value")
entry("nnf_prelu", "prelu", "self, weight")
entry("nnf_glu", "glu", "self, dim=-1")
entry("nnf_softmax", "softmax", "self, dim, dtype=None")
entry("nnf_log_softmax", "log_softmax", "self, dim, dtype=None")
entry("nnf_flatten", "flatten", "self, start_dim=0, end_dim=-1")
entry("nnf_unflatten", "unflatten", "self, dim, sizes", convert={"sizes": (_ints, None)})
entry("nnf_one_hot", "one_hot", "self, num_classes=-1", renames={"self": "tensor"})
entry("nnf_cosine_similarity", "cosine_similarity", "x1, x2, dim=1, eps=1e-08")
entry("nnf_pairwise_distance", "pairwise_distance", "x1, x2, p=2.0, eps=1e-06, keepdim=False")
entry("nnf_pad", "constant_pad_nd", "self, pad, value=0",
      convert={"pad": (_ints, None), "value": (lambda v: 0.0 if v is None else v, None)},
      when=lambda a: a.get("mode", "constant") == "constant")
entry("nnf_mse_loss", "mse_loss", "self, target, reduction=1", convert=_REDUCTION)
entry("nnf_l1_loss", "l1_loss", "self, target, reduction=1", convert=_REDUCTION)
entry("nnf_smooth_l1_loss", "smooth_l1_loss", "self, target, reduction=1, beta=1.0",
      convert=_REDUCTION)
entry("nnf_huber_loss", "huber_loss", "self, target, reduction=1, delta=1.0",
      convert=_REDUCTION)
entry("nnf_binary_cross_entropy", "binary_cross_entropy",
      "self, target, weight=None, reduction=1", convert=_REDUCTION)
entry("nnf_binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits",
      "self, target, weight=None, pos_weight=None, reduction=1", convert=_REDUCTION)
entry("nnf_nll_loss", "nll_loss_nd", "self, target, weight=None, reduction=1, "
      "ignore_index=-100", convert=_REDUCTION)
entry("nnf_cross_entropy", "cross_entropy_loss", "self, target, weight=None, reduction=1, "
      "ignore_index=-100, label_smoothing=0.0", convert=_REDUCTION)
entry("nnf_kl_div", "kl_div", "self, target, reduction=1, *, log_target=False",
      convert=_REDUCTION, when=lambda a: a.get("reduction") != "batchmean")

# The recurrences (rtorch_py/nn/rnn.py), with libtorch's signatures; with no initial
# state given, zeros of the input's batch size (written out: libtorch's needs one)
for _name in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
    entry(_name, _name, "input, hx, params, has_biases, num_layers, dropout, train, "
          "bidirectional, batch_first")


def _recurrence_write(args: dict, render: Callable, kind: str) -> str:
    if args.get("hx") is not None:
        return ENTRIES[kind][0].emit(args, render)
    x, params = args["input"], args["params"]
    layers = int(args["num_layers"]) * (2 if args["bidirectional"] else 1)
    hidden = params[1].type.shape[1] if hasattr(params[1], "type") else params[1].shape[1]
    code = scalar_type(x.type.dtype if hasattr(x, "type") else x.dtype)
    batch = f"torch.size({render(x)}, {0 if args['batch_first'] else 1})"
    zeros = f"torch.zeros([{layers}, {batch}, {hidden}], dtype={code})"
    hx = f"[{zeros}, {zeros}]" if kind == "lstm" else zeros
    rest = ", ".join(render(args[k]) for k in ("params", "has_biases", "num_layers", "dropout",
                                               "train", "bidirectional", "batch_first"))
    return f"torch.{kind}({render(x)}, {hx}, {rest})"


# --------------------------------------------------------------------------
# Ops whose own signature is not aten's


def _shape(args: dict, first: str) -> list:
    """A size given as a list, or spread (`reshape(x, 2, 3)`: over `*more`;
    `zeros(2, 3)`: `*size`)."""
    v = args.get(first)
    more = list(args.get("more", ()))
    if isinstance(v, tuple) and len(v) == 1 and isinstance(v[0], (list, tuple)):
        v = v[0]  # (`*size` holding one list)
    if more or not isinstance(v, (list, tuple)):
        return [v, *more] if v is not None else more
    return list(v)


entry("sum", "sum", "self, dim=None, keepdim=False, *, dtype=None",
      convert={"dim": (_ints, None)})
entry("mean", "mean", "self, dim=None, keepdim=False, *, dtype=None",
      convert={"dim": (_ints, None)})
entry("max", "max", "self", when=lambda a: a.get("dim") is None and a.get("other") is None)
entry("max", "max", "self, other", when=lambda a: a.get("other") is not None)
entry("max", "max", "self, dim, keepdim=False")
entry("min", "min", "self", when=lambda a: a.get("dim") is None and a.get("other") is None)
entry("min", "min", "self, other", when=lambda a: a.get("other") is not None)
entry("min", "min", "self, dim, keepdim=False")
entry("div", "div", "self, other", when=lambda a: a.get("rounding_mode") is None)
entry("div", "div", "self, other, *, rounding_mode=None")
entry("mul", "mul", "self, other")
entry("add", "add", "self, other, *, alpha=1")
entry("sub", "sub", "self, other, *, alpha=1")
entry("rsub", "rsub", "self, other, *, alpha=1")
entry("std", "std", "self, dim=None, *, correction=None, keepdim=False",
      convert={"dim": (_ints, None)}, when=lambda a: a.get("correction") is not None)
entry("std", "std", "self, dim, unbiased=True, keepdim=False", convert={"dim": (_ints, None)})
entry("var", "var", "self, dim=None, *, correction=None, keepdim=False",
      convert={"dim": (_ints, None)}, when=lambda a: a.get("correction") is not None)
entry("var", "var", "self, dim, unbiased=True, keepdim=False", convert={"dim": (_ints, None)})
entry("scaled_dot_product_attention", "scaled_dot_product_attention",
      "query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, "
      "enable_gqa=False")
entry("squeeze", "squeeze", "self", when=lambda a: a.get("dim") is None)
entry("squeeze", "squeeze", "self, dim")
entry("clamp", "clamp", "self, min=None, max=None")
entry("transpose", "transpose", "self, dim0, dim1")
entry("cat", "cat", "tensors, dim=0")
entry("stack", "stack", "tensors, dim=0")
entry("chunk", "chunk", "self, chunks, dim=0")
entry("split", "split", "self, split_size, dim=0", convert={"split_size": (_ints, None)})
entry("unbind", "unbind", "self, dim=0")
entry("flatten", "flatten", "self, start_dim=0, end_dim=-1")
entry("softmax", "softmax", "self, dim, dtype=None")
entry("log_softmax", "log_softmax", "self, dim, dtype=None")
entry("where", "where", "condition, self, other")
entry("masked_fill", "masked_fill", "self, mask, value")
entry("pow", "pow", "self, exponent")
entry("matmul", "matmul", "self, other")
entry("argmax", "argmax", "self, dim=None, keepdim=False")
entry("argmin", "argmin", "self, dim=None, keepdim=False")
entry("gather", "gather", "self, dim, index")
entry("index_select", "index_select", "self, dim, index")
entry("narrow", "narrow", "self, dim, start, length")
entry("select", "select", "self, dim, index")
entry("unsqueeze", "unsqueeze", "self, dim")
entry("clone", "clone", "self, *, memory_format=None")
entry("contiguous", "contiguous", "self")


@dataclass
class Custom:
    """An op whose aten form is written by a function (`write(args, render)`) and
    read by another (`read(args, kwargs) -> our arguments`)."""
    kind: str
    aten: str
    write: Callable
    read: Callable | None = None


CUSTOM: dict[str, Custom] = {}


def custom(kind: str, aten: str, read: Callable | None = None) -> Callable:
    def register(write: Callable) -> Callable:
        CUSTOM[kind] = Custom(kind, aten, write, read)
        return write
    return register


for _name in ("reshape", "view", "permute", "expand", "repeat"):
    def _spread(args: dict, render: Callable, _name: str = _name) -> str:
        first = {"reshape": "shape", "view": "size", "permute": "dims", "expand": "size",
                 "repeat": "sizes"}[_name]
        return f"torch.{_name}({render(args['self'])}, {render(_shape(args, first))})"
    custom(_name, _name)(_spread)


@custom("to", "to")
def _to(args: dict, render: Callable) -> str:
    d = args.get("dtype")
    other = args.get("other")
    x = render(args["self"])
    if isinstance(d, Tensor) or other is not None:
        return f"torch.to({x}, {render(other if other is not None else d)})"
    if d is None:
        return f"torch.to({x}, None)"
    return f"torch.to({x}, {scalar_type(as_dtype(d))})"


_CASTS = {"float": "float32", "double": "float64", "long": "int64", "int": "int32",
          "bool": "bool", "half": "float16", "byte": "uint8", "char": "int8", "short": "int16",
          "bfloat16": "bfloat16", "cfloat": "complex64", "cdouble": "complex128"}
for _name in _CASTS:
    @custom(_name, "to")
    def _cast(args: dict, render: Callable, _name: str = _name) -> str:
        return f"torch.to({render(args['self'])}, {SCALAR_TYPES[_CASTS[_name]]})"


for _name in ("zeros", "ones", "empty", "rand", "randn"):
    @custom(_name, _name)
    def _create(args: dict, render: Callable, _name: str = _name) -> str:
        d = args.get("dtype")
        dtype_arg = f", dtype={scalar_type(as_dtype(d))}" if d is not None else ""
        return f"torch.{_name}({render(_shape(args, 'size'))}{dtype_arg})"


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}
entry("cdist", "cdist", "x1, x2, p=2.0, compute_mode=None",
      convert={"compute_mode": (lambda m: None if m is None else _CDIST_MODES[m],
                                lambda m: None if m is None else
                                {v: k for k, v in _CDIST_MODES.items()}[m])})
entry("norm", "norm", "self, p=2", when=lambda a: a.get("dim") is None and
      a.get("dtype") is None and not a.get("keepdim"))
entry("norm", "norm", "self, p, dim, keepdim=False", convert={"dim": (_ints, None)},
      when=lambda a: a.get("dtype") is None)
entry("norm", "norm", "self, p, dim, keepdim, *, dtype", convert={"dim": (_ints, None)})
entry("hamming_window", "hamming_window", "window_length, periodic, alpha, beta, *, dtype=None")
entry("linalg_solve_triangular", "linalg_solve_triangular",
      "self, B, *, upper, left=True, unitriangular=False", renames={"self": "A"})
entry("tensor_split", "tensor_split", "self, sections, dim=0",
      when=lambda a: a.get("sections") is not None)
entry("tensor_split", "tensor_split", "self, sections, dim=0", renames={"sections": "indices"},
      when=lambda a: isinstance(a.get("indices"), int))
entry("tensor_split", "tensor_split", "self, indices, dim=0", convert={"indices": (_ints, None)},
      when=lambda a: a.get("indices") is not None)
for _nd, _scales in ((1, "scales=None"), (2, "scales_h=None, scales_w=None"),
                     (3, "scales_d=None, scales_h=None, scales_w=None")):
    _name = f"upsample_nearest{_nd}d"
    _plain = [p.split("=")[0] for p in _scales.split(", ")]
    _vec = (lambda a, _plain=_plain: a.get("input") is not None and
            all(a.get(k) is None for k in _plain) and
            not isinstance(a.get("scale_factors"), (int, float)))
    _from_input = (lambda a: a.get("input") is not None)
    entry(_name, _name, "input, output_size, scale_factors",
          convert={"output_size": (_ints, None), "scale_factors": (_ints, None)}, when=_vec)
    entry(_name, _name, f"self, output_size, {_scales}", convert={"output_size": (_ints, None)},
          renames={"self": "input"}, when=_from_input)
    entry(_name, _name, f"self, output_size, {_scales}", convert={"output_size": (_ints, None)})
    entry(_name + "_backward", _name + "_backward",
          f"grad_output, output_size, input_size, {_scales}",
          convert={"output_size": (_ints, None), "input_size": (_ints, None)})
    for _mode in {1: ("linear",), 2: ("bilinear", "bicubic"), 3: ("trilinear",)}[_nd]:
        _name = f"upsample_{_mode}{_nd}d"
        entry(_name, _name, "input, output_size, align_corners, scale_factors",
              convert={"output_size": (_ints, None), "scale_factors": (_ints, None)},
              when=_vec)
        entry(_name, _name, f"self, output_size, align_corners, {_scales}",
              convert={"output_size": (_ints, None)}, renames={"self": "input"},
              when=_from_input)
        entry(_name, _name, f"self, output_size, align_corners, {_scales}",
              convert={"output_size": (_ints, None)})
        entry(_name + "_backward", _name + "_backward",
              f"grad_output, output_size, input_size, align_corners, {_scales}",
              convert={"output_size": (_ints, None), "input_size": (_ints, None)})


for _name in ("dsplit", "hsplit", "vsplit"):
    entry(_name, _name, "self, sections", renames={"sections": "indices"},
          when=lambda a: isinstance(a.get("indices"), int))
    entry(_name, _name, "self, indices", convert={"indices": (_ints, None)},
          when=lambda a: a.get("indices") is not None)


@custom("einsum", "einsum")
def _einsum(args: dict, render: Callable) -> str:
    tensors = args["tensors"]
    tensors = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
    return f"torch.einsum({render(args['equation'])}, {render(tensors + list(args.get('more', ())))})"


@custom("chain_matmul", "chain_matmul")
def _chain_matmul(args: dict, render: Callable) -> str:
    m = args["matrices"]
    m = list(m) if isinstance(m, (list, tuple)) else [m]
    return f"torch.chain_matmul({render(m + list(args.get('more', ())))})"


@custom("tensordot", "tensordot")
def _tensordot(args: dict, render: Callable) -> str:
    a, b, dims = args["a"], args["b"], args.get("dims", 2)
    if isinstance(dims, int):
        n = a.type.shape.__len__() if hasattr(a, "type") else a.ndim
        dims = [list(range(n - dims, n)), list(range(dims))]
    return f"torch.tensordot({render(a)}, {render(b)}, {render(list(dims[0]))}, " \
           f"{render(list(dims[1]))})"


def _tensordot_read(a: Any, b: Any, dims_self: Any, dims_other: Any) -> tuple:
    return REGISTRY["tensordot"].fn, (a, b), {"dims": [list(dims_self), list(dims_other)]}


# aten's gradient kernel takes grad_out first; R torch's method is called on self
@custom("hardshrink_backward", "hardshrink_backward")
def _hardshrink_backward(args: dict, render: Callable) -> str:
    return f"torch.hardshrink_backward({render(args['grad_out'])}, " \
           f"{render(args['self'])}, {render(args['lambd'])})"


def _hardshrink_backward_read(grad_out: Any, x: Any, lambd: Any) -> tuple:
    return REGISTRY["hardshrink_backward"].fn, (x, grad_out, lambd), {}


_READERS: dict[str, Callable] = {"tensordot": _tensordot_read,
                                 "hardshrink_backward": _hardshrink_backward_read}


for _name in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
    custom(_name, _name)(lambda args, render, _k=_name: _recurrence_write(args, render, _k))


@custom("rdiv", "div")
def _rdiv(args: dict, render: Callable) -> str:
    return f"torch.mul(torch.reciprocal({render(args['self'])}), {render(args['other'])})"


@custom("rpow", "pow")
def _rpow(args: dict, render: Callable) -> str:
    return f"torch.pow({render(args['base'])}, {render(args['self'])})"


@custom("_neg_view", "neg")
def _neg_view(args: dict, render: Callable) -> str:
    # (aten's _neg_view gives a lazy negative view PyTorch's callers must resolve)
    return f"torch.neg({render(args['self'])})"


@custom("nonzero_static", "nonzero_static")
def _nonzero_static(args: dict, render: Callable) -> str:
    # (aten takes size and fill_value by name only)
    return (f"torch.nonzero_static({render(args['self'])}, size={render(args['size'])}, "
            f"fill_value={render(args.get('fill_value', -1))})")


@custom("index", "index")
def _index(args: dict, render: Callable) -> str:
    return f"{render(args['self'])}[{_subscript(args['indices'], render)}]"


def _subscript(key: Any, render: Callable) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for k in parts:
        if isinstance(k, slice):
            out.append(":".join("" if v is None else render(v)
                                for v in (k.start, k.stop, k.step)).rstrip(":") or ":")
        elif k is Ellipsis:
            out.append("...")
        elif k is None:
            out.append("None")
        elif isinstance(k, list) and any(hasattr(v, "kind") for v in k):
            out.append(", ".join(render(v) for v in k))  # (a list of index tensors)
        elif isinstance(k, list):
            out.append(f"torch.tensor({render(k)})")
        else:
            out.append(render(k))
    return ", ".join(out)


# --------------------------------------------------------------------------
# Writing (codegen) and listing


def emit(kind: str, args: dict, render: Callable[[Any], str]) -> str:
    """Our call as a TorchScript expression; Unsupported when it has none."""
    spec = REGISTRY.get(kind)
    if spec is not None and not spec.torchscript:  # (PyTorch has no aten operator of it)
        raise Unsupported(f"{display_name(kind)} has no TorchScript form here")
    c = CUSTOM.get(kind)
    if c is not None:
        return c.write(args, render)
    if kind in ENTRIES:
        e = entry_for(kind, args)
        if e is None:
            raise Unsupported(f"{display_name(kind)} with these arguments ("
                              f"{_describe(args)}) has no TorchScript form")
        return e.emit(args, render)
    if kind not in REGISTRY:
        raise Unsupported(f"{display_name(kind)} has no TorchScript form")
    sig = signature_of(kind)
    parts = []
    for name, p in sig.parameters.items():
        if name not in args:
            continue
        v = args[name]
        if p.kind is p.VAR_POSITIONAL:
            if v:
                raise Unsupported(f"{kind} with its arguments spread out has no "
                                  "TorchScript form: give them as one list")
            continue
        if p.default is _MISSING and p.kind is not p.KEYWORD_ONLY:
            parts.append(render(v))  # (required: by position, whatever aten calls it)
        elif not _same(v, p.default):
            parts.append(f"{name}={render(v)}")
    return f"torch.{aten_name(kind)}({', '.join(parts)})"


def aten_name(kind: str) -> str:
    """An op's aten name: PyTorch's spelling (`linalg.det` is aten::linalg_det)."""
    spec = REGISTRY.get(kind)
    name = spec.torch_name if spec is not None and spec.torch_name else kind
    if name.startswith(("linalg.", "special.", "fft.")):
        return name.replace(".", "_")
    if name.startswith("ops.aten."):  # ops.aten.NAME[.OVERLOAD]
        return name.split(".")[2]
    return name.rpartition(".")[2]


def _describe(args: dict) -> str:
    return ", ".join(f"{k} = {v!r}" for k, v in args.items()
                     if not hasattr(v, "kind") and not isinstance(v, (list, Tensor)))


def display_name(kind: str) -> str:
    """How a node is named to users (`nnf_linear`, `torch_sum`)."""
    if kind in TRACEABLE:
        return kind
    spec = REGISTRY.get(kind)
    return spec.function_name if spec is not None and spec.function else kind


def graph_name(kind: str) -> str:
    """A node's operator in the graph listing: `aten::linear`."""
    c = CUSTOM.get(kind)
    if c is not None:
        return "aten::" + c.aten
    forms = ENTRIES.get(kind)
    if forms:
        return "aten::" + forms[0].aten
    return "aten::" + kind.removeprefix("nnf_")


def listed_arguments(node: Any) -> list:
    """A node's arguments in its aten form's order (the listing shows them so)."""
    args = node.arguments
    e = entry_for(node.kind, args) if node.kind in ENTRIES else None
    if e is None:
        return [v for v in args.values()]
    out = []
    for p in e.params:
        value = args.get(p.ours, _MISSING) if p.ours else _MISSING
        if value is _MISSING:
            value = None if p.default is _MISSING else p.default
        elif p.out is not None:
            value = p.out(value)
        out.append(value)
    return out


# --------------------------------------------------------------------------
# Reading: `torch.<aten>(...)` in TorchScript code


def resolve(aten_name: str, args: tuple, kwargs: dict) -> tuple[Callable, tuple, dict]:
    """Our function and its arguments for an aten call read from TorchScript."""
    reader = _READERS.get(aten_name)
    if reader is not None:
        return reader(*args, **kwargs)
    for e in _BY_ATEN.get(aten_name, ()):
        try:
            ours = e.bind(args, kwargs)
        except TypeError:
            continue
        if e.when is not None and not e.when(ours):
            continue  # (another overload)
        fn = TRACEABLE[e.kind] if e.kind in TRACEABLE else REGISTRY[e.kind].fn
        if e.kind.startswith("nnf_max_pool") and aten_name.endswith("_with_indices"):
            ours["return_indices"] = True
        if e.result == "first":
            return (lambda *a, _fn=fn, **k: (_fn(*a, **k), None)), (), ours
        return fn, (), ours
    spec = REGISTRY.get(aten_name)
    if spec is not None:
        return spec.fn, args, kwargs
    raise Unsupported(f"torch.{aten_name}")


def python_literal(x: Any) -> str:
    """A constant as TorchScript writes it."""
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, int):
        return repr(x)
    if isinstance(x, float):
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if math.isnan(x):
            return "nan"
        return repr(x)
    if isinstance(x, str):
        return '"' + x.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(x, dtype):
        return str(scalar_type(x))
    raise Unsupported(f"the constant {x!r} has no TorchScript form")


__all__ = ["SCALAR_TYPES", "ENTRIES", "CUSTOM", "Unsupported", "emit", "resolve",
           "graph_name", "listed_arguments", "display_name", "scalar_type", "dtype_of_code",
           "python_literal"]
