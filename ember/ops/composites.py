"""torch functions composed from ember ops: their gradients (and higher ones) come from the ops they use.

Statistics (aminmax, mode, nanmedian, quantile, cov, corrcoef), scans and differences (logcumsumexp, diff, gradient,
trapezoid), combinatorics (cartesian_prod, combinations, block_diag, vander, tril/triu_indices), distances (cdist,
pdist, renorm), matrix_exp, the *_scatter family (a clone written through a view), counting (isin, bincount, histc,
histogram, unique_consecutive, unravel_index), window functions and triangular/Cholesky solves. Integer results and
index computations are NumPy; values that carry gradients are always picked or combined by ember ops.
"""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from .. import _args
from .. import _dtype as D
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import _CPP_NAMES, Tensor, _all_examples, _wrap, _wrap_dim
from .. import return_types as RT
from ._op import Op, refuse_tangents
from ._op import const as _const
from . import reduction as _R
from .complex_numbers import complex as _complex, refuse_complex_grad

__all__ = [
    "aminmax", "mode", "nanmedian", "quantile", "nanquantile", "msort", "unique_consecutive", "logcumsumexp", "diff",
    "gradient", "trapezoid", "trapz", "cumulative_trapezoid", "cartesian_prod", "combinations", "block_diag", "vander",
    "cov", "corrcoef", "tril_indices", "triu_indices", "isin", "bincount", "histc", "histogram", "cdist", "pdist",
    "renorm", "matrix_exp", "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter",
    "index_reduce", "put", "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
    "unravel_index", "cholesky_solve", "cholesky_inverse", "triangular_solve", "qr",
]


def _long(arr) -> Tensor:
    return _wrap(np.asarray(arr, np.int64), D.int64)


def _ember():
    import ember

    return ember


# ---------------------------------------------------------------- statistics
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False):
    """(min, max) over ``dim`` or the whole tensor (torch.return_types.aminmax)."""
    if input._dtype.is_complex:
        raise _R.complex_refused("aminmax_cpu", input._data.dtype)
    if input.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is None:
        lo, hi = input.amin(), input.amax()
        if keepdim:
            shape = (1,) * input.dim()
            lo, hi = lo.reshape(shape), hi.reshape(shape)
        return RT.aminmax(lo, hi)
    return RT.aminmax(input.amin(dim, keepdim), input.amax(dim, keepdim))


