"""Sparse tensors (rtorch_py/sparse.py) against PyTorch 2.13: COO construction,
conversions to and from dense and CSR, coalescing, index_select, autograd to
the values, printing (libtorch's own C++ print as the oracle) and the errors
other ops give for sparse operands."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import rtorch_py as rt
from helpers import SCALAR_NODES, assert_same

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse (CSR|invariant)")

RNG = np.random.default_rng(0)

# (indices, values shape, size) of COO tensors: duplicates, hybrid (dense dims),
# no entries, inferred size, 1-d and 3-d
COO_CASES = [
    ([[0, 1, 1], [2, 0, 2]], (3,), (3, 3)),
    ([[1, 0, 1, 1], [2, 0, 2, 0]], (4,), (2, 3)),          # a duplicate, unsorted
    ([[0, 2], [1, 1]], (2, 4), (3, 2, 4)),                 # one dense dim
    ([[0, 2, 0]], (3, 2, 2), None),                        # two dense dims, size inferred
    ([[], []], (0,), (2, 5)),                              # no entries
    ([[3, 0, 3]], (3,), None),                             # 1-d, inferred, duplicate
    ([[0, 1, 0], [1, 0, 1], [2, 2, 2]], (3,), (2, 2, 3)),  # 3-d
]


def _pair(case: tuple, dtype: np.dtype = np.float32, requires_grad: bool = False) -> tuple:
    ind, vshape, size = case
    idx = np.array(ind, dtype=np.int64).reshape(len(ind), -1)
    vals = RNG.standard_normal(vshape).astype(dtype)
    r_v = rt.torch_tensor(vals.copy(), requires_grad=requires_grad)
    t_v = torch.from_numpy(vals.copy()).requires_grad_(requires_grad)
    r = rt.torch_sparse_coo_tensor(rt.torch_tensor(idx), r_v, size)
    t = torch.sparse_coo_tensor(torch.from_numpy(idx), t_v, *([size] if size else []))
    return r, t, r_v, t_v


def _same_coo(r: rt.Tensor, t: "torch.Tensor") -> None:
    assert r.layout is rt.tensor.sparse_coo and t.layout == torch.sparse_coo
    assert tuple(r.shape) == tuple(t.shape)
    assert r.dtype.name == str(t.dtype).split(".")[1]
    assert r.sparse_dim() == t.sparse_dim() and r.dense_dim() == t.dense_dim()
    assert r._nnz() == t._nnz()
    assert r.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(r._indices().data, t._indices().numpy())
    assert_same(r._values(), t._values().detach(), "values")
    assert not r._values().requires_grad
    assert_same(r.to_dense(), t.to_dense().detach(), "to_dense")


@pytest.mark.parametrize("case", COO_CASES, ids=[str(i) for i in range(len(COO_CASES))])
def test_coo_construction_matches_pytorch(case) -> None:
    r, t, _, _ = _pair(case)
    _same_coo(r, t)
    assert r.is_sparse() and not r.is_sparse_csr()
    _same_coo(r.coalesce(), t.coalesce())
    c = r.coalesce()
    np.testing.assert_array_equal(c.indices().data, t.coalesce().indices().numpy())
    assert_same(c.values(), t.coalesce().values(), "values()")
    assert c.coalesce() is c  # (as PyTorch: a coalesced tensor is its own coalesce())


@pytest.mark.parametrize("dtype", ["float64", "int64", "int32", "bool"])
def test_coo_dtypes(dtype) -> None:
    idx = [[0, 1, 0], [1, 2, 1]]
    vals = np.array([1, 0, 1], dtype=dtype)
    r = rt.torch_sparse_coo_tensor(idx, rt.torch_tensor(vals), (2, 3))
    t = torch.sparse_coo_tensor(idx, torch.from_numpy(vals), (2, 3))
    assert_same(r.to_dense(), t.to_dense(), "to_dense")
    assert_same(r.coalesce().values(), t.coalesce().values(), "values")
    r = rt.torch_sparse_coo_tensor(idx, rt.torch_tensor([1.0, 2.0, 3.0]), (2, 3), dtype=dtype)
    t = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0, 3.0]), (2, 3),
                                dtype=getattr(torch, dtype))
    assert_same(r.to_dense(), t.to_dense(), "dtype=")


@pytest.mark.parametrize("shape,kw", [((3, 4), {}), ((3, 4), {"sparse_dim": 1}),
                                      ((2, 3, 4), {"sparse_dim": 2}),
                                      ((2, 3, 4), {"dense_dim": 1}),
                                      ((2, 3, 4), {"dense_dim": 0}), ((5,), {}),
                                      ((0, 3), {})])
def test_dense_to_sparse_matches_pytorch(shape, kw) -> None:
    a = RNG.standard_normal(shape).astype(np.float32)
    a[a < 0.3] = 0  # zero entries, and whole zero slices along the sparse dims
    if a.ndim > 1 and a.shape[0]:
        a[0] = 0
    _same_coo(rt.torch_tensor(a).to_sparse(**kw), torch.from_numpy(a).to_sparse(**kw))


def test_to_sparse_on_sparse() -> None:
    s = rt.torch_randn(3, 3).to_sparse()
    assert s.to_sparse() is s
    with pytest.raises(RuntimeError, match="sparse_dim"):
        s.to_sparse(1)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (1, 5), (3, 0)])
def test_csr_matches_pytorch(shape) -> None:
    a = RNG.standard_normal(shape).astype(np.float32)
    a[a < 0] = 0
    r, t = rt.torch_tensor(a).to_sparse_csr(), torch.from_numpy(a).to_sparse_csr()
    assert r.is_sparse_csr() and not r.is_sparse() and r.layout is rt.tensor.sparse_csr
    np.testing.assert_array_equal(r.crow_indices().data, t.crow_indices().numpy())
    np.testing.assert_array_equal(r.col_indices().data, t.col_indices().numpy())
    assert_same(r.values(), t.values(), "values")
    assert_same(r.to_dense(), t.to_dense(), "to_dense")
    _same_coo(r.to_sparse(), t.to_sparse())
    # COO -> CSR (coalescing first), and CSR's own to_sparse_csr()
    r2, t2 = rt.torch_tensor(a).to_sparse().to_sparse_csr(), torch.from_numpy(a).to_sparse().to_sparse_csr()
    np.testing.assert_array_equal(r2.crow_indices().data, t2.crow_indices().numpy())
    assert r.to_sparse_csr() is r


def test_coo_with_duplicates_to_csr() -> None:
    r, t, _, _ = _pair(COO_CASES[1])
    rc, tc = r.to_sparse_csr(), t.to_sparse_csr()
    np.testing.assert_array_equal(rc.crow_indices().data, tc.crow_indices().numpy())
    np.testing.assert_array_equal(rc.col_indices().data, tc.col_indices().numpy())
    assert_same(rc.values(), tc.values(), "values")


@pytest.mark.parametrize("dim,index", [(0, [2, 0, 2]), (0, [1]), (1, [1]), (1, [2, 2, 0]),
                                       (0, [])])
def test_index_select_matches_pytorch(dim, index) -> None:
    a = np.array([[1.0, 0, 2], [0, 0, 3], [4, 5, 0]], dtype=np.float32)
    r = rt.torch_tensor(a).to_sparse().index_select(dim, rt.torch_tensor(index, dtype="int64"))
    t = torch.from_numpy(a).to_sparse().index_select(dim, torch.tensor(index, dtype=torch.long))
    _same_coo(r, t)


def test_index_select_on_a_dense_dim_and_uncoalesced() -> None:
    r, t, _, _ = _pair(COO_CASES[2])
    for dim, index in ((2, [3, 0]), (0, [2, 2])):
        ri = r.index_select(dim, rt.torch_tensor(index))
        ti = t.index_select(dim, torch.tensor(index))
        assert_same(ri.to_dense(), ti.to_dense(), f"dim {dim}")
    r, t, _, _ = _pair(COO_CASES[1])
    assert_same(r.index_select(0, rt.torch_tensor([1])).to_dense(),
                t.index_select(0, torch.tensor([1])).to_dense(), "uncoalesced")


# --- autograd ----------------------------------------------------------------


def _grads_match(fn, case, dtype=np.float64, torch_fn=None, scalar_node=False) -> None:
    """fn(T, sparse) -> a dense tensor; the values' gradient for a random upstream
    (`torch_fn`: PyTorch's way to the same value, where it has no backward for fn's;
    `scalar_node`: fn ends with a number operand, helpers.SCALAR_NODES)."""
    r, t, r_v, t_v = _pair(case, dtype, requires_grad=True)
    r_out, t_out = fn(rt, r), (torch_fn or fn)(torch, t)
    assert_same(r_out, t_out.detach(), "output")
    if torch_fn is None:
        want = type(t_out.grad_fn).__name__
        assert r_out.grad_fn.name == (SCALAR_NODES[want] if scalar_node else want)
    up = RNG.standard_normal(tuple(t_out.shape)).astype(dtype)
    (r_g,) = rt.autograd_grad([r_out], [r_v], [rt.torch_tensor(up)])
    (t_g,) = torch.autograd.grad([t_out], [t_v], [torch.from_numpy(up)])
    assert_same(r_g, t_g, "grad of the values")


@pytest.mark.parametrize("case", COO_CASES[:4], ids=[str(i) for i in range(4)])
def test_grad_through_construction_and_to_dense(case) -> None:
    _grads_match(lambda T, s: s.to_dense(), case)
    _grads_match(lambda T, s: s.coalesce().values() * 2, case, scalar_node=True)
    _grads_match(lambda T, s: s.coalesce().to_dense(), case)
    # (PyTorch has no backward for a sparse index_select: its dense one is the oracle)
    _grads_match(lambda T, s: s.index_select(0, rt.torch_tensor([0, 0])).to_dense(), case,
                 torch_fn=lambda T, s: s.to_dense().index_select(0, torch.tensor([0, 0])))


def test_node_names_match_pytorch() -> None:
    r, t, _, _ = _pair(COO_CASES[0], requires_grad=True)
    assert r.grad_fn.name == type(t.grad_fn).__name__ == \
        "SparseCooTensorWithDimsAndTensorsBackward0"
    a = RNG.standard_normal((3, 4))
    rx = rt.torch_tensor(a, requires_grad=True)
    tx = torch.from_numpy(a).requires_grad_(True)
    for f in (lambda x: x.to_sparse(), lambda x: x.to_sparse(sparse_dim=1),
              lambda x: x.to_sparse_csr(), lambda x: x.to_sparse().coalesce(),
              lambda x: x.to_sparse().values(), lambda x: x.to_sparse_csr().to_dense()):
        assert f(rx).grad_fn.name == type(f(tx).grad_fn).__name__


def test_grad_of_a_dense_tensor_through_sparse() -> None:
    """x -> to_sparse -> ... -> dense: PyTorch's gradient (masked to the stored entries)."""
    a = RNG.standard_normal((3, 4))
    a[a < 0] = 0
    for f in (lambda x: x.to_sparse().to_dense(), lambda x: x.to_sparse(1).to_dense(),
              lambda x: x.to_sparse_csr().to_dense(), lambda x: x.to_sparse().values(),
              lambda x: x.to_sparse_csr().to_sparse().to_dense()):
        rx = rt.torch_tensor(a, requires_grad=True)
        tx = torch.from_numpy(a).requires_grad_(True)
        ro, to = f(rx), f(tx)
        up = RNG.standard_normal(tuple(to.shape))
        (rg,) = rt.autograd_grad([ro], [rx], [rt.torch_tensor(up)])
        (tg,) = torch.autograd.grad([to], [tx], [torch.from_numpy(up)])
        assert_same(rg, tg.to_dense(), "grad")


