"""Sample inputs of the CTC loss (see the package docstring)."""
from __future__ import annotations

from . import T, sample


def _lengths(n: int, low: int, high: int) -> T:
    return T((n,), dtype="int64", low=low, high=high)


def ctc_loss() -> list:
    """Padded and concatenated targets, every reduction, infeasible alignments
    (an input too short: an infinite loss) with and without zero_infinity."""
    lp = T((6, 3, 5), low=-3.0, high=0.0)
    return [
        sample(lp, T((3, 3), dtype="int64", low=1, high=5), _lengths(3, 4, 7),
               _lengths(3, 1, 4), 0, 0, note="padded, none"),
        sample(lp, T((3, 3), dtype="int64", low=1, high=5), _lengths(3, 5, 7),
               _lengths(3, 0, 3), 0, 1, note="mean, empty targets"),
        sample(lp, T((6,), dtype="int64", low=0, high=4), [6, 5, 6], [2, 1, 3], 4, 2,
               note="concatenated, blank = 4, sum"),
        sample(T((8, 2, 4), low=-3.0, high=0.0), T((2, 3), dtype="int64", low=1, high=2),
               [8, 2], [3, 3], 0, 0, True, note="repeated labels, infeasible, zero_infinity"),
        sample(T((5, 4), low=-2.0, high=0.0), T((3,), dtype="int64", low=1, high=4),
               [5], [3], 0, 0, note="one sequence"),
    ]
