"""Built-in layers (R torch's `nn_*` classes), each a `Module` calling its
`nnf_*` function, with R torch's default initialisation."""
from __future__ import annotations

import math
from typing import Any, Sequence

from .. import constructors as _cr
from ..ops.creation import full as torch_full, ones as torch_ones, zeros as torch_zeros
from ..formals import r_counted, r_formals
from ..tensor import Tensor
from . import functional as F
from . import init
from ..ops.nn_kernels import _tuple
from .module import Module, counted_of, nn_buffer, nn_parameter, options_signature, write_


def _empty(*shape: int) -> Tensor:
    return _cr.torch_empty(*shape)


def _uniform_fan_in(weight: Tensor, bias: Tensor | None, fan_in: int) -> None:
    """R torch's default for linear and conv layers: kaiming_uniform(a = sqrt(5))
    for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    init.nn_init_kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.nn_init_uniform_(bias, -bound, bound)


# --------------------------------------------------------------------------
# Linear


class nn_linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = nn_parameter(_empty(self.out_features, self.in_features))
        self.bias = nn_parameter(_empty(self.out_features)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _uniform_fan_in(self.weight, self.bias, self.in_features)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim == 0 or input.shape[-1] != self.weight.shape[1]:
            raise ValueError(f"nn_linear: expected an input whose last dim has "
                             f"{self.weight.shape[1]} features, got shape {list(input.shape)}")
        return F.nnf_linear(input, self.weight, self.bias)


class nn_bilinear(Module):
    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True) -> None:
        super().__init__()
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        self.weight = nn_parameter(_empty(self.out_features, self.in1_features,
                                          self.in2_features))
        self.bias = nn_parameter(_empty(self.out_features)) if bias else None
        bound = 1 / math.sqrt(self.in2_features)   # (R torch: the weight's last dim)
        init.nn_init_uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.nn_init_uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.nnf_bilinear(input1, input2, self.weight, self.bias)


class nn_identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


# --------------------------------------------------------------------------
# Activations: a module per nnf_ function, holding its arguments


def _activation(name: str, fn: Any, params: Sequence[tuple[str, Any]] = (),
                inplace: bool = False) -> type:
    """A layer applying `fn` with `params` (name, default); `inplace`: R torch's
    constructor takes `inplace` as its last argument, by position too."""
    names = [p for p, _ in params]
    defaults = dict(params)
    positional = names + ["inplace"] if inplace else names

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        if len(args) > len(positional):
            raise TypeError(f"{name}() takes at most {len(positional)} arguments")
        values = dict(defaults, inplace=False)
        values.update(zip(positional, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}() got an unexpected argument '{k}'")
            values[k] = v
        for k in names:
            object.__setattr__(self, k, values[k])

        object.__setattr__(self, "inplace", bool(values["inplace"]))

    def forward(self, input: Tensor) -> Tensor:
        out = fn(input, **{k: getattr(self, k) for k in names})
        if self.inplace and not input.requires_grad and isinstance(out, Tensor):
            return write_(input, out)  # inplace = TRUE: the input takes the result
        return out

    __init__.__signature__ = options_signature([*params, *([("inplace", False)] if inplace
                                                           else [])])
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__module__": __name__, "__r_counted__": counted_of(fn, names)})


nn_relu = _activation("nn_relu", F.nnf_relu, inplace=True)
nn_relu6 = _activation("nn_relu6", F.nnf_relu6, inplace=True)
nn_relu6.min_val, nn_relu6.max_val = 0.0, 6.0  # (R torch's relu6 is a hardtanh: its fields)
nn_sigmoid = _activation("nn_sigmoid", F.nnf_sigmoid)
nn_tanh = _activation("nn_tanh", F.nnf_tanh)
nn_silu = _activation("nn_silu", F.nnf_silu, inplace=True)
nn_mish = _activation("nn_mish", F.nnf_mish)
nn_selu = _activation("nn_selu", F.nnf_selu, inplace=True)
nn_softsign = _activation("nn_softsign", F.nnf_softsign)
nn_tanhshrink = _activation("nn_tanhshrink", F.nnf_tanhshrink)
nn_log_sigmoid = _activation("nn_log_sigmoid", F.nnf_logsigmoid)
nn_hardsigmoid = _activation("nn_hardsigmoid", F.nnf_hardsigmoid)
nn_hardswish = _activation("nn_hardswish", F.nnf_hardswish)
nn_leaky_relu = _activation("nn_leaky_relu", F.nnf_leaky_relu, [("negative_slope", 0.01)],
                            inplace=True)
nn_elu = _activation("nn_elu", F.nnf_elu, [("alpha", 1.0)], inplace=True)
nn_celu = _activation("nn_celu", F.nnf_celu, [("alpha", 1.0)], inplace=True)
nn_gelu = _activation("nn_gelu", F.nnf_gelu, [("approximate", "none")])
nn_softplus = _activation("nn_softplus", F.nnf_softplus, [("beta", 1.0), ("threshold", 20.0)])
nn_hardtanh = _activation("nn_hardtanh", F.nnf_hardtanh, [("min_val", -1.0), ("max_val", 1.0)],
                          inplace=True)
nn_hardshrink = _activation("nn_hardshrink", F.nnf_hardshrink, [("lambd", 0.5)])
nn_softshrink = _activation("nn_softshrink", F.nnf_softshrink, [("lambd", 0.5)])
nn_threshold = _activation("nn_threshold", F.nnf_threshold, [("threshold", None),
                                                              ("value", None)], inplace=True)
nn_glu = _activation("nn_glu", F.nnf_glu, [("dim", -1)])
nn_softmax = _activation("nn_softmax", F.nnf_softmax, [("dim", None)])
nn_softmin = _activation("nn_softmin", F.nnf_softmin, [("dim", None)])
nn_log_softmax = _activation("nn_log_softmax", F.nnf_log_softmax, [("dim", None)])
nn_contrib_sparsemax = _activation("nn_contrib_sparsemax", F.nnf_contrib_sparsemax,
                                   [("dim", -1)])


class nn_rrelu(Module):
    """rrelu: slopes drawn in training, their mean in evaluation."""

    def __init__(self, lower: float = 1 / 8, upper: float = 1 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, bool(inplace)

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_rrelu(input, self.lower, self.upper, self.training, self.inplace)


class nn_softmax2d(Module):
    """Softmax over dim 0 (R torch's: its `dim = 1` is the first dim, not
    PyTorch's channels, -3)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_softmax(input, 0)


class nn_pairwise_distance(Module):
    def __init__(self, p: float = 2, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, bool(keepdim)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.nnf_pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class nn_prelu(Module):
    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        super().__init__()
        self.num_parameters = int(num_parameters)
        self.weight = nn_parameter(torch_full([self.num_parameters], float(init)))

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_prelu(input, self.weight)


# --------------------------------------------------------------------------
# Dropout


def _dropout(name: str, fn: Any) -> type:
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        Module.__init__(self)
        F.check_dropout_p(p)
        object.__setattr__(self, "p", float(p))
        object.__setattr__(self, "inplace", bool(inplace))

    def forward(self, input: Tensor) -> Tensor:
        return fn(input, self.p, self.training)

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__module__": __name__})


nn_dropout = _dropout("nn_dropout", F.nnf_dropout)
nn_dropout2d = _dropout("nn_dropout2d", F.nnf_dropout2d)
nn_dropout3d = _dropout("nn_dropout3d", F.nnf_dropout3d)
nn_alpha_dropout = _dropout("nn_alpha_dropout", F.nnf_alpha_dropout)


# --------------------------------------------------------------------------
# Shape


@r_counted(start_dim="dim", end_dim="dim")
class nn_flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)


@r_counted(dim="dim")
class nn_unflatten(Module):
    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = int(dim), tuple(int(s) for s in unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_unflatten(input, self.dim, self.unflattened_size)


def _pad_layer(name: str, mode: str, nd: int) -> type:
    def __init__(self, padding: Any, value: float = 0.0) -> None:
        Module.__init__(self)
        object.__setattr__(self, "padding", _tuple(padding, 2 * nd))
        object.__setattr__(self, "value", float(value))

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_pad(input, self.padding, mode, self.value)

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__module__": __name__})


nn_zero_pad1d = _pad_layer("nn_zero_pad1d", "constant", 1)
nn_zero_pad2d = _pad_layer("nn_zero_pad2d", "constant", 2)
nn_constant_pad1d = _pad_layer("nn_constant_pad1d", "constant", 1)
nn_constant_pad2d = _pad_layer("nn_constant_pad2d", "constant", 2)
nn_constant_pad3d = _pad_layer("nn_constant_pad3d", "constant", 3)
nn_reflection_pad1d = _pad_layer("nn_reflection_pad1d", "reflect", 1)
nn_reflection_pad2d = _pad_layer("nn_reflection_pad2d", "reflect", 2)
nn_replication_pad1d = _pad_layer("nn_replication_pad1d", "replicate", 1)
nn_replication_pad2d = _pad_layer("nn_replication_pad2d", "replicate", 2)
nn_replication_pad3d = _pad_layer("nn_replication_pad3d", "replicate", 3)


# --------------------------------------------------------------------------
# Embedding


@r_counted(padding_idx="label")
class nn_embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and padding_idx < 0:
            padding_idx += self.num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = bool(scale_grad_by_freq), bool(sparse)
        if _weight is None:
            self.weight = nn_parameter(_empty(self.num_embeddings, self.embedding_dim))
            init.nn_init_normal_(self.weight)
            if padding_idx is not None:
                self.weight.data[padding_idx] = 0.0
        else:
            self.weight = nn_parameter(_weight)

    @r_counted(input="label")
    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_embedding(input, self.weight, self.padding_idx, self.max_norm,
                               self.norm_type)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "nn_embedding":
        """An embedding whose weight is `embeddings` (rows: the embeddings), not
        trained unless freeze is FALSE."""
        if embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        out = cls(embeddings.shape[0], embeddings.shape[1], padding_idx, max_norm, norm_type,
                  scale_grad_by_freq, sparse, _weight=embeddings)
        out.weight.requires_grad_(not freeze)
        return out


@r_counted(padding_idx="label")
class nn_embedding_bag(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, include_last_offset: bool = False,
                 padding_idx: int | None = None, _weight: Tensor | None = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.mode, self.padding_idx = mode, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.include_last_offset = include_last_offset
        if _weight is None:
            self.weight = nn_parameter(_empty(self.num_embeddings, self.embedding_dim))
            init.nn_init_normal_(self.weight)
        elif tuple(_weight.shape) != (self.num_embeddings, self.embedding_dim):
            raise ValueError("Shape of `.weight` does not match num_embeddings and "
                             "embedding_dim")
        else:
            self.weight = nn_parameter(_weight)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> "nn_embedding_bag":
        """A bag of embeddings whose weight is `embeddings`, not trained unless
        freeze is FALSE."""
        if embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        out = cls(embeddings.shape[0], embeddings.shape[1], max_norm, norm_type,
                  scale_grad_by_freq, mode, sparse, include_last_offset, padding_idx,
                  _weight=embeddings)
        out.weight.requires_grad_(not freeze)
        return out

    @r_counted(input="label")
    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.nnf_embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                                   self.scale_grad_by_freq, self.mode, self.sparse,
                                   per_sample_weights, self.include_last_offset,
                                   self.padding_idx)


# --------------------------------------------------------------------------
# Normalisation


class _BatchNorm(Module):
    _nd = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, track_running_stats: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = nn_parameter(torch_ones(self.num_features))
            self.bias = nn_parameter(torch_zeros(self.num_features))
        if track_running_stats:
            self.running_mean = nn_buffer(torch_zeros(self.num_features))
            self.running_var = nn_buffer(torch_ones(self.num_features))
            self.num_batches_tracked = nn_buffer(_cr.torch_tensor(0, dtype="int64"))

    def forward(self, input: Tensor) -> Tensor:
        expected = (self._nd + 1, self._nd + 2) if self._nd else (2, 3)
        if input.ndim not in expected:
            raise ValueError(f"{type(self).__name__}: expected {' or '.join(map(str, expected))}"
                             f"D input (got {input.ndim}D input)")
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            write_(self.num_batches_tracked, self.num_batches_tracked.data + 1)
        mean = self.running_mean if self.track_running_stats else None
        var = self.running_var if self.track_running_stats else None
        return F.nnf_batch_norm(input, mean, var, self._parameters.get("weight"),
                                self._parameters.get("bias"),
                                use_batch, self.momentum, self.eps)


class nn_batch_norm1d(_BatchNorm):
    _nd = 0


class nn_batch_norm2d(_BatchNorm):
    _nd = 3


class nn_batch_norm3d(_BatchNorm):
    _nd = 4


@r_formals("normalized_shape, eps = 1e-05, elementwise_affine = TRUE")
class nn_layer_norm(Module):
    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True) -> None:
        super().__init__()
        shape = (int(normalized_shape),) if not isinstance(normalized_shape, (list, tuple)) \
            else tuple(int(s) for s in normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn_parameter(torch_ones(*shape))
            self.bias = nn_parameter(torch_zeros(*shape)) if bias else None

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_layer_norm(input, self.normalized_shape, self._parameters.get("weight"),
                                self._parameters.get("bias"), self.eps)


class nn_group_norm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True) -> None:
        super().__init__()
        self.num_groups, self.num_channels, self.eps = int(num_groups), int(num_channels), eps
        self.affine = bool(affine)
        if affine:
            self.weight = nn_parameter(torch_ones(self.num_channels))
            self.bias = nn_parameter(torch_zeros(self.num_channels))

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_group_norm(input, self.num_groups, self._parameters.get("weight"),
                                self._parameters.get("bias"), self.eps)


# --------------------------------------------------------------------------
# Convolution


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", output_padding: Any = 0) -> None:
        super().__init__()
        nd = self._nd
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.groups = int(groups)
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.kernel_size = _tuple(kernel_size, nd)
        self.stride, self.dilation = _tuple(stride, nd), _tuple(dilation, nd)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, nd)
        self.output_padding = _tuple(output_padding, nd)
        self.padding_mode = padding_mode
        self.transposed = self._transposed
        # (R torch's field: the padding as nnf_pad takes it, last dim first)
        pads = self.padding if isinstance(self.padding, tuple) else (self.padding,)
        self.reversed_padding_repeated_twice_ = tuple(p for p in reversed(pads) for _ in (0, 1))
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = nn_parameter(_empty(*shape))
        self.bias = nn_parameter(_empty(self.out_channels)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
        _uniform_fan_in(self.weight, self.bias, fan_in)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        fn = getattr(F, f"nnf_conv{'_transpose' if self._transposed else ''}{self._nd}d")
        if self._transposed:
            out_pad = self.output_padding
            if output_size is not None:
                out_pad = self._output_padding_for(input, output_size)
            return fn(input, self.weight, self.bias, self.stride, self.padding,
                      out_pad, self.groups, self.dilation)
        if self.padding_mode != "zeros":
            pads = [p for p in reversed(self.padding) for _ in range(2)]
            mode = {"reflect": "reflect", "replicate": "replicate",
                    "circular": "circular"}[self.padding_mode]
            return fn(F.nnf_pad(input, pads, mode), self.weight, self.bias, self.stride, 0,
                      self.dilation, self.groups)
        return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                  self.groups)


    def _output_padding_for(self, input: Tensor, output_size: Any) -> tuple:
        """The output_padding that makes the output `output_size` (its last dims)."""
        want = tuple(int(s) for s in output_size)[-self._nd:]
        out = []
        for i, w in enumerate(want):
            base = (input.shape[-self._nd + i] - 1) * self.stride[i] - 2 * self.padding[i] + \
                self.dilation[i] * (self.kernel_size[i] - 1) + 1
            if not 0 <= w - base < max(self.stride[i], self.dilation[i]):
                raise ValueError(f"requested an output size of {list(want)}, but valid sizes "
                                 f"differ from {base} by less than the stride")
            out.append(w - base)
        return tuple(out)


