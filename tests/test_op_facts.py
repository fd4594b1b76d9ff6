"""Per-op facts live on the op's declaration (`@op(...)`, ops/registry.py), and a
family of ops declares the facts its consumer needs:

- ComplexHalf (ops/complex_half.py): every op has a policy, `complex_half=` True,
  "real", or libtorch's kernel named in its refusal; the default (False) is the
  refusal naming the op itself;
- autocast (ops/dispatch.py): the ops of libtorch's CPU autocast lists declare
  their policy (`autocast=`), the others none; every convolution, matrix product
  and FFT transform declares one;
- ONNX (jit/onnx.py): every op implementing an R operator or an R Math group
  generic says its ONNX operator, or `onnx=False`; a declared operator is that of
  an op of one or two tensors (the elementwise converters);
- the lite interpreter (jit/mobile.py): each declared schema parses and names the
  op's own parameters.

And no module keeps a table keyed by op names beside the registry: the scan below
reads every literal of every module (dicts, sets, tuples and lists of names, at module
level, in classes and in functions: assigned, looped over, passed to a call or tested
with `in`) and fails on one whose keys are op names, but for the tables listed in
ALLOWED, each saying why it stays.
"""
from __future__ import annotations

import ast
import functools
import inspect
import re
from pathlib import Path

import pytest

import rtorch_py  # noqa: F401  (declares the ops)
from rtorch_py.jit import mobile, onnx
from rtorch_py.ops.registry import REGISTRY

PACKAGE = Path(rtorch_py.__file__).resolve().parent


def test_complex_half_policies_are_declared():
    for name, spec in REGISTRY.items():
        policy = spec.complex_half
        assert policy in (True, False) or (isinstance(policy, str) and policy), name
        assert policy != name, f"{name}: complex_half=False already names the op"


def test_r_operators_and_math_ops_say_their_onnx_export():
    missing = [name for name, spec in REGISTRY.items()
               if (spec.r.get("r_operators") or spec.r.get("r_math")) and spec.onnx is None]
    assert not missing, f"declare onnx=<ONNX operator> (or onnx=False) on: {missing}"


def test_declared_onnx_operators_are_converted():
    for name, spec in REGISTRY.items():
        if isinstance(spec.onnx, str):
            assert onnx._required(spec) in (1, 2), \
                f"{name}: onnx= is for elementwise ops of one or two tensors"
            assert name in onnx.CONVERTERS, name
            assert (onnx._UNARY | onnx._BINARY)[name] == spec.onnx


# libtorch 2.8's CPU autocast lists (the ops this engine has; einsum, tensordot and
# multi_dot are its composites of bmm/mm, lowered there too): the oracle of `autocast=`.
LIBTORCH_CPU_AUTOCAST = {
    "lower": ("addbmm", "addmm", "baddbmm", "bmm", "chain_matmul", "conv1d", "conv2d",
              "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "convolution", "einsum", "linalg_multi_dot", "matmul", "mm", "prelu",
              "scaled_dot_product_attention", "tensordot"),
    "fp32": ("adaptive_avg_pool3d", "binary_cross_entropy_with_logits", "cdist", "cholesky",
             "cholesky_inverse", "cholesky_solve", "fft_fft", "fft_fft2", "fft_fftn",
             "fft_hfft", "fft_ifft", "fft_ifft2", "fft_ifftn", "fft_ihfft", "fft_irfft",
             "fft_irfft2", "fft_irfftn", "fft_rfft", "fft_rfft2", "fft_rfftn", "geqrf",
             "grid_sampler", "inverse", "linalg_cholesky", "linalg_cholesky_ex", "linalg_cond",
             "linalg_eig", "linalg_eigh", "linalg_eigvals", "linalg_eigvalsh",
             "linalg_householder_product", "linalg_inv", "linalg_inv_ex", "linalg_lstsq",
             "linalg_matrix_rank", "linalg_qr", "linalg_solve", "linalg_svd", "linalg_svdvals",
             "linalg_tensorinv", "linalg_tensorsolve", "lu_solve", "multi_margin_loss",
             "nanquantile", "orgqr", "ormqr", "pinverse", "polar", "prod", "qr", "quantile",
             "stft", "svd", "trace", "triangular_solve"),
    "promote": ("cat", "index_copy", "stack"),
}


def test_autocast_policies_are_libtorchs():
    expected = {name: policy for policy, names in LIBTORCH_CPU_AUTOCAST.items()
                for name in names}
    wrong = {name: (spec.autocast, expected.get(name)) for name, spec in REGISTRY.items()
             if spec.autocast != expected.get(name)}
    assert not wrong, f"declared autocast= differs from libtorch's (declared, libtorch's): {wrong}"


