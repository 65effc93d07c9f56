"""torch functions composed from ember ops: their gradients (and higher ones) come from the ops they use.

Scans and differences (logcumsumexp, diff, gradient, trapezoid), combinatorics (cartesian_prod, combinations,
block_diag, vander, tril/triu_indices, unravel_index) and the *_scatter family (a clone written through a view,
index_reduce, put). Integer results and index computations are NumPy; values that carry gradients are always picked
or combined by ember ops. Statistics are in ops/statistics.py, distances and matrix_exp in ops/linalg.py,
msort/isin/unique_consecutive in ops/sorting.py, windows in ops/windows.py, LU and triangular solves in ops/solve.py.
"""
from __future__ import annotations

import itertools

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _dtype as D
from .._factories import _finish
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap, _wrap_dim
from ._op import refuse_tangents
from . import reduction as _R
from ._composing import _ember, _long
from .complex_numbers import refuse_complex_grad

__all__ = [
    "logcumsumexp", "diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid", "cartesian_prod", "combinations",
    "block_diag", "vander", "tril_indices", "triu_indices", "select_scatter", "slice_scatter", "diagonal_scatter",
    "as_strided_scatter", "index_reduce", "put", "unravel_index",
]


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
            parts.append(em.zeros(r, left, dtype=dt, device=m.device))
        parts.append(m.to(dt))
        if cols - left - c:
            parts.append(em.zeros(r, cols - left - c, dtype=dt, device=m.device))
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
    ones = em.ones(x.shape[0], 1, dtype=xx.dtype, device=x.device)
    cols = em.cat([ones, xx.unsqueeze(1).expand(x.shape[0], n - 1)], 1).cumprod(1) if n > 1 else ones
    return cols if increasing else cols.flip(1)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The (2, k) row/column indices of the lower triangle of a row x col matrix."""
    r, c = np.tril_indices(row, offset, col)
    return _finish(np.stack([r, c]).astype((dtype or D.int64).np), dtype or D.int64, False,
                   device).requires_grad_(requires_grad)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    r, c = np.triu_indices(row, offset, col)
    return _finish(np.stack([r, c]).astype((dtype or D.int64).np), dtype or D.int64, False,
                   device).requires_grad_(requires_grad)


# ---------------------------------------------------------------- flat indices to coordinates
def unravel_index(indices, shape) -> tuple:
    """The coordinates in ``shape`` of flat ``indices`` (a tuple of tensors)."""
    idx = indices._data if isinstance(indices, Tensor) else _B.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {D.from_numpy_dtype(idx.dtype)}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    n = int(np.prod(shape))
    coords = np.unravel_index(np.mod(idx, n) if n else idx, shape)  # torch wraps out-of-range indices
    return tuple(_long(c) for c in coords)


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
    if isinstance(index, Tensor) and type(index._data) in _B.ARRAYS:  # (a batched index: checked per example)
        from .gather_scatter import _check_bounds

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


# NOTE [foreign errors] (ember/_malloc.py): these compute on arrays outside ops
_translate_errors_of(globals(), __all__)
_args.install(globals(), [*__all__, "index_reduce_"], python=("cartesian_prod", "block_diag", "unravel_index"),
              out=("index_reduce", "slice_scatter"))
