"""Indexing: ``x[key]`` (views for basic keys), ``x[key] = v`` (CopySlices), ``where``."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _wrap_any
from ._op import Op
from ..autograd.grad_mode import _mode
from .arithmetic import _rt, _prep, _broadcast_error

__all__ = ["where", "index", "_slice_backward"]

_BASIC = (int, slice, type(None), type(Ellipsis))


def _convert_key(key, shape=None):
    """A NumPy key from a torch key (tensors/lists become arrays); checks torch's rules."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    basic = True
    for k in items:
        if isinstance(k, Tensor):
            a = k._data
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if a.ndim == 0 and a.dtype.kind in "iu":
                out.append(int(a))
                continue
            out.append(a)
            basic = False
        elif isinstance(k, bool):
            out.append(k)
            basic = False
        elif isinstance(k, (int, np.integer)):
            out.append(int(k))
        elif isinstance(k, slice):
            if k.step is not None and int(k.step) <= 0:
                raise ValueError("step must be greater than zero")
            out.append(slice(_int_or_none(k.start), _int_or_none(k.stop), _int_or_none(k.step)))
        elif k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, (list, np.ndarray)):
            a = np.asarray(_tensors_out(k))
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)
            basic = False
        else:
            raise TypeError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                            f"are valid indices (got {type(k).__name__})")
    return tuple(out), basic


def _int_or_none(v):
    if v is None:
        return None
    return int(v)


def _tensors_out(k):
    if isinstance(k, Tensor):
        return k._data
    if isinstance(k, list):
        return [_tensors_out(x) for x in k]
    return k


def _index_array(arr: np.ndarray, key):
    try:
        return arr[key]
    except IndexError as e:
        msg = str(e)
        if "out of bounds" in msg:
            msg = msg.replace("axis", "dimension")
        elif "too many indices" in msg:
            msg = f"too many indices for tensor of dimension {arr.ndim}"
        raise IndexError(msg) from None


def _basic_steps(key: tuple, shape: tuple) -> list:
    """torch's chain of view ops for a basic key, checked against ``shape``.

    Each step is ("select", dim, index), ("slice", dim, start, stop, step) or ("unsqueeze", dim),
    with dims counted in the tensor the step applies to; a bare ``:`` and ``...`` add no step."""
    ndim = len(shape)
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    steps = []
    d = 0  # dim in the current (partially indexed) tensor
    src = 0  # dim in the original tensor
    for k in key:
        if k is None:
            steps.append(("unsqueeze", d))
            d += 1
        elif k is Ellipsis:
            skip = ndim - used
            d += skip
            src += skip
        elif type(k) is int:
            n = shape[src]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {src} with size {n}")
            steps.append(("select", d, k % n))
            src += 1
        else:
            n = shape[src]
            start, stop, step = k.indices(n)
            stop = max(stop, start)
            # torch skips a slice that spells out the whole dim (start 0 as written, stop >= size, step 1)
            if (k.start or 0) != 0 or (k.stop is not None and k.stop < n) or step != 1:
                steps.append(("slice", d, start, stop, step))
            d += 1
            src += 1
    return steps


class BasicIndex(Op):
    """d x[key] (any basic NumPy key, one node) = grad placed back into zeros of x's shape.

    Internal: backward formulas use it; ``x[key]`` records torch's chain of view ops instead."""

    __slots__ = ("key", "shape")
    _name = "SliceBackward0"
    nattrs = 1
    is_view = True

    @staticmethod
    def forward(ctx, self, key):
        if ctx is not None:
            ctx.key, ctx.shape = key, self.shape
        return _as_view(self, _index_array(self, key), key)

    def backward(ctx, grad):
        return _slice_backward(grad, ctx.shape, ctx.key)


def _as_view(arr, out, key):
    # a full integer key gives a NumPy scalar: keep a 0-d view of the array instead
    if type(out) is np.ndarray:
        return out
    return arr[key + (Ellipsis,)] if isinstance(key, tuple) else arr[(key, Ellipsis)]


class Slice(Op):
    """d x[..., start:stop:step] along dim = grad placed back into zeros of x's shape"""

    __slots__ = ("key", "shape")
    nattrs = 4
    is_view = True

    @staticmethod
    def forward(ctx, self, dim, start, stop, step):
        key = (slice(None),) * dim + (slice(start, stop, step),)
        if ctx is not None:
            ctx.key, ctx.shape = key, self.shape
        return self[key]

    def backward(ctx, grad):
        return _slice_backward(grad, ctx.shape, ctx.key)