def test_sparse_leaf_grad_is_pytorchs_densified() -> None:
    idx, vals = [[0, 1], [1, 2]], [3.0, 4.0]
    r = rt.torch_sparse_coo_tensor(idx, vals, (3, 3), requires_grad=True)
    t = torch.sparse_coo_tensor(idx, vals, (3, 3), requires_grad=True)
    assert r.is_leaf and r.requires_grad
    (r.to_dense() * rt.torch_arange(0, 9).reshape(3, 3)).sum().backward()
    (t.to_dense() * torch.arange(0, 9).reshape(3, 3)).sum().backward()
    assert_same(r.grad, t.grad.to_dense(), "grad")


def test_gradcheck_through_sparse() -> None:
    idx = rt.torch_tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    v = rt.torch_tensor(RNG.standard_normal(4), requires_grad=True)
    assert rt.autograd_gradcheck(
        lambda v: (rt.torch_sparse_coo_tensor(idx, v, (2, 3)).coalesce().values() ** 2).sum()
        + rt.torch_sparse_coo_tensor(idx, v, (2, 3)).to_dense().exp().sum(), [v])
    x = rt.torch_tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert rt.autograd_gradcheck(
        lambda x: x.to_sparse().index_select(0, rt.torch_tensor([2, 0])).to_dense() ** 2, [x])
    # a sparse output is checked through its dense values
    assert rt.autograd_gradcheck(lambda x: (x * x).to_sparse(1).index_select(1, rt.torch_tensor([1])),
                                 [x])


