"""libtorch's CPU generator (`at::CPUGeneratorImpl`): an mt19937 engine, its seed,
the normal samples it caches, and its state in libtorch's byte layout.

The 32-bit stream comes from NumPy's `MT19937` bit generator, whose state is
set to exactly the words libtorch's `at::mt19937` holds (both are the reference
Mersenne Twister, so the same words give the same numbers).
"""
from __future__ import annotations

import os
import struct
import sys
from typing import Any, Callable

import numpy as np

_N = 624                       # MERSENNE_STATE_N
_U32 = np.uint64(0xFFFFFFFF)

# `CPUGeneratorImplState` (CPUGeneratorImpl.cpp) as x86-64 lays it out: the legacy
# TH state (seed, left, seeded, next, 624 words widened to uint64, the retired
# normal_x/normal_y/normal_rho and normal_is_valid, which now carries the cached
# double normal in normal_y), then the cached float normal and its flag.
_HEAD = struct.Struct("<QiiQ")                 # the_initial_seed, left, seeded, next
_NORMAL = struct.Struct("<dddi4x")            # normal_x, normal_y, normal_rho, normal_is_valid
_FLOAT_NORMAL = struct.Struct("<f?3x")        # next_float_normal_sample, its flag
_WORDS_AT = _HEAD.size
_NORMAL_AT = _WORDS_AT + 8 * _N
_FLOAT_AT = _NORMAL_AT + _NORMAL.size
STATE_SIZE = _FLOAT_AT + _FLOAT_NORMAL.size    # 5056 bytes, len(torch.get_rng_state())


def _seeded_words(seed: int) -> np.ndarray:
    """mt19937's init_genrand on the low 32 bits of the seed (libtorch's
    `mt19937(seed)`; NumPy's legacy seeding does the same)."""
    words = np.empty(_N, dtype=np.uint32)
    s = seed & 0xFFFFFFFF
    words[0] = s
    for j in range(1, _N):
        s = (1812433253 * (s ^ (s >> 30)) + j) & 0xFFFFFFFF
        words[j] = s
    return words


# the seed of a new generator object (c10's default_rng_seed_val); only the
# process's default generator starts from a fresh seed
DEFAULT_SEED = 67280421310721


def fresh_seed() -> int:
    """A seed from the OS, as libtorch's `seed()` draws one on CPU (64 bits of
    /dev/urandom, c10's getNonDeterministicRandom)."""
    return int.from_bytes(os.urandom(8), "little")


def _as_seed(seed: Any) -> int:
    value = int(seed)
    if not -(1 << 63) <= value < (1 << 64):
        raise ValueError(f"a seed must fit in 64 bits (from -2^63 to 2^64 - 1), got {value}")
    return value % (1 << 64)   # negative seeds wrap, as in libtorch (uint64_t)


