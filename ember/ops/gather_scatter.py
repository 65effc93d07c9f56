"""Indexing along one dimension: gather/scatter (an index tensor shaped like the input), the index_* ops (a 1-d
index of slices along a dim), take and take_along_dim. NOTE [index bounds] says which of them count negative
indices from the end."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B

from .. import _args
from .. import _dtype as D
from .. import _kernels
from .._tensor import Tensor, _all_examples, _wrap_dim
from ._op import Op, _mixed, linear, unsupported
from ._op import const as _const
from .arithmetic import _broadcast_error
from .indexing import BasicIndex, IndexPutZeros, SliceScatter, Where
from .masked import MaskedFill
from .shape import reshape

__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "scatter_reduce_any", "index_select", "index_add",
           "index_copy", "index_fill", "take", "take_along_dim"]

_INT_KINDS = "iu"


def _dim_key(d: int, idx) -> tuple:
    return (slice(None),) * d + (idx,)


def _check_index_dtype(index: Tensor, fname: str) -> np.ndarray:
    if not isinstance(index, Tensor):
        raise TypeError(f"{fname}(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64 and a.dtype != np.int32:
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index")
    return a.astype(np.int64, copy=False)


def _index_on_device(input: Tensor, idx) -> None:
    """torch's mixing error for an index array on another device than ``input`` (a CPU index for a cuda input):
    gather, scatter and index_select check the index's device, unlike indexing (``x[idx]``), which moves it."""
    a = input._data
    if type(idx) is not type(a) and type(idx) in _B.ARRAYS and type(a) in _B.ARRAYS:
        raise _mixed(_B.device_of(a), _B.device_of(idx))


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
            _kernels.scatter_add(out, _kernels.along_key(_kernels.wrapped(idx, shape[dim]), dim), self)
        return out

    def backward(ctx, grad):
        return Gather.apply(grad, ctx.dim, ctx.idx)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False, out=None) -> Tensor:
    """Values of ``input`` at ``index`` along ``dim``."""
    idx = _check_index_dtype(index, "gather")
    _index_on_device(input, idx)
    d = _wrap_dim(dim, input._data.ndim)
    _check_along(input._data.shape, idx, d, "gather")
    return Gather.apply(input, d, idx)


def _scatter_forward(self, src, dim, idx, reduce):
    out = self.copy()
    if not idx.size:
        return out
    o = _as_nd(out)
    i = _as_nd(idx)
    key = _kernels.along_key(_kernels.wrapped(i, o.shape[dim]), dim)
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


class _IntoAlongDim(Op):
    """Base of the ops called as (self, src, dim, idx) that write ``src`` into a copy of ``self`` at ``idx`` along
    ``dim`` (scatter, scatter_add, index_copy): ``_into`` is the array work; backward reads the index, the dim and
    src's shape."""
    _abstract = True

    __slots__ = ("idx", "dim", "src_shape")
    nattrs = 2

    @classmethod
    def forward(cls, ctx, self, src, dim, idx):
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.src_shape = idx, dim, src.shape
        return cls._into(self, src, dim, idx)


class Scatter(_IntoAlongDim):
    """d scatter(x, dim, idx, src) = grad with idx positions zeroed, gather(grad, dim, idx)"""

    __slots__ = ()
    jvp = linear  # linear in (self, src) for a fixed index, duplicates resolved as in the forward
    _into = staticmethod(lambda self, src, dim, idx: _scatter_forward(self, src, dim, idx, None))

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


class ScatterAdd(_IntoAlongDim):
    """d scatter_add(x, dim, idx, src) = grad, gather(grad, dim, idx)"""

    __slots__ = ()
    _into = staticmethod(lambda self, src, dim, idx: _scatter_forward(self, src, dim, idx, "add"))

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (grad if need[0] else None,
                _pad_to(Gather.apply(grad, ctx.dim, ctx.idx), ctx.src_shape) if need[1] else None)


def _scatter_args(input: Tensor, dim: int, index: Tensor, src, fname: str):
    idx = _check_index_dtype(index, fname)
    _index_on_device(input, idx)
    d = _wrap_dim(dim, input._data.ndim)
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
        key = _kernels.along_key(_kernels.wrapped(i, o.shape[dim]), dim)
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
            hit[_kernels.along_key(_as_nd(idx) % shape[d], d)] = True
        keep = _const(~hit) if not ctx.include_self else None
        src_p = _part_t(src, idx)
        if red == "sum":
            gs = grad if keep is None else grad * keep
            gsrc = Gather.apply(grad, d, idx)
        elif red == "mean":
            cnt = np.zeros(shape, grad._data.dtype, like=_B.ref(grad._data))
            if idx.size:
                _B.ufunc_at(np.add, cnt, _kernels.along_key(_as_nd(idx) % shape[d], d), 1)
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
                _B.ufunc_at(np.add, nzero, _kernels.along_key(_as_nd(idx) % shape[d], d), _as_nd(zero))
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
    _index_on_device(input, idx)
    d = _wrap_dim(dim, input._data.ndim)
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


class IndexCopy(_IntoAlongDim):
    """d index_copy(x, dim, idx, src) = grad with idx slices zeroed, index_select(grad, dim, idx)"""

    __slots__ = ()

    @staticmethod
    def _into(self, src, dim, idx):
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
    d = _wrap_dim(dim, input._data.ndim)
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
    if indices._data.dtype.kind not in _INT_KINDS:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be int64 but got "
                           f"{indices._dtype.name.capitalize()}")
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    n = input._data.ndim
    d = _wrap_dim(dim, n)
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


_args.install(globals(), __all__, out=("scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
                                       "index_copy", "take", "take_along_dim"))