def test_second_order_through_sparse() -> None:
    """(PyTorch has no double backward through sparse tensors: the dense tensor is
    built with index_put there, the same function of the values.)"""
    r, t, r_v, t_v = _pair(COO_CASES[1], np.float64, requires_grad=True)
    (rg,) = rt.autograd_grad([(r.to_dense() ** 3).sum()], [r_v], create_graph=True)
    dense = torch.zeros(t.shape, dtype=t_v.dtype).index_put(
        tuple(t._indices()), t_v, accumulate=True)
    (tg,) = torch.autograd.grad([(dense ** 3).sum()], [t_v], create_graph=True)
    assert_same(rg, tg.detach(), "first order")
    (rgg,) = rt.autograd_grad([rg.sum()], [r_v])
    (tgg,) = torch.autograd.grad([tg.sum()], [t_v])
    assert_same(rgg, tgg, "second order")


# --- errors --------------------------------------------------------------------


def test_construction_errors_match_pytorch() -> None:
    bad = [
        (([0, 1], [1.0, 2.0], (3,)), "sparse_dim x nnz"),
        (([[0, 1]], [1.0, 2.0, 3.0], (3,)), "same nnz"),
        (([[0, 1]], [1.0, 2.0], (3, 3)), "len\\(size\\) == sparse_dim \\+ dense_dim"),
        (([[0, 3]], [1.0, 2.0], (3,)), "for dim 0, size is 3 but found index 3"),
        (([[0, -1]], [1.0, 2.0], (3,)), "negative index -1 for dim 0"),
    ]
    for args, message in bad:
        with pytest.raises(RuntimeError, match=message):
            rt.torch_sparse_coo_tensor(*args)


