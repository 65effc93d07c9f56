"""NumPy kernels shared by ops and the engine (NumPy only: importable from any layer).

# NOTE [einsum reductions]
NumPy's ``add.reduce`` sums float32/float64 pairwise, which is accurate but, in this NumPy, 2-10x slower than
``einsum``'s SIMD loop on the sizes models use (a (512, 128) row sum: 21 vs 7 µs; (32, 16, 1024) over its last
axis: 530 vs 50 µs). einsum accumulates in per-lane running sums, so its error grows with the number of terms
summed into each output (about 1e-7 relative at 2**20 float32 terms, 1e-6 at 2**24, against 4e-8 pairwise):
``fsum`` takes einsum only up to ``EINSUM_MAX`` terms per output and for float32/float64, else ``np.sum``.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["fsum", "rowdot", "select", "EINSUM_MAX"]

EINSUM_MAX = 1 << 20
_einsum = np.einsum
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def fsum(a: np.ndarray, axes: tuple, keepdims: bool = False):
    """``np.sum(a, axis=axes, keepdims=keepdims)`` (axes: a sorted tuple of non-negative axes), computed by einsum
    where that is faster and accurate enough (NOTE [einsum reductions]); an ndarray, 0-d for a full sum."""
    dt = a.dtype
    if (dt != _F32 and dt != _F64) or not axes or a.size == 0:
        out = np.sum(a, axis=axes, keepdims=keepdims)
        return out if type(out) is np.ndarray else np.asarray(out, dt)
    shape = a.shape
    terms = 1
    for d in axes:
        terms *= shape[d]
    if terms > EINSUM_MAX:
        out = np.sum(a, axis=axes, keepdims=keepdims)
        return out if type(out) is np.ndarray else np.asarray(out, dt)
    nd = a.ndim
    out = _einsum(a, list(range(nd)), [i for i in range(nd) if i not in axes])
    if type(out) is not np.ndarray:
        out = np.asarray(out, dt)
    if keepdims:
        out = out.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return out


def rowdot(a: np.ndarray, b: np.ndarray, axes: tuple, keepdims: bool = False):
    """``fsum(a * b, axes, keepdims)`` for two arrays of one shape and float dtype, without the product's
    temporary (einsum), falling back to the product where ``fsum`` would."""
    terms = 1
    for d in axes:
        terms *= a.shape[d]
    if terms > EINSUM_MAX or a.dtype.kind != "f" or a.dtype.itemsize < 4 or a.size == 0:
        return fsum(a * b, axes, keepdims)
    nd = a.ndim
    idx = list(range(nd))
    out = _einsum(a, idx, b, idx, [i for i in idx if i not in axes])
    if type(out) is not np.ndarray:
        out = np.asarray(out, a.dtype)
    if keepdims:
        out = out.reshape(tuple(1 if i in axes else n for i, n in enumerate(a.shape)))
    return out


# NOTE [branch-free select]: NumPy's where (and boolean-mask indexing) branches on each element: on a condition that
# follows the data (signs, ranges: every activation and clamp) the branch is mispredicted half the time, ~7x slower
# than a regular pattern (320 against 45 µs for 64k float32). ``select`` picks the bits instead:
# out = ((a ^ b) & m) ^ b with m all ones where ``cond`` holds, exactly np.where's values (nan, inf, -0 included).
_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}
SELECT_MIN = 2048  # below this many elements np.where's own overhead is smaller


def select(cond: np.ndarray, a, b, dtype: np.dtype) -> np.ndarray:
    """``np.where(cond, a, b)`` for a float ``dtype`` (``a``/``b``: arrays of that dtype or Python numbers), without
    a branch per element (NOTE [branch-free select])."""
    shape = np.broadcast_shapes(np.shape(cond), np.shape(a), np.shape(b))
    u = _BITS.get(dtype.itemsize)
    if u is None or dtype.kind != "f" or math.prod(shape) < SELECT_MIN:
        return np.asarray(np.where(cond, a, b), dtype)
    ab = (a if type(a) is np.ndarray else np.asarray(a, dtype)).view(u)
    bb = (b if type(b) is np.ndarray else np.asarray(b, dtype)).view(u)
    out = np.empty(shape, u)
    np.subtract(u(0), cond, out=out, dtype=u)  # True -> all ones
    if bb.ndim == 0 and not bb:  # b is +0.0: out = a & m
        np.bitwise_and(out, ab, out=out)
        return out.view(dtype)
    t = np.bitwise_xor(ab, bb)
    np.bitwise_and(out, t, out=out)
    np.bitwise_xor(out, bb, out=out)
    return out.view(dtype)
