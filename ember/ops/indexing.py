"""Indexing: ``x[key]`` (views for basic keys), ``x[key] = v`` (CopySlices), ``where``."""
from __future__ import annotations

import re as _re
import warnings as _warnings

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _dtype as D
from .. import _kernels
from .._layout import _storage, strided_view
from .._tensor import Tensor, _all_examples, _wrap_any
from ._op import Op, linear, unsupported
from ..autograd._interpose import data_shaped, replayable
from ._op import const as _const
from ..autograd.grad_mode import _mode
from .arithmetic import _rt, _prep, _broadcast_error

__all__ = ["where", "index", "_slice_backward"]

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
        elif isinstance(k, (np.ndarray, bool)):
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


# ---------------------------------------------------------------- gather/scatter, index_*, masked_*, take, search
__all__ += ["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add", "index_copy",
            "index_fill", "index_put", "masked_fill", "masked_select", "masked_scatter", "take", "take_along_dim",
            "nonzero", "argwhere", "searchsorted", "bucketize"]

_INT_KINDS = "iu"


def _wdim(dim: int, ndim: int) -> int:
    from .._tensor import _wrap_dim

    return _wrap_dim(dim, ndim)


def _dim_key(d: int, idx) -> tuple:
    return (slice(None),) * d + (idx,)


def _along_key(idx: np.ndarray, dim: int) -> tuple:
    """The index tuple putting ``idx`` along ``dim`` (open ranges on the other dims, on ``idx``'s device)."""
    n = idx.ndim
    return tuple(idx if d == dim else np.arange(s, like=idx).reshape((1,) * d + (s,) + (1,) * (n - d - 1))
                 for d, s in enumerate(idx.shape))


def _check_index_dtype(index: Tensor, fname: str) -> np.ndarray:
    if not isinstance(index, Tensor):
        raise TypeError(f"{fname}(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64 and a.dtype != np.int32:
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index")
    return a.astype(np.int64, copy=False)


def _check_along(self_shape, idx: np.ndarray, d: int, fname: str, src_shape=None) -> None:
    """torch's rules for gather/scatter: same rank, index no larger than self (and src), bounds along ``d``."""
    n = max(len(self_shape), 1)
    if idx.size == 0:
        return
    if max(idx.ndim, 1) != n:
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input tensor" if fname == "gather" else "self tensor"))
    shp = self_shape if self_shape else (1,)
    ishp = idx.shape if idx.shape else (1,)
    for i in range(n):
        if fname == "gather" and i != d and ishp[i] > shp[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(idx.shape)} to be no "
                               f"larger than self {list(self_shape)} apart from dimension {d}")
        if src_shape is None and i != d and ishp[i] > shp[i]:
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self {list(self_shape)} apart "
                               f"from dimension {d}")
        if src_shape is not None and (ishp[i] > (src_shape or (1,))[i] or i != d and ishp[i] > shp[i]):
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self {list(self_shape)} apart "
                               f"from dimension {d} and to be no larger size than src {list(src_shape)}")
    if hasattr(idx, "bt"):
        return  # a batched index's placeholder (under vmap): the op checks the values, per example
    size = shp[d]
    bad = (idx < 0) | (idx >= size)  # no negative indices along dim (torch's gather/scatter kernels)
    if bad.any():
        v = int(idx[bad].flat[0])
        raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {size}")


