"""Layer, batch and group normalization, one node each (torch's NativeLayerNormBackward0,
NativeBatchNormBackward0 and NativeGroupNormBackward0).

# NOTE [fused norms]
The three norms normalise ``x`` viewed in a layout where the statistics run over some axes and the affine
parameters broadcast along others:

    layer norm   x as (R, M)            statistics over (1,)      weight, bias (M,) as (1, M)
    group norm   x as (N, G, C/G, S)    statistics over (2, 3)    weight, bias (C,) as (1, G, C/G, 1)
    batch norm   x as (N, C, S)         statistics over (0, 2)    weight, bias (C,) as (1, C, 1)

(batch norm in eval mode uses the running statistics instead). ``Norm`` computes
``out = (x - mean) * rstd * weight + bias`` in one pass of NumPy kernels, in place where nothing else sees the
intermediate values, float16 in float32 (as torch), and returns ``(out, mean, var)``: the batch statistics the
caller needs for running averages come out as outputs without gradients, like those of torch's native_* ops.
Its backward, with ``xhat = (x - mean) * rstd`` and ``g' = grad * weight``:

    d bias = sum(grad), d weight = sum(grad * xhat)             over the axes the parameters broadcast along
    d x = rstd * (g' - mean(g') - xhat * mean(g' * xhat))       over the statistics axes (batch statistics)
    d x = rstd * g'                                             (running statistics: constants)

Without a graph it runs on arrays with the saved statistics (NOTE [raw backward]); under create_graph it is the
same formula in ember ops with the statistics recomputed from the input, so that second derivatives are exact.
The functional forms (nn/functional.py) keep the composition of ember ops for what this op does not cover
(forward-AD / vmap levels, empty or integer inputs, parameters of another dtype).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend as _B
from .._fuse import formula
from .._kernels import fsum, rowdot
from .._tensor import _wrap
from ..autograd._interpose import fused_ok, replayable
from ..autograd.grad_mode import _mode
from ._op import Op

__all__ = ["NativeLayerNorm", "NativeBatchNorm", "NativeGroupNorm"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)
_F32 = np.dtype(np.float32)


def _acc(a: np.ndarray) -> np.ndarray:
    """``a`` in the accumulation dtype: 16-bit floats compute in float32, as torch's kernels."""
    return a.astype(_F32) if a.dtype.itemsize == 2 else a


def _kept(layout: tuple, axes: tuple) -> tuple:
    return tuple(1 if i in axes else n for i, n in enumerate(layout))


class Norm(Op):
    """d norm(x, w, b): see NOTE [fused norms] in ember/ops/norms.py"""

    __slots__ = ("geo", "mean", "rstd")
    _abstract = True
    nattrs = 5
    inputs = ("input", "weight", "bias")
    save = ("input", "weight")
    differentiable_outputs = (0,)

    @staticmethod
    def forward(ctx, input, weight, bias, layout, axes, wshape, eps, running):
        x = _acc(input.reshape(layout))
        if running is None:
            n = math.prod(layout[a] for a in axes)
            mean = fsum(x, axes, True)
            mean /= n
            xc = x - mean
            var = rowdot(xc, xc, axes, True)
            var /= n
        else:
            mean = _acc(running[0]).reshape(wshape)
            var = _acc(running[1]).reshape(wshape)
            xc = x - mean
        rstd = var + eps
        np.sqrt(rstd, out=rstd)
        np.reciprocal(rstd, out=rstd)
        out = np.multiply(xc, rstd, out=xc)
        if weight is not None:
            np.multiply(out, weight.reshape(wshape), out=out)
        if bias is not None:
            np.add(out, bias.reshape(wshape), out=out)
        if ctx is not None:
            pshape = weight.shape if weight is not None else bias.shape if bias is not None else None
            ctx.geo = (layout, axes, wshape, eps, running is None, pshape)
            ctx.mean, ctx.rstd = mean, rstd
        dt = input.dtype
        out = out.reshape(input.shape)
        if out.dtype != dt:
            out, mean, var = out.astype(dt), mean.astype(dt), var.astype(dt)
        return out, mean, var

    def backward(ctx, grad, *stats_grads):  # (the statistics outputs carry no gradient)
        if grad is None:
            return None, None, None
        x, w = ctx.saved_tensors
        need = tuple(e[0] is not None for e in ctx._next)
        if (not _mode.grad_enabled and fused_ok() and _B.is_array(grad._data)
                and not grad._dtype._reduced):  # (16-bit floats: the ops, NOTE [reduced precision]; any device)
            return _raw_backward(ctx, grad, x, w, need)  # NOTE [raw backward]
        return _graph_backward(ctx, grad, x, w, need)


def _param_axes(wshape: tuple) -> tuple:
    return tuple(i for i, n in enumerate(wshape) if n == 1)


