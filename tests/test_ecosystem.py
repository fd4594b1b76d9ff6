"""What packages built on R torch (luz, torchvision, safetensors, torchopt) use,
checked directly (issue 19): CPU autocast against PyTorch's, the grid sampler and
affine grids as functions, layers' positional `inplace`, libtorch's errors and
permissions, float8, and torch_save()'s files: R torch 0.17's layout byte for
byte (reasoned from R torch's R/save.R and R safetensors' write.R) and Python's
safetensors reader. The R side of all this is tests/r/test-ecosystem.R."""
from __future__ import annotations

import io
import subprocess
import json
import struct

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import RT, check_vs_torch, needs_r, rand, run_r

F = torch.nn.functional


# --------------------------------------------------------------------------
# CPU autocast: which ops run in bfloat16, which in float32, which promote

def _under_autocast(fn, *arrays, dtype=None):
    ours = [rt.torch_tensor(a) for a in arrays]
    theirs = [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]
    with rt.with_autocast("cpu", dtype=None if dtype is None else getattr(rt, f"torch_{dtype}")()):
        got = fn(RT, *ours)
    with torch.autocast("cpu", dtype=getattr(torch, dtype or "bfloat16")):
        want = fn(torch, *theirs)
    return got, want


def _bf16(T):
    return torch.bfloat16 if T is torch else rt.torch_bfloat16()


AUTOCAST_CALLS = {
    "mm": (lambda T, a, b: T.mm(a, b), (4, 3), (3, 5)),
    "matmul": (lambda T, a, b: T.matmul(a, b), (2, 4, 3), (3, 5)),
    "bmm": (lambda T, a, b: T.bmm(a, b), (2, 4, 3), (2, 3, 5)),
    "addmm": (lambda T, c, a, b: T.addmm(c, a, b), (4, 5), (4, 3), (3, 5)),
    "baddbmm": (lambda T, c, a, b: T.baddbmm(c, a, b), (2, 4, 5), (2, 4, 3), (2, 3, 5)),
    "conv2d": (lambda T, x, w: T.conv2d(x, w), (1, 2, 5, 5), (3, 2, 3, 3)),
    "linear": (lambda T, x, w, b: (F.linear if T is torch else T.nnf_linear)(x, w, b),
               (4, 3), (2, 3), (2,)),
    "einsum": (lambda T, a, b: T.einsum("ij,jk->ik", a, b), (4, 3), (3, 5)),
    "cat (promote)": (lambda T, a, b: T.cat([a, b.to(dtype=_bf16(T))]), (2, 3), (2, 3)),
    "mse_loss (fp32)": (lambda T, a, b: (F.mse_loss if T is torch else T.nnf_mse_loss)(
        a.to(dtype=_bf16(T)), b.to(dtype=_bf16(T))), (4, 3), (4, 3)),
    "prod (fp32)": (lambda T, a: T.prod(a.to(dtype=_bf16(T))), (3,)),
    "exp (no policy)": (lambda T, a: T.exp(a), (2, 3)),
}


@pytest.mark.parametrize("name", list(AUTOCAST_CALLS))
def test_autocast_casts_as_libtorch_on_the_cpu(name):
    fn, *shapes = AUTOCAST_CALLS[name]
    got, want = _under_autocast(fn, *[rand(*s, dtype=np.float32) for s in shapes])
    assert got.dtype.r_name == {torch.bfloat16: "BFloat16", torch.float32: "Float"}[want.dtype]
    np.testing.assert_allclose(got.to(dtype=rt.torch_float32()).numpy(),
                               want.float().numpy(), rtol=2e-2, atol=2e-2)