def _as_nd(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


def _part(a: np.ndarray, shape: tuple) -> np.ndarray:
    """The leading ``shape`` block of ``a`` (for index tensors smaller than self/src)."""
    if a.shape == shape:
        return a
    return a[tuple(slice(0, s) for s in shape)]


class Gather(Op):
    """d gather(x, dim, idx) = grad added back at idx along dim into zeros of x's shape"""

    __slots__ = ("idx", "dim", "shape")
    nattrs = 2

    @staticmethod
    def forward(ctx, self, dim, idx):
        x, i = _as_nd(self), _as_nd(idx)
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.shape = i, dim, self.shape
        if not i.size:  # an empty index may have any number of dims (torch checks no ranks then)
            return np.zeros(idx.shape, self.dtype, like=self)
        return _kernels.take_along(x, _kernels.wrapped(i, x.shape[dim]), dim).reshape(idx.shape)

    def backward(ctx, grad):
        g = _PutAlongDim.apply(grad.reshape(ctx.idx.shape), ctx.idx, ctx.dim, ctx.shape or (1,))
        return g.reshape(ctx.shape)


class _PutAlongDim(Op):
    """d (zeros of shape with x added at idx along dim) = gather(grad, dim, idx)"""

    __slots__ = ()
    _name = "ScatterAddBackward0"
    attrs = ("idx", "dim", "shape")

    @staticmethod
    def forward(ctx, self, idx, dim, shape):
        out = np.zeros(shape, self.dtype, like=self)
        if idx.size:
            _kernels.scatter_add(out, _along_key(_kernels.wrapped(idx, shape[dim]), dim), self)
        return out

    def backward(ctx, grad):
        return Gather.apply(grad, ctx.dim, ctx.idx)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False, out=None) -> Tensor:
    """Values of ``input`` at ``index`` along ``dim``."""
    idx = _check_index_dtype(index, "gather")
    d = _wdim(dim, input._data.ndim)
    _check_along(input._data.shape, idx, d, "gather")
    return Gather.apply(input, d, idx)


def _scatter_forward(self, src, dim, idx, reduce):
    out = self.copy()
    if not idx.size:
        return out
    o = _as_nd(out)
    i = _as_nd(idx)
    key = _along_key(_kernels.wrapped(i, o.shape[dim]), dim)
    v = _part(_as_nd(src), i.shape).astype(o.dtype, copy=False) if _B.is_array(src) else src
    if reduce is None:
        o[key] = v
    elif reduce == "add":
        if o.flags.c_contiguous and _B.writeable(o):
            _kernels.scatter_add(o, key, v)
        else:
            _B.ufunc_at(np.add, o, key, v)
    else:
        _B.ufunc_at(np.multiply, o, key, v)
    return out


def _pad_to(g: Tensor, shape: tuple) -> Tensor:
    """``g`` (the leading block of ``shape``) padded with zeros to ``shape``."""
    if tuple(g.shape) == tuple(shape):
        return g
    if g._data.ndim != len(shape):  # from a 0-d or empty index, whose rank may differ from src's
        if not g._data.size:
            return _const(np.zeros(shape, g._data.dtype))
        g = g.reshape((1,) * len(shape))
    return SliceScatter.apply(g, tuple(slice(0, s) for s in g.shape), shape)


class Scatter(Op):
    """d scatter(x, dim, idx, src) = grad with idx positions zeroed, gather(grad, dim, idx)"""

    __slots__ = ("idx", "dim", "src_shape")
    nattrs = 2
    jvp = linear  # linear in (self, src) for a fixed index, duplicates resolved as in the forward

    @staticmethod
    def forward(ctx, self, src, dim, idx):
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.src_shape = idx, dim, src.shape
        return _scatter_forward(self, src, dim, idx, None)

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = ScatterValue.apply(grad, ctx.dim, ctx.idx, 0.0, None) if need[0] else None
        gsrc = _pad_to(Gather.apply(grad, ctx.dim, ctx.idx), ctx.src_shape) if need[1] else None
        return gs, gsrc


class ScatterValue(Op):
    """d scatter(x, dim, idx, value) = grad with idx positions zeroed"""

    __slots__ = ()
    _name = "ScatterBackward1"
    attrs = ("dim", "idx", "value", "reduce")

    @staticmethod
    def forward(ctx, self, dim, idx, value, reduce):
        return _scatter_forward(self, value, dim, idx, reduce)

    def backward(ctx, grad):
        return ScatterValue.apply(grad, ctx.dim, ctx.idx, 0.0, None)


