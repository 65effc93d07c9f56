"""Indexing by a boolean mask: masked_fill, masked_select, masked_scatter (the mask broadcasts against the input)."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _dtype as D
from .. import _kernels
from .._tensor import Tensor
from ._op import Op
from ._op import const as _const
from .arithmetic import _broadcast_error
from .indexing import Index, IndexPutZeros, Where

__all__ = ["masked_fill", "masked_select", "masked_scatter"]


def _mask_array(mask, fname: str) -> np.ndarray:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{fname}(): argument 'mask' (position 1) must be Tensor, not {type(mask).__name__}")
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError(f"{fname}: expected BoolTensor for mask" if fname != "masked_fill_" else
                           f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{D.from_numpy_dtype(m.dtype).name}")
    return m


def _broadcast_with(a: np.ndarray, m: np.ndarray):
    try:
        return np.broadcast_shapes(a.shape, m.shape)
    except ValueError:
        raise _broadcast_error(m, a) from None


class MaskedFill(Op):
    """d masked_fill(x, mask, value) = grad with masked positions zeroed"""

    __slots__ = ("mask",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, mask, value):
        if ctx is not None:
            ctx.mask = mask
        shape = _broadcast_with(self, mask)
        if self.dtype.kind == "f" and not _B.is_array(value) or (
                _B.is_array(value) and value.dtype == self.dtype and value.ndim == 0):
            return _kernels.select(mask, value, self, self.dtype)  # NOTE [branch-free select]
        out = np.broadcast_to(self, shape).copy()
        out[np.broadcast_to(mask, shape)] = value
        return out

    def backward(ctx, grad):
        return MaskedFill.apply(grad, ctx.mask, 0)


class MaskedFillTensor(Op):
    """d masked_fill(x, mask, value tensor) = grad with masked positions zeroed, sum of grad there"""

    __slots__ = ("mask",)
    _name = "MaskedFillBackward1"
    nattrs = 1

    @staticmethod
    def forward(ctx, self, value, mask):
        return MaskedFill.forward(ctx, self, mask, value.astype(self.dtype) if value.dtype != self.dtype else value)

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = MaskedFill.apply(grad, ctx.mask, 0) if need[0] else None
        gv = Where.apply(grad, 0.0, _const(np.broadcast_to(ctx.mask, tuple(grad.shape)))).sum() \
            if need[1] else None
        return gs, gv


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``input`` with ``value`` (number or 0-d tensor) where ``mask`` is True (mask broadcasts)."""
    m = _mask_array(mask, "masked_fill_")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return MaskedFillTensor.apply(input, value, m)
    return MaskedFill.apply(input, m, D.scalar_into(value, input._dtype))


class MaskedSelect(Op):
    """d masked_select(x, mask) = grad put back at the mask into zeros (summed back by broadcasting)"""

    __slots__ = ("mask",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, mask):
        shape = _broadcast_with(self, mask)
        mb = np.broadcast_to(mask, shape)
        if ctx is not None:
            ctx.mask = mb
        return np.broadcast_to(self, shape)[mb]

    def backward(ctx, grad):
        return IndexPutZeros.apply(grad, (ctx.mask,), ctx.mask.shape)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where ``mask`` is True, as a 1-d tensor."""
    return MaskedSelect.apply(input, _mask_array(mask, "masked_select"))


class MaskedScatter(Op):
    """d masked_scatter(x, mask, src) = grad with mask zeroed, grad[mask] on src's first elements"""

    __slots__ = ("mask", "src_shape")
    nattrs = 1

    @staticmethod
    def forward(ctx, self, source, mask):
        try:
            mb = np.broadcast_to(mask, self.shape)
        except ValueError:
            raise _broadcast_error(self, mask) from None
        n = int(mb.sum())
        if source.size < n:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        if ctx is not None:
            ctx.mask, ctx.src_shape = mb, source.shape
        out = self.copy()
        out[mb] = source.reshape(-1)[:n]
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = MaskedFill.apply(grad, ctx.mask, 0) if need[0] else None
        gsrc = None
        if need[1]:
            size = int(np.prod(ctx.src_shape))
            picked = Index.apply(grad, (ctx.mask,))
            gsrc = IndexPutZeros.apply(picked, (np.arange(picked.shape[0]),), (size,)).reshape(ctx.src_shape)
        return gs, gsrc


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the masked positions filled, in order, from ``source``'s elements."""
    m = _mask_array(mask, "masked_scatter_")
    if source._dtype != input._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"  # (sic)
                           f"{input._dtype._scalar_name} and {source._dtype._scalar_name}")
    return MaskedScatter.apply(input, source, m)


_args.install(globals(), __all__, out=("masked_select",))
