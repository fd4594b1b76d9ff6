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
reads every module's dict and set literals (and tuples of names) and fails on one
whose keys are op names, but for the tables listed in ALLOWED, each saying why it
stays.
"""
from __future__ import annotations

import ast
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


def tables_keyed_by_ops() -> dict[tuple[str, str], list[str]]:
    """Module-level tables (a literal, or literals within its value: `{n: "lower" for n
    in (...)}`) of two or more keys at least half of which are op names."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for st in ast.parse(path.read_text()).body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                target, value = st.targets[0].id, st.value
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and \
                    st.value is not None:
                target, value = st.target.id, st.value
            else:
                continue
            if target == "__all__":
                continue
            ops = []
            for node in ast.walk(value):
                keys = _keys(node)
                named = [k for k in keys if k in REGISTRY]
                if len(named) >= 2 and 2 * len(named) >= len(keys):
                    ops += named
            if ops:
                out[(module, target)] = ops
    return out


def test_no_op_is_named_in_a_table_outside_its_declaration():
    found = tables_keyed_by_ops()
    extra = {k: v[:5] for k, v in found.items() if k not in ALLOWED}
    assert not extra, f"facts about ops belong on their @op declaration: {extra}"


@pytest.mark.parametrize("table", sorted(ALLOWED))
def test_the_allowed_tables_exist(table):
    # (an entry of ALLOWED whose table went away goes away with it)
    assert table in tables_keyed_by_ops()