def _mode_idx(a: np.ndarray, d: int, _=None) -> np.ndarray:
    """Index (keepdim shape) of the last occurrence of the most frequent value along ``d`` (smallest on ties)."""
    if a.shape[d] == 0:
        raise _R._empty_dim_error("mode", d)
    moved = np.moveaxis(a, d, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        vals, counts = np.unique(row, return_counts=True)
        best = vals[np.argmax(counts)]  # np.unique sorts: argmax takes the smallest of the most frequent
        idx[r] = len(row) - 1 - int(np.argmax(row[::-1] == best))
    return np.expand_dims(idx.reshape(moved.shape[:-1]), d)


def _nan_lower_median_idx(a: np.ndarray, d: int, _=None) -> np.ndarray:
    """Index (keepdim shape) of the lower median of the non-NaN values along ``d`` (the first element if all NaN)."""
    if a.shape[d] == 0:
        raise _R._empty_dim_error("median", d)
    order = np.argsort(a, axis=d, kind="stable")  # NaN sorts last
    valid = np.sum(~np.isnan(a), axis=d, keepdims=True)
    return np.take_along_axis(order, np.maximum(valid - 1, 0) // 2, d)


# index rules of the _Selection family (reduction.py): values gathered at computed indices, batched by vmap's dim rule
Mode = _R._selection("Mode", _mode_idx, torch_name="ModeBackward0", result_type=RT.mode)
NanmedianDim = _R._selection("NanmedianDim", _nan_lower_median_idx, torch_name="NanmedianBackward1",
                             result_type=RT.nanmedian, complex_error="median_out")


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` (the smallest on ties) and the index of its last occurrence."""
    return Mode.run(input, dim, keepdim)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median ignoring NaN (NaN only when all are NaN); with ``dim``: (values, indices)."""
    if dim is None and input._dtype.is_complex:
        raise _R.complex_refused("median_cpu", input._data.dtype)
    if dim is None:
        if input.numel() == 0:
            return input.reshape(-1).sum() * float("nan")  # torch: NaN for an empty input
        return NanmedianDim.run(input.reshape(-1), 0, False).values
    return NanmedianDim.run(input, dim, keepdim)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if not scalar_q and q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    qa = np.asarray(q, np.float64) if scalar_q else _all_examples(q)
    if np.any((qa < 0) | (qa > 1)):
        if scalar_q:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {float(q)}")
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    qt = _const(qa.reshape(-1)) if scalar_q else q.detach().to(D.float64).reshape(-1)
    nq = qt.shape[0]
    x = input.reshape(-1) if dim is None else input
    if x.dim() == 0:
        x = x.reshape(1)
    d = 0 if dim is None else _wrap_dim(dim, max(input.dim(), 1))
    if x.shape[d] == 0:
        raise IndexError(f"{name}() input tensor must be non-empty")
    # ember ops only from here (no reads of values), so vmap batches it
    srt = x.movedim(d, -1).sort(-1).values  # NaN last
    n = srt.shape[-1]
    rest = tuple(srt.shape[:-1])
    nan_count = srt.isnan().sum(-1, keepdim=True)  # (..., 1)
    valid = n - nan_count if ignore_nan else n
    pos = qt.reshape((nq,) + (1,) * srt.dim()) * (valid - 1)  # (nq, ..., 1)
    if interpolation == "nearest":
        pos = pos.round()
    bad = (nan_count == n) if ignore_nan else (nan_count > 0)
    pos = _ember().where(bad, float(n - 1), pos)  # a slice giving NaN takes its last (NaN) element, as torch's does
    pos = pos.expand((nq,) + rest + (1,))
    lo = pos.floor().long().clamp(0, n - 1)
    hi = pos.ceil().long().clamp(0, n - 1)
    srt_b = srt.unsqueeze(0).expand((nq,) + tuple(srt.shape))
    v_lo = srt_b.gather(-1, lo)
    if interpolation in ("lower", "nearest"):
        res = v_lo
    else:
        v_hi = srt_b.gather(-1, hi)
        if interpolation == "higher":
            res = v_hi
        elif interpolation == "midpoint":
            res = (v_lo + v_hi) * 0.5
        else:
            res = v_lo + (v_hi - v_lo) * (pos - lo).to(srt._dtype)
    res = res.squeeze(-1)  # (nq, ...rest)
    if keepdim:
        if dim is None:
            res = res.reshape((nq,) + (1,) * input.dim())
        else:
            res = res.unsqueeze(d + 1)
    return res[0] if scalar_q else res


def quantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear",
             out=None) -> Tensor:
    """The q-th quantiles along ``dim`` (NaN where a slice holds NaN)."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear",
                out=None) -> Tensor:
    """quantile ignoring NaN (NaN only for slices of NaN only)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def msort(input: Tensor, *, out=None) -> Tensor:
    """Sorted along dim 0."""
    return input.sort(0).values


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """Covariance of the variables in the rows of ``input`` (observations in columns)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not x._dtype._differentiable:
        x = x.to(D.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        wsum = n
        avg = x.mean(1, keepdim=True)
        norm = n - correction
        xc = x - avg
        c = xc @ xc.mH  # (the conjugate transpose: complex variables)
    else:
        wdt = x.dtype.to_real()  # (real weights, also for complex variables)
        w = w.to(wdt)
        wsum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum
        if aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * aweights.to(wdt)).sum() / wsum
        xc = x - avg
        c = (xc * w) @ xc.mH
    c = c / (norm.clamp_min(0) if isinstance(norm, Tensor) else float(max(norm, 0)))
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    sd = d.sqrt()
    c = c / sd.unsqueeze(1) / sd.unsqueeze(0)
    if c._dtype.is_complex:  # each part clipped, as torch
        return _complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


# ---------------------------------------------------------------- scans, differences, integration
def logcumsumexp(input: Tensor, dim: int, *, out=None) -> Tensor:
    """log(cumsum(exp(input))) along ``dim``, stable for any finite input (a log-add scan)."""
    em = _ember()
    d = _wrap_dim(dim, input.dim())
    x = input.movedim(d, -1) if input.dim() else input.reshape(1)
    n = x.shape[-1]
    if n == 1:  # as a one-term logsumexp, so the gradient stays in the input's graph
        x = x.unsqueeze(-1).logsumexp(-1)
        return x.movedim(-1, d) if input.dim() else x.reshape(())
    shift = 1
    while shift < n:
        x = em.cat([x[..., :shift], em.logaddexp(x[..., shift:], x[..., :-shift])], -1)
        shift *= 2
    return x.movedim(-1, d)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None,
         *, out=None) -> Tensor:
    """n-th forward difference along ``dim`` (after prepending/appending)."""
    em = _ember()
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _wrap_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    x = em.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = (a != b) if x._dtype is D.bool else a - b
    return x


def gradient(input: Tensor, *, spacing=None, dim=None, edge_order: int = 1) -> tuple:
    """Estimated derivative along each of ``dim`` by central differences (one-sided at the edges)."""
    dims = list(range(input.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = [_wrap_dim(d, input.dim()) for d in dims]
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (int, float)):
        spacings = [float(spacing)] * len(dims)
    else:
        spacings = list(spacing)
        if len(spacings) == 1 and len(dims) > 1:
            spacings = spacings * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    x = input if input._dtype._differentiable else input.to(D.get_default_dtype())
    out = []
    for d, h in zip(dims, spacings):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        if isinstance(h, Tensor):
            out.append(_gradient_coords(x, d, h, edge_order))
            continue
        h = float(h.item() if isinstance(h, Tensor) else h)
        nar = x.narrow
        interior = (nar(d, 2, n - 2) - nar(d, 0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (nar(d, 1, 1) - nar(d, 0, 1)) / h
            last = (nar(d, n - 1, 1) - nar(d, n - 2, 1)) / h
        else:
            first = (-1.5 * nar(d, 0, 1) + 2 * nar(d, 1, 1) - 0.5 * nar(d, 2, 1)) / h
            last = (0.5 * nar(d, n - 3, 1) - 2 * nar(d, n - 2, 1) + 1.5 * nar(d, n - 1, 1)) / h
        out.append(_ember().cat([first, interior, last], d))
    return tuple(out)


def _gradient_coords(x: Tensor, d: int, coords: Tensor, edge_order: int) -> Tensor:
    """Non-uniform spacing given by coordinates along ``d`` (second-order interior formula)."""
    em = _ember()
    n = x.shape[d]
    shape = [1] * x.dim()
    shape[d] = -1
    c = coords.to(x.dtype)
    hs = (c[1:] - c[:-1])
    a, b = hs[:-1].reshape(shape), hs[1:].reshape(shape)
    nar = x.narrow
    interior = ((a * a * nar(d, 2, n - 2) - b * b * nar(d, 0, n - 2) + (b * b - a * a) * nar(d, 1, n - 2))
                / (a * b * (a + b)))
    if edge_order != 1:
        raise NotImplementedError("torch.gradient with coordinate spacing and edge_order=2 is not implemented in ember")
    first = (nar(d, 1, 1) - nar(d, 0, 1)) / hs[0]
    last = (nar(d, n - 1, 1) - nar(d, n - 2, 1)) / hs[-1]
    return em.cat([first, interior, last], d)


def _spacing(x: Tensor, ndim: int, d: int, dim: int) -> Tensor:
    """Widths between the sample points ``x`` along dim ``d`` of an ``ndim``-d input (a 1-d ``x`` broadcasts)."""
    if x.dim() != 1:
        return diff(x, dim=dim)
    shape = [1] * ndim
    shape[d] = -1
    return (x[1:] - x[:-1]).reshape(shape)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float = 1, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim`` (sample points ``x`` or spacing ``dx``)."""
    d = _wrap_dim(dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    pair = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))
    if x is not None:
        h = _spacing(x, y.dim(), d, dim)
        return (pair * h).sum(d) / 2
    return pair.sum(d) * ((1.0 if dx is None else dx) / 2)


def trapz(y: Tensor, x=None, *, dx: float = 1, dim: int = -1) -> Tensor:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return trapezoid(y, dx=x, dim=dim)
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float = 1, dim: int = -1) -> Tensor:
    """Running trapezoidal integral along ``dim`` (one element shorter)."""
    d = _wrap_dim(dim, y.dim())
    n = y.shape[d]
    pair = (y.narrow(d, 1, max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0)))
    if x is not None:
        h = _spacing(x, y.dim(), d, dim)
        return (pair * h / 2).cumsum(d)
    return (pair * ((1.0 if dx is None else dx) / 2)).cumsum(d)


# ---------------------------------------------------------------- combinatorics
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-d tensor, as rows."""
    em = _ember()
    if len(tensors) == 1:
        return tensors[0]
    grids = em.meshgrid(*tensors, indexing="ij")
    return em.stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-``r`` combinations of the elements of a 1-d tensor, as rows."""
    em = _ember()
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _wrap(np.empty((0,), input._data.dtype), input._dtype)
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    if idx.shape[0] == 0:
        return _wrap(np.empty((0, r), input._data.dtype), input._dtype) if r > 1 else \
            _wrap(np.empty((0,), input._data.dtype), input._dtype)
    out = em.stack([input[_long(idx[:, k])] for k in range(r)], 1)
    return out.reshape(-1) if r == 1 else out


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the given 0-d, 1-d and 2-d tensors."""
    em = _ember()
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        mats.append(t.reshape(1, -1) if t.dim() == 1 else t.reshape(1, 1) if t.dim() == 0 else t)
    if not mats:
        return _wrap(np.empty((1, 0), np.float32), D.float32)
    dt = mats[0]._dtype
    for m in mats[1:]:
        dt = D.promote_types(dt, m._dtype)
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = []
        if left:
            parts.append(em.zeros(r, left, dtype=dt))
        parts.append(m.to(dt))
        if cols - left - c:
            parts.append(em.zeros(r, cols - left - c, dtype=dt))
        rows.append(em.cat(parts, 1) if len(parts) > 1 else parts[0])
        left += c
    return em.cat(rows, 0)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """Columns x**(N-1) ... x**0 (or increasing powers)."""
    em = _ember()
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    xx = x if x._dtype is not D.bool else x.to(D.int64)
    if n == 0:
        return _wrap(np.empty((x.shape[0], 0), xx._data.dtype), xx._dtype)
    ones = em.ones(x.shape[0], 1, dtype=xx.dtype)
    cols = em.cat([ones, xx.unsqueeze(1).expand(x.shape[0], n - 1)], 1).cumprod(1) if n > 1 else ones
    return cols if increasing else cols.flip(1)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The (2, k) row/column indices of the lower triangle of a row x col matrix."""
    r, c = np.tril_indices(row, offset, col)
    return _wrap(np.stack([r, c]).astype((dtype or D.int64).np), dtype or D.int64).requires_grad_(requires_grad)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    r, c = np.triu_indices(row, offset, col)
    return _wrap(np.stack([r, c]).astype((dtype or D.int64).np), dtype or D.int64).requires_grad_(requires_grad)


# ---------------------------------------------------------------- counting
def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a number)."""
    for x in (elements, test_elements):
        if isinstance(x, Tensor) and x._dtype.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {x._dtype._scalar_name}")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _wrap(np.asarray(np.isin(a, b, invert=invert)), D.bool)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts (or summed weights) of each non-negative integer in a 1-d tensor."""
    a = input._data
    if a.dtype.kind not in "iu":  # (the kernel's dispatch: integers only, before its shape check)
        raise _R.complex_refused("bincount_cpu", a.dtype)
    if a.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _long(np.bincount(a, minlength=minlength))
    w = weights._data
    if w.shape != a.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dt = w.dtype if w.dtype.kind == "f" else np.float64
    return _const(np.bincount(a, w.astype(np.float64), minlength=minlength).astype(out_dt))


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *, out=None) -> Tensor:  # noqa: A002
    """Histogram of ``bins`` equal bins over [min, max] (data range when equal); outside values are ignored."""
    a = input._data
    if not input._dtype.is_floating_point:  # (with no range given, the range's aminmax refuses first)
        raise _R.complex_refused("aminmax_cpu" if min == max and a.dtype.kind == "c" else "histogram_cpu", a.dtype)
    if input._dtype._reduced:
        a = a.astype(np.float32)
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got " + str(bins) + " for bins")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(np.nanmin(a)), float(np.nanmax(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    counts, _ = np.histogram(a[~np.isnan(a)], bins=bins, range=(lo, hi))
    return _wrap(counts.astype(input._dtype.np), input._dtype)


def _cpp(dt: D.dtype) -> str:
    return _CPP_NAMES[dt.name][0]


def histogram(input: Tensor, bins=100, *, range=None, weight: Tensor | None = None, density: bool = False,  # noqa: A002
              out=None):
    """(hist, bin_edges): counts (or weights, or density) in ``bins`` (a count or the edges tensor)."""
    a = input._data.reshape(-1)
    dt = input._dtype
    if isinstance(bins, Tensor) and bins._dtype != dt:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                           f"input with dtype {_cpp(dt)} and bins for dimension 0 with dtype "
                           f"{_cpp(bins._dtype)}")
    if weight is not None and weight._dtype != dt:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_cpp(dt)}), and "
                           f"weight({_cpp(weight._dtype)})")
    if range is None and not isinstance(bins, Tensor):  # the range's kernel: float and double only
        if dt not in (D.float32, D.float64):
            raise _R.complex_refused("histogramdd", input._data.dtype)
    elif not dt.is_floating_point:
        raise _R.complex_refused("histogram_cpu", input._data.dtype)
    edges = bins._data.astype(np.float64) if isinstance(bins, Tensor) else int(bins)
    rng = None if range is None else (float(range[0]), float(range[1]))
    if rng is None and not isinstance(edges, np.ndarray) and a.size:
        rng = (float(a.min()), float(a.max()))
    w = None if weight is None else weight._data.reshape(-1).astype(np.float64)
    hist, e = np.histogram(a.astype(np.float64), bins=edges, range=rng, weights=w, density=density)
    return RT.histogram(_wrap(hist.astype(dt.np), dt), _wrap(e.astype(dt.np), dt))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``)."""
    if input._dtype.is_complex:
        raise _R.complex_refused("unique" if dim is None else "unique_dim", input._data.dtype)
    a = input._data
    if dim is None:
        flat = a.reshape(-1)
        change = np.ones(flat.shape[0], bool)
        change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(a.shape)
    else:
        d = _wrap_dim(dim, a.ndim)
        moved = np.moveaxis(a, d, 0)
        change = np.ones(moved.shape[0], bool)
        if moved.shape[0] > 1:
            change[1:] = np.any((moved[1:] != moved[:-1]).reshape(moved.shape[0] - 1, -1), axis=1)
        vals = np.moveaxis(moved[change], 0, d)
        inv = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, change.shape[0]))
    res = [_wrap(np.ascontiguousarray(vals), input._dtype)]
    if return_inverse:
        res.append(_long(inv))
    if return_counts:
        res.append(_long(counts))
    return res[0] if len(res) == 1 else tuple(res)


def unravel_index(indices, shape) -> tuple:
    """The coordinates in ``shape`` of flat ``indices`` (a tuple of tensors)."""
    idx = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {D.from_numpy_dtype(idx.dtype)}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    n = int(np.prod(shape))
    coords = np.unravel_index(np.mod(idx, n) if n else idx, shape)  # torch wraps out-of-range indices
    return tuple(_long(c) for c in coords)


# ---------------------------------------------------------------- distances and norms
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between the rows of x1 and x2 (batched)."""
    from ..linalg import vector_norm

    for name, x in (("X1", x1), ("X2", x2)):
        if x._dtype.is_complex:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {x._dtype._scalar_name}")

    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mm = compute_mode == "use_mm_for_euclid_dist" or (compute_mode == "use_mm_for_euclid_dist_if_necessary"
                                                      and (x1.shape[-2] > 25 or x2.shape[-2] > 25))
    refuse_tangents("_euclidean_dist" if p == 2 and mm else "_cdist_forward", x1, x2)  # torch's kernel names
    if p == 2 and mm and x1._dtype.is_floating_point and x1._dtype is x2._dtype:
        # torch's matrix-product form: GEMMs instead of every difference (viewed back, as torch's graph)
        from .linalg import EuclideanDist

        out = EuclideanDist.apply(x1, x2)
        return out.view(out.shape)
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """Distances between every pair of rows i < j, in row-major order of the pairs."""
    from ..linalg import vector_norm

    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input._dtype.is_complex:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    refuse_tangents("_pdist_forward", input)
    i, j = np.triu_indices(input.shape[0], 1)
    return vector_norm(input[_long(i)] - input[_long(j)], p, dim=-1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``."""
    from ..linalg import vector_norm

    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _wrap_dim(dim, input.dim())
    others = [k for k in range(input.dim()) if k != d]
    norm = vector_norm(input, p, dim=others, keepdim=True) if others else input.abs()
    factor = _ember().where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


def matrix_exp(input: Tensor) -> Tensor:
    """e**A of square matrices A (batched): scaling and squaring around a degree-18 Taylor polynomial."""
    em = _ember()
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{input.shape[-2] if input.dim() >= 2 else 1} by {input.shape[-1] if input.dim() else 1} matrices")
    n = input.shape[-1]
    # one scaling for the whole batch (under vmap: every example's), from the largest 1-norm of a row
    norm = float(np.max(np.abs(_all_examples(input)).sum(-1))) if input.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm / 0.5)))) if norm > 0.5 and math.isfinite(norm) else 0
    X = input / (2.0 ** s) if s else input
    eye = em.eye(n, dtype=input.dtype)
    term, total = eye, eye
    for k in range(1, 19):
        term = term @ X / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


# ---------------------------------------------------------------- *_scatter: a clone written through a view
def _scatter_through(input: Tensor, src: Tensor, view) -> Tensor:
    out = input.clone()
    target = view(out)
    if isinstance(src, Tensor) and tuple(src.shape) != tuple(target.shape):  # exact sizes, as torch (no broadcast)
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(target.shape)}")
    target.copy_(src)
    return out


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    refuse_complex_grad("select_scatter", input, src)
    return _scatter_through(input, src, lambda t: t.select(dim, index))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    from .._aten import _slice

    refuse_complex_grad("slice_scatter", input, src)
    return _scatter_through(input, src, lambda t: _slice(t, dim, start, end, step))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _scatter_through(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def as_strided_scatter(input: Tensor, src: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    from .strided import as_strided

    if not input.is_contiguous():
        input = input.contiguous()
    off = 0 if storage_offset is None else storage_offset
    return _scatter_through(input, src, lambda t: as_strided(t, size, stride, off))


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """Reduce (prod, mean, amax, amin) the slices of ``source`` into ``input`` at ``index`` along ``dim``."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    refuse_tangents("index_reduce", input, source)
    if input._dtype.is_complex or source._dtype.is_complex:
        if reduce in ("amax", "amin"):
            raise _R.complex_refused("maximum_cpu" if reduce == "amax" else "minimum_cpu",
                                     np.result_type(input._data, source._data))
        if not include_self:
            raise _R.complex_refused("index_reduce_func_exclude_input_init", np.result_type(input._data, source._data))
        refuse_complex_grad("index_reduce", input, source)
    d = _wrap_dim(dim, max(input.dim(), 1))
    if isinstance(index, Tensor) and type(index._data) is np.ndarray:  # (a batched index: checked per example)
        from .indexing import _check_bounds

        _check_bounds(index._data.reshape(-1), input.shape[d] if input.dim() else 1, "index_reduce", d)
    shape = [1] * source.dim()
    if source.dim():
        shape[d] = -1
    idx = index.reshape(shape).expand(*source.shape) if source.dim() else index
    return input.scatter_reduce(d, idx, source, reduce, include_self=include_self)


def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """Tensor.index_reduce_: ``index_reduce`` written into ``input``."""
    from ._inplace import inplace

    refuse_tangents("index_reduce_", input, source)
    return inplace(input, index_reduce, dim, index, source, reduce, include_self=include_self)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with the elements at flat ``index`` (row-major) set to (or, accumulate, added) ``source``."""
    n = input.numel()
    idx = index._data.reshape(-1)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    flat = input.reshape(-1).index_put((index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


# ---------------------------------------------------------------- window functions
def _window(name: str, window_length: int, periodic: bool, dtype, fn) -> Tensor:
    dt = dtype or D.get_default_dtype()
    if dt.is_complex:  # torch builds windows from an arange in the dtype, which has no complex kernel
        raise _R.complex_refused("arange_cpu", dt.np)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window length, got window_length={window_length}")
    if window_length == 0:
        return _wrap(np.empty(0, dt.np), dt)
    if window_length == 1:
        return _wrap(np.ones(1, dt.np), dt)
    m = window_length + 1 if periodic else window_length
    w = fn(np.arange(m, dtype=np.float64), m)
    return _wrap(w[:window_length].astype(dt.np), dt)


def _cosine_sum(*coefs):
    def fn(k, m):
        return sum(((-1) ** i) * c * np.cos(2 * math.pi * i * k / (m - 1)) for i, c in enumerate(coefs))
    return fn


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    return _window("hann_window", window_length, periodic, dtype, _cosine_sum(0.5, 0.5)).requires_grad_(requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *, dtype=None,
                   layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", window_length, periodic, dtype,
                   _cosine_sum(alpha, beta)).requires_grad_(requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", window_length, periodic, dtype,
                   _cosine_sum(0.42, 0.5, 0.08)).requires_grad_(requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    def fn(k, m):
        return 1 - np.abs(2 * k / (m - 1) - 1)
    return _window("bartlett_window", window_length, periodic, dtype, fn).requires_grad_(requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    from ._special import i0

    def fn(k, m):
        r = 2 * k / (m - 1) - 1
        return i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / i0(np.array([float(beta)]))[0]
    return _window("kaiser_window", window_length, periodic, dtype, fn).requires_grad_(requires_grad)


# ---------------------------------------------------------------- triangular and Cholesky solves, qr
def _triangle(A: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    T = A.triu() if upper else A.tril()
    if unitriangular:
        n = A.shape[-1]
        eye = _ember().eye(n, dtype=A.dtype)
        T = T * (1 - eye) + eye
    return T


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False,
                     *, out=None):
    """(solution X of op(T) X = input, a copy of A) with T the triangle of A (torch.return_types.triangular_solve)."""
    T = _triangle(A, upper, unitriangular)
    lower = not upper
    if transpose:
        T, lower = T.mT, upper
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(A.shape[:-2]))
    coefficient = A.expand(*batch, *A.shape[-2:]).clone() if batch else A.clone()
    return RT.triangular_solve(_substitute(T, input, lower), coefficient)


def _substitute(T: Tensor, b: Tensor, lower: bool) -> Tensor:
    """X with T X = b for triangular T by forward/back substitution, one row of ember ops at a time (a zero on the
    diagonal gives inf/nan as torch's, no error)."""
    em = _ember()
    n = T.shape[-1]
    batch = np.broadcast_shapes(tuple(b.shape[:-2]), tuple(T.shape[:-2]))
    T = T.expand(*batch, n, n)
    b = b.expand(*batch, *b.shape[-2:])
    rows: list = [None] * n
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        acc = b[..., i, :]
        done = [j for j in (range(i) if lower else range(i + 1, n))]
        if done:
            xs = em.stack([rows[j] for j in done], -2)  # (..., k, m)
            acc = acc - (T[..., i, done].unsqueeze(-2) @ xs).squeeze(-2)
        rows[i] = acc / T[..., i, i].unsqueeze(-1)
    if n == 0:
        return b * 1
    return em.stack(rows, -2)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """X with (L L^H) X = input for the Cholesky factor L = ``input2`` (upper: U^H U)."""
    from ..linalg import solve

    T = _factor(input2, upper)
    A = T.mH @ T if upper else T @ T.mH
    return solve(A, input)


def _factor(L: Tensor, upper: bool) -> Tensor:
    """The triangle of ``L`` as the value, ``L`` itself for the gradient (torch's derivative is dense)."""
    other = L - (L.triu() if upper else L.tril())
    return L - other.detach()


def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """The inverse of L L^H (upper: U^H U) from its Cholesky factor L = ``input``."""
    from ..linalg import inv

    T = _factor(input, upper)
    return inv(T.mH @ T if upper else T @ T.mH)


def qr(input: Tensor, some: bool = True, *, out=None):
    """(Q, R) of the reduced (some=True) or complete QR decomposition (torch.return_types.qr)."""
    from ..linalg import qr as linalg_qr

    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return RT.qr(Q, R)


# ---------------------------------------------------------------- LU with partial pivoting
__all__ += ["lu", "lu_unpack", "lu_solve"]


def _pivots(a: np.ndarray) -> np.ndarray:
    """LAPACK's 1-based row interchanges (ipiv) of partial pivoting, per matrix of a batch (..., m, n)."""
    work = np.array(a, np.complex128 if a.dtype.kind == "c" else np.float64, copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    piv = np.empty(a.shape[:-2] + (k,), np.int32)
    for j in range(k):
        col = work[..., j:, j]
        col = np.abs(col.real) + np.abs(col.imag) if col.dtype.kind == "c" else np.abs(col)  # LAPACK's i?amax
        p = (np.argmax(col, axis=-1) + j) if col.shape[-1] else np.full(a.shape[:-2], j)
        piv[..., j] = p + 1
        rows_j = np.take_along_axis(work, np.full(a.shape[:-2] + (1, n), j), -2)
        rows_p = np.take_along_axis(work, p[..., None, None].repeat(n, -1), -2)
        np.put_along_axis(work, np.full(a.shape[:-2] + (1, n), j), rows_p, -2)
        np.put_along_axis(work, p[..., None, None].repeat(n, -1), rows_j, -2)
        pivot = work[..., j:j + 1, j:j + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            factors = work[..., j + 1:, j:j + 1] / pivot
        work[..., j + 1:, :] -= factors * work[..., j:j + 1, :]
    return piv


def _permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """perm with (P^T A) = A[perm]: the row order the interchanges produce."""
    perm = np.broadcast_to(np.arange(m), piv.shape[:-1] + (m,)).copy()
    for j in range(piv.shape[-1]):
        p = piv[..., j].astype(np.int64) - 1
        a = perm[..., j].copy()
        b = np.take_along_axis(perm, p[..., None], -1)[..., 0]
        perm[..., j] = b
        np.put_along_axis(perm, p[..., None], a[..., None], -1)
    return perm


class LuPivots(Op):
    """LAPACK's 1-based pivots of partial pivoting (int32, no gradient); any leading batch dims."""

    __slots__ = ()
    _name = "LuPivots"

    @staticmethod
    def forward(ctx, self):
        return _pivots(self)

    def backward(ctx, grad):  # pragma: no cover - integer output
        return None


class LuPermutation(Op):
    """The row order (int64) that ``m``-row pivots produce; any leading batch dims."""

    __slots__ = ()
    nattrs = 1
    _name = "LuPermutation"

    @staticmethod
    def forward(ctx, piv, m):
        return _permutation(piv, m)

    def backward(ctx, grad):  # pragma: no cover - integer output
        return None


def _rows(A: Tensor, perm: Tensor) -> Tensor:
    """``A``'s rows in the order ``perm`` (int64, leading dims as A's)."""
    return A.gather(-2, perm.unsqueeze(-1).expand(tuple(perm.shape) + (A.shape[-1],)))


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """(LU, pivots[, infos]): L (unit lower, below the diagonal) and U in one matrix with P^T A = L U, pivots as
    LAPACK's 1-based interchanges. Pivots come from NumPy; L and U are computed by ember ops (Doolittle), so the
    factors are differentiable."""
    em = _ember()
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=3)  # (2: the wrapper of NOTE [foreign errors])
    if not pivot:
        raise RuntimeError("LU without pivoting is not implemented on the CPU")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lu_factor: The input tensor A must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    k = min(m, n)
    piv = LuPivots.apply(A.detach())  # ops (values read inside them), so vmap batches lu
    PA = _rows(A, LuPermutation.apply(piv, m))
    batch = tuple(A.shape[:-2])
    u_rows, l_cols = [], []
    for j in range(k):
        u = PA[..., j, j:]
        if j:
            Lj = em.stack([c[..., j] for c in l_cols], -1)  # L[j, :j]
            Uj = _u_block(u_rows, j, j)  # U[:j, j:]
            u = u - (Lj.unsqueeze(-2) @ Uj).squeeze(-2)
        u_rows.append(em.cat([em.zeros(*batch, j, dtype=A.dtype), u], -1) if j else u)
        below = PA[..., j + 1:, j]
        if j:
            Lb = em.stack([c[..., j + 1:] for c in l_cols], -1)  # L[j+1:, :j]
            Uc = em.stack([r[..., j] for r in u_rows[:j]], -1)  # U[:j, j]
            below = below - (Lb @ Uc.unsqueeze(-1)).squeeze(-1)
        col = below / u[..., :1]
        l_cols.append(em.cat([em.zeros(*batch, j + 1, dtype=A.dtype), col], -1))
    U = em.stack(u_rows, -2) if k else em.zeros(*batch, 0, n, dtype=A.dtype)  # (k, n)
    L = em.stack(l_cols, -1) if k else em.zeros(*batch, m, 0, dtype=A.dtype)  # (m, k), strictly lower
    LU = (em.cat([L, em.zeros(*batch, m, n - k, dtype=A.dtype)], -1) if n > k else L) + \
        (em.cat([U, em.zeros(*batch, m - k, n, dtype=A.dtype)], -2) if m > k else U)
    result = (LU, piv, _wrap(np.zeros(batch, np.int32), D.int32)) if get_infos else (LU, piv)
    return result if out is None else _args.write_out(out, result, "lu")


def _u_block(u_rows: list, j: int, start: int) -> Tensor:
    """U[:j, start:] from the rows built so far."""
    return _ember().stack([r[..., start:] for r in u_rows[:j]], -2)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True, *,
              out=None):
    """(P, L, U) with A = P L U from ``lu``'s packed factors (torch.return_types.lu_unpack)."""
    em = _ember()
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if unpack_data:
        L = LU_data.tril(-1)[..., :, :k] + em.eye(m, k, dtype=LU_data.dtype)
        U = LU_data.triu()[..., :k, :]
    else:
        L = U = em.zeros(0, dtype=LU_data.dtype)
    if unpack_pivots:
        perm = LuPermutation.apply(LU_pivots, m)
        # P^T = rows perm of I: (P^T)[i, perm[i]] = 1
        P = (perm.unsqueeze(-1) == em.arange(m)).to(LU_data.dtype).mT.contiguous()
    else:
        P = em.zeros(0, dtype=LU_data.dtype)
    return RT.lu_unpack(P, L, U)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    """X with A X = input from ``lu``'s factors of A (substitution in ember ops: differentiable in input and
    LU_data)."""
    em = _ember()
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                  "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.", UserWarning,
                  stacklevel=3)  # (2: the wrapper of NOTE [foreign errors])
    n = LU_data.shape[-1]
    if LU_data.shape[-2] != n:
        raise RuntimeError("linalg.lu_solve: Expected LU to be square")
    batch = np.broadcast_shapes(tuple(input.shape[:-2]), tuple(LU_data.shape[:-2]))
    Pb = _rows(input.expand(*batch, *input.shape[-2:]), LuPermutation.apply(LU_pivots, n).expand(batch + (n,)))
    L = LU_data.tril(-1) + em.eye(n, dtype=LU_data.dtype)
    y = _substitute(L, Pb, True)
    return _substitute(LU_data.triu(), y, False)


# NOTE [foreign errors] (ember/_malloc.py): these compute on arrays outside ops
_translate_errors_of(globals(), __all__)
_args.install(globals(), [*__all__, "index_reduce_"], python=("unique_consecutive", "cartesian_prod", "block_diag", "cdist", "unravel_index",
                                          "lu"),
              out=("aminmax", "index_reduce", "isin", "mode", "nanmedian", "renorm", "slice_scatter"))
