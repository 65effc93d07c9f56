"""Max, average, adaptive-max and fractional-max pooling over any number of spatial dims; max unpooling.

The kernels are written once for n trailing spatial axes (1-d pooling runs as 2-d on a height of one, as in
torch). Max pooling returns flat indices into each spatial plane (volume); its gradient scatters through those
indices (``MaxPool{n}DWithIndicesBackwardBackward0``) and that scatter's gradient gathers through them again,
so the pair is closed under differentiation. Adaptive and fractional max pooling and max unpooling are the same
scatter/gather pair under torch's node names. Average pooling's gradient is its adjoint
(``AvgPool{n}DBackwardBackward0``), whose gradient is average pooling again. Windows are strided slices; loops
run over kernel offsets only. One op class per (family, rank) comes from ``_ranked``.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._tensor import Tensor, _wrap
from ..autograd._interpose import made
from ._op import Op
from .conv import _pad, _strided

__all__ = ["max_pool_with_indices", "avg_pool", "adaptive_max_pool", "fractional_max_pool", "max_unpool"]
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


def _fill(dtype: np.dtype):
    """The value no element is below: padding of max pooling."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _flat_offsets(size: tuple, k: tuple, d: tuple) -> np.ndarray:
    """Flat offset (in a ``size`` plane) of each kernel position, kernel positions in C order."""
    grids = np.meshgrid(*(np.arange(k[a]) * d[a] * math.prod(size[a + 1:]) for a in range(len(k))), indexing="ij")
    return sum(grids).ravel()


def _flat_origins(size: tuple, out: tuple, s: tuple, p: tuple) -> np.ndarray:
    """Flat index (in a ``size`` plane) of each window's first cell, shaped ``out``."""
    nd = len(out)
    total = np.zeros(out, np.intp)
    for a in range(nd):
        line = (np.arange(out[a]) * s[a] - p[a]) * math.prod(size[a + 1:])
        total = total + line.reshape((-1,) + (1,) * (nd - 1 - a))
    return total


# ------------------------------------------------------------------ max pooling
def _max_pool_fast(xp, k, s, d, out):
    """Max over kernel offsets with np.maximum, then the first offset holding it (torch's tie choice);
    ``None`` when a window holds NaN (torch then picks the last NaN: see ``_max_pool_nan``)."""
    views = [xp[sl] for sl in _strided(k, s, d, out)]
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


def _max_pool_stacked(xp, k, s, d, out):
    """On a device: the kernel offsets stacked, their max and first arg-max in one reduction each, and where a
    window holds NaN the last NaN's offset (torch's pick): a fixed handful of kernels, no value read by the host
    (the offset scans of the host launch a few kernels per offset and branch on NaN)."""
    st = np.stack([xp[sl] for sl in _strided(k, s, d, out)])
    best = np.max(st, axis=0)
    arg = np.argmax(st, axis=0)
    if st.dtype.kind == "f":
        last = (len(st) - 1) - np.argmax(np.isnan(st)[::-1], axis=0)
        arg = np.where(np.isnan(best), last, arg)
    return best, arg


def _max_pool_nan(xp, k, s, d, out):
    """Running max over kernel offsets where a later NaN wins, as in torch (the rare path)."""
    best = arg = None
    for t, sl in enumerate(_strided(k, s, d, out)):
        v = xp[sl]
        if best is None:
            best, arg = v.copy(), np.zeros(v.shape, np.intp, like=_B.ref(v))
            continue
        m = (v > best) | (v != v)
        np.copyto(best, v, where=m)
        np.copyto(arg, t, where=m)
    return best, arg