def test_autocast_context_restores_the_state_and_takes_a_dtype():
    x = rt.torch_tensor(rand(3, 3, dtype=np.float32))
    ctx = rt.set_autocast("cpu")
    inner = rt.set_autocast("cpu", dtype=rt.torch_float16())
    assert rt.torch_mm(x, x).dtype.r_name == "Half"
    rt.unset_autocast(inner)
    assert rt.torch_mm(x, x).dtype.r_name == "BFloat16"
    rt.unset_autocast(ctx)
    assert rt.torch_mm(x, x).dtype.r_name == "Float"
    with rt.with_autocast("cpu", enabled=False):
        assert rt.torch_mm(x, x).dtype.r_name == "Float"
    with pytest.raises(ValueError, match="only the 'cpu' device"):
        rt.set_autocast("cuda")


def test_autocast_keeps_float64_and_differentiates_through_the_cast():
    a = rt.torch_tensor(rand(3, 3, dtype=np.float32), requires_grad=True)
    d = rt.torch_tensor(rand(3, 3))
    with rt.with_autocast("cpu"):
        assert rt.torch_mm(d, d).dtype.r_name == "Double"  # (libtorch leaves doubles alone)
        y = rt.torch_mm(a, a)
    y.to(dtype=rt.torch_float32()).sum().backward()
    ta = torch.from_numpy(a.detach().numpy().copy()).requires_grad_()
    with torch.autocast("cpu"):
        ty = torch.mm(ta, ta)
    ty.float().sum().backward()
    assert a.grad.dtype.r_name == "Float"
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=2e-2, atol=2e-2)


# --------------------------------------------------------------------------
# nnf_grid_sample and nnf_affine_grid, as PyTorch's F.grid_sample and F.affine_grid

@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_as_pytorch(mode, padding_mode, align_corners):
    def fn(T, x, g):
        f = rt.nnf_grid_sample if T is not torch else F.grid_sample
        return f(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check_vs_torch(fn, rand(2, 3, 5, 4), rand(2, 3, 4, 2, low=-1.2, high=1.2))


@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_5d_and_affine_grid_as_pytorch(align_corners):
    def sample(T, x, g):
        f = rt.nnf_grid_sample if T is not torch else F.grid_sample
        return f(x, g, align_corners=align_corners)
    check_vs_torch(sample, rand(1, 2, 3, 4, 3), rand(1, 2, 2, 3, 3, low=-1.2, high=1.2))

    def affine(T, theta):
        f = rt.nnf_affine_grid if T is not torch else F.affine_grid
        return f(theta, [2, 3, 4, 5], align_corners=align_corners)
    check_vs_torch(affine, rand(2, 2, 3), second_order=True)

    def affine3d(T, theta):
        f = rt.nnf_affine_grid if T is not torch else F.affine_grid
        return f(theta, [1, 1, 2, 3, 4], align_corners=align_corners)
    check_vs_torch(affine3d, rand(1, 3, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_of_an_input_expanded_over_the_batch(mode, dtype):
    """torchvision's ROI pooling: one feature map expanded to one item per box (read
    in place by the sampler's fast path), with its gradient summed back."""
    def fn(T, x, g):
        f = rt.nnf_grid_sample if T is not torch else F.grid_sample
        return f(x.expand(4, 3, 6, 5), g, mode=mode, padding_mode="zeros", align_corners=False)
    check_vs_torch(fn, rand(1, 3, 6, 5).astype(dtype),
                   rand(4, 3, 2, 2, low=-1.2, high=1.2).astype(dtype))


def test_grid_sample_refuses_unknown_modes():
    x, g = rt.torch_zeros(1, 1, 2, 2), rt.torch_zeros(1, 1, 1, 2)
    with pytest.raises(ValueError, match="Unknown mode name 'cubic'"):
        rt.nnf_grid_sample(x, g, mode="cubic")
    with pytest.raises(ValueError, match="Unknown padding mode name 'edge'"):
        rt.nnf_grid_sample(x, g, padding_mode="edge")


# --------------------------------------------------------------------------
# layers, errors and permissions as libtorch's

def test_activation_layers_take_inplace_by_position():
    x = rt.torch_tensor(np.array([-1.0, 2.0], np.float32))
    relu = rt.nn_relu(True)
    assert relu.inplace and relu(x) is x
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0])
    assert rt.nn_leaky_relu(0.2, True).inplace and rt.nn_elu(1.0, True).inplace
    assert not rt.nn_relu().inplace
    with pytest.raises(TypeError, match="at most 1 arguments"):
        rt.nn_relu(True, 2)
    with pytest.raises(TypeError, match="at most 0 arguments"):
        rt.nn_sigmoid(True)  # (R torch's nn_sigmoid takes no inplace)


def test_convolution_kernel_larger_than_its_input_errors_as_libtorch():
    for x, w, kw in [(rand(1, 1, 2, 2), rand(1, 1, 3, 3), {}),
                     (rand(1, 1, 2), rand(1, 1, 3), {}),
                     (rand(1, 1, 4, 4), rand(1, 1, 2, 3), {"dilation": (1, 2)})]:
        conv = {3: "conv1d", 4: "conv2d"}[x.ndim]
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch, conv)(torch.from_numpy(x), torch.from_numpy(w), **kw)
        with pytest.raises(RuntimeError) as ours:
            getattr(rt, "torch_" + conv)(rt.torch_tensor(x), rt.torch_tensor(w), **kw)
        assert str(ours.value) == str(theirs.value)
    # (padded enough, it runs)
    assert rt.torch_conv2d(rt.torch_tensor(rand(1, 1, 2, 2)), rt.torch_tensor(rand(1, 1, 3, 3)),
                           padding=1).shape == (1, 1, 2, 2)


