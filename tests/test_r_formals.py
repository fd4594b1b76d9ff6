"""R torch's formals declared where they differ from the Python function's
(rtorch_py/formals.py), the closures R matches a call against (rtorch_py/r/closures.py)
and what the binding adds (rtorch_py/r/binding.py); the
arguments added with their meaning, against PyTorch from Python."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import rtorch_py as rt
from rtorch_py.formals import declared, parse, r_formals
from rtorch_py.function import NamedList
from rtorch_py.r import binding, closures, tables


def test_parse_reads_r_defaults() -> None:
    assert parse("self, dim = 1L, keepdim = FALSE, p = -0.5, m = 'mean', n = NULL, "
                 "o = list(), r = c('a', 'b'), d = torch_int64(), ...") == (
        ("self", None, False), ("dim", 1, True), ("keepdim", False, True), ("p", -0.5, True),
        ("m", "mean", True), ("n", None, True), ("o", (), True), ("r", ("a", "b"), True),
        ("d", ("expr", "torch_int64()"), True), ("...", None, False))


@r_formals("self, size, fill = 'z', ..., last = TRUE", python_names={"fill": "fill_with"})
def _example(self, size, fill_with="z", last=False, extra=0):
    return self, size, fill_with, last, extra


def test_declared_formals_add_r_s_defaults_and_dots_check() -> None:
    """R matches a call against the closure's formals, which sends what it was given
    under the Python names (by position while R's order is Python's); the callable
    fills R's defaults that are not Python's and refuses what R torch's `...` must
    not take (E72)."""
    call = binding.with_declared("ex", _example)
    assert call(1, 2) == (1, 2, "z", True, 0)  # R's default filled (last = TRUE)
    assert call(1, 2, fill_with="y", last=False) == (1, 2, "y", False, 0)
    assert call(1, 2, extra=3)[4] == 3  # `...`: what Python takes by name
    with pytest.raises(TypeError, match=r"(?s)`...` must be empty.*\* \.\.1"):
        call(1, 2, "y", 4)  # (the closure sends `...`'s values by position after `fill`)
    with pytest.raises(TypeError, match=r"(?s)`...` must be empty.*\* nope"):
        call(1, 2, nope=3)
    assert binding.with_declared("zeros", rt.torch_zeros) is rt.torch_zeros  # (none declared)
    assert binding.with_declared("std", rt.torch_std) is rt.torch_std  # (R's defaults are Python's)


def _shape(name: str, kind: str = "function") -> "closures.FunctionShape":
    from rtorch_py.r import api
    return closures.function_shape(name, api._TABLES, kind)


def test_closures_send_python_names() -> None:
    """What R sees (R torch's formals: an argument R torch lacks is R's "unused argument",
    E71) and what the closure sends (Python's names; by position while R's order is
    Python's)."""
    std = _shape("torch_std")
    assert "correction" not in std.formals and std.positional == 4
    mha = _shape("nnf_multi_head_attention_forward")
    assert "avg_weights = " in mha.formals and "average_attn_weights" in mha.send_as
    assert "avg_weights" not in mha.send_as
    norm = _shape("torch_normal")  # (`...` R torch keeps empty: after the formals before it)
    assert norm.send_as == ("mean", "std", "size", "generator", "...") and norm.positional == 4
    zeros = _shape("new_zeros", "method")  # (R's `options`, spread by the callable)
    assert zeros.send_as == ("size", "options") and zeros.positional == 1


def test_method_formals_are_declared_apart() -> None:
    spec = rt.ops.REGISTRY["mm"]
    assert [f[0] for f in declared(spec.fn)] == ["self", "mat2", "out_dtype"]
    assert [f[0] for f in declared(spec.fn, method=True)] == ["self", "mat2"]
    x, w = rt.torch_randn(2, 3), rt.torch_randn(3, 2)
    method = tables.build()["METHODS"]["mm"]
    np.testing.assert_array_equal(method(x, w).data, x.mm(w).data)
    assert _shape("mm", "method").formals == "alist(mat2 = )"  # (x$mm(w, out_dtype =): E71)


def test_new_options_are_spread() -> None:
    new_zeros = tables.build()["METHODS"]["new_zeros"]
    out = new_zeros(rt.torch_ones(2), [2, 2], options={"dtype": rt.torch_float64()})
    assert out.dtype == rt.torch_float64() and out.shape == (2, 2)
    out = new_zeros(rt.torch_ones(2), [2], options=NamedList(["requires_grad"], [True]))
    assert out.requires_grad and out.dtype == rt.torch_float32()


def test_python_keeps_pytorch_s_arguments() -> None:
    a = np.random.default_rng(0).standard_normal((3, 4))
    x, t = rt.torch_tensor(a), torch.tensor(a)
    assert x.reshape(2, 6).shape == tuple(t.reshape(2, 6).shape)
    assert x.repeat(2, 1).shape == tuple(t.repeat(2, 1).shape)
    assert x.permute(1, 0).shape == tuple(t.permute(1, 0).shape)
    np.testing.assert_allclose(x.std(dim=0, correction=0).data,
                               t.std(dim=0, correction=0).numpy())
    np.testing.assert_allclose(rt.torch_mm(x, rt.torch_tensor(a.T), out_dtype=None).data,
                               torch.mm(t, t.T).numpy(), rtol=1e-12)


@pytest.mark.parametrize("center, align", [(False, True), (False, False), (False, None)])
def test_stft_align_to_window(center: bool, align: bool | None) -> None:
    a = np.random.default_rng(1).standard_normal((2, 60))
    w = np.hanning(8)
    kw = dict(n_fft=16, hop_length=4, win_length=8, center=center, return_complex=True,
              align_to_window=align)
    want = torch.stft(torch.tensor(a), window=torch.tensor(w), **kw).numpy()
    got = rt.torch_tensor(a).stft(window=rt.torch_tensor(w), **kw).data
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_stft_align_to_window_needs_center_false() -> None:
    with pytest.raises(RuntimeError, match="align_to_window should only be set when center"):
        rt.torch_randn(40).stft(16, center=True, return_complex=True, align_to_window=True)


def test_named_forms_of_diagonal_flatten_unflatten() -> None:
    # (PyTorch 2.13 has no named tensors left: libtorch 2.8's rule, the names of the dims
    # kept then the new one, and the values of the unnamed form)
    t = torch.randn(2, 3, 4)
    x = rt.torch_tensor(t.numpy()).refine_names("A", "B", "C")
    d = x.diagonal(outdim="D", dim1="A", dim2="B")
    assert d.names == ("C", "D")
    np.testing.assert_array_equal(d.data, t.diagonal(dim1=0, dim2=1).numpy())
    f = x.flatten(dims=["B", "C"], out_dim="E")
    assert f.names == ("A", "E")
    np.testing.assert_array_equal(f.data, t.flatten(1, 2).numpy())
    with pytest.raises(RuntimeError, match="consecutive"):
        x.flatten(dims=["A", "C"], out_dim="E")
    u = rt.torch_tensor(t.numpy()[0]).refine_names("A", "B").unflatten("B", (2, 2),
                                                                        names=["X", "Y"])
    assert u.names == ("A", "X", "Y")
    np.testing.assert_array_equal(u.data, t[0].unflatten(1, (2, 2)).numpy())


def test_embedding_bag_arguments() -> None:
    rng = np.random.default_rng(2)
    w = rng.standard_normal((6, 3)) * 3
    idx, off = np.array([0, 2, 4, 5, 1]), np.array([0, 2, 5])
    for kw in ({"max_norm": 1.0}, {"include_last_offset": True, "mode": "sum"},
               {"mode": "max", "norm_type": 1.0, "max_norm": 2.0}):
        tw, rw = torch.tensor(w), rt.torch_tensor(w.copy())
        want = TF.embedding_bag(torch.tensor(idx), tw, torch.tensor(off), **kw)
        got = rt.nnf_embedding_bag(rt.torch_tensor(idx), rw, rt.torch_tensor(off), **kw)
        np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(rw.data, tw.numpy(), rtol=1e-6)  # (max_norm: in place)


def _mha_inputs(rng: np.random.Generator) -> dict:
    L, S, N, E, H = 3, 4, 2, 6, 2
    return dict(q=rng.standard_normal((L, N, E)), k=rng.standard_normal((S, N, E)),
                v=rng.standard_normal((S, N, E)), w=rng.standard_normal((3 * E, E)),
                b=rng.standard_normal(3 * E), bk=rng.standard_normal((1, 1, E)),
                bv=rng.standard_normal((1, 1, E)), ow=rng.standard_normal((E, E)),
                ob=rng.standard_normal(E), E=E, H=H, N=N, S=S,
                kpm=np.array([[False, False, True, False], [False, True, False, False]]))


@pytest.mark.parametrize("variant", ["bias_kv", "zero_attn", "separate", "static", "mask"])
def test_multi_head_attention_forward_against_pytorch(variant: str) -> None:
    d = _mha_inputs(np.random.default_rng(3))
    E, H = d["E"], d["H"]

    def args(T: object, tensor: object) -> tuple:
        extra: dict = dict(need_weights=True, average_attn_weights=variant != "mask")
        bk = bv = None
        if variant == "bias_kv":
            bk, bv = tensor(d["bk"]), tensor(d["bv"])
        if variant == "separate":
            w = d["w"]
            extra.update(use_separate_proj_weight=True, q_proj_weight=tensor(w[:E]),
                         k_proj_weight=tensor(w[E:2 * E]), v_proj_weight=tensor(w[2 * E:]))
        if variant == "static":
            sk = np.random.default_rng(4).standard_normal((d["N"] * H, 5, E // H))
            extra.update(static_k=tensor(sk), static_v=tensor(sk * 2))
        if variant == "mask":
            extra.update(key_padding_mask=tensor(d["kpm"]))
        return ((tensor(d["q"]), tensor(d["k"]), tensor(d["v"]), E, H, tensor(d["w"]),
                 tensor(d["b"]), bk, bv, variant == "zero_attn", 0.0, tensor(d["ow"]),
                 tensor(d["ob"])), extra)
    targs, tkw = args(torch, torch.tensor)
    want = TF.multi_head_attention_forward(*targs, training=False, **tkw)
    rargs, rkw = args(rt, rt.torch_tensor)
    got = rt.nnf_multi_head_attention_forward(*rargs, training=False, **rkw)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.data, w.detach().numpy(), rtol=1e-6, atol=1e-9)


def test_lu_and_normalize_write_into_out() -> None:
    a = np.random.default_rng(5).standard_normal((3, 3))
    lu, piv = rt.torch_empty(0), rt.torch_empty(0, dtype=rt.torch_int32())
    got = rt.torch_lu(rt.torch_tensor(a), out=(lu, piv))
    want = torch.linalg.lu_factor(torch.tensor(a))
    assert got[0] is lu and got[1] is piv
    np.testing.assert_allclose(lu.data, want.LU.numpy())
    np.testing.assert_array_equal(piv.data, want.pivots.numpy())
    out = rt.torch_empty(3, 3, dtype=rt.torch_float64())
    rt.nnf_normalize(rt.torch_tensor(a), out=out)
    np.testing.assert_allclose(out.data, TF.normalize(torch.tensor(a)).numpy())


def test_closure_shapes() -> None:
    """The generated R functions' closures (rtorch_py.r.closures): R torch's formals as R
    source, the names the frame's arguments are sent under, how many go by position."""
    from rtorch_py.r import api, closures
    shape = closures.function_shape
    std = shape("torch_std", api._TABLES)
    assert std.formals == "alist(self = , dim = , unbiased = TRUE, keepdim = FALSE)"
    assert std.send_as == ("self", "dim", "unbiased", "keepdim") and std.positional == 4
    zeros = shape("torch_zeros", api._TABLES)  # (sizes in `...`, before anything else)
    assert zeros.formals.startswith("alist(... = , names = NULL, dtype = NULL")
    assert zeros.positional == 0
    cast = shape("torch_can_cast", api._TABLES)  # (R's `from` is Python's `from_`)
    assert cast.formals == "alist(from = , to = )" and cast.send_as == ("from_", "to")
    out = shape("torch_std_out", api._TABLES)
    assert out.formals.startswith("alist(out = , self = , dim = ")
    assert out.positional == 2  # (a defaulted Python parameter goes by name: `dim` on)
    # a tensor method's: without the tensor, which the bridge sends first
    method = shape("std", api._TABLES, "method")
    assert method.formals == "alist(dim = , unbiased = TRUE, keepdim = FALSE)"
    assert method.send_as == ("dim", "unbiased", "keepdim") and method.positional == 3
    backward = shape("backward", api._TABLES, "method")  # (Python's **kw: R's `...`)
    assert backward.formals.startswith("alist(gradient = NULL, ") and \
        backward.formals.endswith(", ... = )") and backward.positional == 0
    layer = shape("nn_linear", api._TABLES, "layer")  # (a layer's generator: formals alone)
    assert layer.formals == "alist(in_features = , out_features = , bias = TRUE)"
    assert shape("nn_embedding", api._TABLES, "layer").formals.endswith(", .weight = NULL)")
    assert closures.r_source(-100) == "-100L" and closures.r_source(1e-05) == "1e-05"
    assert closures.r_source(("mean", "sum")) == 'c("mean", "sum")'
    assert closures.r_source(float("-inf")) == "-Inf" and closures.r_source(()) == "list()"
    assert closures.r_source(object()) is None  # (shown without a default)


def test_method_policies() -> None:
    from rtorch_py.r import closures
    assert closures.method_policy("add_") == "self"
    assert closures.method_policy("detach") == "keep_attributes"
    assert closures.method_policy("backward", {"backward"}) == "invisible"
    assert closures.method_policy("add") == "value"


def test_bound_methods_take_the_python_method_s_formals() -> None:
    """`d$log_prob`, `s$data_ptr`, ... of a Python object R calls the methods of
    (api.BOUND): the method's formals without `self`; a field is no method."""
    from rtorch_py import distributions as D
    from rtorch_py.r import api, closures
    d = D.distr_normal(0.0, 1.0)
    assert closures.bound_shape(D.Distribution.sample).formals == "alist(sample_shape = NULL)"
    assert closures.bound_shape(D.Normal.log_prob).send_as == ("value",)
    made = api.bound_method(d, "log_prob")
    assert made["formals"] == "alist(value = )" and made["positional"] == 1
    v = rt.torch_tensor([0.5])
    np.testing.assert_array_equal(made["fn"](d, v).data, d.log_prob(v).data)
    assert api.bound_method(d, "mean") is None  # (a field)
    with pytest.raises(AttributeError, match="has no method `nope`"):
        api.bound_method(rt.torch_randn(2).storage(), "nope")
