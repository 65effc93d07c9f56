"""Indexing: ``x[key]`` (views for basic keys), ``x[key] = v`` (CopySlices) and its functional form ``index_put``,
``where`` and ``nonzero``. Indexing along one dim (gather/scatter, index_*, take) is ops/gather_scatter.py; by a
boolean mask (masked_*), ops/masked.py; searchsorted, ops/sorting.py."""
from __future__ import annotations

import re as _re
import warnings as _warnings

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _lazy
from .. import _dtype as D
from .. import _kernels
from .._layout import _storage, strided_view
from .._tensor import Tensor, _wrap_any
from ._op import Op, linear
from ..autograd._interpose import data_shaped, replayable
from ._op import const as _const
from ..autograd.grad_mode import _mode
from .arithmetic import _rt, _prep, _broadcast_error
from .shape import Select, Unsqueeze

__all__ = ["where", "index", "_slice_backward", "index_put", "nonzero", "argwhere", "nonzero_static"]

_BASIC = (int, slice, type(None), type(Ellipsis))


# NOTE [sequences as keys]
# torch reads a key that is not a tuple with NumPy's old heuristic (python_variable_indexing.cpp,
# treatSequenceAsTuple): a sequence shorter than 32 that holds a tensor, a sequence, a slice, None or Ellipsis is
# a tuple of indices (``x[[i0, i1]]`` is ``x[i0, i1]``, with a deprecation warning); any other sequence (ints,
# bools, floats; or 32 items and more) is one index tensor. Inside the key each sequence becomes an index tensor
# built as torch builds it from data (``indexing_tensor_from_data``): bool data stay a mask, anything else is
# int64 (floats truncated), nested sequences must be rectangular, single-element integer tensors are numbers.
_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; use "
    "x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
    "which will result either in an error or a different result")
_SEQ = (list, tuple, range)


def _key_items(key, stacklevel: int) -> tuple:
    """The indices of ``key`` as torch reads them (NOTE [sequences as keys]); ``stacklevel`` points the
    deprecation warning at the caller's line."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, (list, range, str)) and len(key) < 32:
        for k in key:
            if isinstance(k, (Tensor, slice, np.ndarray, str, *_SEQ)) or k is None or k is Ellipsis:
                _warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=stacklevel + 1)
                return tuple(key)
    return (key,)


def _index_from_data(data) -> np.ndarray:
    """An index array from a (nested) sequence or NumPy array, as torch makes its index tensor from data."""
    if type(data) is list and all(type(v) is int for v in data):  # the common case: no walk
        try:
            return np.array(data, np.int64)
        except OverflowError:
            raise ValueError("Overflow when unpacking long long") from None
    if _B.is_array(data):
        if data.dtype.kind == "f":
            return _to_index_ints(data)
        if data.dtype.kind not in "biu":
            raise TypeError(f"can't convert np.ndarray of type {data.dtype}. The only supported types are: float64, "
                            "float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, "
                            "uint16, uint8, and bool.")
        return data
    sizes, probe = [], data
    while isinstance(probe, _SEQ):
        sizes.append(len(probe))
        if not len(probe):
            break
        probe = probe[0]
    flat: list = []
    _store(data, 0, sizes, flat)
    if flat and all(type(v) is bool for v in flat):
        return np.array(flat, np.bool_).reshape(sizes)
    return _to_index_ints(np.array(flat, np.float64 if any(type(v) is float for v in flat) else np.int64)
                          ).reshape(sizes)


def _store(obj, dim: int, sizes: list, flat: list) -> None:
    """Appends the leaves of ``obj`` (at depth ``dim``) to ``flat`` as bool/int/float, checking torch's rules."""
    if dim == len(sizes):
        if isinstance(obj, _SEQ):
            raise TypeError(f"'{type(obj).__name__}' object cannot be interpreted as an integer")
        if isinstance(obj, Tensor):
            a = obj._data
            if a.size != 1 or a.dtype.kind not in "biu":
                raise TypeError("only integer tensors of a single element can be converted to an index")
            obj = a.reshape(()).item()
        if isinstance(obj, (bool, np.bool_)):
            flat.append(bool(obj))
        elif isinstance(obj, (int, np.integer)):
            flat.append(int(obj))
        elif isinstance(obj, (float, np.floating)):
            flat.append(float(obj))
        elif isinstance(obj, (complex, np.complexfloating)):
            raise TypeError("'complex' object cannot be interpreted as an integer")
        elif isinstance(obj, str):
            raise TypeError("new(): invalid data type 'str'")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")
        return
    if not isinstance(obj, _SEQ):
        raise TypeError("not a sequence")
    if len(obj) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
    for item in obj:
        _store(item, dim + 1, sizes, flat)


