"""Convolution and its transpose (any number of spatial dims, groups, dilation), im2col / col2im.

A convolution ``y = conv(x, w)`` is bilinear, and its three array kernels close under differentiation:
``_conv`` (forward), ``_conv_t`` (the adjoint in x: the transposed convolution) and ``_conv_w`` (the
adjoint in w). ``Convolution`` (torch's ``ConvolutionBackward0``) runs ``_conv`` or, transposed, ``_conv_t``;
its backward is again ``Convolution`` (with the other flag) plus ``ConvolutionBackwardBackward0`` for the
weight, whose own backward is made of ``Convolution`` again, so every order of derivative stays in ember ops.
The kernels are written once for n spatial dims. All work is im2col through a strided view plus one batched
GEMM; col2im loops over kernel offsets only.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _backend as _B
from .._tensor import Tensor
from ._op import Op

__all__ = ["convolution", "im2col", "col2im"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)
_matmul = np.matmul


def _out_len(n: int, k: int, s: int, p: int, d: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _windows(xp: np.ndarray, k: tuple, s: tuple, d: tuple, out: tuple) -> np.ndarray:
    """Read-only view (N, C, *k, *out) of the windows of padded ``xp`` (N, C, *spatial)."""
    st = xp.strides
    return _B.as_strided(xp, xp.shape[:2] + tuple(k) + tuple(out),
                         st[:2] + tuple(st[2 + i] * d[i] for i in range(len(k)))
                         + tuple(st[2 + i] * s[i] for i in range(len(k))))


def _pad(x: np.ndarray, p: tuple, extra: tuple | None = None, value=0) -> np.ndarray:
    """``x`` (N, C, *spatial) with ``p[i]`` cells of ``value`` on both sides of spatial axis i (+ ``extra[i]``
    after)."""
    extra = extra or (0,) * len(p)
    if not any(p) and not any(extra):
        return x
    out = _B.full(x.shape[:-len(p)] + tuple(n + 2 * a + e for n, a, e in zip(x.shape[-len(p):], p, extra)),
                   value, x.dtype, like=x)
    out[(...,) + tuple(slice(a, a + n) for n, a in zip(x.shape[-len(p):], p))] = x
    return out


def _strided(k: tuple, s: tuple, d: tuple, out: tuple):
    """For each kernel offset: the slices of a padded map that the windows read at that offset."""
    ext = tuple(s[i] * (out[i] - 1) + 1 for i in range(len(k)))
    for off in itertools.product(*(range(n) for n in k)):
        yield (...,) + tuple(slice(o * d[i], o * d[i] + ext[i], s[i]) for i, o in enumerate(off))


def _cols(x: np.ndarray, k, s, p, d, out) -> np.ndarray:
    """im2col: (N, C*prod(k), prod(out)), channel-major then kernel offsets (torch's unfold layout)."""
    n, c = x.shape[:2]
    return _windows(_pad(x, p), k, s, d, out).reshape(n, c * math.prod(k), math.prod(out))


def _col2im(cols: np.ndarray, size: tuple, k, s, p, d, out) -> np.ndarray:
    """Sum columns (N, C*prod(k), prod(out)) back into an (N, C, *size) map (the adjoint of ``_cols``)."""
    n, nd = cols.shape[0], len(k)
    c = cols.shape[1] // math.prod(k)
    cols = cols.reshape((n, c, math.prod(k)) + tuple(out))
    ext = tuple(max(size[i] + 2 * p[i], (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1) for i in range(nd))
    buf = np.zeros((n, c) + ext, cols.dtype, like=cols)
    for t, sl in enumerate(_strided(k, s, d, out)):
        part = buf[sl]
        np.add(part, cols[:, :, t], out=part)  # (not ``buf[sl] +=``: see _col2im_wide)
    return _B.ascontiguousarray(buf[(...,) + tuple(slice(p[i], p[i] + size[i]) for i in range(nd))])


# NOTE [wide columns]: for stride 1 a kernel offset of every output position is one contiguous run of the
# flattened padded map: output (r, q) of a 2-d map reads flat[(r + i*d0)*Wp + q + j*d1], and in n-d the trailing
# axes nest the same way. Columns built over the full padded extent of every axis but the first (Wp - ow junk
# columns per row in 2-d) make im2col one long copy per offset and col2im one long add per offset; the junk
# columns are dropped after the GEMM (forward) or are zero (adjoints). The transposed convolution (the input
# gradient) lays the whole batch out channel-first, (C, N * prod(P)) with the samples one after another, so that
# one GEMM serves every sample and each offset's add is one run over the batch (1.3-1.4x faster than a GEMM and
# an add per sample for (32, 16, 32, 32) by 3x3 and (32, 8, 28, 28) by 3x3, the kernels alone); the forward
# and the weight gradient measure no faster that way and keep a GEMM per sample, except where all the columns would
# pass _TILE_ABOVE floats: there they are built and consumed chunk by chunk in the channel-major layout (about
# L2-sized chunks; 2.2x faster forward and 1.4x weight gradient for (32, 16, 32, 32) by 3x3, whose 20 MB of
# columns would stream through memory twice).
_TILE_ABOVE = 1 << 21  # floats of wide columns beyond which they are built chunk by chunk
_CHUNK = 1 << 18       # floats of one chunk
_MIN_STEP = 256        # positions of one chunk, at least


def _wide_cols(x, k, p, d, out):
    """im2col for stride 1 over the padded trailing extents: ((N, C*prod(k), out0*prod(P[1:])), P[1:])."""
    n, c, nd = x.shape[0], x.shape[1], len(k)
    padded = tuple(x.shape[2 + i] + 2 * p[i] for i in range(nd))
    # one spare slab along the first axis: the last offsets run past the map
    buf = np.zeros((n, c, padded[0] + 1) + padded[1:], x.dtype, like=x)
    buf[(...,) + tuple(slice(p[i], p[i] + x.shape[2 + i]) for i in range(nd))] = x
    it = buf.itemsize
    run = out[0] * math.prod(padded[1:])
    steps = tuple(d[i] * math.prod(padded[i + 1:]) * it for i in range(nd))
    view = _B.as_strided(buf, (n, c) + tuple(k) + (run,), buf.strides[:2] + steps + (it,))
    return view.reshape(n, c * math.prod(k), run), padded[1:]


def _widen(g, trail):
    """(N, O, *out) zero-padded at the end of the trailing axes to ``trail``, flattened: (N, O, out0*prod(trail))."""
    flat = g.shape[:2] + (g.shape[2] * math.prod(trail),)
    if tuple(g.shape[3:]) == tuple(trail):
        return g.reshape(flat)
    out = np.zeros(g.shape[:3] + tuple(trail), g.dtype, like=g)
    out[(...,) + tuple(slice(0, n) for n in g.shape[3:])] = g
    return out.reshape(flat)


def _wide_offsets(ext: tuple, k, d) -> list:
    """The flat offset of each kernel position in a map of padded extents ``ext``."""
    steps = tuple(d[i] * math.prod(ext[i + 1:]) for i in range(len(k)))
    return [sum(a * b for a, b in zip(off, steps)) for off in itertools.product(*(range(m) for m in k))]


def _batch_widen(g, ext):
    """g (N, O, *out) as channel-major wide rows (O, N * prod(ext)), zero outside each sample's outputs."""
    n, o = g.shape[:2]
    wide = np.zeros((o, n) + tuple(ext), g.dtype, like=g)
    wide[(...,) + tuple(slice(0, m) for m in g.shape[2:])] = g.swapaxes(0, 1)
    return wide.reshape(o, -1)


def _chunked_cols(x, k, p, d, ext):
    """Channel-major wide columns of x (N, C, *size) padded by p to extents ``ext``, chunk by chunk: yields
    (start, stop, columns (C * prod(k), stop - start)) over the N * prod(ext) positions (the buffer is reused)."""
    n, c, size = x.shape[0], x.shape[1], x.shape[2:]
    offs = _wide_offsets(ext, k, d)
    m = n * math.prod(ext)
    buf = np.zeros((c, m + offs[-1]), x.dtype, like=x)  # the spare tail: the last offsets read past the batch
    buf[:, :m].reshape((c, n) + ext)[(...,) + tuple(slice(p[i], p[i] + size[i]) for i in range(len(k)))] = \
        x.swapaxes(0, 1)
    step = max(_MIN_STEP, _CHUNK // (c * len(offs)))
    cols = np.empty((c, len(offs), step), x.dtype, like=x)
    for a in range(0, m, step):
        b = min(m, a + step)
        part = cols if b - a == step else np.empty((c, len(offs), b - a), x.dtype, like=x)
        for t, off in enumerate(offs):
            part[:, t] = buf[:, a + off:b + off]
        yield a, b, part.reshape(-1, b - a)


def _conv(x, w, s, p, d, groups):
    n, nd = x.shape[0], x.ndim - 2
    o, cg, k = w.shape[0], w.shape[1], w.shape[2:]
    out = tuple(_out_len(x.shape[2 + i], k[i], s[i], p[i], d[i]) for i in range(nd))
    kk = cg * math.prod(k)
    if groups == 1 and all(v == 1 for v in s):  # NOTE [wide columns]
        ext = tuple(x.shape[2 + i] + 2 * p[i] for i in range(nd))
        if kk * n * math.prod(ext) > _TILE_ABOVE:
            wm = w.reshape(o, kk)
            y = np.empty((o, n * math.prod(ext)), x.dtype, like=x)
            for a, b, cols in _chunked_cols(x, k, p, d, ext):
                _matmul(wm, cols, out=y[:, a:b])
            y = y.reshape((o, n) + ext)[(...,) + tuple(slice(0, m) for m in out)]
            return _B.ascontiguousarray(y.swapaxes(0, 1))
        cols, trail = _wide_cols(x, k, p, d, out)
        y = np.matmul(w.reshape(o, kk), cols).reshape((n, o, out[0]) + trail)
        return _B.ascontiguousarray(y[(...,) + tuple(slice(0, m) for m in out[1:])])
    cols = _cols(x, k, s, p, d, out)
    if groups == 1:
        return np.matmul(w.reshape(o, kk), cols).reshape((n, o) + out)
    cols = cols.reshape(n, groups, kk, math.prod(out))
    y = np.matmul(w.reshape(groups, o // groups, kk), cols)
    return y.reshape((n, o) + out)


def _conv_t(g, w, s, p, d, groups, opad):
    """The transposed convolution: the adjoint of ``_conv`` in its input, with ``opad`` extra cells per axis."""
    n, o, out = g.shape[0], g.shape[1], g.shape[2:]
    cg, k = w.shape[1], w.shape[2:]
    size = tuple((out[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1 + opad[i] for i in range(len(k)))
    if groups == 1 and all(v == 1 for v in s):  # NOTE [wide columns]
        return _col2im_wide(g, w, size, k, p, d)
    kk, m = cg * math.prod(k), math.prod(out)
    if groups == 1:
        cols = np.matmul(w.reshape(o, kk).T, g.reshape(n, o, m))
    else:
        wt = w.reshape(groups, o // groups, kk).transpose(0, 2, 1)
        cols = np.matmul(wt, g.reshape(n, groups, o // groups, m))
    return _col2im(cols.reshape(n, groups * kk, m), size, k, s, p, d, out)


def _col2im_wide(g, w, size, k, p, d):
    """Stride-1, one-group transposed convolution through channel-major wide columns (NOTE [wide columns])."""
    n, o, out, nd = g.shape[0], g.shape[1], g.shape[2:], len(k)
    c = w.shape[1]
    ext = tuple(max(size[i] + 2 * p[i], out[i] + d[i] * (k[i] - 1)) for i in range(nd))
    wide = _batch_widen(g, ext)
    rows, offs = wide.shape[1], _wide_offsets(ext, k, d)
    cols = _matmul(w.reshape(o, -1).T, wide).reshape(c, len(offs), rows)
    buf = np.zeros((c, rows + offs[-1]), g.dtype, like=g)  # the spare tail: the last offsets run past the batch
    for t, off in enumerate(offs):
        part = buf[:, off:off + rows]
        np.add(part, cols[:, t], out=part)  # (``buf[...] +=`` would write the sum back onto itself: a copy kernel)
    img = buf[:, :rows].reshape((c, n) + ext)[(...,) + tuple(slice(p[i], p[i] + size[i]) for i in range(nd))]
    return _B.ascontiguousarray(img.swapaxes(0, 1))


def _conv_w(x, g, s, p, d, groups, k):
    """The adjoint of ``_conv`` in its weight: (O, C/groups, *k) from input x and output-gradient g."""
    n, c = x.shape[:2]
    o, out = g.shape[1], g.shape[2:]
    if groups == 1 and all(v == 1 for v in s):  # NOTE [wide columns]
        ext = tuple(x.shape[2 + i] + 2 * p[i] for i in range(len(k)))
        kk = c * math.prod(k)
        if kk * n * math.prod(ext) > _TILE_ABOVE:
            wide = _batch_widen(g, ext)
            gw, part = np.zeros((o, kk), g.dtype, like=g), np.empty((o, kk), g.dtype, like=g)
            for a, b, cols in _chunked_cols(x, k, p, d, ext):
                gw += _matmul(wide[:, a:b], cols.T, out=part)
            return gw.reshape((o, c) + tuple(k))
        cols, trail = _wide_cols(x, k, p, d, out)
        gw = np.matmul(_widen(g, trail), cols.transpose(0, 2, 1)).sum(0)
        return gw.reshape((o, c) + tuple(k))
    kk, m = (c // groups) * math.prod(k), math.prod(out)
    cols = _cols(x, k, s, p, d, out).reshape(n, groups, kk, m)
    gm = g.reshape(n, groups, o // groups, m)
    gw = np.matmul(gm, cols.transpose(0, 1, 3, 2)).sum(0)  # N small GEMMs, then the batch sum
    return gw.reshape((o, c // groups) + tuple(k))


def _opad_for(size, out, k, s, p, d):
    """Output padding that makes the transposed convolution of an ``out``-sized map ``size`` long."""
    return tuple(size[i] - ((out[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1) for i in range(len(size)))


def _crop(t: Tensor, shape) -> Tensor:
    """``t`` cut to the spatial ``shape``: the convolution of a transposed convolution's output has
    ``output_padding // stride`` extra trailing positions (output_padding may reach the dilation), which
    no input position produced."""
    if t.shape[2:] == shape[2:]:
        return t
    return t[(slice(None), slice(None)) + tuple(slice(0, n) for n in shape[2:])]


class Convolution(Op):
    """d conv(x, w) + b: x <- conv_t(grad, w), w <- conv_w(x, grad), b <- grad summed; transposed alike"""

    __slots__ = ("geo",)
    nattrs = 6
    inputs = ("input", "weight", "bias")
    save = ("input", "weight")
    holomorphic = True  # bilinear: NOTE [holomorphic formulas]

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
        if ctx is not None:
            ctx.geo = (stride, padding, dilation, transposed, output_padding, groups)
        if transposed:
            y = _conv_t(input, weight, stride, padding, dilation, groups, output_padding)
        else:
            y = _conv(input, weight, stride, padding, dilation, groups)
        if bias is not None:
            y += bias.reshape((-1,) + (1,) * (y.ndim - 2))
        return y

    @staticmethod
    def jvp(args, out, tangents):  # bilinear in (input, weight), plus the bias's tangent on every position
        x, w, b, *geo = args
        tx, tw, tb = tangents
        total = None if tx is None else Convolution.apply(tx, w, None, *geo)
        if tw is not None:
            term = Convolution.apply(x, tw, None, *geo)
            total = term if total is None else total + term
        if tb is not None:
            term = tb.reshape((-1,) + (1,) * (out.ndim - 2))
            total = term if total is None else total + term
        return total

    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        s, p, d, transposed, opad, groups = ctx.geo
        gx = gw = gb = None
        need = ctx.needs_input_grad
        if transposed:
            if need[0]:
                gx = _crop(Convolution.apply(grad, w, None, s, p, d, False, (0,) * len(s), groups), x.shape)
            if need[1]:
                gw = ConvolutionBackwardBackward.apply(grad, x, s, p, d, groups, tuple(w.shape[2:]))
        else:
            if need[0]:
                op = _opad_for(x.shape[2:], grad.shape[2:], w.shape[2:], s, p, d)
                gx = Convolution.apply(grad, w, None, s, p, d, True, op, groups)
            if need[1]:
                gw = ConvolutionBackwardBackward.apply(x, grad, s, p, d, groups, tuple(w.shape[2:]))
        if need[2]:
            gb = grad.sum((0,) + tuple(range(2, grad.dim())))
        return gx, gw, gb


class ConvolutionBackwardBackward(Op):
    """The weight gradient conv_w(x, g) as an op: d/dx = conv_t(g, H), d/dg = conv(x, H) for upstream H"""

    __slots__ = ("geo",)
    _name = "ConvolutionBackwardBackward0"
    nattrs = 5
    inputs = ("input", "grad")
    save = ("input", "grad")
    holomorphic = True  # bilinear: NOTE [holomorphic formulas]

    @staticmethod
    def forward(ctx, input, grad, stride, padding, dilation, groups, ksize):
        if ctx is not None:
            ctx.geo = (stride, padding, dilation, groups)
        return _conv_w(input, grad, stride, padding, dilation, groups, ksize)

    def backward(ctx, h):
        x, g = ctx.saved_tensors
        s, p, d, groups = ctx.geo
        gx = gg = None
        need = ctx.needs_input_grad
        if need[0]:
            op = _opad_for(x.shape[2:], g.shape[2:], h.shape[2:], s, p, d)
            gx = Convolution.apply(g, h, None, s, p, d, True, op, groups)
        if need[1]:
            gg = _crop(Convolution.apply(x, h, None, s, p, d, False, (0,) * len(s), groups), g.shape)
        return gx, gg


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple, padding: tuple,
                dilation: tuple, transposed: bool, output_padding: tuple, groups: int) -> Tensor:
    """torch.convolution on batched (N, C, *spatial) input with normalised tuples (one per spatial dim)."""
    return Convolution.apply(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), bool(transposed),
                             tuple(output_padding), int(groups))


class Im2Col(Op):
    """d unfold(x) = fold(grad)"""

    __slots__ = ("geo",)
    nattrs = 4

    @staticmethod
    def forward(ctx, self, kernel_size, dilation, padding, stride):
        if ctx is not None:
            ctx.geo = (self.shape[2:], kernel_size, dilation, padding, stride)
        out = tuple(_out_len(self.shape[2 + i], kernel_size[i], stride[i], padding[i], dilation[i]) for i in range(2))
        return _B.ascontiguousarray(_cols(self, kernel_size, stride, padding, dilation, out))

    def backward(ctx, grad):
        size, k, d, p, s = ctx.geo
        return Col2Im.apply(grad, size, k, d, p, s)


class Col2Im(Op):
    """d fold(x) = unfold(grad)"""

    __slots__ = ("geo",)
    nattrs = 5

    @staticmethod
    def forward(ctx, self, output_size, kernel_size, dilation, padding, stride):
        if ctx is not None:
            ctx.geo = (kernel_size, dilation, padding, stride)
        out = tuple(_out_len(output_size[i], kernel_size[i], stride[i], padding[i], dilation[i]) for i in range(2))
        return _col2im(self, output_size, kernel_size, stride, padding, dilation, out)

    def backward(ctx, grad):
        k, d, p, s = ctx.geo
        return Im2Col.apply(grad, k, d, p, s)


def im2col(input: Tensor, kernel_size: tuple, dilation: tuple, padding: tuple, stride: tuple) -> Tensor:
    return Im2Col.apply(input, kernel_size, dilation, padding, stride)


def col2im(input: Tensor, output_size: tuple, kernel_size: tuple, dilation: tuple, padding: tuple,
           stride: tuple) -> Tensor:
    return Col2Im.apply(input, output_size, kernel_size, dilation, padding, stride)
