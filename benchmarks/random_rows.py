"""Rows for libtorch's random streams (issue 17): a million values drawn by
the public functions (`torch_rand`, `torch_randn`, `torch_randperm`), the same
bits as PyTorch's, beside PyTorch. The runner (`python -m benchmarks`) shows
the float32 rand and randn rows; this module times all of them:

    python -m benchmarks.random_rows            # times the rows, prints the ratios
    python -m benchmarks.random_rows --quick
"""
from __future__ import annotations

import argparse

import torch

import rtorch_py as rt

from .runner import run_workload, setup_threads
from .workloads import Workload


def _draw(ours, theirs, n: int):
    def setup(quick: bool) -> tuple:
        size = 1000 if quick else n
        rt.torch_manual_seed(0)
        torch.manual_seed(0)
        return (lambda: ours(size)), (lambda: theirs(size))
    return setup


def random_rows(quick: bool = False, runner: bool = False) -> list[Workload]:
    """The rows (`runner`: those the runner's table shows)."""
    n = 10 ** 6
    rows = [
        Workload("rand_1e6", "torch_rand(1e6), float32", _draw(rt.torch_rand, torch.rand, n),
                 None, per=n, unit="value"),
        Workload("randn_1e6", "torch_randn(1e6), float32 (libtorch's AVX2 Box-Muller)",
                 _draw(rt.torch_randn, torch.randn, n), None, per=n, unit="value"),
    ]
    if runner:
        return rows
    return rows + [
        Workload("randn_1e6_f64", "torch_randn(1e6), float64",
                 _draw(lambda k: rt.torch_randn(k, dtype=rt.torch_float64()),
                       lambda k: torch.randn(k, dtype=torch.float64), n),
                 None, per=n, unit="value"),
        Workload("randperm_1e6", "torch_randperm(1e6)",
                 _draw(rt.torch_randperm, torch.randperm, n), None, per=n, unit="value"),
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
