"""Tracing (rtorch_py.jit): the mode hook, graphs, replay, script modules, jit_compile,
jit_ops. (TorchScript files both ways with PyTorch: test_jit_torchscript.py; ONNX:
test_jit_onnx.py.)"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import modes as _modes
from rtorch_py.jit import TracerWarning
from rtorch_py.jit.graph import walk


def t(a, **kw):
    return rt.torch_tensor(np.asarray(a, dtype=np.float32), **kw)


# --------------------------------------------------------------------------
# The mode hook


class Recorder:
    def __init__(self):
        self.calls, self.conversions = [], []

    def call(self, name, fn, args, kwargs):
        self.calls.append(name)
        return fn(*args, **kwargs)

    def converted(self, x, what):
        self.conversions.append(what)


def test_an_active_mode_sees_ops_nn_forms_and_conversions_then_the_fast_path_returns():
    x = t([[1.0, -2.0]])
    w = t([[1.0, 2.0], [3.0, 4.0]])
    mode = Recorder()
    before = bool(_modes.STACK[0])  # (True once a named or sparse tensor exists: other tests)
    _modes.push_mode(mode)
    assert _modes.STACK[0]
    try:
        y = rt.nnf_linear(x, w).relu()
        x.add_(1)  # (an in-place op, published with no operand check before)
        rt.torch_zeros(2)
        float(y.sum())
    finally:
        _modes.pop_mode(mode)
    # (a mode sees nested calls too: the tracer, not the hook, keeps the outermost)
    assert mode.calls[0] == "nnf_linear" and "relu" in mode.calls and "add_" in mode.calls
    assert "zeros" in mode.calls and "sum" in mode.calls
    assert mode.conversions == ["a Python number"]
    assert bool(_modes.STACK[0]) == before  # the fast path is back where it was
    assert rt.torch_relu(t([-1.0])).item() == 0.0 and mode.calls[-1] != "relu"


# --------------------------------------------------------------------------
# Tracing functions


def test_a_traced_function_replays_its_ops_on_new_inputs():
    def fn(x, y):
        return (x * 2 + y).relu().sum(dim=0)
    tr = rt.jit_trace(fn, t([[1.0, -3.0]]), t([[0.5, 0.5]]))
    a, b = np.random.randn(4, 2).astype(np.float32), np.random.randn(4, 2).astype(np.float32)
    np.testing.assert_allclose(tr(t(a), t(b)).data, fn(t(a), t(b)).data, rtol=1e-6)
    assert [n.kind for n in tr.traced.nodes] == ["mul", "add", "relu", "sum"]


def test_graph_listing_follows_libtorch():
    tr = rt.jit_trace(rt.torch_relu, t([-1.0, 0.0, 1.0]))
    assert str(tr.graph) == (
        "graph(%0 : Float(3, strides=[1], requires_grad=0, device=cpu)):\n"
        "  %1 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::relu(%0)\n"
        "  return (%1)\n")
    lin = rt.nn_linear(10, 10)
    g = str(rt.jit_trace(lin, rt.torch_randn(10, 10)).graph)
    assert g.splitlines()[0].startswith("graph(%self : __torch__.nn_linear")
    assert '%bias : Tensor = prim::GetAttr[name="bias"](%self)' in g
    assert "requires_grad=1, device=cpu) = aten::linear(" in g


def test_nn_forms_are_one_node_each_and_their_insides_are_not_recorded():
    conv = rt.nn_conv2d(1, 2, 3)
    def fn(x):
        return rt.nnf_max_pool2d(rt.nnf_gelu(conv(x)), 2)
    tr = rt.jit_trace(fn, rt.torch_randn(1, 1, 6, 6))
    assert [n.kind for n in tr.traced.nodes] == ["nnf_conv2d", "nnf_gelu", "nnf_max_pool2d"]
    x = rt.torch_randn(2, 1, 8, 8)
    np.testing.assert_allclose(tr(x).data, fn(x).data, rtol=1e-6)


def test_tensors_the_trace_did_not_make_are_constants_and_parameters_of_closures_too():
    w = t([1.0, 2.0])
    tr = rt.jit_trace(lambda x: x * w, t([1.0, 1.0]))
    consts = [v for v in tr.traced.values() if v.kind == "const"]
    assert len(consts) == 1 and consts[0].tensor is w


def test_inputs_and_outputs_lists_tuples_dicts():
    def fn(xs, pair, d):
        return (xs[0] + xs[1], [pair[0] * 2, pair[1]], {"s": d["a"] - d["b"]})
    args = ([t([1.0]), t([2.0])], (t([3.0]), t([4.0])), {"a": t([5.0]), "b": t([1.0])})
    tr = rt.jit_trace(fn, *args, strict=False)
    out = tr([t([10.0]), t([20.0])], (t([1.0]), t([0.0])), {"a": t([1.0]), "b": t([1.0])})
    assert out[0].item() == 30.0 and out[1][0].item() == 2.0 and out[2]["s"].item() == 0.0
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tuple"):
        tr([t([1.0]), t([2.0])], [t([1.0]), t([0.0])], {"a": t([1.0]), "b": t([1.0])})
    with pytest.raises(RuntimeError, match="Expected 2 elements in a list but found 3"):
        tr([t([1.0]), t([2.0]), t([3.0])], (t([1.0]), t([0.0])), {"a": t([1.0]),
                                                                   "b": t([1.0])})


def test_strict_refuses_list_outputs_and_inputs_must_be_tensors():
    with pytest.raises(RuntimeError, match="Encountering a list at the output of the tracer"):
        rt.jit_trace(lambda x: [x, x + 1], t([1.0]))
    with pytest.raises(RuntimeError, match="Got float"):
        rt.jit_trace(lambda x, y: x + y, t([1.0]), 1.0)
    with pytest.raises(RuntimeError, match="can be output from traced functions"):
        rt.jit_trace(lambda x: 1, t([1.0]))
    with pytest.raises(ValueError, match="jit_trace needs a function or nn_module"):
        rt.jit_trace(1, t([1.0]))
    with pytest.raises(ValueError, match="initialize the nn_module"):
        rt.jit_trace(rt.nn_linear, t([1.0]))


def test_control_flow_on_values_warns_as_libtorch_does():
    def fn(x):
        if bool(x.sum() > 0):
            return x * 2
        return x * 3
    with pytest.warns(TracerWarning, match="Converting a tensor to a Python boolean might "
                      "cause the trace to be incorrect"):
        tr = rt.jit_trace(fn, t([1.0, 2.0]))
    assert tr(t([-1.0, -2.0])).data.tolist() == [-2.0, -4.0]  # specialised, as warned
    with pytest.warns(TracerWarning, match="to a Python number"):
        rt.jit_trace(lambda x: x * x.max().item(), t([1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rt.jit_trace(lambda x: x * 2, t([1.0]))  # (nothing converted: no warning)


def test_an_unrolled_list_length_is_fixed_by_the_trace():
    fn = lambda x: rt.torch_stack([v.sum() for v in rt.torch_unbind(x, dim=0)], dim=0)
    tr = rt.jit_trace(fn, rt.torch_randn(10, 5, 5))
    with pytest.raises(RuntimeError, match="TorchScript interpreter[\\s\\S]*Expected 10 "
                       "elements in a list but found 11"):
        tr(rt.torch_randn(11, 5, 5))


def test_an_interpreter_failure_reads_as_libtorch_words_it():
    fn = lambda x: rt.torch_stack([v.sum() for v in rt.torch_unbind(x, dim=0)], dim=0)
    tr = rt.jit_trace(fn, rt.torch_randn(10, 5, 5))
    with pytest.raises(RuntimeError) as ours:
        tr(rt.torch_randn(11, 5, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's tracer warns of the unrolled list)
        theirs = torch.jit.trace(lambda x: torch.stack([v.sum() for v in torch.unbind(x, 0)], 0),
                                 torch.randn(10, 5, 5))
    with pytest.raises(RuntimeError) as expected:
        theirs(torch.randn(11, 5, 5))
    assert str(ours.value) == str(expected.value)


def test_gradients_flow_through_a_replayed_graph():
    w = t([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    fn = lambda x: rt.nnf_softplus(x.matmul(w)).pow(2).sum()
    tr = rt.jit_trace(fn, t([[1.0, 2.0]]))
    x = t([[0.3, -0.7], [1.5, 0.1]], requires_grad=True)
    tr(x).backward()
    gw, gx = w.grad.data.copy(), x.grad.data.copy()
    w.grad = None
    x2 = t(x.data, requires_grad=True)
    fn(x2).backward()
    np.testing.assert_allclose(gw, w.grad.data, rtol=1e-6)
    np.testing.assert_allclose(gx, x2.grad.data, rtol=1e-6)


def test_in_place_ops_and_random_calls_replay():
    def fn(x):
        y = x.clone()
        y.mul_(2)
        return rt.nnf_dropout(y, 0.5, True)
    tr = rt.jit_trace(fn, rt.torch_ones(200))
    a, b = tr(rt.torch_ones(200)), tr(rt.torch_ones(200))
    assert set(np.unique(a.data)) <= {0.0, 4.0}
    assert not np.array_equal(a.data, b.data)  # (the mask is drawn each run)


# --------------------------------------------------------------------------
# Script modules


class Net(rt.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn_linear(4, 3)
        self.bn = rt.nn_batch_norm1d(3)
        self.drop = rt.nn_dropout(0.5)
        self.scale = rt.nn_parameter(t([2.0]))

    def forward(self, x):
        return self.drop(self.bn(self.fc(x))) * self.scale

    def half(self, x):
        return self.fc(x) / 2


def test_traced_modules_share_parameters_and_follow_the_mode():
    net = Net()
    x = rt.torch_randn(8, 4)
    sm = rt.jit_trace_module(net, forward=x, half=(x,))
    assert sorted(sm.method_names) == ["evalforward", "half", "trainforward"]
    assert sm.fc.weight is net.fc.weight and sm.parameters.names() == net.parameters.names()
    assert list(sm.state_dict()) == list(net.state_dict())
    sm.eval()
    net.eval()
    np.testing.assert_allclose(sm(x).data, net(x).data, rtol=1e-6)
    np.testing.assert_allclose(sm.half(x).data, net.half(x).data, rtol=1e-6)
    with rt.with_no_grad():
        net.scale.data[...] = 5.0  # (in place: the script module reads the same tensor)
    np.testing.assert_allclose(sm(x).data, net(x).data, rtol=1e-6)
    sm.train()
    a, b = sm(x), sm(x)
    assert not np.array_equal(a.data, b.data)  # dropout in train mode


def test_respect_mode_false_traces_the_current_mode_only():
    class M(rt.nn.Module):
        def forward(self, x):
            return x.abs() if self.training else -x.abs()
    m = M()
    m.eval()
    sm = rt.jit_trace(m, t([1.0]), respect_mode=False)
    assert sm.method_names == ["forward"]
    sm.train()
    assert sm(t([2.0])).item() == -2.0


def test_submodule_methods_are_not_traced_and_traced_modules_nest():
    sm = rt.jit_trace(rt.nn_sequential(rt.nn_linear(3, 3)), rt.torch_randn(2, 3))
    with pytest.raises(RuntimeError, match="Methods from submodules of traced modules are "
                       "not traced"):
        sm._modules["0"](rt.torch_randn(2, 3))
    inner = rt.jit_trace(rt.nn_linear(3, 3), rt.torch_randn(2, 3))
    outer = rt.nn_sequential(inner, rt.nn_relu())
    tr = rt.jit_trace(outer, rt.torch_randn(2, 3))
    x = rt.torch_randn(4, 3)
    np.testing.assert_allclose(tr(x).data, outer(x).data, rtol=1e-6)
    assert [n.kind for n in tr.find_method("trainforward").traced.nodes] == \
        ["nnf_linear", "nnf_relu"]


def test_module_tracing_errors():
    with pytest.raises(ValueError, match="reserved"):
        rt.jit_trace_module(Net(), trainforward=(t([1.0]),))
    with pytest.raises(ValueError, match="Method 'nope' does not exist"):
        rt.jit_trace_module(Net(), nope=(t([1.0]),))
    with pytest.raises(ValueError, match="must be a `nn_module"):
        rt.jit_trace_module(lambda x: x, forward=(t([1.0]),))


def test_r_style_names_for_script_module_classes():
    a = rt.jit_trace(rt.nn_relu(), t([1.0]))
    b = rt.jit_trace(rt.nn_relu(), t([1.0]))
    assert re.fullmatch(r"nn_relu\d*", a._type_name) and b._type_name != a._type_name


# --------------------------------------------------------------------------
# jit_compile, jit_ops, jit_tuple, jit_scalar


def test_jit_compile_runs_torchscript_functions():
    cu = rt.jit_compile("""
        def fn(x):
            return torch.abs(x)

        def loop(x, n: int):
            y = x
            for i in range(n):
                y = torch.add(torch.mul(y, 2), i)
            if bool(torch.gt(torch.sum(y), 0)):
                y0 = torch.neg(y)
            else:
                y0 = y
            k = 0
            while torch.lt(k, 3):
                k = torch.add(k, 1)
            return (y0, torch.size(x, 0), [t * 2 for t in [y0, x]], k)
    """)
    assert cu.fn(t([-1.0])).item() == 1.0
    y, n, ys, k = cu.loop(t([1.0, 2.0]), 3)
    ref = ((torch.tensor([1.0, 2.0]) * 2 + 0) * 2 + 1) * 2 + 2
    np.testing.assert_allclose(y.data, -ref.numpy())
    assert n == 2 and k == 3 and len(ys) == 2
    with pytest.raises(AttributeError, match="no function 'nope'"):
        cu.nope


def test_jit_ops_call_operators_by_name():
    t1, t2 = rt.torch_rand(4, 5), rt.torch_ones(5, 4)
    np.testing.assert_allclose(rt.jit_ops.aten.matmul(t1, t2).data, (t1.matmul(t2)).data)
    parts = rt.jit_ops.aten.split(rt.torch_arange(0, 4), 2, 0)
    assert [p.data.tolist() for p in parts] == [[0, 1], [2, 3]]
    out = rt.torch_zeros(4, 4)
    rt.jit_ops.aten.matmul(rt.torch_ones(4, 4), rt.torch_eye(4), out)
    assert out.data.tolist() == [[1.0] * 4] * 4
    assert repr(rt.jit_ops.aten.fft_fft) == (
        "function_schema (name = aten::fft_fft)\narguments: self - TensorType, n - "
        "OptionalType, dim - IntType, norm - OptionalType \nreturns: TensorType \n")
    assert repr(rt.jit_ops) == "Object of class <torch_ops>\n"
    # types come from the op's annotations, not from parameter names: select's
    # `index` is a position (an int), index_select's a tensor
    assert "index - IntType" in repr(rt.jit_ops.aten.select)
    assert "index - TensorType" in repr(rt.jit_ops.aten.index_select)


def test_jit_tuple_and_jit_scalar():
    tup = rt.jit_tuple({"a": t([1.0]), "b": t([2.0])})
    assert isinstance(tup, tuple) and tup.names == ["a", "b"]
    assert rt.jit_scalar([3]) == 3
    with pytest.raises(ValueError, match="single value"):
        rt.jit_scalar([1, 2])
    tr = rt.jit_trace(lambda p: p[0] + p[1], tup)
    assert tr((t([1.0]), t([5.0]))).item() == 6.0
    assert len(walk(tr.traced.inputs)) == 2
