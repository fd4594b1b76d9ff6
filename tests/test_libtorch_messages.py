"""Errors that name dims, list positions, targets or max indices say what libtorch
says (PyTorch, in the venv, is the oracle), so that R's side can count them from 1
as R torch does (`rtorch_py.r.one_based.message_to_r`, R torch's `translate.R`)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import rtorch_py as rt
from rtorch_py.r import one_based

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _pooled() -> tuple:
    """A 2x2 max pooling of a 4x4 plane, its indices then set to 34 (none is that far)."""
    x = np.random.default_rng(0).standard_normal((1, 4, 4)).astype(np.float32)
    out, idx = F.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    bad = np.full(tuple(idx.shape), 34, dtype=np.int64)
    return out.numpy(), bad


def _ours_unpool() -> Any:
    out, bad = _pooled()
    return rt.nnf_max_unpool2d(rt.torch_tensor(out), rt.torch_tensor(bad), 2, output_size=[4, 4])


def _theirs_unpool() -> Any:
    out, bad = _pooled()
    return F.max_unpool2d(torch.from_numpy(out), torch.from_numpy(bad), 2, output_size=[4, 4])


_ones = rt.torch_ones


# (ours, PyTorch's): each fails
CASES: dict[str, tuple[Callable, Callable]] = {
    "cat sizes": (lambda: rt.torch_cat([_ones(8, 2, 7), _ones(8, 2, 7), _ones(8, 3, 7)], 2),
                  lambda: torch.cat([torch.ones(8, 2, 7), torch.ones(8, 2, 7),
                                     torch.ones(8, 3, 7)], 2)),
    "cat ndim": (lambda: rt.torch_cat([_ones(8, 2), _ones(8)]),
                 lambda: torch.cat([torch.ones(8, 2), torch.ones(8)])),
    "tensordot": (lambda: rt.torch_tensordot(_ones(3, 4, 5), _ones(4, 3, 2), [[1, 0], [0, 2]]),
                  lambda: torch.tensordot(torch.ones(3, 4, 5), torch.ones(4, 3, 2),
                                          ([1, 0], [0, 2]))),
    "cross": (lambda: rt.torch_cross(_ones(4, 3), _ones(4, 3), dim=0),
              lambda: torch.cross(torch.ones(4, 3), torch.ones(4, 3), dim=0)),
    "max_unpool": (_ours_unpool, _theirs_unpool),
    "nll_loss": (lambda: rt.nnf_nll_loss(_ones(2, 5), rt.torch_tensor(np.array([1, 5]))),
                 lambda: F.nll_loss(torch.ones(2, 5), torch.tensor([1, 5]))),
    "nll_loss negative": (lambda: rt.nnf_nll_loss(_ones(2, 5), rt.torch_tensor(np.array([-3, 1]))),
                          lambda: F.nll_loss(torch.ones(2, 5), torch.tensor([-3, 1]))),
    "cross_entropy": (lambda: rt.nnf_cross_entropy(_ones(2, 5), rt.torch_tensor(np.array([7, 1]))),
                      lambda: F.cross_entropy(torch.ones(2, 5), torch.tensor([7, 1]))),
    "embedding": (lambda: rt.nnf_embedding(rt.torch_tensor(np.array([0, 10])), _ones(10, 3)),
                  lambda: F.embedding(torch.tensor([0, 10]), torch.ones(10, 3))),
    "dim range": (lambda: _ones(2, 2).sum(dim=5), lambda: torch.ones(2, 2).sum(dim=5)),
    "multilabel_margin_loss": (
        lambda: rt.nnf_multilabel_margin_loss(_ones(2, 4), rt.torch_tensor(np.array(
            [[0, 4, -1, 0], [1, 2, -1, 0]]))),
        lambda: F.multilabel_margin_loss(torch.ones(2, 4), torch.tensor([[0, 4, -1, 0],
                                                                          [1, 2, -1, 0]]))),
    "sparsemax dim": (lambda: rt.nnf_contrib_sparsemax(_ones(2, 2), dim=2),
                      lambda: torch.ones(2, 2).softmax(dim=2)),
}


def _failure(f: Callable) -> BaseException:
    with pytest.raises(Exception) as info:
        f()
    return info.value


@pytest.mark.parametrize("case", CASES)
def test_the_message_is_libtorchs(case: str) -> None:
    ours, theirs = (_failure(f) for f in CASES[case])
    assert str(ours) == str(theirs).split("\n")[0]
    assert isinstance(ours, type(theirs)) or type(theirs) is RuntimeError


# libtorch's messages as R torch shows them (its tests' texts, tests/testthat/test-translate.R)
R_TEXTS = [
    ("Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for "
     "tensor number 1 in the list.",
     "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for "
     "tensor number 2 in the list."),
    ("contracted dimensions need to match, but first has size 3 in dim 0 and second has size 2 "
     "in dim 2",
     "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 2 "
     "in dim 3"),
    ("linalg.cross: inputs dimension 0 must have length 3. Got 4 and 4",
     "linalg.cross: inputs dimension 1 must have length 3. Got 4 and 4"),
    ("Found an invalid max index: 34 (output volumes are of size 4x4)",
     "Found an invalid max index: 35 (output volumes are of size 4x4)"),
    ("Target 5 is out of bounds.", "Target 6 is out of bounds."),
    ("Target -3 is out of bounds.", "Target -2 is out of bounds."),  # (every target shifts)
    ("index -1 is out of bounds for dimension 0 with size 0",
     "index -1 is out of bounds for dimension 1 with size 0"),
    ("Dimension out of range (expected to be in range of [-2, 1], but got -3)",
     "Dimension out of range (expected to be in range of [-2, 2], but got -3)"),
    ("select(): index 3 out of range for tensor of size [3] at dimension 0",
     "select(): index 4 out of range for tensor of size [3] at dimension 1"),
    ("dimension 2 does not have size 3", "dimension 3 does not have size 3"),
    ("index out of range in self", "index out of range in self"),
    ("Target 3 of 4 dims", "Target 3 of 4 dims"),  # (no pattern: left as it is)
]


@pytest.mark.parametrize("libtorch, r_torch", R_TEXTS)
def test_r_counts_libtorchs_message_from_1(libtorch: str, r_torch: str) -> None:
    assert one_based.message_to_r(libtorch) == r_torch
