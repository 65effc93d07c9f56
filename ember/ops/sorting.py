"""Sorting and selection: sort, argsort, topk, kthvalue, unique; searchsorted and bucketize (insertion points
into sorted data).

sort/topk/kthvalue are ``_Selection`` ops (see ops/reduction.py): values are gathered at the chosen
indices and the gradient is scattered back to them.
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _dtype as D
from .. import return_types as _RT
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap, _wrap_dim
from ..autograd._interpose import data_shaped, replayable
from ._composing import _long
from ._op import Op
from . import reduction as _R
from .reduction import _selection, _const, _empty_dim_error, _as_1d, complex_refused

__all__ = ["sort", "argsort", "topk", "kthvalue", "unique"]


def _sort_idx(a: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Stable order along ``d`` (NaN greatest); descending keeps equal elements in their original order."""
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    n = a.shape[d]
    rev = np.argsort(np.flip(a, d), axis=d, kind="stable")
    return np.flip(n - 1 - rev, d)


def _topk_idx(a: np.ndarray, d: int, param) -> np.ndarray:
    k, largest = param
    n = a.shape[d]
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    return np.take(_sort_idx(a, d, largest), np.arange(k, like=a), axis=d)


def _kth_idx(a: np.ndarray, d: int, k: int) -> np.ndarray:
    n = a.shape[d]
    if n == 0:
        raise _empty_dim_error("kthvalue", d)
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return np.take(_sort_idx(a, d, False), [k - 1], axis=d)


_NO_SORT = "! Sort does not support complex dtypes on CPU"  # (torch's message starts with a space)
Sort = _selection("Sort", _sort_idx, reduces=False, result_type=_RT.sort, complex_error=_NO_SORT)
SortStable = _selection("SortStable", _sort_idx, reduces=False, result_type=_RT.sort, torch_name="SortBackward1",
                        complex_error=_NO_SORT)
_UNSET = object()
Topk = _selection("Topk", _topk_idx, reduces=False, result_type=_RT.topk,
                  complex_error="! topk does not support complex dtypes on CPU")
Kthvalue = _selection("Kthvalue", _kth_idx, result_type=_RT.kthvalue)


def sort(input, dim: int = -1, descending: bool = False, *, stable=_UNSET, out=None):
    """(values, indices) sorted along ``dim``; equal elements keep their order (NaN sorts greatest)."""
    return (Sort if stable is _UNSET else SortStable).run(input, dim, True, bool(descending))


