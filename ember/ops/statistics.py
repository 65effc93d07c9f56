"""Statistics composed from ember ops: aminmax, mode, nanmedian, quantile/nanquantile, cov, corrcoef, and the
histograms (bincount, histc, histogram). Counts and index computations are NumPy; values that carry gradients
are picked or combined by ember ops, so every gradient order comes from the engine."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _dtype as D
from .. import return_types as RT
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import _CPP_NAMES, Tensor, _all_examples, _wrap, _wrap_dim
from ..autograd._interpose import data_shaped, replayable
from . import reduction as _R
from ._composing import _ember, _long
from ._op import const as _const
from .complex_numbers import complex as _complex

__all__ = [
    "aminmax", "mode", "nanmedian", "quantile", "nanquantile", "cov", "corrcoef", "bincount", "histc", "histogram",
]


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
    ref, a = a, _B.to_host(a)  # a loop over rows: on the host, its indices back on a's device
    moved = np.moveaxis(a, d, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        vals, counts = np.unique(row, return_counts=True)
        best = vals[np.argmax(counts)]  # np.unique sorts: argmax takes the smallest of the most frequent
        idx[r] = len(row) - 1 - int(np.argmax(row[::-1] == best))
    return _B.like(ref, np.expand_dims(idx.reshape(moved.shape[:-1]), d))


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
    qa = _B.asarray(q, np.float64) if scalar_q else _all_examples(q)
    if np.any((qa < 0) | (qa > 1)):
        if scalar_q:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {float(q)}")
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    qt = _const(_B.like(input._data, qa.reshape(-1))) if scalar_q else q.detach().to(D.float64).reshape(-1)
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


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts (or summed weights) of each non-negative integer in a 1-d tensor."""
    a = input._data
    if a.dtype.kind not in "iu":  # (the kernel's dispatch: integers only, before its shape check)
        raise _R.complex_refused("bincount_cpu", a.dtype)
    if a.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    data_shaped("bincount")
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


@replayable  # computed on arrays from the values: NOTE [replayable steps]
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


@replayable  # computed on arrays from the values: NOTE [replayable steps]
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
    if rng is None and not _B.is_array(edges) and a.size:
        rng = (float(a.min()), float(a.max()))
    w = None if weight is None else weight._data.reshape(-1).astype(np.float64)
    hist, e = np.histogram(a.astype(np.float64), bins=edges, range=rng, weights=w, density=density)
    return RT.histogram(_wrap(hist.astype(dt.np), dt), _wrap(e.astype(dt.np), dt))


# NOTE [foreign errors] (ember/_malloc.py): these compute on arrays outside ops
_translate_errors_of(globals(), __all__)
_args.install(globals(), __all__, out=("aminmax", "mode", "nanmedian"))