class ScatterReduceLegacy(Op):
    """scatter(..., reduce='add'/'multiply') with a src tensor: torch has no derivative for it"""

    __slots__ = ()
    _name = "NotImplemented"
    nattrs = 3
    jvp = unsupported("aten::scatter")

    @staticmethod
    def forward(ctx, self, src, dim, idx, reduce):
        return _scatter_forward(self, src, dim, idx, reduce)

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::scatter is not implemented")


class ScatterAdd(Op):
    """d scatter_add(x, dim, idx, src) = grad, gather(grad, dim, idx)"""

    __slots__ = ("idx", "dim", "src_shape")
    nattrs = 2

    @staticmethod
    def forward(ctx, self, src, dim, idx):
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.src_shape = idx, dim, src.shape
        return _scatter_forward(self, src, dim, idx, "add")

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (grad if need[0] else None,
                _pad_to(Gather.apply(grad, ctx.dim, ctx.idx), ctx.src_shape) if need[1] else None)


def _scatter_args(input: Tensor, dim: int, index: Tensor, src, fname: str):
    idx = _check_index_dtype(index, fname)
    d = _wdim(dim, input._data.ndim)
    if isinstance(src, Tensor):
        if src._dtype != input._dtype:
            raise RuntimeError(f"{fname}(): Expected self.dtype to be equal to src.dtype")
        if max(src._data.ndim, 1) != max(input._data.ndim, 1) and idx.size:
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        _check_along(input._data.shape, idx, d, fname, src._data.shape)
    else:
        _check_along(input._data.shape, idx, d, fname)
    return d, idx


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None) -> Tensor:
    """``input`` with ``src`` (tensor or number) written at ``index`` along ``dim``."""
    if src is None:
        src = value
    d, idx = _scatter_args(input, dim, index, src, "scatter")
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    if not isinstance(src, Tensor):
        src = D.scalar_into(src, input._dtype)
    if reduce is not None:
        return ScatterReduceLegacy.apply(input, src, d, idx, reduce)
    if isinstance(src, Tensor):
        return Scatter.apply(input, src, d, idx)
    return ScatterValue.apply(input, d, idx, src, None)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``input`` with ``src`` added at ``index`` along ``dim`` (duplicates accumulate)."""
    d, idx = _scatter_args(input, dim, index, src, "scatter_add")
    return ScatterAdd.apply(input, src, d, idx)


_SCATTER_REDUCE = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum, "mean": np.add}


class ScatterReduce(Op):
    """d scatter_reduce(x, dim, idx, src, reduce, include_self): by reduce (ties of amax/amin share the grad)"""

    __slots__ = ()
    save = ("self", "other", "result")
    attrs = ("dim", "idx", "reduce", "include_self")
    quiet = True  # products/means of inf and nan: no NumPy warnings

    @staticmethod
    def forward(ctx, self, src, dim, idx, reduce, include_self):
        if reduce in ("amax", "amin") and self.dtype.kind == "c":
            from .reduction import complex_refused

            raise complex_refused(f"scatter_gather_tensor_cpu_reduce_{reduce}", self.dtype)
        out = self.copy()
        if not idx.size:
            return out
        o, i = _as_nd(out), _as_nd(idx)
        key = _along_key(_kernels.wrapped(i, o.shape[dim]), dim)
        v = _part(_as_nd(src), i.shape)
        hit = np.zeros(o.shape, bool, like=o)
        hit[key] = True
        if not include_self:
            o[hit] = {"sum": 0, "mean": 0, "prod": 1}.get(reduce, 0)
            if reduce == "amax":
                o[hit] = -np.inf if o.dtype.kind == "f" else np.iinfo(o.dtype).min
            elif reduce == "amin":
                o[hit] = np.inf if o.dtype.kind == "f" else np.iinfo(o.dtype).max
        _B.ufunc_at(_SCATTER_REDUCE[reduce], o, key, v)
        if reduce == "mean":
            cnt = np.zeros(o.shape, np.int64 if o.dtype.kind != "f" else o.dtype, like=o)
            _B.ufunc_at(np.add, cnt, key, 1)
            if include_self:
                cnt = cnt + 1
            cnt = np.maximum(cnt, 1)
            o[...] = o // cnt if o.dtype.kind in "iu" else o / cnt
        return out

    def backward(ctx, grad):
        self, src, result = ctx.saved_tensors
        d, idx, red = ctx.dim, ctx.idx, ctx.reduce
        shape = tuple(self.shape) or (1,)
        need = ctx.needs_input_grad
        hit = np.zeros(shape, bool, like=_B.ref(grad._data))
        if idx.size:
            hit[_along_key(_as_nd(idx) % shape[d], d)] = True
        keep = _const(~hit) if not ctx.include_self else None
        src_p = _part_t(src, idx)
        if red == "sum":
            gs = grad if keep is None else grad * keep
            gsrc = Gather.apply(grad, d, idx)
        elif red == "mean":
            cnt = np.zeros(shape, grad._data.dtype, like=_B.ref(grad._data))
            if idx.size:
                _B.ufunc_at(np.add, cnt, _along_key(_as_nd(idx) % shape[d], d), 1)
            cnt = cnt.reshape(self.shape) + (1 if ctx.include_self else 0)
            gm = grad / _const(np.maximum(cnt, 1))
            gs = gm if keep is None else gm * keep
            gsrc = Gather.apply(gm, d, idx)
        elif red == "prod":
            # d/dx of a product is the product of the other factors: recomputed with the zero factor set to 1
            # (a division by x only where x != 0)
            inc = ctx.include_self
            self_one = MaskedFill.apply(self, self._data == 0, 1)
            gs = grad * ScatterReduce.apply(self_one, src, d, idx, red, inc) / self_one
            if keep is not None:
                gs = gs * keep
            zero = src_p._data == 0
            nzero = np.zeros(shape, np.int64, like=_B.ref(grad._data))
            if idx.size:
                _B.ufunc_at(np.add, nzero, _along_key(_as_nd(idx) % shape[d], d), _as_nd(zero))
            single = zero & (np.take_along_axis(nzero, _as_nd(idx) % shape[d], d).reshape(zero.shape) == 1)
            src_one = MaskedFill.apply(src, _pad_mask(single, tuple(src.shape)), 1)
            others = Gather.apply(grad * ScatterReduce.apply(self, src_one, d, idx, red, inc), d, idx)
            gsrc = Where.apply(others, Gather.apply(grad * result, d, idx) / MaskedFill.apply(src_p, zero, 1),
                               _const(single))
        else:  # amax / amin: the gradient is shared evenly among the elements equal to the result
            eq_self = (self == result).to(grad.dtype)
            if keep is not None:
                eq_self = eq_self * keep
            res_at = Gather.apply(result, d, idx)
            eq_src = (src_p == res_at).to(grad.dtype)
            cnt = eq_self + _PutAlongDim.apply(eq_src, _as_nd(idx), d, shape).reshape(self.shape)
            gm = grad / cnt.clamp_min(1)
            gs = gm * eq_self
            gsrc = Gather.apply(gm, d, idx) * eq_src
        return (gs if need[0] else None,
                _pad_to(gsrc, tuple(src.shape)) if need[1] else None)


def _pad_mask(m: np.ndarray, shape: tuple) -> np.ndarray:
    if m.shape == shape:
        return m
    out = np.zeros(shape, bool, like=m)
    out[tuple(slice(0, n) for n in m.shape)] = m
    return out


def _part_t(src: Tensor, idx: np.ndarray) -> Tensor:
    if tuple(src.shape) == idx.shape:
        return src
    if src._data.ndim != idx.ndim:  # a 0-d or empty index, whose rank may differ from src's
        return src.reshape(-1)[:idx.size].reshape(idx.shape)
    return BasicIndex.apply(src, tuple(slice(0, s) for s in idx.shape))


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``input`` with ``src`` reduced into ``index`` positions along ``dim`` (sum, prod, mean, amax, amin)."""
    if reduce not in ("amax", "amin"):  # (those refuse complex inputs in their kernel)
        from .complex_numbers import refuse_complex_grad

        refuse_complex_grad("scatter_reduce", input, src)  # (torch differentiates the in-place form)
    return scatter_reduce_any(input, dim, index, src, reduce, include_self=include_self)


