"""In-place ops: version bumps, torch's leaf errors, and history rebasing (incl. views).

# NOTE [in-place and the graph]
``y.op_(...)`` computes ``op(y, ...)`` out of place on an *alias* of ``y`` (same array, same
grad_fn), writes the result into ``y``'s memory and makes the new node ``y``'s grad_fn. If the
node saved the alias (it needs ``y``'s old value), the alias gets a private copy first, so the
saved value stays the one backward needs. For a view ``v`` of a base ``b`` that is in a graph,
the new value is written into ``b`` through a ``CopySlices`` node (b's new grad_fn) and ``v``
becomes an ``AsStrided`` view of the new ``b``. Without a graph, it is just NumPy in place.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _dtype as D
from .._tensor import Tensor, _wrap
from ..autograd import graph as G
from ..autograd.grad_mode import _mode, no_grad

__all__ = ["inplace", "setitem", "copy_out"]

_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_LEAF_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def check_inplace(self: Tensor) -> None:
    """torch's errors for in-place changes of leaves that require grad (and their views)."""
    if not _mode.grad_enabled:
        return
    if self._requires_grad and self._grad_fn is None:
        raise RuntimeError(_LEAF_MSG)
    base = self._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError(_VIEW_LEAF_MSG)
    ext = self._ext
    if ext is not None and ext.get("inference") and not _mode.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                           "make a clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _can_cast(src: D.dtype, dst: D.dtype) -> bool:
    return src._kind <= dst._kind


def _cast_check(result_dtype: D.dtype, self: Tensor) -> None:
    if not _can_cast(result_dtype, self._dtype):
        raise RuntimeError(f"result type {_title(result_dtype)} can't be cast to the desired output type "
                           f"{_title(self._dtype)}")


def _title(d: D.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}[d.name]


def _others_need_grad(args) -> bool:
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def inplace(self: Tensor, fn, *args, **kwargs) -> Tensor:
    """Apply ``fn(self, *args)`` in place on ``self`` with correct autograd history."""
    check_inplace(self)
    graph = _mode.grad_enabled and (self._requires_grad or _others_need_grad(args))
    if not graph:
        with no_grad():
            out = fn(self, *args, **kwargs)
        _cast_check(out._dtype, self)
        _write(self._data, out._data)
        self._bump()
        return self
    base = self._base
    if base is not None and base._data.flags.c_contiguous:
        return _inplace_on_view(self, fn, args, kwargs)
    alias = _alias(self)
    out = fn(alias, *args, **kwargs)
    _cast_check(out._dtype, self)
    node = out._grad_fn
    _protect_saved(node, alias)
    _write(self._data, out._data)
    self._bump()
    _rebase(self, node, out._output_nr if node is not None else 0)
    return self


def _alias(t: Tensor) -> Tensor:
    a = _wrap(t._data, t._dtype)
    a._requires_grad = t._requires_grad
    a._grad_fn = t._grad_fn
    a._output_nr = t._output_nr
    if t._grad_fn is None and t._requires_grad:
        a._acc = None
        a._grad_fn = None
    return a


def _protect_saved(node, alias: Tensor) -> None:
    """If ``node`` saved the alias (it needs the old value), give it a private copy."""
    saved = getattr(node, "_saved", None) if node is not None else None
    if not saved or isinstance(saved, str):
        return
    for s in saved:
        if type(s) is G.SavedTensor and s._tensor is alias:
            alias._data = alias._data.copy()
            return


def _write(dst: np.ndarray, src: np.ndarray) -> None:
    if not dst.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    np.copyto(dst, src, casting="unsafe")


def _rebase(self: Tensor, node, output_nr: int) -> None:
    retains = self.retains_grad
    self._grad_fn = node
    self._output_nr = output_nr
    self._requires_grad = node is not None or self._requires_grad
    if retains and node is not None:
        self._install_retain_hook()


def _flat_index(view: Tensor) -> np.ndarray:
    """Flat positions in its base's memory of each element of ``view``."""
    barr = view._base._data
    varr = view._data
    item = barr.itemsize
    offset = (varr.__array_interface__["data"][0] - barr.__array_interface__["data"][0]) // item
    idx = np.arange(barr.size, dtype=np.int64)
    return as_strided(idx[offset:], shape=varr.shape, strides=tuple(s // item * 8 for s in varr.strides),
                      writeable=False).copy()


def _inplace_on_view(self: Tensor, fn, args, kwargs) -> Tensor:
    from .indexing import CopySlices, AsStrided

    base = self._base
    alias = _alias(self)
    out = fn(alias, *args, **kwargs)
    _cast_check(out._dtype, self)
    _protect_saved(out._grad_fn, alias)
    flat = _flat_index(self)
    new_base = CopySlices.apply(base, out, (flat,), True)
    _write(base._data, new_base._data)
    base._bump()
    _rebase(base, new_base._grad_fn, 0)
    view = AsStrided.apply(base, flat, self._data)
    _rebase(self, view._grad_fn, 0)
    return self


def setitem(self: Tensor, key, value) -> None:
    """``self[key] = value`` (value: Tensor or number), recorded as CopySlices when needed."""
    from .indexing import CopySlices, _convert_key

    k, _ = _convert_key(key)
    check_inplace(self)
    v = value
    graph = _mode.grad_enabled and (self._requires_grad or (isinstance(value, Tensor) and value._requires_grad))
    if not graph:
        arr = value._data if isinstance(value, Tensor) else value
        try:
            self._data[k] = arr
        except ValueError as e:
            if "read-only" in str(e):
                _write(self._data, arr)  # raises torch's overlap message
            region = np.shape(self._data[k])
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(arr))} cannot be broadcast "
                               f"to indexing result of shape {list(region)}") from None
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
        self._bump()
        return
    base = self._base
    if base is not None and base._data.flags.c_contiguous:
        from .indexing import AsStrided

        sub = _flat_index(self)[k]
        if isinstance(v, Tensor):
            v = (v if v._data.shape == sub.shape else v.expand(sub.shape)).reshape(-1)
        new_base = CopySlices.apply(base, v, (sub.reshape(-1),), True)
        _write(base._data, new_base._data)
        base._bump()
        _rebase(base, new_base._grad_fn, 0)
        view = AsStrided.apply(base, _flat_index(self), self._data)
        _rebase(self, view._grad_fn, 0)
        return
    out = CopySlices.apply(self, v, k, False)
    _write(self._data, out._data)
    self._bump()
    _rebase(self, out._grad_fn, 0)


def copy_out(out: Tensor, result: Tensor) -> Tensor:
    """Write ``result`` into ``out`` (the ``out=`` argument), resizing as torch does."""
    if _mode.grad_enabled and (result._requires_grad or out._requires_grad):
        raise RuntimeError("out=... arguments don't support automatic differentiation, but one of the "
                           "arguments requires grad.")
    _cast_check(result._dtype, out)
    if out._data.shape != result._data.shape:
        out._data = np.empty(result._data.shape, out._data.dtype)
    np.copyto(out._data, result._data, casting="unsafe")
    out._bump()
    return out
