"""torch.layout and torch.memory_format values (only strided tensors exist here)."""
from __future__ import annotations

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
    import numpy as np

    order = None if fmt is None or fmt is preserve_format else _order(fmt, len(shape))
    if order is None:
        return np.empty(shape, dtype)
    return np.empty(tuple(shape[i] for i in order), dtype).transpose(np.argsort(order))


def empty_like(arr, dtype, fmt=None):
    """An uninitialised array like ``arr`` in ``fmt``; preserve_format (None) keeps the strides of a dense,
    non-overlapping ``arr``, else row-major, as torch's *_like and clone do."""
    import numpy as np

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
    order = None if fmt is None or fmt is contiguous_format else _order(fmt, arr.ndim)
    if order is None:
        return bool(arr.flags.c_contiguous)
    expect = arr.itemsize
    for axis in reversed(order):
        if arr.shape[axis] != 1 and arr.strides[axis] != expect:
            return False
        expect *= arr.shape[axis]
    return True
