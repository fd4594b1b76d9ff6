"""TorchScript archives both ways with PyTorch 2.13 (the oracle): our traces saved
with jit_save() load in `torch.jit.load` and give the same outputs; archives PyTorch
wrote (`torch.jit.trace` and `torch.jit.script`) load with jit_load() and give
PyTorch's outputs, from Python and from R; hostile archives are refused before
anything of them runs."""
from __future__ import annotations

import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import needs_r, run_r
from op_cases import cases, materialize
from rtorch_py.jit import aten
from rtorch_py.jit.interpreter import TorchScriptError

nn = torch.nn


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(v) for v in x]
    if isinstance(x, torch.Tensor):
        return x.detach().resolve_conj().numpy()
    return np.asarray(x.data if isinstance(x, rt.Tensor) else x)


def assert_close(ours, theirs, atol=None):
    """Same structure, shapes, dtypes; values within float tolerance (by dtype)."""
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs)
        for o, t_ in zip(ours, theirs):
            assert_close(o, t_, atol)
        return
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    tight = a.dtype in (np.float64, np.complex128)
    np.testing.assert_allclose(a, b, atol=atol if atol is not None else 1e-10 if tight else 1e-5,
                               rtol=1e-7 if tight else 1e-5)


def rt_of(a: np.ndarray) -> rt.Tensor:
    return rt.torch_tensor(a, dtype="int64") if a.dtype == np.int64 else rt.torch_tensor(a)


# --------------------------------------------------------------------------
# PyTorch's models (the families the issue names), traced and scripted


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.bn, self.l2 = nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2)

    def forward(self, x):
        return torch.relu(self.l2(torch.relu(self.bn(self.l1(x))))) * 2.5 + torch.tensor([1.0, 2.0])


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.bn = nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4)
        self.pool, self.c2 = nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, stride=2)
        self.ap, self.fc, self.drop = nn.AdaptiveAvgPool2d((1, 1)), nn.Linear(8, 3), nn.Dropout(0.3)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.c1(x))))
        x = torch.flatten(self.ap(torch.relu(self.c2(x))), 1)
        return torch.log_softmax(self.fc(self.drop(x)), dim=1)


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.lstm = nn.LSTM(6, 5, num_layers=2, batch_first=True)
        self.gru = nn.GRU(5, 4, bidirectional=True)

    def forward(self, x):
        y, (h, c) = self.lstm(self.emb(x))
        z, hg = self.gru(y.transpose(0, 1))
        return z, h


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.att, self.ln = nn.MultiheadAttention(8, 2), nn.LayerNorm(8)

    def forward(self, x):
        y, w = self.att(x, x, x)
        return self.ln(x + y), w


MODELS = {
    "mlp": (MLP, lambda: np.random.randn(5, 4).astype(np.float32)),
    "cnn": (CNN, lambda: np.random.randn(2, 1, 8, 8).astype(np.float32)),
    "rnn": (RNN, lambda: np.random.randint(0, 10, (2, 7)).astype(np.int64)),
    "attention": (Attention, lambda: np.random.randn(5, 2, 8).astype(np.float32)),
    "sequential": (lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)),
                   lambda: np.random.randn(6, 3).astype(np.float32)),
}


@pytest.fixture(scope="module")
def pytorch_archives(tmp_path_factory) -> dict:
    """{(model, "trace"|"script"): (path, input, PyTorch's output)}"""
    torch.manual_seed(0)
    np.random.seed(0)
    out = {}
    d = tmp_path_factory.mktemp("pytorch-archives")
    for name, (make, example) in MODELS.items():
        model = make().eval()
        x = example()
        for how in ("trace", "script"):
            sm = torch.jit.trace(model, torch.from_numpy(x)) if how == "trace" \
                else torch.jit.script(model)
            path = d / f"{name}_{how}.pt"
            sm.save(str(path))
            x2 = example()  # (a new input: traces must generalise)
            out[(name, how)] = (path, x2, _np(sm(torch.from_numpy(x2))))
    return out


