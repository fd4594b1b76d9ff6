"""FAST PATH: the LSTM layer's backward time loop (`nn_kernels`), a step's
elementwise work in one compiled pass (numba, `nogil`).

Between two small matrix products a step of the loop made five NumPy calls over
(hidden x batch) arrays, and the loop's per-step factors (sigmoid' and tanh'
times the other gate) a dozen passes per chunk of steps: 8 ms of the zoo LSTM's
100 steps (1 thread), on one core while the products use every thread; here
one pass a step, 2.4 ms. Each element gets the same operations in the same
order and type as on the NumPy path (no fused multiply-adds: numba asks LLVM
for none without fastmath), so the bits are the NumPy path's
(`tests/test_lstm_kernel.py`). (The forward's step is left to NumPy: its two
tanh calls are NumPy's vectorised tanh, and the arithmetic between them fused
measured no faster.)

numba is imported on the first call, not with the package, and its machine code
is cached; without numba `backward_step()` returns None and the caller keeps its
NumPy path.
"""
from __future__ import annotations

from ..compiled import numba_kernel


def _backward_step(a, tc, dh, dc, g, dz, t, one):
    """Step t of backpropagation through time, in place.

    a (5, H, N): the step's activated gates o, i, f, g and the cell before it;
    tc (H, N): tanh of the step's cell; dh, dc (H, N): the gradients reaching
    the step's h and c (dc becomes c_{t-1}'s); g: the step's output gradient,
    (N, H), added to dh first, or an empty array; dz (4, H, T, N): the gates'
    pre-activation gradients (o, i, f, g), step t's written (C-contiguous, so
    that the loops are vectorised); one: 1 in the arrays' dtype. dh is left for
    the caller's product."""
    hid, n = dh.shape
    if g.shape[0] > 0:
        for j in range(hid):
            for k in range(n):
                dh[j, k] = dh[j, k] + g[k, j]
    for j in range(hid):
        for k in range(n):
            h = dh[j, k]
            o, i, f, gg, c = a[0, j, k], a[1, j, k], a[2, j, k], a[3, j, k], a[4, j, k]
            th = tc[j, k]
            cell = dc[j, k] + ((one - th * th) * o) * h
            dz[0, j, t, k] = (((one - o) * o) * th) * h
            dz[1, j, t, k] = (((one - i) * i) * gg) * cell
            dz[2, j, t, k] = (((one - f) * f) * c) * cell
            dz[3, j, t, k] = ((one - gg * gg) * i) * cell
            dc[j, k] = cell * f


# the compiled `_backward_step`, or None without numba
backward_step = numba_kernel(_backward_step)
