"""Activation ops with a node of their own in libtorch: elu (and celu, selu,
which libtorch computes with it), threshold, hardtanh and rrelu, each with its
in-place form (`torch_elu_(x)`, `torch_relu_(x)`...), whose node libtorch names
apart (EluBackward1, ThresholdBackward1, ...); and tanh's and sigmoid's
gradient kernels.

The derivatives are written with tensor ops, so higher orders come for free.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..constructors import Generator, generator_of
from ..random import nn as random_nn
from ..tensor import Tensor
from .dispatch import op
from .registry import REGISTRY
from .pointwise import inplace_form, relu, where
from .recording import OUTPUT, formula, record
from .samples import activation as S

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _floating(self: Tensor, name: str) -> np.ndarray:
    """The input's array; libtorch's activation kernels have no integer forms."""
    if self.data.dtype.kind in "biu":
        raise RuntimeError(f"\"{name}\" not implemented for '{self.dtype.r_name}': give a "
                           "floating point tensor, e.g. x$to(dtype = torch_float())")
    return self.data


# --------------------------------------------------------------------------
# elu: scale * x above 0, scale * alpha * (exp(input_scale * x) - 1) at or below


def _elu_grad(g: Any, x: Any, alpha: float, scale: float, input_scale: float) -> Any:
    neg = g * (x * input_scale).exp() * (input_scale * scale * alpha)
    return where(x > 0, g * scale, neg)


@formula
def EluBackward0(n, g, x, alpha, scale, input_scale):
    return (_elu_grad(g, x, alpha, scale, input_scale),)


@formula
def CeluBackward0(n, g, x, alpha):
    return (_elu_grad(g, x, alpha, 1.0, 1.0 / alpha),)


def _elu_array(d: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    with np.errstate(over="ignore"):
        neg = np.expm1(np.minimum(d, 0) * input_scale) * (alpha * scale)
    return np.where(d > 0, d * scale, neg).astype(d.dtype, copy=False)


@op(samples=S.elu, names="keep", method=False, torch_name="_C._nn.elu",
    mobile="self, alpha=1, scale=1, input_scale=1")
def elu(self: Tensor, alpha: float = 1, scale: float = 1, input_scale: float = 1) -> Tensor:
    d = _floating(self, "elu")
    alpha, scale, input_scale = float(alpha), float(scale), float(input_scale)
    return record(_elu_array(d, alpha, scale, input_scale), EluBackward0, (self,),
                  (self, alpha, scale, input_scale))


@op(samples=S.celu, names="keep", method=False)
def celu(self: Tensor, alpha: float = 1) -> Tensor:
    alpha = float(alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu's alpha must not be 0")
    d = _floating(self, "celu")
    return record(_elu_array(d, alpha, 1.0, 1.0 / alpha), CeluBackward0, (self,),
                  (self, alpha))


@op(samples=S.float_unary, names="keep", method=False)
def selu(self: Tensor) -> Tensor:
    """elu with SELU's alpha and scale (libtorch's node is elu's)."""
    return elu(self, SELU_ALPHA, SELU_SCALE)


# --------------------------------------------------------------------------
# threshold: x above the threshold, else value


@formula
def ThresholdBackward0(n, g, x, threshold):
    return (where(x > threshold, g, g * 0),)


@op(samples=S.threshold, names="keep", method=False)
def threshold(self: Tensor, threshold: float, value: float) -> Tensor:
    d = self.data
    out = np.where(d > threshold, d, np.asarray(value).astype(d.dtype))
    return record(out, ThresholdBackward0, (self,), (self, threshold))


# --------------------------------------------------------------------------
# hardtanh: x clamped to [min_val, max_val]; the gradient passes strictly inside


@formula
def HardtanhBackward0(n, g, x, min_val, max_val):
    return (where((x > min_val) & (x < max_val), g, g * 0),)


@op(samples=S.hardtanh, names="keep", method=False, torch_name="_C._nn.hardtanh",
    mobile="self, min_val=-1, max_val=1")
def hardtanh(self: Tensor, min_val: float = -1, max_val: float = 1) -> Tensor:
    d = _floating(self, "hardtanh")
    out = np.clip(d, min_val, max_val).astype(d.dtype, copy=False)
    return record(out, HardtanhBackward0, (self,), (self, min_val, max_val))


# --------------------------------------------------------------------------
# hardshrink: x where |x| > lambd, else 0; prelu: x above 0, x times its
# channel's weight (dim 1; one weight for all) below


@formula
def HardshrinkBackward0(n, g, x, lambd):
    return (where((x > lambd) | (x < -lambd), g, g * 0),)


@op(function=False, samples=S.hardshrink, names="keep")
def hardshrink(self: Tensor, lambd: float = 0.5) -> Tensor:
    d = _floating(self, "hardshrink")
    out = np.where((d > lambd) | (d < -lambd), d, 0).astype(d.dtype, copy=False)
    return record(out, HardshrinkBackward0, (self,), (self, lambd))


@formula
def HardshrinkBackwardBackward0(n, g, x, lambd):
    return (HardshrinkBackward0.formula(n, g, x, lambd)[0], g * 0 if n.needs(1) else None)


@op(function=False, samples=S.hardshrink_backward, torch_name="ops.aten.hardshrink_backward")
def hardshrink_backward(self: Tensor, grad_out: Tensor, lambd: float) -> Tensor:
    """hardshrink's gradient at self: grad_out where |self| > lambd, else 0 (R torch's
    `x$hardshrink_backward(grad_out, lambd)`, libtorch's kernel)."""
    d, g = _floating(self, "hardshrink_backward"), grad_out.data
    out = np.where((d > lambd) | (d < -lambd), g, 0).astype(np.result_type(d, g), copy=False)
    return record(out, HardshrinkBackwardBackward0, (grad_out, self), (self, lambd))