def _needs_autocast(name: str) -> bool:
    """The families whose ops are all on libtorch's lists: convolutions, matrix products,
    FFT transforms."""
    return bool(re.fullmatch(r"conv(_transpose)?\dd|convolution|(add|badd)?b?mm|addbmm|"
                             r"matmul|fft_i?r?h?fft[2n]?", name))


def test_convolutions_matrix_products_and_ffts_declare_their_autocast_policy():
    family = [name for name in REGISTRY if _needs_autocast(name)]
    assert len(family) > 20  # (the families are found)
    missing = [name for name in family if REGISTRY[name].autocast is None]
    assert not missing, f"declare autocast=<policy> on: {missing}"


def test_mobile_schemas_name_the_ops_parameters():
    for name, spec in REGISTRY.items():
        if spec.mobile is None:
            continue
        ours = set(inspect.signature(spec.impl).parameters)
        for ov in mobile._overloads(spec.mobile):
            params = {p for p, _ in ov.params}
            assert params <= ours, f"{name}.{ov.name}: {sorted(params - ours)} not the op's"
            assert ov in mobile.OVERLOADS[mobile.aten_name(name)]


# Tables keyed by op names that legitimately stay outside the declarations:
# (module, table name), each with why.
ALLOWED = {
    # the values of a `reduction` / `reduce` argument ("sum", "mean" are modes, not ops)
    ("rtorch_py.jit.aten", "_REDUCTIONS"),
    ("rtorch_py.nn.functional", "_REDUCTIONS"),
    ("rtorch_py.r.internal_api", "_REDUCTIONS"),
    ("rtorch_py.ops.indexing", "_REDUCE_START"),
    ("rtorch_py.ops.indexing", "_REDUCE_AT"),
    # name-inference rules by the rule's name (`names="cat"` on the declaration)
    ("rtorch_py.ops.names", "RULES"),
    # the upsampling kernels' node names, computed from the op's name (a cache)
    ("rtorch_py.ops.upsample", "_NODE_NAMES"),
    # TorchScript readers: functions rebuilding a call from aten's argument order (code)
    ("rtorch_py.jit.aten", "_READERS"),
    # the dtype each cast method (`x$float()`) names in aten's `to` form (code)
    ("rtorch_py.jit.aten", "_CASTS"),
    # TorchScript's aten operators on Python numbers (`aten::add.int`): Python's own
    # arithmetic in the interpreter, not the tensor ops
    ("rtorch_py.jit.interpreter", "_SCALAR_OPS"),
    # Python's builtin types in the generated stub (`int`, `float` are also ops)
    ("rtorch_py.tools.stubs", "_BUILTINS"),
    # TorchScript forms that are not the op's own signature, made in a loop of `entry`
    # calls (converting arguments is code; docs/adding-an-op.md)
    ("rtorch_py.jit.aten", "for _name in 'relu'"),
    ("rtorch_py.jit.aten", "for _name in 'reshape'"),
    ("rtorch_py.jit.aten", "_spread.first"),
    ("rtorch_py.jit.aten", "for _name in 'dsplit'"),
    # code of one converter or rule, not a fact kept for each op: ONNX's add/sub take
    # `alpha`; name inference's `contract` unifies addmm's self; `x == None` for eq/ne
    ("rtorch_py.jit.onnx", "_binary: in"),
    ("rtorch_py.ops.names", "contract: in"),
    ("rtorch_py.ops.pointwise", "_compare.compare: in"),
    # values of an argument that happen to be op names: reduction modes ("sum",
    # "mean", "amax"...), scatter's `reduce` ("add", "multiply"), nonlinearities,
    # a scheduler's mode ("min", "max"), complex parts, dtype and builtin type names
    ("rtorch_py.nn.functional", "nnf_ctc_loss._ctc.ctc_loss"),
    ("rtorch_py.ops.indexing", "ScatterReduceBackward0: in"),
    ("rtorch_py.ops.indexing", "_index_reduce: in"),
    ("rtorch_py.ops.indexing", "_scatter: in"),
    ("rtorch_py.ops.nn_primitives", "_reduction: in"),
    ("rtorch_py.ops.samples.indexing", "index_reduce.for reduce in 'mean'"),
    ("rtorch_py.ops.samples.indexing", "scatter_reduce.for reduce in 'sum'"),
    ("rtorch_py.nn.init", "nn_init_calculate_gain.linear"),
    ("rtorch_py.nn.rnn", "RNNBase.__init__: in"),
    ("rtorch_py.optim.schedulers", "ReduceLROnPlateau.__init__: in"),
    ("rtorch_py.r.tensor_api", "tensor_set: in"),
    ("rtorch_py.tensor", "_BY_NAME.update"),
    ("rtorch_py.jit.interpreter", "_isinstance: in"),
}


