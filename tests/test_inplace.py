"""In-place ops: values, grad_fn names and gradients against PyTorch, version
counters, the leaf error, and saved tensors modified in place."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import check_vs_torch, gradcheck, rand

FLOATS = [np.float32, np.float64]

# op(T, y, o): modify y (a non-leaf) in place, using o (shape (4,) or (3, 4)).
INPLACE = {
    "add_": lambda T, y, o: y.add_(o),
    "add_alpha": lambda T, y, o: y.add_(o, alpha=-2),
    "add_num": lambda T, y, o: y.add_(3),
    "iadd": lambda T, y, o: _iop(y, "__iadd__", o),
    "sub_": lambda T, y, o: y.sub_(o),
    "sub_num": lambda T, y, o: y.sub_(0.5),
    "isub": lambda T, y, o: _iop(y, "__isub__", o),
    "mul_": lambda T, y, o: y.mul_(o),
    "mul_num": lambda T, y, o: y.mul_(-1.5),
    "imul": lambda T, y, o: _iop(y, "__imul__", o),
    "div_": lambda T, y, o: y.div_(o),
    "div_num": lambda T, y, o: y.div_(4),
    "idiv": lambda T, y, o: _iop(y, "__itruediv__", o),
    "zero_": lambda T, y, o: y.zero_(),
    "fill_": lambda T, y, o: y.fill_(1.25),
    "clamp_": lambda T, y, o: y.clamp_(min=-0.5, max=0.5),
    "clamp_min": lambda T, y, o: y.clamp_(min=0.1),
    "clamp_tensors": lambda T, y, o: y.clamp_(min=o - 0.5, max=o + 0.5),
    "clamp_tensor_max": lambda T, y, o: y.clamp_(max=o),
    "copy_": lambda T, y, o: y.copy_(o),
    "masked_fill_": lambda T, y, o: y.masked_fill_(o > 0, -3.0),
    # indexing writes (positions distinct where a repeat would have no defined winner)
    "scatter_": lambda T, y, o: y.scatter_(0, _ix(T, [[2, 0, 1, 0]]), _e(o)[:1]),
    "scatter_value": lambda T, y, o: y.scatter_(1, _ix(T, [[1], [3], [0]]), 2.5),
    "scatter_add_": lambda T, y, o: y.scatter_add_(0, _ix(T, [[2, 0, 1, 0], [0, 0, 2, 2]]),
                                                   _e(o)[:2]),
    "index_add_": lambda T, y, o: y.index_add_(1, _ix(T, [3, 0, 3]), _e(o)[:, :3], alpha=2),
    "index_copy_": lambda T, y, o: y.index_copy_(0, _ix(T, [2, 0]), _e(o)[:2]),
    "index_fill_": lambda T, y, o: y.index_fill_(1, _ix(T, [1, 2]), -1.5),
    "index_put_": lambda T, y, o: y.index_put_((_ix(T, [0, 2]),), _e(o)[:2]),
    "index_put_acc": lambda T, y, o: y.index_put_((_ix(T, [0, 0, 2]), _ix(T, [1, 1, 3])),
                                                  _e(o)[0, :3], accumulate=True),
    "masked_scatter_": lambda T, y, o: y.masked_scatter_(o > 0, _e(o) * 2),
    "scatter_reduce_": lambda T, y, o: y.scatter_reduce_(0, _ix(T, [[2, 0, 1, 0], [0, 0, 2, 2]]),
                                                         _e(o)[:2], "mean"),
    "tril_": lambda T, y, o: y.tril_(1),
    "triu_": lambda T, y, o: y.triu_(-1),
}


def _ix(T, positions):
    """An index tensor in either library (T is None: rtorch_py)."""
    return T.tensor(positions) if T is torch else rt.torch_tensor(positions)


def _e(o):
    return o.expand(3, 4)


def _iop(y, name, o):
    return getattr(y, name)(o)


def _case(op):
    def fn(T, x, o):
        y = x * 1.0
        out = INPLACE[op](T, y, o)
        assert out is y
        return y
    return fn


def _case_used(op):
    # the modified tensor combined with the original inputs downstream
    def fn(T, x, o):
        y = x.sin()  # saves x, not y
        INPLACE[op](T, y, o)
        return y * x + o
    return fn


def _other(op, shape, dtype):
    if op.startswith(("div", "idiv")):
        return rand(*shape, dtype=dtype, away_from_zero=0.5)
    return rand(*shape, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("oshape", [(3, 4), (4,), (1, 4)])
@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_vs_torch(op, oshape, dtype):
    x, o = rand(3, 4, dtype=dtype), _other(op, oshape, dtype)
    number = op.endswith("_num")  # (R torch's node: helpers.SCALAR_NODES)
    check_vs_torch(_case(op), x, o, second_order=True, scalar_nodes=number)
    check_vs_torch(_case(op), x, o, requires_grad=[False, True], scalar_nodes=number)
    check_vs_torch(_case_used(op), x, o, second_order=True, check_names=False)


@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_gradcheck(op):
    x, o = rand(3, 4), _other(op, (4,), np.float64)
    # keep away from the clamp bounds
    x = np.where(np.abs(np.abs(x) - 0.5) < 0.05, x + 0.2, x)
    x = np.where(np.abs(x - 0.1) < 0.05, x + 0.2, x)
    gradcheck(_case(op), x, o)


@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_bumps_version(op):
    y = rt.torch_tensor(rand(3, 4), dtype=rt.torch_float64())
    o = rt.torch_tensor(_other(op, (4,), np.float64))
    v0 = y._version[0]
    INPLACE[op](None, y, o)
    assert y._version[0] == v0 + 1
    # and so does every view sharing the counter
    y2 = rt.torch_tensor(rand(3, 4))
    view = y2[0]
    INPLACE[op](None, y2, rt.torch_tensor(_other(op, (4,), np.float64)))
    assert view._version[0] == y2._version[0] == 1


@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_on_leaf_requiring_grad_fails(op):
    x = rt.torch_tensor(rand(3, 4), requires_grad=True)
    before = rt.as_array(x).copy()
    o = rt.torch_tensor(_other(op, (4,), np.float64))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        INPLACE[op](None, x, o)
    np.testing.assert_array_equal(rt.as_array(x), before)  # untouched
    assert x._version[0] == 0
    # allowed under no_grad, records nothing
    with rt.with_no_grad():
        INPLACE[op](None, x, o)
    assert x.grad_fn is None and x.requires_grad and x.is_leaf
    # and the engine still works afterwards
    (x * 2).sum().backward()
    np.testing.assert_array_equal(rt.as_array(x.grad), np.full((3, 4), 2.0))


def test_inplace_on_saved_input_is_caught():
    x = rt.torch_ones(3, requires_grad=True)
    y = x * 2
    z = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
        z.sum().backward()
    assert "is at version 1; expected version 0" in str(e.value)
    # the same pattern in PyTorch fails too
    tx = torch.ones(3, requires_grad=True)
    ty = tx * 2
    tz = ty * ty
    ty.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tz.sum().backward()


def test_inplace_on_saved_output_is_caught():
    x = rt.torch_ones(3, requires_grad=True)
    y = x.exp()  # saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_after_op_not_saving_it_is_fine():
    x = rt.torch_ones(3, requires_grad=True)
    y = x + 1        # add saves nothing
    z = y + 2
    y.mul_(3)
    z.sum().backward()
    assert rt.as_array(x.grad).tolist() == [1.0, 1.0, 1.0]


def test_inplace_through_view_shares_version():
    x = rt.torch_ones(2, 3, requires_grad=True)
    y = x * 2
    z = y.sigmoid()  # saves its output z
    zv = z.view(6)
    zv.zero_() if False else None
    with rt.with_no_grad():
        zv.fill_(0.0)  # modifies z through the view
    assert z._version[0] == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.parametrize("make_alias", ["detach", "view"])
def test_alias_made_before_the_save_shares_the_version(make_alias):
    # A new tensor gets its own version counter only when something must follow
    # it; an alias taken first and a later save must still see the same counter.
    x = rt.torch_ones(3, requires_grad=True)
    y = x * 2
    alias = y.detach() if make_alias == "detach" else y.view(3)
    z = y.sin()  # saves y
    with rt.with_no_grad():
        alias.add_(1)
    assert y._version[0] == alias._version[0] == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_makes_plain_tensor_require_grad():
    x = rt.torch_tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = rt.torch_zeros(3)
    a.add_(x * x)
    assert a.requires_grad and a.grad_fn.name == "AddBackward0"
    a.sum().backward()
    assert rt.as_array(x.grad).tolist() == [2.0, 4.0, 6.0]


def test_inplace_integer_and_cast_errors():
    i = rt.torch_tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.div_(2)
    i.add_(2)
    assert rt.as_array(i).tolist() == [3, 4, 5] and i.dtype == rt.torch_int64()
    with pytest.raises(RuntimeError, match="broadcast"):
        rt.torch_zeros(3).add_(rt.torch_ones(4))
    with pytest.raises(RuntimeError, match="broadcast"):
        rt.torch_zeros(3).add_(rt.torch_ones(2, 3))  # other may not grow self
    with pytest.raises(RuntimeError, match="broadcast"):
        rt.torch_zeros(3).copy_(rt.torch_ones(4))
    with pytest.raises(TypeError, match="bool"):
        rt.torch_zeros(3).masked_fill_(rt.torch_ones(3), 1.0)


def test_inplace_dtype_casts_like_torch():
    f32 = np.zeros(3, dtype=np.float32)
    f64 = np.array([0.1, 0.2, 0.3])
    check_vs_torch(lambda T, a, b: a.add_(b), f32, f64, requires_grad=False)
    check_vs_torch(lambda T, a, b: a.copy_(b), f32, f64, requires_grad=False)
    check_vs_torch(lambda T, a, b: a.copy_(b), np.zeros(3, np.int64), f64, requires_grad=False)
    check_vs_torch(lambda T, a, b: (a * 1).copy_(b), f32, f64, requires_grad=[False, True])
    check_vs_torch(lambda T, a, b: a.mul_(2), np.arange(3), f64, requires_grad=False)
    check_vs_torch(lambda T, a, b: a.clamp_(min=1), np.arange(3), f64, requires_grad=False)
    check_vs_torch(lambda T, a, b: a.clamp_(min=b), np.arange(3), np.arange(3)[::-1].copy(),
                   requires_grad=False)
    with pytest.raises(RuntimeError, match="clamp_: result type Float can't be cast to the "
                       "desired output type Long"):
        rt.torch_tensor(np.arange(3)).clamp_(min=rt.torch_tensor(f32))
    with pytest.raises(RuntimeError, match=r"clamp_: can't update a tensor of shape \[3\] in "
                       r"place with bounds of shape \[2, 3\]"):
        rt.torch_tensor(f32).clamp_(max=rt.torch_zeros(2, 3))
    check_vs_torch(lambda T, a, b: a.fill_(2.7), np.arange(3), f64, requires_grad=False)


@pytest.mark.parametrize("vshape", [(), (1,)])
def test_fill_and_masked_fill_with_tensor_value(vshape):
    x, v = rand(3, 4), rand(*vshape)
    if vshape:
        with pytest.raises(RuntimeError, match="0-dimension"):
            torch.zeros(2).fill_(torch.zeros(1))
        with pytest.raises(RuntimeError, match="0-dimension"):
            rt.torch_zeros(2).fill_(rt.torch_zeros(1))
        with pytest.raises(RuntimeError, match="0-dimension"):
            rt.torch_zeros(2).masked_fill_(rt.torch_zeros(2) == 0, rt.torch_zeros(1))
        with pytest.raises(RuntimeError, match="0-dimension"):
            rt.torch_zeros(2).masked_fill(rt.torch_zeros(2) == 0, rt.torch_zeros(1))
        return
        check_vs_torch(lambda T, x, v: (x * 1).fill_(v), x, v)
    check_vs_torch(lambda T, x, v: (x * 1).masked_fill_(x > 0, v), x, v)
    check_vs_torch(lambda T, x, v: x.masked_fill(x > 0, v), x, v)
    gradcheck(lambda T, x, v: (x * 1).masked_fill_(x > 0, v) * x, x, v)


# --------------------------------------------------------------------------
# In-place on views: recorded on the base (CopySlices), as in PyTorch

VIEW_CASES = {
    "row_mul": lambda T, y, o: y[0].mul_(o[0]),
    "col_add": lambda T, y, o: y[:, 1].add_(o[:, 0]),
    "t_add": lambda T, y, o: y.t().add_(o.t()),
    "view_slice_sub": lambda T, y, o: y.view(12)[3:7].sub_(o.reshape(12)[:4] * 2),
    "row_copy": lambda T, y, o: y[1].copy_(o[2]),
    "row_zero": lambda T, y, o: y[2].zero_(),
    "row_fill": lambda T, y, o: y[2].fill_(0.5),
    "block_clamp": lambda T, y, o: y[1:, 2:].clamp_(min=-0.3, max=0.3),
    "permute_div": lambda T, y, o: y.permute(1, 0)[0].div_(o[:, 0] + 3),
    "step_mul": lambda T, y, o: y[:, ::2].mul_(o[:, ::2]),
    "element_mul": lambda T, y, o: y[1, 2].mul_(o[0, 0]),
    "masked_fill_view": lambda T, y, o: y[0].masked_fill_(o[0] > 0, 2.0),
    "setitem_on_view": lambda T, y, o: y.t().__setitem__(1, o[:, 0]),
    "two_views": lambda T, y, o: (y[0].mul_(o[0]), y[:, 0].add_(o[:, 1])),
    "view_of_view": lambda T, y, o: y[1:][0][1:3].mul_(o[0, :2]),
    "unsqueeze_mul": lambda T, y, o: y.unsqueeze(0)[0, 1].mul_(o[1]),
    "broadcast_other": lambda T, y, o: y[0].add_(o[0, :1]),
}


def _view_case(name, use):
    def fn(T, x, o):
        y = x * 1.5
        VIEW_CASES[name](T, y, o)
        if use == "base":
            return y * x
        if use == "view":  # the view's regenerated history
            v = y[0] if name != "element_mul" else y[1, 2]
            return v.exp()
        return y
    return fn


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("use", ["plain", "base", "view"])
@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_inplace_on_view_vs_torch(name, use, dtype):
    x, o = rand(3, 4, dtype=dtype), rand(3, 4, dtype=dtype, away_from_zero=0.2)
    check_vs_torch(_view_case(name, use), x, o, second_order=True)
    check_vs_torch(_view_case(name, use), x, o, requires_grad=[False, True])
    check_vs_torch(_view_case(name, use), x, o, requires_grad=[True, False])


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_inplace_on_view_gradcheck(name):
    x, o = rand(3, 4, away_from_zero=0.2), rand(3, 4, away_from_zero=0.2)
    x = np.where(np.abs(np.abs(x * 1.5) - 0.3) < 0.05, x + 0.1, x)
    gradcheck(_view_case(name, "base"), x, o)


def test_inplace_view_grad_fn_names():
    x = rt.torch_ones(2, 3, requires_grad=True)
    y = x * 2
    v = y[0]
    v.mul_(3)
    assert y.grad_fn.name == "CopySlices" and v.grad_fn.name == "AsStridedBackward0"
    assert y.grad_fn.next_functions[0][0].name == "MulBackward1"  # (`x * 2`: mul.Scalar)


def test_inplace_on_view_of_plain_tensor_with_grad_input():
    def fn(T, x):
        a = T.zeros(3, 4, dtype=x.dtype)
        a[1].add_(x * x)
        a[:, 0].mul_(x[:3])
        return a
    check_vs_torch(fn, rand(4), second_order=True)


def test_inplace_on_view_of_leaf_fails():
    x = rt.torch_ones(2, 3, requires_grad=True)
    for fn in (lambda: x[0].mul_(2), lambda: x.view(6).add_(1), lambda: x.t().zero_()):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            fn()
    assert rt.as_array(x).tolist() == [[1.0] * 3] * 2
    with rt.with_no_grad():
        x[0].mul_(2)
    assert rt.as_array(x)[0].tolist() == [2.0] * 3


def test_inplace_on_expanded_tensor_fails():
    y = rt.torch_ones(1, 3) * 2
    with pytest.raises(RuntimeError, match="single memory location"):
        y.expand(2, 3).mul_(2)
    with pytest.raises(RuntimeError, match="single memory location"):
        rt.torch_ones(3).expand(2, 3).add_(1)


def test_inplace_on_view_retain_graph_and_saved_check():
    x = rt.torch_ones(2, 3, requires_grad=True)
    o = rt.torch_tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[0].mul_(o)
    z = y.sum()
    z.backward(retain_graph=True)
    z.backward()
    assert rt.as_array(o.grad).tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError, match="second time"):
        z.backward()
    # the op's own saved tensors are still version-checked
    oo = o * 1
    y3 = x * 2
    y3[1].mul_(oo)
    oo.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y3.sum().backward()


def test_inplace_on_view_of_noncontiguous_base():
    x = rand(3)

    def fn(T, x):
        arr = np.arange(12.0).reshape(3, 4).T  # zero-copy here: a Fortran-ordered base
        base = T.tensor(arr)
        if T is not torch:
            assert not rt.as_array(base).flags.c_contiguous
        base[1].mul_(x)
        base[1:, 2].add_(x * x)
        return base * 1
    check_vs_torch(fn, x, second_order=True, scalar_nodes=True)


# Views taken before an in-place change of their base follow its new history.

REFRESH = {
    "base_mul": lambda T, y, o: y.mul_(o),
    "base_setitem": lambda T, y, o: y.__setitem__((slice(None), 1), o[:, 0]),
    "other_view_add": lambda T, y, o: y[:, 2].add_(o[:, 1]),
    "view_of_view": lambda T, y, o: y.t()[1].mul_(o[:, 3]),
    "twice": lambda T, y, o: (y.add_(1), y[1].mul_(o[1])),
}


@pytest.mark.parametrize("name", list(REFRESH))
def test_views_follow_inplace_changes_of_their_base(name):
    def fn(T, x, o):
        y = x * 2
        v, w, u = y[0], y[:, 1], y.view(12)
        REFRESH[name](T, y, o)
        return v * 1, w.exp(), u[5:9] * 3, y
    check_vs_torch(fn, rand(3, 4), rand(3, 4), second_order=True, scalar_nodes=(0, 2))


def test_many_live_views_stay_cheap():
    x = rt.torch_randn(2000, 2, requires_grad=True)
    y = x * 1
    rows = y.unbind(0)  # 2000 live views
    y.mul_(2)
    assert rows[-1].grad_fn.name == "AsStridedBackward0"
    rows[-1].sum().backward()
    assert rt.as_array(x.grad)[-1].tolist() == [2.0, 2.0]


@pytest.mark.parametrize("view", [False, True])
def test_retain_grad_follows_inplace_and_hooks_stay(view):
    def run(lib, ones):
        x = ones(3, requires_grad=True)
        y = x * 2
        y.retain_grad()
        seen = []
        y.register_hook(lambda g: seen.append(np.array(g.detach().numpy() if lib == "torch"
                                                       else rt.as_array(g))))
        if view:
            y[1:].mul_(3)
        else:
            y.mul_(3)
        (y * y).sum().backward()
        grad = y.grad.numpy() if lib == "torch" else rt.as_array(y.grad)
        return grad, seen
    tg, tseen = run("torch", torch.ones)
    rg, rseen = run("rt", rt.torch_ones)
    np.testing.assert_allclose(rg, tg)
    assert len(rseen) == len(tseen) == 1
    np.testing.assert_allclose(rseen[0], tseen[0])


# In-place shape changes: the tensor itself becomes the view (t_, transpose_, ...).
RESTRIDE = {
    "t_": lambda y: y.t_(),
    "transpose_": lambda y: y.transpose_(0, 1),
    "unsqueeze_": lambda y: y.unsqueeze_(1),
    "squeeze_": lambda y: (y.unsqueeze(0) * 1).squeeze_(),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(RESTRIDE))
def test_inplace_shape_change_vs_torch(op, dtype):
    def fn(T, x):
        y = x * 1.0
        out = RESTRIDE[op](y)
        assert out is y or op == "squeeze_"
        return out * out
    check_vs_torch(fn, rand(3, 4, dtype=dtype), second_order=True, check_names=False)
    gradcheck(fn, rand(3, 4))


def test_t_in_place_makes_a_non_contiguous_tensor():
    x = rt.torch_randn(10, 10)
    before = rt.as_array(x).copy()
    assert x.t_() is x and not x.data.flags.c_contiguous
    np.testing.assert_array_equal(rt.as_array(x), before.T)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        rt.torch_randn(2, 3, requires_grad=True).t_()
