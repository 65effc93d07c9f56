"""Backward formulas of activations as single ops: one dispatch instead of three in every backward.

Each op is the derivative of a unary function written as a function of (grad, result), and has
its own differentiable backward, so ``create_graph=True`` still gives second derivatives.
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from ._op import Op
from .arithmetic import _mul, _sub

_nd = np.ndarray


def _same_dtype(g, r) -> bool:
    return type(g) is _nd and type(r) is _nd and g.dtype == r.dtype


def _tanh_grad(g, r):
    if _same_dtype(g, r):
        out = g * (1 - r * r)
        return out if type(out) is _nd else _B.asarray(out, g.dtype)  # 0-d operands give NumPy scalars
    return _mul(g, _sub(1, _mul(r, r)))


def _sigmoid_grad(g, r):
    if _same_dtype(g, r):
        out = g * (r * (1 - r))
        return out if type(out) is _nd else _B.asarray(out, g.dtype)
    return _mul(g, _mul(r, _sub(1, r)))


class TanhBackward(Op):
    """grad * (1 - output**2); d/dgrad_output = same formula, d/doutput = -2 * grad * grad_output * output"""

    __slots__ = ()
    _name = "TanhBackwardBackward0"
    inputs = ("grad_output", "output")
    save = ("grad_output", "output")
    holomorphic = True  # NOTE [holomorphic formulas]: a polynomial in (grad_output, output)
    forward = staticmethod(lambda ctx, grad_output, output: _tanh_grad(grad_output, output))

    def backward(ctx, grad):
        g, r = ctx.saved_tensors
        n0, n1 = ctx._next
        return (TanhBackward.apply(grad, r) if n0[0] is not None else None,
                grad * g * r * -2 if n1[0] is not None else None)


class SigmoidBackward(Op):
    """grad * output * (1 - output); d/dgrad_output = same formula, d/doutput = grad * grad_output * (1 - 2*output)"""

    __slots__ = ()
    _name = "SigmoidBackwardBackward0"
    inputs = ("grad_output", "output")
    save = ("grad_output", "output")
    holomorphic = True  # NOTE [holomorphic formulas]: a polynomial in (grad_output, output)
    forward = staticmethod(lambda ctx, grad_output, output: _sigmoid_grad(grad_output, output))

    def backward(ctx, grad):
        g, r = ctx.saved_tensors
        n0, n1 = ctx._next
        return (SigmoidBackward.apply(grad, r) if n0[0] is not None else None,
                grad * g * (1 - 2 * r) if n1[0] is not None else None)


tanh_backward = TanhBackward.apply
sigmoid_backward = SigmoidBackward.apply
