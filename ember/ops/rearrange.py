"""Copies that replicate or move elements: repeat/tile/repeat_interleave, flip/fliplr/flipud, roll, rot90."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap, _wrap_dim
from .. import _args
from ..autograd._interpose import data_shaped
from ._op import Op, linear
from .gather_scatter import index_select
from .shape import Clone, Expand, Unsqueeze, View, _dims_arg, _shape_args, flatten

__all__ = ["repeat", "tile", "repeat_interleave", "flip", "fliplr", "flipud", "roll", "rot90"]


class Repeat(Op):
    """d x.repeat(reps) = grad summed over the copies"""

    __slots__ = ("shape", "reps")
    jvp = linear
    nattrs = 1

    @staticmethod
    def forward(ctx, self, reps):
        if len(reps) < self.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                               "of tensor")
        if any(r < 0 for r in reps):
            target = [r * s for r, s in zip(reps, (1,) * (len(reps) - self.ndim) + self.shape)]
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(target)}: {target}")
        if ctx is not None:
            ctx.shape, ctx.reps = self.shape, reps
        return np.tile(self, reps)

    def backward(ctx, grad):
        lead = len(ctx.reps) - len(ctx.shape)
        shape = (1,) * lead + ctx.shape
        split = []
        for r, s in zip(ctx.reps, shape):
            split += [r, s]
        g = grad.reshape(split).sum(tuple(range(0, 2 * len(shape), 2)))
        return g.reshape(ctx.shape)


def repeat(input: Tensor, *sizes) -> Tensor:
    return Repeat.apply(input, tuple(int(r) for r in _shape_args(sizes)))


def tile(input: Tensor, dims) -> Tensor:
    dims = _shape_args((dims,))
    n = input._data.ndim
    return Repeat.apply(input, (1,) * (n - len(dims)) + dims)


def repeat_interleave(input: Tensor | None = None, repeats=None, dim: int | None = None, *,
                      output_size=None) -> Tensor:
    """Each element repeated ``repeats`` times along ``dim`` (flattened when ``dim`` is None);
    ``repeat_interleave(repeats)``: each index repeated by its count. ``output_size``, when given, must be the
    result's length along ``dim`` (torch's errors otherwise)."""
    if input is None:
        input, repeats = repeats, None
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        data_shaped("repeat_interleave")
        r = input._data
        return _wrap(_repeat_indices(np.arange(r.shape[0], like=_B.ref(r)), r, output_size), D.int64)
    x = flatten(input) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d] if x._data.ndim else 1
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != n * repeats:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * repeats} but got {output_size}")
        shape = x._data.shape
        y = Unsqueeze.apply(x, d + 1)
        y = Expand.apply(y, shape[:d + 1] + (repeats,) + shape[d + 1:])
        return View.apply(Clone.apply(y), shape[:d] + (shape[d] * repeats,) + shape[d + 1:])
    if isinstance(repeats, Tensor):
        data_shaped("repeat_interleave")
    r = repeats._data if isinstance(repeats, Tensor) else _B.asarray(repeats)
    if r.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if r.size == 1 and n != 1:  # one count for every element
        r = _B.full(n, r.reshape(()), like=_B.ref(r))
    if r.size != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{r.shape[0] if r.ndim else 1} and input.size({d}) = {n}")
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    r = r.reshape(-1)
    return index_select(x, d, _wrap(_repeat_indices(np.arange(n, like=_B.ref(x._data)), r, output_size), D.int64))


def _repeat_indices(index: np.ndarray, counts: np.ndarray, output_size) -> np.ndarray:
    if output_size is not None:
        if output_size < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {output_size}: [{output_size}]")
        if output_size != counts.sum():
            raise RuntimeError("allocated size does not match required size")
    return _B.repeat(index, counts)


class Flip(Op):
    """d flip(x, dims) = flip(grad, dims)"""

    __slots__ = ()
    jvp = linear
    attrs = ("dims",)

    @staticmethod
    def forward(ctx, self, dims):
        if self.ndim == 0:
            return self.copy()
        return np.flip(self, dims).copy()

    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims)


def _check_unique_dims(dims, n: int, what: str = "flip") -> tuple:
    out = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return out


def flip(input: Tensor, dims) -> Tensor:
    return Flip.apply(input, _check_unique_dims(_shape_args((dims,)), input._data.ndim))


def fliplr(input: Tensor) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return Flip.apply(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return Flip.apply(input, (0,))


class Roll(Op):
    """d roll(x, shifts, dims) = roll(grad, -shifts, dims)"""

    __slots__ = ()
    jvp = linear
    attrs = ("shifts", "dims")

    @staticmethod
    def forward(ctx, self, shifts, dims):
        if dims is None:
            return np.roll(self.reshape(-1), shifts).reshape(self.shape)
        return np.roll(self, shifts, dims)

    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims)


def roll(input: Tensor, shifts, dims=()) -> Tensor:
    """Elements shifted cyclically along ``dims`` (over the flattened tensor when none)."""
    shifts = _dims_arg(shifts)
    if dims is None or (isinstance(dims, (tuple, list)) and not dims):
        if len(shifts) != 1:
            raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is not provided, but got "
                               f"{len(shifts)}")
        return Roll.apply(input, shifts, None)
    dims = _dims_arg(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return Roll.apply(input, shifts, tuple(_wrap_dim(d, input._data.ndim) for d in dims))


class Rot90(Op):
    """d rot90(x, k, dims) = rot90(grad, -k, dims)"""

    __slots__ = ()
    jvp = linear
    attrs = ("k", "dims")

    @staticmethod
    def forward(ctx, self, k, dims):
        return np.rot90(self, k, dims).copy()

    def backward(ctx, grad):
        return Rot90.apply(grad, -ctx.k, ctx.dims)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    dims = tuple(dims)
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return Rot90.apply(input, k % 4, (d0, d1))


# NOTE [foreign errors] (ember/_malloc.py): functions that compute on arrays before (or instead of) an op
_translate_errors_of(globals(), ("repeat_interleave", "roll", "rot90", "tile"))
_args.install(globals(), "repeat_interleave tile flip fliplr flipud roll rot90".split())
