"""What libtorch's random layers and initialisers draw, as NumPy arrays: the
dropout family's noise (native/Dropout.cpp), rrelu's training noise
(native/Activation.cpp) and nn.init.sparse_ (PyTorch's torch/nn/init.py).
Their arithmetic on the input is left to the caller's ops, in the order noted.
"""
from __future__ import annotations

import math

import numpy as np

from .distributions import bernoulli_, normal_, randperm
from .generator import Generator

_SELU_ALPHA = 1.7580993408473766   # alpha dropout's alpha' (Dropout.cpp)


def feature_noise_shape(shape: tuple) -> tuple:
    """make_feature_noise: (N, C, 1, 1, ...) for feature (channel) dropout."""
    if len(shape) < 2:
        raise ValueError(f"Feature dropout requires at least 2 dimensions in the input, "
                         f"got {len(shape)}")
    return tuple(shape[:2]) + (1,) * (len(shape) - 2)


def _keep(gen: Generator, like: np.ndarray, p: float, feature: bool) -> np.ndarray:
    """noise.bernoulli_(1 - p) on empty_like(input) (its dtype and memory
    layout) or on the contiguous feature-noise shape."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    noise = (np.empty(feature_noise_shape(like.shape), like.dtype) if feature
             else np.empty_like(like))
    return bernoulli_(gen, noise, 1 - p)


def dropout_noise(gen: Generator, like: np.ndarray, p: float,
                  feature: bool = False) -> np.ndarray:
    """dropout / feature_dropout (dropout2d, dropout3d) in training with
    0 < p < 1 (p = 0 returns the input and p = 1 multiplies by 0, neither
    drawing): the noise, kept elements 1 / (1 - p); the result is
    `input * noise` (the noise divided in its dtype: noise / float(1 - p))."""
    noise = _keep(gen, like, p, feature)
    return np.divide(noise, np.asarray(1 - p, noise.dtype), out=noise)


def alpha_dropout_noise(gen: Generator, like: np.ndarray, p: float,
                        feature: bool = False) -> tuple:
    """alpha_dropout / feature_alpha_dropout in training with 0 < p < 1:
    (a * noise, b) with the result `input * (a * noise) + b`, where
    a = 1 / sqrt((alpha^2 p + 1)(1 - p)) and b = (noise - 1) * alpha a + alpha a p,
    each step in the noise's dtype."""
    noise = _keep(gen, like, p, feature)
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    dtype = noise.dtype
    b = (noise - np.asarray(1, dtype)) * np.asarray(_SELU_ALPHA * a, dtype) + \
        np.asarray(_SELU_ALPHA * a * p, dtype)
    return noise * np.asarray(a, dtype), b


def rrelu_noise(gen: Generator, x: np.ndarray, lower: float = 1 / 8,
                upper: float = 1 / 3) -> np.ndarray:
    """_rrelu_with_noise_train: for each element of x (C order) that is <= 0,
    a double uniform on [float(lower), float(upper)) rounded to x's dtype;
    1 elsewhere. The output is x * noise."""
    x = np.ascontiguousarray(x)
    work = np.float64 if x.dtype == np.float64 else np.float32   # opmath_t
    lo, hi = (float(np.asarray(v, work)) for v in (lower, upper))
    negative = x <= 0
    count = int(negative.sum())
    u = (gen.random64(count) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    noise = np.ones(x.shape, x.dtype)
    noise[negative] = (u * (hi - lo) + lo).astype(work).astype(x.dtype)
    return noise


def sparse_(gen: Generator, out: np.ndarray, sparsity: float, std: float = 0.01) -> np.ndarray:
    """nn.init.sparse_ (PyTorch's; R torch has none): normal_(0, std) on the
    2-d array, then per column a randperm(rows) whose first
    ceil(sparsity * rows) entries are the rows set to 0."""
    if out.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = out.shape
    zeros = int(math.ceil(sparsity * rows))
    normal_(gen, out, 0.0, std)
    for col in range(cols):   # one permutation per column, drawn in turn
        out[randperm(gen, rows)[:zeros], col] = 0
    return out
