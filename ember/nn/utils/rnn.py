"""Variable-length sequences, as torch.nn.utils.rnn: padding, packing and PackedSequence."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import _backend as _B
from ... import _dtype as _D
from ... import _factories as _F
from ..._tensor import Tensor, _wrap
from ...ops import shape as _S

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence", "invert_permutation"]


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """The steps of a batch of sequences, longest first: ``data`` holds step 0 of every sequence, then step 1 of
    those still running, ...; ``batch_sizes[t]`` counts the sequences at step ``t``."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence(*packed) form
            data, batch_sizes = data[0], data[1]
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _map_data(self, fn) -> PackedSequence:
        data = fn(self.data)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        return self._map_data(lambda d: d.to(*args, **kwargs))

    def cpu(self) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=_D.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_D.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_D.float16)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation undoing ``permutation``."""
    if permutation is None:
        return None
    p = _B.to_host(permutation._data)  # (host bookkeeping; the result on the permutation's device)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=p.dtype)
    return _wrap(_B.like(permutation._data, inv), permutation.dtype)


def _lengths_array(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return _B.to_host(lengths._data).astype(np.int64, copy=False).reshape(-1)
    return np.asarray([int(n) for n in lengths], dtype=np.int64)


def _int64(a: np.ndarray) -> Tensor:
    return _wrap(np.ascontiguousarray(a, dtype=np.int64), _D.int64)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), filling with ``padding_value``."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences) if not isinstance(sequences, Tensor) else list(sequences.unbind(0))
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    longest, batch = int(lengths.max()), len(sequences)
    first = sequences[0]
    pad = _F.full((1, *first.shape[1:]), padding_value, dtype=first.dtype, device=first.device)
    flat = _S.cat([*sequences, pad], 0)
    # row (b, t) of the result reads flat[start_b + t - offset_b], or the padding row past the sequence
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    t = np.arange(longest)[None, :]
    offset = (longest - lengths)[:, None] if padding_side == "left" else np.zeros((batch, 1), np.int64)
    pos = t - offset
    idx = np.where((pos >= 0) & (pos < lengths[:, None]), starts[:, None] + pos, flat.shape[0] - 1)
    out = flat[_int64(idx if batch_first else idx.T)]
    return out


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *)) of sequences with the given lengths."""
    lens = _lengths_array(lengths)
    if enforce_sorted:
        if np.any(lens[:-1] < lens[1:]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        order = np.arange(lens.size, dtype=np.int64)
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable").astype(np.int64)
        sorted_indices = _wrap(_B.like(input._data, order), _D.int64)  # on the input's device, as torch's
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    slens = lens[order]
    batch_sizes = (slens[None, :] > np.arange(int(slens[0]) if slens.size else 0)[:, None]).sum(1)
    # packed row k is (t, order[b]) for the b-th longest sequence still running at step t
    t_idx = np.repeat(np.arange(batch_sizes.size), batch_sizes)
    b_idx = np.concatenate([order[:n] for n in batch_sizes]) if batch_sizes.size else np.zeros(0, np.int64)
    if slens.size and int(slens[0]) > steps:
        raise RuntimeError(f"pack_padded_sequence: a length ({int(slens[0])}) exceeds the padded length ({steps})")
    flat = input.reshape(steps * batch, *input.shape[2:])
    data = flat[_int64(t_idx * batch + b_idx)]
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: the padded batch (in the original order) and the lengths."""
    data, batch_sizes = sequence.data, _B.to_host(sequence.batch_sizes._data).astype(np.int64, copy=False)
    steps, batch = batch_sizes.size, int(batch_sizes[0]) if batch_sizes.size else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps_out = total_length
    else:
        steps_out = steps
    lens_sorted = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1)  # length of the b-th longest
    starts = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]).astype(np.int64)  # packed offset of step t
    unsorted = (_B.to_host(sequence.unsorted_indices._data).astype(np.int64, copy=False)
                if sequence.unsorted_indices is not None
                else np.arange(batch, dtype=np.int64))
    pad = _F.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    flat = _S.cat([data, pad], 0)
    t = np.arange(steps_out)[:, None]
    b = unsorted[None, :]  # output column j holds the sorted sequence unsorted[j]
    inside = t < lens_sorted[b]
    idx = np.where(inside, starts[np.minimum(t, max(steps - 1, 0))] + b, flat.shape[0] - 1)
    padded = flat[_int64(idx.T if batch_first else idx)]
    return padded, _int64(lens_sorted[unsorted])


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors of shape (L_i, *)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of unpadded sequences of a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(_lengths_array(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences of a PackedSequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
