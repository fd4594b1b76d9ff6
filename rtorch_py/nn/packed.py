"""Packed sequences (R torch's `nn_utils_rnn_*`): a batch of sequences of
different lengths stored time step by time step, each step holding only the
sequences still running, which the recurrent layers take as input.

Python's positions are 0-based (`sorted_indices`); R sees them 1-based.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import ops as _ops
from ..ops.creation import full as torch_full
from ..ops.shape import _pack_padded_sequence
from ..tensor import Tensor, wrap


class PackedSequence:
    """`data` (the time steps' rows, one after another), `batch_sizes` (how many
    sequences each step holds), and the permutation that sorted the batch by
    decreasing length (`sorted_indices`) and its inverse (None when the batch
    came sorted)."""

    __slots__ = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")

    def __init__(self, data: Tensor, batch_sizes: Tensor, sorted_indices: Tensor | None = None,
                 unsorted_indices: Tensor | None = None) -> None:
        self.data, self.batch_sizes = data, batch_sizes
        self.sorted_indices, self.unsorted_indices = sorted_indices, unsorted_indices

    def __repr__(self) -> str:
        return (f"<PackedSequence: {int(self.batch_sizes.data.shape[0])} steps, batch of "
                f"{int(self.batch_sizes.data[0]) if self.batch_sizes.numel() else 0}, data "
                f"{list(self.data.shape)}>")


def is_packed_sequence(x: Any) -> bool:
    return isinstance(x, PackedSequence)


def _long(v: Any) -> np.ndarray:
    return np.asarray(v.data if isinstance(v, Tensor) else v).reshape(-1).astype(np.int64)


def nn_utils_rnn_pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                                      enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) whose
    sequences have these lengths; unless enforce_sorted, the batch is sorted by
    decreasing length first (and the permutation kept)."""
    lens = _long(lengths)
    sorted_indices = unsorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = wrap(order.astype(np.int64))
        unsorted_indices = wrap(np.argsort(order).astype(np.int64))
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded_sequence(input, lens, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)


def nn_utils_rnn_pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                              padding_value: float = 0.0) -> Tensor:
    """Sequences of shapes (L_i, *) as one (max L, B, *) tensor (batch_first:
    (B, max L, *)), padded with padding_value."""
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in seqs)
    rest = tuple(seqs[0].shape[1:])
    shape = (len(seqs), longest) + rest if batch_first else (longest, len(seqs)) + rest
    out = torch_full(shape, padding_value, dtype=seqs[0].dtype)
    for i, s in enumerate(seqs):
        out.select(0 if batch_first else 1, i).narrow(0, 0, s.shape[0]).copy_(s)
    return out


def nn_utils_rnn_pack_sequence(sequences: Sequence[Tensor],
                               enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *) (by decreasing length unless not
    enforce_sorted)."""
    seqs = list(sequences)
    lengths = [s.shape[0] for s in seqs]
    return nn_utils_rnn_pack_padded_sequence(nn_utils_rnn_pad_sequence(seqs), lengths,
                                             enforce_sorted=enforce_sorted)


def padded_in_sorted_order(sequence: PackedSequence, padding_value: float = 0.0,
                           total_length: int | None = None) -> tuple:
    """(padded (T, B, *) in the packed (sorted) order, the lengths in that order)."""
    sizes = _long(sequence.batch_sizes)
    data = sequence.data
    steps = len(sizes) if total_length is None else int(total_length)
    if steps < len(sizes):
        raise ValueError(f"Expected total_length to be at least the length of the longest "
                         f"sequence ({len(sizes)}), but got total_length={total_length}")
    batch = int(sizes[0]) if len(sizes) else 0
    out = torch_full((steps, batch) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    offset = 0
    for t, k in enumerate(sizes):
        out.select(0, t).narrow(0, 0, int(k)).copy_(data.narrow(0, offset, int(k)))
        offset += int(k)
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    return out, lengths


def nn_utils_rnn_pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                                     padding_value: float = 0.0,
                                     total_length: int | None = None) -> list:
    """The padded batch back, in its original order, and the lengths (int64)."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"expected a PackedSequence (from nn_utils_rnn_pack_padded_sequence() "
                        f"or nn_utils_rnn_pack_sequence()), got {type(sequence).__name__}")
    out, lengths = padded_in_sorted_order(sequence, padding_value, total_length)
    if batch_first:
        out = out.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        out = out.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[_long(sequence.unsorted_indices)]
    return [out, wrap(lengths.astype(np.int64))]


def repack(output: Tensor, like: PackedSequence) -> PackedSequence:
    """A padded (T, B, *) output of a recurrent layer packed as `like` is."""
    sizes = _long(like.batch_sizes)
    rows = [output.select(0, t).narrow(0, 0, int(k)) for t, k in enumerate(sizes)]
    return PackedSequence(_ops.cat(rows, 0), like.batch_sizes, like.sorted_indices,
                          like.unsorted_indices)
