"""Run in a subprocess by tests/test_op_registry.py: every op case called from R
(the shim loaded into this process's embedded R through rpy2), compared with
the same call in Python. Dims and positions go to R 1-based, positions come
back 1-based. Prints one JSON object {case id: {"ok": bool, "error": str}}.
"""
from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rtorch_py as rt  # noqa: E402
from op_cases import bound_arguments, cases, materialize  # noqa: E402
from rtorch_py import r as rbridge  # noqa: E402
from rtorch_py.formals import declared  # noqa: E402
from rtorch_py.r.binding import r_fact  # noqa: E402
from rtorch_py.r.tables import RESULT_CONVENTIONS, WRAPPERS  # noqa: E402


def r_form(named: list, kwargs: dict, formals: tuple, var: str | None) -> tuple[list, set, list]:
    """A Python call's arguments as R torch's formals take them: the sizes or tensors
    Python takes one by one as one vector or list (R has no `...` there), by position
    only as far as R's positions are Python's, and the arguments R has not."""
    r_names = [f[0] for f in formals]
    merged: list = []
    for n, v, kind in named:
        if n == var and merged and "..." not in r_names:  # (a `*more`: one vector)
            head = merged[-1]
            first = head[1] if isinstance(head[1], (list, tuple)) else [head[1]]
            merged[-1] = (head[0], [*first, v] if isinstance(v, rt.Tensor) else
                          (*first, v), head[2] or kind)
        else:
            merged.append((n, v, kind))
    by_name, other = set(kwargs), False
    for i, (n, _, _) in enumerate(merged):  # (after R's first other position: by name)
        other = other or n in kwargs or i >= len(r_names) or r_names[i] != n
        if other:
            by_name.add(n)
    python_only = [n for n, _, _ in merged if n not in r_names]
    return merged, by_name, python_only


def to_r(v, kind):
    """A sample's value as R gives it (positions 1-based where `kind` says so); R
    values (and lists of them) pass as they are."""
    import rpy2.rinterface as ri
    if isinstance(v, rt.Tensor):
        return rbridge.to_r(rt.torch_tensor(v.data + 1) if kind == "position" else v)
    if isinstance(v, list) and v and all(isinstance(t, (rt.Tensor, ri.Sexp)) for t in v):
        return ri.baseenv["list"](*[t if isinstance(t, ri.Sexp) else to_r(t, kind) for t in v])
    if isinstance(v, ri.Sexp):
        return v
    if v is None:
        return ri.NULL
    if isinstance(v, bool):
        return ri.BoolSexpVector([v])
    if isinstance(v, (tuple, list)):
        vals = [d + 1 if kind and d >= 0 else d for d in v]
        whole = not any(isinstance(d, float) for d in vals)
        return ri.FloatSexpVector(vals) if kind or not whole else ri.IntSexpVector(vals)
    if isinstance(v, int):
        return ri.FloatSexpVector([v + 1 if kind and v >= 0 else v]) if kind else \
            ri.IntSexpVector([v])
    if isinstance(v, float):
        return ri.FloatSexpVector([v])
    if isinstance(v, str):
        return ri.StrSexpVector([v])
    raise TypeError(f"no R form for {v!r}")


def main() -> None:
    rbridge.load()
    import rpy2.rinterface as ri

    def zero_based(t):
        return rt.torch_tensor(t.data - 1)

    out = {}
    for case in cases():
        spec = case.spec
        if not (spec.function or spec.method):
            continue  # (a node R reaches through an nnf_ function: tested with it)
        try:
            arrays, _, rebuild = materialize(case.sample, np.float64)
            tensors = [rt.torch_tensor(a.copy()) for a in arrays]
            args, kwargs = rebuild(tensors)
            python_form = spec.fn
            for c in r_fact(spec, "r_conventions"):  # libtorch's form where R torch has it
                python_form = WRAPPERS[c](python_form) if c in WRAPPERS else python_form
            expected = python_form(*args, **kwargs)
            # as the sample gives them: by position, then by name (R torch's names)
            named = bound_arguments(spec, args, kwargs)
            by_name = set(kwargs)
            formals = declared(spec.fn, method=not spec.function)
            if formals is not None:  # R torch's formals, declared: the call in R's form
                var = next((p.name for p in inspect.signature(spec.fn).parameters.values()
                            if p.kind is p.VAR_POSITIONAL), None)
                named, by_name, python_only = r_form(named, kwargs, formals, var)
                if python_only:  # (PyTorch's argument: R refuses it, as R torch)
                    fn = ri.globalenv.find(spec.function_name) if spec.function else \
                        ri.evalr(f"function(self, ...) self$`{spec.name}`(...)")
                    try:
                        fn(*[to_r(v, kind) for n, v, kind in named if n not in by_name],
                           **{n: to_r(v, kind) for n, v, kind in named if n in by_name})
                    except Exception as refused:
                        assert "unused argument" in str(refused), str(refused)
                        out[case.id] = {"ok": True, "error": ""}
                        continue
                    raise AssertionError(f"R took PyTorch's {python_only}")
            r_args = [to_r(v, kind) for n, v, kind in named if n not in by_name]
            r_kwargs = {n: to_r(v, kind) for n, v, kind in named if n in by_name}
            if spec.function:
                fn = ri.globalenv.find(spec.function_name)
            else:
                fn = ri.evalr(f"function(self, ...) self$`{spec.name}`(...)")
                if "self" in r_kwargs:  # (a sample naming self: the tensor called on)
                    r_args.insert(0, r_kwargs.pop("self"))
            got = rbridge.from_r(fn(*r_args, **r_kwargs))
            which = spec.returns_indices
            which = which(expected) if callable(which) else which
            if which is True:
                got = [zero_based(g) for g in got] if isinstance(got, list) else zero_based(got)
            elif which is not False and isinstance(got, list):
                got[which] = zero_based(got[which])
            shaped = [RESULT_CONVENTIONS[c] for c in r_fact(spec, "r_conventions")
                      if c in RESULT_CONVENTIONS]
            if shaped:  # an R-only form of the result (a shape as a numeric vector)
                for convention in shaped:
                    expected = convention(expected)
                np.testing.assert_array_equal(np.asarray(got).reshape(-1), expected)
                out[case.id] = {"ok": True, "error": ""}
                continue
            if r_fact(spec, "r_result_names"):  # a named list in R
                assert got.names() == list(r_fact(spec, "r_result_names")), got.names()
                got = got.values()
            exp = expected if isinstance(expected, (list, tuple)) else [expected]
            got = got if isinstance(got, list) else [got]
            assert len(exp) == len(got), f"{len(got)} results from R, {len(exp)} in Python"
            for e, g in zip(exp, got):
                if isinstance(e, rt.Tensor):
                    assert e.layout is g.layout, f"layout {g.layout} from R, {e.layout} in Python"
                    ed, gd = (v.data if v.layout is rt.tensor.strided else v.to_dense().data
                              for v in (e, g))
                    assert ed.dtype == gd.dtype, f"dtype {gd.dtype} from R, {ed.dtype} in Python"
                    np.testing.assert_array_equal(gd, ed)
                else:
                    g = g.data.item() if isinstance(g, rt.Tensor) else \
                        (g[0] if hasattr(g, "__len__") else g)
                    assert bool(g) == bool(e), f"{g!r} from R, {e!r} in Python"
            out[case.id] = {"ok": True, "error": ""}
        except Exception as err:  # reported per case by the test
            out[case.id] = {"ok": False, "error": f"{type(err).__name__}: {err}"}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