def scatter_reduce_any(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                       include_self: bool = True) -> Tensor:
    """``scatter_reduce`` of any dtype (the function ``Tensor.scatter_reduce_`` writes in place)."""
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, idx = _scatter_args(input, dim, index, src, "scatter_reduce")
    return ScatterReduce.apply(input, src, d, idx, reduce, bool(include_self))


def _index_1d(index, fname: str, what: str = "int32 or int64") -> np.ndarray:
    if not isinstance(index, Tensor):
        raise TypeError(f"{fname}(): argument 'index' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype.kind not in _INT_KINDS or a.dtype.itemsize < 4:
        raise RuntimeError(f"{fname}(): Expected dtype {what} for index")
    if a.ndim > 1:
        raise IndexError(f"{fname}(): Index is supposed to be a vector")
    return a.reshape(-1).astype(np.int64, copy=False)


# NOTE [index bounds]: which ops take negative indices is torch's per-op choice, and so is the error. Indexing
# (x[i], x[i] = v, index_put_), take, put_ and index_fill count from the end; gather, scatter*, index_select,
# index_add, index_copy and index_reduce refuse any negative index (a silent wrap there corrupts values). Each
# check runs before the kernel, so NumPy never wraps or raises its own error.
_INDEX_RULES = {  # fname: (negatives allowed, exception, message with {bad}/{d}/{size}, or a fixed message)
    "index_select": (False, IndexError, "index out of range in self"),
    "index_reduce": (False, IndexError, "index out of range in self"),
    "index_add": (False, RuntimeError, "index {bad} is out of bounds for dimension {d} with size {size}"),
    "index_copy": (False, IndexError, "index_copy_(): index {bad} is out of bounds for dimension {d} with size {size}"),
    "index_fill": (True, IndexError, "index {bad} is out of bounds for dimension {d} with size {size}"),
}


def _check_bounds(idx: np.ndarray, size: int, fname: str, d: int = 0) -> None:
    """torch's bounds check of ``fname``'s 1-d index along a dim of ``size`` (NOTE [index bounds])."""
    if not idx.size:
        return
    negatives, exc, msg = _INDEX_RULES[fname]
    bad = ((idx < -size) if negatives else (idx < 0)) | (idx >= size)
    if bad.any():
        raise exc(msg.format(bad=int(idx[bad][0]), d=d, size=size))


class IndexSelect(Op):
    """d index_select(x, dim, idx) = grad added at idx along dim into zeros of x's shape"""

    __slots__ = ("idx", "dim", "shape")
    nattrs = 2

    @staticmethod
    def forward(ctx, self, dim, idx):
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.shape = idx, dim, self.shape
        if self.ndim == 0:
            return self.copy()
        return np.take(self, idx, axis=dim)

    def backward(ctx, grad):
        if not ctx.shape:
            return grad.reshape(())
        return IndexPutZeros.apply(grad, _dim_key(ctx.dim, ctx.idx), ctx.shape)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` at ``index`` along ``dim``."""
    idx = _index_1d(index, "index_select", "int32 or int64")
    d = _wdim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    _check_bounds(idx, size, "index_select", d)
    return IndexSelect.apply(input, d, idx)


def _index_source(input: Tensor, source: Tensor, d: int, idx: np.ndarray, fname: str) -> None:
    if source._data.ndim != input._data.ndim and max(source._data.ndim, 1) != max(input._data.ndim, 1):
        raise IndexError(f"{fname}(): Source/destination tensor must have same slice shapes. Destination slice shape: "
                         f"{list(np.delete(np.array(input._data.shape, int), d))} at dimension {d} and source slice "
                         f"shape: {list(np.delete(np.array(source._data.shape, int), d))} at dimension 0.")
    n = source._data.shape[d] if source._data.ndim else 1
    if n != idx.size:
        raise RuntimeError(f"{fname}_(): Number of indices ({idx.size}) should be equal to source.size(dim) ({n})")


class IndexAdd(Op):
    """d index_add(x, dim, idx, src, alpha) = grad, alpha * index_select(grad, dim, idx)"""

    __slots__ = ("idx", "dim", "alpha", "src_shape")
    nattrs = 3

    @staticmethod
    def forward(ctx, self, src, dim, idx, alpha):
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.alpha, ctx.src_shape = idx, dim, alpha, src.shape
        out = self.copy()
        v = src if alpha == 1 else src * alpha
        _kernels.scatter_add(_as_nd(out), _dim_key(dim, idx), _as_nd(v).astype(out.dtype, copy=False))
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gsrc = None
        if need[1]:
            gsrc = IndexSelect.apply(grad, ctx.dim, ctx.idx).reshape(ctx.src_shape)
            if ctx.alpha != 1:
                gsrc = gsrc * ctx.alpha
        return (grad if need[0] else None), gsrc


class IndexCopy(Op):
    """d index_copy(x, dim, idx, src) = grad with idx slices zeroed, index_select(grad, dim, idx)"""

    __slots__ = ("idx", "dim", "src_shape")
    nattrs = 2

    @staticmethod
    def forward(ctx, self, src, dim, idx):
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.src_shape = idx, dim, src.shape
        out = self.copy()
        _as_nd(out)[_dim_key(dim, idx)] = _as_nd(src)
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = IndexFill.apply(grad, ctx.dim, ctx.idx, 0.0) if need[0] else None
        gsrc = IndexSelect.apply(grad, ctx.dim, ctx.idx).reshape(ctx.src_shape) if need[1] else None
        return gs, gsrc


class IndexFill(Op):
    """d index_fill(x, dim, idx, value) = grad with idx slices zeroed"""

    __slots__ = ("idx", "dim")
    nattrs = 3

    @staticmethod
    def forward(ctx, self, dim, idx, value):
        if ctx is not None:
            ctx.idx, ctx.dim = idx, dim
        out = self.copy()
        _as_nd(out)[_dim_key(dim, idx)] = value
        return out

    def backward(ctx, grad):
        return IndexFill.apply(grad, ctx.dim, ctx.idx, 0.0)


class IndexFillTensor(Op):
    """d index_fill(x, dim, idx, value tensor) = grad with idx slices zeroed, sum of grad on them"""

    __slots__ = ("idx", "dim")
    _name = "IndexFillBackward1"
    nattrs = 2

    @staticmethod
    def forward(ctx, self, value, dim, idx):
        return IndexFill.forward(ctx, self, dim, idx, value)

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = IndexFill.apply(grad, ctx.dim, ctx.idx, 0.0) if need[0] else None
        # (each filled slice once, however often its index repeats, as torch)
        gv = IndexSelect.apply(grad, ctx.dim, np.unique(ctx.idx)).sum() if need[1] else None
        return gs, gv


def _index_args(input: Tensor, dim: int, index, fname: str):
    idx = _index_1d(index, fname, "int64")
    d = _wdim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    _check_bounds(idx, size, fname, d)
    return d, idx % max(size, 1)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """``input`` with ``alpha * source`` slices added at ``index`` along ``dim``."""
    d, idx = _index_args(input, dim, index, "index_add")
    _index_source(input, source, d, idx, "index_add")
    if source._dtype != input._dtype:
        from ._inplace import _title

        raise RuntimeError(f"index_add_(): self ({_title(input._dtype)}) and source ({_title(source._dtype)}) must "
                           f"have the same scalar type")
    return IndexAdd.apply(input, source, d, idx, alpha)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with its ``index`` slices along ``dim`` replaced by ``source``'s."""
    d, idx = _index_args(input, dim, index, "index_copy")
    _index_source(input, source, d, idx, "index_copy")
    if source._dtype != input._dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{input._dtype} and (source) {source._dtype}")
    return IndexCopy.apply(input, source, d, idx)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """``input`` with its ``index`` slices along ``dim`` set to ``value`` (number or 0-d tensor)."""
    d, idx = _index_args(input, dim, index, "index_fill")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return IndexFillTensor.apply(input, value, d, idx)
    if isinstance(value, complex) and not input._dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    return IndexFill.apply(input, d, idx, value)


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


def _mask_array(mask, fname: str) -> np.ndarray:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{fname}(): argument 'mask' (position 1) must be Tensor, not {type(mask).__name__}")
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError(f"{fname}: expected BoolTensor for mask" if fname != "masked_fill_" else
                           f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{D.from_numpy_dtype(m.dtype).name}")
    return m


def _broadcast_with(a: np.ndarray, m: np.ndarray):
    try:
        return np.broadcast_shapes(a.shape, m.shape)
    except ValueError:
        raise _broadcast_error(m, a) from None


class MaskedFill(Op):
    """d masked_fill(x, mask, value) = grad with masked positions zeroed"""

    __slots__ = ("mask",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, mask, value):
        if ctx is not None:
            ctx.mask = mask
        shape = _broadcast_with(self, mask)
        if self.dtype.kind == "f" and not _B.is_array(value) or (
                _B.is_array(value) and value.dtype == self.dtype and value.ndim == 0):
            return _kernels.select(mask, value, self, self.dtype)  # NOTE [branch-free select]
        out = np.broadcast_to(self, shape).copy()
        out[np.broadcast_to(mask, shape)] = value
        return out

    def backward(ctx, grad):
        return MaskedFill.apply(grad, ctx.mask, 0)


class MaskedFillTensor(Op):
    """d masked_fill(x, mask, value tensor) = grad with masked positions zeroed, sum of grad there"""

    __slots__ = ("mask",)
    _name = "MaskedFillBackward1"
    nattrs = 1

    @staticmethod
    def forward(ctx, self, value, mask):
        return MaskedFill.forward(ctx, self, mask, value.astype(self.dtype) if value.dtype != self.dtype else value)

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = MaskedFill.apply(grad, ctx.mask, 0) if need[0] else None
        gv = Where.apply(grad, 0.0, _const(np.broadcast_to(ctx.mask, tuple(grad.shape)))).sum() \
            if need[1] else None
        return gs, gv


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``input`` with ``value`` (number or 0-d tensor) where ``mask`` is True (mask broadcasts)."""
    m = _mask_array(mask, "masked_fill_")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return MaskedFillTensor.apply(input, value, m)
    return MaskedFill.apply(input, m, D.scalar_into(value, input._dtype))


class MaskedSelect(Op):
    """d masked_select(x, mask) = grad put back at the mask into zeros (summed back by broadcasting)"""

    __slots__ = ("mask",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, mask):
        shape = _broadcast_with(self, mask)
        mb = np.broadcast_to(mask, shape)
        if ctx is not None:
            ctx.mask = mb
        return np.broadcast_to(self, shape)[mb]

    def backward(ctx, grad):
        return IndexPutZeros.apply(grad, (ctx.mask,), ctx.mask.shape)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where ``mask`` is True, as a 1-d tensor."""
    return MaskedSelect.apply(input, _mask_array(mask, "masked_select"))


class MaskedScatter(Op):
    """d masked_scatter(x, mask, src) = grad with mask zeroed, grad[mask] on src's first elements"""

    __slots__ = ("mask", "src_shape")
    nattrs = 1

    @staticmethod
    def forward(ctx, self, source, mask):
        try:
            mb = np.broadcast_to(mask, self.shape)
        except ValueError:
            raise _broadcast_error(self, mask) from None
        n = int(mb.sum())
        if source.size < n:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        if ctx is not None:
            ctx.mask, ctx.src_shape = mb, source.shape
        out = self.copy()
        out[mb] = source.reshape(-1)[:n]
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = MaskedFill.apply(grad, ctx.mask, 0) if need[0] else None
        gsrc = None
        if need[1]:
            size = int(np.prod(ctx.src_shape))
            picked = Index.apply(grad, (ctx.mask,))
            gsrc = IndexPutZeros.apply(picked, (np.arange(picked.shape[0]),), (size,)).reshape(ctx.src_shape)
        return gs, gsrc


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the masked positions filled, in order, from ``source``'s elements."""
    m = _mask_array(mask, "masked_scatter_")
    if source._dtype != input._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"  # (sic)
                           f"{input._dtype._scalar_name} and {source._dtype._scalar_name}")
    return MaskedScatter.apply(input, source, m)


class Take(Op):
    """d take(x, idx) = grad added at idx of the flattened zeros of x's shape"""

    __slots__ = ("idx", "shape")
    nattrs = 1

    @staticmethod
    def forward(ctx, self, idx):
        if ctx is not None:
            ctx.idx, ctx.shape = idx, self.shape
        return self.reshape(-1)[idx]

    def backward(ctx, grad):
        size = int(np.prod(ctx.shape))
        return IndexPutZeros.apply(grad.reshape(-1), (ctx.idx.reshape(-1),), (size,)).reshape(ctx.shape)


def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened ``input`` at ``index`` (shaped like ``index``)."""
    a = index._data
    if a.dtype != np.int64:
        raise RuntimeError("take(): Expected a long tensor for index, but got " + index._dtype.name.capitalize())
    n = input._data.size
    every = _all_examples(index)  # (under vmap: every example's indices)
    if every.size and ((every < -n) | (every >= n)).any():
        bad = int(every[(every < -n) | (every >= n)].flat[0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    if type(a) not in _B.ARRAYS:  # batched indices under vmap: wrapped by an op, so the level sees them
        wrapped = index % max(n, 1)
        return Take.apply(input, wrapped._data)
    return Take.apply(input, a % max(n, 1))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` along ``dim`` after broadcasting input and indices (flattened when ``dim`` is None)."""
    from .shape import reshape

    if indices._data.dtype.kind not in _INT_KINDS:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be int64 but got "
                           f"{indices._dtype.name.capitalize()}")
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    n = input._data.ndim
    d = _wdim(dim, n)
    if indices._data.ndim != n:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {n} dimensions for input, and {indices._data.ndim} dimensions for indices")
    xs, ish = list(input._data.shape), list(indices._data.shape)
    xs[d] = ish[d] = 1
    try:
        b = list(np.broadcast_shapes(tuple(xs), tuple(ish)))
    except ValueError:
        raise _broadcast_error(input._data, indices._data) from None
    bx, bi = list(b), list(b)
    bx[d], bi[d] = input._data.shape[d], indices._data.shape[d]
    x = input if tuple(bx) == input._data.shape else input.expand(tuple(bx))
    idx = indices if tuple(bi) == indices._data.shape else _const(np.broadcast_to(indices._data, tuple(bi)))
    a = idx._data
    if type(a) is np.ndarray and a.size and a.min() < 0:  # torch counts negative indices from the end here
        size = bx[d]
        idx = _const(np.where((a < 0) & (a >= -size), a + size, a))
    return gather(x, d, idx)


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


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None, out=None) -> Tensor:
    """Insertion points of ``input`` into the innermost dimension of ``sorted_sequence``."""
    for x in (sorted_sequence, input):
        if isinstance(x, Tensor) and x._dtype.is_complex:
            from .reduction import complex_refused

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


# ---------------------------------------------------------------- nonzero with a fixed size
__all__ += ["nonzero_static"]


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The first ``size`` rows of ``nonzero(input)``, padded with ``fill_value``."""
    from .._factories import tensor

    idx = np.argwhere(input._data)
    out = np.full((size, input._data.ndim), fill_value, np.int64)
    k = min(size, len(idx))
    out[:k] = idx[:k]
    return tensor(out)


_args.install(globals(), ("where", "gather", "scatter", "scatter_add", "scatter_reduce", "scatter_reduce_any",
                          "index_select", "index_add",
                          "index_copy", "index_fill", "index_put", "masked_fill", "masked_select", "masked_scatter",
                          "take", "take_along_dim", "nonzero", "argwhere", "searchsorted", "bucketize",
                          "nonzero_static"),
              out=("where", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add", "index_copy",
                   "masked_select", "take", "take_along_dim", "nonzero_static"))
