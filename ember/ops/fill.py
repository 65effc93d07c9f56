"""Filling and resizing a tensor in place: zero_, fill_, copy_, fill_diagonal_, apply_ / map_ / map2_ (element by
element through a Python callable) and resize_ with its relatives. Each is a Tensor method written as a function of
``self``, bound by ember/_methods.py (NOTE [Tensor methods from functions]); fills that join a graph or a forward-AD
level run as ops (ops/indexing.py's Zero, fill_value, copy_value) through ``inplace``.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype as D
from .. import _layout as _L
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import _mode
from . import indexing as _I
from ._inplace import _write, check_inplace, inplace

__all__ = []


def _needs_graph(t: Tensor) -> bool:
    """Whether an in-place fill must run as an op: it joins a graph, or a forward-AD level sees it."""
    return (_mode.grad_enabled and t._requires_grad) or _mode.interpose is not None


def _fill(t: Tensor, value) -> Tensor:
    check_inplace(t)
    if not t._data.flags.writeable:
        _write(t._data, t._data)
    t._data[...] = value
    t._bump()
    return t


def zero_(self):
    """Fill with zeros in place."""
    return inplace(self, _I.Zero.apply) if _needs_graph(self) else _fill(self, 0)


def fill_(self, value):
    """Fill with ``value`` (a number or a 0-d tensor) in place."""
    if _needs_graph(self) or (isinstance(value, Tensor) and (value._requires_grad or value._data.ndim
                                                             or value._ext is not None)):
        return inplace(self, _I.fill_value, value)
    if isinstance(value, Tensor):
        value = value.item()
        if isinstance(value, complex) and not self._dtype.is_complex:  # a tensor's value is cast, as copy_'s
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
            value = value.real
    return _fill(self, D.scalar_into(value, self._dtype))


def copy_(self, other, non_blocking: bool = False):
    """Copy ``other`` (broadcast) into this tensor in place (``non_blocking``: a no-op on the CPU, as torch's)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return inplace(self, _I.copy_value, other)


def fill_diagonal_(self, fill_value, wrap: bool = False) -> "Tensor":
    """Write ``fill_value`` on the main diagonal (all dims equal, or 2-d; ``wrap``: restart below tall ones)."""
    a = self._data
    if a.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(a.shape, bool)
    n = min(a.shape)
    mask[(np.arange(n),) * a.ndim] = True
    if wrap and a.ndim == 2:
        mask.reshape(-1)[::a.shape[1] + 1] = True  # row-major positions one row and one column apart
    keep = _wrap(mask, D.bool)
    return inplace(self, lambda t: _I.where(keep, fill_value, t))


def apply_(self, callable) -> "Tensor":
    """Replace each element x by ``callable(x)`` (Python numbers), in place."""
    if self._requires_grad and _mode.grad_enabled:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() "
                           "instead.")
    check_inplace(self)
    flat = self._data.reshape(-1)
    self._data[...] = np.array([callable(v) for v in flat.tolist()], self._data.dtype).reshape(self._data.shape)
    self._bump()
    return self


def map_(self, other: "Tensor", callable) -> "Tensor":
    """Replace each element x by ``callable(x, y)`` with y from ``other`` (broadcast), in place."""
    return _map(self, callable, other)


def map2_(self, x: "Tensor", y: "Tensor", callable) -> "Tensor":
    return _map(self, callable, x, y)


def _map(self, callable, *others) -> "Tensor":
    if self._requires_grad and _mode.grad_enabled:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use var.detach().map_() instead.")
    check_inplace(self)
    cols = [np.broadcast_to(o._data, self._data.shape).reshape(-1).tolist() for o in others]
    vals = [callable(*args) for args in zip(self._data.reshape(-1).tolist(), *cols)]
    self._data[...] = np.array(vals, self._data.dtype).reshape(self._data.shape)
    self._bump()
    return self


def resize_(self, *sizes, size=None, memory_format=None) -> "Tensor":
    """Give the tensor ``size``, keeping its leading elements in row-major order (new ones uninitialised);
    ``memory_format`` lays the result out so (row-major when None)."""
    if size is not None:
        sizes = (size,)
    size = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else tuple(sizes)
    if self._requires_grad and _mode.grad_enabled:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    n = int(np.prod(size))
    if _mode.tracer is not None:  # ember.compile: a new array for the tensor, made outside any op
        _mode.tracer.unsupported("Tensor.resize_")
    if n == self._data.size:
        self._data = self._data.reshape(size)
    else:
        new = np.zeros(n, self._data.dtype)
        k = min(n, self._data.size)
        new[:k] = self._data.reshape(-1)[:k]
        self._data = new.reshape(size)
    if memory_format is not None and memory_format is not _L.preserve_format \
            and not _L.is_contiguous(self._data, memory_format):
        laid = _L.empty(size, self._data.dtype, memory_format)
        laid[...] = self._data
        self._data = laid
    self._bump()
    return self


def resize_as_(self, the_template: "Tensor", *, memory_format=None) -> "Tensor":
    return self.resize_(tuple(the_template.shape), memory_format=memory_format)


def resize(self, *sizes) -> "Tensor":
    """A resized copy (deprecated in torch for reshape / resize_)."""
    return self.detach().clone().resize_(*sizes)


def resize_as(self, tensor: "Tensor") -> "Tensor":
    return self.resize(tuple(tensor.shape))