def _to_index_ints(a: np.ndarray) -> np.ndarray:
    """int64 from an int or float array: floats truncated toward zero, torch's error where one overflows."""
    if a.dtype.kind != "f":
        return a.astype(np.int64, copy=False)
    if a.size and not (np.all(np.isfinite(a)) and a.min() >= -2.0 ** 63 and a.max() < 2.0 ** 63):
        raise RuntimeError("value cannot be converted to type int64 without overflow")
    return np.trunc(a).astype(np.int64)


def _convert_key(key, shape=None, stacklevel: int = 4, ref=None):
    """A NumPy key from a torch key (tensors/lists become arrays); checks torch's rules. ``stacklevel``: how far up
    the user's ``x[key]`` is (by default through ``__getitem__`` and ``getitem``); index arrays go to the device of
    ``ref`` (the indexed array) when given."""
    items = _key_items(key, stacklevel + 1)
    out = []
    basic = True
    for k in items:
        if isinstance(k, Tensor):
            a = k._data
            if a.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if a.ndim == 0 and a.dtype.kind in "iu" and type(a) is np.ndarray:  # (not a vmap placeholder)
                if _mode.tracer is not None:  # the index's value becomes part of the key (ember.compile)
                    _mode.tracer.read(k, "an index")
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
        elif isinstance(k, (np.ndarray, str, *_SEQ)):
            out.append(_index_from_data(k))
            basic = False
        elif isinstance(k, str):  # torch tries to make a tensor of it
            raise TypeError("new(): invalid data type 'str'")
        else:
            cls = type(k)
            name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             f"are valid indices (got {name})")
    if not basic and ref is not None and type(ref) is not np.ndarray:
        out = _B.key_on(ref, out)
    if not basic and shape is not None:
        return _torch_order(tuple(out), shape), False
    return tuple(out), basic


class _Shape:
    """Just the shape and rank of an array (for checks that need no data)."""

    __slots__ = ("shape", "ndim")

    def __init__(self, shape: tuple) -> None:
        self.shape, self.ndim = shape, len(shape)


def _torch_order(key: tuple, shape: tuple) -> tuple:
    """An advanced key with torch's meaning as a NumPy key.

    torch first applies ints, slices and None as views, then indexes the view with the tensors, so an
    int never counts as an advanced index when placing the result dims (NumPy's rule differs; slices and
    None agree). Keys mixing ints and index tensors become one integer-array key (the selected positions).
    Bounds errors name the dim as torch does: the position among the index tensors."""
    _check_mask_shapes(_Shape(shape), key)
    ndim = len(shape)
    consumed = sum(k.ndim if _B.is_array(k) and k.dtype == np.bool_ else 1
                   for k in key if k is not None and k is not Ellipsis and not isinstance(k, bool))
    if any(k is Ellipsis for k in key):  # spelled out: an empty Ellipsis does not separate index tensors
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * max(ndim - consumed, 0) + key[i + 1:]
    src = adv = 0
    mixed = False
    for k in key:
        if k is Ellipsis:
            src += max(ndim - consumed, 0)
        elif k is None or isinstance(k, bool):
            pass
        elif _B.is_array(k):
            if k.dtype == np.bool_:
                src += k.ndim
                adv += k.ndim
                continue
            if src < ndim and k.size and not hasattr(k, "bt"):  # (a vmap placeholder: checked per example)
                n = shape[src]
                if k.max() >= n or k.min() < -n:
                    bad = int(k[(k < -n) | (k >= n)].flat[0])
                    raise IndexError(f"index {bad} is out of bounds for dimension {adv} with size {n}")
            src += 1
            adv += 1
        else:
            mixed = mixed or type(k) is int  # NumPy treats an int next to index arrays as one of them
            src += 1
    if not mixed or not shape:
        return key
    first, then = [], []
    for k in key:
        if _B.is_array(k) or isinstance(k, bool):
            first += [slice(None)] * (k.ndim if _B.is_array(k) and k.dtype == np.bool_ else
                                      0 if isinstance(k, bool) else 1)
            then.append(k)
        elif k is Ellipsis:
            first.append(k)
            then.append(k)
        else:
            first.append(k)
            if type(k) is not int:
                then.append(slice(None))
    pos = np.arange(int(np.prod(shape)), like=next((k for k in key if _B.is_array(k)), None)).reshape(shape)
    return np.unravel_index(_index_array(_index_array(pos, tuple(first)), tuple(then)), shape)


