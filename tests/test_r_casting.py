"""R values cast as R torch casts them, for every export, from one declaration.

What an argument takes from R is its declared kind (rtorch_py.r.binding: the
Python annotation). Checked here against R torch's own argument types — the
C++ signatures of its generated bindings (`src/gen-namespace.cpp` in the
snapshot: `XPtrTorchTensor self`, `XPtrTorchTensorList tensors`, ...) — and,
through the R bridge, for each op with samples: every accepted R form gives
what the canonical tensor gives, every refused one an R error saying what was
expected (tests/r_cast_calls.py).
"""
from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT, needs_r
from rtorch_py.ops import REGISTRY
from rtorch_py.ops.registry import argument_kind
from rtorch_py.r import binding, tables

SNAPSHOT = Path("/work/.mirror/mlverse+torch/repo")
TENSOR = {"Tensor", "OptionalTensor", "IndexTensor"}  # R torch's tensor arguments' types


def _r_torch_types() -> dict[tuple[str, str], dict[str, set[str]]]:
    """{("namespace" | "method", op): {argument: R torch's types over its overloads}}."""
    src = subprocess.run(["git", f"--git-dir={SNAPSHOT}", "show", "HEAD:src/gen-namespace.cpp"],
                         capture_output=True, text=True, check=True).stdout
    out: dict = defaultdict(lambda: defaultdict(set))
    for m in re.finditer(r"^\S+ cpp_torch_(namespace|method)_(\w+) \(([^)]*)\) \{", src, re.M):
        which, name, params = m.groups()
        typed = [p.strip().rsplit(" ", 1) for p in params.split(",") if p.strip()]
        if not typed:
            continue
        # the C++ name is the op's, then each argument's name and type
        first = typed[0][1]
        for at in re.finditer(f"(?=_{re.escape(first)}_)", name):
            rest = name[at.start() + len(first) + 2:]
            if rest[:1].isupper() or rest.startswith(("int64_t", "double", "bool", "c10")):
                for t, n in typed:
                    out[which, name[:at.start()]][n].add(t.replace("XPtrTorch", ""))
                break
    return out


# One function declared for two exports whose R kinds differ: `torch___and__` is
# bitwise_and's function (`torch___lshift__` bitwise_left_shift's...), whose `self`
# takes a number too in R torch.
SHARED = {(f"torch___{op}__", "self") for op in ("and", "or", "xor", "lshift", "rshift")}
# R torch takes the list form under another name (`torch_atleast_1d(tensors =)`); ours in `self`.
SHARED |= {(f"torch_atleast_{n}d", "self") for n in (1, 2, 3)}
# R torch's own `$scatter(dim, index, src)` / `$scatter_()` (R/tensor.R) give a `src` that is
# no tensor as `value`; the one function serves both forms here.
SHARED |= {(name, "src") for name in ("torch_scatter", "x$scatter", "x$scatter_")}


INDEX = {"index_int64_t", "optional_index_int64_t", "IndexIntArrayRef",
         "OptionalIndexIntArrayRef"}  # R torch's dims and positions, 1-based in R
INT = {"int64_t", "optional_int64_t", "IntArrayRef", "OptionalIntArrayRef"}  # as R gives them
SCALAR = {"Scalar", "optional_scalar"}


def _r_shifted() -> set[tuple[str, str, str]]:
    """{("namespace" | "method", op, argument)} that R torch's hand-written R code makes
    1-based where the C++ type does not (`as_1_based_dim(source)`, `start - 1L`): its
    functions' bodies in R/*.R and its methods' in R/tensor.R."""
    git = ["git", f"--git-dir={SNAPSHOT}"]
    files = subprocess.run([*git, "ls-tree", "--name-only", "HEAD", "R/"], capture_output=True,
                           text=True, check=True).stdout.split()
    out, fn = set(), None
    for path in files:
        if "/gen-" in path:
            continue
        src = subprocess.run([*git, "show", f"HEAD:{path}"], capture_output=True, text=True,
                             check=True).stdout
        for line in src.splitlines():
            top = re.match(r"(?:torch_)?(\w+) <- function\(", line)
            method = re.match(r"    (\w+) = function\(", line) if path == "R/tensor.R" else None
            if top or method:
                fn = ("namespace", top[1]) if top else ("method", method[1])
            for arg in re.findall(r"as_1_based_dim\((\w+)\)|(\w+) (?:<-|=) \w+ - 1L",
                                  line):
                out.add((*fn, arg[0] or arg[1]))
    return out


