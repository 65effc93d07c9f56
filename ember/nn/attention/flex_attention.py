"""FlexAttention as torch.nn.attention.flex_attention on a CPU: attention with a user ``score_mod`` and a block-sparse
``BlockMask`` built from a ``mask_mod``.

NOTE [flex_attention on the CPU]: outside torch.compile, torch evaluates flex_attention by its math reference: scores
``q @ k^T * scale`` in float32 (float64 for float64 inputs), ``score_mod`` and the block mask's ``mask_mod`` applied
to every (batch, head, q_idx, kv_idx) position through four nested vmaps, masked scores set to -inf, a softmax that
gives fully masked rows zeros, then ``p @ v`` in the input dtype. The block structure only steers compiled kernels:
the values come from ``mask_mod`` alone. ember runs that reference with its own vmap. On a CPU torch refuses inputs
that require grad (no CPU backward) and max_scores outputs, and warns once that the call is not compiled; so does
ember. The BlockMask's block tables (int32 counts and indices, partial and full blocks, their Q-major transposes) are
NumPy bookkeeping with torch's layout, so printing, sparsity, slicing and ``_adjust`` agree with torch's.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math
import operator
import warnings
from enum import Enum
from typing import Literal, NamedTuple, TypedDict

import numpy as np

from ... import _dtype as D
from ... import _factories as _F
from ..._tensor import Tensor, _wrap
from ...func import vmap

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False
_WARNINGS_SHOWN: set = set()
_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30
_Backend = Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]
_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")


def _warn_once(warning_id: str, message: str, category: type = UserWarning) -> None:
    if warning_id not in _WARNINGS_SHOWN:
        warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(warning_id)


class FlexKernelOptions(TypedDict, total=False):
    """Tuning knobs of torch's FlexAttention kernels (Triton / FLASH); accepted and validated, no effect here."""

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_M1: int
    BLOCK_N1: int
    BLOCK_M2: int
    BLOCK_N2: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: _Backend


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention returns."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's auxiliary outputs (None where not requested)."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class _ModificationType(Enum):
    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn) -> _ModificationType:
    """A score_mod takes 5 positional arguments (score, b, h, q_idx, kv_idx), a mask_mod 4."""
    if hasattr(fn, "__code__"):
        n = fn.__code__.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        n = sum(1 for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return _ModificationType.SCORE_MOD if n == 5 else _ModificationType.MASK_MOD


def _vmap_for_bhqkv(fn, prefix: tuple, suffix: tuple = ()):
    """``fn`` mapped over the kv_idx, q_idx, head and batch index vectors (innermost first), as torch's."""
    for dims in ((None, None, None, 0), (None, None, 0, None), (None, 0, None, None), (0, None, None, None)):
        fn = vmap(fn, in_dims=prefix + dims + suffix, out_dims=0)
    return fn


def _identity(score: Tensor, batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    return score


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask_mod that keeps every position."""
    return batch.new_ones((), dtype=D.bool, device=batch.device)


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor):
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the mask_mod attribute is "
        "reset. You must set it from the original BlockMask's mask_mod.\n\nIncorrect usage:\n  base_mask = "
        "create_block_mask(my_mask_fn, ...)\n  sliced_mask = base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = "
        "apply_offset(sliced_mask.mask_mod, offset)  # WRONG!\n\nCorrect usage:\n  base_mask = "
        "create_block_mask(my_mask_fn, ...)\n  sliced_mask = base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = "
        "apply_offset(base_mask.mask_mod, offset)  # Use base_mask!")


# ---------------------------------------------------------------- block tables (NumPy bookkeeping, torch's layout)
def _i32(a: np.ndarray) -> Tensor:
    return _wrap(np.ascontiguousarray(a, dtype=np.int32), D.int32)


def _ordered_to_dense_np(num_blocks: np.ndarray, indices: np.ndarray, num_cols: int) -> np.ndarray:
    """The 0/1 block matrix whose row r has ones at ``indices[..., r, :num_blocks[..., r]]``."""
    dense = np.zeros(indices.shape[:-1] + (num_cols + 1,), np.int32)
    valid = np.arange(indices.shape[-1]) < num_blocks[..., None]
    cols = np.where(valid, indices, num_cols)  # invalid entries go to a spare column
    np.put_along_axis(dense, cols.astype(np.int64), 1, axis=-1)
    return dense[..., :num_cols]


def _dense_to_ordered_np(dense: np.ndarray) -> tuple:
    """(blocks per row, the present blocks' columns first in column order), as int32."""
    dense = dense.astype(np.int32)
    order = np.argsort(-dense, axis=-1, kind="stable")  # descending, ties in column order
    return dense.sum(-1).astype(np.int32), order.astype(np.int32)


def _transpose_ordered(num_blocks: Tensor, indices: Tensor) -> tuple:
    dense = _ordered_to_dense_np(num_blocks._data, indices._data, indices.shape[-1])
    n, idx = _dense_to_ordered_np(np.swapaxes(dense, -2, -1))
    return _i32(n), _i32(idx)


def _adjust_num_blocks_and_indices(num_blocks: Tensor, indices: Tensor, rows: int, cols: int) -> tuple:
    idx = indices._data[:, :, :rows, :cols]
    n = np.minimum(num_blocks._data[:, :, :rows], cols)
    n = (idx < n[..., None]).sum(-1)
    return _i32(n), _i32(idx)


class BlockMask:
    """A block-sparse attention mask: per (batch, head, row of Q blocks), how many KV blocks are computed and which
    (``kv_num_blocks``/``kv_indices``, optionally split off the ``full_*`` blocks that need no masking), the Q-major
    transposes for the backward pass, the block size, sequence lengths and the ``mask_mod`` it came from."""

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks",
                     "q_indices", "full_q_num_blocks", "full_q_indices", "dq_write_order", "dq_write_order_full",
                     "dq_kv_order"]
    _CONTEXT_ATTRS = ["seq_lengths", "BLOCK_SIZE", "mask_mod", "dq_kv_order_spt"]

    def __init__(self, seq_lengths: tuple, kv_num_blocks: Tensor, kv_indices: Tensor, full_kv_num_blocks, full_kv_indices,
                 q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE: tuple = (_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE), mask_mod=noop_mask, *,
                 dq_write_order=None, dq_write_order_full=None, dq_kv_order=None, dq_kv_order_spt=None) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Tensor, kv_indices: Tensor, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None,
                       compute_q_blocks: bool = True, *, dq_write_order=None, dq_write_order_full=None,
                       dq_kv_order=None) -> "BlockMask":
        """A BlockMask from its KV block tables; the Q-major tables are derived (``compute_q_blocks``)."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num, q_idx, full_q_num, full_q_idx = None, None, None, None
        if compute_q_blocks:
            q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num, full_q_idx = _transpose_ordered(full_kv_num_blocks, full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths=seq_lengths, kv_num_blocks=kv_num_blocks, kv_indices=kv_indices,
                   full_kv_num_blocks=full_kv_num_blocks, full_kv_indices=full_kv_indices, q_num_blocks=q_num,
                   q_indices=q_idx, full_q_num_blocks=full_q_num, full_q_indices=full_q_idx, BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask, dq_write_order=dq_write_order,
                   dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten: bool = True) -> tuple:
        """Every field in torch's order (sequence lengths and block size as two ints each when ``flatten``)."""
        seq = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        block = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        return (*seq, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
                self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *block, self.mask_mod)

    @property
    def shape(self) -> tuple:
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def numel(self) -> int:
        """The number of positions the mask covers (sparsity not counted)."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """The percentage of blocks that are not computed."""
        computed = int(self.kv_num_blocks._data.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks._data.sum())
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self) -> Tensor:
        """The 0/1 (int32) block matrix: which (Q block, KV block) pairs are computed."""
        dense = _ordered_to_dense_np(self.kv_num_blocks._data, self.kv_indices._data, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense_np(self.full_kv_num_blocks._data, self.full_kv_indices._data,
                                                 self.full_kv_indices.shape[-1])
        return _i32(dense)

    def to_string(self, grid_size=(20, 20), limit: int = 4) -> str:
        """The block matrix drawn per (batch, head): full blocks as █, partly computed cells as ░."""
        dense = self.to_dense()._data
        *batch_dims, rows, cols = dense.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = rows, cols
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-rows // max_rows))
        col_step = max(1, -(-cols // max_cols))

        def cell(section: np.ndarray) -> str:
            share = float(section.astype(np.float32).mean())
            return "█" if share == 1 else " " if share == 0 else "░"

        out = []
        for i, idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if i == limit:
                out += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                        "You can also index (BlockMask[batch, head]) to choose a specific batch or head"]
                break
            grid = dense[idx]
            vis = f"{idx}\n"
            for r in range(0, rows, row_step):
                vis += "".join(cell(grid[r:r + row_step, c:c + col_step]) * 2 for c in range(0, cols, col_step))
                vis += "\n"
            out.append(vis)
        return "\n".join(out)

    def __str__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n" + self.to_string().strip()
                + "\n)")

    def __repr__(self) -> str:
        def shape_of(x):
            return x.shape if x is not None else None

        name = self.mask_mod.__name__ if hasattr(self.mask_mod, "__name__") else self.mask_mod
        return (f"BlockMask(\n    kv_num_blocks={self.kv_num_blocks.shape},\n    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_of(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_of(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_of(self.q_num_blocks)},\n    q_indices={shape_of(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_of(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_of(self.full_q_indices)},\n    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n    sparsity={self.sparsity():.2f}%,\n    mask_mod={name}\n)")

    def __getitem__(self, index) -> "BlockMask":
        """The mask of some batches / heads / Q-block rows (an int keeps its dim as size one, as torch); the
        result's mask_mod refuses to run (it no longer matches the blocks)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Slicing BlockMask with tensor dq_kv_order is not supported yet. Construct a "
                                      "new BlockMask with matching precomputed dq_write_order metadata.")
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1)) if isinstance(i, int) else i
                      for i, n in zip(padded, sizes))
        full_num = self.full_kv_num_blocks[index] if self.full_kv_num_blocks is not None else None
        full_idx = self.full_kv_indices[index] if self.full_kv_indices is not None else None
        out = BlockMask.from_kv_blocks(self.kv_num_blocks[index], self.kv_indices[index], full_num, full_idx,
                                       BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
                                       seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)
        out.dq_kv_order_spt = self.dq_kv_order_spt
        return out

    def _adjust(self, new_q_len: int, new_kv_len: int) -> "BlockMask":
        """The mask cropped to its upper-left (new_q_len, new_kv_len) corner."""
        if self.dq_kv_order is not None:
            raise NotImplementedError("Adjusting BlockMask with tensor dq_kv_order is not supported yet. Construct a "
                                      "new BlockMask with matching precomputed dq_write_order metadata.")
        rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]
        num, idx = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices, rows, cols)
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = _adjust_num_blocks_and_indices(self.full_kv_num_blocks, self.full_kv_indices, rows,
                                                                cols)
        out = self.from_kv_blocks(num, idx, full_num, full_idx, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                                  seq_lengths=(new_q_len, new_kv_len), compute_q_blocks=self.q_indices is not None)
        out.dq_kv_order_spt = self.dq_kv_order_spt
        return out

    def to(self, device) -> "BlockMask":
        """A BlockMask with its tensors on ``device``."""
        moved = {a: (getattr(self, a).to(device) if isinstance(getattr(self, a), Tensor) else getattr(self, a))
                 for a in self._TENSOR_ATTRS}
        return BlockMask(seq_lengths=self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                         dq_kv_order_spt=self.dq_kv_order_spt)


