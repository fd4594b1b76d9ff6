"""Floating point sums in libtorch's CPU order, so float32 results agree with
R torch's to the last bit (NumPy's pairwise order differs in the 7th-8th digit).

libtorch (aten/src/ATen/native/cpu/SumKernel.cpp, `cascade_sum`) walks the
reduction as TensorIterator lays it out: dims sorted so that reduced dims come
first, then by input stride, adjacent dims coalesced; the first two dims form a
2-d loop (dim 0 reduced), the others are iterated with each 2-d result added to
its output. Inside the 2-d loop it picks one of four kernels by stride, built
from two summation orders:

- `_cascade`: one accumulator per column, four levels deep: blocks of 2**p
  consecutive values are summed left to right, block sums gathered 2**p at a
  time into the next level, and so on (p = max(4, ceil(log2 n) / 4));
- `_row_sum`: the values dealt round-robin to four such cascades (rows i, i+4,
  ...), the rows left over added to the first, then the four added in order.

A contiguous reduced dim uses vectors of 8 float32 (4 float64) lanes: a
`_row_sum` of vectors, then the lanes added in order. Everything is in the data's
own precision. Multi-threaded libtorch splits full reductions of 32768 values
or more across threads; this is its one-thread order.

FAST PATH (compiled cascade): with numba installed, `_cascade` of a large array
runs `_cascade_loops` compiled (the same additions in the same order, so the same
bits; NumPy's version makes one short strided pass per row of each block). numba
is imported on the first large sum, not with the package, and its machine code is
cached (numba's cache=True: beside this file or in the user's cache directory).
"""
from __future__ import annotations

import numpy as np

from ..compiled import numba_kernel

_LANES = {4: 8, 8: 4}  # Vectorized<float>, Vectorized<double>
_JIT_MIN = 1 << 17  # values from which `_cascade` takes the compiled loops (when numba is
# there): where NumPy's passes cost a few tenths of a ms, so that a script pays numba's
# one-time load (~0.7 s, idle machine) only when its sums are large


def _seq(a: np.ndarray) -> np.ndarray:
    """Left-to-right sums from +0 along axis 0 (which goes)."""
    n = a.shape[0]
    if n == 0:
        return np.zeros(a.shape[1:], a.dtype)
    if n > 32:
        return np.cumsum(a, axis=0, dtype=a.dtype)[-1] + a.dtype.type(0)
    out = a[0] + a.dtype.type(0)
    if a.ndim == 1:  # (NumPy scalars)
        for r in range(1, n):
            out = out + a[r]
        return out
    for r in range(1, n):  # in place: no new array a row
        np.add(out, a[r], out=out)
    return out


def _blocks(a: np.ndarray, step: int) -> tuple:
    """(the left-to-right sums of a's whole blocks of `step` rows, the rows left over)."""
    full = a.shape[0] // step
    blocks = a[:full * step].reshape((full, step) + a.shape[1:])
    return _seq(blocks.swapaxes(0, 1)), a[full * step:]


