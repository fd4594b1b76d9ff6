"""jit_save_for_mobile(): the lite interpreter's archive, loaded by PyTorch's
`torch.jit.mobile._load_for_lite_interpreter()` (the oracle) and run there: its
outputs are ours. The same file is a TorchScript archive `torch.jit.load()` reads."""
from __future__ import annotations

import warnings
import zipfile

import numpy as np
import pytest
import torch
import torch.jit.mobile

import rtorch_py as rt
from rtorch_py.jit import jit_save_for_mobile
from rtorch_py.jit.aten import Unsupported
from rtorch_py.jit.mobile import OVERLOADS, REQUIRED


def _torch(x: rt.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.array(x.data))


def _same(ours, theirs) -> None:
    if isinstance(ours, (tuple, list)):
        assert isinstance(theirs, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
        return
    np.testing.assert_allclose(np.asarray(ours.data), theirs.detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def lite_runs_as_ours(traced, path, *inputs) -> torch.jit.mobile.LiteScriptModule:
    jit_save_for_mobile(traced, path)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    _same(traced(*inputs), lite(*[_torch(x) for x in inputs]))
    _same(traced(*inputs), torch.jit.load(str(path))(*[_torch(x) for x in inputs]))
    return lite


def test_a_traced_function(tmp_path):
    tr = rt.jit_trace(lambda x: rt.torch_relu(x), rt.torch_tensor([-1.0, 0.0, 1.0]))
    lite_runs_as_ours(tr, tmp_path / "relu.pt", rt.torch_randn(7))
    with zipfile.ZipFile(tmp_path / "relu.pt") as z:
        assert "relu/bytecode.pkl" in z.namelist()


def test_tensor_constants_scalars_and_tuples(tmp_path):
    c = rt.torch_tensor([2.0, -3.0, 4.0])
    tr = rt.jit_trace(lambda x: rt.torch_relu(x) * c + 1, rt.torch_ones(3))
    lite_runs_as_ours(tr, tmp_path / "const.pt", rt.torch_randn(3))
    tr = rt.jit_trace(lambda x, y: (rt.torch_cat([x, y], 0), x * 2 - y, rt.torch_sigmoid(x / y)),
                      rt.torch_ones(2), rt.torch_ones(2))
    lite_runs_as_ours(tr, tmp_path / "tuple.pt", rt.torch_randn(2), rt.torch_rand(2) + 1)


def test_reductions_and_shapes(tmp_path):
    def fn(x):
        y = rt.torch_transpose(x, 0, 1).unsqueeze(0).squeeze(0)
        z = y.permute([1, 0])
        return (x.sum(), x.sum(dim=1, keepdim=True), z.mean(dim=0), y.clamp(min=0.25),
                rt.torch_squeeze(x.unsqueeze(0)))
    lite_runs_as_ours(rt.jit_trace(fn, rt.torch_ones(2, 3)), tmp_path / "shapes.pt",
                      rt.torch_randn(4, 3))


def test_an_op_declaring_its_schema(tmp_path):
    # tan's lite-interpreter form is its declaration's `mobile="self"`, nothing else
    # (docs/adding-an-op.md's example)
    tr = rt.jit_trace(lambda x: rt.torch_tan(x) * 2, rt.torch_ones(3))
    lite_runs_as_ours(tr, tmp_path / "tan.pt", rt.torch_rand(5))


def test_an_overload_declared_on_the_op(tmp_path):
    # clamp with tensor bounds is aten::clamp.Tensor: its declaration's `mobile=` names
    # both overloads, picked by what min and max hold (docs/adding-an-op.md's example)
    tr = rt.jit_trace(lambda x, lo, hi: (rt.torch_clamp(x, lo, hi), x.clamp(max=hi),
                                         x.clamp(min=-0.5)),
                      rt.torch_ones(2, 3), rt.torch_zeros(3), rt.torch_ones(2, 1))
    lite_runs_as_ours(tr, tmp_path / "clamp.pt", rt.torch_randn(2, 3),
                      rt.torch_rand(3) - 1, rt.torch_rand(2, 1))


def test_an_mlp_in_the_mode_it_was_saved_in(tmp_path):
    # (both modes traced: forward picks one by the module's mode; batch norm tells them
    # apart: batch statistics, or the running ones)
    mlp = rt.nn_sequential(rt.nn_linear(3, 8), rt.nn_relu(), rt.nn_batch_norm1d(8),
                           rt.nn_linear(8, 8), rt.nn_tanh(), rt.nn_linear(8, 1))
    tr = rt.jit_trace(mlp, rt.torch_randn(4, 3))
    x = rt.torch_randn(5, 3)
    outputs = {}
    for training in (True, False):
        tr.train(training)
        lite = lite_runs_as_ours(tr, tmp_path / f"mlp{training}.pt", x)
        outputs[training] = lite(_torch(x)).detach().numpy()
    assert not np.allclose(outputs[True], outputs[False])


def test_convolutional_networks(tmp_path):
    cnn = rt.nn_sequential(rt.nn_conv2d(1, 4, 3), rt.nn_relu(), rt.nn_max_pool2d(2),
                           rt.nn_flatten(), rt.nn_linear(36, 2), rt.nn_log_softmax(1))
    cnn.eval()
    lite_runs_as_ours(rt.jit_trace(cnn, rt.torch_randn(1, 1, 8, 8)), tmp_path / "cnn.pt",
                      rt.torch_randn(3, 1, 8, 8))
    conv = rt.nn_sequential(rt.nn_conv1d(2, 3, 3, stride=2, padding=1), rt.nn_batch_norm1d(3),
                            rt.nn_dropout(0.5))
    conv.eval()
    lite_runs_as_ours(rt.jit_trace(conv, rt.torch_randn(2, 2, 9)), tmp_path / "conv1d.pt",
                      rt.torch_randn(4, 2, 11))
    conv3 = rt.nn_conv3d(2, 2, (1, 2, 3), padding=(0, 1, 1), dilation=(1, 2, 1))
    lite_runs_as_ours(rt.jit_trace(conv3, rt.torch_randn(1, 2, 3, 5, 5), respect_mode=False),
                      tmp_path / "conv3d.pt", rt.torch_randn(2, 2, 3, 6, 4))


def test_operators_it_does_not_compile_are_refused_naming_them(tmp_path):
    tr = rt.jit_trace(lambda x: rt.torch_relu(x).cumsum(0), rt.torch_ones(2))
    with pytest.raises(Unsupported, match=r"jit_save_for_mobile: the operator aten::cumsum is not "
                       r"given to the lite interpreter here \(`torch\.cumsum\(.*OVERLOADS"):
        jit_save_for_mobile(tr, tmp_path / "cumsum.pt")
    assert not (tmp_path / "cumsum.pt").exists()
    tr = rt.jit_trace(lambda x: rt.torch_max(x, dim=0), rt.torch_ones(2, 3))
    with pytest.raises(Unsupported, match="jit_save_for_mobile: "):
        jit_save_for_mobile(tr, tmp_path / "max.pt")
    with pytest.raises(ValueError, match="Only `script_function` or `script_module`"):
        jit_save_for_mobile(lambda x: x, tmp_path / "f.pt")


def test_the_archive_pytorch_writes_from_ours_runs_alike(tmp_path):
    # PyTorch's own export of our archive, beside ours: the same outputs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = rt.nn_sequential(rt.nn_linear(3, 4), rt.nn_relu(), rt.nn_linear(4, 2))
        tr = rt.jit_trace(mlp, rt.torch_randn(2, 3))
        rt.jit_save(tr, tmp_path / "mlp.pt")
        torch.jit.load(str(tmp_path / "mlp.pt"))._save_for_lite_interpreter(
            str(tmp_path / "theirs.ptl"))
    x = rt.torch_randn(6, 3)
    ours = lite_runs_as_ours(tr, tmp_path / "ours.ptl", x)
    theirs = torch.jit.mobile._load_for_lite_interpreter(str(tmp_path / "theirs.ptl"))
    _same(ours(_torch(x)).detach(), theirs(_torch(x)))


@pytest.mark.parametrize("name", sorted(OVERLOADS))
def test_each_overload_is_pytorchs(name):
    # the schema the compiler orders arguments by, as libtorch registers it
    schemas = {s.overload_name: s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")}
    for ov in OVERLOADS[name]:
        assert ov.name in schemas, f"aten::{name} has no overload {ov.name!r}"
        args = [a for a in schemas[ov.name].arguments if not a.is_out]
        assert [p for p, _ in ov.params] == [a.name for a in args]
        assert set(ov.keyword_only) == {a.name for a in args if a.kwarg_only}
        int_lists = dict(ov.int_lists)
        for (p, default), a in zip(ov.params, args):
            if str(a.type) in ("List[int]", "Optional[List[int]]") and a.N is not None:
                assert int_lists.get(p) == a.N, p
            else:
                assert p not in int_lists, p
            if not a.has_default_value():
                assert default is REQUIRED, p
            elif isinstance(a.default_value, list) and isinstance(default, int):
                assert [default] * len(a.default_value) == a.default_value, p
            else:
                assert default == a.default_value, p
