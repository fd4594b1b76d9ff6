"""Every op against PyTorch (values, dtype, shape, grad_fn names, gradients,
second derivatives) and against finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import RT, assert_same, check_vs_torch, gradcheck, rand

FLOATS = [np.float32, np.float64]

# --------------------------------------------------------------------------
# Binary arithmetic (every op against PyTorch on broadcast shapes, 0-d, ints:
# the generated tests, tests/test_op_registry.py, from rtorch_py/ops/samples/)

BINARY = {
    "add": lambda T, a, b: a + b,
    "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / b,
    "pow": lambda T, a, b: a ** b,
}


def _operands(op, sa, sb, dtype):
    if op.startswith("pow"):
        return rand(*sa, dtype=dtype, low=0.5, high=2.0), rand(*sb, dtype=dtype)
    if op.startswith(("div", "remainder")):
        return rand(*sa, dtype=dtype), rand(*sb, dtype=dtype, away_from_zero=0.5)
    return rand(*sa, dtype=dtype), rand(*sb, dtype=dtype)


@pytest.mark.parametrize("op", ["add", "mul", "div", "pow"])
def test_binary_one_side_requires_grad(op):
    a, b = _operands(op, (3, 1), (1, 4), np.float64)
    check_vs_torch(BINARY[op], a, b, requires_grad=[True, False], second_order=True)
    check_vs_torch(BINARY[op], a, b, requires_grad=[False, True], second_order=True)


# Tensor with a Python number on either side.
NUMBER_OPS = {
    "x+2": lambda T, x: x + 2, "2+x": lambda T, x: 2 + x,
    "x+1.5": lambda T, x: x + 1.5, "1.5+x": lambda T, x: 1.5 + x,
    "x-2": lambda T, x: x - 2, "2-x": lambda T, x: 2 - x,
    "x-0.5": lambda T, x: x - 0.5, "0.5-x": lambda T, x: 0.5 - x,
    "x*3": lambda T, x: x * 3, "3*x": lambda T, x: 3 * x,
    "x*-0.5": lambda T, x: x * -0.5, "-0.5*x": lambda T, x: -0.5 * x,
    "x/4": lambda T, x: x / 4, "x/0.25": lambda T, x: x / 0.25,
    "x**2": lambda T, x: x ** 2, "x**3": lambda T, x: x ** 3,
    "x**0.5": lambda T, x: x.abs() ** 0.5, "x**-1": lambda T, x: x ** -1,
    "x**0": lambda T, x: x ** 0, "x**1": lambda T, x: x ** 1,
    "x**-2.5": lambda T, x: x.abs() ** -2.5,
    "2**x": lambda T, x: 2 ** x, "0.5**x": lambda T, x: 0.5 ** x,
    "x.pow(2)": lambda T, x: x.pow(2), "T.pow(x,3)": lambda T, x: T.pow(x, 3),
    "x+True": lambda T, x: x + True,
    "x*np.float64": lambda T, x: x * np.float64(2.0),
}

# PyTorch implements `2 / x` as reciprocal(x) * 2; R torch (and we) as a division.
NAME_DIFFERS = {"2/x": "DivBackward0"}

# A Python number with add, sub, mul, div: R torch's node (the Scalar overload's,
# as libtorch records `x * 3` for R torch), where PyTorch's Python wraps the number
# (helpers.SCALAR_NODES); a NumPy number is no plain number.
SCALAR = {"x+2", "2+x", "x+1.5", "1.5+x", "x-2", "x-0.5", "x*3", "3*x", "x*-0.5", "-0.5*x",
          "x/4", "x/0.25", "x+True"}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(NUMBER_OPS))
def test_number_operand_vs_torch(op, dtype):
    x = rand(2, 3, dtype=dtype, away_from_zero=0.3)
    check_vs_torch(NUMBER_OPS[op], x, second_order=True, scalar_nodes=op in SCALAR)


@pytest.mark.parametrize("op", list(NUMBER_OPS))
def test_number_operand_gradcheck(op):
    gradcheck(NUMBER_OPS[op], rand(2, 3, away_from_zero=0.3))


@pytest.mark.parametrize("dtype", FLOATS)
def test_floor_divide_and_remainder_values(dtype):
    a = np.array([[-7, -3, 0, 3, 7]], dtype=dtype)
    b = np.array([[2], [-2], [3]], dtype=dtype)
    check_vs_torch(lambda T, a, b: a // b, a, b, requires_grad=False)
    check_vs_torch(lambda T, a, b: a % b, a, b, requires_grad=False)
    check_vs_torch(lambda T, a, b: a % 3, a, b, requires_grad=False)
    check_vs_torch(lambda T, a, b: 5 % b, a, b, requires_grad=False)
    check_vs_torch(lambda T, a, b: T.div(a, b, rounding_mode="trunc"), a, b, requires_grad=False)
    check_vs_torch(lambda T, a, b: T.div(a, b, rounding_mode="floor"), a, b, requires_grad=False)
    ia, ib = a.astype(np.int64), b.astype(np.int64)
    check_vs_torch(lambda T, a, b: a // b, ia, ib)
    check_vs_torch(lambda T, a, b: a % b, ia, ib)
    check_vs_torch(lambda T, a, b: T.div(a, b, rounding_mode="trunc"), ia, ib)


@pytest.mark.parametrize("dtype", FLOATS)
def test_number_divided_by_tensor(dtype):
    x = rand(2, 3, dtype=dtype, away_from_zero=0.3)
    r, _ = check_vs_torch(lambda T, x: 2 / x, x, check_names=False, second_order=True)
    assert r.grad_fn.name == "DivBackward0"
    gradcheck(lambda T, x: 2 / x, x)


# --------------------------------------------------------------------------
# Unary pointwise ops (values, gradients, second order: the generated tests)

UNARY = {
    "neg": (lambda T, x: -x, None),
    "exp": (lambda T, x: x.exp(), None),
    "log": (lambda T, x: x.log(), "pos"),
    "sqrt": (lambda T, x: x.sqrt(), "pos"),
    "abs": (lambda T, x: x.abs(), "nz"),
    "sin": (lambda T, x: x.sin(), None),
    "cos": (lambda T, x: x.cos(), None),
    "tanh": (lambda T, x: x.tanh(), None),
    "sigmoid": (lambda T, x: x.sigmoid(), None),
    "relu": (lambda T, x: x.relu(), "nz"),
}


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs",
                                "neg", "relu"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_unary_on_integer_tensors(op, dtype):
    """Integer inputs: floating ops give float32, abs/neg/relu keep the type."""
    x = np.array([[0, 1, 2], [3, 1, 0]]).astype(dtype)
    try:
        UNARY[op][0](torch, torch.from_numpy(x))
    except (RuntimeError, NotImplementedError):
        with pytest.raises((RuntimeError, TypeError)):
            UNARY[op][0](RT, rt.torch_tensor(x))
        return
    check_vs_torch(UNARY[op][0], x, requires_grad=False)


def test_sigmoid_extremes():
    for dtype in FLOATS:
        x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=dtype)
        check_vs_torch(lambda T, x: x.sigmoid(), x)


def test_relu_and_abs_at_zero():
    x = np.array([-1.0, 0.0, 2.0])
    check_vs_torch(lambda T, x: x.relu(), x)
    check_vs_torch(lambda T, x: x.abs(), x)


def test_clamp_at_bounds_gradient():
    # PyTorch passes the gradient where x is exactly at a bound.
    x = np.array([-1.0, -0.5, 0.0, 0.7, 2.0])
    check_vs_torch(lambda T, x: x.clamp(min=-0.5, max=0.7), x)
    check_vs_torch(lambda T, x: x.clamp(min=-0.5), x)
    check_vs_torch(lambda T, x: x.clamp(max=0.7), x)


def test_clamp_needs_a_bound():
    x = rt.torch_randn(3)
    with pytest.raises((ValueError, RuntimeError), match="min or max"):
        x.clamp()


def test_clamp_with_tensor_bounds():
    x, lo, hi = rand(3, 4), rand(3, 4, low=-1, high=-0.1), rand(4, low=0.1, high=1)
    check_vs_torch(lambda T, x, lo, hi: x.clamp(min=lo, max=hi), x, lo, hi,
                   requires_grad=[True, False, False], check_names=False)


_CLAMP_X = [-0.0, 0.0, float("nan"), float("inf"), -float("inf"), 1.5, -1.5, 0.5, -3.0]
_CLAMP_BOUNDS = [(-0.0, 0.0), (0.0, -0.0), (0.0, None), (None, -0.0), (-0.0, 2.0),
                 (float("nan"), 1.0), (1.0, float("nan")), (2.0, 1.0),
                 (-float("inf"), float("inf")), (-0.5, 0.5)]


def _same_bits(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """The same dtype and values, zeros' signs included (NaN as NaN)."""
    nan = np.isnan(ours) if ours.dtype.kind == "f" else np.zeros(ours.shape, bool)
    return ours.dtype == theirs.dtype and np.array_equal(nan, np.isnan(theirs)) and \
        np.array_equal(np.signbit(ours[~nan]), np.signbit(theirs[~nan])) and \
        np.array_equal(ours[~nan], theirs[~nan])


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize("n", [9, 100])
def test_clamp_by_numbers_edge_values_as_pytorch(dtype, n):
    """NaN from x or a bound, min > max (max wins), infinite bounds, and a zero x
    against a zero bound (x keeps its sign), by clamp, clamp_ and torch_clamp."""
    if np.dtype(dtype).kind == "f":
        x, bounds = np.resize(np.array(_CLAMP_X, dtype), n), _CLAMP_BOUNDS
    else:
        x, bounds = np.arange(n, dtype=dtype) - n // 2, [(-3, 4), (5, 2), (None, 0), (1, None)]
    for lo, hi in bounds:
        theirs = torch.clamp(torch.from_numpy(x.copy()), lo, hi).numpy()
        assert _same_bits(rt.torch_clamp(rt.torch_tensor(x.copy()), lo, hi).numpy(), theirs)
        assert _same_bits(rt.torch_tensor(x.copy()).clamp(lo, hi).numpy(), theirs)
        inplace = rt.torch_tensor(x.copy())
        inplace.clamp_(lo, hi)
        assert _same_bits(inplace.numpy(), theirs), (lo, hi)