def _conv_class(name: str, nd: int, transposed: bool) -> type:
    return type(name, (_ConvNd,), {"_nd": nd, "_transposed": transposed,
                                   "__module__": __name__})


nn_conv1d = _conv_class("nn_conv1d", 1, False)
nn_conv2d = _conv_class("nn_conv2d", 2, False)
nn_conv3d = _conv_class("nn_conv3d", 3, False)
for _conv in (nn_conv1d, nn_conv2d, nn_conv3d):  # (R torch's have no output_padding)
    r_formals("in_channels, out_channels, kernel_size, stride = 1, padding = 0, dilation = 1, "
              "groups = 1, bias = TRUE, padding_mode = 'zeros'")(_conv)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding)


def _conv_t_class(name: str, nd: int) -> type:
    return type(name, (_ConvTransposeNd,), {"_nd": nd, "__module__": __name__})


nn_conv_transpose1d = _conv_t_class("nn_conv_transpose1d", 1)
nn_conv_transpose2d = _conv_t_class("nn_conv_transpose2d", 2)
nn_conv_transpose3d = _conv_t_class("nn_conv_transpose3d", 3)


# --------------------------------------------------------------------------
# Pooling


_MAXP = [("kernel_size", None), ("stride", None), ("padding", 0), ("dilation", 1),
         ("return_indices", False), ("ceil_mode", False)]