def _int_or_none(v):
    if v is None:
        return None
    return int(v)


def _index_array(arr: np.ndarray, key):
    try:
        return arr[key]
    except IndexError as e:
        raise index_error(e, arr.ndim) from None


def index_error(e: IndexError, ndim: int) -> IndexError:
    """torch's IndexError for NumPy's from indexing an array of ``ndim`` dims."""
    msg = str(e)
    if "out of bounds" in msg:
        msg = msg.replace("axis", "dimension")
    elif "too many indices" in msg:
        msg = f"too many indices for tensor of dimension {ndim}"
    elif "could not be broadcast" in msg:
        shapes = _re.findall(r"\(([^)]*)\)", msg)
        lists = ", ".join("[" + ", ".join(x.strip() for x in sh.split(",") if x.strip()) + "]" for sh in shapes)
        msg = f"shape mismatch: indexing tensors could not be broadcast together with shapes {lists}"
    return IndexError(msg)


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
    jvp = linear
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
    if type(out) in _B.ARRAYS:
        return out
    return arr[key + (Ellipsis,)] if isinstance(key, tuple) else arr[(key, Ellipsis)]


class Slice(Op):
    """d x[..., start:stop:step] along dim = grad placed back into zeros of x's shape"""

    __slots__ = ("key", "shape")
    jvp = linear
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
    jvp = linear
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
        return _B.asarray(_index_array(self, key))

    def backward(ctx, grad):
        return IndexPutZeros.apply(grad, ctx.key, ctx.shape)


def _check_mask_shapes(arr, key):
    def width(k):  # the dims of ``arr`` a key entry consumes
        if _B.is_array(k) and k.dtype == np.bool_:
            return k.ndim
        return 0 if k is None or k is Ellipsis else 1

    dim = 0
    for i, k in enumerate(key):
        if k is Ellipsis:  # the entries after it index the trailing dims
            dim = arr.ndim - sum(width(rest) for rest in key[i + 1:])
        elif _B.is_array(k) and k.dtype == np.bool_:
            for j, s in enumerate(k.shape):
                if dim + j < arr.ndim and arr.shape[dim + j] != s:
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(arr.shape)} at index {dim + j}")
            dim += k.ndim
        else:
            dim += width(k)


class SliceScatter(Op):
    """d (zeros with grad at basic key) = grad2[key]"""

    __slots__ = ()
    attrs = ("key", "shape")

    @staticmethod
    def forward(ctx, self, key, shape):
        out = np.zeros(shape, self.dtype, like=self)
        out[key] = self
        return out

    def backward(ctx, grad):
        return index(grad, ctx.key, True)


class IndexPutZeros(Op):
    """d (zeros with grad accumulated at advanced key) = grad2[key]"""

    __slots__ = ()
    _name = "IndexPutBackward0"
    attrs = ("key", "shape")

    @staticmethod
    def forward(ctx, self, key, shape):
        out = np.zeros(shape, self.dtype, like=self)
        _kernels.scatter_add(out, key, self)  # NOTE [flat scatter-add]
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
    k, basic = _convert_key(key, input._data.shape, ref=input._data)
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

    __slots__ = ()
    attrs = ("cond",)
    jvp = linear  # the condition is an attribute

    @staticmethod
    def forward(ctx, self, other, cond):
        if cond.dtype != np.bool_:
            if cond.dtype == np.uint8:
                cond = cond.astype(bool)
            else:
                raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                                   f"{D.from_numpy_dtype(cond.dtype).name.capitalize()}")
        dt = _rt(self, other)
        a, b = _prep(self, other, dt)
        try:
            if dt.kind == "f":
                return _kernels.select(cond, a, b, dt)  # NOTE [branch-free select]
            return _B.asarray(np.where(cond, a, b), dt)
        except ValueError:
            try:
                np.broadcast_shapes(np.shape(a), np.shape(b))
            except ValueError:
                raise _broadcast_error(a, b) from None
            raise _broadcast_error(cond, np.broadcast_to(a, np.broadcast_shapes(np.shape(a), np.shape(b)))) from None

    def backward(ctx, grad):
        c = _wrap_any(ctx.cond)
        need = ctx.needs_input_grad
        return (Where.apply(grad, 0.0, c) if need[0] else None,
                Where.apply(0.0, grad, c) if need[1] else None)


