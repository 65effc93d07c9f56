"""Backward formulas of activations as single ops: one dispatch instead of three in every backward.

Each op is the derivative of a unary function written as a function of (grad, result), and has
its own differentiable backward, so ``create_graph=True`` still gives second derivatives.
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .._fuse import formula
from ._op import Op
from .arithmetic import _mul, _sub

_nd = np.ndarray


def _same_dtype(g, r) -> bool:
    """Arrays of one device type and dtype: the formula runs on them (else the ops' promotion and device checks)."""
    return type(g) is type(r) and _B.is_array(g) and g.dtype == r.dtype


@formula("tanh_backward")
def _tanh_formula(xp, g, r):
    return g * (1 - r * r)


@formula("sigmoid_backward")
def _sigmoid_formula(xp, g, r):
    return g * (r * (1 - r))


def _raw(fused, slow):
    """``fused(g, r)`` on arrays of one dtype and device, one kernel on a GPU (NOTE [fused formulas] in
    ember/_fuse.py); ``slow`` otherwise."""
    def run(g, r):
        if _same_dtype(g, r):
            out = fused(g, r)
            return out if type(out) is type(g) else _B.asarray(out, g.dtype)  # 0-d operands give NumPy scalars
        return slow(g, r)
    return run


_tanh_grad = _raw(_tanh_formula, lambda g, r: _mul(g, _sub(1, _mul(r, r))))
_sigmoid_grad = _raw(_sigmoid_formula, lambda g, r: _mul(g, _mul(r, _sub(1, r))))


def _output_formula(name: str, formula, d_output, doc: str) -> type:
    """The op ``formula(grad_output, output)``: a unary function's derivative written in its output. Its backward
    is the same op for grad_output (the formula is linear in it) and ``d_output(grad, grad_output, output)`` for
    output."""
    def backward(ctx, grad):
        g, r = ctx.saved_tensors
        need = ctx.needs_input_grad
        return cls.apply(grad, r) if need[0] else None, d_output(grad, g, r) if need[1] else None

    cls = type(name, (Op,), {
        "__slots__": (), "__doc__": doc, "__module__": __name__, "_name": name + "Backward0",
        "inputs": ("grad_output", "output"), "save": ("grad_output", "output"),
        "holomorphic": True,  # NOTE [holomorphic formulas]: a polynomial in (grad_output, output)
        "forward": staticmethod(lambda ctx, grad_output, output: formula(grad_output, output)), "backward": backward})
    return cls


TanhBackward = _output_formula(
    "TanhBackward", _tanh_grad, lambda grad, g, r: grad * g * r * -2,
    "grad * (1 - output**2); d/dgrad_output = same formula, d/doutput = -2 * grad * grad_output * output")
SigmoidBackward = _output_formula(
    "SigmoidBackward", _sigmoid_grad, lambda grad, g, r: grad * g * (1 - 2 * r),
    "grad * output * (1 - output); d/dgrad_output = same formula, d/doutput = grad * grad_output * (1 - 2*output)")


tanh_backward = TanhBackward.apply
sigmoid_backward = SigmoidBackward.apply
