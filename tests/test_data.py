"""Datasets, samplers and loaders (Python side), checked against
torch.utils.data where the two define the same thing."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import rtorch_py as rt
from rtorch_py import data as rd


def test_tensor_dataset_and_sequential_loader_match_torch():
    x = np.arange(23 * 3, dtype=np.float32).reshape(23, 3)
    y = np.arange(23, dtype=np.int64)
    ours = rd.dataloader(rd.tensor_dataset(rt.torch_tensor(x), rt.torch_tensor(y)), batch_size=5)
    theirs = tud.DataLoader(tud.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=5)
    assert len(ours) == len(theirs) == 5
    for (a, b), (c, d) in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.data, c.numpy())
        np.testing.assert_array_equal(b.data, d.numpy())
    dl = rd.dataloader(rd.tensor_dataset(rt.torch_tensor(x), rt.torch_tensor(y)), batch_size=5,
                       drop_last=True)
    assert len(dl) == 4 and [b[0].shape[0] for b in dl] == [5, 5, 5, 5]


def test_shuffle_is_a_permutation_and_seeded():
    ds = rd.tensor_dataset(rt.torch_tensor(np.arange(50, dtype=np.float32)))
    rt.torch_manual_seed(3)
    first = np.concatenate([b[0].data for b in rd.dataloader(ds, batch_size=8, shuffle=True)])
    rt.torch_manual_seed(3)
    again = np.concatenate([b[0].data for b in rd.dataloader(ds, batch_size=8, shuffle=True)])
    assert sorted(first.tolist()) == list(range(50))
    assert first.tolist() != list(range(50))
    np.testing.assert_array_equal(first, again)


def test_custom_dataset_and_collate():
    Squares = rd.dataset("squares",
                         initialize=lambda self, n: setattr(self, "n", n),
                         getitem=lambda self, i: {"x": float(i), "y": i * i, "flag": i % 2 == 0},
                         length=lambda self: self.n)
    ds = Squares(7)
    assert len(ds) == 7 and type(ds).__name__ == "squares"
    batches = list(rd.dataloader(ds, batch_size=3))
    assert [b["x"].shape for b in batches] == [(3,), (3,), (1,)]
    assert batches[0]["x"].dtype == rt.torch_float32()
    assert batches[0]["y"].data.tolist() == [0, 1, 4]
    assert batches[0]["flag"].dtype == rt.torch_bool()
    theirs = next(iter(tud.DataLoader([[np.ones(2, np.float32), 1]] * 4, batch_size=4)))
    ours = rd.default_collate([[np.ones(2, np.float32), 1]] * 4)
    np.testing.assert_array_equal(ours[0].data, theirs[0].numpy())
    np.testing.assert_array_equal(ours[1].data, theirs[1].numpy())


def test_getbatch_is_used_when_defined():
    calls = []

    def getbatch(self, idx):
        calls.append(list(idx))
        return rt.torch_tensor(np.asarray(idx, dtype=np.float32))

    ds = rd.dataset(getbatch=getbatch, length=lambda self: 10)()
    out = [b.data.tolist() for b in rd.dataloader(ds, batch_size=4)]
    assert out == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(calls) == 3


def test_iterable_dataset():
    Count = rd.iterable_dataset(initialize=lambda self, n: setattr(self, "n", n),
                                iter=lambda self: iter(range(self.n)))
    out = list(rd.dataloader(Count(70), batch_size=32))
    assert [b.shape for b in out] == [(32,), (32,), (6,)]
    assert len(list(rd.dataloader(Count(70), batch_size=32, drop_last=True))) == 2


def test_samplers_lengths_and_iteration():
    ds = rd.tensor_dataset(rt.torch_randn(100, 2))
    assert len(rd.SequentialSampler(ds)) == 100
    assert len(rd.RandomSampler(ds, num_samples=10)) == 10
    r = list(rd.RandomSampler(ds, replacement=True, num_samples=500))
    assert len(r) == 500 and min(r) >= 0 and max(r) <= 99
    for bs, drop in [(32, True), (32, False), (100, False), (101, True)]:
        ours = rd.BatchSampler(rd.SequentialSampler(ds), bs, drop)
        theirs = tud.BatchSampler(tud.SequentialSampler(range(100)), bs, drop)
        assert len(ours) == len(theirs)
        assert list(ours) == list(theirs)
    sub = rd.dataset_subset(ds, [3, 5, 7])
    assert len(sub) == 3
    np.testing.assert_array_equal(sub[1][0].data, ds[5][0].data)


def test_make_iter_next_and_bad_input():
    dl = rd.dataloader(rd.tensor_dataset(rt.torch_randn(5, 2)), batch_size=2)
    it = rd.dataloader_make_iter(dl)
    shapes = []
    while (b := rd.dataloader_next(it)) is not None:
        shapes.append(b[0].shape)
    assert shapes == [(2, 2), (2, 2), (1, 2)]
    with pytest.warns(UserWarning, match="num_workers = 2 is ignored"):
        dl2 = rd.dataloader(rd.tensor_dataset(rt.torch_randn(5, 2)), batch_size=2, num_workers=2)
    assert [b[0].shape for b in dl2] == [(2, 2), (2, 2), (1, 2)]
    with pytest.raises(TypeError, match="unexpected argument.*batchsize"):
        rd.dataloader(rd.tensor_dataset(rt.torch_randn(5, 2)), batchsize=2)
    with pytest.raises(ValueError, match="same size"):
        rd.tensor_dataset(rt.torch_randn(5, 2), rt.torch_randn(4))
    with pytest.raises(TypeError, match="collate"):
        rd.default_collate([object(), object()])


def test_take_rows_fast_path_is_the_index_op():
    """A tensor dataset's batch (take_rows: np.take for plain tensors, labelled
    fast path) equals `t[idx]` through the op: values, dtype, layout, no graph;
    tensors that require grad or carry dim names take the op; a bad index gets
    the op's error."""
    x = rt.torch_randn(6, 3)
    xt = rt.torch_randn(3, 6).t()  # a transposed (column-major) one
    y = rt.torch_tensor(np.arange(6))
    w = rt.torch_randn(6, 2, requires_grad=True)
    idx = np.array([5, 0, 3, 3, -1])
    key = rt.torch_tensor(idx)
    got = rd.take_rows([x, xt, y, w], idx)
    for t, g in zip([x, xt, y, w], got):
        want = t[key]
        assert g.dtype == want.dtype and g.shape == want.shape
        np.testing.assert_array_equal(g.data, want.data)
        assert g.data.strides == want.data.strides
    assert got[0].grad_fn is None and not got[0].requires_grad
    assert got[3].grad_fn is not None and got[3].grad_fn.name == "IndexBackward0"
    with pytest.raises(IndexError, match="index out of range"):
        rd.take_rows([x], np.array([6]))
