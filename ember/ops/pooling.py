"""2-d max and average pooling (1-d pooling is 2-d on a height of one, as in torch).

Max pooling returns flat indices into each (H*W) plane; its gradient scatters through those indices
(``MaxPool2DWithIndicesBackwardBackward0``) and that scatter's gradient gathers through them again, so the pair
is closed under differentiation. Average pooling's gradient is its adjoint (``AvgPool2DBackwardBackward0``),
whose gradient is average pooling again. Windows are strided views; loops run over kernel offsets only.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _wrap
from ..autograd._interpose import made
from ._op import Op
from .conv import _pad

__all__ = ["max_pool2d_with_indices", "avg_pool2d", "adaptive_max_pool2d"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)


def pool_out_len(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """Output length of a pooling window sweep (torch's rule: the last window must start inside input+left pad)."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _extra(n, k, s, p, d, out):
    """Cells past the right padding that the last (ceil-mode) window reaches."""
    return max(0, (out - 1) * s + d * (k - 1) + 1 - (n + 2 * p))


def _batched(kernel):
    """Run a kernel written for (N, C, H, W) on unbatched (C, H, W) input too."""
    def run(x, *args):
        if x.ndim == 3:
            out = kernel(x[None], *args)
            return tuple(o[0] for o in out) if type(out) is tuple else out[0]
        return kernel(x, *args)
    return run


def _max_pool_fast(xp, k, s, d, out):
    """Max over kernel offsets with np.maximum, then the first offset holding it (torch's tie choice);
    ``None`` when a window holds NaN (torch then picks the last NaN: see ``_max_pool_nan``)."""
    he, we = s[0] * (out[0] - 1) + 1, s[1] * (out[1] - 1) + 1
    views = [xp[..., i * d[0]:i * d[0] + he:s[0], j * d[1]:j * d[1] + we:s[1]]
             for i in range(k[0]) for j in range(k[1])]
    if len(views) == 1:
        best = views[0].copy()
    else:
        best = np.maximum(views[0], views[1])
        for v in views[2:]:
            np.maximum(best, v, out=best)
    if best.dtype.kind == "f" and np.isnan(best).any():
        return None
    # first offset holding the max, without branches: arg = n0 * (1 + n1 * (1 + ... * (1 + n[K-2]))) where
    # n_t = (views[t] != best) is 0 at the first hit and every term after it vanishes
    kk = len(views)
    if kk == 1:
        return best, np.zeros(best.shape, np.uint8)
    it = np.uint8 if kk <= 255 else np.intp
    arg = np.not_equal(views[kk - 2], best).astype(it)
    for t in range(kk - 3, -1, -1):
        arg += 1
        arg *= np.not_equal(views[t], best)
    return best, arg


def _max_pool_nan(xp, k, s, d, out):
    """Running max over kernel offsets where a later NaN wins, as in torch (the rare path)."""
    he, we = s[0] * (out[0] - 1) + 1, s[1] * (out[1] - 1) + 1
    best = arg = None
    for t in range(k[0] * k[1]):
        i, j = divmod(t, k[1])
        v = xp[..., i * d[0]:i * d[0] + he:s[0], j * d[1]:j * d[1] + we:s[1]]
        if best is None:
            best, arg = v.copy(), np.zeros(v.shape, np.intp)
            continue
        m = (v > best) | (v != v)
        np.copyto(best, v, where=m)
        arg[m] = t
    return best, arg


def _first_valid_where_fill(best, arg, fill, k, s, p, d) -> None:
    """Where a window's max equals the padding's fill (all its input cells are -inf, or the integer minimum),
    point ``arg`` at the window's first cell inside the input, as torch does: a padding cell is never the
    arg-max (it may come first among equal values, which the offset scan would pick)."""
    hit = best == fill
    if not hit.any():
        return
    first = []
    for axis in range(2):
        origin = np.arange(best.shape[axis - 2]) * s[axis] - p[axis]
        first.append(np.maximum(0, -(origin // d[axis])))  # smallest i with origin + i * d >= 0
    np.copyto(arg, (first[0][:, None] * k[1] + first[1]).astype(arg.dtype), where=hit)


@_batched
def _max_pool(x, k, s, p, d, ceil_mode):
    n, c, h, w = x.shape
    out = (pool_out_len(h, k[0], s[0], p[0], d[0], ceil_mode), pool_out_len(w, k[1], s[1], p[1], d[1], ceil_mode))
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad(x, p, (_extra(h, k[0], s[0], p[0], d[0], out[0]), _extra(w, k[1], s[1], p[1], d[1], out[1])), fill)
    res = _max_pool_fast(xp, k, s, d, out)
    best, arg = res if res is not None else _max_pool_nan(xp, k, s, d, out)
    if p[0] or p[1] or xp.shape[-2:] != (h, w):
        _first_valid_where_fill(best, arg, fill, k, s, p, d)
    # flat index = window origin + the offset of the chosen kernel position
    origin = (np.arange(out[0]) * s[0] - p[0])[:, None] * w + (np.arange(out[1]) * s[1] - p[1])
    offset = (np.arange(k[0]) * d[0] * w)[:, None] + np.arange(k[1]) * d[1]
    flat = np.take(offset.ravel(), arg)  # (np.take: faster than fancy indexing with a small table)
    flat += origin
    return best, flat


class MaxPool2DWithIndices(Op):
    """d max_pool2d(x) = grad scattered to the arg-max positions"""

    __slots__ = ("overlap", "_idx")
    nattrs = 5
    differentiable_outputs = (0,)
    save = ("self",)

    @staticmethod
    def forward(ctx, self, kernel_size, stride, padding, dilation, ceil_mode):
        vals, idx = _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode)
        if ctx is not None:
            ctx.overlap = any(stride[i] < dilation[i] * (kernel_size[i] - 1) + 1 for i in range(2))
            ctx._idx = idx
        return vals, idx

    def backward(ctx, grad, _gidx=None):
        (x,) = ctx.saved_tensors
        return MaxPool2DWithIndicesBackwardBackward.apply(grad, x, _wrap(ctx._idx, D.int64), x.shape, ctx.overlap)


def _zeros_for(ctx, i: int, t: Tensor):
    """The zero gradient torch gives the original input of a pooling backward (None when not needed)."""
    if ctx._next[i][0] is None:
        return None
    return _wrap(made(np.zeros(t.shape, t._data.dtype)), t._dtype)


class MaxPool2DWithIndicesBackwardBackward(Op):
    """d scatter(grad, idx) = gather(grad, idx); the original input (for its shape) gets zeros"""

    __slots__ = ("idx",)
    inputs = ("self", "input", "indices")
    save = ("input",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, input, indices, shape, overlap):
        if ctx is not None:
            ctx.idx = indices
        hw = shape[-1] * shape[-2]
        g = self.reshape(-1, self.shape[-1] * self.shape[-2])
        i = indices.reshape(g.shape)
        flat = (i + (np.arange(g.shape[0]) * hw)[:, None]).ravel()
        if not overlap:  # every input position is picked at most once
            out = np.zeros(g.shape[0] * hw, self.dtype)
            out[flat] = g.ravel()
        else:
            out = np.bincount(flat, g.ravel(), g.shape[0] * hw).astype(self.dtype, copy=False)
        return out.reshape(shape)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return MaxPoolGather.apply(grad, _wrap(ctx.idx, D.int64)), _zeros_for(ctx, 1, x), None


class AdaptiveMaxPool2DBackwardBackward(MaxPool2DWithIndicesBackwardBackward):
    __slots__ = ()
    _name = "AdaptiveMaxPool2DBackwardBackward0"


class MaxPoolGather(Op):
    """d gather(x, idx) = scatter(grad, idx) (the gradient of max pooling's scatter)"""

    __slots__ = ("shape", "idx")
    inputs = ("self", "indices")

    @staticmethod
    def forward(ctx, self, indices):
        if ctx is not None:
            ctx.shape, ctx.idx = self.shape, indices
        planes = self.reshape(-1, self.shape[-1] * self.shape[-2])
        i = indices.reshape(planes.shape[0], -1)
        return np.take_along_axis(planes, i, axis=1).reshape(indices.shape)

    def backward(ctx, grad):
        return MaxPool2DWithIndicesBackwardBackward.apply(grad, None, _wrap(ctx.idx, D.int64), ctx.shape, True), None


def max_pool2d_with_indices(input: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    return MaxPool2DWithIndices.apply(input, kernel_size, stride, padding, dilation, bool(ceil_mode))


# ------------------------------------------------------------------ average pooling
def _divisor(n, k, s, p, out, count_include_pad):
    """Per-output-position window sizes along one axis (torch's clipping rules)."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, n + p)
    size = end - start
    if not count_include_pad:
        size = np.minimum(end, n) - np.maximum(start, 0)
    return size


def _avg_geometry(shape, k, s, p, ceil_mode, count_include_pad, divisor_override):
    h, w = shape[-2:]
    out = (pool_out_len(h, k[0], s[0], p[0], 1, ceil_mode), pool_out_len(w, k[1], s[1], p[1], 1, ceil_mode))
    if divisor_override:
        div = np.float64(divisor_override)
    else:
        div = (_divisor(h, k[0], s[0], p[0], out[0], count_include_pad)[:, None]
               * _divisor(w, k[1], s[1], p[1], out[1], count_include_pad)).astype(np.float64)
    extra = (_extra(h, k[0], s[0], p[0], 1, out[0]), _extra(w, k[1], s[1], p[1], 1, out[1]))
    return out, div, extra


@_batched
def _avg_pool(x, k, s, p, ceil_mode, cip, dov):
    out, div, extra = _avg_geometry(x.shape, k, s, p, ceil_mode, cip, dov)
    xp = _pad(x, p, extra)
    he, we = s[0] * (out[0] - 1) + 1, s[1] * (out[1] - 1) + 1
    acc = np.zeros(x.shape[:-2] + out, x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            acc += xp[..., i:i + he:s[0], j:j + we:s[1]]
    acc /= div.astype(x.dtype)
    return acc


def _avg_pool_t(g, shape, k, s, p, ceil_mode, cip, dov):
    out, div, extra = _avg_geometry(shape, k, s, p, ceil_mode, cip, dov)
    h, w = shape[-2:]
    gd = g / div.astype(g.dtype)
    buf = np.zeros(tuple(shape[:-2]) + (h + 2 * p[0] + extra[0], w + 2 * p[1] + extra[1]), g.dtype)
    he, we = s[0] * (out[0] - 1) + 1, s[1] * (out[1] - 1) + 1
    for i in range(k[0]):
        for j in range(k[1]):
            buf[..., i:i + he:s[0], j:j + we:s[1]] += gd
    return np.ascontiguousarray(buf[..., p[0]:p[0] + h, p[1]:p[1] + w])


class AvgPool2D(Op):
    """d avg_pool2d(x) = its adjoint applied to grad"""

    __slots__ = ("geo",)
    nattrs = 6
    save = ("self",)

    @staticmethod
    def forward(ctx, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        geo = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        if ctx is not None:
            ctx.geo = geo
        return _avg_pool(self, *geo)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return AvgPool2DBackwardBackward.apply(grad, x, *ctx.geo)


class AvgPool2DBackwardBackward(Op):
    """d avg_pool2d_adjoint(g) = avg_pool2d(grad)"""

    __slots__ = ("geo",)
    nattrs = 6
    inputs = ("self", "input")
    save = ("input",)

    @staticmethod
    def forward(ctx, self, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        geo = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        if ctx is not None:
            ctx.geo = geo
        return _avg_pool_t(self, input.shape, *geo)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return AvgPool2D.apply(grad, *ctx.geo), _zeros_for(ctx, 1, x)


def avg_pool2d(input: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return AvgPool2D.apply(input, kernel_size, stride, padding, bool(ceil_mode), bool(count_include_pad),
                           divisor_override)


# ------------------------------------------------------------------ adaptive max pooling
def adaptive_bounds(n: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """Start (floor(i*n/out)) and end (ceil((i+1)*n/out)) of each adaptive window."""
    i = np.arange(out)
    return (i * n) // out, -((-(i + 1) * n) // out)


@_batched
def _adaptive_max(x, out):
    n, c, h, w = x.shape
    axes = []
    for size, o in ((h, out[0]), (w, out[1])):
        start, end = adaptive_bounds(size, o)
        k = int((end - start).max()) if o else 0
        pos = start[:, None] + np.arange(k)
        axes.append((np.minimum(pos, size - 1), pos < end[:, None]))
    (rows, rv), (cols, cv) = axes
    win = x[:, :, rows[:, :, None, None], cols[None, None, :, :]]  # (N, C, oh, kh, ow, kw)
    valid = rv[:, :, None, None] & cv[None, None, :, :]
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win = np.where(valid, win, fill).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, out[0], out[1], -1)
    arg = win.argmax(axis=-1)[..., None]
    vals = np.take_along_axis(win, arg, axis=-1)[..., 0]
    kw = cols.shape[1]
    arg = arg[..., 0]
    r = np.take_along_axis(np.broadcast_to(rows[None, None, :, None, :], (n, c) + out + rows.shape[1:]),
                           (arg // kw)[..., None], axis=-1)[..., 0]
    cc = np.take_along_axis(np.broadcast_to(cols[None, None, None, :, :], (n, c) + out + cols.shape[1:]),
                            (arg % kw)[..., None], axis=-1)[..., 0]
    return vals, r * w + cc


class AdaptiveMaxPool2D(Op):
    """d adaptive_max_pool2d(x) = grad scattered to the arg-max positions"""

    __slots__ = ("_idx",)
    nattrs = 1
    differentiable_outputs = (0,)
    save = ("self",)

    @staticmethod
    def forward(ctx, self, output_size):
        vals, idx = _adaptive_max(self, output_size)
        if ctx is not None:
            ctx._idx = idx
        return vals, idx

    def backward(ctx, grad, _gidx=None):
        (x,) = ctx.saved_tensors
        return AdaptiveMaxPool2DBackwardBackward.apply(grad, x, _wrap(ctx._idx, D.int64), x.shape, True)


def adaptive_max_pool2d(input: Tensor, output_size) -> tuple:
    return AdaptiveMaxPool2D.apply(input, tuple(output_size))

