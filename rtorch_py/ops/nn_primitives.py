"""Primitives of the nn layers (`rtorch_py.nn`) that are ops of their own, and
the nodes of the layers that record one (nll_loss, sparsemax, an LSTM layer).

Declared like every op (see docs/adding-an-op.md): forward beside derivative,
the derivative written with tensor ops so higher orders come for free (except
where said). Their array work is in `nn_kernels.py`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..random import default_generator
from ..random import nn as random_nn
from ..engine import bump_version, edge, hand_on, is_grad_enabled, no_grad, run_backward, \
    waiting
from ..runtime import torch_get_num_threads
from ..tensor import Tensor, wrap, wrap_dim
from . import bn_kernel
from . import nn_kernels as K
from .operands import float_data, whole, positional_error
from .recording import Output, formula, multi_formula, needs_grad, record, record_many, sum_to
from .dispatch import op
from .samples import nn_primitives as S
from .indexing import index_add
from .shape import cat, stack
from .sum_kernel import libtorch_sum
from . import sleef



@formula
def SiluBackward0(n, g, x):
    s = x.sigmoid()
    return (g * (s * (x * (1 - s) + 1)),)


# R torch has no torch_silu (only nnf_silu, in rtorch_py.nn): no R form, so no
# generated samples; tests/test_nn.py checks it against PyTorch, second order too.
@op(function=False, method=False, torch_name="nn.functional.silu", names="keep",
    forward="elementwise", mobile="self")
def silu(self: Tensor) -> Tensor:
    # x / (1 + exp(-x)) in double precision, rounded once (as libtorch's result is)
    d = float_data(self)
    a = d.astype(np.float64)
    return record((a / (1.0 + np.exp(-a))).astype(d.dtype), SiluBackward0, (self,), (self,))


# --------------------------------------------------------------------------
# Convolution (any number of spatial dims), plain and transposed. The array
# work lives in nn_kernels.py (one im2col and one large matmul per group);
# the derivative is written with `convolution` itself, so second
# derivatives work.


def int_tuple(v: Any, nd: int) -> tuple:
    if isinstance(v, (list, tuple, np.ndarray)):
        v = [int(x) for x in np.asarray(v).reshape(-1)]
        return tuple(v) * nd if len(v) == 1 else tuple(v)
    return (int(v),) * nd


def _conv_arrays(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride, padding,
                 dilation, transposed, output_padding, groups) -> np.ndarray:
    if not transposed:
        return K.conv_forward(x, w, stride, padding, dilation, groups, bias=b)
    size = tuple((i - 1) * s + (kk - 1) * d + 1 + op - 2 * p for i, s, kk, d, op, p in
                 zip(x.shape[2:], stride, w.shape[2:], dilation, output_padding, padding))
    out = K.conv_grad_input(x, w, size, stride, padding, dilation, groups)
    if b is not None:  # (in place: `out` is the kernels' fresh array)
        np.add(out, b.reshape((1, -1) + (1,) * len(size)), out=out)
    return out


def _crop(t: Tensor, sizes: tuple) -> Tensor:
    """Keep the first `sizes` positions of each spatial dim."""
    for i, s in enumerate(sizes):
        if t.shape[2 + i] != s:
            t = t.narrow(2 + i, 0, s)
    return t


def _weight_grad(inp: Tensor, g: Tensor, kshape: tuple, stride, padding, dilation,
                 groups) -> Tensor:
    """d/dweight of convolution(inp, weight) for output gradient g, as a
    convolution of inp (channels as batch) with g (batch as channels)."""
    cg, og = inp.shape[1] // groups, g.shape[1] // groups
    parts = []
    for k in range(groups):
        xi = inp.narrow(1, k * cg, cg).transpose(0, 1)       # C/g, N, *S
        gi = g.narrow(1, k * og, og).transpose(0, 1)         # O/g, N, *O
        r = convolution(xi, gi, None, dilation, padding, stride, False, (0,) * len(kshape), 1)
        parts.append(_crop(r, kshape).transpose(0, 1))       # O/g, C/g, *K
    return parts[0] if groups == 1 else cat(parts, 0)


def _conv_grads_arrays(n, g, x, w, has_bias, stride, padding, dilation, transposed,
                       groups) -> tuple:
    """The input, weight and bias gradients on arrays (no graph wanted): the
    kernels' matmuls directly, much cheaper than the convolutions below (the
    bias's None unless the weight's kernel made it)."""
    ga, xa, wa = g.data, x.data, w.data
    gx = gw = gb = None
    if not transposed:
        # The order for a training step's peak of memory, where the result made
        # first is held beside the other kernel's buffers (copies of input, output
        # gradient and weight in oneDNN's layout): the input gradient first where
        # the walk sums it at once into one it holds (then it is gone), else the
        # smaller result first.
        early = n.needs(0) and waiting(n, 0)
        weight_first = not early and wa.nbytes < xa.nbytes
        if n.needs(0) and not weight_first:
            gx = K.conv_grad_input(ga, wa, xa.shape[2:], stride, padding, dilation, groups)
            if early and hand_on(n, 0, _as_array(gx, xa)):  # FAST PATH 5 (engine.py)
                gx = None
        if n.needs(1) and has_bias and n.needs(2):
            gw, gb = K.conv_grad_weight(xa, ga, wa.shape[2:], stride, padding, dilation,
                                        groups, bias=True)
        elif n.needs(1):
            gw = K.conv_grad_weight(xa, ga, wa.shape[2:], stride, padding, dilation, groups)
        if n.needs(0) and weight_first:
            gx = K.conv_grad_input(ga, wa, xa.shape[2:], stride, padding, dilation, groups)
    else:
        if n.needs(0):
            gx = K.conv_forward(ga, wa, stride, padding, dilation, groups, xa.shape[2:])
        if n.needs(1):
            gw = K.conv_grad_weight(ga, xa, wa.shape[2:], stride, padding, dilation, groups)
    as_t = (lambda a, like: None if a is None else wrap(_as_array(a, like)))
    return as_t(gx, xa), as_t(gw, wa), None if gb is None else wrap(gb)


def _as_array(a: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A kernel's gradient as the walk carries it: contiguous, in its input's dtype."""
    return np.ascontiguousarray(a, dtype=like.dtype)


@formula
def ConvolutionBackward0(n, g, x, w, has_bias, stride, padding, dilation, transposed,
                         output_padding, groups):
    nd = w.ndim - 2
    gx = gw = gb = None
    if not is_grad_enabled():
        gx, gw, gb = _conv_grads_arrays(n, g, x, w, has_bias, stride, padding, dilation,
                                        transposed, groups)
    if has_bias and n.needs(2) and gb is None:
        gb = g.sum(dim=(0,) + tuple(range(2, 2 + nd)))
    if not is_grad_enabled():
        return (gx, gw, gb)
    # create_graph: the same gradients as convolutions, themselves differentiable
    if not transposed:
        if n.needs(0):
            o = tuple(s + 2 * p - ((q - 1) * st + (k - 1) * d + 1)
                      for s, p, q, st, k, d in zip(x.shape[2:], padding, g.shape[2:], stride,
                                                   w.shape[2:], dilation))
            gx = convolution(g, w, None, stride, padding, dilation, True, o, groups)
        if n.needs(1):
            gw = _weight_grad(x, g, w.shape[2:], stride, padding, dilation, groups)
    else:
        if n.needs(0):
            gx = _crop(convolution(g, w, None, stride, padding, dilation, False, (0,) * nd,
                                   groups), x.shape[2:])
        if n.needs(1):
            # the weight maps x's channels to g's: a plain convolution of g by it
            gw = _weight_grad(g, x, w.shape[2:], stride, padding, dilation, groups)
    return (gx, gw, gb)


def _check_kernel_fits(sizes: tuple, kernel: tuple, padding: tuple, dilation: tuple) -> None:
    padded = [n + 2 * p for n, p in zip(sizes, padding)]
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(n < k for n, k in zip(padded, spans)):
        raise RuntimeError(  # (libtorch's words)
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, spans))}). Kernel size can't be greater "
            "than actual input size")


