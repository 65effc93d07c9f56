"""Elementwise unary functions, declared as one table: forward ufunc + backward formula."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from ._op import Op
from . import _fused_backward as _fb

__all__ = ["exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "clamp", "clamp_min",
           "clamp_max", "clip", "sign", "reciprocal"]


def _floating(x):
    """Integer and bool inputs of float functions compute in the default float dtype."""
    if x.dtype.kind in "biu":
        return x.astype(D.get_default_dtype().np)
    return x


def _sigmoid(x):
    # torch's 1 / (1 + e**-x): exp overflowing to inf gives exactly 0 (as torch does) without a warning;
    # float16 computes in float32 as torch does
    x32 = x.astype(np.float32) if x.dtype == np.float16 else x
    with np.errstate(over="ignore"):
        out = 1 / (1 + np.exp(-x32))
    return out.astype(x.dtype, copy=False)


def _make_unary(name: str, fwd, bwd, save: tuple, float_only: bool = True, torch_name: str = ""):
    """An Op subclass for ``fwd`` (on arrays) whose backward is ``bwd(grad, *saved)``."""
    if float_only:
        def forward(ctx, self):
            return fwd(_floating(self))
    else:
        def forward(ctx, self):
            return fwd(self)

    def backward(ctx, grad):
        return bwd(grad, *ctx.saved_tensors)

    ns = {"__slots__": (), "save": save, "forward": staticmethod(forward), "backward": backward,
          "__doc__": f"elementwise {name}"}
    if torch_name:
        ns["_name"] = torch_name
    return type(name, (Op,), ns)


# name: (forward on arrays, backward(grad, *saved), saved)
_UNARY = {
    "Exp": (np.exp, lambda g, r: g * r, ("result",)),
    "Log": (np.log, lambda g, x: g / x, ("self",)),
    "Tanh": (np.tanh, _fb.tanh_backward, ("result",)),
    "Sigmoid": (_sigmoid, _fb.sigmoid_backward, ("result",)),
    "Sqrt": (np.sqrt, lambda g, r: g / (2 * r), ("result",)),
    "Reciprocal": (np.reciprocal, lambda g, r: -g * (r * r), ("result",)),
}
_OPS = {name: _make_unary(name, *spec) for name, spec in _UNARY.items()}
Exp, Log, Tanh, Sigmoid, Sqrt, Reciprocal = (_OPS[n] for n in ("Exp", "Log", "Tanh", "Sigmoid", "Sqrt", "Reciprocal"))


class Abs(Op):
    """d|x| = grad*sign(x)"""

    __slots__ = ()
    save = ("self",)
    forward = staticmethod(lambda ctx, self: np.abs(self))

    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * self.sign()


class Sign(Op):
    """d sign(x) = 0"""

    __slots__ = ()
    save = ("self",)
    forward = staticmethod(lambda ctx, self: np.sign(self) if self.dtype != np.bool_ else self.copy())

    def backward(ctx, grad):
        return grad * 0


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


class ThresholdBackward(Op):
    """relu's gradient where(result > 0, grad, 0) as an op of (grad, result), so that it stays in the
    graph of x as torch's does: d/dgrad = the same mask, d/dresult = 0"""

    __slots__ = ()
    save = ("other",)

    @staticmethod
    def forward(ctx, grad, result):
        return np.where(result > 0, grad, grad.dtype.type(0))

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


def exp(input):
    """Elementwise e**x."""
    return Exp.apply(input)


def log(input):
    """Elementwise natural logarithm."""
    return Log.apply(input)


def tanh(input):
    """Elementwise hyperbolic tangent."""
    return Tanh.apply(input)


def sigmoid(input):
    """Elementwise logistic function 1 / (1 + e**-x), stable for large |x|."""
    return Sigmoid.apply(input)


def sqrt(input):
    """Elementwise square root."""
    return Sqrt.apply(input)


def reciprocal(input):
    """Elementwise 1 / x (integers compute in the default float dtype)."""
    return Reciprocal.apply(input)


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
