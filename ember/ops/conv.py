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


# NOTE [wide columns]: for stride 1 a window offset (i, j) of every output position is one contiguous run
# of the flattened padded image: out row r, column q reads flat[(r + i*d0)*Wp + q + j*d1]. Columns built over
# the full padded width Wp (Wp - ow junk columns per row) make im2col one long copy per offset and col2im one
# long add per offset; the junk columns are dropped after the GEMM (forward) or are zero (adjoints).
def _wide_cols(x, k, p, d, out):
    """im2col for stride 1 over the padded width: ((N, C*kh*kw, oh*Wp), Wp)."""
    n, c, h, w = x.shape
    hp, wp = h + 2 * p[0], w + 2 * p[1]
    buf = np.zeros((n, c, hp + 1, wp), x.dtype)  # one spare row: the last offsets run past the image
    buf[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x
    b0, b1, _, it = buf.strides
    view = as_strided(buf, (n, c, k[0], k[1], out[0] * wp), (b0, b1, d[0] * wp * it, d[1] * it, it), writeable=False)
    return view.reshape(n, c * k[0] * k[1], out[0] * wp), wp


def _widen(g, width):
    """(N, O, oh, ow) zero-padded on the right to (N, O, oh*width)."""
    n, o, oh, ow = g.shape
    out = np.zeros((n, o, oh, width), g.dtype)
    out[..., :ow] = g
    return out.reshape(n, o, oh * width)


def _conv(x, w, s, p, d, groups):
    n, h, wd = x.shape[0], x.shape[2], x.shape[3]
    o, cg, kh, kw = w.shape
    k = (kh, kw)
    out = (_out_len(h, kh, s[0], p[0], d[0]), _out_len(wd, kw, s[1], p[1], d[1]))
    if groups == 1 and s == (1, 1):
        cols, wp = _wide_cols(x, k, p, d, out)
        y = np.matmul(w.reshape(o, cg * kh * kw), cols).reshape(n, o, out[0], wp)
        return np.ascontiguousarray(y[..., :out[1]])
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
    if groups == 1 and s == (1, 1):
        return _col2im_wide(g, w, size, k, p, d)
    if groups == 1:
        cols = np.matmul(w.reshape(o, cg * kh * kw).T, g.reshape(n, o, oh * ow))
    else:
        wt = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
        cols = np.matmul(wt, g.reshape(n, groups, o // groups, oh * ow))
    return _col2im(cols.reshape(n, groups * cg * kh * kw, oh * ow), size, k, s, p, d, (oh, ow))


def _col2im_wide(g, w, size, k, p, d):
    """Stride-1, one-group transposed convolution through wide columns (NOTE [wide columns])."""
    n, o, oh, ow = g.shape
    c = w.shape[1]
    hb = max(size[0] + 2 * p[0], oh + d[0] * (k[0] - 1))
    wb = max(size[1] + 2 * p[1], ow + d[1] * (k[1] - 1))
    cols = np.matmul(w.reshape(o, -1).T, _widen(g, wb)).reshape(n, c, k[0] * k[1], oh * wb)
    buf = np.zeros((n, c, (hb + 1) * wb), g.dtype)
    run = oh * wb
    for t in range(k[0] * k[1]):
        i, j = divmod(t, k[1])
        off = i * d[0] * wb + j * d[1]
        buf[:, :, off:off + run] += cols[:, :, t]
    img = buf.reshape(n, c, hb + 1, wb)
    return np.ascontiguousarray(img[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]])


def _conv_w(x, g, s, p, d, groups, k):
    """The adjoint of ``_conv`` in its weight: (O, C/groups, kh, kw) from input x and output-gradient g."""
    n, c = x.shape[:2]
    o, out = g.shape[1], g.shape[2:]
    if groups == 1 and s == (1, 1):
        cols, wp = _wide_cols(x, k, p, d, out)
        gw = np.matmul(_widen(g, wp), cols.transpose(0, 2, 1)).sum(0)
        return gw.reshape(o, c, k[0], k[1])
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
    holomorphic = True  # bilinear: NOTE [holomorphic formulas]

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
    holomorphic = True  # bilinear: NOTE [holomorphic formulas]

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