def test_batch_norm_takes_one_value_per_channel_as_libtorch():
    x = rand(1, 3)
    mean, var = rt.torch_zeros(3, dtype=rt.torch_float64()), rt.torch_ones(3, dtype=rt.torch_float64())
    out = rt.nnf_batch_norm(rt.torch_tensor(x), mean, var, training=True)
    tm, tv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    want = torch.batch_norm(torch.from_numpy(x), None, None, tm, tv, True, 0.1, 1e-5, False)
    np.testing.assert_allclose(out.numpy(), want.numpy(), atol=1e-6)
    np.testing.assert_allclose(mean.numpy(), tm.numpy())
    np.testing.assert_array_equal(np.isnan(var.numpy()), np.isnan(tv.numpy()))
    assert rt.nn_batch_norm1d(3)(rt.torch_tensor(x)).shape == (1, 3)


def test_float8_dtypes_convert_as_pytorch():
    x = np.array([1.5, -2.0, 300.0, 1e-3, 0.3], np.float32)
    for name in ("float8_e4m3fn", "float8_e5m2"):
        ours = rt.torch_tensor(x).to(dtype=getattr(rt, "torch_" + name)())
        theirs = torch.from_numpy(x).to(getattr(torch, name))
        assert ours.dtype.is_floating_point and ours.dtype.r_name == str(theirs.dtype)[6:].capitalize()
        np.testing.assert_array_equal(ours.to(dtype=rt.torch_float32()).numpy(),
                                      theirs.float().numpy())


# --------------------------------------------------------------------------
# R torch's option `torch.old_seed_behavior` (luz's tests set it)