def test_other_ops_refuse_sparse_operands_by_name() -> None:
    s = rt.torch_randn(2, 2).to_sparse()
    for call, name in ((lambda: s.exp(), "exp"), (lambda: s + 1, "add"),
                       (lambda: rt.torch_matmul(s, s), "matmul"), (lambda: s.sum(), "sum")):
        with pytest.raises(NotImplementedError, match=rf"^{name}\(\) is not supported for "
                                                      r"sparse tensors.*to_dense\(\)"):
            call()
    with pytest.raises(NotImplementedError, match="to_dense"):
        s.numpy()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        rt.torch_sparse_coo_tensor([[0, 0]], [1.0, 2.0]).values()
    with pytest.raises(RuntimeError, match="expected sparse coordinate tensor layout but got "
                                           "Strided"):
        rt.torch_randn(2).indices()


def test_dense_tensors_are_strided() -> None:
    x = rt.torch_randn(2, 2)
    assert x.layout is rt.torch_strided() and repr(x.layout) == "torch_strided"
    assert not x.is_sparse() and not x.is_sparse_csr() and x.to_dense() is x
    assert repr(x.to_sparse().layout) == "torch_sparse_coo" == repr(rt.torch_sparse_coo())
    s = x.to_sparse()
    assert s.detach().layout is s.layout and not s.detach().requires_grad


# --- printing --------------------------------------------------------------------

_ORACLE = """
import sys, warnings, torch
warnings.filterwarnings("ignore")
@torch.jit.script
def show(x: torch.Tensor):
    print(x)   # TorchScript's print: libtorch's C++ operator<< (at::print)
for k, (idx, vals, size, dtype) in enumerate(eval(sys.stdin.read())):
    show(torch.sparse_coo_tensor(torch.tensor(idx, dtype=torch.long).reshape(len(idx), -1),
                                 torch.tensor(vals, dtype=getattr(torch, dtype)), size))
    print("@@")
"""

PRINT_CASES = [
    ([[0, 1], [1, 2]], [3.0, 4.0], (3, 3), "float32"),
    ([[1, 0, 1], [2, 0, 2]], [0.5, -1.25, 1e-3], (2, 3), "float64"),
    ([[0, 2]], [[1.0, 2.0], [3.5, 4.0]], (3, 2), "float32"),
    ([[0, 4, 2]], [1, 2, 300], (5,), "int64"),
    ([[], []], [], (2, 2), "float32"),
]


def test_printing_matches_libtorch_and_r_torch(tmp_path) -> None:
    """The body is libtorch's own print (TorchScript's print calls it); R torch
    writes `torch_tensor` above it and the grad suffix after the last line."""
    script = tmp_path / "oracle.py"  # (TorchScript reads the function's source file)
    script.write_text(_ORACLE)
    res = subprocess.run([sys.executable, str(script)], input=repr(PRINT_CASES),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    expected = res.stdout.split("@@\n")[:-1]
    assert len(expected) == len(PRINT_CASES)
    for (idx, vals, size, dtype), want in zip(PRINT_CASES, expected):
        i = np.array(idx, dtype=np.int64).reshape(len(idx), -1)
        s = rt.torch_sparse_coo_tensor(i, rt.torch_tensor(np.array(vals, dtype=dtype)), size)
        assert repr(s) + "\n" == "torch_tensor\n" + want


def test_printing_grad_suffix_and_truncation() -> None:
    s = rt.torch_sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2,), requires_grad=True)
    assert repr(s).endswith("\n][ requires_grad = TRUE ]")
    v = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    s = rt.torch_sparse_coo_tensor([[0, 1]], v, (2,))
    assert repr(s).endswith("\n][ grad_fn = <SparseCooTensorWithDimsAndTensorsBackward0> ]")
    from rtorch_py.sparse import format_sparse
    big = rt.torch_randn(40).to_sparse()
    text = format_sparse(big, 30)
    lines = text.rstrip("\n").split("\n")
    assert lines[-2] == "... [the output was truncated (use n=-1 to disable)]"
    assert lines[-1] == "]" and len(lines) == 1 + 30 + 2
    assert format_sparse(big, -1).count("\n") > 45


def test_csr_prints_as_its_dense_values() -> None:
    """R torch densifies a CSR tensor before printing it."""
    x = rt.torch_randn(3, 3)
    assert repr(x.to_sparse_csr()) == repr(x)


# --- CSC, BSR, BSC: conversions between every two layouts ---------------------

_LAYOUTS = {  # name: (our conversion, PyTorch's), each from any layout
    "coo": (lambda x: x.to_sparse(), lambda x: x.to_sparse()),
    "csr": (lambda x: x.to_sparse_csr(), lambda x: x.to_sparse_csr()),
    "csc": (lambda x: x.to_sparse_csc(), lambda x: x.to_sparse_csc()),
    "bsr12": (lambda x: x.to_sparse_bsr((1, 2)), lambda x: x.to_sparse_bsr((1, 2))),
    "bsc12": (lambda x: x.to_sparse_bsc((1, 2)), lambda x: x.to_sparse_bsc((1, 2))),
    "bsr21": (lambda x: x.to_sparse_bsr((2, 1)), lambda x: x.to_sparse_bsr((2, 1))),
    "bsc21": (lambda x: x.to_sparse(layout=rt.tensor.sparse_bsc, blocksize=(2, 1)),
              lambda x: x.to_sparse(layout=torch.sparse_bsc, blocksize=(2, 1))),
}