def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = condition if isinstance(condition, Tensor) else _wrap_any(_B.asarray(condition))
    return Where.apply(input, other, cond)


@replayable  # the key may hold index arrays of the data: NOTE [replayable steps]
def _outside(shape: tuple, key, like=None) -> np.ndarray:
    """True outside the region ``key`` of an array of ``shape`` (on ``like``'s device)."""
    mask = _B.ones(shape, bool, like=_B.ref(like))
    mask[key] = False
    return mask


class CopySlices(Op):
    """d (base with region := value) = grad with region zeroed, grad[region]"""

    __slots__ = ("vshape",)
    _name = "torch::autograd::CopySlices"
    attrs = ("key", "flat")

    @staticmethod
    def forward(ctx, self, value, key, flat):
        out = self.copy()
        target = out.reshape(-1) if flat else out
        v = value if not _B.is_array(value) else value.astype(out.dtype, copy=False)
        try:
            target[key] = v
        except ValueError:
            from ._inplace import setitem_shape_error

            raise setitem_shape_error(v, np.shape(target[key]), not flat and _is_basic(key)) from None
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        key, flat = ctx.key, ctx.flat
        g = grad.reshape(-1) if flat else grad
        gb = gv = None
        if need[0]:  # zeroed, not multiplied: inf/nan stay out
            gb = where(_wrap_any(_outside(g._data.shape, key, g._data)), g, 0.0).reshape(grad.shape)
        if need[1]:
            gv = index(g, key, _is_basic(key))
        return gb, gv


class Copy(Op):
    """d (self := src, broadcast and cast) = zeros for self, grad for src"""

    __slots__ = ()
    _name = "torch::autograd::CopyBackwards"

    @staticmethod
    def forward(ctx, self, other):
        out = np.empty(self.shape, self.dtype, like=self)
        out[...] = other
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (grad * 0 if need[0] else None), (grad if need[1] else None)


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
        need = ctx.needs_input_grad
        return (grad * 0 if need[0] else None), (grad.sum() if need[1] else None)


def fill_value(self: Tensor, value) -> Tensor:
    """The value ``self.fill_(value)`` leaves in ``self`` (value: number or 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return _FillTensor.apply(self, value)
    return _FillScalar.apply(self, D.scalar_into(value, self._dtype))


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


def setitem_node(key: tuple, basic: bool, shape: tuple) -> type:
    """The node torch records for ``x[key] = v``: CopySlices when a view is written (basic keys, or
    advanced keys whose basic part selects/slices first), IndexPutBackward0 for advanced keys on the
    tensor itself, None when the key spans the whole tensor (a copy_/fill_)."""
    if basic:
        return CopySlices if _basic_steps(key, shape) else None
    plain = []
    for k in key:
        if _B.is_array(k) and k.dtype == np.bool_:
            plain += [slice(None)] * k.ndim
        elif _B.is_array(k) or isinstance(k, bool):
            plain.append(slice(None))
        else:
            plain.append(k)
    try:
        return CopySlices if _basic_steps(tuple(plain), shape) else IndexPut
    except IndexError:
        return IndexPut


def _is_basic(key) -> bool:
    return all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in key)


class AsStrided(Op):
    """d (view of base at given memory geometry) = grad scattered into zeros of base's shape"""

    __slots__ = ("geom",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, geom, view):
        if ctx is not None:
            ctx.geom = geom  # (not the view array: the node keeps no array it does not need)
        return view

    def backward(ctx, grad):
        from ._inplace import flat_positions

        geom = ctx.geom
        shape = geom[3]
        flat = flat_positions(geom)
        return IndexPutZeros.apply(grad.reshape(-1), (flat.reshape(-1),), (int(np.prod(shape)),)).reshape(shape)

    @classmethod
    def jvp(cls, args, out, tangents):
        """The same view of the tangent when it is laid out as the input (a write through the view then reaches
        the input's tangent), else its elements at the view's positions."""
        from ._inplace import flat_positions, view_geometry
        t, (offset, shape, strides, _, bstrides) = tangents[0], args[1]
        if t is None:
            return None
        ta = t._data
        item = ta.itemsize
        if ta.strides == tuple(s * item for s in bstrides):
            store = _storage(t)
            at = _B.address(ta) - _B.address(store) + offset * item
            if at >= 0:
                arr = strided_view(store, shape, tuple(s * item for s in strides), at)
                return cls.apply(t, view_geometry(arr, ta), arr)
        return t.reshape(-1)[_const(flat_positions(args[1]))]