def _first_valid_where_fill(best, arg, fill, k, s, p, d) -> None:
    """Where a window's max equals the padding's fill (all its input cells are -inf, or the integer minimum),
    point ``arg`` at the window's first cell inside the input, as torch does: a padding cell is never the
    arg-max (it may come first among equal values, which the offset scan would pick)."""
    hit = best == fill
    if _B.is_cpu_array(hit) and not hit.any():  # (a device reads no value: NOTE [stand-in counters])
        return
    nd = len(k)
    first = np.zeros(best.shape[-nd:], np.intp)
    for a in range(nd):
        origin = np.arange(best.shape[a - nd]) * s[a] - p[a]
        line = np.maximum(0, -(origin // d[a])) * math.prod(k[a + 1:])  # smallest i with origin + i*d >= 0
        first = first + line.reshape((-1,) + (1,) * (nd - 1 - a))
    np.copyto(arg, _B.like(arg, first.astype(arg.dtype)), where=hit)


def _max_pool(x, k, s, p, d, ceil_mode):
    """Max pooling of the trailing ``len(k)`` axes: (values, flat indices into each input plane)."""
    nd = len(k)
    size = x.shape[-nd:]
    out = tuple(pool_out_len(size[a], k[a], s[a], p[a], d[a], ceil_mode) for a in range(nd))
    fill = _fill(x.dtype)
    xp = _pad(x, p, tuple(_extra(size[a], k[a], s[a], p[a], d[a], out[a]) for a in range(nd)), fill)
    res = _max_pool_fast(xp, k, s, d, out) if _B.is_cpu_array(xp) else _max_pool_stacked(xp, k, s, d, out)
    best, arg = res if res is not None else _max_pool_nan(xp, k, s, d, out)
    if any(p) or xp.shape[-nd:] != size:
        _first_valid_where_fill(best, arg, fill, k, s, p, d)
    flat = np.take(_B.like(arg, _flat_offsets(size, k, d)), arg)  # (np.take: faster than fancy indexing with a
    # small table; the host tables go to the device of ``arg``: np.take dispatches on the table only)
    flat += _B.like(flat, _flat_origins(size, out, s, p))
    return best, flat


def _no_complex(cls, x) -> None:
    """torch's pooling kernels have no complex versions: the error names the kernel of the op's rank."""
    if x.dtype.kind == "c":
        from .reduction import complex_refused

        raise complex_refused(cls._kernel, x.dtype)


def _ranked(base: type, torch_name: str, nd: int, **extra) -> type:
    """The op class of family ``base`` for ``nd`` spatial dims, named as torch's node ``torch_name``."""
    return type(torch_name.replace("Backward0", ""), (base,),
                {"__slots__": (), "_name": torch_name, "_nd": nd, **extra})


class _MaxPoolWithIndices(Op):
    """d max_pool(x) = grad scattered to the arg-max positions"""
    _abstract = True
    _kernel: str = None  # torch's kernel of this rank, named in its complex error

    __slots__ = ("overlap", "_idx")
    nattrs = 5
    differentiable_outputs = (0,)
    save = ("self",)
    _nd = 2
    _scatter: type = None

    @classmethod
    def forward(cls, ctx, self, kernel_size, stride, padding, dilation, ceil_mode):
        _no_complex(cls, self)
        vals, idx = _max_pool(self, kernel_size, stride, padding, dilation, ceil_mode)
        if ctx is not None:
            ctx.overlap = any(stride[i] < dilation[i] * (kernel_size[i] - 1) + 1 for i in range(len(stride)))
            ctx._idx = idx
        return vals, idx

    def backward(ctx, grad, _gidx=None):
        (x,) = ctx.saved_tensors
        return type(ctx)._scatter.apply(grad, x, _wrap(ctx._idx, D.int64), x.shape, ctx.overlap)


def _zeros_for(ctx, i: int, t: Tensor):
    """The zero gradient torch gives the original input of a pooling backward (None when not needed)."""
    if not ctx.needs_input_grad[i]:
        return None
    return _wrap(made(np.zeros(t.shape, t._data.dtype)), t._dtype)


def _planes(a: np.ndarray, nd: int) -> np.ndarray:
    """``a`` as (planes, cells of one plane) over its trailing ``nd`` axes."""
    return a.reshape(-1, math.prod(a.shape[-nd:])) if a.ndim > nd else a.reshape(1, -1)


class _Scatter(Op):
    """d scatter(grad, idx) = gather(grad, idx); the original input (for its shape) gets zeros"""
    _abstract = True

    __slots__ = ("idx",)
    inputs = ("self", "input", "indices")
    save = ("input",)
    nattrs = 2
    _nd = 2

    @classmethod
    def forward(cls, ctx, self, input, indices, shape, overlap):
        if ctx is not None:
            ctx.idx = indices
        plane = math.prod(shape[-cls._nd:])
        g = _planes(self, cls._nd)
        i = indices.reshape(g.shape)
        flat = (i + (np.arange(g.shape[0], like=g) * plane)[:, None]).ravel()
        if not overlap:  # every input position is picked at most once
            out = np.zeros(g.shape[0] * plane, self.dtype, like=_B.ref(g))
            out[flat] = g.ravel()
        else:
            out = np.bincount(flat, g.ravel(), g.shape[0] * plane).astype(self.dtype, copy=False)
        return out.reshape(shape)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _GATHER[type(ctx)._nd].apply(grad, _wrap(ctx.idx, D.int64)), _zeros_for(ctx, 1, x), None


class _Gather(Op):
    """d gather(x, idx) = scatter(grad, idx) (the gradient of max pooling's scatter)"""
    _abstract = True

    __slots__ = ("shape", "idx")
    inputs = ("self", "indices")
    _nd = 2

    @classmethod
    def forward(cls, ctx, self, indices):
        if ctx is not None:
            ctx.shape, ctx.idx = self.shape, indices
        planes = _planes(self, cls._nd)
        i = indices.reshape(planes.shape[0], -1)
        return np.take_along_axis(planes, i, axis=1).reshape(indices.shape)

    def backward(ctx, grad):
        nd = type(ctx)._nd
        return _SCATTER[nd].apply(grad, None, _wrap(ctx.idx, D.int64), ctx.shape, True), None


# (rank -> class) for the ops every max-type pooling shares; 2-d keeps the names ember has always had
_GATHER = {nd: _ranked(_Gather, "MaxPoolGather" + ("Backward0" if nd == 2 else f"{nd}DBackward0"), nd)
           for nd in (2, 3)}
_SCATTER = {nd: _ranked(_Scatter, f"MaxPool{nd}DWithIndicesBackwardBackward0", nd) for nd in (2, 3)}
MaxPoolGather = _GATHER[2]
_MAX_POOL = {nd: _ranked(_MaxPoolWithIndices, f"MaxPool{nd}DWithIndicesBackward0", nd, _scatter=_SCATTER[nd],
                         _kernel=f"max_pool{nd}d") for nd in (2, 3)}


def max_pool_with_indices(input: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    """Max pooling of the trailing ``len(kernel_size)`` (2 or 3) axes: (values, flat int64 indices)."""
    return _MAX_POOL[len(kernel_size)].apply(input, kernel_size, stride, padding, dilation, bool(ceil_mode))


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
    nd = len(k)
    size = shape[-nd:]
    out = tuple(pool_out_len(size[a], k[a], s[a], p[a], 1, ceil_mode) for a in range(nd))
    if divisor_override:
        div = np.float64(divisor_override)
    else:
        div = np.ones(out)
        for a in range(nd):
            div = div * _divisor(size[a], k[a], s[a], p[a], out[a], count_include_pad).reshape(
                (-1,) + (1,) * (nd - 1 - a))
    extra = tuple(_extra(size[a], k[a], s[a], p[a], 1, out[a]) for a in range(nd))
    return out, div, extra


def _avg_pool(x, k, s, p, ceil_mode, cip, dov):
    out, div, extra = _avg_geometry(x.shape, k, s, p, ceil_mode, cip, dov)
    xp = _pad(x, p, extra)
    acc = np.zeros(x.shape[:-len(k)] + out, x.dtype, like=x)
    for sl in _strided(k, s, (1,) * len(k), out):
        acc += xp[sl]
    acc /= _B.like(x, div.astype(x.dtype))
    return acc


def _avg_pool_t(g, shape, k, s, p, ceil_mode, cip, dov):
    out, div, extra = _avg_geometry(shape, k, s, p, ceil_mode, cip, dov)
    nd = len(k)
    size = tuple(shape[-nd:])
    gd = g / _B.like(g, div.astype(g.dtype))
    buf = np.zeros(tuple(shape[:-nd]) + tuple(size[a] + 2 * p[a] + extra[a] for a in range(nd)), g.dtype, like=g)
    for sl in _strided(k, s, (1,) * nd, out):
        buf[sl] += gd
    return _B.ascontiguousarray(buf[(...,) + tuple(slice(p[a], p[a] + size[a]) for a in range(nd))])


class _AvgPool(Op):
    """d avg_pool(x) = its adjoint applied to grad"""
    _abstract = True
    _kernel: str = None  # torch's kernel of this rank, named in its complex error

    __slots__ = ("geo",)
    nattrs = 6
    save = ("self",)
    _adjoint: type = None

    @classmethod
    def forward(cls, ctx, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        _no_complex(cls, self)
        geo = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        if ctx is not None:
            ctx.geo = geo
        return _avg_pool(self, *geo)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return type(ctx)._adjoint.apply(grad, x, *ctx.geo)


class _AvgPoolBackward(Op):
    """d avg_pool_adjoint(g) = avg_pool(grad)"""
    _abstract = True

    __slots__ = ("geo",)
    nattrs = 6
    inputs = ("self", "input")
    save = ("input",)
    _pool: type = None

    @staticmethod
    def forward(ctx, self, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        geo = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        if ctx is not None:
            ctx.geo = geo
        return _avg_pool_t(self, input.shape, *geo)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return type(ctx)._pool.apply(grad, *ctx.geo), _zeros_for(ctx, 1, x)


_AVG_POOL = {}
for _nd in (2, 3):
    _f = _ranked(_AvgPool, f"AvgPool{_nd}DBackward0", _nd, _kernel="avg_pool2d" if _nd == 2 else "avg_pool3d_out_frame")
    _b = _ranked(_AvgPoolBackward, f"AvgPool{_nd}DBackwardBackward0", _nd)
    _f._adjoint, _b._pool = _b, _f
    _AVG_POOL[_nd] = _f
del _nd, _f, _b


def avg_pool(input: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average pooling of the trailing ``len(kernel_size)`` (2 or 3) axes."""
    return _AVG_POOL[len(kernel_size)].apply(input, kernel_size, stride, padding, bool(ceil_mode),
                                             bool(count_include_pad), divisor_override)


# ------------------------------------------------------------------ adaptive max pooling
def adaptive_bounds(n: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """Start (floor(i*n/out)) and end (ceil((i+1)*n/out)) of each adaptive window."""
    i = np.arange(out)
    return (i * n) // out, -((-(i + 1) * n) // out)


def _window_max(x: np.ndarray, axes: list) -> tuple:
    """Max (first arg-max; a NaN wins) over windows given per trailing axis as (positions (out, k), valid (out, k)):
    (values, flat indices into each input plane)."""
    nd = len(axes)
    size = x.shape[-nd:]
    lead = x.shape[:-nd]
    out = tuple(pos.shape[0] for pos, _ in axes)
    # gather (..., o0, k0, o1, k1, ...) by broadcasting one index array per axis, then move the k's last
    idx = []
    for a, (pos, _) in enumerate(axes):
        shape = [1] * (2 * nd)
        shape[2 * a], shape[2 * a + 1] = pos.shape
        idx.append(pos.reshape(shape))
    win = x[_B.key_on(x, (...,) + tuple(idx))]
    valid = np.ones((1,) * (2 * nd), bool)
    for a, (_, ok) in enumerate(axes):
        shape = [1] * (2 * nd)
        shape[2 * a], shape[2 * a + 1] = ok.shape
        valid = valid & ok.reshape(shape)
    nl = len(lead)
    order = tuple(range(nl)) + tuple(nl + 2 * a for a in range(nd)) + tuple(nl + 2 * a + 1 for a in range(nd))
    win = np.where(_B.like(x, valid), win, _fill(x.dtype)).transpose(order).reshape(lead + out + (-1,))
    if win.dtype.kind == "f" and np.isnan(win).any():
        arg = np.where(np.isnan(win), np.arange(win.shape[-1]), -1).max(-1)
        arg = np.where(arg >= 0, arg, win.argmax(-1))[..., None]
    else:
        arg = win.argmax(axis=-1)[..., None]
    vals = np.take_along_axis(win, arg, axis=-1)[..., 0]
    ks = tuple(pos.shape[1] for pos, _ in axes)
    parts = np.unravel_index(arg[..., 0], ks)
    flat = np.zeros(arg.shape[:-1], np.intp)
    for a, (pos, _) in enumerate(axes):  # the chosen cell's coordinate along each axis, then its flat index
        coord = pos[np.arange(out[a]).reshape([-1 if b == a else 1 for b in range(nd)]), parts[a]]
        flat = flat + coord * math.prod(size[a + 1:])
    return vals, flat


def _adaptive_max(x, out):
    axes = []
    nd = len(out)
    for a in range(nd):
        n, o = x.shape[a - nd], out[a]
        start, end = adaptive_bounds(n, o)
        k = int((end - start).max()) if o else 0
        pos = start[:, None] + np.arange(k)
        axes.append((np.minimum(pos, n - 1), pos < end[:, None]))
    return _window_max(x, axes)


class _AdaptiveMaxPool(Op):
    """d adaptive_max_pool(x) = grad scattered to the arg-max positions"""
    _abstract = True
    _kernel: str = None  # torch's kernel of this rank, named in its complex error

    __slots__ = ("_idx",)
    nattrs = 1
    differentiable_outputs = (0,)
    save = ("self",)
    _scatter: type = None

    @classmethod
    def forward(cls, ctx, self, output_size):
        _no_complex(cls, self)
        vals, idx = _adaptive_max(self, output_size)
        if ctx is not None:
            ctx._idx = idx
        return vals, idx

    def backward(ctx, grad, _gidx=None):
        (x,) = ctx.saved_tensors
        return type(ctx)._scatter.apply(grad, x, _wrap(ctx._idx, D.int64), x.shape, True)


_ADAPTIVE_MAX = {nd: _ranked(_AdaptiveMaxPool, f"AdaptiveMaxPool{nd}DBackward0", nd, _scatter=_ranked(
    _Scatter, f"AdaptiveMaxPool{nd}DBackwardBackward0", nd), _kernel=f"adaptive_max_pool{nd}d" + ("_cpu" if nd == 3 else ""))
    for nd in (2, 3)}


def adaptive_max_pool(input: Tensor, output_size) -> tuple:
    """Adaptive max pooling of the trailing ``len(output_size)`` (2 or 3) axes: (values, flat indices)."""
    return _ADAPTIVE_MAX[len(output_size)].apply(input, tuple(output_size))


# ------------------------------------------------------------------ fractional max pooling
def fractional_starts(sample: np.ndarray, n: int, out: int, k: int) -> np.ndarray:
    """Window starts along one axis for each plane's ``sample`` in [0, 1) (torch's sequence, computed in the
    samples' float type): shape sample.shape + (out,)."""
    starts = np.empty(sample.shape + (out,), np.intp)
    if out > 1:
        dt = sample.dtype.type
        alpha = dt(n - k) / dt(out - 1)
        i = np.arange(out - 1).astype(sample.dtype)
        starts[..., :-1] = ((i + sample[..., None]) * alpha).astype(np.intp) - (sample * alpha).astype(np.intp)[
            ..., None]
    if out > 0:
        starts[..., -1] = n - k
    return starts


def _fractional_max(x, k, out, samples):
    """Max over each plane's fractional windows; ``samples`` (planes..., nd) in torch's per-rank axis order."""
    nd = len(k)
    lead = x.shape[:-nd]
    planes = x.reshape((-1,) + x.shape[-nd:])
    smp = _B.to_host(samples).reshape(-1, nd)  # the windows are bookkeeping: computed on the host, one copy
    # torch reads a 2-d plane's samples as (width, height) and a 3-d volume's as (time, height, width)
    order = (1, 0) if nd == 2 else tuple(range(nd))
    vals = np.empty((planes.shape[0],) + tuple(out), x.dtype)
    idx = np.empty(vals.shape, np.intp)
    for j in range(planes.shape[0]):  # over planes: each has its own windows
        axes = []
        for a in range(nd):
            st = fractional_starts(smp[j, order[a]], x.shape[a - nd], out[a], k[a])
            pos = st[:, None] + np.arange(k[a])
            axes.append((pos, np.ones(pos.shape, bool)))
        vals[j], idx[j] = _window_max(planes[j], axes)
    return vals.reshape(lead + tuple(out)), idx.reshape(lead + tuple(out))


class _FractionalMaxPool(Op):
    """d fractional_max_pool(x) = grad scattered to the arg-max positions"""
    _abstract = True
    _kernel: str = None  # torch's kernel of this rank, named in its complex error

    __slots__ = ("_idx",)
    inputs = ("self", "random_samples")
    nattrs = 2
    differentiable_outputs = (0,)
    save = ("self",)
    _scatter: type = None

    @classmethod
    def forward(cls, ctx, self, random_samples, kernel_size, output_size):
        _no_complex(cls, self)
        vals, idx = _fractional_max(self, kernel_size, output_size, random_samples)
        if ctx is not None:
            ctx._idx = idx
        return vals, idx

    def backward(ctx, grad, _gidx=None):
        (x,) = ctx.saved_tensors
        return type(ctx)._scatter.apply(grad, x, _wrap(ctx._idx, D.int64), x.shape, True), None


_FRACTIONAL = {nd: _ranked(_FractionalMaxPool, f"FractionalMaxPool{nd}DBackward0", nd, _scatter=_ranked(
    _Scatter, f"FractionalMaxPool{nd}DBackwardBackward0", nd), _kernel=f"fractional_max_pool{nd}d_out_frame")
    for nd in (2, 3)}


def fractional_max_pool(input: Tensor, kernel_size: tuple, output_size: tuple, random_samples: Tensor) -> tuple:
    """Fractional max pooling of the trailing ``len(kernel_size)`` (2 or 3) axes: (values, flat indices)."""
    return _FRACTIONAL[len(kernel_size)].apply(input, random_samples, tuple(kernel_size), tuple(output_size))


# ------------------------------------------------------------------ max unpooling
class _MaxUnpool(Op):
    """d unpool(x) = grad gathered at the indices"""
    _abstract = True
    _kernel: str = None  # torch's kernel of this rank, named in its complex error

    __slots__ = ("idx",)
    inputs = ("self", "indices")
    nattrs = 1

    @classmethod
    def forward(cls, ctx, self, indices, size):
        _no_complex(cls, self)
        if ctx is not None:
            ctx.idx = indices
        nd = cls._nd
        src = _planes(self, nd)
        out = np.zeros((src.shape[0], math.prod(size)), self.dtype, like=self)
        np.put_along_axis(out, indices.reshape(src.shape), src, axis=1)
        return out.reshape(self.shape[:-nd] + tuple(size))

    def backward(ctx, grad):
        return _GATHER[type(ctx)._nd].apply(grad, _wrap(ctx.idx, D.int64)), None


_UNPOOL = {nd: _ranked(_MaxUnpool, f"MaxUnpool{nd}DBackward0", nd, _kernel=f"max_unpool{nd}d") for nd in (2, 3)}


def max_unpool(input: Tensor, indices: Tensor, size: tuple) -> Tensor:
    """Each value of ``input`` at its flat position ``indices`` in zero planes of ``size`` (2 or 3 axes)."""
    return _UNPOOL[len(size)].apply(input, indices, tuple(size))