def test_old_seed_behaviour_gives_fills_a_second_generator_seeded_by_a_draw():
    """torch_manual_seed seeds a second generator with a draw from the default
    one; fills given no generator (layers' initialisation), torch_normal and
    rrelu's noise draw from it, torch_randn keeps the default one -- as R torch hands libtorch its
    NULL generator or none."""
    try:
        rt.torch_manual_seed(1, old_behavior=True)
        x = rt.torch_randn(5)
        w = rt.torch_empty(2, 3).uniform_(-1, 1)
        n = rt.torch_normal(0, 1, size=3)
        r = rt.nnf_rrelu(rt.torch_tensor([-1.0, -2.0, 3.0]), training=True)
    finally:
        rt.torch_manual_seed(1)
    torch.manual_seed(1)
    second = torch.Generator().manual_seed(int(torch.randint(1, 1_000_000, (1,)).item()))
    np.testing.assert_array_equal(x.numpy(), torch.randn(5).numpy())
    np.testing.assert_array_equal(w.numpy(),
                                  torch.empty(2, 3).uniform_(-1, 1, generator=second).numpy())
    np.testing.assert_array_equal(n.numpy(), torch.normal(0, 1, (3,), generator=second).numpy())
    np.testing.assert_array_equal(
        r.numpy(), torch.rrelu(torch.tensor([-1.0, -2.0, 3.0]), 1 / 8, 1 / 3, True,
                               generator=second).numpy())
    # seeded without the option, fills draw from the default generator again
    rt.torch_manual_seed(1)
    torch.manual_seed(1)
    np.testing.assert_array_equal(rt.torch_empty(3).uniform_().numpy(),
                                  torch.empty(3).uniform_().numpy())


# --------------------------------------------------------------------------
# torch_save(): R torch 0.17's files


def _expected_tensor_file(name: str, arr: np.ndarray, dtype: str, r_meta: str) -> bytes:
    # R safetensors' write_safe(): 8-byte header length, jsonlite::toJSON(meta, auto_unbox =
    # TRUE) of the tensors' entries then "__metadata__", no padding, then the bytes
    header = ('{"%s":{"shape":[%s],"dtype":"%s","data_offsets":[0,%d]},'
              '"__metadata__":{"__r__":%s}}' % (name, ",".join(map(str, arr.shape)), dtype,
                                                arr.nbytes, json.dumps(r_meta))).encode()
    return struct.pack("<Q", len(header)) + header + arr.tobytes()


def test_a_tensor_file_is_laid_out_as_r_torch_writes_it():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    buf = io.BytesIO()
    rt.torch_save(rt.torch_tensor(x, requires_grad=True), buf)
    # R torch's torch_save_to_file("tensor", list("...unnamed..." = obj)): requires_grad by name
    meta = '{"type":"tensor","version":3,"requires_grad":{"...unnamed...":true},"special_dtype":[]}'
    assert buf.getvalue() == _expected_tensor_file("...unnamed...", x, "F32", meta)

    buf = io.BytesIO()
    rt.torch_save(rt.torch_tensor(np.array([1, 2, 3], np.int64)), buf)
    meta = '{"type":"tensor","version":3,"requires_grad":[],"special_dtype":[]}'
    assert buf.getvalue() == _expected_tensor_file("...unnamed...", np.array([1, 2, 3], np.int64),
                                                   "I64", meta)


def test_complex_tensors_are_stored_as_their_bytes_with_their_dtype_named():
    z = np.array([1 + 2j, -3j], np.complex64)
    buf = io.BytesIO()
    rt.torch_save(rt.torch_tensor(z), buf)
    meta = ('{"type":"tensor","version":3,"requires_grad":[],'
            '"special_dtype":{"...unnamed...":{"shape":2,"dtype":"cfloat"}}}')
    assert buf.getvalue() == _expected_tensor_file("...unnamed...", z.view(np.uint8), "U8", meta)
    back = rt.torch_load(buf.getvalue())
    assert back.dtype.r_name == "ComplexFloat"
    np.testing.assert_array_equal(back.numpy(), z)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16",
                                   "int8", "uint8", "bool", "bfloat16"])