def or_masks(*mask_mods):
    """The mask_mod keeping a position any of ``mask_mods`` keeps."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_zeros((), dtype=D.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods):
    """The mask_mod keeping a position every one of ``mask_mods`` keeps."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_ones((), dtype=D.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _indices(B: int, H: int, Q_LEN: int, KV_LEN: int, device) -> tuple:
    return tuple(_F.arange(0, n, device=device) for n in (B, H, Q_LEN, KV_LEN))


def create_mask(mod_fn, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int, device=None) -> Tensor:
    """The dense (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod, or of where a score_mod leaves scores finite
    (B and H None: 1)."""
    device = "cpu" if device is None else device
    B, H = 1 if B is None else B, 1 if H is None else H
    b, h, m, n = _indices(B, H, Q_LEN, KV_LEN, device)
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        out = _vmap_for_bhqkv(mod_fn, prefix=(0,))(_F.zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n)
        return ~out.isneginf()
    return _vmap_for_bhqkv(mod_fn, prefix=())(b, h, m, n)


def _convert_mask_to_block_mask(mask: Tensor, Q_BLOCK_SIZE: int, KV_BLOCK_SIZE: int,
                                separate_full_blocks: bool) -> tuple:
    """Per (b, h, Q block, KV block): 1 where some (partial) or every (full) position is kept, as int8 arrays."""
    if mask.dtype != D.bool:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    m = mask._data
    while m.ndim < 4:
        m = m[None]
    B, H, Q, KV = m.shape
    pq, pk = -Q % Q_BLOCK_SIZE, -KV % KV_BLOCK_SIZE
    m = np.pad(m, ((0, 0), (0, 0), (0, pq), (0, pk)))
    blocks = m.reshape(B, H, (Q + pq) // Q_BLOCK_SIZE, Q_BLOCK_SIZE, (KV + pk) // KV_BLOCK_SIZE, KV_BLOCK_SIZE)
    counts = blocks.sum(axis=(3, 5))
    if separate_full_blocks:
        full = counts == Q_BLOCK_SIZE * KV_BLOCK_SIZE
        return ((counts > 0) & ~full).astype(np.int8), full.astype(np.int8)
    return (counts > 0).astype(np.int8), None


def create_block_mask(mask_mod, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False, separate_full_blocks: bool = True,
                      compute_dq_write_order: bool = False, dq_kv_order: bool = True) -> BlockMask:
    """The BlockMask of ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (B and H None: 1, broadcast) in blocks of
    BLOCK_SIZE (an int, or (Q, KV))."""
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B, H = 1 if B is None else B, 1 if H is None else H
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        warnings.warn("_compile flag on create_block_mask was originally added to work around a torch.compile "
                      "limitation. That limitation has since been addressed. So, to compile create_block_mask, we "
                      "suggest doing torch.compile(create_block_mask). This still works for now, but will be removed "
                      "in the future.", DeprecationWarning, stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    if compute_dq_write_order:
        raise NotImplementedError("compute_dq_write_order: the write-order metadata of torch's deterministic FLASH "
                                  "backward (a GPU kernel) is not computed by ember")
    partial, full = _convert_mask_to_block_mask(create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device), q_block, kv_block,
                                                separate_full_blocks)
    num, idx = _dense_to_ordered_np(partial)
    full_num = full_idx = None
    if full is not None:
        full_num, full_idx = (_i32(a) for a in _dense_to_ordered_np(full))
    return BlockMask.from_kv_blocks(_i32(num), _i32(idx), full_num, full_idx, BLOCK_SIZE=(q_block, kv_block),
                                    mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))


