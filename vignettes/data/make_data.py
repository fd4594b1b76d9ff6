"""Generate the benchmarks' training data once (benchmarks/bench.R and
benchmarks/rside.py read these files; the vignettes draw theirs after a seed).

Run from anywhere: `python vignettes/data/make_data.py`. Values are float32,
written with 9 significant digits so that every reader gets the same bits.
"""
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def save(name: str, a: np.ndarray) -> None:
    np.savetxt(HERE / name, a.astype(np.float32), fmt="%.9g", delimiter=",")


if __name__ == "__main__":
    rng = np.random.default_rng(20240607)
    n, d_in, d_hidden, d_out = 100, 3, 32, 1
    x = rng.standard_normal((n, d_in)).astype(np.float32)
    noise = rng.standard_normal((n, 1)).astype(np.float32)
    y = x[:, :1] * 0.2 - x[:, 1:2] * 1.3 - x[:, 2:3] * 0.5 + noise
    save("x.csv", x)
    save("y.csv", y)
    save("w1.csv", rng.standard_normal((d_in, d_hidden)))
    save("w2.csv", rng.standard_normal((d_hidden, d_out)))