class Alias(Op):
    """d alias(x) = grad (``x[...]`` and ``x[:]``)"""

    __slots__ = ()
    is_view = True
    forward = staticmethod(lambda ctx, self: self.view())

    def backward(ctx, grad):
        return grad


class Index(Op):
    """d x[key] (advanced) = zeros of x's shape with grad added at key"""

    __slots__ = ("key", "shape")
    nattrs = 1

    @staticmethod
    def forward(ctx, self, key):
        if ctx is not None:
            ctx.key, ctx.shape = key, self.shape
        _check_mask_shapes(self, key)
        return np.asarray(_index_array(self, key))

    def backward(ctx, grad):
        return IndexPutZeros.apply(grad, ctx.key, ctx.shape)


def _check_mask_shapes(arr, key):
    dim = 0
    for k in key:
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            for j, s in enumerate(k.shape):
                if dim + j < arr.ndim and arr.shape[dim + j] != s:
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(arr.shape)} at index {dim + j}")
            dim += k.ndim
        elif k is not None and k is not Ellipsis:
            dim += 1


class SliceScatter(Op):
    """d (zeros with grad at basic key) = grad2[key]"""

    __slots__ = ("key",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, key, shape):
        if ctx is not None:
            ctx.key = key
        out = np.zeros(shape, self.dtype)
        out[key] = self
        return out

    def backward(ctx, grad):
        return index(grad, ctx.key, True)


class IndexPutZeros(Op):
    """d (zeros with grad accumulated at advanced key) = grad2[key]"""

    __slots__ = ("key",)
    _name = "IndexPutBackward0"
    nattrs = 2

    @staticmethod
    def forward(ctx, self, key, shape):
        if ctx is not None:
            ctx.key = key
        out = np.zeros(shape, self.dtype)
        np.add.at(out, key, self)
        return out

    def backward(ctx, grad):
        return index(grad, ctx.key, False)


def _slice_backward(grad, shape, key):
    return SliceScatter.apply(grad, key, shape)


def index(input: Tensor, key, basic: bool) -> Tensor:
    """``input[key]`` for an already converted key (basic keys as one node)."""
    if not basic:
        return Index.apply(input, key)
    return BasicIndex.apply(input, key)


def getitem(input: Tensor, key) -> Tensor:
    """``input[key]``: basic keys record torch's chain of select/slice/unsqueeze views (or an alias)."""
    k, basic = _convert_key(key)
    if not input._data.ndim:
        for i in k:
            if type(i) is int:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                 "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            if type(i) is slice:
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if not basic:
        return Index.apply(input, k)
    if not (input._requires_grad and _mode.grad_enabled):
        return BasicIndex.apply(input, k)
    if type(key) is slice and input._data.ndim:  # a lone slice is always recorded, even ``:``
        start, stop, step = k[0].indices(input._data.shape[0])
        return Slice.apply(input, 0, start, max(start, stop), step)
    steps = _basic_steps(k, input._data.shape)
    if not steps:
        return Alias.apply(input)
    from .shape import Select, Unsqueeze

    out = input
    for st in steps:
        kind = st[0]
        if kind == "select":
            out = Select.apply(out, st[1], st[2])
        elif kind == "slice":
            out = Slice.apply(out, *st[1:])
        else:
            out = Unsqueeze.apply(out, st[1])
    return out


class Where(Op):
    """d where(c, x, y) = where(c, grad, 0), where(c, 0, grad)"""

    __slots__ = ("cond",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, other, cond):
        if ctx is not None:
            ctx.cond = cond
        if cond.dtype != np.bool_:
            if cond.dtype == np.uint8:
                cond = cond.astype(bool)
            else:
                raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                                   f"{D.from_numpy_dtype(cond.dtype).name.capitalize()}")
        dt = _rt(self, other)
        a, b = _prep(self, other, dt)
        try:
            return np.asarray(np.where(cond, a, b), dt)
        except ValueError:
            try:
                np.broadcast_shapes(np.shape(a), np.shape(b))
            except ValueError:
                raise _broadcast_error(a, b) from None
            raise _broadcast_error(cond, np.broadcast_to(a, np.broadcast_shapes(np.shape(a), np.shape(b)))) from None

    def backward(ctx, grad):
        c = _wrap_any(ctx.cond)
        n0, n1 = ctx._next
        return (Where.apply(grad, 0.0, c) if n0[0] is not None else None,
                Where.apply(0.0, grad, c) if n1[0] is not None else None)