def _create_empty_block_mask(query: Tensor, key: Tensor) -> BlockMask:
    """The mask flex_attention uses without one: one block covering everything."""
    return BlockMask.from_kv_blocks(kv_num_blocks=_F.ones([1, 1, 1], dtype=D.int32),
                                    kv_indices=_F.zeros([1, 1, 1, 1], dtype=D.int32),
                                    BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE, seq_lengths=(1, 1))


# ---------------------------------------------------------------- flex_attention
def _validate_inputs(query: Tensor, key: Tensor, value: Tensor) -> None:
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but got query.device: "
                         f"{query.device}, key.device: {key.device}, and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                         f"{query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but got "
                         f"E={query.size(-1)} and E={key.size(-1)}.")
    if query.requires_grad or key.requires_grad or value.requires_grad:
        raise NotImplementedError("FlexAttention does not support backward on CPU. Please set the input "
                                  "requires_grad to False or use another device.")


def _kernel_options(kernel_options, return_aux) -> None:
    """torch's checks of the kernel options and of the outputs asked for (no max scores on a CPU)."""
    opts = dict(kernel_options or {})
    if "BACKEND" in opts and opts.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError("BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND supersedes the "
                           "legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only specify the desired BACKEND.")
    if "BACKEND" in opts and opts["BACKEND"] not in _BACKENDS:
        raise ValueError(f"Invalid BACKEND value '{opts['BACKEND']}'. Must be one of {_BACKENDS}")
    if "OUTPUT_LOGSUMEXP" in opts:
        raise AssertionError("OUTPUT_LOGSUMEXP must not be in kernel_options")
    if "OUTPUT_MAX" in opts:
        raise AssertionError("OUTPUT_MAX must not be in kernel_options")
    output_max = return_aux is not None and return_aux.max_scores
    if opts.get("BACKEND", "AUTO") == "FLASH" and output_max:
        raise NotImplementedError("Returning max scores is not supported with BACKEND='FLASH'. Use "
                                  "return_aux=AuxRequest(lse=True) or omit max_scores.")
    if output_max:
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")