def _r_kind(types: set[str]) -> str | None:
    if types <= TENSOR:
        return "tensor"
    if types == {"TensorList"}:
        return "tensors"
    return None


def _ours(annotation: object) -> str | None:
    k = argument_kind(annotation)
    return k if k in ("tensor", "tensors") else None


def _exports(spec):  # (which, R torch's op name, ours as shown)
    if spec.function:
        name = spec.function_name
        yield "namespace", name[6:] if name.startswith("torch_") else name, name
    if spec.method:
        yield "method", spec.name, f"x${spec.name}"


@pytest.mark.skipif(not SNAPSHOT.exists(), reason="R torch's snapshot is not here")
def test_declared_kinds_are_r_torchs() -> None:
    theirs = _r_torch_types()
    checked, differ = 0, []
    for spec in REGISTRY.values():
        params = inspect.signature(spec.fn).parameters
        for which, op, shown in _exports(spec):
            for arg, types in theirs.get((which, op), {}).items():
                if arg not in params or which == "method" and arg == "self" or \
                        (shown, arg) in SHARED:
                    continue  # (PyTorch's out=; a method's tensor is the object)
                checked += 1
                if _ours(params[arg].annotation) != _r_kind(types):
                    differ.append(f"{shown}({arg}): ours {params[arg].annotation!r}, "
                                  f"R torch's {sorted(types)}")
    assert checked > 1500, checked
    assert not differ, "\n".join(differ)


@pytest.mark.skipif(not SNAPSHOT.exists(), reason="R torch's snapshot is not here")
def test_declared_counting_and_scalars_are_r_torchs() -> None:
    """int64 / IntArrayRef arguments: 1-based in R where R torch's type is an index
    (`index_int64_t`, `IndexIntArrayRef`) or its R code shifts them, given as they are
    otherwise — our declaration counts exactly those (tables.facts); a Scalar is
    declared one (a one-element tensor is its number)."""
    theirs, shifted = _r_torch_types(), _r_shifted()
    assert ("method", "movedim", "source") in shifted  # (the parse found R torch's shifts)
    counted, scalars, differ = 0, 0, []
    for spec in REGISTRY.values():
        params = inspect.signature(spec.fn).parameters
        for which, op, shown in _exports(spec):
            ours = tables.facts(spec, which == "method").counted
            for arg, types in theirs.get((which, op), {}).items():
                if arg not in params or (shown, arg) in SHARED:
                    continue
                if types & (INDEX | INT):
                    one_based = bool(types & INDEX) or (which, op, arg) in shifted
                    counted += 1
                    if (ours.get(arg, "zero_based") != "zero_based") != one_based:
                        differ.append(f"{shown}({arg}): ours {ours.get(arg, 'as given')}, "
                                      f"R torch's {sorted(types)} "
                                      f"({'1-based' if one_based else 'as given'})")
                elif types <= SCALAR:
                    scalars += 1
                    if argument_kind(params[arg].annotation) != "scalar":
                        differ.append(f"{shown}({arg}): ours {params[arg].annotation!r}, "
                                      f"R torch's Scalar")
    assert counted > 400 and scalars > 100, (counted, scalars)
    assert not differ, "\n".join(differ)


def test_declared_kinds_cast_r_values() -> None:
    """Without R: the binder casts by kind (an R number for a Tensor, a named list
    for a TensorList) and refuses in R's words."""
    maximum = tables.r_callable(REGISTRY["maximum"])
    import rtorch_py as rt
    from rtorch_py.function import NamedList
    t = rt.torch_tensor([-1.0, 2.0])
    np.testing.assert_array_equal(maximum(t, 0.0).data, [0.0, 2.0])
    stack = tables.r_callable(REGISTRY["stack"])
    got = stack(NamedList(["a", "b"], [t, t]))
    assert tuple(got.shape) == (2, 2)
    with pytest.raises(TypeError, match=r"torch_maximum\(\): `other` must be a tensor"):
        maximum(t, "a")
    with pytest.raises(TypeError, match=r"torch_stack\(\): `tensors` must be a list of tensors"):
        stack("a")
    square = tables.r_callable(REGISTRY["square"])
    assert square(3).dtype == rt.torch_long()  # (an R integer: int64, as torch_tensor(3L))


