"""Reductions: sum, mean (and sum_to_size, which the engine uses to undo broadcasting)."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from ._op import Op

__all__ = ["sum", "mean", "sum_to_size"]


def _dims(dim, ndim: int) -> tuple:
    """Normalise ``dim`` (None, int, sequence) to a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    n = max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d = d % n if ndim else 0
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out)) if ndim else ()


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast a reduced gradient back to ``shape`` (reinserting reduced dims)."""
    if not keepdim and dims:
        grad = grad.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return grad.expand(shape)


class Sum(Op):
    """d sum(x, dims) = grad broadcast back to x's shape"""

    __slots__ = ("dims", "keepdim", "shape")
    _name = "SumBackward1"
    nattrs = 3

    @staticmethod
    def forward(ctx, self, dim, keepdim, dtype):
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, self.shape
        if dtype is None and self.dtype.kind in "biu":
            dtype = D.int64
        out = np.sum(self, axis=dims, keepdims=keepdim, dtype=None if dtype is None else dtype.np)
        return np.asarray(out) if type(out) is not np.ndarray else out

    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim)


class SumAll(Sum):
    __slots__ = ()
    _name = "SumBackward0"


class Mean(Op):
    """d mean(x, dims) = grad / n broadcast back to x's shape"""

    __slots__ = ("dims", "keepdim", "shape", "n")
    _name = "MeanBackward1"
    nattrs = 3

    @staticmethod
    def forward(ctx, self, dim, keepdim, dtype):
        if dtype is not None:
            self = self.astype(dtype.np)
        elif self.dtype.kind in "biu":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {D.from_numpy_dtype(self.dtype).name.capitalize()}")
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, self.shape
            ctx.n = int(np.prod([self.shape[d] for d in dims])) if dims else 1
        out = np.mean(self, axis=dims, keepdims=keepdim) if self.size else np.full(
            np.sum(self, axis=dims, keepdims=keepdim).shape, np.nan, self.dtype)
        return np.asarray(out, self.dtype) if type(out) is not np.ndarray or out.dtype != self.dtype else out

    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) / ctx.n


class MeanAll(Mean):
    __slots__ = ()
    _name = "MeanBackward0"


def sum(input, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A001 - torch's name
    """Sum of all elements, or over ``dim`` (int or tuple)."""
    if dim is None:
        return SumAll.apply(input, None, False, dtype)
    return Sum.apply(input, dim, keepdim, dtype)


def mean(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Mean of all elements, or over ``dim`` (int or tuple); floating inputs only."""
    if dim is None:
        return MeanAll.apply(input, None, False, dtype)
    return Mean.apply(input, dim, keepdim, dtype)


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size`` (the inverse of broadcasting ``size`` to input's shape)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = input._data.shape
    if tuple(size) == shape:
        return input
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    out = Sum.apply(input, dims, True, None) if dims else input
    if lead:
        out = out.reshape(size)
    return out