@pytest.mark.parametrize("dtype", FLOATS)
def test_clamp_by_tensors_edge_values_as_pytorch(dtype):
    """Tensor bounds, 64 values (a whole number of libtorch's vector steps):
    NaN from any operand, min > max, and zeros' signs as its vector loop gives
    them (a tie takes the bound's). Its scalar loop for the values past the last
    whole vector step keeps x's sign on a tie instead; that is not reproduced."""
    x = np.resize(np.array(_CLAMP_X, dtype), 64)
    for lo, hi in _CLAMP_BOUNDS:
        tl = None if lo is None else torch.full((64,), lo, dtype=torch.from_numpy(x).dtype)
        th = None if hi is None else torch.full((64,), hi, dtype=torch.from_numpy(x).dtype)
        theirs = torch.clamp(torch.from_numpy(x.copy()), tl, th).numpy()
        ours = rt.torch_clamp(rt.torch_tensor(x.copy()),
                              None if tl is None else rt.torch_tensor(tl.numpy()),
                              None if th is None else rt.torch_tensor(th.numpy()))
        assert _same_bits(ours.numpy(), theirs), (lo, hi)
        inplace = rt.torch_tensor(x.copy())
        inplace.clamp_(None if tl is None else rt.torch_tensor(tl.numpy()),
                       None if th is None else rt.torch_tensor(th.numpy()))
        assert _same_bits(inplace.numpy(), theirs), (lo, hi)


