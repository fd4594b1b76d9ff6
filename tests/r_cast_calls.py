"""Run in a subprocess by tests/test_r_casting.py: for every op with samples, each
argument declared a tensor (or a list of tensors) given from R in each form R torch
accepts — an R double, integer or logical array, a named list — against the
canonical form (the tensor torch_tensor() makes of that very R value), and in a
form it refuses (a character string). Prints one JSON object
{case id: {form: "" (as expected) or what went wrong}}.
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
from r_op_calls import r_form, to_r  # noqa: E402
from rtorch_py import r as rbridge  # noqa: E402
from rtorch_py.formals import declared  # noqa: E402
from rtorch_py.ops.registry import argument_kind as kind  # noqa: E402

PYTHON_TEXTS = ("object has no attribute", "Traceback", "unsupported operand", "NoneType",
                "not subscriptable", "positional argument")


def main() -> None:
    rbridge.load()
    import rpy2.rinterface as ri

    r_list, torch_tensor = ri.baseenv["list"], ri.globalenv.find("torch_tensor")
    seed = ri.globalenv.find("torch_manual_seed")

    def r_array(a: np.ndarray, form: str):
        """`a` as an R vector or array of the form's type (R's column-major order)."""
        flat = a.reshape(-1, order="F")
        vec = (ri.FloatSexpVector(flat.astype(np.float64)) if form == "double" else
               ri.IntSexpVector(np.round(flat).astype(np.int64).tolist()) if form == "integer"
               else ri.BoolSexpVector((flat != 0).tolist()))
        if a.ndim > 1:
            vec.do_slot_assign("dim", ri.IntSexpVector(list(a.shape)))
        return vec

    def call(fn, named, by_name):
        seed(1)
        try:
            return rbridge.from_r(fn(*[to_r(v, k) for n, v, k in named if n not in by_name],
                                     **{n: to_r(v, k) for n, v, k in named if n in by_name})), ""
        except Exception as e:  # (R's error, as R shows it)
            return None, str(e)

    def flat(x):
        if isinstance(x, (list, tuple)):
            return [y for v in x for y in flat(v)]
        if hasattr(x, "values") and callable(x.values) and not isinstance(x, rt.Tensor):
            return flat(x.values())
        return [x]

    def same(a, b) -> str:
        a, b = flat(a), flat(b)
        if len(a) != len(b):
            return f"{len(a)} results, {len(b)} canonically"
        for x, y in zip(a, b):
            if isinstance(x, rt.Tensor) and isinstance(y, rt.Tensor):
                if x.dtype != y.dtype or tuple(x.shape) != tuple(y.shape):
                    return f"{x.dtype}{tuple(x.shape)}, canonically {y.dtype}{tuple(y.shape)}"
                xd, yd = (t.to_dense().data if t.layout is not rt.tensor.strided else t.data
                          for t in (x, y))
                if not np.array_equal(xd, yd, equal_nan=xd.dtype.kind in "fc"):
                    return "other values than the canonical form's"
            elif not isinstance(x, rt.Tensor) and not isinstance(y, rt.Tensor):
                if not np.array_equal(np.asarray(x), np.asarray(y)):
                    return f"{x!r}, canonically {y!r}"
            else:
                return f"{type(x).__name__}, canonically {type(y).__name__}"
        return ""

    out: dict = {}
    seen: set = set()
    for case in cases():
        spec = case.spec
        if not spec.function or spec.name in seen:
            continue  # (one sample per exported function)
        seen.add(spec.name)
        params = inspect.signature(spec.fn).parameters
        if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
            continue  # (R torch takes those as one vector or list: the op tests cover it)
        arrays, _, rebuild = materialize(case.sample, np.float64)
        args, kwargs = rebuild([rt.torch_tensor(a.copy()) for a in arrays])
        named = bound_arguments(spec, args, kwargs)
        by_name = set(kwargs)
        formals = declared(spec.fn)
        if formals is not None:
            named, by_name, python_only = r_form(named, kwargs, formals, None)
            if python_only:
                continue  # (a PyTorch argument R refuses: the op tests cover it)
        fn = ri.globalenv.find(spec.function_name)
        results: dict = {}
        for i, (n, v, k) in enumerate(named):
            what = kind(params[n].annotation) if n in params else None
            if k or what not in ("tensor", "tensors"):
                continue
            forms: dict = {}
            if what == "tensor" and isinstance(v, rt.Tensor) and v.layout is rt.tensor.strided \
                    and v.dtype.is_floating_point and not v.dtype.is_complex:
                a = v.data.astype(np.float64)
                for form in ("double", "integer", "logical"):
                    r = r_array(a, form)
                    forms[form] = (r, torch_tensor(r))
            if what == "tensors" and isinstance(v, list) and v:
                tensors = [to_r(t, "") for t in v]
                named_list = r_list(**{f"t{j}": t for j, t in enumerate(tensors, 1)})
                forms["named list"] = (named_list, r_list(*tensors))
            for form, (given, canonical) in forms.items():
                got, err = call(fn, [*named[:i], (n, given, ""), *named[i + 1:]], by_name)
                want, want_err = call(fn, [*named[:i], (n, canonical, ""), *named[i + 1:]],
                                      by_name)
                if want_err:  # (the canonical form refused: the same refusal)
                    results[f"{n} as {form}"] = "" if err == want_err else \
                        f"{err or 'accepted'}; canonically {want_err}"
                else:
                    results[f"{n} as {form}"] = f"refused: {err}" if err else same(got, want)
            # a form refused: R's error saying what was expected, no Python text
            _, err = call(fn, [*named[:i], (n, "a", ""), *named[i + 1:]], by_name)
            expected = "must be a list of tensors" if what == "tensors" else "must be a tensor"
            results[f"{n} as character"] = "" if expected in err and not any(
                t in err for t in PYTHON_TEXTS) else f"refused as: {err or 'accepted'}"
        if results:
            out[spec.function_name] = results
    print(json.dumps(out))


if __name__ == "__main__":
    main()