def argsort(input, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """Indices that sort ``input`` along ``dim``."""
    if input._dtype.is_complex:
        raise RuntimeError(_NO_SORT[1:])
    if type(input._data) not in _B.ARRAYS:  # values readable only through ops (a batched tensor under vmap)
        return sort(input, dim, descending).indices
    a, d = _as_1d(input._data, dim)
    return _const(_B.ascontiguousarray(_sort_idx(a, d, bool(descending))).reshape(input._data.shape))


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *, out=None):  # noqa: A002
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices (always in sorted order)."""
    return Topk.run(input, dim, True, (int(k), bool(largest)))


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False, *, out=None):
    """The ``k``-th smallest element along ``dim`` and its index."""
    return Kthvalue.run(input, dim, keepdim, int(k))


class Unique(Op):
    """unique values (their gradient is not implemented, as in torch)"""

    __slots__ = ()
    _name = "Unique2Backward0"
    nattrs = 1
    differentiable_outputs = (0,)

    @staticmethod
    def forward(ctx, self, dim):
        if self.dtype.kind == "c":
            raise complex_refused("unique" if dim is None else "unique_dim", self.dtype)
        if dim is None:
            values, inverse, counts = np.unique(self.reshape(-1), return_inverse=True, return_counts=True)
            inverse = inverse.reshape(self.shape)
        else:
            d = _wrap_dim(dim, self.ndim)
            if self.ndim and self.shape[d] == 0:
                values = self
                inverse, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
            else:
                values, inverse, counts = np.unique(self, return_inverse=True, return_counts=True, axis=d)
                inverse = inverse.reshape(-1)
        return values, inverse.astype(np.int64), counts.astype(np.int64)

    def backward(ctx, *grads):
        raise RuntimeError("the derivative for '_unique2' is not implemented.")

    @staticmethod
    def jvp(args, out, tangents):
        raise NotImplementedError(f"Trying to use forward AD with {'_unique2' if args[1] is None else 'unique_dim'} "
                                  "that does not support it because it has not been implemented yet.")


def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim=None):
    """The sorted distinct elements (or slices along ``dim``), optionally with inverse indices and counts."""
    values, inverse, counts = Unique.apply(input, dim)
    if not (return_inverse or return_counts):
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


_args.install(globals(), ("sort", "argsort", "topk", "kthvalue"), out=("argsort",))


# ---------------------------------------------------------------- sorting and uniqueness forms: msort, isin, unique_consecutive
__all__ += ["msort", "isin", "unique_consecutive"]


def msort(input: Tensor, *, out=None) -> Tensor:
    """Sorted along dim 0."""
    return input.sort(0).values


@replayable  # computed on arrays from the values: NOTE [replayable steps]
def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a number)."""
    for x in (elements, test_elements):
        if isinstance(x, Tensor) and x._dtype.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {x._dtype._scalar_name}")
    a = elements._data if isinstance(elements, Tensor) else _B.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else _B.asarray(test_elements)
    return _wrap(_B.asarray(np.isin(a, b, invert=invert)), D.bool)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``)."""
    if input._dtype.is_complex:
        raise _R.complex_refused("unique" if dim is None else "unique_dim", input._data.dtype)
    data_shaped("unique_consecutive")
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
    res = [_wrap(_B.ascontiguousarray(vals), input._dtype)]
    if return_inverse:
        res.append(_long(inv))
    if return_counts:
        res.append(_long(counts))
    return res[0] if len(res) == 1 else tuple(res)


# NOTE [foreign errors] (ember/_malloc.py): these compute on arrays outside ops
_translate_errors_of(globals(), ("msort", "isin", "unique_consecutive"))
_args.install(globals(), ("msort", "isin", "unique_consecutive"), python=("unique_consecutive",), out=("isin",))


# ---------------------------------------------------------------- insertion points: searchsorted, bucketize
__all__ += ["searchsorted", "bucketize"]


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None, out=None) -> Tensor:
    """Insertion points of ``input`` into the innermost dimension of ``sorted_sequence``."""
    for x in (sorted_sequence, input):
        if isinstance(x, Tensor) and x._dtype.is_complex:
            raise complex_refused("searchsorted_out_cpu", x._data.dtype)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    seq = sorted_sequence._data  # shapes only below: the values are read inside the op (so vmap can batch it)
    vals = _B.asarray(input) if not isinstance(input, Tensor) else input._data
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    return SearchSorted.apply(sorted_sequence, input, bool(right), bool(out_int32))


class SearchSorted(Op):
    """Insertion points of ``vals`` into the last dim of ``seq`` (integer result: no gradient)."""

    __slots__ = ()
    nattrs = 2
    inputs = ("sorted_sequence", "self")

    @staticmethod
    def forward(ctx, seq, vals, right, out_int32):
        s = "right" if right else "left"
        if seq.ndim <= 1:
            res = np.searchsorted(seq.reshape(-1), vals, side=s)
        else:
            s2, v2 = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
            res = np.stack([np.searchsorted(a, b, side=s) for a, b in zip(s2, v2)]).reshape(vals.shape)
        return _B.asarray(res, np.int32 if out_int32 else np.int64)

    def backward(ctx, grad):  # pragma: no cover - integer output
        return None, None


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False, out=None) -> Tensor:
    """The bucket of each element of ``input`` given 1-d sorted ``boundaries``."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


_args.install(globals(), ("searchsorted", "bucketize"))