def test_log_and_sqrt_of_non_positive():
    x = np.array([-1.0, 0.0, 1.0])
    check_vs_torch(lambda T, x: x.log(), x, requires_grad=False)
    check_vs_torch(lambda T, x: x.sqrt(), x, requires_grad=False)


# --------------------------------------------------------------------------
# dtype promotion


DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]


def _vals(dtype, shape=(2, 3), nonzero=False):
    a = np.array([[1, 2, 3], [4, 5, 6]]) if nonzero else np.array([[0, 1, 2], [3, 1, 0]])
    return np.broadcast_to(a, (2, 3)).reshape(shape).astype(dtype)


PROMOTE_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
               "/": lambda a, b: a / b, "==": lambda a, b: a == b, "<": lambda a, b: a < b,
               "max": lambda a, b: a.maximum(b) if hasattr(a, "maximum") else a}


@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("db", DTYPES)
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "==", "<"])
def test_promotion_tensor_tensor(op, da, db):
    a, b = _vals(da), _vals(db, nonzero=True)
    fn = PROMOTE_OPS[op]
    if op == "-" and np.bool_ in (da, db) and {da, db} & {np.float32, np.float64}:
        # PyTorch refuses; here bool counts as 0/1 (see test_bool_subtraction)
        got = fn(rt.torch_tensor(a), rt.torch_tensor(b))
        np.testing.assert_array_equal(rt.as_array(got), a.astype(np.float64) - b)
        return
    try:
        expect = fn(torch.from_numpy(a), torch.from_numpy(b))
    except (RuntimeError, NotImplementedError):
        with pytest.raises((RuntimeError, TypeError)):
            fn(rt.torch_tensor(a), rt.torch_tensor(b))
        return
    assert_same(fn(rt.torch_tensor(a), rt.torch_tensor(b)), expect, f"{da} {op} {db}")


@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("num", [2, 2.5, True, -3])
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "**", "r+", "r-", "r*", "r/", "==", ">"])
def test_promotion_tensor_number(op, da, num):
    a = _vals(da, nonzero=True)
    fns = {"+": lambda x: x + num, "-": lambda x: x - num, "*": lambda x: x * num,
           "/": lambda x: x / num, "**": lambda x: x ** num, "r+": lambda x: num + x,
           "r-": lambda x: num - x, "r*": lambda x: num * x, "r/": lambda x: num / x,
           "==": lambda x: x == num, ">": lambda x: x > num}
    fn = fns[op]
    if op in ("-", "r-") and (da == np.bool_) != (type(num) is bool) and (
            da in (np.float32, np.float64) or isinstance(num, float)):
        # PyTorch refuses; here bool counts as 0/1 (see test_bool_subtraction)
        got = rt.as_array(fn(rt.torch_tensor(a)))
        want = fn(a.astype(np.float64) if da == np.bool_ else a)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        return
    try:
        expect = fn(torch.from_numpy(a))
    except (RuntimeError, NotImplementedError):
        with pytest.raises((RuntimeError, TypeError)):
            fn(rt.torch_tensor(a))
        return
    assert_same(fn(rt.torch_tensor(a)), expect, f"{da} {op} {num!r}")