_ROWS, _COLS = ("crow_indices", "col_indices"), ("ccol_indices", "row_indices")
_PARTS = {"sparse_csr": _ROWS, "sparse_bsr": _ROWS, "sparse_csc": _COLS, "sparse_bsc": _COLS}


def _same_sparse(r: rt.Tensor, t: "torch.Tensor") -> None:
    """Layout, parts, values and dense values as PyTorch's."""
    assert repr(r.layout) == "torch_" + str(t.layout).split(".")[1]
    if t.layout == torch.sparse_coo:
        return _same_coo(r, t)
    for part in _PARTS[r.layout.name]:
        np.testing.assert_array_equal(getattr(r, part)().data, getattr(t, part)().numpy(), part)
    assert_same(r.values(), t.values().detach(), "values")
    assert_same(r.to_dense(), t.to_dense().detach(), "to_dense")
    assert r._nnz() == t._nnz() and r.sparse_dim() == t.sparse_dim()
    assert r.dense_dim() == t.dense_dim()


# an explicit zero stored (COO entry (0, 0)), a duplicate, an empty block column
_COO = ([[0, 0, 1, 3, 1], [0, 1, 3, 2, 3]], [0.0, 2.0, 3.0, -1.0, 0.5], (4, 4))


@pytest.mark.filterwarnings("ignore:Sparse (CSC|BSR|BSC)")
@pytest.mark.parametrize("src", list(_LAYOUTS) + ["dense"])
@pytest.mark.parametrize("dst", list(_LAYOUTS))
def test_conversions_between_layouts_match_pytorch(src, dst) -> None:
    idx, vals, size = _COO
    r0 = rt.torch_sparse_coo_tensor(np.array(idx), rt.torch_tensor(vals), size)
    t0 = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), size)
    if src == "dense":
        r, t = r0.to_dense(), t0.to_dense()
    else:
        r, t = _LAYOUTS[src][0](r0), _LAYOUTS[src][1](t0)
    try:
        want = _LAYOUTS[dst][1](t)
    except RuntimeError as e:  # the conversions libtorch refuses: refused with its words
        with pytest.raises(RuntimeError) as info:
            _LAYOUTS[dst][0](r)
        assert str(info.value) == str(e).split("\n")[0]
        return
    got = _LAYOUTS[dst][0](r)
    _same_sparse(got, want)
    assert (got is r) == (want is t)


@pytest.mark.filterwarnings("ignore:Sparse (CSC|BSR|BSC)")
@pytest.mark.parametrize("conv", ["to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
                                  "to_sparse_bsc"])
def test_dense_dims_and_private_forms_match_pytorch(conv) -> None:
    a = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    a[[0, 3], :1] = 0
    args = ((2, 1),) if "bs" in conv else ()
    r = getattr(rt.torch_tensor(a), conv)(*args, dense_dim=1)
    t = getattr(torch.from_numpy(a), conv)(*args, dense_dim=1)
    _same_sparse(r, t)
    b = a[:, :, 0]
    _same_sparse(getattr(rt.torch_tensor(b), "_" + conv)(*args),
                 getattr(torch.from_numpy(b), "_" + conv)(*args))


@pytest.mark.filterwarnings("ignore:Sparse (CSC|BSR|BSC)")
def test_grads_through_compressed_layouts_match_pytorch() -> None:
    a = RNG.standard_normal((4, 4))
    a[a < 0] = 0
    for f in (lambda x: x.to_sparse_csc().to_dense(), lambda x: x.to_sparse_bsr((2, 2)).to_dense(),
              lambda x: x.to_sparse_bsc((1, 2)).values(),
              lambda x: x.to_sparse_bsr((2, 1)).values(),
              lambda x: x.to_sparse_csc().to_sparse().to_dense(),
              lambda x: x.to_sparse().to_sparse_bsr((2, 2))._to_dense()):
        rx = rt.torch_tensor(a, requires_grad=True)
        tx = torch.from_numpy(a).requires_grad_(True)
        ro, to = f(rx), f(tx)
        assert ro.grad_fn.name == type(to.grad_fn).__name__
        up = RNG.standard_normal(tuple(to.shape))
        (rg,) = rt.autograd_grad([ro], [rx], [rt.torch_tensor(up)])
        (tg,) = torch.autograd.grad([to], [tx], [torch.from_numpy(up)])
        assert_same(rg, tg.to_dense(), "grad")
    for conv in ("to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"):
        rx = rt.torch_tensor(a, requires_grad=True)
        args = ((2, 2),) if "bs" in conv else ()
        assert getattr(rx, conv)(*args).grad_fn.name == \
            type(getattr(torch.from_numpy(a).requires_grad_(True), conv)(*args).grad_fn).__name__
        x = rt.torch_tensor(RNG.standard_normal((4, 4)), requires_grad=True)
        assert rt.autograd_gradcheck(lambda x: getattr(x, conv)(*args).values() ** 2, [x])


