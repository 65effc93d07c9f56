"""grid_sample and affine_grid (torch's grid_sampler_2d/3d and affine_grid_generator).

# NOTE [grid sampling as taps]
Every output cell of grid_sample is a weighted sum of input cells ("taps"): per spatial axis, the grid
coordinate becomes a source coordinate u (unnormalised; for bilinear/nearest also clipped or reflected by the
padding mode), and the axis contributes 1 (nearest: round half to even), 2 (bilinear: floor(u) and the next
cell, weights 1-f and f for f = u - floor(u)) or 4 (bicubic: floor(u)-1 .. floor(u)+2, Keys' cubic weights of
f; each tap index clipped or reflected by the padding mode) taps. A tap's weight is the product of its axes'
weights, zero where a tap falls outside the input under zeros padding. Which cells are read, and du/dgrid (the
unnormalising scale, zero where clipped, the sign of a reflection) are piecewise constant in the grid, so the
gradient only flows through the fractions f. The forward computes on arrays; the backward rebuilds the weights
in ember ops from ``f = grid * slope + constant`` (the same value, the same first derivative), so the
gradients are ember expressions and every order of derivative comes from the engine (torch differentiates
grid_sample twice too). Gathering and scattering the taps are the ``TapGather``/``TapScatter`` pair, each the
other's gradient.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._tensor import Tensor, _wrap
from ._op import NOT_YET, Op, linear, silent, unsupported
from .joining import stack

__all__ = ["grid_sampler", "affine_grid_generator"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)

_A = -0.75  # torch's bicubic coefficient


def _cubic(t, a: float = _A) -> tuple:
    """Keys' cubic-convolution weights of the taps at offsets -1, 0, 1, 2 for fractions ``t`` (arrays or tensors)."""
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731  (|x| <= 1)
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731  (1 < |x| < 2)
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_slopes(t, a: float = _A) -> tuple:
    """d/dt of ``_cubic``."""
    near = lambda x: (3 * (a + 2) * x - 2 * (a + 3)) * x  # noqa: E731
    far = lambda x: (3 * a * x - 10 * a) * x + 8 * a  # noqa: E731
    return far(t + 1), near(t), -near(1 - t), -far(2 - t)


def _axis_weights(f, mode: int) -> tuple:
    """Per-tap weights of one axis (mode 0 bilinear, 1 nearest, 2 bicubic)."""
    if mode == 0:
        return (1 - f, f)
    if mode == 1:
        return (f * 0 + 1,)
    return _cubic(f)


def _axis_slopes(f, mode: int) -> tuple:
    if mode == 0:
        return (f * 0 - 1, f * 0 + 1)
    if mode == 1:
        return (f * 0,)
    return _cubic_slopes(f)


def _clip(u, n: int):
    """Clipped to [0, n-1], and whether the clip leaves u's gradient (borders count as clipped, as torch)."""
    return np.clip(u, 0, n - 1), (u > 0) & (u < n - 1)


def _reflect(u, n: int, align: bool):
    """Reflected into the input's span (torch's reflect_coordinates): (value, d value / d u)."""
    lo2, hi2 = (0, 2 * (n - 1)) if align else (-1, 2 * n - 1)
    if lo2 == hi2:
        return np.zeros_like(u), np.zeros_like(u)
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = u - lo
    sign = np.where(x < 0, -1, 1).astype(u.dtype)
    x = np.abs(x)
    extra = np.fmod(x, span)
    even = np.floor(x / span) % 2 == 0
    return np.where(even, extra + lo, span - extra + lo).astype(u.dtype), np.where(even, sign, -sign)


def _pad_coord(u, n: int, padding: int, align: bool):
    """A source coordinate after the padding mode (0 zeros, 1 border, 2 reflection): (value, d value / d u)."""
    if padding == 0:
        return u, np.ones_like(u)
    slope = np.ones_like(u)
    if padding == 2:
        u, slope = _reflect(u, n, align)
    u, inside = _clip(u, n)
    return u, slope * inside