@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("db", DTYPES)
def test_promotion_with_zero_dim_tensor(da, db):
    """A 0-d tensor only promotes across categories (int -> float), like a number."""
    a, b = _vals(da, nonzero=True), np.array(2).astype(db)
    for fn in (lambda x, y: x + y, lambda x, y: y * x):
        try:
            expect = fn(torch.from_numpy(a), torch.from_numpy(b))
        except RuntimeError:
            continue
        assert_same(fn(rt.torch_tensor(a), rt.torch_tensor(b)), expect, f"{da} with 0-d {db}")


def test_bool_subtraction():
    """`-` with bools: refused like PyTorch when the result would be bool or int; with
    a float result it is let through (bool counts as 0/1), to keep `-` lean."""
    b = rt.torch_tensor([True, False])
    i = rt.torch_tensor([1, 2])
    for fn in (lambda: b - b, lambda: b - i, lambda: i - b, lambda: b - 1, lambda: 1 - b,
               lambda: i - True, lambda: b.sub(b)):
        with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
            fn()
    f = rt.torch_tensor([0.5, 0.5])
    assert rt.as_array(f - b).tolist() == [-0.5, 0.5]
    assert rt.as_array(b - 0.5).tolist() == [0.5, -0.5]
    assert rt.as_array(f - True).tolist() == [-0.5, -0.5]


def test_promotion_named_cases():
    i = rt.torch_tensor([1, 2, 3])
    assert (i * 2.5).dtype == rt.torch_float32()
    assert (i / i).dtype == rt.torch_float32()
    assert (i / 2).dtype == rt.torch_float32()
    f32 = rt.torch_tensor([1.0, 2.0])
    f64 = rt.torch_tensor([1.0, 2.0], dtype=rt.torch_float64())
    assert (f32 * f64).dtype == rt.torch_float64()
    assert (f32 + 1.5).dtype == rt.torch_float32()
    b = rt.torch_tensor([True, False])
    assert (b & b).dtype == rt.torch_bool()
    assert (b + 1).dtype == rt.torch_int64()
    assert (b * 1.5).dtype == rt.torch_float32()
    assert (i > 1).dtype == rt.torch_bool()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["exp", "sum", "mean", "sqrt", "softmax", "abs", "max", "sigmoid"])
def test_reduction_and_unary_dtypes(op, dtype):
    a = _vals(dtype, nonzero=True)
    fns = {"exp": lambda x: x.exp(), "sum": lambda x: x.sum(), "mean": lambda x: x.mean(),
           "sqrt": lambda x: x.sqrt(), "softmax": lambda x: x.softmax(1),
           "abs": lambda x: x.abs(), "max": lambda x: x.max(), "sigmoid": lambda x: x.sigmoid()}
    fn = fns[op]
    try:
        expect = fn(torch.from_numpy(a))
    except (RuntimeError, NotImplementedError):
        with pytest.raises((RuntimeError, TypeError)):
            fn(rt.torch_tensor(a))
        return
    assert_same(fn(rt.torch_tensor(a)), expect, f"{op} of {dtype}")


# --------------------------------------------------------------------------
# Comparisons and logic: bool results, no graph

CMP = {">": lambda T, a, b: a > b, ">=": lambda T, a, b: a >= b, "<": lambda T, a, b: a < b,
       "<=": lambda T, a, b: a <= b, "==": lambda T, a, b: a == b, "!=": lambda T, a, b: a != b,
       "gt": lambda T, a, b: T.gt(a, b), "ge": lambda T, a, b: T.ge(a, b),
       "lt": lambda T, a, b: T.lt(a, b), "le": lambda T, a, b: T.le(a, b),
       "eq": lambda T, a, b: T.eq(a, b), "ne": lambda T, a, b: T.ne(a, b),
       "x>0": lambda T, a, b: a > 0, "0<x": lambda T, a, b: 0 < a,
       "x==1.0": lambda T, a, b: a == 1.0}


@pytest.mark.parametrize("op", list(CMP))
def test_comparisons(op):
    a = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]], dtype=np.float32)
    b = np.array([2.0, 2.0, 1.0], dtype=np.float32)
    r, t = check_vs_torch(CMP[op], a, b)
    assert r.dtype == rt.torch_bool() and r.grad_fn is None and not r.requires_grad