_AVGP = [("kernel_size", None), ("stride", None), ("padding", 0), ("ceil_mode", False),
         ("count_include_pad", True), ("divisor_override", None)]


def _after_init(cls: type, name: str, fix: Any) -> type:
    """`cls` with its field `name` set to `fix(self, value)` once made: the
    value R torch's layer holds there (`pool$stride`)."""
    init = cls.__init__

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        object.__setattr__(self, name, fix(self, getattr(self, name)))

    __init__.__signature__ = init.__signature__
    cls.__init__ = __init__
    return cls


def _kernel_if_none(self: Module, stride: Any) -> Any:
    return self.kernel_size if stride is None else stride


def _ntuple(n: int) -> Any:
    """R torch's nn_util_ntuple(n): one number repeated n times, else as given."""
    return lambda self, v: (v,) * n if isinstance(v, (int, float)) else v


def _max_pool_class(name: str, fn: Any) -> type:
    return _after_init(_activation(
        name, lambda input, **k: fn(input, k["kernel_size"], k["stride"], k["padding"],
                                    k["dilation"], k["ceil_mode"], k["return_indices"]), _MAXP),
        "stride", _kernel_if_none)


def _avg_pool_class(name: str, fn: Any) -> type:
    params = _AVGP if not name.endswith("1d") else _AVGP[:5]
    return _after_init(_activation(name, lambda input, **k: fn(input, **k), params),
                       "stride", _kernel_if_none)