# --- sparse_mask, smm, sspaddmm, the resizes, the private COO methods ----------

def _coo(idx, vals, size, lib, dtype=np.float64):
    if lib is torch:
        return torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(np.array(vals, dtype)), size)
    return rt.torch_sparse_coo_tensor(np.array(idx), rt.torch_tensor(np.array(vals, dtype)), size)


_MASK = ([[0, 0, 1, 1], [0, 1, 3, 2]], [1.0, 2.0, 3.0, 4.0], (2, 4))


@pytest.mark.filterwarnings("ignore:Sparse (CSC|BSR|BSC)")
@pytest.mark.parametrize("layout", ["coo", "csr", "csc", "bsr12"])
def test_sparse_mask_and_its_gradient_match_pytorch(layout) -> None:
    a = RNG.standard_normal((2, 4))
    rm, tm = _LAYOUTS[layout][0](_coo(*_MASK, rt)), _LAYOUTS[layout][1](_coo(*_MASK, torch))
    rx, tx = rt.torch_tensor(a, requires_grad=True), torch.from_numpy(a).requires_grad_(True)
    ro, to = rx.sparse_mask(rm), tx.sparse_mask(tm)
    _same_sparse(ro, to)
    assert ro.grad_fn.name == type(to.grad_fn).__name__ == "SparseMaskBackward0"
    assert rt.autograd_gradcheck(lambda x: x.sparse_mask(rm).to_dense() ** 2, [rx])
    if layout != "coo":
        return  # (PyTorch's backward takes COO masks only: finite differences above)
    up = RNG.standard_normal((2, 4))
    (rg,) = rt.autograd_grad([ro.to_dense()], [rx], [rt.torch_tensor(up)])
    (tg,) = torch.autograd.grad([to.to_dense()], [tx], [torch.from_numpy(up)])
    assert_same(rg, tg, "grad")


def test_sparse_mask_uncoalesced_and_of_a_sparse_self() -> None:
    idx, vals, size = [[0, 1, 0], [0, 2, 0]], [9.0, 9.0, 1.0], (2, 4)  # (0, 0) twice
    a = RNG.standard_normal((2, 4))
    ro, to = rt.torch_tensor(a).sparse_mask(_coo(idx, vals, size, rt)), \
        torch.from_numpy(a).sparse_mask(_coo(idx, vals, size, torch))
    _same_coo(ro.coalesce(), to.coalesce())
    np.testing.assert_array_equal(ro._indices().data, to._indices().numpy())
    u = _coo([[0, 0, 1, 0], [0, 1, 3, 0]], [5.0, 2.0, 3.0, 7.0], size, rt)
    tu = _coo([[0, 0, 1, 0], [0, 1, 3, 0]], [5.0, 2.0, 3.0, 7.0], size, torch)
    assert_same(u.sparse_mask(_coo(idx, vals, size, rt))._values(),
                tu.sparse_mask(_coo(idx, vals, size, torch))._values(), "values")
    # a duplicate in the mask reads self twice: twice the gradient (finite differences)
    x = rt.torch_tensor(a, requires_grad=True)
    assert rt.autograd_gradcheck(lambda x: x.sparse_mask(_coo(idx, vals, size, rt)).to_dense(), [x])


@pytest.mark.parametrize("accumulate", [False, True])
def test_sparse_mask_projection_matches_pytorch(accumulate) -> None:
    size = (2, 4)
    for s_idx, s_vals in (([[0, 0, 1, 0], [0, 1, 3, 0]], [5.0, 2.0, 3.0, 7.0]),
                          ([[0, 0, 1], [0, 1, 3]], [5.0, 2.0, 3.0])):
        for m_idx in ([[0, 1, 0], [0, 2, 0]], [[0, 1], [0, 3]]):
            r = _coo(s_idx, s_vals, size, rt)._sparse_mask_projection(
                _coo(m_idx, [1.0] * len(m_idx[0]), size, rt), accumulate_matches=accumulate)
            t = _coo(s_idx, s_vals, size, torch)._sparse_mask_projection(
                _coo(m_idx, [1.0] * len(m_idx[0]), size, torch), accumulate_matches=accumulate)
            np.testing.assert_array_equal(r._indices().data, t._indices().numpy())
            assert_same(r._values(), t._values(), "values")