def test_logical_ops():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    check_vs_torch(lambda T, a, b: a & b, a, b)
    check_vs_torch(lambda T, a, b: a | b, a, b)
    check_vs_torch(lambda T, a, b: ~a, a, b)
    check_vs_torch(lambda T, a, b: T.logical_and(a, b), a, b)
    check_vs_torch(lambda T, a, b: T.logical_or(a, b), a, b)
    check_vs_torch(lambda T, a, b: T.logical_not(a), a, b)


def test_comparison_broadcast_error():
    with pytest.raises(RuntimeError, match=r"\[2\].*\[3\]"):
        rt.torch_ones(2) > rt.torch_ones(3)


# --------------------------------------------------------------------------
# Linear algebra

# Values, node names, gradients and second derivatives of the matrix products
# (matmul in every rank combination, mm, bmm, ..., integer operands) come from
# the samples in rtorch_py/ops/samples/linalg.py; tests/test_linalg_ops.py has
# the decompositions' own cases. Here: errors.

def test_mm_errors():
    with pytest.raises(RuntimeError, match=r"3x4 and 3x4"):
        rt.torch_ones(3, 4).mm(rt.torch_ones(3, 4))
    with pytest.raises(RuntimeError, match="2-d"):
        rt.torch_ones(3).mm(rt.torch_ones(3, 4))
    with pytest.raises(RuntimeError, match=r"\[2, 3\].*\[4, 5\]"):
        rt.torch_ones(2, 3).matmul(rt.torch_ones(4, 5))


def test_mm_mixed_dtypes_refused():
    # like PyTorch, no silent promotion in matrix products
    for sa, sb in [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3, 4), (4,))]:
        x, y = rand(*sa), rand(*sb, dtype=np.float32)
        with pytest.raises(RuntimeError):
            torch.from_numpy(x).matmul(torch.from_numpy(y))
        with pytest.raises(RuntimeError, match="same dtype"):
            rt.torch_tensor(x).matmul(rt.torch_tensor(y))
    with pytest.raises(RuntimeError, match="same dtype"):
        rt.torch_tensor(rand(2, 3)).mm(rt.torch_tensor(rand(3, 2, dtype=np.float32)))


# --------------------------------------------------------------------------
# Shape ops

# Values, node names, gradients and second derivatives of t/transpose/reshape/
# view/(un)squeeze/expand/permute/flatten come from the samples in
# rtorch_py/ops/samples/shape.py. Here: chains of views on non-contiguous data.

