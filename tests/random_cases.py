"""The table behind tests/test_random_streams.py: every libtorch CPU random
transformation, each as PyTorch calls it and as rtorch_py.random does, with
the dtypes and arguments to try. A row added here is tested for every seed
and size there."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np
import torch

import rtorch_py.random as R

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
F32, F64, F16 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
FLOATS = (F32, F64)
INTS = tuple(np.dtype(t) for t in (np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_))

TORCH_DTYPE = {F32: torch.float32, F64: torch.float64, F16: torch.float16,
               C64: torch.complex64, C128: torch.complex128,
               BFLOAT16: torch.bfloat16, np.dtype(np.int64): torch.int64,
               np.dtype(np.int32): torch.int32, np.dtype(np.int16): torch.int16,
               np.dtype(np.int8): torch.int8, np.dtype(np.uint8): torch.uint8,
               np.dtype(np.bool_): torch.bool}


def to_numpy(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(BFLOAT16)
    return t.numpy()


def from_numpy(a: np.ndarray) -> torch.Tensor:
    if a.dtype == BFLOAT16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def last(shape) -> int:
    """A size's last extent (an int is its own)."""
    return shape if isinstance(shape, int) else shape[-1]


def probabilities(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Probabilities spread over [0, 1] (the same values for both sides)."""
    n = int(np.prod(shape))
    return (np.arange(n) % 11 / 10).reshape(shape).astype(dtype)


@dataclass(frozen=True)
class RandomCase:
    name: str
    dtypes: tuple
    theirs: Callable    # (shape, dtype) -> torch.Tensor, after torch.manual_seed
    ours: Callable      # (gen, shape, dtype) -> np.ndarray
    shapes: str = "any"   # "any" shape, or "1d" (a length), or "rows" (1-d or 2-d)


def _inplace(name: str, dtypes: tuple, torch_method: Callable, ours: Callable) -> RandomCase:
    return RandomCase(name, dtypes,
                      lambda shape, d: torch_method(torch.empty(shape, dtype=TORCH_DTYPE[d])),
                      lambda g, shape, d: ours(g, np.empty(shape, d)))


CASES = [
    _inplace("rand", FLOATS + (C64, C128), lambda t: t.uniform_(), R.uniform_),
    _inplace("uniform(-3,5.5)", FLOATS, lambda t: t.uniform_(-3, 5.5),
             lambda g, a: R.uniform_(g, a, -3, 5.5)),
    _inplace("uniform(-1.3,2.7)", FLOATS, lambda t: t.uniform_(-1.3, 2.7),
             lambda g, a: R.uniform_(g, a, -1.3, 2.7)),
    _inplace("randn", FLOATS + (C64, C128), lambda t: t.normal_(), R.normal_),
    _inplace("normal(2.5,0.3)", FLOATS + (C64,), lambda t: t.normal_(2.5, 0.3),
             lambda g, a: R.normal_(g, a, 2.5, 0.3)),
    _inplace("normal(-1,0)", FLOATS, lambda t: t.normal_(-1, 0),
             lambda g, a: R.normal_(g, a, -1, 0)),
    _inplace("random_", FLOATS + (F16, BFLOAT16) + INTS, lambda t: t.random_(), R.random_),
    _inplace("random_(3,100)", FLOATS + (F16, BFLOAT16) + INTS[:-1], lambda t: t.random_(3, 100),
             lambda g, a: R.random_(g, a, 3, 100)),
    _inplace("random_(0,2)", INTS, lambda t: t.random_(0, 2), lambda g, a: R.random_(g, a, 0, 2)),
    _inplace("random_(-5,)", FLOATS + INTS[:4], lambda t: t.random_(-5, None),
             lambda g, a: R.random_(g, a, -5)),
    _inplace("random_(-2^28,2^29)", FLOATS + INTS[:2], lambda t: t.random_(-2**28, 2**29),
             lambda g, a: R.random_(g, a, -2**28, 2**29)),
    _inplace("random_(0,2^40)", (np.dtype(np.int64), F64), lambda t: t.random_(0, 2**40),
             lambda g, a: R.random_(g, a, 0, 2**40)),
    _inplace("random_(-2^63,)", (np.dtype(np.int64), F32, F64), lambda t: t.random_(-2**63, None),
             lambda g, a: R.random_(g, a, -2**63)),
    _inplace("random_(65000,65504)", (F16,), lambda t: t.random_(65000, 65504),
             lambda g, a: R.random_(g, a, 65000, 65504)),
    _inplace("bernoulli_(0.3)", FLOATS + (F16, BFLOAT16) + INTS, lambda t: t.bernoulli_(0.3),
             lambda g, a: R.bernoulli_(g, a, 0.3)),
    RandomCase("bernoulli(p)", FLOATS + (F16, BFLOAT16),
               lambda shape, d: torch.bernoulli(from_numpy(probabilities(shape, d))),
               lambda g, shape, d: R.bernoulli(g, probabilities(shape, d))),
    RandomCase("bernoulli_(p float64)", FLOATS + INTS[:1],
               lambda shape, d: torch.empty(shape, dtype=TORCH_DTYPE[d]).bernoulli_(
                   from_numpy(probabilities(shape, F64))),
               lambda g, shape, d: R.bernoulli_(g, np.empty(shape, d), probabilities(shape, F64))),
    _inplace("exponential_(1.5)", FLOATS + (F16, BFLOAT16), lambda t: t.exponential_(1.5),
             lambda g, a: R.exponential_(g, a, 1.5)),
    _inplace("geometric_(0.3)", FLOATS + INTS[:2], lambda t: t.geometric_(0.3),
             lambda g, a: R.geometric_(g, a, 0.3)),
    _inplace("cauchy_(0.7,2.5)", FLOATS + (F16,), lambda t: t.cauchy_(0.7, 2.5),
             lambda g, a: R.cauchy_(g, a, 0.7, 2.5)),
    _inplace("log_normal_(0.3,0.8)", FLOATS + (BFLOAT16,), lambda t: t.log_normal_(0.3, 0.8),
             lambda g, a: R.log_normal_(g, a, 0.3, 0.8)),
    RandomCase("randperm", (np.dtype(np.int64), np.dtype(np.int32), F32, F64),
               lambda n, d: torch.randperm(n, dtype=TORCH_DTYPE[d]),
               lambda g, n, d: R.randperm(g, n, d), shapes="1d"),
    RandomCase("multinomial(replacement)", FLOATS + (BFLOAT16,),
               lambda shape, d: torch.multinomial(
                   from_numpy(1 + probabilities((2, 9), d)), last(shape), replacement=True),
               lambda g, shape, d: R.multinomial(g, 1 + probabilities((2, 9), d), last(shape),
                                                 replacement=True), shapes="rows"),
    RandomCase("multinomial", FLOATS,
               lambda shape, d: torch.multinomial(
                   from_numpy(1 + probabilities((3, 40), d)), min(last(shape), 40)),
               lambda g, shape, d: R.multinomial(g, 1 + probabilities((3, 40), d),
                                                 min(last(shape), 40)), shapes="rows"),
    RandomCase("poisson", FLOATS,
               lambda shape, d: torch.poisson(from_numpy(30 * probabilities(shape, d))),
               lambda g, shape, d: R.poisson(g, 30 * probabilities(shape, d))),
    RandomCase("normal(tensor,0.5)", FLOATS,
               lambda shape, d: torch.normal(from_numpy(probabilities(shape, d)), 0.5),
               lambda g, shape, d: R.normal(g, probabilities(shape, d), 0.5)),
    RandomCase("normal(1.5,tensor)", FLOATS,
               lambda shape, d: torch.normal(1.5, from_numpy(probabilities(shape, d))),
               lambda g, shape, d: R.normal(g, 1.5, probabilities(shape, d))),
    RandomCase("normal(tensor,tensor)", FLOATS,
               lambda shape, d: torch.normal(from_numpy(-probabilities(shape, d)),
                                             from_numpy(probabilities(shape, d))),
               lambda g, shape, d: R.normal(g, -probabilities(shape, d), probabilities(shape, d))),
    # fewer than 16 values: the scalar path, which libtorch 2.8 and PyTorch 2.13 share
    RandomCase("normal_(1.5,0.7) small", (F16, BFLOAT16),
               lambda shape, d: torch.empty(shape, dtype=TORCH_DTYPE[d]).reshape(-1)[:15]
               .normal_(1.5, 0.7),
               lambda g, shape, d: R.normal_(g, np.empty(shape, d).reshape(-1)[:15], 1.5, 0.7)),
]