@replayable  # on arrays: one step of compiled programs (NOTE [fused nodes under levels])
def _raw_backward(ctx, grad, x, w, need):
    layout, axes, wshape, eps, batch_stats, pshape = ctx.geo
    g = _acc(grad._data.reshape(layout))
    paxes = _param_axes(wshape)
    if batch_stats and paxes == axes:
        return _raw_backward_channels(ctx, g, x, w, need)
    xhat = _acc(x._data.reshape(layout)) - ctx.mean
    np.multiply(xhat, ctx.rstd, out=xhat)
    gx = gw = gb = None
    dt = grad._data.dtype  # (parameters have the input's dtype: the functional forms see to it)
    if need[1]:
        gw = _wrap(rowdot(g, xhat, paxes).reshape(pshape).astype(dt, copy=False), grad._dtype)
    if need[2]:
        gb = _wrap(fsum(g, paxes).reshape(pshape).astype(dt, copy=False), grad._dtype)
    if need[0]:
        gxh = g * w._data.reshape(wshape) if w is not None else g.copy()
        if batch_stats:
            n = math.prod(layout[a] for a in axes)
            a = fsum(gxh, axes, True)
            a /= n
            b = rowdot(gxh, xhat, axes, True)
            b /= n
            _norm_dx(gxh, xhat, a, b, ctx.rstd)
        else:
            np.multiply(gxh, ctx.rstd, out=gxh)
        gx = _wrap(gxh.reshape(x.shape).astype(x._data.dtype, copy=False), x._dtype)
    return gx, gw, gb


@formula("norm_backward_dx")
def _norm_dx(xp, gxh, xhat, a, b, rstd):
    """The input gradient's elementwise tail, in place in ``gxh``: (gxh - xhat b - a) rstd (one kernel on a GPU:
    NOTE [fused formulas] in ember/_fuse.py)."""
    xhat *= b
    gxh -= xhat
    gxh -= a
    gxh *= rstd


def _raw_backward_channels(ctx, g, x, w, need):
    """The raw backward of batch statistics shared by every element a parameter scales (batch norm): the input's
    gradient reuses the parameters' sums, mean(g w) = w sum(g) / n and mean(g w xhat) = w sum(g xhat) / n, so
    d x = A g - xc (A rstd^2 sum(g xc) / n) - A sum(g) / n with A = w rstd per channel (7 passes over the input's
    size instead of 11)."""
    layout, axes, wshape, eps, _, pshape = ctx.geo
    dt = g.dtype
    n = math.prod(layout[a] for a in axes)
    rstd = ctx.rstd
    xc = _acc(x._data.reshape(layout)) - ctx.mean
    sgx = rowdot(g, xc, axes, True)   # sum(g * xc), = sum(g * xhat) / rstd
    sg = fsum(g, axes, True)          # sum(g)
    gx = gw = gb = None
    odt = x._data.dtype
    if need[1]:
        gw = _wrap((sgx * rstd).reshape(pshape).astype(odt, copy=False), x._dtype)
    if need[2]:
        gb = _wrap(sg.reshape(pshape).astype(odt, copy=False), x._dtype)
    if need[0]:
        a = rstd if w is None else rstd * _acc(w._data).reshape(wshape)
        out = np.multiply(g, a, dtype=dt)
        np.multiply(xc, a * (rstd * rstd) * sgx / n, out=xc)
        np.subtract(out, xc, out=out)
        np.subtract(out, a * sg / n, out=out)
        gx = _wrap(out.reshape(x.shape).astype(odt, copy=False), x._dtype)
    return gx, gw, gb


def _graph_backward(ctx, grad, x, w, need):
    layout, axes, wshape, eps, batch_stats, pshape = ctx.geo
    xt = x.reshape(layout)
    g = grad.reshape(layout)
    if batch_stats:
        xc = xt - xt.mean(axes, keepdim=True)
        rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    else:
        dt = x._dtype
        xc = xt - _wrap(ctx.mean.astype(dt.np), dt)
        rstd = _wrap(ctx.rstd.astype(dt.np), dt)
    xhat = xc * rstd
    gx = gw = gb = None
    paxes = _param_axes(wshape)
    if need[1]:
        gw = (g * xhat).sum(paxes).reshape(pshape)
    if need[2]:
        gb = g.sum(paxes).reshape(pshape)
    if need[0]:
        gxh = g * w.reshape(wshape) if w is not None else g
        if batch_stats:
            gxh = gxh - gxh.mean(axes, keepdim=True) - xhat * (gxh * xhat).mean(axes, keepdim=True)
        gx = (gxh * rstd).reshape(x.shape)
    return gx, gw, gb


class NativeLayerNorm(Norm):
    __slots__ = ()


class NativeBatchNorm(Norm):
    __slots__ = ()


class NativeGroupNorm(Norm):
    __slots__ = ()


def norm_layout(kind: str, shape: tuple, m_or_groups: int) -> tuple:
    """(layout, statistics axes, parameter shape) of a norm of an input of ``shape`` (NOTE [fused norms]):
    ``kind`` "layer" (``m_or_groups``: elements per row), "group" (the number of groups) or "batch"."""
    if kind == "layer":
        m = m_or_groups
        return (math.prod(shape) // m if m else 0, m), (1,), (1, m)
    n, c, s = shape[0], shape[1], math.prod(shape[2:])
    if kind == "group":
        g = m_or_groups
        return (n, g, c // g, s), (2, 3), (1, g, c // g, 1)
    return (n, c, s), (0, 2), (1, c, 1)