def _math_attention(query: Tensor, key: Tensor, value: Tensor, score_mod, mask_mod, scale: float) -> tuple:
    """(output, logsumexp) by torch's math reference (NOTE [flex_attention on the CPU])."""
    groups = query.size(1) // key.size(1)
    key, value = key.repeat_interleave(groups, dim=1), value.repeat_interleave(groups, dim=1)
    bq, bkv = query.size(0), key.size(0)
    if not (bq == bkv or (bq > 1 and bkv == 1)):
        raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={bq} and Bkv={bkv}")
    key, value = key.expand(bq, *key.shape[1:]), value.expand(bq, *value.shape[1:])
    work = D.float64 if query.dtype is D.float64 else D.float32
    scores = query.to(work) @ key.to(work).transpose(-2, -1)
    b, h, m, n = _indices(*scores.shape, query.device)
    scores = (scores * scale).to(work)
    modded = _vmap_for_bhqkv(score_mod, prefix=(0,))(scores, b, h, m, n)
    keep = _vmap_for_bhqkv(mask_mod, prefix=())(b, h, m, n)
    post = modded.masked_fill(~keep, -math.inf)
    masked_rows = (post == -math.inf).all(-1)
    lse = post.logsumexp(-1).masked_fill(masked_rows, -math.inf)
    probs = post.softmax(-1).masked_fill(masked_rows.unsqueeze(-1), 0.0)  # torch's _safe_softmax
    return probs.to(query.dtype) @ value.to(query.dtype), lse / math.log(2)