def check_channels(shape: tuple, wshape: tuple, transposed: bool, groups: int) -> None:
    """The input's channels against the weight's, in libtorch's words."""
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if wshape[0] % groups:  # (libtorch prints this size in double brackets)
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(wshape)}] instead")
    want = wshape[0] if transposed else wshape[1] * groups
    if shape[1] != want:
        given = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {given}, weight of size {list(wshape)}, expected input"
                           f"{list(shape)} to have {want} channels, but got {shape[1]} "
                           "channels instead")


@op(samples=S.convolution, method=False, autocast="lower")
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    """N-d convolution (`transposed`: its transpose), input (N, C, *S)."""
    nd = weight.ndim - 2
    if input.ndim != nd + 2:
        raise ValueError(f"convolution: expected a {nd + 2}-D input (batch, channels, {nd} "
                         f"spatial dims) for a {weight.ndim}-D weight, got shape "
                         f"{list(input.shape)}")
    stride, padding = int_tuple(stride, nd), int_tuple(padding, nd)
    dilation = int_tuple(dilation, nd)
    output_padding, groups = int_tuple(output_padding, nd), int(groups)
    check_channels(input.shape, weight.shape, bool(transposed), groups)
    if not transposed:
        _check_kernel_fits(input.shape[2:], weight.shape[2:], padding, dilation)
    out = _conv_arrays(input.data, weight.data, None if bias is None else bias.data, stride,
                       padding, dilation, bool(transposed), output_padding, groups)
    out = np.ascontiguousarray(out, dtype=np.result_type(input.data, weight.data))
    return record(out, ConvolutionBackward0, (input, weight, bias),
                  (input, weight, bias is not None, stride, padding, dilation, bool(transposed),
                   output_padding, groups))


# --------------------------------------------------------------------------
# Constant padding (negative amounts crop). Its derivative is itself with the
# amounts negated.


def _pad_widths(pad: tuple, ndim: int) -> list:
    """torch's pad list (last dim first: left, right, then the dim before...)
    as per-dim (before, after) pairs."""
    widths = [[0, 0] for _ in range(ndim)]
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = [pad[2 * i], pad[2 * i + 1]]
    return widths


@formula
def ConstantPadNdBackward0(n, g, pad):
    return (constant_pad_nd(g, tuple(-p for p in pad)),)


@op(samples=S.constant_pad, method=False)
def constant_pad_nd(self: Tensor, pad: Any, value: float = 0) -> Tensor:
    pad = tuple(int(p) for p in np.asarray(pad).reshape(-1))
    if len(pad) % 2 or len(pad) // 2 > self.ndim:
        raise ValueError(f"constant_pad_nd: the padding must be pairs (left, right), last dim "
                         f"first, for at most {self.ndim} dims; got {list(pad)}")
    widths = _pad_widths(pad, self.ndim)
    d = self.data
    crop = tuple(slice(max(-a, 0), d.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(widths))
    d = d[crop]
    out = np.pad(d, [(max(a, 0), max(b, 0)) for a, b in widths], constant_values=value)
    return record(out, ConstantPadNdBackward0, (self,), (pad,))


def avg_pool_conv(x: Tensor, k: tuple, s: tuple, p: tuple, ceil_mode: bool,
                   count_include_pad: bool, divisor: Any) -> Tensor:
    """Average pooling as a per-channel convolution with a kernel of ones,
    divided by each window's count."""
    nd = len(k)
    extra = K._ceil_extra(x.shape[2:], k, s, p, (1,) * nd, ceil_mode)
    if any(extra):  # ceil_mode: room for the last, partial windows
        x = constant_pad_nd(x, tuple(v for e in reversed(extra) for v in (0, e)), 0.0)
    c = x.shape[1]
    ones = wrap(np.ones((c, 1) + k, dtype=x.data.dtype))
    total = convolution(x, ones, None, s, p, (1,) * nd, False, (0,) * nd, c)
    size = tuple(sz - e for sz, e in zip(x.shape[2:], extra))
    div = K._avg_divisor(size, total.shape[2:], k, s, p, count_include_pad, divisor)
    return total / wrap(np.asarray(div, dtype=x.data.dtype))


# --------------------------------------------------------------------------
# Max pooling picks positions: a gather of the input planes and, as its
# derivative, a scatter back (each the other's derivative, so every order
# works). Windows that can't overlap pick each position at most once, so the
# scatter is a plain assignment instead of an accumulating np.add.at.


@formula
def MaxPoolWithIndicesBackward0(n, g, idx, shape, unique):
    return (pool_scatter(g, idx, shape, unique),)


def pool_gather(x: Tensor, idx: np.ndarray, unique: bool, values: np.ndarray | None = None
                ) -> Tensor:
    """out[n, c, j] = x[n, c, idx[n, c, j]] (x and idx flattened past dim 2);
    `values`: those values when the caller has them already (max pooling)."""
    if values is None:
        values = np.take(x.data, global_index(idx, x.shape))
    return record(values, MaxPoolWithIndicesBackward0, (x,), (idx, x.shape, unique))


def global_index(idx: np.ndarray, shape: tuple) -> np.ndarray:
    """Positions within each (n, c) plane -> positions in the whole array: one
    flat take or assignment instead of NumPy's *_along_axis index grids
    (~3x faster here)."""
    n, c = shape[:2]
    plane = int(np.prod(shape[2:]))
    return idx + (np.arange(n * c, dtype=np.int64) * plane).reshape((n, c) + (1,) * (idx.ndim - 2))


@formula
def PoolScatterBackward(n, g, idx, unique):
    return (pool_gather(g, idx, unique),)


_SCATTER_POSITIONS = 1 << 16  # flat positions made at a time by pool_scatter


def pool_scatter(g: Tensor, idx: np.ndarray, shape: tuple, unique: bool) -> Tensor:
    n, c = shape[:2]
    out = np.zeros((n, c, int(np.prod(shape[2:]))), dtype=g.data.dtype)
    gi = g.data.reshape(n, c, -1)
    ii = idx.reshape(n, c, -1)
    if unique:
        # a few planes at a time: their flat positions, not the whole output's
        # (an int64 array twice the gradient's size: a step's peak of memory)
        planes, rows, grads = out.reshape(n * c, 1, -1), ii.reshape(n * c, 1, -1), \
            gi.reshape(n * c, -1)
        step = max(1, _SCATTER_POSITIONS // max(1, rows.shape[2]))
        for r in range(0, n * c, step):
            block = planes[r:r + step]
            block.reshape(-1)[global_index(rows[r:r + step], block.shape).reshape(-1)] = \
                grads[r:r + step].reshape(-1)
    else:
        grid = np.indices(ii.shape, sparse=True)
        np.add.at(out, (grid[0], grid[1], ii), gi)
    return record(out.reshape(shape), PoolScatterBackward, (g,), (idx, unique))


def _conv_nd(nd: int, transposed: bool):
    """torch_conv{nd}d / torch_conv_transpose{nd}d: `convolution` with R torch's
    argument order (batched input only; nnf_conv* also take unbatched ones)."""
    if transposed:
        def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 dilation: Any = 1) -> Tensor:
            return convolution(input, weight, bias, int_tuple(stride, nd), int_tuple(padding, nd),
                               int_tuple(dilation, nd), True, int_tuple(output_padding, nd), groups)
    else:
        def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
            return convolution(input, weight, bias, int_tuple(stride, nd), int_tuple(padding, nd),
                               int_tuple(dilation, nd), False, (0,) * nd, groups)
    conv.__name__ = f"conv{'_transpose' if transposed else ''}{nd}d"
    return conv


for _nd in (1, 2, 3):
    for _tr in (False, True):
        _f = _conv_nd(_nd, _tr)
        op(_f.__name__, method=False, samples=getattr(S, _f.__name__), autocast="lower",
           mobile=None if _tr else f"input, weight, bias=None, stride: int[{_nd}]=1, "
                                   f"padding: int[{_nd}]=0, dilation: int[{_nd}]=1, groups=1"
           )(_f)
        globals()[_f.__name__] = _f


# --------------------------------------------------------------------------
# Adaptive average pooling. Each output cell averages the window
# [floor(i*n/o), ceil((i+1)*n/o)) of its dims; the average over a box is the
# product of one average per dim, so the pooling is one small matrix per
# spatial dim applied in turn, and its derivative the transposed matrices.
# `_adaptive_avg_pool{2,3}d_backward` is that derivative as an op (its own
# derivative is the pooling again), so every order works.


def _pool_matrix(n_in: int, n_out: int, dtype: np.dtype) -> np.ndarray:
    p = np.zeros((n_out, n_in), dtype=dtype)
    for i in range(n_out):
        a, b = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        p[i, a:b] = 1.0 / (b - a)
    return p


def _pool_along(a: np.ndarray, sizes: tuple, adjoint: bool) -> np.ndarray:
    """Pool the last len(sizes) dims of `a` to `sizes` (adjoint: spread a
    pooled gradient back over inputs of those sizes)."""
    nd = len(sizes)
    for k, s in enumerate(sizes):
        axis = a.ndim - nd + k
        p = _pool_matrix(s, a.shape[axis], a.dtype).T if adjoint else \
            _pool_matrix(a.shape[axis], s, a.dtype)
        a = np.moveaxis(np.tensordot(p, a, axes=(1, axis)), 0, axis)
    return np.ascontiguousarray(a)


def _adaptive_sizes(x: Tensor, output_size: Any, nd: int, name: str) -> tuple:
    if x.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in x.shape[-nd:]):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor with non-zero "
                           f"sizes in its {nd} last dims, but got input of size "
                           f"{list(x.shape)}")
    if x.data.dtype.kind != "f":
        raise RuntimeError(f'"{name}" not implemented for \'{x.dtype.r_name}\': pooling '
                           f"takes floating tensors")
    sizes = np.asarray(output_size).reshape(-1).tolist()
    if len(sizes) == 1:
        sizes = sizes * nd
    if len(sizes) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd} numbers, got {len(sizes)}")
    sizes = tuple(whole(s, "output_size") for s in sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{name}: elements of output_size must be non-negative, got "
                           f"{list(sizes)}")
    return sizes