@pytest.mark.parametrize("how", ["trace", "script"])
@pytest.mark.parametrize("name", list(MODELS))
def test_pytorch_archives_load_and_match(name, how, pytorch_archives):
    path, x, want = pytorch_archives[(name, how)]
    m = rt.jit_load(path)
    assert_close(m(rt_of(x)), want)
    theirs = torch.jit.load(str(path))
    assert list(m.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(m.state_dict()[k].data, v.numpy())


def test_a_loaded_module_trains_and_saves_back_for_pytorch(pytorch_archives, tmp_path):
    path, x, want = pytorch_archives[("mlp", "script")]
    m = rt.jit_load(path)
    m.train()
    assert m.training and m.bn.training
    y = m(rt_of(np.random.randn(16, 4).astype(np.float32)))
    y.sum().backward()
    assert m.l1.weight.grad is not None
    m.eval()
    out = tmp_path / "again.pt"
    rt.jit_save(m, out)
    back = torch.jit.load(str(out))
    assert_close(m(rt_of(x)), back(torch.from_numpy(x)))


# --------------------------------------------------------------------------
# Our traces, saved for PyTorch


class Net(rt.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = rt.nn_conv2d(1, 3, 3, padding=1)
        self.bn = rt.nn_batch_norm2d(3)
        self.fc = rt.nn_linear(3 * 4 * 4, 5)
        self.drop = rt.nn_dropout(0.25)

    def forward(self, x):
        x = rt.nnf_max_pool2d(rt.nnf_relu(self.bn(self.conv(x))), 2)
        return rt.nnf_log_softmax(self.fc(self.drop(rt.torch_flatten(x, start_dim=1))), dim=1)


class Seq(rt.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = rt.nn_embedding(12, 5)
        self.lstm = rt.nn_lstm(5, 6, num_layers=2, batch_first=True)
        self.gru = rt.nn_gru(6, 3, bidirectional=True)
        self.att = rt.nn_multihead_attention(6, 2)

    def forward(self, ids):
        e = self.emb(ids)
        y, (h, c) = self.lstm(e)
        q = y.transpose(0, 1)
        a, w = self.att(q, q, q)
        z, hz = self.gru(a)
        return z, w


OURS = {
    "cnn": (Net, lambda: np.random.randn(2, 1, 8, 8).astype(np.float32)),
    "sequence": (Seq, lambda: np.random.randint(0, 12, (3, 7)).astype(np.int64)),
}


@pytest.mark.parametrize("name", list(OURS))
def test_our_traces_load_in_pytorch_with_both_modes(name, tmp_path):
    make, example = OURS[name]
    model = make()
    x = example()
    sm = rt.jit_trace(model, rt_of(x))
    path = tmp_path / f"{name}.pt"
    rt.jit_save(sm, path)
    theirs = torch.jit.load(str(path))
    x2 = example()
    model.eval()
    theirs.eval()
    assert_close(theirs(torch.from_numpy(x2)), model(rt_of(x2)))
    assert set(theirs.state_dict()) == set(model.state_dict())
    # and back: our loader reads what we wrote
    again = rt.jit_load(path)
    again.eval()
    assert_close(again(rt_of(x2)), model(rt_of(x2)))


def test_functions_with_containers_save_and_run_in_pytorch(tmp_path):
    k = rt.torch_tensor(np.array([0.5, -1.0], dtype=np.float32))

    def fn(xs, pair, d):
        y = rt.torch_cat(xs, dim=0) * k.sum() + d["a"][0]
        return (y.softmax(-1), pair[1] - pair[0][0:1])
    args = ([rt.torch_randn(2), rt.torch_randn(3)], (rt.torch_randn(4), rt.torch_randn(1)),
            {"a": rt.torch_randn(2)})
    tr = rt.jit_trace(fn, *args)
    rt.jit_save(tr, tmp_path / "fn.pt")
    theirs = torch.jit.load(str(tmp_path / "fn.pt"))
    new = ([rt.torch_randn(2), rt.torch_randn(3)], (rt.torch_randn(4), rt.torch_randn(1)),
           {"a": rt.torch_randn(2)})
    to_t = lambda v: torch.from_numpy(v.data.copy())
    got = theirs([to_t(v) for v in new[0]], tuple(to_t(v) for v in new[1]),
                 {"a": to_t(new[2]["a"])})
    assert_close(list(tr(*new)), list(got))


def test_serialize_round_trip_keeps_requires_grad():
    sm = rt.jit_trace(rt.nn_linear(1, 1), rt.torch_randn(1, 1))
    sm.bias.requires_grad_(False)
    raw = rt.jit_serialize(sm)
    assert isinstance(raw, bytes) and raw[:2] == b"PK"
    back = rt.jit_unserialize(raw)
    x = rt.torch_randn(3, 1)
    assert_close(back(x), sm(x))
    assert not back.bias.requires_grad and back.weight.requires_grad
    with pytest.raises(ValueError, match="raw vector"):
        rt.jit_unserialize("not bytes")


# --------------------------------------------------------------------------
# Every op of the registry: its traced call written as TorchScript, loaded by PyTorch


def _op_cases() -> list:
    """One sample call per op whose result a trace can return (tensors)."""
    chosen, seen = [], set()
    for c in cases():
        if c.spec.key in seen:
            continue
        arrays, _, rebuild = materialize(c.sample, np.float64)
        try:
            out = c.spec.fn(*rebuild([rt.torch_tensor(a) for a in arrays])[0],
                            **rebuild([rt.torch_tensor(a) for a in arrays])[1])
        except Exception:
            continue
        flat = out if isinstance(out, (list, tuple)) else [out]
        if flat and all(isinstance(v, rt.Tensor) and v.layout is rt.tensor.strided
                        for v in flat):
            seen.add(c.spec.key)
            chosen.append(c)
    return chosen


OP_CASES = _op_cases()


@pytest.mark.parametrize("case", OP_CASES, ids=[c.spec.key for c in OP_CASES])
def test_every_traced_op_saves_for_pytorch_or_is_refused_by_name(case):
    arrays, _, rebuild = materialize(case.sample, np.float64)

    def tensors():  # (fresh inputs for each run: an in-place op changes its own)
        return [rt.torch_tensor(a.copy()) for a in arrays]

    def fn(*ts):
        args, kwargs = rebuild(list(ts))
        return case.spec.fn(*args, **kwargs)
    tr = rt.jit_trace(fn, *tensors(), strict=False)
    buf = io.BytesIO()
    if not case.spec.torchscript:
        with pytest.raises(aten.Unsupported, match=aten.display_name(case.spec.key)):
            rt.jit_save(tr, buf)
        return
    rt.jit_save(tr, buf)
    got = torch.jit.load(io.BytesIO(buf.getvalue()))(*[torch.from_numpy(a.copy())
                                                       for a in arrays])
    assert_close(fn(*tensors()), got)
    ours = rt.jit_load(io.BytesIO(buf.getvalue()))(*tensors())
    assert_close(ours, got)


# --------------------------------------------------------------------------
# Hostile archives: refused before anything runs


def _archive_with(tmp_path: Path, data_pkl: bytes | None = None, code: str | None = None) -> Path:
    good = tmp_path / "good.pt"
    rt.jit_save(rt.jit_trace(rt.torch_relu, rt.torch_randn(2)), good)
    bad = tmp_path / "bad.pt"
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("/data.pkl") and data_pkl is not None:
                data = data_pkl
            if item.filename.endswith("code/__torch__.py") and code is not None:
                data = code.encode()
            zout.writestr(item, data)
    return bad


class _System:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


def test_a_pickle_naming_os_system_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    bad = _archive_with(tmp_path, data_pkl=pickle.dumps(_System(f"touch {marker}"), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match=r"refuses to load '(posix|os)\.system'"):
        rt.jit_load(bad)
    assert not marker.exists()


HOSTILE_CODE = [
    ("__import__('os').system('touch {m}')", "the name `__import__`"),
    ("open('{m}', 'w')", "the name `open`"),
    ("argument_1.__class__", "the attribute `__class__`"),
    ("eval('1')", "the name `eval`"),
    ("(lambda: 1)()", "`Lambda`"),
]


@pytest.mark.parametrize("expr,named", HOSTILE_CODE)
def test_torchscript_code_outside_torchscript_is_refused_and_nothing_runs(expr, named,
                                                                        tmp_path):
    marker = tmp_path / "ran"
    code = ("class PlaceholderModule(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
            "  training : bool\n  def forward(self: __torch__.PlaceholderModule,\n"
            "    argument_1: Tensor) -> Tensor:\n"
            f"    _0 = {expr.format(m=marker)}\n    return torch.relu(argument_1)\n")
    bad = _archive_with(tmp_path, code=code)
    with pytest.raises(TorchScriptError) as e:
        rt.jit_load(bad)
    assert named in str(e.value) and "nothing of the file was run" in str(e.value)
    assert not marker.exists()


def test_unknown_operators_are_named():
    cu = rt.jit_compile("def f(x):\n  return torch.frobnicate(x)\n")
    with pytest.raises(TorchScriptError, match=r"torch\.frobnicate \(aten::frobnicate\) is "
                       "not supported"):
        cu.f(rt.torch_randn(2))


# --------------------------------------------------------------------------
# From R: PyTorch's archives load in R; R's traces load in PyTorch


R_SCRIPT = r"""
library(torch)
dir <- Sys.getenv("JIT_DIR")
# R's lists are R objects in torch_save()'s files: tensors go to Python one file each
save_each <- function(tensors, stem) {
  for (i in seq_along(tensors)) torch_save(tensors[[i]], file.path(dir, sprintf("%s_%d.pt", stem, i)))
}
cases <- jsonlite::fromJSON(file.path(dir, "cases.json"))
for (name in names(cases)) {
  m <- jit_load(file.path(dir, paste0(name, ".pt")))
  x <- torch_load(file.path(dir, paste0(name, "_x.pt")))
  out <- m(x)
  save_each(if (is.list(out)) out else list(out), paste0(name, "_r"))
}
# R traces, for PyTorch
net <- nn_module(
  initialize = function() {
    self$conv <- nn_conv2d(1, 2, 3)
    self$fc <- nn_linear(2 * 3 * 3, 4)
    self$emb <- nn_embedding(6, 4)
  },
  forward = function(x, ids) {
    y <- x %>% self$conv() %>% nnf_relu() %>% nnf_max_pool2d(2) %>% torch_flatten(start_dim = 2)
    self$fc(y) + self$emb(ids)$sum(dim = 2)
  }
)
torch_manual_seed(1)
model <- net()
x <- torch_randn(2, 1, 8, 8)
ids <- torch_tensor(matrix(c(1L, 2L, 6L, 3L), 2, 2))
tr <- jit_trace(model, x, ids)
jit_save(tr, file.path(dir, "from_r.pt"))
x2 <- torch_randn(3, 1, 8, 8)
ids2 <- torch_tensor(matrix(c(1L, 5L, 6L, 3L, 4L, 2L), 3, 2))
model$eval()
save_each(list(x2, ids2, model(x2, ids2)), "from_r_io")
f <- function(a, b) torch_relu(a$matmul(b))[1:2, ]
trf <- jit_trace(f, torch_randn(3, 4), torch_randn(4, 2))
jit_save(trf, file.path(dir, "from_r_fn.pt"))
a <- torch_randn(3, 4); b <- torch_randn(4, 2)
save_each(list(a, b, f(a, b)), "from_r_fn_io")
"""


def _load_each(folder, stem: str, n: int) -> list:
    return [rt.torch_load(str(folder / f"{stem}_{i}.pt")) for i in range(1, n + 1)]


@needs_r
def test_both_ways_from_r(pytorch_archives, tmp_path):
    names = {}
    for (name, how), (path, x, want) in pytorch_archives.items():
        key = f"{name}_{how}"
        (tmp_path / f"{key}.pt").write_bytes(path.read_bytes())
        rt.torch_save(rt_of(x), str(tmp_path / f"{key}_x.pt"))
        names[key] = want
    (tmp_path / "cases.json").write_text(json.dumps({k: 1 for k in names}))
    script = tmp_path / "jit.R"
    script.write_text(R_SCRIPT)
    res = run_r(str(script), env={"JIT_DIR": str(tmp_path)})
    assert res.returncode == 0, res.stderr[-3000:]
    for key, want in names.items():
        want = want if isinstance(want, list) else [want]
        assert_close(_load_each(tmp_path, f"{key}_r", len(want)), want)
    theirs = torch.jit.load(str(tmp_path / "from_r.pt"))
    theirs.eval()
    x2, ids2, want = _load_each(tmp_path, "from_r_io", 3)
    got = theirs(torch.from_numpy(x2.data.copy()), torch.from_numpy(ids2.data.copy()))
    assert_close(got, want)  # (the trace has R's index shift: ids are 1-based)
    fn = torch.jit.load(str(tmp_path / "from_r_fn.pt"))
    a, b, want = _load_each(tmp_path, "from_r_fn_io", 3)
    assert_close(fn(torch.from_numpy(a.data.copy()), torch.from_numpy(b.data.copy())), want)