def flex_attention(query: Tensor, key: Tensor, value: Tensor, score_mod=None, block_mask: BlockMask | None = None,
                   scale: float | None = None, enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options=None, *, return_aux: AuxRequest | None = None):
    """Attention over (B, H, L, E) queries and (B, Hkv, S, E) keys / (B, Hkv, S, Ev) values with ``score_mod``
    applied to each score and ``block_mask``'s mask_mod deciding which positions attend; returns the output, and the
    log-sum-exp when ``return_lse`` or ``return_aux`` asks for it."""
    _validate_inputs(query, key, value)
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={query.size(-3)} "
                         f"and Hkv={key.size(-3)}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                         f"Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, but "
                             f"got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(f"Expect query and key/value to have the same batch size, or block_mask and query to "
                             f"have the same batch size, but got Bq={query.size(0)}, Bkv={key.size(0)}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")
    score_mod = _identity if score_mod is None else score_mod
    block_mask = _create_empty_block_mask(query, key) if block_mask is None else block_mask
    if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    if tuple(block_mask.BLOCK_SIZE) != (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        q_len, kv_len = block_mask.shape[-2], block_mask.shape[-1]
        if query.size(-2) > q_len or key.size(-2) > kv_len:
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                             f"q_len={query.size(-2)} and kv_len={key.size(-2)}. As the block mask was created for a "
                             "smaller length than you're using it for, you likely need to create a new block mask.")
        if (query.size(-2) < q_len and key.size(-2) <= kv_len) or (query.size(-2) <= q_len and key.size(-2) < kv_len):
            raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                             f"q_len={query.size(-2)} and kv_len={key.size(-2)}. As the block mask was created for a "
                             "larger length than you're using it for, you can either 1. create a new block mask with "
                             "the correct length, or 2. 'adjust' the existing block mask to the correct length by "
                             "calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask to "
                             "the upper left corner, which does not work for all mask_mods!")
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed in v2.10. Please use "
                   "return_aux=AuxRequest(lse=True) instead.", category=FutureWarning)
    _kernel_options(kernel_options, return_aux)
    if not _FLEX_ATTENTION_DISABLE_COMPILE_DEBUG:
        _warn_once("flex_attention_performance",
                   "flex_attention called without torch.compile() - this will use an unfused implementation that "
                   "materializes the full scores matrix instead of generating a fused kernel.\n\nSOLUTION: Use "
                   "torch.compile(flex_attention)(...)\n\nIf you want to debug your score_mod/mask_mod, you can set:\n"
                   "torch.nn.attention.flex_attention._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True\n\nThis will "
                   "allow you to use print statements or breakpoints. Note: This doesn't work with the backwards "
                   "pass and may produce incorrect results.")
    out, lse = _math_attention(query, key, value, score_mod, block_mask.mask_mod, scale)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    lse = lse * math.log(2.0) if want_lse and lse.numel() > 0 else None
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=None)
    return (out, lse) if return_lse else out
