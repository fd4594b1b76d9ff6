"""Indexing and index assignment (0-based Python API) against PyTorch, with
autograd through both."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import check_vs_torch, gradcheck, rand

FLOATS = [np.float32, np.float64]


def _idx(T, values, dtype="int64"):
    """An index tensor in either library."""
    if T is torch:
        return torch.tensor(values, dtype=getattr(torch, dtype))
    return rt.torch_tensor(np.array(values, dtype=dtype))


GET = {
    "int": lambda T, x: x[1],
    "neg_int": lambda T, x: x[-1],
    "int_int": lambda T, x: x[1, 2],
    "int_int_int": lambda T, x: x[1, 2, 3],
    "slice": lambda T, x: x[1:3],
    "slice_step": lambda T, x: x[::2],
    "slice_neg": lambda T, x: x[-2:],
    "slice_2d": lambda T, x: x[:, 1:3],
    "slice_int": lambda T, x: x[0, 1:],
    "int_slice_step": lambda T, x: x[:, 0, ::2],
    "ellipsis": lambda T, x: x[..., 1],
    "ellipsis_slice": lambda T, x: x[..., 1:3],
    "ellipsis_front": lambda T, x: x[1, ...],
    "only_ellipsis": lambda T, x: x[...],
    "none": lambda T, x: x[None],
    "none_mid": lambda T, x: x[:, None],
    "none_int": lambda T, x: x[0, None],
    "full_slice": lambda T, x: x[:],
    "long_tensor": lambda T, x: x[_idx(T, [2, 0])],
    "long_tensor_dup": lambda T, x: x[_idx(T, [0, 2, 0, 0])],
    "long_tensor_2d": lambda T, x: x[_idx(T, [[0, 1], [2, 2]])],
    "long_tensor_neg": lambda T, x: x[_idx(T, [-1, 0])],
    "int32_tensor": lambda T, x: x[_idx(T, [1, 2], "int32")],
    "long_tensor_dim1": lambda T, x: x[:, _idx(T, [3, 3, 1])],
    "two_long_tensors": lambda T, x: x[_idx(T, [0, 2]), _idx(T, [1, 1])],
    "long_and_slice": lambda T, x: x[_idx(T, [0, 2]), 1:],
    "long_ellipsis": lambda T, x: x[..., _idx(T, [0, 0, 2])],
    "bool_mask": lambda T, x: x[x > 0],
    "bool_mask_rows": lambda T, x: x[_idx(T, [True, False, True], "bool")],
    "bool_mask_dim1": lambda T, x: x[:, _idx(T, [True, False, True, True], "bool")],
    "scalar_tensor_int": lambda T, x: x[_idx(T, 1)],
    "list_index": lambda T, x: x[[0, 2]],
    "chained": lambda T, x: x[1:][0][::2],
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", list(GET))
def test_getitem_vs_torch(case, dtype):
    shape = (3, 4, 5) if case in ("int_int_int", "int_slice_step") else (3, 4)
    check_vs_torch(GET[case], rand(*shape, dtype=dtype), second_order=True)
    # through another op, so the gradient isn't all the upstream one
    check_vs_torch(lambda T, x: GET[case](T, x * x).exp(), rand(*shape, dtype=dtype),
                   check_names=False)


@pytest.mark.parametrize("case", list(GET))
def test_getitem_gradcheck(case):
    shape = (3, 4, 5) if case in ("int_int_int", "int_slice_step") else (3, 4)
    gradcheck(GET[case], rand(*shape, away_from_zero=0.1))


def test_getitem_on_int_and_bool():
    i = np.arange(12).reshape(3, 4)
    check_vs_torch(lambda T, x: x[1:, _idx(T, [0, 3])], i)
    check_vs_torch(lambda T, x: x[x % 2 == 0], i)
    check_vs_torch(lambda T, x: (x > 3)[0], i)


def test_basic_indexing_is_a_view():
    x = rt.torch_zeros(3, 4)
    v = x[1]
    assert np.shares_memory(v.data, x.data)
    x[1, 2] = 5.0
    assert v[2].item() == 5.0
    assert v._version[0] == x._version[0]
    # advanced indexing copies
    c = x[rt.torch_tensor([0, 1])]
    x.fill_(7.0)
    assert rt.as_array(c)[1, 2] == 5.0


def test_getitem_errors():
    x = rt.torch_ones(3, 4)
    with pytest.raises(IndexError, match="out of range|out of bounds"):
        x[3]
    with pytest.raises(IndexError, match="out of range|out of bounds"):
        x[rt.torch_tensor([0, 5])]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="long, int or bool"):
        x[rt.torch_tensor([0.0, 1.0])]
    with pytest.raises(IndexError, match="str"):
        x["a"]
    with pytest.raises(IndexError):
        x[rt.torch_tensor([True, False])]  # mask of the wrong length


# --------------------------------------------------------------------------
# Index assignment (x[key] = value), with autograd to x and to value

def _set(key_fn, value_kind):
    def fn(T, x, v):
        y = x * 1.0  # a non-leaf, so it may be modified in place
        if value_kind == "tensor":
            y[key_fn(T)] = v
        elif value_kind == "scalar":
            y[key_fn(T)] = 2.5
        else:  # value is a 0-d slice of v (broadcast)
            y[key_fn(T)] = v.sum()
        return y * x  # both old and new values matter downstream
    return fn


SET = {
    "int": (lambda T: 1, (4,)),
    "int_int": (lambda T: (1, 2), ()),
    "slice": (lambda T: slice(0, 2), (2, 4)),
    "slice_bcast": (lambda T: slice(0, 2), (4,)),
    "slice_col": (lambda T: (slice(None), 1), (3,)),
    "ellipsis": (lambda T: (Ellipsis, 0), (3,)),
    "step": (lambda T: (slice(None), slice(None, None, 2)), (3, 2)),
    "long_tensor": (lambda T: _idx(T, [2, 0]), (2, 4)),
    "long_tensor_bcast": (lambda T: _idx(T, [2, 0]), (1, 4)),
    "long_pair": (lambda T: (_idx(T, [0, 2]), _idx(T, [1, 3])), (2,)),
    "bool_rows": (lambda T: _idx(T, [True, False, True], "bool"), (2, 4)),
    "bool_cols": (lambda T: (slice(None), _idx(T, [True, False, False, True], "bool")),
                  (3, 2)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", ["tensor", "scalar", "sum"])
@pytest.mark.parametrize("case", list(SET))
def test_setitem_vs_torch(case, kind, dtype):
    key_fn, vshape = SET[case]
    x, v = rand(3, 4, dtype=dtype), rand(*vshape, dtype=dtype)
    check_vs_torch(_set(key_fn, kind), x, v, second_order=True)
    check_vs_torch(_set(key_fn, kind), x, v, requires_grad=[False, True])
    check_vs_torch(_set(key_fn, kind), x, v, requires_grad=[True, False])


@pytest.mark.parametrize("case", list(SET))
def test_setitem_gradcheck(case):
    key_fn, vshape = SET[case]
    gradcheck(_set(key_fn, "tensor"), rand(3, 4), rand(*vshape))


@pytest.mark.parametrize("dtype", FLOATS)
def test_setitem_with_bool_mask_of_values(dtype):
    x = rand(3, 4, dtype=dtype)

    def fn(T, x):
        y = x.clone()
        y[y > 0] = 0.0
        return y
    check_vs_torch(fn, x, second_order=True)

    def fn2(T, x, v):
        y = x.clone()
        m = x > 0
        y[m] = v[m] * 2
        return y
    check_vs_torch(fn2, x, rand(3, 4, dtype=dtype), second_order=True)


def test_setitem_on_leaf_requiring_grad_fails():
    x = rt.torch_ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 2.0
    with rt.with_no_grad():
        x[0] = 2.0
    assert rt.as_array(x).tolist() == [2.0, 1.0, 1.0]
    assert x.grad_fn is None


def test_setitem_bumps_version_and_catches_saved_use():
    x = rt.torch_ones(3, requires_grad=True)
    y = x * 1
    z = y.exp()  # saves its output z... and y is its input
    w = y * y    # saves y
    y[0] = 5.0
    assert y._version[0] == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
    z.sum().backward()  # exp saved its output, not y: still fine
    np.testing.assert_allclose(rt.as_array(x.grad), np.exp([1.0, 1.0, 1.0]))


def test_setitem_value_broadcast_error():
    x = rt.torch_zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"\[3\]"):
        x[0] = rt.torch_ones(3)


def test_setitem_int_tensor_and_dtype_cast():
    check_vs_torch(lambda T, x: _assign(x, 1, 7), np.arange(6).reshape(2, 3))
    check_vs_torch(lambda T, x: _assign(x, (0, 0), 2.9), np.arange(6).reshape(2, 3))
    check_vs_torch(lambda T, x, v: _assign(x.clone(), 0, v), rand(2, 3),
                   rand(3, dtype=np.float32))


def _assign(x, key, value):
    x[key] = value
    return x