class IndexPutFunctional(Op):
    """d index_put(x, indices, v, accumulate) = grad (indices zeroed unless accumulating), grad[indices]"""

    __slots__ = ()
    _name = "IndexPutBackward0"
    attrs = ("key", "accumulate")

    @staticmethod
    def forward(ctx, self, values, key, accumulate):
        out = self.copy()
        v = values.astype(out.dtype, copy=False) if _B.is_array(values) else values
        region = np.shape(_index_array(out, key))
        try:
            if accumulate:
                _kernels.scatter_add(out, key, np.broadcast_to(v, region))
            else:
                out[key] = v
        except ValueError:
            from ._inplace import setitem_shape_error

            raise setitem_shape_error(_B.asarray(v), region, False) from None
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = gv = None
        if need[0]:
            gs = grad if ctx.accumulate else IndexPutFunctional.apply(grad, 0.0, ctx.key, False)
        if need[1]:
            gv = Index.apply(grad, ctx.key)
        return gs, gv


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with ``values`` put (or added, when ``accumulate``) at the advanced index ``indices``."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors")
    if len(indices) > max(input._data.ndim, 1):
        raise IndexError(f"too many indices for tensor of dimension {input._data.ndim} (got {len(indices)})")
    key, _ = _convert_key(tuple(None if i is None else i for i in indices), ref=input._data)
    key = tuple(slice(None) if k is None else k for k in key)
    key = tuple(_B.like(input._data, k) if isinstance(k, int) else k for k in key)
    if isinstance(values, Tensor) and values._dtype != input._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input._dtype._scalar_name} for the destination and "
                           f"{values._dtype._scalar_name} for the source.")
    _check_mask_shapes(input._data, key)
    return IndexPutFunctional.apply(input, values, key, bool(accumulate))



def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or one 1-d tensor per dim."""
    a = input._data
    if type(a) not in _B.ARRAYS:  # batched under vmap: the result's shape depends on each example's values
        if as_tuple:
            raise RuntimeError("Batching rule not implemented for aten::nonzero_numpy. We could not generate a "
                               "fallback.")
        raise RuntimeError("vmap: We do not support batching operators that can output dynamic shape. Attempted to "
                           "vmap over aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues "
                           "if you need this feature.")
    data_shaped("nonzero")
    if as_tuple:
        return tuple(_wrap_any(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(a)))
    return _wrap_any(np.argwhere(a).astype(np.int64))


class Argwhere(Op):
    """Indices of the non-zero elements, (n, ndim) int64 (no gradient). Under vmap it runs once per example (the
    counted fallback) and the results stack only when every example has as many, as torch's fallback."""

    __slots__ = ()

    @staticmethod
    def forward(ctx, self):
        return np.argwhere(self).astype(np.int64)

    def backward(ctx, grad):  # pragma: no cover - integer output
        return None


def argwhere(input: Tensor) -> Tensor:
    """Indices of the non-zero elements as an (n, ndim) int64 tensor."""
    return Argwhere.apply(input)



def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The first ``size`` rows of ``nonzero(input)``, padded with ``fill_value``."""
    from .._factories import tensor

    idx = np.argwhere(input._data)
    out = np.full((size, input._data.ndim), fill_value, np.int64)
    k = min(size, len(idx))
    out[:k] = idx[:k]
    return tensor(out)


_args.install(globals(), ("where", "index_put", "nonzero", "argwhere", "nonzero_static"),
              out=("where", "nonzero_static"))


# NOTE [names of a split module]
# gather/scatter and the index_* ops (ops/gather_scatter.py) and the masked_* ops (ops/masked.py) were once written
# here. They build on this module's nodes, so it cannot import them at its top (an import cycle), yet Tensor
# methods (_methods.py) and some callers still name them as ``ember.ops.indexing.<name>``. A module-level
# ``__getattr__`` (PEP 562), called only for a name the module lacks, answers from the modules that define them and
# keeps what it found; it loads nothing new (ember.ops imports them all). ops/shape.py does the same for the
# joining, rearranging and triangular ops.
__getattr__ = _lazy.moved(__name__, (".gather_scatter", ".masked"))
