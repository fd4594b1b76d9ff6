"""FAST PATH: a Bernoulli draw with a float p (dropout's noise) straight from the
Mersenne Twister's state, compiled with numba.

`distributions._bernoulli_blocks` draws two 32-bit words per element through
NumPy's `MT19937.random_raw` (about 2.7 ns a word, into a uint64 array), then
makes each pair a 53-bit integer and compares it, in four more passes. Here the
engine's state (its 624 words and position, read and written back through the
bit generator's public `state`) is twisted and tempered in place, as NumPy's
mt19937 does, and each pair of words becomes its element at once: the same words,
the same comparisons, the same state afterwards, in about a third of the time:
`nnf_dropout` of 1M, 0.5M and 2M float32 elements (the zoo transformer's) took
10 ms against 28 (PyTorch: 24).

numba is imported on the first call, not with the package, and its machine code
is cached; without numba `bernoulli_into` returns False and the caller keeps the
NumPy path.
"""
from __future__ import annotations

import numpy as np

from ..compiled import numba_kernel

_N, _M = 624, 397

# Fewer elements keep the NumPy path: the state's round trip costs ~70 us (1 thread:
# 8K elements 89 us against NumPy's 61, 16K 101 against 114, 64K 188 against 814)
MIN_SIZE = 1 << 14


def _twist(key):
    """mt19937's next 624 words, in place (the reference generator's loops)."""
    upper, lower, matrix = np.uint32(0x80000000), np.uint32(0x7FFFFFFF), np.uint32(0x9908B0DF)
    one, zero = np.uint32(1), np.uint32(0)
    for i in range(_N - _M):
        y = (key[i] & upper) | (key[i + 1] & lower)
        key[i] = key[i + _M] ^ (y >> one) ^ ((zero - (y & one)) & matrix)
    for i in range(_N - _M, _N - 1):
        y = (key[i] & upper) | (key[i + 1] & lower)
        key[i] = key[i + _M - _N] ^ (y >> one) ^ ((zero - (y & one)) & matrix)
    y = (key[_N - 1] & upper) | (key[0] & lower)
    key[_N - 1] = key[_M - 1] ^ (y >> one) ^ ((zero - (y & one)) & matrix)


def _bernoulli_run(key, pos, out, limit):
    """out[j] = 1 where the j-th pair of words (high, low), as the integer
    (high's low 21 bits) * 2^32 + low, is below `limit`, else 0; returns the
    new position. `key` (uint32, 624) changes in place."""
    words = np.empty(_N, np.uint32)      # the tempered words of the current block
    low21 = np.uint32((1 << 21) - 1)
    n = out.size
    j = 0
    high = np.uint32(0)
    carry = False                        # a pair's high word ended the last block
    while j < n:
        if pos >= _N:
            _twist(key)
            pos = 0
        m = _N - pos
        for q in range(m):
            y = key[pos + q]
            y ^= y >> np.uint32(11)
            y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
            y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
            y ^= y >> np.uint32(18)
            words[q] = y
        q = 0
        if carry:
            k = (np.uint64(high & low21) << np.uint64(32)) | np.uint64(words[0])
            out[j] = 1 if k < limit else 0
            j += 1
            q = 1
            carry = False
        pairs = min((m - q) // 2, n - j)
        for r in range(pairs):
            k = (np.uint64(words[q + 2 * r] & low21) << np.uint64(32)) | \
                np.uint64(words[q + 2 * r + 1])
            out[j + r] = 1 if k < limit else 0
        j += pairs
        used = q + 2 * pairs
        if j < n and used < m:           # one word left in the block: the next high
            high = words[used]
            carry = True
            used += 1
        pos += used
    return pos


# the compiled `_bernoulli_run` (and `_twist`, which it calls), or None without numba
_kernel = numba_kernel(_bernoulli_run, calls=("_twist",))


def bernoulli_into(bits: np.random.MT19937, out: np.ndarray, limit: int) -> bool:
    """Fill the 1-d float32 or float64 array `out` with 1 where the integer
    k = (random() & (2^21 - 1)) * 2^32 + random() (two draws of `bits`, high word
    first) is below `limit`, 0 elsewhere, and move `bits` past the draws; False
    (nothing drawn) without numba."""
    kernel = _kernel()
    if kernel is None:
        return False
    with bits.lock:   # (the bit generator's own lock, as its draws take it)
        state = bits.state
        key = np.ascontiguousarray(state["state"]["key"], dtype=np.uint32)
        pos = kernel(key, int(state["state"]["pos"]), out, np.uint64(limit))
        bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
    return True