def _cascade(a: np.ndarray) -> np.ndarray:
    """libtorch's multi_row_sum along axis 0, each column on its own."""
    n = a.shape[0]
    step = 1 << max(4, (1 if n <= 2 else (n - 1).bit_length()) // 4)
    if n < step:
        return _seq(a)
    if a.size >= _JIT_MIN:  # FAST PATH (compiled cascade)
        kernel = _compiled()
        view = None if kernel is None else _as_3d(a)
        if view is not None:
            return _unsorted(kernel(view, step), a)
    level, rest = _blocks(a, step)
    total = _seq(rest)
    for _ in range(2):  # levels 1 and 2 hold at most `step` sums; level 3 all the rest
        level, rest = _blocks(level, step)
        total = total + _seq(rest)
    return total + _seq(level)


def _cascade_loops(a: np.ndarray, step: int) -> np.ndarray:
    """`_cascade` of a 3-d array (n >= step rows of p x q columns) as loops, for
    numba to compile, one group of q columns at a time (its rows lie close
    together): level sums of `step` rows from +0, each level's leftover rows
    summed into the total, then the last level's sums. Zero is added where NumPy's
    version adds an empty sum, so that -0.0 comes out the same."""
    n, p, q = a.shape
    total = np.zeros((p, q), a.dtype)
    for i in range(p):
        full = n // step
        level = np.zeros((full, q), a.dtype)
        for b in range(full):
            for r in range(b * step, b * step + step):
                for j in range(q):
                    level[b, j] += a[r, i, j]
        for r in range(full * step, n):
            for j in range(q):
                total[i, j] += a[r, i, j]
        for up in range(3):  # levels 2 and 3 made; then (up == 2) the last level's sums
            m = level.shape[0]
            full = m // step if up < 2 else 0
            rest = np.zeros(q, a.dtype)
            for r in range(full * step, m):
                for j in range(q):
                    rest[j] += level[r, j]
            upper = np.zeros((full, q), a.dtype)
            for b in range(full):
                for r in range(b * step, b * step + step):
                    for j in range(q):
                        upper[b, j] += level[r, j]
            for j in range(q):
                total[i, j] += rest[j]
            level = upper
    return total


def _as_3d(a: np.ndarray) -> np.ndarray | None:
    """A (rows, p, q) view of a's columns in some order (each column is summed on
    its own, so their order is free), or None when no such view exists."""
    n = a.shape[0]
    cols = sorted(range(1, a.ndim), key=lambda d: -abs(a.strides[d]))
    a = a.transpose([0] + cols)
    for k in range(len(cols)):  # (q, the inner loop, as long as a view allows)
        try:
            return np.reshape(a, (n, int(np.prod(a.shape[1:k + 1])), -1), copy=False)
        except ValueError:
            pass
    return None


def _unsorted(total: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The kernel's column sums put back in the order of a's columns."""
    cols = sorted(range(1, a.ndim), key=lambda d: -abs(a.strides[d]))
    sums = total.reshape([a.shape[d] for d in cols])
    return sums.transpose(np.argsort(cols)) if cols != sorted(cols) else sums


# the compiled `_cascade_loops`, or None when numba is not installed
_compiled = numba_kernel(_cascade_loops)


def _row_sum(a: np.ndarray) -> np.ndarray:
    k = a.shape[0] // 4
    acc = _cascade(a[:k * 4].reshape((k, 4) + a.shape[1:]))
    first = acc[0]
    for r in range(k * 4, a.shape[0]):
        first = first + a[r]
    return first + acc[1] + acc[2] + acc[3]


def _inner(a: np.ndarray, lanes: int) -> np.ndarray:
    """vectorized_inner_sum: axis 0 contiguous, at least one vector long."""
    v = a.shape[0] // lanes
    by_lane = _row_sum(a[:v * lanes].reshape((v, lanes) + a.shape[1:]))
    return _seq(np.concatenate([a[v * lanes:], by_lane]))


def _loop_2d(a: np.ndarray, stride0: int, stride1: int, lanes: int) -> np.ndarray:
    """The 2-d loop on a (size0, size1, ...) view, dim 0 reduced: one sum per column."""
    size0, size1 = a.shape[:2]
    item = a.itemsize
    if stride0 == item and size0 >= lanes:
        return _inner(a, lanes)
    if stride1 == item and size1 >= lanes:
        split = size1 // (4 * lanes) * 4 * lanes  # columns summed 4 vectors at a time
    elif stride0 < stride1:
        split = 0
    else:
        split = size1 // 4 * 4
    if split == 0:
        return _row_sum(a)
    if split == size1:
        return _cascade(a)
    if a.flags.c_contiguous and a.size >= _JIT_MIN and _compiled() is not None:
        # FAST PATH (compiled cascade): over all columns of the contiguous whole
        # (each column's sum is its own; a strided part would run unvectorised)
        head = _cascade(a)[:split]
    else:
        head = _cascade(a[:, :split])
    return np.concatenate([head, _row_sum(a[:, split:])])


def _layout(x: np.ndarray, reduced: set) -> list:
    """TensorIterator's dims for the reduction: [size, input stride, output stride]."""
    nd, item = x.ndim, x.itemsize
    out_strides = [0] * nd
    s = item
    for d in reversed(range(nd)):
        if d not in reduced:
            out_strides[d] = s
            s *= x.shape[d]
    strides = list(zip(out_strides, x.strides))

    def order(d0: int, d1: int) -> int:  # TensorIterator's should_swap (output first)
        (o0, i0), (o1, i1) = strides[d0], strides[d1]
        if (o0 == 0) != (o1 == 0):
            return 1 if o1 == 0 else -1
        for s0, s1 in ((o0, o1), (i0, i1)):
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if x.shape[d0] > x.shape[d1]:
                return 1
        return 0

    perm = list(reversed(range(nd)))
    for i in range(1, nd):  # its insertion sort
        j = i
        for k in range(i - 1, -1, -1):
            c = order(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    dims: list = []
    for d in perm:
        size, (o, i) = x.shape[d], strides[d]
        if size == 1:
            continue
        if dims and dims[-1][0] * dims[-1][1] == i and dims[-1][0] * dims[-1][2] == o:
            dims[-1][0] *= size  # coalesced
        else:
            dims.append([size, i, o])
    return dims


def _short_rows(x: np.ndarray) -> np.ndarray:
    """The rows of a C-contiguous (rows, c) array summed, 2 <= c < one vector:
    a column at a time in `_row_sum`'s order (from +0, the first four values
    dealt to four sums, the rest added to the first, then the other three),
    which is what the general path below computes for them."""
    c = x.shape[1]
    out = x[:, 0] + x.dtype.type(0)
    for j in (range(1, c) if c < 4 else (*range(4, c), 1, 2, 3)):
        out += x[:, j]
    return out


def libtorch_sum(x: np.ndarray, dims: tuple | None) -> np.ndarray:
    """x (float32 or float64) summed over `dims` (all when None), without keepdim."""
    reduced = set(range(x.ndim)) if dims is None else set(dims)
    if x.ndim == 2 and reduced == {1} and 2 <= x.shape[1] < _LANES[x.itemsize] and \
            x.flags.c_contiguous:
        # FAST PATH (short rows: a loss's few classes a row), without the layout's cost
        return _short_rows(x)
    return _general_sum(x, reduced)


def _general_sum(x: np.ndarray, reduced: set) -> np.ndarray:
    shape = tuple(n for d, n in enumerate(x.shape) if d not in reduced)
    if x.size == 0:
        return np.zeros(shape, x.dtype)
    if any(s < 0 for s in x.strides):
        x = np.ascontiguousarray(x)
    it = _layout(x, reduced)
    if not it or it[0][2] != 0:  # only dims of size 1 reduced
        return (x + x.dtype.type(0)).reshape(shape)
    lanes = _LANES[x.itemsize]
    if len(it) == 1:  # one run of values into one sum (on NumPy scalars: fast)
        (n, stride, _), = it
        run = x.reshape(-1) if x.flags.c_contiguous else \
            np.lib.stride_tricks.as_strided(x, shape=(n,), strides=(stride,), writeable=False)
        total = _inner(run, lanes) if stride == x.itemsize and n >= lanes else _row_sum(run)
        return np.asarray(total + x.dtype.type(0)).reshape(shape)
    view = np.lib.stride_tricks.as_strided(x, shape=[d[0] for d in it],
                                           strides=[d[1] for d in it], writeable=False)
    part = _loop_2d(view, it[0][1], it[1][1], lanes)  # (size1, *outer)
    # each 2-d loop's sums are added to their outputs in iteration order (dim 1 fastest)
    kept = [k for k in range(len(it) - 1, 0, -1) if it[k][2] != 0]
    summed = [k for k in range(len(it) - 1, 0, -1) if it[k][2] == 0]
    part = np.transpose(part, [k - 1 for k in summed + kept])
    return _seq(part.reshape((-1,) + part.shape[len(summed):])).reshape(shape)
