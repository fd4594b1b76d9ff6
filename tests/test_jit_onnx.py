"""ONNX export (jit_export_onnx): traced functions and modules as ONNX models that
`onnx.checker` accepts and ONNX Runtime (the oracle) runs with our outputs; what
can't be exported is refused with the op's name."""
from __future__ import annotations

import numpy as np
import pytest

import rtorch_py as rt
from helpers import needs_r, run_r
from op_cases import cases, materialize
from rtorch_py.jit import onnx as jit_onnx
from rtorch_py.jit.aten import Unsupported, display_name

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def run_onnx(path, *arrays):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), arrays)})


def rt_of(a):
    return rt.torch_tensor(a, dtype="int64") if a.dtype == np.int64 else rt.torch_tensor(a)


def check(obj, arrays, tmp_path, atol=1e-5, **kw):
    path = tmp_path / "model.onnx"
    model = rt.jit_export_onnx(obj, path, **kw)
    onnx.checker.check_model(onnx.load(str(path)))
    assert model.opset_import[0].version == kw.get("opset_version", jit_onnx.DEFAULT_OPSET)
    got = run_onnx(path, *arrays)
    want = obj(*[rt_of(a) for a in arrays])
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape) and g.dtype == w.data.dtype
        np.testing.assert_allclose(g, w.data, atol=atol, rtol=1e-5)


class CNN(rt.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = rt.nn_conv2d(1, 4, 3, padding=1)
        self.bn = rt.nn_batch_norm2d(4)
        self.c2 = rt.nn_conv2d(4, 8, 3, stride=2, padding="valid")
        self.fc = rt.nn_linear(8, 3)
        self.drop = rt.nn_dropout(0.5)

    def forward(self, x):
        x = rt.nnf_max_pool2d(rt.nnf_relu(self.bn(self.c1(x))), 2)
        x = rt.nnf_adaptive_avg_pool2d(rt.nnf_gelu(self.c2(x)), 1)
        x = self.drop(rt.torch_flatten(x, start_dim=1))
        return rt.nnf_log_softmax(self.fc(x), dim=1)


def test_a_cnn_exports_and_onnx_runtime_agrees(tmp_path):
    net = CNN()
    x = np.random.randn(2, 1, 8, 8).astype(np.float32)
    net.train()  # (traced in both modes: the export takes the eval one)
    sm = rt.jit_trace(net, rt_of(x))
    sm.eval()
    check(sm, [x], tmp_path)


def test_mlp_embedding_layer_norm_and_dynamic_batch(tmp_path):
    emb = rt.nn_embedding(20, 6)
    ln = rt.nn_layer_norm(6)
    mlp = rt.nn_sequential(rt.nn_linear(6, 16), rt.nn_leaky_relu(0.1), rt.nn_linear(16, 4))
    fn = lambda ids: rt.nnf_softmax(mlp(ln(emb(ids)).mean(dim=1)), dim=-1)
    ids = np.random.randint(0, 20, (5, 7)).astype(np.int64)
    check(rt.jit_trace(fn, rt_of(ids)), [ids], tmp_path)
    check(rt.jit_trace(fn, rt_of(ids)), [ids], tmp_path, opset_version=18,
          input_names=["ids"], output_names=["probs"])
    sess = ort.InferenceSession(str(tmp_path / "model.onnx"))
    assert [i.name for i in sess.get_inputs()] == ["ids"]
    rt.jit_export_onnx(rt.jit_trace(lambda x: mlp(x).relu(), rt.torch_randn(3, 6)),
                       tmp_path / "dyn.onnx", dynamic_batch=True)
    x = np.random.randn(9, 6).astype(np.float32)
    np.testing.assert_allclose(run_onnx(tmp_path / "dyn.onnx", x)[0],
                               mlp(rt_of(x)).relu().data, atol=1e-5)


def test_what_onnx_cannot_express_is_refused_by_name(tmp_path):
    x = rt.torch_randn(4, 3)
    with pytest.raises(Unsupported, match="torch_cumsum has no ONNX export"):
        rt.jit_export_onnx(rt.jit_trace(lambda v: v.cumsum(dim=0), x), tmp_path / "a.onnx")
    with pytest.raises(Unsupported, match="nnf_dropout: dropout in training mode"):
        rt.jit_export_onnx(rt.jit_trace(lambda v: rt.nnf_dropout(v, 0.5, True), x),
                           tmp_path / "b.onnx")
    with pytest.raises(Unsupported, match="add_ has no ONNX export"):
        rt.jit_export_onnx(rt.jit_trace(lambda v: v.clone().add_(1), x), tmp_path / "c.onnx")
    with pytest.raises(TypeError, match="exports a traced script function or module"):
        rt.jit_export_onnx(lambda v: v, tmp_path / "d.onnx")


# Every op sample whose op has a converter: exported and run by ONNX Runtime (float32),
# or refused by name when the converter can't express those arguments.
def _onnx_cases() -> list:
    out = []
    for c in cases():
        if c.spec.key not in jit_onnx.CONVERTERS:
            continue
        arrays, _, rebuild = materialize(c.sample, np.float32)
        try:
            res = c.spec.fn(*rebuild([rt_of(a) for a in arrays])[0],
                            **rebuild([rt_of(a) for a in arrays])[1])
        except Exception:
            continue
        flat = res if isinstance(res, (list, tuple)) else [res]
        if flat and all(isinstance(v, rt.Tensor) and v.numel() > 0 for v in flat) and \
                all(a.size for a in arrays):
            out.append(c)
    return out


ONNX_CASES = _onnx_cases()


@pytest.mark.parametrize("case", ONNX_CASES, ids=[c.id for c in ONNX_CASES])
def test_every_exportable_op_sample(case, tmp_path):
    arrays, _, rebuild = materialize(case.sample, np.float32)

    def fn(*ts):
        args, kwargs = rebuild(list(ts))
        return case.spec.fn(*args, **kwargs)
    tr = rt.jit_trace(fn, *[rt_of(a) for a in arrays], strict=False)
    try:
        rt.jit_export_onnx(tr, tmp_path / "op.onnx")
    except Unsupported as e:
        assert display_name(case.spec.key) in str(e)
        return
    got = run_onnx(tmp_path / "op.onnx", *arrays)
    want = fn(*[rt_of(a) for a in arrays])
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g.astype(np.float64), w.data.astype(np.float64),
                                   atol=1e-4, rtol=1e-4)