def _unnormalize(g: np.ndarray, n: int, align: bool, nd: int) -> np.ndarray:
    """Grid coordinates in [-1, 1] as source coordinates, rounded as torch's CPU kernels round them (the 2-d kernel
    is vectorized with a fused multiply-add; long double stands in for it): grid points on cell centres and
    borders fall on the same side as in torch, so one-sided gradients there agree."""
    dt = g.dtype.type
    if nd == 3:
        return ((g + 1) / 2) * dt(n - 1) if align else ((g + 1) * dt(n) - 1) / 2
    if align:
        return (g + 1) * dt((n - 1) / 2)
    wide = np.longdouble if _B.is_cpu_array(g) else np.float64  # CuPy has no long double (exact for float32)
    return ((g + 1).astype(wide) * wide(dt(n / 2)) - wide(0.5)).astype(dt)


def _cell(c, n: int) -> np.ndarray:
    """Tap coordinates as cell indices in [0, n-1]; a NaN coordinate (a NaN or infinite grid value) reads cell 0,
    its tap already invalid or its weight NaN, as torch's kernels."""
    return np.clip(np.nan_to_num(c, nan=0.0), 0, n - 1).astype(np.intp)


@silent  # infinite grid values: NaN coordinates, as torch's
def _taps(grid: np.ndarray, sizes: tuple, mode: int, padding: int, align: bool):
    """The taps of every output cell (NOTE [grid sampling as taps]).

    ``grid`` (N, L, nd) holds (x, y[, z]) per output cell, ``sizes`` the input's spatial sizes (D, H, W order).
    Returns per grid coordinate the fraction f and d u / d grid (N, L), the flat tap indices (N, K, L) into the
    spatial cells, and each tap's validity and per-axis tap numbers (for rebuilding weights)."""
    nd = len(sizes)
    dt = grid.dtype.type
    fracs, slopes, axis_idx, axis_ok = [], [], [], []
    for a in range(nd):  # grid coordinate a runs along spatial axis nd-1-a
        n = sizes[nd - 1 - a]
        g = grid[..., a]
        u = _unnormalize(g, n, align, nd)
        slope = _B.full(g.shape, dt((n - 1) / 2 if align else n / 2), g.dtype, like=g)
        if mode == 2:  # bicubic: taps from the unpadded coordinate, each tap index padded
            base = np.floor(u)
            fracs.append(u - base)
            idx, ok = [], []
            for j in range(4):
                c = base - 1 + j
                if padding == 0:
                    ok.append((c >= 0) & (c <= n - 1))
                else:
                    c = _pad_coord(c, n, padding, align)[0]
                    ok.append(_B.ones(c.shape, bool, like=c))
                idx.append(_cell(c, n))
        else:
            u, d = _pad_coord(u, n, padding, align)
            slope = slope * d
            if mode == 1:
                c = np.rint(u)
                fracs.append(np.zeros_like(u))
                cand = [c]
            else:
                c = np.floor(u)
                fracs.append(u - c)
                cand = [c, c + 1]
            ok = [(v >= 0) & (v <= n - 1) for v in cand]
            idx = [_cell(v, n) for v in cand]
        slopes.append(slope)
        axis_idx.append(idx)
        axis_ok.append(ok)
    combos = list(itertools.product(*(range(len(i)) for i in axis_idx)))  # tap numbers per coordinate
    flat = np.empty((grid.shape[0], len(combos), grid.shape[1]), np.intp, like=grid)
    valid = np.empty(flat.shape, bool, like=grid)
    for k, combo in enumerate(combos):
        f, ok = 0, True
        for a, t in enumerate(combo):
            f = f + axis_idx[a][t] * math.prod(sizes[nd - a:])
            ok = ok & axis_ok[a][t]
        flat[:, k], valid[:, k] = f, ok
    return fracs, slopes, flat, valid, combos


def _tap_products(per_axis: list, combos: list, valid, stack):
    """(N, K, L) products over axes of each tap's per-axis factors (arrays or tensors, (N, L) each), zero at
    invalid taps; ``stack`` joins the K (N, L) products along dim 1."""
    pieces = []
    for combo in combos:
        w = per_axis[0][combo[0]]
        for a in range(1, len(combo)):
            w = w * per_axis[a][combo[a]]
        pieces.append(w)
    return stack(pieces) * valid