def _adaptive_class(name: str, fn: Any, params: Sequence[tuple[str, Any]]) -> type:
    return _after_init(_activation(name, fn, params), "output_size", _ntuple(int(name[-2])))


nn_max_pool1d = _max_pool_class("nn_max_pool1d", F.nnf_max_pool1d)
nn_max_pool2d = _max_pool_class("nn_max_pool2d", F.nnf_max_pool2d)
nn_max_pool3d = _max_pool_class("nn_max_pool3d", F.nnf_max_pool3d)
nn_avg_pool1d = _avg_pool_class("nn_avg_pool1d", F.nnf_avg_pool1d)
nn_avg_pool2d = _avg_pool_class("nn_avg_pool2d", F.nnf_avg_pool2d)
nn_avg_pool3d = _avg_pool_class("nn_avg_pool3d", F.nnf_avg_pool3d)
nn_adaptive_avg_pool1d = _activation("nn_adaptive_avg_pool1d", F.nnf_adaptive_avg_pool1d,
                                     [("output_size", None)])
nn_adaptive_avg_pool2d = _adaptive_class("nn_adaptive_avg_pool2d", F.nnf_adaptive_avg_pool2d,
                                         [("output_size", None)])
nn_adaptive_avg_pool3d = _adaptive_class("nn_adaptive_avg_pool3d", F.nnf_adaptive_avg_pool3d,
                                         [("output_size", None)])