def test_files_are_read_by_pythons_safetensors_and_back(dtype, tmp_path):
    from safetensors import safe_open
    from safetensors.torch import save_file
    x = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    path = tmp_path / "x.safetensors"
    rt.torch_save(rt.torch_tensor(x.float().numpy()).to(dtype=getattr(rt, "torch_" + dtype)()),
                  path)
    with safe_open(str(path), framework="pt") as f:
        assert list(f.keys()) == ["...unnamed..."]
        assert json.loads(f.metadata()["__r__"])["type"] == "tensor"
        assert torch.equal(f.get_tensor("...unnamed..."), x)
    # a file written by Python's safetensors: named tensors (Hugging Face's kind of file)
    save_file({"b": x, "a": x.t().contiguous()}, str(tmp_path / "hf.safetensors"))
    got = rt.torch_load(tmp_path / "hf.safetensors")
    assert sorted(got) == ["a", "b"]
    assert got["b"].dtype == getattr(rt, "torch_" + dtype)()
    np.testing.assert_array_equal(got["a"].to(dtype=rt.torch_float64()).numpy(),
                                  x.t().double().numpy())


def test_loading_refuses_what_it_cant_read():
    with pytest.raises(ValueError, match="not a file saved by torch_save"):
        rt.torch_load(b"just some bytes, not a file")
    with pytest.raises(ValueError, match="older RDS format"):
        rt.torch_load(b"\x1f\x8b\x08\x00rest of a gzip stream")
    bad = struct.pack("<Q", 50) + b'{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
    with pytest.raises(ValueError, match="damaged"):
        rt.torch_load(bad + b"\x00" * 4)


def test_libtorch_archives_of_r_torchs_older_files_are_read():
    # R torch's version 1-2 files hold `torch::save(tensor)`: a TorchScript archive of a
    # module whose attribute "0" is the tensor (made here by PyTorch's own writer)
    from rtorch_py.serialization import load_libtorch_tensor
    m = torch.nn.Module()
    m.register_parameter("0", torch.nn.Parameter(torch.arange(6.0).reshape(2, 3)))
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(m), buf)
    got = load_libtorch_tensor(buf.getvalue())
    assert got.requires_grad  # (a parameter there)
    np.testing.assert_array_equal(got.detach().numpy(), np.arange(6.0).reshape(2, 3))


@needs_r
def test_r_files_follow_r_torchs_layout_and_pythons_reader_reads_them(tmp_path):
    from safetensors import safe_open
    script = tmp_path / "save.R"
    script.write_text(f"""
library(torch)
torch_save(list(w = torch_tensor(c(1, 2)), n = 3), "{tmp_path / 'list.pt'}")
net <- nn_linear(2, 1)
torch_save(net, "{tmp_path / 'module.pt'}")
""")
    res = run_r(str(script))
    assert res.returncode == 0, res.stderr
    def header_keys(path):  # (in the file's order; safe_open's keys() are sorted)
        data = path.read_bytes()
        return list(json.loads(data[8:8 + struct.unpack("<Q", data[:8])[0]]))
    keys = header_keys(tmp_path / "list.pt")
    assert keys[1:] == ["__robj__", "__metadata__"]  # (the list's one tensor, by its name)
    with safe_open(str(tmp_path / "list.pt"), framework="pt") as f:
        meta = json.loads(f.metadata()["__r__"])
        assert meta == {"type": "list", "version": 3, "requires_grad": [], "special_dtype": []}
        assert torch.equal(f.get_tensor(keys[0]), torch.tensor([1.0, 2.0]))
        # the list itself, serialize()d by R: XDR format 3
        assert f.get_tensor("__robj__").numpy().tobytes()[:2] == b"X\n"
    with safe_open(str(tmp_path / "module.pt"), framework="pt") as f:
        meta = json.loads(f.metadata()["__r__"])
        assert meta["type"] == "module" and meta["version"] == 3
    assert header_keys(tmp_path / "module.pt") == ["weight", "bias", "__robj__", "__metadata__"]
    got = rt.torch_load(tmp_path / "module.pt")  # (from Python: the module's weights)
    assert list(got) == ["weight", "bias"]


