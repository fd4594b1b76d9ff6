"""Broadcasting: values and gradients summed back to each input's shape,
against PyTorch, for fixed cases and for random broadcastable shapes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtorch_py as rt
from helpers import check_vs_torch, gradcheck, rand

CASES = [
    ((3, 1), (1, 4)),
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((1,), (3, 4)),
    ((3, 4), (1,)),
    ((1, 1), (3, 4)),
    ((2, 1, 4), (3, 1)),
    ((5, 1, 1), (1, 3, 1)),
    ((1, 3, 1, 2), (4, 1, 5, 1)),
    ((), ()),
    ((), (1,)),
    ((0, 3), (3,)),
    ((2, 0), (2, 1)),
]

OPS = {
    "+": lambda T, a, b: a + b,
    "-": lambda T, a, b: a - b,
    "*": lambda T, a, b: a * b,
    "/": lambda T, a, b: a / (b * b + 1),
    "**": lambda T, a, b: (a * a + 0.5) ** b,
    "maximum": lambda T, a, b: T.maximum(a, b),
    "where": lambda T, a, b: T.where(a > b, a, b * 2),
    "chain": lambda T, a, b: ((a * b).exp() + a).sum(dim=-1, keepdim=True) * b,
    "clamp_t": lambda T, a, b: a.clamp(min=b),
    "cmp_mask": lambda T, a, b: a.masked_fill(b > 0, 0.0) if a.dim() >= b.dim() else a * 1,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", CASES)
@pytest.mark.parametrize("op", list(OPS))
def test_broadcast_vs_torch(op, sa, sb, dtype):
    a, b = rand(*sa, dtype=dtype), rand(*sb, dtype=dtype)
    check_vs_torch(OPS[op], a, b, second_order=op not in ("maximum", "clamp_t"),
                   scalar_nodes=op == "cmp_mask")  # (`a * 1`: helpers.SCALAR_NODES)


@pytest.mark.parametrize("sa,sb", CASES[:11])
@pytest.mark.parametrize("op", ["+", "*", "/", "**", "chain"])
def test_broadcast_gradcheck(op, sa, sb):
    gradcheck(OPS[op], rand(*sa), rand(*sb))


def test_same_tensor_on_both_sides():
    x = rand(3, 1)
    check_vs_torch(lambda T, x: x * x.t(), x, second_order=True)
    check_vs_torch(lambda T, x: x + x.reshape(1, 3) * x, x, second_order=True)


def test_number_tensor_scalar_and_one_element():
    # R numbers are 1-element 1-d tensors: they broadcast like (1,)
    for sa in [(1,), ()]:
        check_vs_torch(lambda T, s, x: s * x + s, rand(*sa), rand(2, 3), second_order=True)


def test_broadcast_errors():
    with pytest.raises(RuntimeError, match=r"\[3, 4\] and \[3\]"):
        rt.torch_ones(3, 4) * rt.torch_ones(3)
    with pytest.raises(RuntimeError, match="broadcast"):
        rt.torch_where(rt.torch_ones(2) > 0, rt.torch_ones(3), rt.torch_ones(4))


# Random broadcastable shape pairs.

@st.composite
def broadcast_pair(draw):
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    def sub(shape):
        n = draw(st.integers(0, len(shape)))
        tail = shape[len(shape) - n:]
        return tuple(s if draw(st.booleans()) else 1 for s in tail)
    a, b = sub(out), sub(out)
    if draw(st.booleans()):
        a, b = b, a
    return a, b


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=broadcast_pair(), op=st.sampled_from(["+", "-", "*", "/", "**", "chain"]),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_broadcast_random_shapes(pair, op, dtype):
    sa, sb = pair
    check_vs_torch(OPS[op], rand(*sa, dtype=dtype), rand(*sb, dtype=dtype), second_order=True)


# Large operands whose short last dim NumPy can't merge with the others (a strided
# view, a broadcast row) take operands.elementwise's column-at-a-time path: the same
# values as PyTorch's, bit for bit, and a C-contiguous result.
NARROW = {
    "strided [n, 1, 2] with [1, 2]": (lambda x: x[:, None, 0:2], lambda y: y[-1:, 0:2]),
    "[n, 2] with [2]": (lambda x: x[:, 0:2].contiguous(), lambda y: y[0, 0:2].contiguous()),
    "strided [n, 2] with strided [n, 2]": (lambda x: x[:, 2:4], lambda y: y[:, 0:2]),
    "[n, 3] with [n, 1]": (lambda x: x[:, 0:3].contiguous(), lambda y: y[:, 0:1]),
    "[2] with strided [n, 4]": (lambda x: x[0, 1:3].contiguous(), lambda y: y[:, None, 0:2]),
}
NARROW_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
              "/": lambda a, b: a / b, "maximum": lambda a, b: a.maximum(b),
              "minimum": lambda a, b: a.minimum(b), "<=": lambda a, b: a <= b,
              "==": lambda a, b: a == b}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", list(NARROW))
@pytest.mark.parametrize("op", list(NARROW_OPS))
def test_narrow_last_dim_fast_path_vs_torch(op, layout, dtype):
    torch = pytest.importorskip("torch")
    x = rand(6000, 4, dtype=dtype)
    y = np.round(rand(6000, 4, dtype=dtype), 1)  # (equal elements for ==, <=)
    y[y == 0] = 0.5
    x[::7, :2] = y[::7, :2]
    fa, fb = NARROW[layout]
    ours = NARROW_OPS[op](fa(rt.torch_tensor(x)), fb(rt.torch_tensor(y)))
    theirs = NARROW_OPS[op](fa(torch.from_numpy(x)), fb(torch.from_numpy(y)))
    assert ours.data.flags.c_contiguous
    assert ours.data.dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(ours.data, theirs.numpy())