nn_adaptive_max_pool1d = _activation("nn_adaptive_max_pool1d", F.nnf_adaptive_max_pool1d,
                                     [("output_size", None), ("return_indices", False)])
nn_adaptive_max_pool2d = _adaptive_class("nn_adaptive_max_pool2d", F.nnf_adaptive_max_pool2d,
                                         [("output_size", None), ("return_indices", False)])
nn_adaptive_max_pool3d = _adaptive_class("nn_adaptive_max_pool3d", F.nnf_adaptive_max_pool3d,
                                         [("output_size", None), ("return_indices", False)])
nn_lp_pool1d = _activation("nn_lp_pool1d", F.nnf_lp_pool1d,
                           [("norm_type", None), ("kernel_size", None), ("stride", None),
                            ("ceil_mode", False)])
nn_lp_pool2d = _activation("nn_lp_pool2d", F.nnf_lp_pool2d,
                           [("norm_type", None), ("kernel_size", None), ("stride", None),
                            ("ceil_mode", False)])


def _max_unpool(name: str, nd: int) -> type:
    fn = getattr(F, f"nnf_max_unpool{nd}d")

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        Module.__init__(self)
        self.kernel_size = _tuple(kernel_size, nd)
        self.stride = self.kernel_size if stride is None else _tuple(stride, nd)
        self.padding = _tuple(padding, nd)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)
    forward.__r_counted__ = counted_of(fn, ("indices",))  # type: ignore[attr-defined]

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__module__": __name__})


