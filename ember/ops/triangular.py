"""Triangles and diagonals of matrices: tril/triu, diagonal (a view), diag/diag_embed/diagflat, trace."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .._tensor import Tensor, _wrap_dim
from .. import _args
from ._op import Op, linear
from .shape import reshape

__all__ = ["tril", "triu", "diagonal", "diag_embed", "diag", "diagflat", "trace"]


def _tri(name: str, np_fn) -> type:
    def forward(ctx, self, diagonal):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        if ctx is not None:
            ctx.diagonal = diagonal
        return np_fn(self, diagonal)

    def backward(ctx, grad):
        return cls.apply(grad, ctx.diagonal)

    cls = type(name.capitalize(), (Op,), {"__slots__": ("diagonal",), "nattrs": 1, "forward": staticmethod(forward),
                                          "backward": backward, "__doc__": f"d {name}(x, k) = {name}(grad, k)"})
    return cls


Tril, Triu = _tri("tril", np.tril), _tri("triu", np.triu)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    return Tril.apply(input, int(diagonal))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    return Triu.apply(input, int(diagonal))


def _diag_geometry(shape: tuple, offset: int, d1: int, d2: int):
    """(shape, strides in elements, start) of the diagonal view of a C-contiguous array of ``shape``."""
    n = len(shape)
    strides = [int(np.prod(shape[i + 1:])) for i in range(n)]
    if offset >= 0:
        length = max(0, min(shape[d1], shape[d2] - offset))
        start = offset * strides[d2]
    else:
        length = max(0, min(shape[d1] + offset, shape[d2]))
        start = -offset * strides[d1]
    if length == 0:
        start = 0
    rest = [i for i in range(n) if i not in (d1, d2)]
    return tuple(shape[i] for i in rest) + (length,), tuple(strides[i] for i in rest) + (strides[d1] + strides[d2],), \
        start


def _diagonal_view(arr: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """A writable view of the diagonal (NumPy's own diagonal view is read-only)."""
    shape, _, _ = _diag_geometry(arr.shape, offset, d1, d2)
    st = arr.strides  # any layout (a batched tensor's physical value under vmap is often permuted)
    strides = tuple(st[i] for i in range(arr.ndim) if i not in (d1, d2)) + (st[d1] + st[d2],)
    start = arr
    if shape[-1]:  # a view starting at the diagonal's first element
        key = [slice(None)] * arr.ndim
        key[d2 if offset >= 0 else d1] = slice(abs(offset), None)
        start = arr[tuple(key)]
    return _B.as_strided(start, shape, strides)


def _dims2(ndim: int, dim1: int, dim2: int) -> tuple:
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


class Diagonal(Op):
    """d diagonal(x, offset, d1, d2) = grad written on that diagonal of zeros of x's shape"""

    __slots__ = ("shape", "offset", "dim1", "dim2")
    jvp = linear
    nattrs = 3
    is_view = True

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2):
        if ctx is not None:
            ctx.shape, ctx.offset, ctx.dim1, ctx.dim2 = self.shape, offset, dim1, dim2
        return _diagonal_view(self, offset, dim1, dim2)

    def backward(ctx, grad):
        return DiagonalScatter.apply(grad, ctx.shape, ctx.offset, ctx.dim1, ctx.dim2)


class DiagCopy(Diagonal):
    """d diag(matrix, k) = grad on the k-th diagonal of zeros (a copy, not a view)"""

    __slots__ = ()
    _name = "DiagonalBackward0_copy"
    is_view = False

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2):
        return Diagonal.forward(ctx, self, offset, dim1, dim2).copy()


class DiagonalScatter(Op):
    """d (zeros of shape with x on a diagonal) = diagonal(grad)"""

    __slots__ = ("offset", "dim1", "dim2")
    _name = "DiagonalBackwardBackward0"
    nattrs = 4

    @staticmethod
    def forward(ctx, self, shape, offset, dim1, dim2):
        if ctx is not None:
            ctx.offset, ctx.dim1, ctx.dim2 = offset, dim1, dim2
        out = np.zeros(shape, self.dtype, like=self)  # on self's device (no host fallback)
        _diagonal_view(out, offset, dim1, dim2)[...] = self
        return out

    def backward(ctx, grad):
        return Diagonal.apply(grad, ctx.offset, ctx.dim1, ctx.dim2)


class DiagEmbed(DiagonalScatter):
    """d diag_embed(x, offset, d1, d2) = diagonal(grad, offset, d1, d2)"""

    __slots__ = ()
    _name = "DiagEmbedBackward0"
    nattrs = 3

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2):
        n = self.ndim + 1
        d1, d2 = _dims2(n, dim1, dim2)
        size = (self.shape[-1] if self.ndim else 1) + abs(offset)
        rest = list(self.shape[:-1])
        shape = []
        for i in range(n):
            shape.append(size if i in (d1, d2) else rest.pop(0))
        return DiagonalScatter.forward(ctx, self.reshape(self.shape or (1,)), tuple(shape), offset, d1, d2)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal of (dim1, dim2), placed as the last dimension."""
    d1, d2 = _dims2(input._data.ndim, dim1, dim2)
    return Diagonal.apply(input, int(offset), d1, d2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices with the last dimension of ``input`` on their ``offset`` diagonal."""
    return DiagEmbed.apply(input, int(offset), dim1, dim2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-d: a matrix with ``input`` on a diagonal; 2-d: that diagonal as a 1-d copy."""
    n = input._data.ndim
    if n == 1:
        return DiagEmbed.apply(input, int(diagonal), 0, 1)
    if n == 2:
        return DiagCopy.apply(input, int(diagonal), 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    return DiagEmbed.apply(reshape(input, (-1,)), int(offset), 0, 1)


class Trace(Op):
    """d trace(x) = grad times the identity of x's shape"""

    __slots__ = ("shape",)
    jvp = linear

    @staticmethod
    def forward(ctx, self):
        if self.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        if self.dtype == np.bool_:
            raise NotImplementedError("\"trace\" not implemented for 'Bool'")
        if ctx is not None:
            ctx.shape = self.shape
        out = np.trace(self)
        return _B.asarray(out, np.int64 if self.dtype.kind in "biu" else self.dtype)

    def backward(ctx, grad):
        n = min(ctx.shape)
        return DiagonalScatter.apply(grad.expand(n), ctx.shape, 0, 0, 1)


def trace(input: Tensor) -> Tensor:
    return Trace.apply(input)


_args.install(globals(), __all__, out=("diag", "tril", "triu"))