@pytest.mark.parametrize("beta,alpha", [(1, 1), (2, 3), (0, 1)])
def test_smm_and_sspaddmm_match_pytorch(beta, alpha) -> None:
    d = RNG.standard_normal((4, 3))
    s1 = ([[0, 0, 1, 0], [0, 1, 3, 0]], [1.0, 2.0, 3.0, 4.0], (2, 4))  # a duplicate
    s0 = ([[1], [2]], [5.0], (2, 3))
    r = _coo(*s1, rt).smm(rt.torch_tensor(d))
    t = _coo(*s1, torch).smm(torch.from_numpy(d))
    np.testing.assert_array_equal(r._indices().data, t._indices().numpy())
    assert_same(r._values(), t._values(), "smm")
    assert r.is_coalesced() == t.is_coalesced()
    r = _coo(*s0, rt).sspaddmm(_coo(*s1, rt), rt.torch_tensor(d), beta=beta, alpha=alpha)
    t = _coo(*s0, torch).sspaddmm(_coo(*s1, torch), torch.from_numpy(d), beta=beta, alpha=alpha)
    np.testing.assert_array_equal(r._indices().data, t._indices().numpy())
    assert_same(r._values(), t._values(), "sspaddmm")
    # PyTorch has no derivative for either: the node refuses, with its message
    x = rt.torch_tensor(d, requires_grad=True)
    out = _coo(*s1, rt).smm(x)
    assert out.grad_fn.name == type(_coo(*s1, torch).smm(
        torch.from_numpy(d).requires_grad_(True)).grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::sspaddmm is not implemented"):
        out.to_dense().sum().backward()


def test_resizes_and_private_coo_methods_match_pytorch() -> None:
    cases = [("sparse_resize_", ((3, 5), 2, 0)), ("sparse_resize_and_clear_", ((3, 5, 2), 2, 1)),
             ("sparse_resize_and_clear_", ((3,), 1, 0))]
    for name, args in cases:
        r, t = _coo(*_MASK, rt), _coo(*_MASK, torch)
        assert getattr(r, name)(*args) is r
        getattr(t, name)(*args)
        _same_coo(r, t)
    r, t = _coo(*_MASK, rt), _coo(*_MASK, torch)
    r.resize_as_sparse_(rt.torch_randn(5, 6).to_sparse())
    t.resize_as_sparse_(torch.randn(5, 6).to_sparse())
    _same_coo(r, t)
    empty_r = rt.torch_zeros(2, 2).to_sparse()
    empty_t = torch.zeros(2, 2).to_sparse()
    empty_r.sparse_resize_((1, 1, 3), 2, 1)
    empty_t.sparse_resize_((1, 1, 3), 2, 1)
    _same_coo(empty_r, empty_t)
    r, t = _coo(*_MASK, rt), _coo(*_MASK, torch)
    assert (r._dimI(), r._dimV()) == (t._dimI(), t._dimV()) == (2, 0)
    hybrid = rt.torch_randn(2, 3, 4).to_sparse(1)
    assert (hybrid._dimI(), hybrid._dimV()) == (1, 2)
    assert r._coalesced_(True) is r and r.is_coalesced() == t._coalesced_(True).is_coalesced()
    assert not r._coalesced_(False).is_coalesced()
    assert_same(r._to_dense(), t._to_dense(), "_to_dense")


@pytest.mark.filterwarnings("ignore:Sparse (CSC|BSR|BSC)")
def test_printing_compressed_layouts_fails_as_libtorchs_print() -> None:
    """libtorch's print refuses CSC/BSR/BSC (is_contiguous), R torch too; CSR it densifies."""
    x = rt.torch_randn(2, 2)
    for conv, args in (("to_sparse_csc", ()), ("to_sparse_bsr", ((1, 1),)),
                       ("to_sparse_bsc", ((1, 2),))):
        t = getattr(torch.randn(2, 2), conv)(*args).to(torch.double)
        with pytest.raises(RuntimeError) as want:
            t.contiguous()  # (what libtorch's print calls first)
        with pytest.raises(RuntimeError) as got:
            repr(getattr(x, conv)(*args))
        assert str(got.value).startswith(str(want.value).split("\n")[0])


# --- MKLDNN ----------------------------------------------------------------------

_MKLDNN_ORACLE = """
import sys, torch
@torch.jit.script
def show(x: torch.Tensor):
    print(x)   # libtorch's C++ print
for shape in eval(sys.stdin.read()):
    n = int(torch.tensor(shape).prod().item())
    show((torch.arange(1, 1 + n).reshape(shape).float() / 3).to_mkldnn())
    print("@@")
"""


def test_mkldnn_prints_as_libtorch(tmp_path) -> None:
    shapes = [(2, 3), (4,), (2, 2, 2)]
    script = tmp_path / "oracle.py"
    script.write_text(_MKLDNN_ORACLE)
    res = subprocess.run([sys.executable, str(script)], input=repr(shapes), capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    for shape, want in zip(shapes, res.stdout.split("@@\n")[:-1]):
        n = int(np.prod(shape))
        x = (rt.torch_arange(1, 1 + n).reshape(shape).to(dtype=rt.torch_float()) / 3).to_mkldnn()
        assert repr(x) + "\n" == "torch_tensor\n" + want
    assert repr(x.layout) == "torch_"  # (R torch's: lantern has no name for it)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8", "uint8"])
def test_mkldnn_round_trip_and_gradient_match_pytorch(dtype) -> None:
    a = (RNG.standard_normal((3, 4)) * 4).astype(np.float32)
    grad = dtype in ("float32", "bfloat16")  # (PyTorch: no autograd for int8/uint8 tensors)
    rx, tx = rt.torch_tensor(a, requires_grad=grad), torch.from_numpy(a).requires_grad_(grad)
    rd, td = getattr(rt.tensor, dtype), getattr(torch, dtype)
    rm, tm = rx.to_mkldnn(rd), tx.to_mkldnn(td)
    assert rm.dtype is rd and rm.layout is rt.tensor.mkldnn and tm.layout == torch._mkldnn
    ro, to = rm.to_dense(), tm.to_dense()
    assert_same(ro.to(dtype=rt.torch_float()), to.detach().float(), "to_dense")
    if grad:
        assert rm.grad_fn.name == type(tm.grad_fn).__name__ == "ToMkldnnBackward0"
        assert ro.grad_fn.name == type(to.grad_fn).__name__
        up = RNG.standard_normal((3, 4)).astype(np.float32)
        (rg,) = rt.autograd_grad([ro], [rx], [rt.torch_tensor(up).to(dtype=rd)])
        (tg,) = torch.autograd.grad([to], [tx], [torch.from_numpy(up).to(td)])
        assert_same(rg, tg, "grad")
    for bad, tbad in ((rt.torch_randn(2, dtype=rt.torch_float64()),
                       torch.randn(2, dtype=torch.float64)), (rm, tm), (rx.detach().to_sparse(),
                                                                         tx.detach().to_sparse())):
        with pytest.raises(RuntimeError) as want:
            tbad.to_mkldnn()
        with pytest.raises(RuntimeError) as got:
            bad.to_mkldnn()
        assert str(got.value).startswith(str(want.value).split("\n")[0].split(". This")[0])
    with pytest.raises(NotImplementedError, match="add\\(\\) is not supported for MKLDNN"):
        rm + 1


# --- batch dims --------------------------------------------------------------------

def _batched() -> list:
    """(array, dense_dim): 3-d with one batch dim, 4-d with a batch and a dense dim;
    every batch stores as many values (libtorch's rule)."""
    y = np.zeros((2, 2, 4), np.float32)
    y[:, 0, 0], y[:, 1, 3], y[1, 1, 3] = 1, 2, 5
    z = np.zeros((3, 2, 4, 3), np.float32)
    z[:, 0, 0], z[:, 1, 2] = RNG.standard_normal((3, 1)), 1
    return [(y, None), (z, 1)]


_BATCH_CONVS = {"csr": ("to_sparse_csr", ()), "csc": ("to_sparse_csc", ()),
                "bsr12": ("to_sparse_bsr", ((1, 2),)), "bsc21": ("to_sparse_bsc", ((2, 1),)),
                "bsr22": ("to_sparse_bsr", ((2, 2),))}


@pytest.mark.filterwarnings("ignore:Sparse (CSC|BSR|BSC)")
@pytest.mark.parametrize("case", [0, 1])
@pytest.mark.parametrize("src", list(_BATCH_CONVS))
def test_batch_dims_match_pytorch(case, src) -> None:
    a, dd = _batched()[case]
    f, args = _BATCH_CONVS[src]
    kw = {} if dd is None else {"dense_dim": dd}
    r = getattr(rt.torch_tensor(a), f)(*args, **kw)
    t = getattr(torch.from_numpy(a), f)(*args, **kw)
    _same_sparse(r, t)
    _same_coo(r.to_sparse(), t.to_sparse())
    for g, gargs in _BATCH_CONVS.values():
        try:
            want = getattr(t, g)(*gargs)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as info:
                getattr(r, g)(*gargs)
            assert str(info.value) == str(e).split("\n")[0]
            continue
        _same_sparse(getattr(r, g)(*gargs), want)


@pytest.mark.filterwarnings("ignore:Sparse (CSC|BSR|BSC)")
def test_batch_dims_gradients_and_masks() -> None:
    z = RNG.standard_normal((3, 2, 4, 3)) + 5  # (no zeros: every batch stays full)
    rx, tx = rt.torch_tensor(z, requires_grad=True), torch.from_numpy(z).requires_grad_(True)
    # (values(): the one batched backward PyTorch has; finite differences for the rest)
    up = RNG.standard_normal((3, 8, 3))
    (rg,) = rt.autograd_grad([rx.to_sparse_csr(dense_dim=1).values()], [rx],
                             [rt.torch_tensor(up)])
    (tg,) = torch.autograd.grad([tx.to_sparse_csr(dense_dim=1).values()], [tx],
                                [torch.from_numpy(up)])
    assert_same(rg, tg, "grad")
    for f in (lambda x: x.to_sparse_csr(dense_dim=1).to_dense() ** 2,
              lambda x: x.to_sparse_bsc((2, 2), dense_dim=1).values() ** 2,
              lambda x: x.to_sparse_csc(dense_dim=1).to_sparse().to_dense() ** 2):
        assert rt.autograd_gradcheck(f, [rx])
    a, _ = _batched()[1]
    mask, tmask = rt.torch_tensor(a).to_sparse_csr(dense_dim=1), \
        torch.from_numpy(a).to_sparse_csr(dense_dim=1)
    b = RNG.standard_normal(a.shape).astype(np.float32)
    _same_sparse(rt.torch_tensor(b).sparse_mask(mask), torch.from_numpy(b).sparse_mask(tmask))
