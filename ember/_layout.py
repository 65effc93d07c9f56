"""torch.layout and torch.memory_format values (only strided tensors exist here)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _backend as _B

if TYPE_CHECKING:  # the Tensor methods below are bound to it (this module loads before ember._tensor)
    from ._tensor import Tensor

__all__ = ["layout", "strided", "memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]


class layout:
    """How a tensor's elements are stored; ember only has ``strided``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return self.name


class memory_format(layout):
    """The layout asked of a new tensor (``contiguous_format``, ``preserve_format`` ...)."""

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


# ----------------------------------------------------------------------------- memory formats of strided tensors
_RANK = {"channels_last": 4, "channels_last_3d": 5}


def _order(fmt: memory_format, ndim: int) -> tuple | None:
    """Axes from outermost to innermost in memory for a channels-last format (None: row-major)."""
    rank = _RANK.get(fmt.name)
    if rank is None:
        return None
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return (0,) + tuple(range(2, ndim)) + (1,)


def empty(shape: tuple, dtype, fmt=None):
    """An uninitialised array of ``shape`` laid out in memory format ``fmt`` (contiguous when None)."""
    order = None if fmt is None or fmt is preserve_format else _order(fmt, len(shape))
    if order is None:
        return np.empty(shape, dtype)
    return np.empty(tuple(shape[i] for i in order), dtype).transpose(np.argsort(order))


def empty_like(arr, dtype, fmt=None):
    """An uninitialised array like ``arr`` in ``fmt``; preserve_format (None) keeps the strides of a dense,
    non-overlapping ``arr``, else row-major, as torch's *_like and clone do."""
    if fmt is None or fmt is preserve_format:
        return np.empty_like(arr, dtype=dtype, order=_keep_order(arr))
    return empty(arr.shape, dtype, fmt)


def _keep_order(arr) -> str:
    if arr.flags.c_contiguous:
        return "C"
    dims = sorted((st, n) for st, n in zip(arr.strides, arr.shape) if n != 1)
    expect = arr.itemsize
    for st, n in dims:
        if st != expect:
            return "C"
        expect *= n
    return "K"


def is_contiguous(arr, fmt=None) -> bool:
    """Whether ``arr`` is laid out densely in ``fmt`` (dims of size 1 may have any stride), as torch checks."""
    if fmt is None or fmt.name not in _RANK:
        return bool(arr.flags.c_contiguous)
    if arr.ndim != _RANK[fmt.name]:
        return False
    order = _order(fmt, arr.ndim)
    expect = arr.itemsize
    for axis in reversed(order):
        if arr.shape[axis] != 1 and arr.strides[axis] != expect:
            return False
        expect *= arr.shape[axis]
    return True


# ----------------------------------------------------------------------------- dim order
def dim_order(t, ambiguity_check=False) -> tuple:
    """Tensor.dim_order: dims from outermost to innermost in memory, as torch orders them (NOTE [dim order])."""
    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list) and all(isinstance(f, memory_format) for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides = t.shape, t.stride()
    if ambiguity_check is not False:
        ambiguous = 1 in shape or any(a == b for a, b in zip(strides, strides[1:]))
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        if ambiguous and sum(t.is_contiguous(memory_format=f) for f in formats) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
    ndim = len(shape)
    if ndim < 2:
        return tuple(range(ndim))
    dense, last = t.is_contiguous(), t.is_contiguous(memory_format=channels_last)
    if dense != last:
        return tuple(range(ndim)) if dense else (0, *range(2, ndim), 1)
    order = _stride_order(shape, strides)
    if ambiguity_check and any(_inner(shape, strides, a, b) != -1 for a, b in zip(order, order[1:])):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(order))


# NOTE [dim order]
# torch orders dims by stride with an insertion sort whose comparison may answer "either": a zero stride never
# decides, equal strides put the longer dim inside, and a stride that is a multiple of another (a dim of length
# 1, strides 4 and 8 ...) counts as larger. The order therefore depends on the sort's steps, not only on the
# strides: _stride_order runs the same steps, innermost dim first.
def _inner(shape, strides, a: int, b: int) -> int:
    """-1 when dim a lies inside dim b, 1 when outside, 0 when the strides cannot tell."""
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if _at_least(shape[b], shape[a]) else 1
    if _at_least(sb, sa):
        return -1
    return 1 if _at_least(sa, sb) else 0


def _at_least(x: int, y: int) -> bool:
    return y == 0 or (x != 0 and (x >= y or x % y == 0))


def _stride_order(shape, strides) -> list:
    order = list(range(len(shape)))[::-1]  # innermost first
    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            c = _inner(shape, strides, order[k], order[j])
            if c > 0:
                order[k], order[j] = order[j], order[k]
                j = k
            elif c < 0:
                break
    return order


# ------------------------------------------------------------------ Tensor methods (bound by ember/_methods.py)
def _dim_order_method(self, *, ambiguity_check: bool | list = False) -> tuple:
    """Dims from outermost to innermost in memory (NOTE [dim order])."""
    return dim_order(self, ambiguity_check)


def const_data_ptr(self) -> int:
    return self.data_ptr()


def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
    """The tensor itself (strided tensors are dense)."""
    return self if dtype is None or dtype is self._dtype else self.to(dtype)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The nonzero entries as a sparse COO tensor (NOTE [sparse COO over dense storage])."""
    from .sparse import to_sparse as sparse_of  # noqa: PLC0415 - ember.sparse loads on first use

    return sparse_of(self, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)


def to_sparse_coo(self) -> Tensor:
    return self.to_sparse()


# A strided tensor has no COO parts: torch's refusals (ember.sparse.SparseTensor overrides these)
def indices(self) -> Tensor:
    raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")


def values(self) -> Tensor:
    raise RuntimeError("values expected sparse tensor layout but got Strided")


def coalesce(self) -> Tensor:
    raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")


def is_coalesced(self) -> bool:
    raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")


def sparse_dim(self) -> int:
    return 0


def dense_dim(self) -> int:
    return self.dim()


def is_set_to(self, tensor: Tensor) -> bool:
    """Same storage, offset, sizes and strides."""
    return (self.data_ptr() == tensor.data_ptr() and self._data.shape == tensor._data.shape
            and self._data.strides == tensor._data.strides
            and _B.address(_storage(self)) == _B.address(_storage(tensor)))


def is_distributed(self) -> bool:
    return False


def _storage(t) -> np.ndarray:
    """The ndarray owning ``t``'s memory (its storage)."""
    return _B.storage_of(t._data)


def strided_view(store: np.ndarray, shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """An ndarray over ``store``'s memory (``offset`` and ``strides`` in bytes) whose ``.base`` chain leads to it."""
    return _B.strided_view(store, shape, strides, offset)