def _keys(node: ast.AST) -> list[str]:
    """The string keys (dict) or elements (set, frozenset, tuple, list) of a literal."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ("frozenset", "set") and node.args:
        node = node.args[0]
    if isinstance(node, ast.Dict):
        items = node.keys
    elif isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        items = node.elts
    else:
        return []
    return [k.value for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _named_ops(node: ast.AST) -> list[str]:
    """The op names a literal keys by: two or more, at least half of its keys."""
    keys = _keys(node)
    named = [k for k in keys if k in REGISTRY]
    return named if len(named) >= 2 and 2 * len(named) >= len(keys) else []


def _name(node: ast.AST) -> str:
    """A target or callee as written: `X`, `X.update`, `self.kinds`."""
    return ast.unparse(node)


def tables_in(source: str) -> dict[str, list[str]]:
    """The tables keyed by op names in one module's source, each by where it is:
    `TARGET` (a module-level assignment; a class's is `Class.TARGET`, a function's
    `function.TARGET`), `for TARGET in 'first'` (a loop over op names), `X.update`
    (a call given one), `function: in` (a membership test against op names).
    Literals nested in a table's value count for the table (`{n: "lower" for n in
    (...)}`)."""
    out: dict[str, list[str]] = {}

    def visit(node: ast.AST, scope: str, where: str | bool | None) -> None:
        # where: the place a table found here is called, None outside any place, False
        # inside a table already counted (its own literals are the table's)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope = f"{scope}{node.name}."
        ops = _named_ops(node) if where else []
        if ops:
            out.setdefault(where, []).extend(ops)
            where = False
        for field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    at = _place(node, field, child, scope) if where is None else where
                    visit(child, scope, at)

    visit(ast.parse(source), "", None)
    return out


def _place(parent: ast.AST, field: str, child: ast.AST, scope: str) -> str | None:
    """What a table found under `child` (the `field` of `parent`) is called."""
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and field == "value":
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        names = ", ".join(_name(t) for t in targets)
        return None if names == "__all__" else scope + names
    if isinstance(parent, ast.For) and field == "iter":
        first = next(iter(_keys(child)), "")
        return f"{scope}for {_name(parent.target)} in {first!r}"
    if isinstance(parent, ast.Compare) and field == "comparators" and \
            any(isinstance(o, (ast.In, ast.NotIn)) for o in parent.ops):
        return f"{scope.rstrip('.')}: in"
    if isinstance(parent, ast.Call) and field in ("args", "keywords"):
        return f"{scope}{_name(parent.func)}"
    return None


@functools.lru_cache(maxsize=1)
def tables_keyed_by_ops() -> dict[tuple[str, str], list[str]]:
    """Every module's tables keyed by op names (`tables_in`), by (module, place); the
    package's sources read once for all the tests that ask (read only)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for where, ops in tables_in(path.read_text()).items():
            out[(module, where)] = ops
    return out


def test_no_op_is_named_in_a_table_outside_its_declaration():
    found = tables_keyed_by_ops()
    extra = {k: v[:5] for k, v in found.items() if k not in ALLOWED}
    assert not extra, f"facts about ops belong on their @op declaration: {extra}"


@pytest.mark.parametrize("table", sorted(ALLOWED))
def test_the_allowed_tables_exist(table):
    # (an entry of ALLOWED whose table went away goes away with it)
    assert table in tables_keyed_by_ops()


# The scan finds a new table wherever it is put (each of these sources would fail the
# test above), and leaves literals that name no ops alone.
NEW_TABLES = {
    "_ONNX = {'tan': 'Tan', 'exp': 'Exp'}": "_ONNX",
    "class Exporter:\n    kinds = frozenset({'tan', 'exp'})": "Exporter.kinds",
    "for _op in ('tan', 'exp'):\n    register(_op)": "for _op in 'tan'",
    "_KINDS.update({'tan': 1, 'exp': 2})": "_KINDS.update",
    "def convert(op):\n    table = {'tan': 'Tan', 'exp': 'Exp'}\n    return table[op]":
        "convert.table",
    "def convert(op):\n    return 'Tan' if op in ('tan', 'atan') else None": "convert: in",
}


@pytest.mark.parametrize("source", sorted(NEW_TABLES))
def test_the_scan_finds_a_new_table_wherever_it_is(source):
    found = tables_in(source)
    assert list(found) == [NEW_TABLES[source]]
    assert set(found[NEW_TABLES[source]]) <= {"tan", "exp", "atan"}


def test_the_scan_leaves_other_literals_alone():
    assert tables_in("MODES = {'fast': 1, 'slow': 2}\nif m in ('a', 'b', 'tan'): pass") == {}
    assert tables_in("__all__ = ['tan', 'exp']") == {}
