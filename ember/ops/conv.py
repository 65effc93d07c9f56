"""Convolution and its transpose (1-d and 2-d, groups, dilation), im2col / col2im.

A convolution ``y = conv(x, w)`` is bilinear, and its three array kernels close under differentiation:
``_conv`` (forward), ``_conv_t`` (the adjoint in x: the transposed convolution) and ``_conv_w`` (the
adjoint in w). ``Convolution`` (torch's ``ConvolutionBackward0``) runs ``_conv`` or, transposed, ``_conv_t``;
its backward is again ``Convolution`` (with the other flag) plus ``ConvolutionBackwardBackward0`` for the
weight, whose own backward is made of ``Convolution`` again, so every order of derivative stays in ember ops.
1-d arrays run as 2-d with a height of one. All work is im2col through a strided view plus one batched GEMM;
col2im loops over kernel offsets only.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._tensor import Tensor
from ._op import Op

__all__ = ["convolution", "im2col", "col2im"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)
_matmul = np.matmul


def _need(ctx, i: int) -> bool:
    return ctx._next[i][0] is not None


def _out_len(n: int, k: int, s: int, p: int, d: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _windows(xp: np.ndarray, k: tuple, s: tuple, d: tuple, out: tuple) -> np.ndarray:
    """Read-only view (N, C, kh, kw, oh, ow) of the windows of padded ``xp`` (N, C, Hp, Wp)."""
    n, c = xp.shape[:2]
    s0, s1, s2, s3 = xp.strides
    return as_strided(xp, (n, c, k[0], k[1], out[0], out[1]),
                      (s0, s1, s2 * d[0], s3 * d[1], s2 * s[0], s3 * s[1]), writeable=False)


def _pad(x: np.ndarray, p: tuple, extra: tuple = (0, 0), value=0) -> np.ndarray:
    """``x`` (N, C, H, W) with ``p`` rows/cols of ``value`` on both sides (+ ``extra`` after)."""
    if not (p[0] or p[1] or extra[0] or extra[1]):
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + 2 * p[0] + extra[0], w + 2 * p[1] + extra[1]), value, x.dtype)
    out[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x
    return out


def _cols(x: np.ndarray, k, s, p, d, out) -> np.ndarray:
    """im2col: (N, C*kh*kw, oh*ow), channel-major then kernel offsets (torch's unfold layout)."""
    n, c = x.shape[:2]
    return _windows(_pad(x, p), k, s, d, out).reshape(n, c * k[0] * k[1], out[0] * out[1])


def _col2im(cols: np.ndarray, size: tuple, k, s, p, d, out) -> np.ndarray:
    """Sum columns (N, C*kh*kw, oh*ow) back into an (N, C, H, W) image (the adjoint of ``_cols``)."""
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    cols = cols.reshape(n, c, k[0], k[1], out[0], out[1])
    hb = max(size[0] + 2 * p[0], (out[0] - 1) * s[0] + d[0] * (k[0] - 1) + 1)
    wb = max(size[1] + 2 * p[1], (out[1] - 1) * s[1] + d[1] * (k[1] - 1) + 1)
    buf = np.zeros((n, c, hb, wb), cols.dtype)
    he, we = s[0] * (out[0] - 1) + 1, s[1] * (out[1] - 1) + 1
    for i in range(k[0]):
        for j in range(k[1]):
            buf[:, :, i * d[0]:i * d[0] + he:s[0], j * d[1]:j * d[1] + we:s[1]] += cols[:, :, i, j]
    return np.ascontiguousarray(buf[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]])


# NOTE [wide columns]: for stride 1 a kernel offset (i, j) of every output position is one contiguous run of the
# flattened padded image: out row r, column q reads flat[(r + i*d0)*Wp + q + j*d1]. Columns built over the full padded
# width Wp (Wp - ow junk columns per row) make im2col one long copy per offset and col2im one long add per offset; the
# junk columns are dropped after the GEMM (forward) or are zero (adjoints). The whole batch is laid out channel-first,
# (C, N * Hp * Wp) with the samples one after another, so that one GEMM serves every sample (NumPy's matmul would loop
# over the batch with a small GEMM each: 1.7x slower for (32, 16, 32, 32) by 3x3): the columns are (C*kh*kw, P) for
# P = N * Hp * Wp output positions (the junk rows below each sample's last output row included).
def _wide_layout(n: int, h: int, w: int, k, d) -> tuple:
    """(S, offsets, tail) of wide columns over a batch of n padded (h, w) images: S = h*w per sample, the flat offset
    of each kernel position, and the spare tail the last offsets read past the batch."""
    offs = [i * d[0] * w + j * d[1] for i in range(k[0]) for j in range(k[1])]
    return h * w, offs, offs[-1]


