"""Run in a subprocess by tests/test_random_ops.py: every case of
tests/random_op_cases.py called from R (the shim in this process's embedded R,
through rpy2), after `torch_manual_seed(seed)` in R, against PyTorch after
`torch.manual_seed(seed)`; the generators' states (R's torch_get_rng_state()
and PyTorch's) are compared after each call too. Prints one JSON object
{case id: error text, "" when R drew PyTorch's bits}.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from random_op_cases import as_list, compare, params, torch_arrays  # noqa: E402
from rtorch_py import r as rbridge  # noqa: E402


def main() -> None:
    rbridge.load()
    import rpy2.rinterface as ri

    def r_eval(code: str):
        return rbridge.from_r(ri.evalr(code))

    out = {}
    for case, dtype, seed, shape, name in params():
        if case.r is None:
            continue
        try:
            torch.manual_seed(seed)
            theirs = torch_arrays(case.theirs(shape, dtype))
            ri.evalr(f"torch_manual_seed({seed})")
            got = [t.data - case.r_shift if case.r_shift else t.data
                   for t in as_list(r_eval(case.r(shape, dtype)))]
            problem = compare(got, theirs, case.exact)
            state = r_eval("torch_get_rng_state()").data
            if not problem and not np.array_equal(state, torch.get_rng_state().numpy()):
                problem = "R's generator state differs from PyTorch's after the call"
            out[name] = problem
        except Exception as err:  # reported per case by the test
            out[name] = f"{type(err).__name__}: {err}"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