def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``."""
    if input is None and other is None:
        from . import _nonzero

        return _nonzero(condition)
    cond = condition if isinstance(condition, Tensor) else _wrap_any(np.asarray(condition))
    return Where.apply(input, other, cond)


class CopySlices(Op):
    """d (base with region := value) = grad with region zeroed, grad[region]"""

    __slots__ = ("key", "flat", "vshape")
    _name = "torch::autograd::CopySlices"
    nattrs = 2

    @staticmethod
    def forward(ctx, self, value, key, flat):
        if ctx is not None:
            ctx.key, ctx.flat = key, flat
        out = self.copy()
        target = out.reshape(-1) if flat else out
        v = value if not isinstance(value, np.ndarray) else value.astype(out.dtype, copy=False)
        try:
            target[key] = v
        except ValueError:
            from ._inplace import setitem_shape_error

            raise setitem_shape_error(v, np.shape(target[key]), not flat and _is_basic(key)) from None
        return out

    def backward(ctx, grad):
        n0, n1 = ctx._next
        key, flat = ctx.key, ctx.flat
        g = grad.reshape(-1) if flat else grad
        gb = gv = None
        if n0[0] is not None:
            mask = np.ones(g.shape, bool)
            mask[key] = False
            gb = (g * _wrap_any(mask)).reshape(grad.shape)
        if n1[0] is not None:
            gv = index(g, key, _is_basic(key))
        return gb, gv


class Copy(Op):
    """d (self := src, broadcast and cast) = zeros for self, grad for src"""

    __slots__ = ()
    _name = "torch::autograd::CopyBackwards"

    @staticmethod
    def forward(ctx, self, other):
        out = np.empty(self.shape, self.dtype)
        out[...] = other
        return out

    def backward(ctx, grad):
        n0, n1 = ctx._next
        return (grad * 0 if n0[0] is not None else None), (grad if n1[0] is not None else None)


class IndexPut(CopySlices):
    """``self[advanced key] = value``, named as torch's ``index_put_`` node."""

    __slots__ = ()
    _name = "IndexPutBackward0"


class Zero(Op):
    """d zeros_like(self) = zeros"""

    __slots__ = ()

    @staticmethod
    def forward(ctx, self):
        return np.zeros_like(self)

    def backward(ctx, grad):
        return grad * 0


class _FillScalar(Op):
    """d full_like(self, value) = zeros"""

    __slots__ = ()
    _name = "FillBackward2"
    nattrs = 1

    @staticmethod
    def forward(ctx, self, value):
        return np.full_like(self, value)

    def backward(ctx, grad):
        return grad * 0


class _FillTensor(Op):
    """d full_like(self, value) = zeros, sum(grad)"""

    __slots__ = ()
    _name = "FillBackward3"

    @staticmethod
    def forward(ctx, self, value):
        return np.full_like(self, value)

    def backward(ctx, grad):
        n0, n1 = ctx._next
        return (grad * 0 if n0[0] is not None else None), (grad.sum() if n1[0] is not None else None)


def fill_value(self: Tensor, value) -> Tensor:
    """The value ``self.fill_(value)`` leaves in ``self`` (value: number or 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return _FillTensor.apply(self, value)
    return _FillScalar.apply(self, value)


def copy_value(self: Tensor, src: Tensor) -> Tensor:
    """The value ``self.copy_(src)`` leaves in ``self``: ``src`` broadcast to its shape and cast."""
    if src._data.shape != self._data.shape:
        try:
            shape = np.broadcast_shapes(src._data.shape, self._data.shape)
        except ValueError:
            raise _broadcast_error(self._data, src._data) from None
        if shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
    return Copy.apply(self, src)


def _is_basic(key) -> bool:
    return all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in key)


class AsStrided(Op):
    """d (view of base at given memory geometry) = grad scattered into zeros of base's shape"""

    __slots__ = ("geom",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, geom, view):
        if ctx is not None:
            ctx.geom = geom
        return view

    def backward(ctx, grad):
        from ._inplace import flat_positions

        geom = ctx.geom
        shape = geom[3]
        flat = flat_positions(geom)
        return IndexPutZeros.apply(grad.reshape(-1), (flat.reshape(-1),), (int(np.prod(shape)),)).reshape(shape)
