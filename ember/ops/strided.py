"""Views with explicit geometry: torch.as_strided (and its in-place form), Tensor.unfold, and how an in-place view op
(``t.as_strided_``, ``t.transpose_`` ...) makes a tensor take over a view's geometry and history (``_restride``).
The ndarray over a storage's memory that they build is ``_layout.strided_view``."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B

from .. import _args
from .._args import tensor_arg as _tensor_arg
from .._layout import _storage, strided_view
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import _mode
from . import _inplace as _IP
from ._inplace import view_geometry
from .indexing import AsStrided

__all__ = ["as_strided", "as_strided_", "unfold"]


class AsStridedView(AsStrided):
    """torch.as_strided: a view of the input's memory; the gradient scatters (and sums) into the input."""

    __slots__ = ()
    _name = "AsStridedBackward0"
    is_view = True


class Unfold(AsStridedView):
    """Tensor.unfold: overlapping windows along one dim as a view; gradients of overlaps add up."""

    __slots__ = ()
    _name = "UnfoldBackward0"


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """All windows of ``size`` elements, ``step`` apart, along ``dimension``, as a new last dim (a view)."""
    a = input._data
    d = _wrap_dim(dimension, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if type(a) not in _B.ARRAYS:  # batched under vmap: windows of each example, on the physical value
        if not a.ndim:
            return input._rewrap(unfold(input._phys.unsqueeze(1), 1, size, step).reshape(input._phys.shape[0], size))
        return input._rewrap(unfold(input._phys, d + 1, size, step))
    shape, strides = list(a.shape), list(a.strides)
    st = strides[d] if a.ndim else a.itemsize
    windows = (n - size) // step + 1
    if a.ndim:
        shape[d], strides[d] = windows, st * step
    else:
        shape, strides = [], []
    store = _storage(input)
    at = _B.address(a) - _B.address(store)
    view = strided_view(store, tuple(shape) + (size,), tuple(strides) + (st,), at)
    return Unfold.apply(input, view_geometry(view, a), view)


def _as_strided_view(input: Tensor, size, stride, storage_offset) -> np.ndarray:
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    store = _storage(input)
    item = store.itemsize
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    need = offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1 if all(size) else 0
    if need > store.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {need * item} are out of bounds for storage "
                           f"of size {store.size * item}")
    return strided_view(store, size, tuple(st * item for st in stride), offset * item)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes, strides and offset (in elements)."""
    _tensor_arg("as_strided", input)
    if type(input._data) not in _B.ARRAYS:  # batched under vmap: one more leading dim over the physical storage
        p = input._phys  # (torch's rule: each example's view starts at its own offset, a batch stride apart)
        off = p.storage_offset() if storage_offset is None else storage_offset
        return input._rewrap(as_strided(p, (p.shape[0],) + tuple(size), (p.stride(0),) + tuple(stride), off))

    view = _as_strided_view(input, size, stride, storage_offset)
    return AsStridedView.apply(input, view_geometry(view, input._data), view)


def as_strided_(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """``input`` itself, re-viewed with new sizes, strides and offset."""
    return _restride(input, as_strided(input, size, stride, storage_offset))


def _restride(t: Tensor, new: Tensor) -> Tensor:
    """Make ``t`` take over the geometry and history of ``new`` (a view of it): in-place view ops."""
    _IP.check_inplace(t)
    if type(t._data) not in _B.ARRAYS:  # a batched tensor under vmap: it takes over the view's physical value
        return t._take_over(new)
    t._data = new._data
    if new._grad_fn is not None:
        t._grad_fn, t._output_nr = new._grad_fn, new._output_nr
    fw = new._ext.get("fw") if new._ext is not None else None
    if fw:  # forward AD: the tangent changes its geometry in place too (the same tensor object), as in torch
        from ..autograd.forward_ad import _set_tangent, _tangent

        for level, tangent in fw.items():
            old = _tangent(t, level)
            if old is None or old is tangent:
                _set_tangent(t, level, tangent)
            else:
                _restride(old, tangent)
    if _mode.tracer is not None:  # ember.compile: the tensor now holds the view op's result (a recorded value)
        _mode.tracer.restrided(t)
    t._bump()
    return t


_args.install(globals(), ("as_strided", "as_strided_"))