@formula
def AdaptiveAvgPoolBackward(n, g, nd, shape):
    # (recorded as AdaptiveAvgPool2DBackward0, AdaptiveAvgPool3DBackward0)
    return (_adaptive_pool_backward(nd, g, _Shape(shape)),)


@formula
def AdaptiveAvgPoolBackwardBackward(n, g, nd, self_, out_shape):
    # (recorded as AdaptiveAvgPool2DBackwardBackward0, ...)
    gs = None
    if n.needs(1):  # the input only gives its shape: no gradient
        gs = wrap(np.zeros(self_.shape, dtype=g.data.dtype))
    return _adaptive_pool(nd, g, out_shape[-nd:]) if n.needs(0) else None, gs


def _adaptive_pool(nd: int, x: Tensor, output_size: Any) -> Tensor:
    sizes = _adaptive_sizes(x, output_size, nd, f"adaptive_avg_pool{nd}d")
    return record(_pool_along(x.data, sizes, False), AdaptiveAvgPoolBackward, (x,),
                  (nd, x.shape), name=f"AdaptiveAvgPool{nd}DBackward0")


def _adaptive_pool_backward(nd: int, grad_output: Tensor, x: Tensor) -> Tensor:
    if grad_output.ndim != x.ndim:
        raise RuntimeError(f"adaptive_avg_pool{nd}d_backward: grad_output ("
                           f"{grad_output.ndim}-D) and self ({x.ndim}-D) must have "
                           f"as many dims")
    out = _pool_along(grad_output.data, tuple(x.shape[-nd:]), True)
    inputs = (grad_output, x if isinstance(x, Tensor) and x._rg else None)
    return record(out, AdaptiveAvgPoolBackwardBackward, inputs,
                  (nd, x, tuple(grad_output.shape)),
                  name=f"AdaptiveAvgPool{nd}DBackwardBackward0")


def adaptive_avg(nd: int, x: Tensor, output_size: Any) -> Tensor:
    """PyTorch's adaptive_avg_pool{nd}d: a plain mean when the output is one cell."""
    sizes = _adaptive_sizes(x, output_size, nd, f"adaptive_avg_pool{nd}d")
    if all(s == 1 for s in sizes):
        return x.mean(dim=tuple(range(-nd, 0)), keepdim=True)
    return _adaptive_pool(nd, x, sizes)


def _adaptive_avg_family(nd: int) -> None:
    """The ops `_adaptive_avg_pool{nd}d`, its `_backward` and `adaptive_avg_pool{nd}d`."""
    samples = getattr(S, f"adaptive_avg_pool{nd}d")

    def pool(self: Tensor, output_size: Any) -> Tensor:
        return _adaptive_pool(nd, self, output_size)

    def pool_backward(grad_output: Tensor, self: Tensor) -> Tensor:
        return _adaptive_pool_backward(nd, grad_output, self)

    def avg(self: Tensor, output_size: Any) -> Tensor:
        return adaptive_avg(nd, self, output_size)

    pool.__name__ = f"_adaptive_avg_pool{nd}d"
    pool_backward.__name__ = f"_adaptive_avg_pool{nd}d_backward"
    avg.__name__ = f"adaptive_avg_pool{nd}d"
    op(pool.__name__, method=False, samples=samples, torch_name=pool.__name__)(pool)
    op(pool_backward.__name__, method=False, samples=getattr(S, pool_backward.__name__[1:]),
       torch_name="ops.aten." + pool_backward.__name__)(pool_backward)
    op(avg.__name__, method=False, samples=samples, torch_name="_C._nn." + avg.__name__,
       mobile=f"self, output_size: int[{nd}]" if nd == 2 else None,
       autocast="fp32" if nd == 3 else None)(avg)


@op(method=False, samples=S.adaptive_avg_pool1d, torch_name="adaptive_avg_pool1d")
def adaptive_avg_pool1d(self: Tensor, output_size: Any) -> Tensor:
    """PyTorch's: the 2-d pooling of one row."""
    sizes = np.asarray(output_size).reshape(-1).tolist()
    if self.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got input "
                           f"of size {list(self.shape)}")
    if len(sizes) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d: output_size should contain one number, got "
                           f"{len(sizes)}")
    return adaptive_avg(2, self.unsqueeze(-2), (1, sizes[0])).squeeze(-2)


class _Shape(tuple):
    """A shape standing where an op takes a tensor only for its shape."""

    @property
    def shape(self) -> tuple:
        return tuple(self)

    @property
    def ndim(self) -> int:
        return len(self)

    _rg = False


for _nd in (2, 3):
    _adaptive_avg_family(_nd)


# --------------------------------------------------------------------------
# Batch normalization as PyTorch's kernel (`_batch_norm_impl_index`, the
# NativeBatchNormBackward0 node): statistics of the batch when training (or
# when there are no running statistics), the running ones otherwise. The
# derivative recomputes the batch statistics with tensor ops, so it is
# differentiable itself. FAST PATH (compiled batch norm, `bn_kernel.py`): a
# contiguous float input whose parameters share its dtype runs in libtorch's
# order (its bits), each pass reading the input from memory once; anything else
# takes the NumPy passes below.


