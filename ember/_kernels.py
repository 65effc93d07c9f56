"""NumPy kernels shared by ops and the engine (NumPy only: importable from any layer).

# NOTE [einsum reductions]
NumPy's ``add.reduce`` sums float32/float64 pairwise, which is accurate but, in this NumPy, 2-10x slower than
``einsum``'s SIMD loop on the sizes models use (a (512, 128) row sum: 21 vs 7 µs; (32, 16, 1024) over its last
axis: 530 vs 50 µs). einsum accumulates in per-lane running sums, so its error grows with the number of terms
summed into each output (about 1e-7 relative at 2**20 float32 terms, 1e-6 at 2**24, against 4e-8 pairwise). So
``fsum`` sums by einsum only the trailing reduced axes (each output's contiguous runs, up to ``EINSUM_MAX`` terms)
of float32/float64 arrays of at least ``EINSUM_MIN`` elements, and the leading reduced axes of that (few terms) by
np.sum (the batch of a bias or BatchNorm gradient: 57 against 132 µs for (32, 16, 1024) over (0, 2), with the
pairwise order across the batch); anything else is np.sum, and so is every sum of a device array (CuPy's reduction is one kernel; its einsum is
not faster). On host arrays np.sum is called as what it dispatches to,
``np.add.reduce`` (the same sum, without np.sum's ~2.5 µs of argument handling: a bias gradient per step).
"""
from __future__ import annotations

import math

import numpy as np

from . import _backend as _B

__all__ = ["fsum", "rowdot", "select", "scatter_add", "take_along", "wrapped", "EINSUM_MAX"]

EINSUM_MAX = 1 << 20
EINSUM_MIN = 8192  # smaller arrays: np.sum (its overhead is as small, and its pairwise sum the reference)
_einsum = np.einsum
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_nd = np.ndarray
_add_reduce = np.add.reduce


def _sum(a, axes: tuple, keepdims: bool = False):
    """``np.sum(a, axis=axes, keepdims=keepdims)``: ``np.add.reduce`` itself on a host array (NOTE [einsum
    reductions]), np.sum on anything else (a device array dispatches through it)."""
    if type(a) is _nd:
        return _add_reduce(a, axis=axes, keepdims=keepdims)
    return np.sum(a, axis=axes, keepdims=keepdims)


def _trailing(axes: tuple, nd: int) -> int:
    """How many of the sorted ``axes`` are the trailing axes of an nd-array (a contiguous run of each output)."""
    k = 0
    while k < len(axes) and axes[-1 - k] == nd - 1 - k:
        k += 1
    return k


def _finish(inner, a_shape, axes: tuple, k: int, keepdims: bool, dt):
    """Sum the leading reduced axes of ``inner`` (the trailing ones already summed) pairwise; reshape for keepdims."""
    rest = axes[:len(axes) - k]
    out = _sum(inner, rest) if rest else inner
    if type(out) is not np.ndarray:
        out = _B.asarray(out, dt)
    if keepdims:
        out = out.reshape(tuple(1 if i in axes else n for i, n in enumerate(a_shape)))
    return out


def fsum(a: np.ndarray, axes: tuple, keepdims: bool = False):
    """``np.sum(a, axis=axes, keepdims=keepdims)`` (axes: a sorted tuple of non-negative axes), computed by einsum
    where that is faster and accurate enough (NOTE [einsum reductions]); an ndarray, 0-d for a full sum."""
    dt = a.dtype
    nd = a.ndim
    k = _trailing(axes, nd) if axes else 0
    if ((dt != _F32 and dt != _F64) or not k or a.size < EINSUM_MIN or math.prod(a.shape[nd - k:]) > EINSUM_MAX
            or type(a) is not _nd):
        out = _sum(a, axes, keepdims)
        return out if type(out) is np.ndarray else _B.asarray(out, dt)
    return _finish(_einsum(a, list(range(nd)), list(range(nd - k))), a.shape, axes, k, keepdims, dt)


def rowdot(a: np.ndarray, b: np.ndarray, axes: tuple, keepdims: bool = False):
    """``fsum(a * b, axes, keepdims)`` for two arrays of one shape and float dtype, without the product's
    temporary (einsum), falling back to the product where ``fsum`` would."""
    nd = a.ndim
    k = _trailing(axes, nd) if axes else 0
    if (not k or a.dtype.kind != "f" or a.dtype.itemsize < 4 or a.size < EINSUM_MIN
            or math.prod(a.shape[nd - k:]) > EINSUM_MAX or type(a) is not _nd):
        return fsum(a * b, axes, keepdims)
    idx = list(range(nd))
    return _finish(_einsum(a, idx, b, idx, idx[:nd - k]), a.shape, axes, k, keepdims, a.dtype)


# NOTE [branch-free select]: NumPy's where (and boolean-mask indexing) branches on each element: on a condition that
# follows the data (signs, ranges: every activation and clamp) the branch is mispredicted half the time, ~7x slower
# than a regular pattern (320 against 45 µs for 64k float32). ``select`` picks the bits instead:
# out = ((a ^ b) & m) ^ b with m all ones where ``cond`` holds, exactly np.where's values (nan, inf, -0 included).
_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}
SELECT_MIN = 2048  # below this many elements np.where's own overhead is smaller


def _on_cond(cond, x, dtype):
    """``x`` (an array or a Python number) as an array of ``dtype`` on ``cond``'s device: CuPy refuses a 0-d host
    array beside its own (a number made into one by ``np.asarray`` included)."""
    return _B.asarray(x, dtype) if type(x) in _B.ARRAYS else _B.like(cond, _B.asarray(x, dtype))