def _batch_cols(x, k, p, d, size=None):
    """Channel-major wide columns of x (N, C, H, W) padded by p (to ``size`` when given): ((C*kh*kw, P), (Hp, Wp))."""
    n, c, h, w = x.shape
    hp, wp = size if size is not None else (h + 2 * p[0], w + 2 * p[1])
    sz, offs, tail = _wide_layout(n, hp, wp, k, d)
    buf = np.zeros((c, n * sz + tail), x.dtype)
    buf[:, :n * sz].reshape(c, n, hp, wp)[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x.transpose(1, 0, 2, 3)
    cols = np.empty((c, len(offs), n * sz), x.dtype)
    for t, off in enumerate(offs):
        cols[:, t] = buf[:, off:off + n * sz]
    return cols.reshape(c * len(offs), n * sz), (hp, wp)


def _batch_widen(g, hp, wp):
    """g (N, O, oh, ow) as channel-major wide rows (O, N * hp * wp), zero outside each sample's outputs."""
    n, o, oh, ow = g.shape
    out = np.zeros((o, n, hp, wp), g.dtype)
    out[:, :, :oh, :ow] = g.transpose(1, 0, 2, 3)
    return out.reshape(o, n * hp * wp)


def _unbatch(y, n, hp, wp, rows, cols, r0=0, c0=0):
    """Channel-major wide rows (C, N * hp * wp) back to (N, C, rows, cols), the block at (r0, c0) of each sample."""
    c = y.shape[0]
    return np.ascontiguousarray(y.reshape(c, n, hp, wp)[:, :, r0:r0 + rows, c0:c0 + cols].transpose(1, 0, 2, 3))


def _conv(x, w, s, p, d, groups):
    n, h, wd = x.shape[0], x.shape[2], x.shape[3]
    o, cg, kh, kw = w.shape
    k = (kh, kw)
    out = (_out_len(h, kh, s[0], p[0], d[0]), _out_len(wd, kw, s[1], p[1], d[1]))
    if groups == 1 and s == (1, 1):  # NOTE [wide columns]
        cols, (hp, wp) = _batch_cols(x, k, p, d)
        return _unbatch(_matmul(w.reshape(o, cg * kh * kw), cols), n, hp, wp, *out)
    cols = _cols(x, k, s, p, d, out)
    if groups == 1:
        return np.matmul(w.reshape(o, cg * kh * kw), cols).reshape(n, o, out[0], out[1])
    cols = cols.reshape(n, groups, cg * kh * kw, out[0] * out[1])
    y = np.matmul(w.reshape(groups, o // groups, cg * kh * kw), cols)
    return y.reshape(n, o, out[0], out[1])


def _conv_t(g, w, s, p, d, groups, opad):
    """The transposed convolution: the adjoint of ``_conv`` in its input, with ``opad`` extra rows/cols."""
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    k = (kh, kw)
    size = tuple((g.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1 + opad[i] for i in range(2))
    if groups == 1 and s == (1, 1):  # NOTE [wide columns]
        hp = max(size[0] + 2 * p[0], oh + d[0] * (k[0] - 1))
        wp = max(size[1] + 2 * p[1], ow + d[1] * (k[1] - 1))
        cols = _matmul(w.reshape(o, cg * kh * kw).T, _batch_widen(g, hp, wp))
        sz, offs, tail = _wide_layout(n, hp, wp, k, d)
        buf = np.zeros((cg, n * sz + tail), g.dtype)
        cols = cols.reshape(cg, len(offs), n * sz)
        for t, off in enumerate(offs):
            buf[:, off:off + n * sz] += cols[:, t]
        return _unbatch(buf[:, :n * sz], n, hp, wp, size[0], size[1], p[0], p[1])
    if groups == 1:
        cols = np.matmul(w.reshape(o, cg * kh * kw).T, g.reshape(n, o, oh * ow))
    else:
        wt = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
        cols = np.matmul(wt, g.reshape(n, groups, o // groups, oh * ow))
    return _col2im(cols.reshape(n, groups * cg * kh * kw, oh * ow), size, k, s, p, d, (oh, ow))


def _conv_w(x, g, s, p, d, groups, k):
    """The adjoint of ``_conv`` in its weight: (O, C/groups, kh, kw) from input x and output-gradient g."""
    n, c = x.shape[:2]
    o, out = g.shape[1], g.shape[2:]
    if groups == 1 and s == (1, 1):  # NOTE [wide columns]
        cols, (hp, wp) = _batch_cols(x, k, p, d)
        return _matmul(_batch_widen(g, hp, wp), cols.T).reshape(o, c, k[0], k[1])
    cols = _cols(x, k, s, p, d, out).reshape(n, groups, (c // groups) * k[0] * k[1], out[0] * out[1])
    gm = g.reshape(n, groups, o // groups, out[0] * out[1])
    gw = np.matmul(gm, cols.transpose(0, 1, 3, 2)).sum(0)  # N small GEMMs, then the batch sum
    return gw.reshape(o, c // groups, k[0], k[1])


def _as2d(arrays, stride, padding, dilation, last, fill):
    """Lift 1-d arrays (N, C, L) and geometry to 2-d (height one); ``last`` (output padding or kernel size)
    gets ``fill`` in front."""
    arrays = tuple(a[:, :, None] for a in arrays)
    return arrays, (1,) + stride, (0,) + padding, (1,) + dilation, (fill,) + last


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

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
        if ctx is not None:
            ctx.geo = (stride, padding, dilation, transposed, output_padding, groups)
        one_d = input.ndim == 3
        if one_d:
            (input, weight), stride, padding, dilation, output_padding = _as2d(
                (input, weight), stride, padding, dilation, output_padding, 0)
        if transposed:
            y = _conv_t(input, weight, stride, padding, dilation, groups, output_padding)
        else:
            y = _conv(input, weight, stride, padding, dilation, groups)
        if bias is not None:
            y += bias.reshape(-1, 1, 1)
        return y[:, :, 0] if one_d else y

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
        if transposed:
            if _need(ctx, 0):
                gx = _crop(Convolution.apply(grad, w, None, s, p, d, False, (0,) * len(s), groups), x.shape)
            if _need(ctx, 1):
                gw = ConvolutionBackwardBackward.apply(grad, x, s, p, d, groups, tuple(w.shape[2:]))
        else:
            if _need(ctx, 0):
                op = _opad_for(x.shape[2:], grad.shape[2:], w.shape[2:], s, p, d)
                gx = Convolution.apply(grad, w, None, s, p, d, True, op, groups)
            if _need(ctx, 1):
                gw = ConvolutionBackwardBackward.apply(x, grad, s, p, d, groups, tuple(w.shape[2:]))
        if _need(ctx, 2):
            gb = grad.sum((0,) + tuple(range(2, grad.dim())))
        return gx, gw, gb


class ConvolutionBackwardBackward(Op):
    """The weight gradient conv_w(x, g) as an op: d/dx = conv_t(g, H), d/dg = conv(x, H) for upstream H"""

    __slots__ = ("geo",)
    _name = "ConvolutionBackwardBackward0"
    nattrs = 5
    inputs = ("input", "grad")
    save = ("input", "grad")

    @staticmethod
    def forward(ctx, input, grad, stride, padding, dilation, groups, ksize):
        if ctx is not None:
            ctx.geo = (stride, padding, dilation, groups)
        if input.ndim == 3:
            (input, grad), stride, padding, dilation, ksize = _as2d((input, grad), stride, padding, dilation,
                                                                    ksize, 1)
            return _conv_w(input, grad, stride, padding, dilation, groups, ksize)[:, :, 0]
        return _conv_w(input, grad, stride, padding, dilation, groups, ksize)

    def backward(ctx, h):
        x, g = ctx.saved_tensors
        s, p, d, groups = ctx.geo
        gx = gg = None
        if _need(ctx, 0):
            op = _opad_for(x.shape[2:], g.shape[2:], h.shape[2:], s, p, d)
            gx = Convolution.apply(g, h, None, s, p, d, True, op, groups)
        if _need(ctx, 1):
            gg = _crop(Convolution.apply(x, h, None, s, p, d, False, (0,) * len(s), groups), g.shape)
        return gx, gg


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple, padding: tuple,
                dilation: tuple, transposed: bool, output_padding: tuple, groups: int) -> Tensor:
    """torch.convolution on batched (N, C, *spatial) input with normalised tuples (1 or 2 spatial dims)."""
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
        return np.ascontiguousarray(_cols(self, kernel_size, stride, padding, dilation, out))

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