@needs_r
def test_a_state_dict_saved_by_pytorch_loads_into_r_modules_as_in_r_torch(tmp_path):
    # torchvision's pretrained weights are such files: PyTorch's batch norm counts its
    # batches in a 0-d tensor where R torch's module holds a [1] one, and R torch's
    # load_state_dict() copies it in (copy_() broadcasts); a real mismatch still stops
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3))
    net[1].running_mean.normal_()
    net[1].running_var.uniform_(0.5, 2)
    net[1].num_batches_tracked.fill_(5)
    torch.save(net.state_dict(), tmp_path / "net.pth")
    x = torch.randn(2, 2, 5, 5)
    np.savetxt(tmp_path / "x.txt", x.numpy().reshape(-1))
    with torch.no_grad():
        want = net.eval()(x).numpy()
    script = tmp_path / "load.R"
    script.write_text(f"""
library(torch)
net <- nn_sequential(nn_conv2d(2, 3, 3), nn_batch_norm2d(3))
net$load_state_dict(load_state_dict("{tmp_path / 'net.pth'}"))
net$eval()
stopifnot(identical(net[[2]]$num_batches_tracked$shape, 1L),
          net[[2]]$num_batches_tracked$item() == 5)
x <- torch_tensor(array(scan("{tmp_path / 'x.txt'}", quiet = TRUE), c(5, 5, 2, 2)))
y <- net(x$permute(c(4, 3, 2, 1)))
write(as.numeric(aperm(as_array(y), 4:1)), "{tmp_path / 'y.txt'}", ncolumns = 1)
bad <- list(weight = torch_zeros(3, 2, 2, 2), bias = torch_zeros(3))
msg <- tryCatch(nn_conv2d(2, 3, 3)$load_state_dict(bad), error = conditionMessage)
cat(msg, file = "{tmp_path / 'msg.txt'}")
""")
    res = run_r(str(script))
    assert res.returncode == 0, res.stderr
    got = np.loadtxt(tmp_path / "y.txt").reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert "size mismatch for weight" in (tmp_path / "msg.txt").read_text()


# --------------------------------------------------------------------------
# coro: the real package, where installed, is the one torch uses

# A package named coro as the real one is in what torch relies on: its exhausted()
# symbol, an as_iterator() generic whose default knows nothing of torch (functions
# as they are, anything else by length() and `[[`), loop() and collect() through it.
REAL_CORO = {
    "DESCRIPTION": "Package: coro\nVersion: 1.1.0\nTitle: Coroutines (a test double)\n"
                   "Description: The part of coro torch uses.\nLicense: MIT\n"
                   "Authors@R: person('a', 'b', role = c('aut', 'cre'), email = 'a@b.c')\n",
    "NAMESPACE": "export(as_iterator, exhausted, is_exhausted, loop, collect, yield, "
                 "double_of_real_coro)\nS3method(as_iterator, default)\n",
    "R/coro.R": """
double_of_real_coro <- function() TRUE
exhausted <- function() as.symbol(".__exhausted__.")
is_exhausted <- function(x) identical(x, exhausted())
as_iterator <- function(x) UseMethod("as_iterator")
as_iterator.default <- function(x) {
  if (is.function(x)) return(x)
  n <- length(x); i <- 0L
  function() { if (i == n) return(exhausted()); i <<- i + 1L; x[[i]] }
}
collect <- function(x, n = NULL) {
  it <- as_iterator(x); out <- list()
  repeat { v <- it(); if (is_exhausted(v)) break; out[[length(out) + 1L]] <- v }
  out
}
loop <- function(loop) {
  e <- substitute(loop); env <- parent.frame()
  it <- as_iterator(eval(e[[3]], env))
  repeat { v <- it(); if (is_exhausted(v)) break; assign(as.character(e[[2]]), v, envir = env)
           eval(e[[4]], env) }
  invisible(NULL)
}
yield <- function(x) stop("yield() outside a generator")
""",
}