def _gather_taps(x: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """(N, C, K*L) input cells at the tap indices of (N, K, L) ``flat``."""
    n, c = x.shape[:2]
    return np.take_along_axis(x.reshape(n, c, -1), flat.reshape(n, 1, -1), axis=2)


class _Taps(Op):
    """Base of the tap pair (NOTE [grid sampling as taps]): a gather of (N, C, size) cells at the flat (N, L)
    ``indices`` and the scatter-add back, each the other's backward (the indices are an integer input: no
    gradient). ``_kernel`` is the array work."""
    _abstract = True

    __slots__ = ("idx", "size")
    nattrs = 1
    inputs = ("self", "indices")
    _adjoint: type  # the other op of the pair

    @classmethod
    def forward(cls, ctx, self, indices, size):
        if ctx is not None:
            ctx.idx, ctx.size = indices, size
        return cls._kernel(self, indices, size)

    def backward(ctx, grad):
        return type(ctx)._adjoint.apply(grad, _wrap(ctx.idx, D.int64), ctx.size), None


class TapGather(_Taps):
    """d gather(x, idx) = scatter-add(grad, idx) (the taps of grid sampling)"""

    __slots__ = ()

    @staticmethod
    def _kernel(self, indices, size):
        return np.take_along_axis(self, indices[:, None, :], axis=2)


class TapScatter(_Taps):
    """d scatter-add(g, idx) = gather(grad, idx)"""

    __slots__ = ()

    @staticmethod
    def _kernel(self, indices, size):
        n, c, m = self.shape
        flat = indices[:, None, :] + (np.arange(n * c, like=indices).reshape(n, c, 1) * size)
        out = np.bincount(flat.ravel(), self.ravel(), n * c * size)
        return out.astype(self.dtype, copy=False).reshape(n, c, size)


TapGather._adjoint, TapScatter._adjoint = TapScatter, TapGather


class _GridSampler(Op):
    """d grid_sample(x, grid): x <- taps scattered, grid <- taps' weight slopes (NOTE [grid sampling as taps])"""
    _abstract = True

    __slots__ = ("geo",)
    nattrs = 3
    inputs = ("input", "grid")
    save = ("input", "grid")

    @staticmethod
    def forward(ctx, input, grid, mode, padding, align):
        if ctx is not None:
            ctx.geo = (mode, padding, align)
        n, c = input.shape[:2]
        out_shape = grid.shape[1:-1]
        g = grid.reshape(n, -1, grid.shape[-1])
        fracs, _, flat, valid, combos = _taps(g, input.shape[2:], mode, padding, align)
        w = _tap_products([_axis_weights(f, mode) for f in fracs], combos, valid, lambda p: np.stack(p, 1))
        vals = _gather_taps(input, flat).reshape(n, c, w.shape[1], -1)
        out = np.einsum("nckl,nkl->ncl", vals, w.astype(input.dtype, copy=False))
        return out.reshape((n, c) + out_shape)

    def backward(ctx, grad):
        x, grid = ctx.saved_tensors
        mode, padding, align = ctx.geo
        n, c = x.shape[:2]
        nd = grid.shape[-1]
        g = grid.reshape(n, -1, nd)
        fracs, slopes, flat, valid, combos = _taps(g._data, tuple(x.shape[2:]), mode, padding, align)
        # the fractions as ember values of the grid: same value, d f / d grid = slope (piecewise constant)
        fe = []
        for a in range(nd):
            ga, sl = g[..., a], _wrap(slopes[a], g._dtype)
            fe.append(ga * sl + _wrap(fracs[a] - g._data[..., a] * slopes[a], g._dtype))

        def stk(pieces):
            return stack(pieces, 1)

        ok = _wrap(valid.astype(g._data.dtype), g._dtype)
        idx = _wrap(flat.reshape(n, -1), D.int64)
        size = math.prod(x.shape[2:])
        gl = grad.reshape(n, c, 1, -1)
        gx = gg = None
        per_axis = [_axis_weights(f, mode) for f in fe]
        if ctx.needs_input_grad[0]:
            w = _tap_products(per_axis, combos, ok, stk)  # (N, K, L)
            parts = (gl * w.unsqueeze(1)).reshape(n, c, -1)
            gx = TapScatter.apply(parts, idx, size).reshape(x.shape)
        if ctx.needs_input_grad[1]:
            vals = TapGather.apply(x.reshape(n, c, size), idx, size).reshape(n, c, len(combos), -1)
            gv = (gl * vals).sum(1)  # (N, K, L): d out / d (tap weight), summed over channels
            cols = []
            for a, f in enumerate(fe):  # d weight / d f_a: axis a's slopes times the other axes' weights
                dwa = _tap_products(per_axis[:a] + [_axis_slopes(f, mode)] + per_axis[a + 1:], combos, ok, stk)
                cols.append((gv * dwa).sum(1) * _wrap(slopes[a], g._dtype))
            gg = stack(cols, -1).reshape(grid.shape)
        return gx, gg


_GRID_SAMPLER = {nd: type(f"GridSampler{nd}D", (_GridSampler,),  # torch has no forward derivative for either
                          {"__slots__": (), "jvp": unsupported(f"grid_sampler_{nd}d", NOT_YET)}) for nd in (2, 3)}


def grid_sampler(input: Tensor, grid: Tensor, mode: int, padding_mode: int, align_corners: bool) -> Tensor:
    """Sample (N, C, *spatial) ``input`` at the (N, *out, nd) ``grid`` locations in [-1, 1] (checked inputs)."""
    return _GRID_SAMPLER[grid.dim() - 2].apply(input, grid, int(mode), int(padding_mode), bool(align_corners))


# ------------------------------------------------------------------ affine grids
def _linspace(steps: int, align: bool, dtype) -> np.ndarray:
    """torch's base coordinates of one axis (bit for bit): -1..1, pulled in by (n-1)/n without align_corners; [0]
    for one."""
    if steps <= 1:
        return np.zeros(max(steps, 0), dtype)
    # torch's linspace: a step in the dtype, each point start + step * i (from the end past the halfway point)
    # with one rounding (a fused multiply-add; long double stands in for it)
    step = np.longdouble(dtype(dtype(2.0) / dtype(steps - 1)))
    i = np.arange(steps)
    r = np.where(i < steps // 2, -1 + step * i, 1 - step * (steps - 1 - i)).astype(dtype)
    return r * dtype(steps - 1) / dtype(steps) if not align else r  # (two roundings, as torch's range * (n-1) / n)


def _base_grid(size: tuple, align: bool, dtype) -> np.ndarray:
    """(*spatial, nd + 1) homogeneous coordinates (x, y[, z], 1) of an output of ``size`` (N, C, *spatial)."""
    spatial = size[2:]
    nd = len(spatial)
    base = np.ones(tuple(spatial) + (nd + 1,), dtype)
    for a in range(nd):  # coordinate a runs along spatial axis nd-1-a
        ax = nd - 1 - a
        base[..., a] = _linspace(spatial[ax], align, dtype).reshape([-1 if i == ax else 1 for i in range(nd)])
    return base


class AffineGridGenerator(Op):
    """d (base @ theta^T) = grad^T @ base"""

    __slots__ = ("base",)
    nattrs = 2
    inputs = ("theta",)

    @staticmethod
    def forward(ctx, theta, size, align_corners):
        base = _B.like(theta, _base_grid(size, align_corners, theta.dtype.type))  # a constant, on theta's device
        if ctx is not None:
            ctx.base = base
        n, nd = theta.shape[0], len(size) - 2
        out = base.reshape(-1, nd + 1) @ theta.transpose(0, 2, 1)  # (N, cells, nd)
        return out.reshape((n,) + tuple(size[2:]) + (nd,))

    jvp = linear

    def backward(ctx, grad):
        base = ctx.base
        nd = base.shape[-1] - 1
        g = grad.reshape(grad.shape[0], -1, nd)
        return g.transpose(1, 2) @ _wrap(base.reshape(-1, nd + 1), grad._dtype)


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """(N, *spatial, nd) sampling grid of the affine maps ``theta`` (N, nd, nd+1) for an output of ``size``."""
    return AffineGridGenerator.apply(theta, tuple(int(s) for s in size), bool(align_corners))
