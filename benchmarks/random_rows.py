"""Rows for libtorch's random streams (issue 17): drawing a million values with
rtorch_py.random beside PyTorch, as `Workload`s for the runner (not wired into
`workloads()` yet: phase B wires the creation functions to this module, and
then the rows time torch_rand / torch_randn themselves).

    python -m benchmarks.random_rows            # times the rows, prints the ratios
    python -m benchmarks.random_rows --quick
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

import rtorch_py.random as R

from .runner import run_workload, setup_threads
from .workloads import Workload


def _draw(ours, theirs, n: int):
    def setup(quick: bool) -> tuple:
        size = 1000 if quick else n
        gen = R.Generator(0)
        torch.manual_seed(0)
        return (lambda: ours(gen, size)), (lambda: theirs(size))
    return setup


def random_rows(quick: bool = False) -> list[Workload]:
    n = 10 ** 6
    return [
        Workload("rand_1e6", "torch_rand(1e6), float32",
                 _draw(lambda g, k: R.uniform_(g, np.empty(k, np.float32)), torch.rand, n),
                 None, per=n, unit="value"),
        Workload("randn_1e6", "torch_randn(1e6), float32 (the AVX2 Box-Muller kernel)",
                 _draw(lambda g, k: R.normal_(g, np.empty(k, np.float32)), torch.randn, n),
                 None, per=n, unit="value"),
        Workload("randn_1e6_f64", "torch_randn(1e6), float64",
                 _draw(lambda g, k: R.normal_(g, np.empty(k)),
                       lambda k: torch.randn(k, dtype=torch.float64), n),
                 None, per=n, unit="value"),
        Workload("randperm_1e6", "torch_randperm(1e6)",
                 _draw(lambda g, k: R.randperm(g, k), torch.randperm, n),
                 None, per=n, unit="value"),
    ]


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    setup_threads()
    print(f"{'row':16} {'rtorch µs/value':>16} {'torch µs/value':>15} {'ratio':>7}")
    for w in random_rows(args.quick):
        row = run_workload(w, args.quick, 3 if args.quick else args.rounds,
                           0.002 if args.quick else 0.1)
        if row.error:
            print(f"{w.name:16} FAILED: {row.error}")
        else:
            print(f"{w.name:16} {row.ours:16.4f} {row.theirs:15.4f} {row.ratio:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