def test_the_supported_list_names_ops_as_users_know_them():
    from rtorch_py.ops import REGISTRY
    from rtorch_py.tensor import TRACEABLE
    assert [k for k in jit_onnx.CONVERTERS if k not in REGISTRY and k not in TRACEABLE] == []
    names = jit_onnx.supported_ops()
    assert "nnf_linear" in names and "torch_matmul" in names and "nnf_conv2d" in names


@needs_r
def test_export_from_r(tmp_path):
    script = tmp_path / "onnx.R"
    script.write_text(f"""
library(torch)
torch_manual_seed(2)
net <- nn_sequential(nn_linear(4, 8), nn_relu(), nn_linear(8, 2))
x <- torch_randn(3, 4)
tr <- jit_trace(net, x)
jit_export_onnx(tr, "{tmp_path / 'r.onnx'}")
net$eval()
torch_save(x, "{tmp_path / 'x.pt'}")  # (R's lists are R objects in these files)
torch_save(net(x), "{tmp_path / 'y.pt'}")
""")
    res = run_r(str(script))
    assert res.returncode == 0, res.stderr[-2000:]
    x, want = (rt.torch_load(str(tmp_path / f)) for f in ("x.pt", "y.pt"))
    got = run_onnx(tmp_path / "r.onnx", x.data)[0]
    np.testing.assert_allclose(got, want.data, atol=1e-5)


@pytest.mark.parametrize("layer,kw", [
    ("nn_lstm", dict(num_layers=2, batch_first=True)), ("nn_lstm", dict(bidirectional=True)),
    ("nn_gru", dict(bidirectional=True, num_layers=2)), ("nn_gru", dict(batch_first=True)),
    ("nn_rnn", dict(nonlinearity="relu")), ("nn_rnn", dict(num_layers=2))])
def test_recurrent_layers_export(layer, kw, tmp_path):
    rnn = getattr(rt, layer)(5, 4, **kw)
    batch = 3 if kw.get("batch_first") else 6
    h0 = rt.torch_randn(kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1), batch, 4)
    fn = (lambda x: rnn(x)) if layer != "nn_gru" else (lambda x: rnn(x, h0))
    x = np.random.randn(3, 6, 5).astype(np.float32)
    tr = rt.jit_trace(lambda v: tuple(o for o in _flat(fn(v))), rt_of(x))
    check(tr, [x], tmp_path)


def _flat(x):
    return [v for item in x for v in _flat(item)] if isinstance(x, (list, tuple)) else [x]