def _channel_weight(w: Any, ndim: int) -> Any:
    """The weight shaped to broadcast over dim 1 (channels) of an ndim input."""
    return w.reshape((-1,) + (1,) * (ndim - 2)) if ndim >= 2 and w.shape[0] > 1 else w


@formula
def PreluKernelBackward0(n, g, x, w):
    wb = _channel_weight(w, x.ndim)
    below = g * where(x > 0, x * 0, x)
    grad_w = None
    if n.needs(1):
        dims = [i for i in range(x.ndim) if not (i == 1 and w.numel() > 1)]
        grad_w = below.sum(dim=dims).reshape(w.shape) if dims else below.reshape(w.shape)
    return (where(x > 0, g, g * wb) if n.needs(0) else None, grad_w)


@op(function=False, samples=S.prelu, names="keep", autocast="lower")
def prelu(self: Tensor, weight: Tensor) -> Tensor:
    d = _floating(self, "prelu")
    w = weight.data.reshape(-1)
    channels = d.shape[1] if d.ndim >= 2 else 1
    if w.size != 1 and w.size != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {w.size} and channel size = {channels}.")
    wb = _channel_weight(w, d.ndim)
    out = np.where(d > 0, d, d * wb).astype(d.dtype, copy=False)
    return record(out, PreluKernelBackward0, (self, weight), (self, weight))


# --------------------------------------------------------------------------
# rrelu: x above 0, x times a slope below: in training a slope drawn per element
# from U(lower, upper) (kept in `noise`), else the fixed (lower + upper) / 2


@formula
def RreluWithNoiseBackward0(n, g, x, noise, lower, upper, training):
    if training and upper - lower > 1e-6:
        return (g * noise,)
    return (where(x > 0, g, g * ((lower + upper) / 2)),)


def _rrelu_noise(d: np.ndarray, lower: float, upper: float, training: bool,
                 generator: Generator | None) -> np.ndarray:
    """The slope of each element: 1 above 0, drawn (training: libtorch's draws) or
    fixed below."""
    if not training:
        return np.where(d > 0, 1.0, (lower + upper) / 2).astype(d.dtype)
    return random_nn.rrelu_noise(generator_of(generator), d, lower, upper)


@op(samples=S.rrelu, names="keep", method=False)
def rrelu(self: Tensor, lower: float = 1 / 8, upper: float = 1 / 3, training: bool = False,
          generator: Generator | None = None) -> Tensor:
    d = _floating(self, "rrelu")
    lower, upper, training = float(lower), float(upper), bool(training)
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound "
                           f"(got lower = {lower}, upper = {upper})")
    noise = _rrelu_noise(d, lower, upper, training, generator)
    return record(d * noise, RreluWithNoiseBackward0, (self,),
                  (self, Tensor(noise), lower, upper, training))


# --------------------------------------------------------------------------
# The gradient kernels of tanh and sigmoid (R torch's torch_tanh_backward(),
# reached with call_torch_function()): the output's gradient times the
# derivative, written with the output


@formula
def TanhBackwardBackward0(n, g, grad_output, output):
    return (g * (1 - output * output) if n.needs(0) else None,
            -2 * g * grad_output * output if n.needs(1) else None)


def _grad_of(grad_output: Any, output: Tensor) -> Tensor:
    """The output's gradient, a number standing for a tensor of output's dtype."""
    if isinstance(grad_output, Tensor):
        return grad_output
    return Tensor(np.asarray(grad_output, dtype=output.data.dtype))


@op(method=False, samples=S.backward_kernel, torch_name="ops.aten.tanh_backward")
def tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    grad_output = _grad_of(grad_output, output)
    g, y = grad_output.data, output.data
    return record(np.asarray(g * (1 - y * y)), TanhBackwardBackward0, (grad_output, output),
                  (grad_output, output))


@formula
def SigmoidBackwardBackward0(n, g, grad_output, output):
    return (g * output * (1 - output) if n.needs(0) else None,
            g * grad_output * (1 - 2 * output) if n.needs(1) else None)


@op(method=False, samples=S.backward_kernel, torch_name="ops.aten.sigmoid_backward")
def sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    grad_output = _grad_of(grad_output, output)
    g, y = grad_output.data, output.data
    return record(np.asarray(g * y * (1 - y)), SigmoidBackwardBackward0, (grad_output, output),
                  (grad_output, output))


# --------------------------------------------------------------------------
# The in-place forms (`torch_elu_(x)`): the op on the tensor, written back, under
# the node libtorch gives them. Their samples don't require grad (a leaf that
# does can't be changed in place).

for _fn, _node, _samples in (
        (elu, "EluBackward1", S.elu_), (celu, "CeluBackward1", S.celu_),
        (selu, "EluBackward1", S.float_unary_), (threshold, "ThresholdBackward1", S.threshold_),
        (hardtanh, "HardtanhBackward0", S.hardtanh_), (rrelu, "RreluWithNoiseBackward1", S.rrelu_),
        (relu, "ReluBackward0", S.float_unary_)):
    _name = _fn.__name__ + "_"
    op(_name, method=_fn is relu, samples=_samples,
       torch_name=REGISTRY[_fn.__name__].torch_name and "_C._nn." + _name)(
        inplace_form(_fn, _name, _node))

__all__ = ["elu", "celu", "selu", "threshold", "hardtanh", "rrelu", "tanh_backward",
           "sigmoid_backward", "SELU_ALPHA", "SELU_SCALE"]
