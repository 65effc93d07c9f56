"""abs, sign, relu and clamp: the hand-written elementwise ops with kinks (exp, log, tanh, sigmoid, sqrt and
reciprocal are entries of the table in ops/elementwise.py)."""
from __future__ import annotations

import numpy as np

from .. import _args
from ._op import Op
from .elementwise import _floating, _zeros

__all__ = ["relu", "abs", "absolute", "clamp", "clamp_min", "clamp_max", "clip", "sign"]


class Abs(Op):
    """d|x| = grad*sign(x)"""

    __slots__ = ()
    save = ("self",)
    forward = staticmethod(lambda ctx, self: np.abs(self))

    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * self.sign()

    @staticmethod
    def jvp(args, out, tangents):
        return tangents[0] * args[0].sign()


class Sign(Op):
    """d sign(x) = 0 (zeros, not grad * 0: an inf or nan incoming gradient still gives zero, as torch)"""

    __slots__ = ()
    save = ("self",)
    forward = staticmethod(lambda ctx, self: np.sign(self) if self.dtype != np.bool_ else self.copy())

    def backward(ctx, grad):
        return _zeros(grad)


class Relu(Op):
    """d relu(x) = grad where result > 0"""

    __slots__ = ()
    save = ("result",)

    @staticmethod
    def forward(ctx, self):
        if self.dtype == np.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        return np.maximum(self, self.dtype.type(0))

    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return ThresholdBackward.apply(grad, result)

    @staticmethod
    def jvp(args, out, tangents):
        return ThresholdBackward.apply(tangents[0], out)


# same-size unsigned integer of each float width: the bits of a float masked to all-zero are +0.0
_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _keep_where_positive(grad: np.ndarray, result: np.ndarray) -> np.ndarray:
    """``where(result > 0, grad, 0)``, bit for bit (inf and nan masked to +0.0), as an AND with a mask
    of all-one bits: NumPy's where branches on each element, ~5x slower on an unpredictable mask."""
    u = _BITS.get(grad.dtype.itemsize)
    if u is None or grad.dtype.kind != "f" or grad.shape != result.shape:
        return np.where(result > 0, grad, grad.dtype.type(0))
    out = np.empty(grad.shape, grad.dtype)
    bits = out.view(u)
    np.subtract(u(0), np.greater(result, 0), out=bits, dtype=u)  # True -> 0 - 1 = all ones
    np.bitwise_and(bits, grad.view(u), out=bits)
    return out


class ThresholdBackward(Op):
    """relu's gradient where(result > 0, grad, 0) as an op of (grad, result), so that it stays in the
    graph of x as torch's does: d/dgrad = the same mask, d/dresult = 0"""

    __slots__ = ()
    save = ("other",)

    @staticmethod
    def forward(ctx, grad, result):
        return _keep_where_positive(grad, result)

    def backward(ctx, gg):
        (result,) = ctx.saved_tensors
        from .._tensor import _wrap

        return ThresholdBackward.apply(gg, result), _wrap(np.zeros(result.shape, result._data.dtype), result.dtype)


class Clamp(Op):
    """d clamp(x, min, max) = grad where min <= x <= max"""

    __slots__ = ("min", "max")
    _name = "ClampBackward1"
    save = ("self",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, lo, hi):
        if ctx is not None:
            ctx.min, ctx.max = lo, hi
        dt = self.dtype
        if dt.kind in "iub" and (isinstance(lo, float) or isinstance(hi, float)):
            self = _floating(self)
            dt = self.dtype
        out = self
        if lo is not None:
            out = np.maximum(out, lo, dtype=dt) if not isinstance(lo, np.ndarray) else np.maximum(out, lo)
        if hi is not None:
            out = np.minimum(out, hi, dtype=dt) if not isinstance(hi, np.ndarray) else np.minimum(out, hi)
        if (lo is not None and hi is not None and not isinstance(lo, np.ndarray) and not isinstance(hi, np.ndarray)
                and lo > hi):
            out = np.full_like(out, hi)
        return out.astype(dt, copy=False) if out is not self else out.copy()

    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        mask = None
        if ctx.min is not None:
            mask = self >= ctx.min
        if ctx.max is not None:
            m = self <= ctx.max
            mask = m if mask is None else mask & m
        from .indexing import where

        return where(mask, grad, 0.0)  # not grad * mask: an inf grad where clamped still gives 0


class ClampMin(Clamp):
    __slots__ = ()
    _name = "ClampMinBackward0"


class ClampMax(Clamp):
    __slots__ = ()
    _name = "ClampMaxBackward0"


def abs(input):  # noqa: A001 - torch's name
    return Abs.apply(input)


absolute = abs


def sign(input):
    return Sign.apply(input)


def relu(input):
    """Elementwise max(x, 0)."""
    return Relu.apply(input)


def _bound(v):
    from .._tensor import Tensor

    if isinstance(v, Tensor):
        return v._data
    return v


def clamp(input, min=None, max=None):  # noqa: A002 - torch's names
    """Elementwise clamp into [min, max]; either bound may be None."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return Clamp.apply(input, _bound(min), _bound(max))


clip = clamp


def clamp_min(input, min):  # noqa: A002
    return ClampMin.apply(input, _bound(min), None)


def clamp_max(input, max):  # noqa: A002
    return ClampMax.apply(input, None, _bound(max))


_args.install(globals(), __all__, out=("abs", "absolute", "clamp", "clip", "clamp_min", "clamp_max", "sign"))