nn_max_unpool1d = _max_unpool("nn_max_unpool1d", 1)
nn_max_unpool2d = _max_unpool("nn_max_unpool2d", 2)
nn_max_unpool3d = _max_unpool("nn_max_unpool3d", 3)


def _fractional_max_pool(name: str, nd: int) -> type:
    fn = getattr(F, f"nnf_fractional_max_pool{nd}d")

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False) -> None:
        Module.__init__(self)
        if output_size is None and output_ratio is None:
            raise ValueError("both output_size and output_ratio are NULL")
        if output_size is not None and output_ratio is not None:
            raise ValueError("both output_size and output_ratio are not NULL")
        if output_ratio is not None:
            output_ratio = tuple(float(r) for r in
                                 (output_ratio if isinstance(output_ratio, (list, tuple))
                                  else (output_ratio,) * nd))
            if any(r > 1 or r < 0 for r in output_ratio):
                raise ValueError("output_ratio must be between 0 and 1.")
        self.kernel_size = _tuple(kernel_size, nd)
        self.output_size = None if output_size is None else _tuple(output_size, nd)
        self.output_ratio, self.return_indices = output_ratio, bool(return_indices)

    def forward(self, input: Tensor) -> Any:
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices)

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__module__": __name__})


nn_fractional_max_pool2d = _fractional_max_pool("nn_fractional_max_pool2d", 2)
nn_fractional_max_pool3d = _fractional_max_pool("nn_fractional_max_pool3d", 3)


class nn_upsample(Module):
    """Resamples its input with nnf_interpolate (a size or a scale_factor)."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None) -> None:
        super().__init__()
        self.size, self.scale_factor = size, scale_factor
        self.mode, self.align_corners = mode, align_corners

    def forward(self, input: Tensor) -> Tensor:
        return F.nnf_interpolate(input, self.size, self.scale_factor, self.mode,
                                 self.align_corners, recompute_scale_factor=False)


__all__ = [n for n in list(globals()) if n.startswith("nn_")]