@needs_r
def test_a_real_coro_installed_is_used_and_iterates_data_loaders(tmp_path):
    src = tmp_path / "coro"
    for name, text in REAL_CORO.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    lib = tmp_path / "lib"
    lib.mkdir()
    res = subprocess.run(["R", "CMD", "INSTALL", f"--library={lib}", str(src)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    script = tmp_path / "iterate.R"
    script.write_text("""
library(torch)
stopifnot(coro::double_of_real_coro(), identical(torch::as_iterator, coro::as_iterator))
dl <- dataloader(tensor_dataset(torch_arange(1, 10)), batch_size = 3)
total <- 0
coro::loop(for (b in dl) total <- total + b[[1]]$sum()$item())
cat("total", total, "batches", length(coro::collect(dl)), "\\n")
ids <- iterable_dataset(initialize = function() NULL,
  .iter = function() { i <- 0; function() { i <<- i + 1; if (i > 4) coro::exhausted() else i } })
cat("iterable", length(coro::collect(dataloader(ids(), batch_size = 3))), "\\n")
""")
    res = run_r(str(script), env={"R_LIBS": str(lib)})
    assert res.returncode == 0, res.stderr
    assert "total 55 batches 4" in res.stdout and "iterable 2" in res.stdout


@needs_r
def test_r_torchs_older_tensor_files_load(tmp_path):
    # version 2 holds libtorch's `torch::save(tensor)` bytes (an archive of a module whose
    # attribute "0" is the tensor: made here by PyTorch's writer), version 1 them in base64
    m = torch.nn.Module()
    m.register_buffer("0", torch.arange(6.0).reshape(2, 3))
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(m), buf)
    (tmp_path / "tensor.bin").write_bytes(buf.getvalue())
    script = tmp_path / "legacy.R"
    script.write_text(f"""
library(torch)
bytes <- readBin("{tmp_path / 'tensor.bin'}", "raw", n = 1e6)
saveRDS(list(values = bytes, type = "tensor", version = 2), "{tmp_path / 'v2.pt'}")
print(torch_load("{tmp_path / 'v2.pt'}"))
one <- tempfile()
saveRDS(list(values = bytes, type = "tensor", version = 2), one)
serialized <- structure(readBin(one, "raw", n = 1e6), class = "torch_serialized_tensor")
saveRDS(list(values = list(a = serialized, b = 2), type = "list", version = 2),
        "{tmp_path / 'list.pt'}")
l <- torch_load("{tmp_path / 'list.pt'}")
cat("list", as_array(l$a$sum()), l$b, "\\n")
""")
    res = run_r(str(script))
    assert res.returncode == 0, res.stderr
    assert " 0  1  2\n 3  4  5\n[ CPUFloatType{2,3} ]" in res.stdout
    assert "list 15 2" in res.stdout


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_half_precision_convolution_adds_in_float32_as_libtorch(half):
    # (adding each kernel offset's products in the half type drifted by ~0.2 here)
    rng = np.random.default_rng(7)
    ours_dtype, theirs_dtype = getattr(rt, f"torch_{half}")(), getattr(torch, half)
    for _ in range(20):
        x = rng.uniform(-2, 2, (1, 2, 5, 5)).astype(np.float32)
        w = rng.uniform(-2, 2, (3, 2, 3, 3)).astype(np.float32)
        want = torch.conv2d(torch.from_numpy(x).to(theirs_dtype),
                            torch.from_numpy(w).to(theirs_dtype)).float().numpy()
        got = rt.torch_conv2d(rt.torch_tensor(x).to(dtype=ours_dtype),
                              rt.torch_tensor(w).to(dtype=ours_dtype))
        ulp = np.abs(want) * (2.0 ** -7 if half == "bfloat16" else 2.0 ** -10)
        assert np.all(np.abs(got.to(dtype=rt.torch_float32()).numpy() - want) <= ulp + 1e-6)