SHAPE_CHAINS = {
    "reshape_noncontig": ((3, 4), lambda T, x: x.t().reshape(12)),
    "chain": ((2, 3, 4), lambda T, x: x.permute(1, 0, 2).reshape(3, 8).t().unsqueeze(0)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(SHAPE_CHAINS))
def test_shape_chains_vs_torch(op, dtype):
    shape, fn = SHAPE_CHAINS[op]
    check_vs_torch(fn, rand(*shape, dtype=dtype), second_order=True)
    # multiply afterwards so the gradient flowing back isn't contiguous-trivial
    check_vs_torch(lambda T, x: fn(T, x) * fn(T, x), rand(*shape, dtype=dtype),
                   second_order=True, check_names=False)
    gradcheck(fn, rand(*shape))


def test_views_share_memory_and_version():
    x = rt.torch_zeros(2, 3)
    for v in (x.view(6), x.t(), x.unsqueeze(0), x.transpose(0, 1), x.permute(1, 0),
              x.reshape(3, 2), x.expand(4, 2, 3), x[0], x.squeeze(), x.flatten()):
        assert np.shares_memory(v.data, x.data)
    v = x.view(6)
    x.add_(1)
    assert v._version[0] == x._version[0] == 1
    assert rt.as_array(v).tolist() == [1.0] * 6


def test_shape_errors():
    x = rt.torch_ones(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        x.reshape(4, 2)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(6)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unsqueeze(3)
    with pytest.raises(RuntimeError, match="expand"):
        x.expand(4, 3)
    with pytest.raises(RuntimeError, match="expand"):
        x.expand(3)
    with pytest.raises(RuntimeError, match="permute"):
        x.permute(0)
    with pytest.raises(RuntimeError, match="repeated"):
        x.permute(0, 0)
    with pytest.raises(RuntimeError, match="t\\(\\) expects"):
        rt.torch_ones(2, 3, 4).t()
    with pytest.raises(RuntimeError, match="start_dim"):
        rt.torch_ones(2, 3, 4).flatten(2, 1)


# --------------------------------------------------------------------------
# Reductions

# sum/mean/max/min over dims, keepdim, 0-d and small shapes are generated from
# the samples in rtorch_py/ops/samples/reduction.py; here: ties, mixed forms, errors.

def test_max_ties_gradient():
    # whole-tensor max spreads the gradient evenly over ties; with dim it picks one
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    check_vs_torch(lambda T, x: x.max(), x)
    check_vs_torch(lambda T, x: x.min(), x)
    check_vs_torch(lambda T, x: tuple(x.max(dim=1)), x)
    check_vs_torch(lambda T, x: tuple(x.min(dim=1)), x)


def test_max_of_two_tensors():
    a, b = rand(3, 4), rand(4)
    check_vs_torch(lambda T, a, b: T.max(a, b), a, b, check_names=False)
    check_vs_torch(lambda T, a, b: T.min(a, b), a, b, check_names=False)


def test_reductions_on_int_and_bool():
    i = np.arange(12).reshape(3, 4)
    b = i % 3 == 0
    for arr in (i, b, i.astype(np.int32)):
        check_vs_torch(lambda T, x: x.sum(), arr)
        check_vs_torch(lambda T, x: x.sum(dim=1), arr)
        if arr.dtype != np.bool_:
            check_vs_torch(lambda T, x: x.max(), arr)
            check_vs_torch(lambda T, x: tuple(x.min(dim=0)), arr)
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_tensor(i).mean()


def test_reduction_errors():
    x = rt.torch_ones(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(dim=2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.max(dim=-3)
    with pytest.raises(RuntimeError, match="numel"):
        rt.torch_ones(0).max()


# --------------------------------------------------------------------------
# softmax and log_softmax

@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_large_values_and_3d(name):
    x = np.array([[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]])
    check_vs_torch(lambda T, x: getattr(x, name)(1), x)
    check_vs_torch(lambda T, x: getattr(x, name)(1), rand(2, 3, 4), second_order=True)


# --------------------------------------------------------------------------
# Joining and splitting

# cat/stack/split/chunk/unbind in every form come from the samples in
# rtorch_py/ops/samples/shape.py. Here: errors, and using some of the pieces.

def test_cat_different_sizes():
    with pytest.raises(RuntimeError, match=r"^Sizes of tensors must match except in dimension 0\. "
                                           r"Expected size 3 but got size 4 for tensor number 1"):
        rt.torch_cat([rt.torch_ones(2, 3), rt.torch_ones(2, 4)], 0)
    with pytest.raises(RuntimeError, match="stack"):
        rt.torch_stack([rt.torch_ones(2, 3), rt.torch_ones(2, 4)])


def test_split_pieces_used_in_part():
    check_vs_torch(lambda T, x: x.split(2)[1] * 3, rand(6, 2), second_order=True,
                   scalar_nodes=True)
    gradcheck(lambda T, x: x.split(2)[1] * 3, rand(6, 2))


# --------------------------------------------------------------------------
# where and masked_fill

# where's tensor/number/broadcast forms come from rtorch_py/ops/samples/indexing.py.

def test_where_on_a_mask_computed_from_its_input():
    check_vs_torch(lambda T, a: T.where(a > 0, a, a * 2), rand(3, 4), second_order=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("num", [0, 0.5, True, -2])
def test_where_with_number_dtypes(dtype, num):
    c = np.array([True, False, True])
    a = np.array([1, 0, 3]).astype(dtype)
    check_vs_torch(lambda T, c, a: T.where(c, a, num), c, a, requires_grad=False)
    check_vs_torch(lambda T, c, a: T.where(c, num, a), c, a, requires_grad=False)


def test_where_dtypes():
    c = np.array([True, False])
    i = np.array([1, 2])
    f = np.array([0.5, 1.5], dtype=np.float32)
    check_vs_torch(lambda T, c, i, f: T.where(c, i, f), c, i, f)
    check_vs_torch(lambda T, c, i, f: T.where(c, i, 0), c, i, f)
    check_vs_torch(lambda T, c, i, f: T.where(c, f, 2), c, i, f)


@pytest.mark.parametrize("dtype", FLOATS)
def test_masked_fill_vs_torch(dtype):
    x, m = rand(3, 4, dtype=dtype), rand(3, 4) > 0
    check_vs_torch(lambda T, x, m: x.masked_fill(m, 0.5), x, m, second_order=True)
    check_vs_torch(lambda T, x, m: x.masked_fill(m[0], -2), x, m, second_order=True)
    check_vs_torch(lambda T, x, m: T.masked_fill(x, m, 3.0), x, m)
    check_vs_torch(lambda T, x, m: x.masked_fill(x > 0, T.tensor(7.0).reshape(()).to(
        dtype=x.dtype)), x, m)
    gradcheck(lambda T, x, m: x.masked_fill(m, 0.5), x, m)


def test_masked_fill_errors():
    x = rt.torch_ones(2, 3)
    with pytest.raises(TypeError, match="bool"):
        x.masked_fill(rt.torch_ones(2, 3), 0)
    with pytest.raises(RuntimeError, match="mask"):
        x.masked_fill(rt.torch_ones(3, 2) > 0, 0)


def test_masked_fill_softmax_pattern():
    x = rand(2, 4)
    m = np.array([[False, False, True, True], [False, True, True, True]])
    check_vs_torch(lambda T, x, m: x.masked_fill(m, float("-inf")).softmax(-1), x, m,
                   second_order=True)


# --------------------------------------------------------------------------
# Clone / conversion

@pytest.mark.parametrize("dtype", FLOATS)
def test_clone_and_to(dtype):
    x = rand(2, 3, dtype=dtype)
    check_vs_torch(lambda T, x: x.clone(), x, second_order=True)
    check_vs_torch(lambda T, x: x.to(dtype=T.float64) * 2, x, second_order=True,
                   scalar_nodes=True)
    check_vs_torch(lambda T, x: x.to(dtype=T.float32) * 2, x, scalar_nodes=True)
    check_vs_torch(lambda T, x: x.double() * x.float(), x, check_names=False)
    check_vs_torch(lambda T, x: x.to(dtype=T.int64), x)
    check_vs_torch(lambda T, x: x.long(), x)
    check_vs_torch(lambda T, x: (x > 0).int(), x)
    check_vs_torch(lambda T, x: x.bool(), x)


def test_torch_functions_exist():
    """Every op of the issue is a method and (where R torch has it) a torch_* function."""
    for name in ["add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "sin",
                 "cos", "tanh", "sigmoid", "relu", "clamp", "mm", "matmul", "t", "transpose",
                 "reshape", "unsqueeze", "squeeze", "permute", "flatten", "sum", "mean", "max",
                 "min", "softmax", "log_softmax", "cat", "stack", "chunk", "split", "unbind",
                 "where", "masked_fill", "gt", "ge", "lt", "le", "eq", "ne"]:
        assert callable(getattr(rt, "torch_" + name)), name
    for name in ["add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "sin",
                 "cos", "tanh", "sigmoid", "relu", "clamp", "mm", "matmul", "t", "transpose",
                 "reshape", "view", "unsqueeze", "squeeze", "expand", "expand_as", "permute",
                 "flatten", "sum", "mean", "max", "min", "softmax", "log_softmax", "chunk",
                 "split", "unbind", "masked_fill", "add_", "sub_", "mul_", "div_", "zero_",
                 "fill_", "clamp_", "copy_", "masked_fill_"]:
        assert callable(getattr(rt.Tensor, name)), name


def test_no_grad_records_nothing():
    x = rt.torch_randn(3, requires_grad=True)
    with rt.with_no_grad():
        for y in (x * 2, x.exp(), x.sum(), x[0], x.view(3, 1), x.max(dim=0)[0],
                  rt.torch_cat([x, x])):
            assert y.grad_fn is None and not y.requires_grad


def test_broadcast_error_messages():
    a, b = rt.torch_ones(2, 3), rt.torch_ones(4)
    for fn in (lambda: a + b, lambda: a - b, lambda: a * b, lambda: a / b, lambda: a ** b):
        with pytest.raises(RuntimeError, match=r"\[2, 3\] and \[4\]"):
            fn()


def test_operand_type_error():
    x = rt.torch_ones(2)
    with pytest.raises(TypeError, match="str"):
        x + "a"


@pytest.mark.parametrize("values", [[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [0.0], [[1.5, -2.0], [0.5, 4.0]]])
def test_prod_including_zeros(values):
    check_vs_torch(lambda T, x: x.prod(), np.array(values))
    check_vs_torch(lambda T, x: x.prod(), np.array(values, dtype=np.float32))


def test_reduce_over_empty_dim_list_means_all():
    check_vs_torch(lambda T, x: x.sum(dim=()), rand(2, 3), second_order=True)
    check_vs_torch(lambda T, x: x.mean(dim=[]), rand(2, 3), second_order=True)


def test_reduction_dtype_argument():
    f32 = rand(2, 3, dtype=np.float32)
    check_vs_torch(lambda T, x: x.sum(dtype=T.float64), f32)
    check_vs_torch(lambda T, x: x.mean(dtype=T.float64), f32)
    check_vs_torch(lambda T, x: x.softmax(1, dtype=T.float64), f32)
    check_vs_torch(lambda T, x: x.sum(dim=0, dtype=T.float32), np.arange(6).reshape(2, 3))


def test_argmax_argmin_gather():
    x = rand(3, 4)
    for fn in (lambda T, x: x.argmax(), lambda T, x: x.argmin(dim=1),
               lambda T, x: x.argmax(dim=0, keepdim=True)):
        check_vs_torch(fn, x)
    idx = np.array([[0, 0], [1, 0], [2, 3]])
    check_vs_torch(lambda T, x, i: x.gather(1, i), x, idx, second_order=True)
    gradcheck(lambda T, x, i: x.gather(1, i), x, idx)


def test_nan_propagation():
    x = np.array([1.0, np.nan, 2.0])
    check_vs_torch(lambda T, x: x.max(), x, requires_grad=False)
    check_vs_torch(lambda T, x: tuple(x.max(dim=0)), x, requires_grad=False)
    check_vs_torch(lambda T, x: x.clamp(min=0.0), x, requires_grad=False)
    check_vs_torch(lambda T, x: x.relu(), x, requires_grad=False)


@pytest.mark.parametrize("fn,err,match", [
    (lambda: rt.torch_cat([rt.torch_ones(2).sum(), rt.torch_ones(2).sum()]), RuntimeError,
     "zero-dimensional"),
    (lambda: rt.torch_narrow(rt.torch_ones(2, 3), 1, 2, 5), RuntimeError, "exceeds"),
    (lambda: rt.torch_ones(2).sum().unbind(), RuntimeError, "no dimensions"),
    (lambda: rt.torch_ones(2, 3).split([1, 3]), RuntimeError, "sum exactly to 2"),
    (lambda: rt.torch_ones(2, 3).chunk(0), RuntimeError, "greater than 0"),
    (lambda: rt.torch_select(rt.torch_ones(2, 3), 0, 5), IndexError, "out of range"),
    (lambda: rt.torch_ones(2, 3).sum(dim=(0, 0)), RuntimeError, "multiple times"),
    (lambda: rt.torch_ones(2, 3).clamp(min="a"), TypeError, "min must be a number"),
])
def test_shape_and_join_errors(fn, err, match):
    with pytest.raises(err, match=match):
        fn()


def test_compare_with_none():
    x = rt.torch_ones(2)
    assert (x == None) is False  # noqa: E711
    assert (x != None) is True  # noqa: E711
    assert x in [None, x]
    with pytest.raises(TypeError):
        x > None


@pytest.mark.parametrize("op", ["2*x", "2+x", "x*2", "x+2", "x-2", "x/4", "2-x"])
def test_number_operand_edges_in_pytorch_order(op):
    # `2 * x` is mul(x, 2): the tensor's edge; a number operand of add, sub, mul
    # and div is libtorch's Scalar overload, as R torch calls it (no edge for the
    # number), which PyTorch's Python reaches through torch.ops.aten
    f = {"2*x": lambda x: 2 * x, "2+x": lambda x: 2 + x, "x*2": lambda x: x * 2,
         "x+2": lambda x: x + 2, "x-2": lambda x: x - 2, "x/4": lambda x: x / 4,
         "2-x": lambda x: 2 - x}[op]
    aten = torch.ops.aten
    tf = {"2*x": lambda x: aten.mul.Scalar(x, 2), "2+x": lambda x: aten.add.Scalar(x, 2),
          "x*2": lambda x: aten.mul.Scalar(x, 2), "x+2": lambda x: aten.add.Scalar(x, 2),
          "x-2": lambda x: aten.sub.Scalar(x, 2), "x/4": lambda x: aten.div.Scalar(x, 4),
          "2-x": lambda x: 2 - x}[op]
    x = rt.torch_tensor([1.0], requires_grad=True)
    tx = torch.tensor([1.0], requires_grad=True)
    ours = [(type(n).__name__ if n is not None else None, nr)
            for n, nr in f(x).grad_fn.next_functions]
    theirs = [(type(n).__name__ if n is not None else None, nr)
              for n, nr in tf(tx).grad_fn.next_functions]
    assert ours == theirs


@pytest.mark.parametrize("dtype", FLOATS)
def test_number_operands_give_numpys_own_results(dtype):
    # Numbers are converted once and reused (a cache); the results must be the
    # ones NumPy gives for the plain Python number, signed zeros and NaN included.
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(50) * 10).astype(dtype)
    a[:3] = [0.0, -0.0, np.inf]
    x = rt.torch_tensor(a)
    numbers = [0.1, -0.0, 0.0, float("nan"), float("inf"), 1e300, 3, -7, 2**40, 1 / 3]
    numbers += list(rng.standard_normal(20))
    for _ in range(2):  # the second round reads the cache
        for v in numbers:
            v = float(v) if not isinstance(v, int) else v
            with np.errstate(all="ignore"):
                for got, want in ((x * v, a * v), (x + v, a + v), (x - v, a - v),
                                  (x / v if v != 0 else x * 1, a / v if v != 0 else a * 1)):
                    assert got.data.dtype == want.dtype
                    np.testing.assert_array_equal(got.data, want)
                    assert (np.signbit(got.data) == np.signbit(want)).all(), v
