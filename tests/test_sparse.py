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