def select(cond: np.ndarray, a, b, dtype: np.dtype) -> np.ndarray:
    """``np.where(cond, a, b)`` for a float ``dtype`` (``a``/``b``: arrays of that dtype or Python numbers), without
    a branch per element (NOTE [branch-free select])."""
    shape = np.broadcast_shapes(np.shape(cond), np.shape(a), np.shape(b))
    u = _BITS.get(dtype.itemsize)
    if u is None or dtype.kind != "f" or math.prod(shape) < SELECT_MIN:
        return _B.asarray(np.where(cond, a, b), dtype)
    ab = (a if type(a) is np.ndarray else _on_cond(cond, a, dtype)).view(u)
    bb = (b if type(b) is np.ndarray else _on_cond(cond, b, dtype)).view(u)
    out = np.empty(shape, u, like=cond)
    np.subtract(u(0), cond, out=out, dtype=u)  # True -> all ones
    if bb.ndim == 0 and not bb:  # b is +0.0: out = a & m
        np.bitwise_and(out, ab, out=out)
        return out.view(dtype)
    t = np.bitwise_xor(ab, bb)
    np.bitwise_and(out, t, out=out)
    np.bitwise_xor(out, bb, out=out)
    return out.view(dtype)


def along_key(idx: np.ndarray, dim: int) -> tuple:
    """The NumPy key addressing ``idx``'s positions along ``dim``: ``idx`` there, open ranges (on ``idx``'s device)
    on the other dims, as ``take_along_axis`` reads it."""
    n = idx.ndim
    return tuple(idx if d == dim else np.arange(s, like=idx).reshape((1,) * d + (s,) + (1,) * (n - d - 1))
                 for d, s in enumerate(idx.shape))


# NOTE [flat scatter-add]: np.add.at with a multi-dimensional key runs ~8 ns per element (1.2 ms to sum 1120 rows
# of 128 into an embedding table); the same sums as one 1-D np.add.at over flat positions run 3-5x faster.
# ``scatter_add`` computes the flat positions of the two key shapes the ops use (full slices then one index
# array; one index array per leading dim) and falls back to np.add.at for any other key.
def wrapped(idx: np.ndarray, n: int) -> np.ndarray:
    """``idx % n`` (negative indices counted from the end), skipping the division when no index is negative (an
    integer modulo costs ~30x the minimum that decides it)."""
    return idx if not idx.size or idx.min() >= 0 else idx % max(n, 1)


def _flat_positions(shape: tuple, key) -> tuple | None:
    """(flat positions, region shape) that ``out[key]`` addresses in a C-contiguous array of ``shape``, or None."""
    if not isinstance(key, tuple):
        key = (key,)
    arrays = [k for k in key if type(k) is np.ndarray]
    if not arrays or any(k.dtype.kind not in "iu" for k in arrays) or len(key) > len(shape):
        return None
    full = slice(None)
    if len(arrays) == 1:  # (:, ..., :, idx): idx along one dim, every other position
        d = next(i for i, k in enumerate(key) if type(k) is np.ndarray)
        if any(k != full for k in key[:d] + key[d + 1:] if type(k) is slice) or \
                any(type(k) is not slice for k in key[:d] + key[d + 1:]):
            return None
        pre, size = math.prod(shape[:d]), shape[d]
        rest = math.prod(shape[d + 1:])
        idx = arrays[0]
        pos = (np.arange(pre)[:, None] * size + wrapped(idx.reshape(-1), size)[None, :]) * rest
        if rest != 1:
            pos = pos[:, :, None] + np.arange(rest)
        return pos.reshape(-1), shape[:d] + idx.shape + shape[d + 1:]
    if len(arrays) != len(key):  # several index arrays with slices between them: NumPy's own rules
        return None
    try:
        region = np.broadcast_shapes(*(k.shape for k in arrays))
    except ValueError:
        return None
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    pos = None
    for d, k in enumerate(arrays):
        term = wrapped(k, shape[d]) * strides[d]
        pos = term if pos is None else pos + term
    rest = strides[len(arrays) - 1]
    pos = np.broadcast_to(pos, region)
    if rest != 1:
        pos = pos[..., None] + np.arange(rest)
    return pos.reshape(-1), region + shape[len(arrays):]


def take_along(x: np.ndarray, idx: np.ndarray, dim: int) -> np.ndarray:
    """``np.take_along_axis(x, idx, dim)`` for indices in range whose other dims fit in x's: one take at flat
    positions where x is C-contiguous (NumPy's take_along_axis indexes with one array per dim: ~1.6x slower)."""
    if type(x) is not np.ndarray or not x.flags.c_contiguous or not idx.size:  # (device arrays: their own kernel)
        return np.take_along_axis(x[tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(idx.shape))],
                                  idx, dim)
    key = list(np.ogrid[tuple(slice(s) for s in idx.shape)])
    key[dim] = idx
    pos, region = _flat_positions(x.shape, tuple(key))
    return np.take(x.reshape(-1), pos).reshape(region)


def scatter_add(out: np.ndarray, key, values) -> None:
    """``np.add.at(out, key, values)`` into a fresh C-contiguous ``out`` (NOTE [flat scatter-add])."""
    found = _flat_positions(out.shape, key) if type(out) is np.ndarray and out.flags.c_contiguous and out.size else None
    if found is None:
        _B.ufunc_at(np.add, out, key, values)
        return
    pos, region = found
    np.add.at(out.reshape(-1), pos, np.broadcast_to(values, region).reshape(-1))