def _bn_layout(x: Tensor) -> tuple:
    dims = (0,) + tuple(range(2, x.ndim))
    return dims, (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _bn_compiled(x: np.ndarray, *params: Tensor | None) -> Any:
    """The compiled kernels when they take this input and these parameters, else None."""
    if x.dtype not in (np.float32, np.float64) or not x.flags.c_contiguous or x.size == 0 \
            or any(p is not None and p.data.dtype != x.dtype for p in params):
        return None
    return bn_kernel.compiled()


def _bn_planes(a: np.ndarray, n_batch: int, n_chan: int) -> np.ndarray:
    """a as libtorch's kernels walk it: (N, C, S), or (N, C) when S is 1."""
    size = a.size // (n_batch * n_chan)
    return a.reshape(n_batch, n_chan, size) if size > 1 else a.reshape(n_batch, n_chan)


def _bn_array(a: np.ndarray) -> np.ndarray:
    """a as the compiled kernels take arrays: C-contiguous and writable."""
    return np.require(a, requirements=("C", "W"))


def _bn_param(t: Tensor | None, c: int, fill: float, dtype: np.dtype) -> np.ndarray:
    return np.full(c, fill, dtype) if t is None else _bn_array(t.data.reshape(-1))


def _bn_train_compiled(kernel: Any, x: np.ndarray, weight: Tensor | None, bias: Tensor | None,
                       running_mean: Tensor | None, running_var: Tensor | None,
                       momentum: float, eps: float) -> tuple:
    """(output, mean, 1/std) of a training batch by the compiled kernel (FAST
    PATH), and libtorch's update of the running statistics
    (`batch_norm_cpu_update_stats_template`): the running mean in the data's type,
    the running variance's new term in float64."""
    n, c = x.shape[:2]
    dt = x.dtype.type
    mean, var_sum, invstd = np.empty(c, x.dtype), np.empty(c, x.dtype), np.empty(c, x.dtype)
    out = np.empty_like(x)
    w, b = _bn_param(weight, c, 1, x.dtype), _bn_param(bias, c, 0, x.dtype)
    planes = _bn_planes(x, n, c)
    if planes.ndim == 3:  # the output while each run of channels is in cache
        bn_kernel.by_channels(kernel.plane_stats, planes, w, b, eps, mean, var_sum, invstd,
                              _bn_planes(out, n, c))
    else:
        kernel.row_stats(planes, eps, mean, var_sum, invstd, torch_get_num_threads())
        kernel.affine(x.reshape(n, c, 1), mean, invstd, w, b, out.reshape(n, c, 1))
    m = dt(momentum)
    if running_mean is not None:
        running_mean.data[...] = (m * mean + (dt(1) - m) * running_mean.data.reshape(-1)
                                  ).reshape(running_mean.shape)
        bump_version(running_mean)
    if running_var is not None:
        with np.errstate(divide="ignore", invalid="ignore"):  # (one value: 0 / 0, NaN)
            unbiased = (var_sum / dt(x.size // c - 1)).astype(np.float64)
        rest = ((dt(1) - m) * running_var.data.reshape(-1)).astype(np.float64)
        running_var.data[...] = (np.float64(m) * unbiased + rest).astype(x.dtype).reshape(
            running_var.shape)
        bump_version(running_var)
    return out, mean, invstd


def _bn_grads_compiled(n, g, x, w, stats, train: bool) -> tuple:
    """The three gradients by the compiled kernel (FAST PATH), from the statistics
    the forward used."""
    xa = _bn_array(x.data)
    nb, c = xa.shape[:2]
    mean, invstd = stats
    planes = _bn_planes(xa, nb, c)
    gx = np.empty_like(xa) if n.needs(0) else None
    sum_g, dot = np.empty(c), np.empty(c)
    kernel = bn_kernel.compiled()
    args = (_bn_planes(_bn_array(g.data), nb, c), mean, invstd,
            _bn_param(w, c, 1, xa.dtype), train, gx is not None,
            np.empty((0,) * planes.ndim, xa.dtype) if gx is None else _bn_planes(gx, nb, c),
            sum_g, dot)
    if planes.ndim == 3:
        bn_kernel.by_channels(kernel.plane_grads, planes, *args)
    else:
        kernel.row_grads(planes, *args, torch_get_num_threads())
    return (None if gx is None else wrap(gx),
            wrap((dot * invstd).astype(xa.dtype)) if n.needs(1) else None,
            wrap(sum_g.astype(xa.dtype)) if n.needs(2) else None)


def _bn_grads_arrays(n, g, x, w, running, eps) -> tuple:
    """The three gradients on arrays (no graph wanted), in a few passes: two
    per-channel sums (of g and of g times the centred input) and one pass for
    the input's gradient."""
    dims, shape = _bn_layout(x)
    xa, ga = x.data, g.data

    def dot(a, b):  # per channel, sum of a * b: a BLAS dot per (sample, channel) row
        rows = a.shape[:2] + (1, -1)
        return np.matmul(a.reshape(rows), b.reshape(rows).swapaxes(-1, -2)).sum(axis=(0, 2, 3))

    if running is None:
        xc = xa - xa.mean(axis=dims, keepdims=True)
        invstd = 1 / np.sqrt(dot(xc, xc) / (xa.size // xa.shape[1])
                             + xa.dtype.type(eps))
    else:
        rm, rv = running
        xc = xa - rm.astype(xa.dtype).reshape(shape)
        invstd = 1 / np.sqrt(rv.astype(xa.dtype) + xa.dtype.type(eps))
    sum_g = ga.sum(axis=dims)
    sum_gxc = dot(ga, xc)
    gx = gw = gb = None
    if n.needs(0):
        scale = invstd if w is None else invstd * w.data
        if running is None:  # the batch statistics' share: centred, less its projection
            m = xa.size // xa.shape[1]
            xc *= (invstd * invstd * sum_gxc / m).reshape(shape)
            xc += (sum_g / m).reshape(shape)
            gx = np.subtract(ga, xc, out=xc)
            gx *= scale.reshape(shape)
        else:
            gx = ga * scale.reshape(shape)
        gx = wrap(gx.astype(xa.dtype, copy=False))
    if n.needs(1):
        gw = wrap((sum_gxc * invstd).astype(w.data.dtype, copy=False))
    if n.needs(2):
        gb = wrap(sum_g.astype(ga.dtype, copy=False))
    return gx, gw, gb


@formula
def NativeBatchNormBackward0(n, g, x, w, running, eps, stats):
    if not is_grad_enabled() and x.data.dtype in (np.float32, np.float64) \
            and g.data.dtype == x.data.dtype:
        if stats is not None:
            return _bn_grads_compiled(n, g, x, w, stats, running is None)
        return _bn_grads_arrays(n, g, x, w, running, eps)
    # create_graph (or half precision): with tensor ops, themselves differentiable
    dims, shape = _bn_layout(x)
    if running is None:  # batch statistics: they depend on x too
        xc = x - x.mean(dim=dims, keepdim=True)
        invstd = ((xc * xc).mean(dim=dims, keepdim=True) + eps) ** -0.5
        xhat = xc * invstd
    else:
        rm, rv = running
        invstd = wrap((rv + eps) ** -0.5).reshape(*shape)
        xhat = (x - wrap(rm).reshape(*shape)) * invstd
    gx = gw = gb = None
    if n.needs(0):
        scale = invstd if w is None else invstd * w.reshape(*shape)
        if running is None:
            gx = (g - g.mean(dim=dims, keepdim=True) -
                  xhat * (g * xhat).mean(dim=dims, keepdim=True)) * scale
        else:
            gx = g * scale
    if n.needs(1):
        gw = (g * xhat).sum(dim=dims)
    if n.needs(2):
        gb = g.sum(dim=dims)
    return gx, gw, gb


@op(method=False, samples=S.batch_norm_impl_index)
def _batch_norm_impl_index(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                           running_mean: Tensor | None, running_var: Tensor | None,
                           training: bool, momentum: float, eps: float,
                           cudnn_enabled: bool) -> tuple:
    """(output, saved mean, saved 1/std, reserve, 0): the batch's statistics
    (empty in evaluation), an empty reserve and the CPU kernel's index 0.
    Training updates the running statistics in place."""
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input with at least 2 dims (batch, "
                           f"channels, ...), got size {list(input.shape)}")
    x = input.data
    dims, shape = _bn_layout(input)
    c, eps = input.shape[1], float(eps)
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"batch_norm: {name} should contain {c} elements (one per "
                               f"channel), not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm: running_mean and running_var must be given in "
                           "evaluation mode (training = FALSE)")
    kernel = _bn_compiled(x, weight, bias, running_mean, running_var)
    stats = out = None  # (stats: mean and 1/std for the compiled backward)
    if training and kernel is not None:  # FAST PATH (compiled batch norm)
        out, mean, invstd = _bn_train_compiled(kernel, x, weight, bias, running_mean,
                                               running_var, momentum, eps)
        save_mean, save_invstd, running = mean, invstd, None
        stats = (mean, invstd)
    elif training:
        # the mean once: var takes it (the same bits as the mean it would make)
        mean = x.mean(axis=dims, keepdims=True)
        var = x.var(axis=dims, mean=mean)
        mean = mean.reshape(-1)
        count = x.size // max(c, 1)
        if running_mean is not None:
            running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * mean
            bump_version(running_mean)
        if running_var is not None:
            # (one value per channel: 0 / 0, NaN, as libtorch's var_sum / (n - 1))
            unbiased = var * (count / (count - 1)) if count > 1 else np.full_like(var, np.nan)
            running_var.data[...] = (1 - momentum) * running_var.data + momentum * unbiased
            bump_version(running_var)
        invstd = 1.0 / np.sqrt(var + eps)
        save_mean, save_invstd, running = mean, invstd, None
    else:
        mean = running_mean.data.astype(x.dtype).reshape(-1)
        invstd = 1.0 / np.sqrt(running_var.data.astype(x.dtype).reshape(-1) + eps)
        save_mean = save_invstd = np.zeros(0, x.dtype)
        running = (running_mean.data.copy(), running_var.data.copy())
        if kernel is not None:  # (libtorch's backward takes 1/std in float64)
            rv = running[1].reshape(-1).astype(np.float64)
            stats = (_bn_array(mean), (1 / np.sqrt(rv + eps)).astype(x.dtype))
    if out is None and kernel is not None:  # (evaluation)
        # libtorch's fma(x, alpha, beta): alpha = 1/std * weight, beta = bias - mean * alpha
        # (one thread: bound by memory, a second one made it slower)
        out = np.empty_like(x)
        kernel.affine(x.reshape(x.shape[0], c, -1), _bn_array(mean),
                      _bn_array(invstd.astype(x.dtype, copy=False)),
                      _bn_param(weight, c, 1, x.dtype), _bn_param(bias, c, 0, x.dtype),
                      out.reshape(x.shape[0], c, -1))
    elif out is None:
        # one scale and one shift per channel: two passes over the input, as libtorch's kernel
        alpha = invstd if weight is None else invstd * weight.data
        beta = -mean * alpha if bias is None else bias.data - mean * alpha
        out = x * alpha.astype(x.dtype, copy=False).reshape(shape)
        out += beta.astype(out.dtype, copy=False).reshape(shape)
        out = np.ascontiguousarray(out, dtype=x.dtype)
    out = record(out, NativeBatchNormBackward0, (input, weight, bias),
                 (input, weight, running, eps, stats))
    return (out, wrap(np.asarray(save_mean, x.dtype)), wrap(np.asarray(save_invstd, x.dtype)),
            wrap(np.zeros(0, np.uint8)), 0)


# --------------------------------------------------------------------------
# Layer normalization as PyTorch's kernel (the NativeLayerNormBackward0 node):
# each row of the last dims centred and scaled by its own statistics, then the
# weight and bias. Forward: a mean and a row-wise dot product (no squared
# temporary), then the output made in place; the node saves the input, its rows'
# means and 1/std. The derivative works on arrays in a few passes, or with tensor
# ops (recomputing the statistics from x) under create_graph.


def _ln_rows(x: np.ndarray, normalized_shape: tuple) -> np.ndarray:
    """x as (rows, values per row)."""
    n = int(np.prod(normalized_shape))
    return x.reshape(-1, n) if n else x.reshape(x.size, 0)


def _ln_grads_arrays(n, g, x, w, mean, rstd, normalized_shape) -> tuple:
    rows = _ln_rows(x.data, normalized_shape)
    ga = _ln_rows(np.asarray(g.data), normalized_shape)
    xhat = rows - mean[:, None]
    xhat *= rstd[:, None]
    gx = gw = gb = None
    if n.needs(1):
        gw = wrap(np.einsum("ij,ij->j", ga, xhat).reshape(normalized_shape))
    if n.needs(2):
        gb = wrap(ga.sum(axis=0).reshape(normalized_shape))
    if n.needs(0):
        gxhat = ga * w.data.reshape(-1) if w is not None else ga.copy()
        m = rows.shape[1]
        a = gxhat.sum(axis=1) / m                    # mean of the gradient, per row
        b = np.einsum("ij,ij->i", gxhat, xhat) / m   # its projection on xhat, per row
        xhat *= b[:, None]
        gxhat -= xhat
        gxhat -= a[:, None]
        gxhat *= rstd[:, None]
        gx = wrap(gxhat.reshape(x.shape))
    return gx, gw, gb


@formula
def NativeLayerNormBackward0(n, g, x, w, mean, rstd, normalized_shape, eps):
    if not is_grad_enabled():
        return _ln_grads_arrays(n, g, x, w, mean, rstd, normalized_shape)
    # create_graph: with tensor ops, themselves differentiable (the statistics
    # recomputed from x, so that they depend on it)
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    xc = x - x.mean(dim=dims, keepdim=True)
    inv = ((xc * xc).mean(dim=dims, keepdim=True) + eps) ** -0.5
    xhat = xc * inv
    gx = gw = gb = None
    lead = tuple(range(x.ndim - len(normalized_shape)))
    if n.needs(0):
        gxhat = g if w is None else g * w
        gx = (gxhat - gxhat.mean(dim=dims, keepdim=True) -
              xhat * (gxhat * xhat).mean(dim=dims, keepdim=True)) * inv
    if n.needs(1):
        gw = (g * xhat).sum(dim=lead) if lead else g * xhat
    if n.needs(2):
        gb = g.sum(dim=lead) if lead else g
    return gx, gw, gb


@op(function=False, method=False, torch_name="nn.functional.layer_norm", names="keep",
    samples=S.layer_norm)
def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """float32 and float64 input (nnf_layer_norm composes the others from ops)."""
    shape = tuple(int(s) for s in np.asarray(normalized_shape).reshape(-1))
    x = input.data
    if len(shape) > x.ndim or x.shape[x.ndim - len(shape):] != shape:
        dims = ", ".join(map(str, shape))
        raise RuntimeError(f"Given normalized_shape=[{dims}], expected input with shape "
                           f"[*, {dims}], but got input of size{list(x.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    rows = _ln_rows(x, shape)
    m = rows.shape[1]
    mean = rows.mean(axis=1) if m else np.zeros(rows.shape[0], x.dtype)
    out = rows - mean[:, None]
    var = np.einsum("ij,ij->i", out, out) / x.dtype.type(max(m, 1))
    rstd = 1 / np.sqrt(var + x.dtype.type(eps))
    out *= rstd[:, None]
    if weight is not None:
        out *= weight.data.reshape(-1)
    if bias is not None:
        out += bias.data.reshape(-1)
    return record(out.reshape(x.shape), NativeLayerNormBackward0, (input, weight, bias),
                  (input, weight, mean, rstd, shape, float(eps)))


# --------------------------------------------------------------------------
# Embedding: the weight's rows at the indices (nnf_embedding, nn_embedding). R
# torch exports no torch_embedding: no R form; tests/test_nn.py checks it against
# PyTorch, second order too.


@formula
def EmbeddingBackward0(n, g, idx, num_weights, padding_idx):
    # each index's gradient row added to its weight row; none to padding_idx's
    rows = g.reshape(idx.size, -1)
    if padding_idx is not None:
        rows = rows * wrap((idx.reshape(-1, 1) != padding_idx).astype(g.data.dtype))
    zero = wrap(np.zeros((num_weights, rows.shape[1]), g.data.dtype))
    grad = index_add(zero, 0, wrap(idx.reshape(-1).astype(np.int64)), rows)
    return (grad.reshape((num_weights,) + tuple(g.shape[idx.ndim:])),)


@op(function=False, method=False, torch_name="nn.functional.embedding")
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    idx = input.data
    return record(weight.data[idx], EmbeddingBackward0, (weight,),
                  (idx, weight.shape[0], padding_idx))


# --------------------------------------------------------------------------
# One-hot encoding and the multi-class margin loss (torch_one_hot,
# torch_multi_margin_loss; nnf_one_hot and nnf_multi_margin_loss call these).
# Class indices are positions: 0-based here, 1-based from R.


@op(method=False, indices=("self",), differentiable=False, samples=S.one_hot,
    torch_name="nn.functional.one_hot")
def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
    idx = self.data
    if idx.dtype.kind not in "iu":
        raise TypeError(f"one_hot is only applicable to index tensors (integers), got "
                        f"{self.dtype}")
    num_classes = whole(num_classes, "num_classes")
    if idx.size == 0 and num_classes < 0:
        raise RuntimeError("one_hot: can not infer the number of classes from an empty "
                           "tensor; give num_classes")
    if idx.size and idx.min() < 0:
        raise ValueError("one_hot: class values must be non-negative")
    n = int(idx.max()) + 1 if num_classes < 0 else num_classes
    if idx.size and idx.max() >= n:
        raise positional_error(ValueError, f"one_hot: class values must be smaller than "
                               f"num_classes ({n} classes), got class {{got}}",
                               got=int(idx.max()))
    return wrap((idx[..., None] == np.arange(n)).astype(np.int64))


_REDUCTION_CODES = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: Any) -> str:
    """A reduction by name or by libtorch's code (R's torch_reduction_mean() is 1)."""
    if isinstance(reduction, str):
        if reduction in ("none", "mean", "sum"):
            return reduction
    elif whole(reduction, "reduction") in _REDUCTION_CODES:
        return _REDUCTION_CODES[int(reduction)]
    raise ValueError(f"reduction must be 'none', 'mean' or 'sum' (codes 0, 1, 2), got "
                     f"{reduction!r}")


def _margin_terms(x2: Any, tgt: np.ndarray, margin: float) -> tuple:
    """margin - x[target] + x for each class, and where it counts: positive and
    not the target class itself."""
    rows = np.arange(x2.shape[0])
    z = x2 - x2[rows, tgt].reshape(-1, 1) + margin if isinstance(x2, np.ndarray) else \
        x2 - x2.gather(1, wrap(tgt.reshape(-1, 1))) + margin
    zd = z if isinstance(z, np.ndarray) else z.data
    active = zd > 0
    active[rows, tgt] = False
    return z, active


@formula
def MultiMarginLossBackward0(n, g, x, tgt, p, margin, wrow, reduction):
    c = x.shape[-1] if x.ndim else 1
    x2 = x.reshape(-1, c)
    nframe = x2.shape[0]
    z, active = _margin_terms(x2, tgt, margin)
    mask = wrap(active.astype(x.data.dtype))
    d = mask if p == 1 else z * mask * 2
    scale = wrow / c if reduction != "mean" else wrow / (c * nframe)
    gl = g.reshape(-1, 1) if reduction == "none" else g.reshape(1, 1)
    gz = d * wrap(scale.reshape(-1, 1).astype(x.data.dtype)) * gl
    hot = wrap((tgt.reshape(-1, 1) == np.arange(c)).astype(x.data.dtype))
    gx = gz - hot * gz.sum(dim=1, keepdim=True)
    return (gx.reshape(*x.shape),)


@op(method=False, indices=("target",), samples=S.multi_margin_loss,
    torch_name="_C._nn.multi_margin_loss", second_order=False, autocast="fp32")
def multi_margin_loss(self: Tensor, target: Tensor, p: float = 1, margin: float = 1,
                      weight: Tensor | None = None, reduction: Any = "mean") -> Tensor:
    """The multi-class hinge loss: for each sample, the mean over the classes
    other than its target of max(0, margin - x[target] + x[class])^p (times
    the target's weight)."""
    reduction = _reduction(reduction)
    if isinstance(weight, (list, tuple)) and not weight:  # R torch's `weight = list()`
        weight = None
    p = whole(p, "p")
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p = 1 and p = 2 are supported, got {p}")
    x = self.data
    if x.dtype.kind != "f":
        raise RuntimeError(f"multi_margin_loss: expected a floating input, got {self.dtype}")
    if not (x.ndim == 0 or (x.ndim in (1, 2) and x.shape[-1] != 0)):
        raise ValueError(f"multi_margin_loss: expected a non-empty vector or matrix (samples "
                         f"by classes), got size {list(x.shape)}")
    nframe = x.shape[0] if x.ndim == 2 else 1
    c = x.shape[-1] if x.ndim else 1
    t = target.data
    if t.dtype.kind not in "iu":
        raise TypeError(f"multi_margin_loss: the target must hold class indices (integers, "
                        f"torch_long()), got {target.dtype}")
    if t.ndim > 1 or t.size != nframe:
        raise ValueError(f"multi_margin_loss: inconsistent target size, expected {nframe} "
                         f"class indices (one per sample) but got size {list(t.shape)}")
    tgt = t.reshape(-1).astype(np.int64)
    if tgt.size and (tgt.min() < 0 or tgt.max() >= c):
        bad = int(tgt[(tgt < 0) | (tgt >= c)][0])
        raise positional_error(ValueError, f"multi_margin_loss: target out of range: got class "
                               f"{{got}} for an input of {c} classes", got=bad)
    if weight is not None:
        if weight.ndim > 1 or weight.numel() != c:
            raise ValueError(f"multi_margin_loss: inconsistent weight size, expected {c} "
                             f"(one per class) but got {list(weight.shape)}")
        wrow = weight.data.reshape(-1)[tgt].astype(x.dtype)
    else:
        wrow = np.ones(nframe, x.dtype)
    margin = float(margin)
    z, active = _margin_terms(x.reshape(nframe, c), tgt, margin)
    terms = np.where(active, z if p == 1 else z * z, 0)
    per = terms.sum(axis=1) * wrow / c
    if reduction == "none":
        out = per if t.ndim > 0 else per.reshape(())
    else:
        out = per.sum() / (nframe if reduction == "mean" else 1)
    return record(np.asarray(out, dtype=x.dtype), MultiMarginLossBackward0, (self,),
                  (self, tgt, p, margin, wrow, reduction))


# --------------------------------------------------------------------------
# Scaled dot-product attention, composed as PyTorch's math kernel is (so the
# nodes, and every order of derivative, are those of its parts): q and k^T
# each scaled by sqrt(scale), a boolean mask as 0 / -inf (a float one
# added), a softmax whose fully masked rows are 0 rather than NaN, dropout
# (always applied when dropout_p > 0), then the product with v.


def _sdpa_mask(attn_mask: Any, is_causal: bool, L: int, S: int, dtype: np.dtype) -> Any:
    if isinstance(attn_mask, (list, tuple)) and not attn_mask:  # R torch's `list()`
        attn_mask = None
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("scaled_dot_product_attention: give either attn_mask or "
                               "is_causal = TRUE, not both")
        attn_mask = wrap(np.tril(np.ones((L, S), dtype=bool)))
    if attn_mask is None:
        return None
    if not isinstance(attn_mask, Tensor):
        attn_mask = wrap(np.asarray(attn_mask))
    if attn_mask.data.dtype.kind == "b":  # keep where TRUE
        return wrap(np.where(attn_mask.data, 0, -np.inf).astype(dtype))
    return attn_mask


def _sdpa_probs(q: Tensor, k: Tensor, mask: Tensor | None, s: float) -> Tensor:
    """softmax(q k^T * s + mask) with tensor ops; fully masked rows are 0 (and
    pass no NaN to the gradient)."""
    root = float(np.sqrt(abs(s)))
    scores = (q * (root if s >= 0 else -root)).matmul(k.transpose(-2, -1) * root)
    if mask is not None:
        scores = scores + mask
    dead = np.isneginf(scores.data).all(axis=-1, keepdims=True)
    if not dead.any():
        return scores.softmax(-1)
    dead = wrap(np.broadcast_to(dead, scores.shape).copy())
    return scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)


@formula
def ScaledDotProductFlashAttentionForCpuBackward0(n, g, q, k, v, mask, s):
    p = _sdpa_probs(q, k, mask, s)
    gp = g.matmul(v.transpose(-2, -1))
    gs = p * (gp - (gp * p).sum(dim=-1, keepdim=True)) * s
    return (gs.matmul(k) if n.needs(0) else None,
            gs.transpose(-2, -1).matmul(q) if n.needs(1) else None,
            p.transpose(-2, -1).matmul(g) if n.needs(2) else None)


def _flash_shaped(q: Tensor, k: Tensor, v: Tensor, mask: Any, dropout_p: float) -> bool:
    """Whether PyTorch's CPU picks its fused kernel (one node for the whole
    attention) rather than the composition: 4-d, equal batch, heads and head
    size, no dropout, a mask of 2 or 4 dims, no empty sequence."""
    return (q.ndim == k.ndim == v.ndim == 4 and dropout_p == 0 and
            q.shape[:2] == k.shape[:2] == v.shape[:2] and
            q.shape[-1] == k.shape[-1] == v.shape[-1] > 0 and
            q.shape[-2] > 0 and k.shape[-2] > 0 and (mask is None or mask.ndim in (2, 4)))


@op(method=False, samples=S.scaled_dot_product_attention, second_order=False,
    torch_name="nn.functional.scaled_dot_product_attention", autocast="lower")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over the last two dims (..., L, E) of
    query, (..., S, E) of key and (..., S, Ev) of value; scale is 1/sqrt(E)
    by default. Dropout, when dropout_p > 0, is always applied (as PyTorch's)."""
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2 or \
            query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: expected query (..., L, E), key "
                           f"(..., S, E) and value (..., S, Ev), got {list(query.shape)}, "
                           f"{list(key.shape)} and {list(value.shape)}")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        heads, kv = query.shape[-3], key.shape[-3]
        if kv == 0 or heads % kv or value.shape[-3] != kv:
            raise RuntimeError(f"scaled_dot_product_attention: with enable_gqa, the query's "
                               f"{heads} heads must be a multiple of the key's and value's "
                               f"({kv}, {value.shape[-3]})")
        key = key.repeat_interleave(heads // kv, dim=-3)
        value = value.repeat_interleave(heads // kv, dim=-3)
    s = 1.0 / np.sqrt(query.shape[-1]) if scale is None else float(scale)
    p = float(dropout_p)
    mask = _sdpa_mask(attn_mask, bool(is_causal), query.shape[-2], key.shape[-2],
                      np.result_type(query.data, key.data))
    if _flash_shaped(query, key, value, mask, p) and needs_grad(query, key, value):
        with no_grad():
            out = _sdpa_probs(query, key, mask, s).matmul(value)
        return record(out.data, ScaledDotProductFlashAttentionForCpuBackward0,
                      (query, key, value), (query, key, value, mask, s))
    attn = _sdpa_probs(query, key, mask, s)
    if p > 0:
        if p >= 1:
            attn = attn * 0.0
        else:   # (libtorch's dropout: the default generator's Bernoulli noise)
            attn = attn * wrap(random_nn.dropout_noise(default_generator, attn.data, p))
    return attn.matmul(value)


# --------------------------------------------------------------------------
# binary_cross_entropy_with_logits: libtorch's loss node, (1 - target) * input -
# log_sigmoid(input) (log_sigmoid's weight pos_weight on positives), its gradient
# (sigmoid(input) - target) computed as one expression, as libtorch does


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """min(x, 0) - log1p(exp(-|x|)), as libtorch's kernel: in float32 (half
    types too, as libtorch computes them) with its vectorised exp and log1p."""
    if x.dtype == np.float64:
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    return sleef.log_sigmoid(x).astype(x.dtype)


@formula
def BinaryCrossEntropyWithLogitsBackward0(n, g, x, t, weight, pos_weight, reduction):
    g = g.expand(x.shape) if reduction != "none" else g
    gi = gt = None
    if n.needs(0):
        sig = x.sigmoid()
        if pos_weight is None:
            gi = sig - t
        else:
            pt = pos_weight * t
            gi = (pt + 1 - t) * sig - pt
    if n.needs(1):
        gt = -x if pos_weight is None else \
            (-x).sigmoid().log() - x.sigmoid().log() * pos_weight
    out = []
    for grad in (gi, gt):
        if grad is not None:  # (libtorch's order: the gradient, the weight, the mean)
            grad = grad * g
            grad = grad * weight if weight is not None else grad
            grad = grad / x.numel() if reduction == "mean" else grad
        out.append(grad)
    return (*out, None, None)


@op(function=False, method=False, samples=S.bce_with_logits,
    torch_name="nn.functional.binary_cross_entropy_with_logits", autocast="fp32")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: str = "mean") -> Tensor:
    x, t = input.data, np.asarray(target.data, dtype=input.data.dtype)
    log_sig = _log_sigmoid(x)
    if pos_weight is None:
        loss = (1 - t) * x - log_sig
    else:
        loss = (1 - t) * x - ((pos_weight.data - 1) * t + 1) * log_sig
    if weight is not None:
        loss = loss * weight.data
    loss = np.asarray(loss, dtype=x.dtype)
    if reduction != "none":
        total = libtorch_sum(loss, None)
        loss = np.asarray(total / loss.size if reduction == "mean" else total, dtype=x.dtype)
    return record(loss, BinaryCrossEntropyWithLogitsBackward0, (input, target, None, None),
                  (input, target, weight, pos_weight, reduction))


# The nodes of nn layers: nll_loss (nnf_nll_loss, nnf_cross_entropy), sparsemax,
# an LSTM layer.


@formula(arrays=True)
def NllLossBackward0(n, g, coef):
    # (written with what arrays and tensors share: the walk's fast path runs it
    # on arrays; under create_graph g is a tensor and coef a constant)
    c = wrap(coef) if type(g) is Tensor else coef
    return (g.reshape(-1, 1) * c,)


def nll_loss(logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
             reduction: str) -> Tensor:
    """The negative log-likelihood of `logp` (rows x classes, log-probabilities)
    at the class indices `target` (checked by nnf_nll_loss), as one node."""
    tgt = target.data.reshape(-1)
    n_class = logp.shape[1]
    dt = logp.data.dtype
    w = None  # each row's weight; None: all 1 (no weights, none ignored)
    if tgt.size and _all_classes(tgt, n_class) and not 0 <= ignore_index < n_class:
        # every target a class, none ignored (the common case: fewer passes)
        safe = tgt.astype(np.int64, copy=False)
        if weight is not None or tgt.size >= 2 ** 24:  # (a float32 count of ones is exact below)
            w = np.ones(tgt.shape, dtype=dt) if weight is None else weight.data[safe].astype(dt)
    else:
        valid = tgt != ignore_index
        bad = valid & ((tgt < 0) | (tgt >= n_class))
        if np.any(bad):
            got = int(tgt[bad][0])
            raise IndexError(f"Target {got} is out of bounds.")  # (libtorch's words)
        safe = np.where(valid, tgt, 0).astype(np.int64)
        w = np.ones(tgt.shape, dtype=dt) if weight is None else weight.data[safe].astype(dt)
        w = np.where(valid, w, 0).astype(dt)
    rows = np.arange(tgt.size)
    loss = -logp.data[rows, safe]
    if w is not None:
        loss *= w
    neg_w = dt.type(-1) if w is None else -w
    # One node, as PyTorch's NllLossBackward0 (a gather, a product, a sum and
    # a division were five, each with its own backward): the derivative is
    # the gradient times a constant (rows, classes) array.
    coef = np.zeros(logp.shape, dtype=dt)
    if reduction == "none":
        out, coef[rows, safe] = loss.reshape(target.shape), neg_w
    elif reduction == "sum":
        out, coef[rows, safe] = loss.sum(), neg_w
    else:
        total = float(tgt.size if w is None else w.sum())
        out = loss.sum() / total
        coef[rows, safe] = neg_w / dt.type(total)
    return record(np.asarray(out, dtype=dt), NllLossBackward0, (logp,), (coef,))


def _all_classes(tgt: np.ndarray, n_class: int) -> bool:
    """Whether every index in tgt is a class, 0 to n_class - 1."""
    if tgt.dtype == np.int64:  # (seen unsigned, a negative index is past any end: one pass)
        return int(tgt.view(np.uint64).max()) < n_class
    return 0 <= tgt.min() and tgt.max() < n_class


def _first_order(what: str) -> None:
    """A derivative run on arrays: refuse to build a graph of it (rather than
    give a wrong second derivative)."""
    if is_grad_enabled():
        raise RuntimeError(f"{what}: second derivatives (create_graph = TRUE) are not "
                           f"supported through {what}; its derivative is computed outside "
                           "autograd")


def _like(arr: np.ndarray, like: Any) -> Tensor:
    """A tensor of `arr` with the dtype of `like` (an array or a dtype)."""
    dt = like.dtype if hasattr(like, "dtype") else like
    return wrap(np.ascontiguousarray(arr, dtype=dt))


@formula(arrays=True)
def SparsemaxBackward(n, g, dim, out):
    # first order only: on arrays (the walk's fast path), never on tensors
    _first_order("sparsemax")
    gz = np.moveaxis(g, dim, -1)
    nz = out > 0
    mean = (gz * nz).sum(axis=-1, keepdims=True) / nz.sum(axis=-1, keepdims=True)
    return (np.ascontiguousarray(np.moveaxis(nz * (gz - mean), -1, dim), dtype=g.dtype),)


def sparsemax(x: Tensor, dim: int = -1) -> Tensor:
    """Euclidean projection onto the simplex along `dim` (Martins & Astudillo)."""
    dim = wrap_dim(whole(dim, "dim"), x.ndim)
    z = np.moveaxis(x.data, dim, -1)
    srt = -np.sort(-z, axis=-1)
    k = np.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cums = np.cumsum(srt, axis=-1)
    support = 1 + k * srt > cums
    k_max = support.sum(axis=-1, keepdims=True)
    tau = (np.take_along_axis(cums, k_max - 1, axis=-1) - 1) / k_max
    out = np.maximum(z - tau, 0)
    return record(np.ascontiguousarray(np.moveaxis(out, -1, dim), dtype=x.data.dtype),
                  SparsemaxBackward, (x,), (dim, out))


# An LSTM layer (one direction) is one node with several outputs, like PyTorch's
# fused cells: its time loops run on arrays, forward and backward (nn_kernels.py).
# For create_graph its derivative is taken through the layer unrolled in tensor
# ops, so every order works.


def _lstm_unrolled(x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor,
                   b_ih: Tensor | None, b_hh: Tensor | None) -> tuple:
    """The same layer with tensor ops, one time step after another."""
    wi_t, wh_t = w_ih.t(), w_hh.t()
    hs = []
    for t in range(x.shape[0]):
        z = x[t].matmul(wi_t) + h.matmul(wh_t)
        if b_ih is not None:
            z = z + b_ih + b_hh
        i, f, g, o = z.chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        hs.append(h)
    return stack(hs, 0), h, c


@multi_formula
def LstmBackward(node, grads, x, h0, c0, w_ih, w_hh, b_ih, b_hh, out, cache):
    """One gradient per input (x, h0, c0, w_ih, w_hh, b_ih, b_hh) from the
    gradients of (outputs, h_T, c_T)."""
    inputs = (x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    if is_grad_enabled():  # create_graph: differentiate the unrolled forward
        want = [k for k, t in enumerate(inputs) if t is not None and node.needs(k)]
        roots = [(edge(o), gr) for o, gr in zip(_lstm_unrolled(*inputs), grads)
                 if gr is not None]
        got = run_backward(roots, True, True, capture=[edge(inputs[k]) for k in want],
                           accumulate=False, sum_to=sum_to)
        res = [None] * 7
        for k, gk in zip(want, got):
            res[k] = gk
        return res
    buf, tcs = cache
    hs = out.data
    g_out, g_h, g_c = (None if gr is None else gr.data for gr in grads)
    g_x, g_h0, g_c0, g_wih, g_whh, g_b = K._lstm_backward_arrays(
        g_out, g_h, g_c, x.data, h0.data, w_ih.data, w_hh.data, buf, tcs, hs,
        b_ih is not None, tuple(node.needs(k) for k in range(5)) + (
            node.needs(5) or node.needs(6),))
    res = [g_x, g_h0, g_c0, g_wih, g_whh, g_b, g_b]
    return [None if r is None or not node.needs(k) else _like(r, buf.dtype)
            for k, r in enumerate(res)]


def lstm_layer(x: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None, b_hh: Tensor | None) -> tuple:
    """(T, N, I) sequence through one LSTM layer: (outputs, h_T, c_T)."""
    bias = None if b_ih is None else b_ih.data + b_hh.data
    buf, tcs, hs = K._lstm_forward(x.data, h0.data, c0.data, w_ih.data, w_hh.data, bias)
    inputs = (x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    return record_many([hs, hs[-1].copy(), buf[-1, 4 * w_hh.shape[1]:].T.copy()], LstmBackward,
                       inputs, inputs + (Output(0), (buf, tcs)))


# --------------------------------------------------------------------------
# conv_tbc: a 1-d convolution of time-major input (time, batch, channels) with
# a (kernel, in, out) weight: convolution's arithmetic and derivative on the
# permuted operands, under its own node


@formula
def ConvTbcBackward0(n, g, x, w, pad):
    gx, gw, gb = ConvolutionBackward0.formula(n, g.permute(1, 2, 0), x.permute(1, 2, 0),
                                              w.permute(2, 1, 0), True, (1,), (pad,), (1,),
                                              False, (0,), 1)
    return (None if gx is None else gx.permute(2, 0, 1),
            None if gw is None else gw.permute(2, 1, 0), gb)


@op(method=False, samples=S.conv_tbc)
def conv_tbc(self: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    if self.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise RuntimeError(f"conv_tbc: input must be 3-d (time, batch, channels), weight 3-d "
                           f"(kernel, in, out) and bias 1-d, got {list(self.shape)}, "
                           f"{list(weight.shape)} and {list(bias.shape)}")
    if self.shape[2] != weight.shape[1] or weight.shape[2] != bias.shape[0]:
        raise RuntimeError(f"conv_tbc: input has {self.shape[2]} channels and bias "
                           f"{bias.shape[0]} values; the weight {list(weight.shape)} must be "
                           "(kernel, input channels, bias values)")
    pad = whole(pad, "pad")
    out = _conv_arrays(self.data.transpose(1, 2, 0), weight.data.transpose(2, 1, 0), None,
                       (1,), (pad,), (1,), False, (0,), 1) + bias.data.reshape(1, -1, 1)
    out = np.ascontiguousarray(out.transpose(2, 0, 1),
                               dtype=np.result_type(self.data, weight.data))
    return record(out, ConvTbcBackward0, (self, weight, bias), (self, weight, pad))