class Generator:
    """libtorch's CPU generator: the same seed and the same draws give the
    same numbers as `torch.manual_seed(seed)` in PyTorch and R torch."""

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self._bind(np.random.MT19937(0))
        self.manual_seed(seed)

    def _bind(self, bits: np.random.MT19937) -> None:
        self._bits = bits
        # NumPy's full-range uint64 draw is mt19937's next64 (high word first),
        # libtorch's random64(): one C loop instead of two 32-bit draws merged
        self._draws = np.random.Generator(bits)

    # -- seeding ---------------------------------------------------------------

    def manual_seed(self, seed: Any) -> "Generator":
        """Reseed (`set_current_seed`): a new engine, the cached normals dropped."""
        self._seed = _as_seed(seed)
        self._set_words(_seeded_words(self._seed), pos=_N, next_word=0)
        self.next_double_normal: float | None = None
        self.next_float_normal: float | None = None
        return self

    def seed(self) -> int:
        """Reseed from the OS; returns the new seed."""
        seed = fresh_seed()
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    # libtorch's (and R torch's) spellings
    current_seed = initial_seed

    def set_current_seed(self, seed: Any) -> None:
        self.manual_seed(seed)

    def clone(self) -> "Generator":
        twin = Generator.__new__(Generator)
        twin._bind(np.random.MT19937(0))
        twin._bits.state = self._bits.state
        twin._seed, twin._next_word = self._seed, self._next_word
        twin.next_double_normal = self.next_double_normal
        twin.next_float_normal = self.next_float_normal
        return twin

    # -- raw draws (libtorch's random() and random64()) ------------------------

    def random(self, n: int) -> np.ndarray:
        """n draws of `random()`: the engine's 32-bit outputs (as uint64)."""
        if n:
            self._next_word = None   # the engine moved: `next_` follows the position again
        return self._bits.random_raw(n)

    def random32(self, n: int) -> np.ndarray:
        """The same n words as `random(n)`, as uint32, drawn two at a time by
        NumPy's uint64 loop (faster than its 32-bit one): each pair's first
        word is the high half."""
        words = np.empty(n, np.uint32)
        halves = self.random64(n // 2).view(np.uint32).reshape(-1, 2)
        high = 1 if sys.byteorder == "little" else 0
        words[0:n - n % 2:2] = halves[:, high]
        words[1:n - n % 2:2] = halves[:, 1 - high]
        if n % 2:
            words[-1] = self.random(1)[0]
        return words

    def draw_into(self, fill: Callable[[np.random.MT19937], bool]) -> bool:
        """fill(bit generator) draws from the engine itself (a compiled kernel):
        True if it did."""
        if fill(self._bits):
            self._next_word = None
            return True
        return False

    def random64(self, n: int) -> np.ndarray:
        """n draws of `random64()`: two 32-bit outputs, the first the high half."""
        if n:
            self._next_word = None
        return self._draws.integers(0, 1 << 64, size=n, dtype=np.uint64, endpoint=False)

    # -- state in libtorch's layout --------------------------------------------

    def get_state(self) -> np.ndarray:
        """The 5056 bytes `torch.get_rng_state()` returns for the same state."""
        state = self._bits.state["state"]
        pos = int(state["pos"])
        # libtorch counts `left` down to the next twist and reads word `next_`:
        # pos = 625 - left, and next_ = pos (a freshly seeded engine has next_ 0)
        next_word = pos if self._next_word is None else self._next_word
        out = bytearray(STATE_SIZE)
        _HEAD.pack_into(out, 0, self._seed, _N + 1 - pos, 1, next_word)
        out[_WORDS_AT:_NORMAL_AT] = state["key"].astype("<u8").tobytes()
        double = self.next_double_normal
        _NORMAL.pack_into(out, _NORMAL_AT, 0.0, 0.0 if double is None else double, 0.0,
                          double is not None)
        single = self.next_float_normal
        _FLOAT_NORMAL.pack_into(out, _FLOAT_AT, 0.0 if single is None else single,
                                single is not None)
        return np.frombuffer(bytes(out), dtype=np.uint8).copy()

    def set_state(self, state: Any) -> "Generator":
        """Restore a state from `get_state()` or from PyTorch's `get_rng_state()`."""
        raw = np.asarray(state, dtype=np.uint8).tobytes() if not isinstance(
            state, (bytes, bytearray)) else bytes(state)
        if len(raw) != STATE_SIZE:
            raise ValueError(f"a CPU generator state has {STATE_SIZE} bytes (what "
                             f"torch_get_rng_state() returns), got {len(raw)}")
        seed, left, seeded, next_word = _HEAD.unpack_from(raw, 0)
        words = np.frombuffer(raw, dtype="<u8", count=_N, offset=_WORDS_AT)
        # libtorch's is_valid(), plus what an engine in use always satisfies:
        # `next_` is where `left` says (any `next_` when the next draw twists)
        if not (seeded and 0 < left <= _N and next_word <= _N and np.all(words <= _U32)
                and (left == 1 or next_word == _N + 1 - left)):
            raise ValueError("invalid mt19937 state: not a state torch_get_rng_state() returns")
        _, normal_y, _, normal_valid = _NORMAL.unpack_from(raw, _NORMAL_AT)
        single, single_valid = _FLOAT_NORMAL.unpack_from(raw, _FLOAT_AT)
        self._seed = seed
        self._set_words(words.astype(np.uint32), pos=_N + 1 - left,
                        next_word=next_word if left == 1 else None)
        self.next_double_normal = normal_y if normal_valid else None
        self.next_float_normal = float(single) if single_valid else None
        return self

    def _set_words(self, words: np.ndarray, pos: int, next_word: int | None) -> None:
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": words, "pos": pos}}
        self._next_word = next_word   # libtorch's `next_` while it differs from pos

    def __repr__(self) -> str:
        return "torch_generator()"


# the process's generator behind every draw not given its own (unseeded: fresh)
default_generator = Generator(fresh_seed())