def test_optional_tensors_take_an_empty_list_as_none() -> None:
    """R torch's default for an optional tensor is `list()` (its formals:
    `attn_mask = list()`): an empty R list, named or not, is none as NULL is; a
    tensor that is no option still refuses it."""
    import rtorch_py as rt
    from rtorch_py.function import NamedList
    q = rt.torch_randn(2, 3, 4)
    sdpa = tables.r_callable(REGISTRY["scaled_dot_product_attention"])
    np.testing.assert_array_equal(sdpa(q, q, q, attn_mask=[]).data, sdpa(q, q, q).data)
    diff = tables.r_callable(REGISTRY["diff"])
    x = rt.torch_tensor([1.0, 4.0, 9.0])
    np.testing.assert_array_equal(diff(x, prepend=NamedList([], [])).data, [3.0, 5.0])
    linear = tables.build()["FUNCTIONS"]["nnf_linear"]
    np.testing.assert_array_equal(linear(rt.torch_ones(1, 2), rt.torch_ones(3, 2), bias=[]).data,
                                  [[2.0, 2.0, 2.0]])
    with pytest.raises(TypeError, match=r"torch_maximum\(\): `other` must be a tensor"):
        tables.r_callable(REGISTRY["maximum"])(x, [])


@pytest.fixture(scope="module")
def r_results() -> dict:
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "r_cast_calls.py")],
                         capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert res.returncode == 0, res.stderr[-4000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@needs_r
def test_r_forms_cast_as_r_torch(r_results: dict) -> None:
    checked = sum(len(v) for v in r_results.values())
    assert checked > 1000, checked  # (every export with samples and tensor arguments)
    for name in ("torch_maximum", "torch_square", "torch_stack"):
        assert name in r_results
    wrong = [f"{fn}: {form}: {msg}" for fn, forms in r_results.items()
             for form, msg in forms.items() if msg]
    assert not wrong, "\n".join(wrong)


def test_labels_given_as_r_vectors_are_counted_from_1() -> None:
    """An `nnf_*` function's class labels (`@r_counted`) as an R integer vector: the
    tensor torch_tensor() makes of it, then 0-based — the same as that tensor given."""
    import rtorch_py as rt
    functions = tables.build()["FUNCTIONS"]
    x = rt.torch_randn(3, 2)
    r_vector = np.array([1, 2, 1], dtype=np.int32)  # (what the bridge makes of c(1L, 2L, 1L))
    for name in ("nnf_cross_entropy", "nnf_nll_loss"):
        given = functions[name](x, r_vector)
        canonical = functions[name](x, rt.torch_tensor(r_vector.astype(np.int64)))
        np.testing.assert_array_equal(given.data, canonical.data)
    np.testing.assert_array_equal(functions["nnf_one_hot"](r_vector).data,
                                  np.eye(2, dtype=np.int64)[[0, 1, 0]])


def test_layer_labels_given_as_r_vectors_are_counted_from_1() -> None:
    """A layer's forward inputs that R counts from 1 (declared on its forward, or taken
    from the nnf_ function it applies): an R vector is the tensor torch_tensor() makes."""
    import rtorch_py as rt
    from rtorch_py.r import nn_api
    x = rt.torch_randn(3, 2)
    r_vector = np.array([1, 2, 1], dtype=np.int32)  # (c(1L, 2L, 1L))
    canonical = rt.torch_tensor(r_vector.astype(np.int64))
    for name in ("nn_cross_entropy_loss", "nn_nll_loss", "nn_multi_margin_loss"):
        loss = nn_api.nn_new(name)
        np.testing.assert_array_equal(nn_api.nn_forward(loss, x, r_vector).data,
                                      nn_api.nn_forward(loss, x, canonical).data)
    embedding = nn_api.nn_new("nn_embedding", 2, 3)
    np.testing.assert_array_equal(nn_api.nn_forward(embedding, r_vector).data,
                                  embedding.weight.data[[0, 1, 0]])


def test_dims_r_torch_gives_as_they_are_take_r_doubles() -> None:
    """moveaxis and swapaxes take R torch's 0-based dims (no index type there), R's
    doubles as whole numbers; concat's `dim` is 1-based (an index type there)."""
    import rtorch_py as rt
    x = rt.torch_zeros(2, 3, 4)
    swapaxes = tables.r_callable(REGISTRY["swapaxes"])
    assert tuple(swapaxes(x, 0.0, 1.0).shape) == (3, 2, 4)
    moveaxis = tables.r_callable(REGISTRY["moveaxis"], method=True)
    assert tuple(moveaxis(x, np.array([0.0, 1.0]), np.array([2.0, 0.0])).shape) == (3, 4, 2)
    concat = tables.r_callable(REGISTRY["concat"])
    assert tuple(concat([x, x], dim=1.0).shape) == (4, 3, 4)
