"""µs per R op in plain `Rscript` beside `rtorch-py run` (issue 13).

    .venv/bin/python -m benchmarks.rscript_op [--rounds N] [--n OPS]

The same R loop as the `r_op` row (`y <- x * 2`, `x` requiring grad; and
`(x * 2)$backward()`), from benchmarks/bench.R, in two R processes kept alive
side by side: one under `rtorch-py run` (R embedded in Python), one a plain
`Rscript` that starts Python itself (the shim installed with `rtorch-py
install-r` into a temporary library). Rounds alternate between the two, so
both see the same machine load; the figure is the median over rounds.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .rside import DATA, SCRIPT, RSession


class PlainRSession(RSession):
    """bench.R under plain `Rscript`, the shim taken from the R library `lib`."""

    def __init__(self, lib: Path):
        env = {k: v for k, v in os.environ.items() if not k.startswith("RTORCH_PY")}
        env["R_LIBS"] = str(lib)
        self.proc = subprocess.Popen(
            ["Rscript", str(SCRIPT), str(DATA)], cwd=SCRIPT.parent.parent,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1, env=env)
        self.version = self._read("ready")


def measure(rounds: int, n: int) -> dict[str, dict[str, float]]:
    """{"op"|"op_bwd": {"rtorch-py run": µs, "Rscript": µs}}, medians over rounds."""
    from rtorch_py.tools.install import install_r
    with tempfile.TemporaryDirectory(prefix="rtorch-bench-lib-") as lib:
        install_r(Path(lib))
        sessions = {"rtorch-py run": RSession(), "Rscript": PlainRSession(Path(lib))}
        try:
            out: dict[str, dict[str, float]] = {}
            for cmd, size in (("op", n), ("op_bwd", n // 4)):
                for s in sessions.values():  # warm-up: R's JIT, first calls
                    s.call(cmd, size // 10)
                times: dict[str, list[float]] = {k: [] for k in sessions}
                for _ in range(rounds):
                    for name, s in sessions.items():
                        times[name].append(s.call(cmd, size)[0] / size * 1e6)
                out[cmd] = {k: statistics.median(v) for k, v in times.items()}
            return out
        finally:
            for s in sessions.values():
                s.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rscript_op",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=20_000, help="ops per round")
    ns = parser.parse_args(argv)
    res = measure(ns.rounds, ns.n)
    print("| loop | rtorch-py run (µs) | plain Rscript (µs) | Rscript / run |")
    print("|---|---:|---:|---:|")
    for cmd, label in (("op", "`y <- x * 2`"), ("op_bwd", "`(x * 2)$backward()`")):
        a, b = res[cmd]["rtorch-py run"], res[cmd]["Rscript"]
        print(f"| {label} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
