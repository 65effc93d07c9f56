"""Reductions: sum, mean (and sum_to_size, which the engine uses to undo broadcasting)."""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .._kernels import along_key as _along_key, fsum as _fsum, scatter_add as _scatter_add
from .._malloc import translate_errors_of as _translate_errors_of
from ..autograd._interpose import made, replayable
from .. import _args
from ._op import Op, linear, silent
from ._op import const as _const
from ._inplace import _title

__all__ = ["sum", "mean", "sum_to_size"]


def _dims(dim, ndim: int) -> tuple:
    """Normalise ``dim`` (None, int, sequence) to a sorted tuple of non-negative axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):  # torch: an empty dim list means all
        return tuple(range(ndim))
    if not isinstance(dim, (tuple, list)):
        dim = (_as_dim(dim),)
    n = ndim or 1  # (this module defines torch's max/min/all/any: no builtins here)
    out = []
    for d in dim:
        d = _as_dim(d)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d = d % n if ndim else 0
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out)) if ndim else ()


def complex_refused(spec: str, dt) -> Exception:
    """torch's error for an op without complex kernels: ``spec`` is a kernel name (NotImplementedError
    '"max_all" not implemented for 'ComplexFloat'') or, starting with "!", a RuntimeError's message."""
    if spec.startswith("!"):
        return RuntimeError(spec[1:])
    return NotImplementedError(f'"{spec}" not implemented for \'{_title(D.from_numpy_dtype(dt))}\'')


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast a reduced gradient back to ``shape`` (reinserting reduced dims)."""
    if not keepdim and dims:
        grad = grad.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return grad.expand(shape)


class Sum(Op):
    """d sum(x, dims) = grad broadcast back to x's shape"""

    __slots__ = ("dims", "keepdim", "shape")
    jvp = linear
    _name = "SumBackward1"
    nattrs = 3

    @staticmethod
    @silent
    def forward(ctx, self, dim, keepdim, dtype):
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, self.shape
        if dtype is None and self.dtype.kind in "biu":
            dtype = D.int64
        if dtype is None or dtype.np == self.dtype:
            return _fsum(self, dims, keepdim)  # NOTE [einsum reductions]
        out = np.sum(self, axis=dims, keepdims=keepdim, dtype=dtype.np)
        return _B.asarray(out) if type(out) is not np.ndarray else out

    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim)


class SumAll(Sum):
    __slots__ = ()
    _name = "SumBackward0"


class Mean(Op):
    """d mean(x, dims) = grad / n broadcast back to x's shape"""

    __slots__ = ("dims", "keepdim", "shape", "n")
    jvp = linear
    _name = "MeanBackward1"
    nattrs = 3

    @staticmethod
    @silent
    def forward(ctx, self, dim, keepdim, dtype):
        if dtype is not None:
            self = self.astype(dtype.np)
        elif self.dtype.kind in "biu":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {D.from_numpy_dtype(self.dtype).name.capitalize()}")
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, self.shape
            ctx.n = int(np.prod([self.shape[d] for d in dims])) if dims else 1
        if self.size and dims and self.dtype.kind == "f" and self.dtype.itemsize >= 4:
            # the sum's kernel, then the division np.mean makes (float16: np.mean's float32 intermediates)
            out = _fsum(self, dims, keepdim)
            n = 1
            for d in dims:
                n *= self.shape[d]
            return np.true_divide(out, n, out=out) if out.ndim else _B.asarray(out / n, self.dtype)
        out = np.mean(self, axis=dims, keepdims=keepdim) if self.size else np.full(
            np.sum(self, axis=dims, keepdims=keepdim).shape, np.nan, self.dtype)
        return _B.asarray(out, self.dtype) if type(out) is not np.ndarray or out.dtype != self.dtype else out

    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) / ctx.n


class MeanAll(Mean):
    __slots__ = ()
    _name = "MeanBackward0"


def sum(input, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A001 - torch's name
    """Sum of all elements, or over ``dim`` (int or tuple)."""
    input = _cast_first(input, dtype)
    if dim is None:
        return SumAll.apply(input, None, False, dtype)
    return Sum.apply(input, dim, keepdim, dtype)


def mean(input, dim=None, keepdim: bool = False, *, dtype=None):
    """Mean of all elements, or over ``dim`` (int or tuple); floating inputs only."""
    input = _cast_first(input, dtype)
    if dim is None:
        return MeanAll.apply(input, None, False, dtype)
    return Mean.apply(input, dim, keepdim, dtype)


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size`` (the inverse of broadcasting ``size`` to input's shape)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = input._data.shape
    if tuple(size) == shape:
        return input
    lead = len(shape) - len(size)
    if lead < 0 or _builtin_any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    out = Sum.apply(input, dims, True, None) if dims else input
    if lead:
        out = out.reshape(size)
    return out


# ---------------------------------------------------------------------------------------------------------------
# prod, max/min/amax/amin/argmax/argmin, var/std(_mean), norm, logsumexp, cumulative ops, median, all/any, nan*.
# Selection-style ops (max/min with dim, median with dim, cummax/cummin and, in sorting.py, sort/topk/kthvalue)
# share one base: values are gathered at computed indices and the gradient is scattered back to them.
# ---------------------------------------------------------------------------------------------------------------
import warnings  # noqa: E402

from .. import return_types as _RT  # noqa: E402
from .._tensor import Tensor, _as_dim, _wrap_dim  # noqa: E402
from .indexing import where as _where  # noqa: E402
from .joining import cat as _cat  # noqa: E402
from .rearrange import Flip as _Flip  # noqa: E402
from ._op import _registry  # noqa: E402
from ..autograd.grad_mode import _mode  # noqa: E402

__all__ += ["prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std", "var_mean", "std_mean",
            "norm", "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "median", "all", "any",
            "count_nonzero", "nansum", "nanmean"]

_builtin_max, _builtin_min, _builtin_all, _builtin_any = max, min, all, any


def _as_1d(a: np.ndarray, dim: int):
    """``a`` (0-d arrays as 1-element) and ``dim`` wrapped, for ops along one dimension."""
    d = _wrap_dim(dim, a.ndim)
    return (a.reshape(1), 0) if a.ndim == 0 else (a, d)


def _empty_dim_error(name: str, d: int) -> IndexError:
    return IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _no_dim_error(name: str, exc=RuntimeError, tail: str = " Specify the reduction dim with the 'dim' argument."):
    return exc(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{tail}")


def _cast_first(input, dtype):
    """A complex input reduced into a real ``dtype`` is cast first (its real part, with torch's warning), as torch's
    reductions do; other inputs as they are (the reduction accumulates in ``dtype``)."""
    if dtype is not None and input._dtype.is_complex and not D.to_dtype(dtype).is_complex:
        return input.to(dtype)
    return input


def _int_result(arr: np.ndarray, dtype) -> np.dtype | None:
    """The accumulation dtype of sum-like ops: ``dtype`` if given, int64 for integer/bool input."""
    if dtype is not None:
        return D.to_dtype(dtype).np
    return np.dtype(np.int64) if arr.dtype.kind in "biu" else None


class _TakeAlong(Op):
    """d take_along(x, idx, dim) = grad put back at idx (zeros elsewhere)"""

    __slots__ = ("idx", "dim", "shape", "unique")
    _name = "TakeAlongDimBackward0"
    nattrs = 3

    @staticmethod
    def forward(ctx, self, idx, dim, unique):
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.shape, ctx.unique = idx, dim, self.shape, unique
        return np.take_along_axis(self, idx, dim)

    def backward(ctx, grad):
        return _PutAlong.apply(grad, ctx.idx, ctx.dim, ctx.shape, ctx.unique)


class _PutAlong(Op):
    """d (zeros of shape with x added at idx along dim) = grad taken at idx"""

    __slots__ = ()
    _name = "PutAlongDimBackward0"
    attrs = ("idx", "dim", "shape", "unique")

    @staticmethod
    def forward(ctx, self, idx, dim, shape, unique):
        out = np.zeros(shape, self.dtype, like=self)
        if unique:
            np.put_along_axis(out, idx, self, dim)
        else:
            _scatter_add(out, _along_key(idx, dim), self)  # NOTE [flat scatter-add]
        return out

    def backward(ctx, grad):
        return _TakeAlong.apply(grad, ctx.idx, ctx.dim, ctx.unique)


def _revcumsum(x: Tensor, d: int) -> Tensor:
    """Sums from each position to the end along ``d``."""
    return _Flip.apply(cumsum(_Flip.apply(x, d), d), d)


class _Selection(Op):
    """values = x at indices chosen along dim; d values = grad scattered back to those indices.

    Subclasses give ``_select(array, dim, param) -> keepdim-shaped int64 indices`` and ``reduces``
    (whether ``dim`` is dropped unless keepdim). ``unique``: indices within a slice are distinct."""

    __slots__ = ("idx", "dim", "kshape", "shape", "wshape")
    nattrs = 3
    differentiable_outputs = (0,)
    reduces = True
    unique = True
    result_type: type = tuple
    complex_error = ""  # complex_refused's spec (ordering ops have no complex kernels)

    @staticmethod
    def _select(a, d, param):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, self, dim, keepdim, param):
        if self.dtype.kind == "c" and (self.size or cls.reduces):  # (an empty running max has nothing to compare)
            raise complex_refused(cls.complex_error, self.dtype)
        a, d = _as_1d(self, dim)
        idx = _B.ascontiguousarray(cls._select(a, d, param))  # torch's outputs are contiguous
        values = np.take_along_axis(a, idx, d)
        if ctx is not None:
            ctx.idx, ctx.dim, ctx.kshape, ctx.shape, ctx.wshape = idx, d, idx.shape, self.shape, a.shape
        if self.ndim == 0:
            return values.reshape(()), idx.reshape(())
        if cls.reduces and not keepdim:
            return np.squeeze(values, d), np.squeeze(idx, d)
        return values, idx

    def backward(ctx, grad, _indices_grad=None):
        g = _PutAlong.apply(grad.reshape(ctx.kshape), ctx.idx, ctx.dim, ctx.wshape, ctx.unique)
        return g.reshape(ctx.shape) if ctx.wshape != ctx.shape else g

    @classmethod
    def run(cls, input, dim, keepdim, param=None):
        return cls.result_type(*cls.apply(input, dim, keepdim, param))


def _selection(name: str, select, *, reduces: bool = True, unique: bool = True, torch_name: str = "",
               result_type: type = tuple, complex_error: str = "") -> type:
    """A ``_Selection`` op choosing indices with ``select(array, dim, param)``."""
    ns = {"__slots__": (), "_select": staticmethod(select), "reduces": reduces, "unique": unique, "result_type": result_type, "__doc__": _Selection.__doc__,
          "complex_error": complex_error or f"{name.lower()}_cpu"}
    if torch_name:
        ns["_name"] = torch_name
    return type(name, (_Selection,), ns)


def _arg_extreme(fn, name):
    def select(a, d, _):
        if a.shape[d] == 0:
            raise _empty_dim_error(name, d)
        return np.expand_dims(fn(a, axis=d), d)
    return select


def _lower_median_idx(a, d, _=None):
    if a.shape[d] == 0:
        raise _empty_dim_error("median", d)
    order = np.argsort(a, axis=d, kind="stable")  # NaN sorts last
    n = a.shape[d]
    has_nan = np.isnan(a).any(axis=d, keepdims=True) if a.dtype.kind == "f" else None
    pick = np.take(order, [(n - 1) // 2], axis=d)
    if has_nan is not None and has_nan.any():  # torch: a slice with NaN has median NaN (its first NaN)
        first_nan = np.expand_dims(np.argmax(np.isnan(a), axis=d), d)
        pick = np.where(has_nan, first_nan, pick)
    return pick


def _cum_extreme_idx(uf):
    def select(a, d, _):
        out = _B.accumulate(uf, a, d)
        hit = a == out
        if a.dtype.kind == "f":
            hit |= np.isnan(a)
        pos = np.arange(a.shape[d], like=a).reshape((-1,) + (1,) * (a.ndim - d - 1))
        return _B.accumulate(np.maximum, np.where(hit, pos, 0), d).astype(np.int64)
    return select


MaxDim = _selection("MaxDim", _arg_extreme(np.argmax, "max"), torch_name="MaxBackward0", result_type=_RT.max,
                    complex_error="!max(): does not support complex input")
MinDim = _selection("MinDim", _arg_extreme(np.argmin, "min"), torch_name="MinBackward0", result_type=_RT.min,
                    complex_error="!min(): does not support complex input")
MedianDim = _selection("MedianDim", _lower_median_idx, torch_name="MedianBackward1", result_type=_RT.median,
                       complex_error="median_out")
Cummax = _selection("Cummax", _cum_extreme_idx(np.maximum), reduces=False, unique=False,
                    result_type=_RT.cummax)
Cummin = _selection("Cummin", _cum_extreme_idx(np.minimum), reduces=False, unique=False,
                    result_type=_RT.cummin)
Cummax.no_complex_grad, Cummin.no_complex_grad = "cummax", "cummin"


class _EvenReduction(Op):
    """d r(x, dims) = grad split evenly among the elements equal to the result (ties share it)"""

    __slots__ = ("dims", "keepdim", "shape")
    save = ("self", "result")
    nattrs = 2
    nan_matches = True
    complex_error = ""  # complex_refused's spec

    @staticmethod
    def _reduce(a, dims, keepdim):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, self, dim, keepdim):
        if self.dtype.kind == "c":
            raise complex_refused(cls.complex_error, self.dtype)
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, self.shape
        return _B.asarray(cls._reduce(self, dims, keepdim))

    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) * _even_weights(
            self._data, result._data, ctx.dims, ctx.keepdim, grad._data.dtype, ctx.nan_matches)


@replayable  # computed on arrays from the values: NOTE [replayable steps]
def _not_nan(a: np.ndarray) -> np.ndarray:
    return ~np.isnan(a)


@replayable  # computed on arrays from the values: NOTE [replayable steps]
def _even_weights(x, r, dims, keepdim, dtype, nan_matches=True, absolute=False) -> Tensor:
    """1/count where ``x`` (``|x|`` when ``absolute``) equals its reduced value ``r``, else 0. NaN matches NaN when
    ``nan_matches``; otherwise (torch's amax/amin) a NaN result leaves no match and the slice's weights are NaN."""
    if absolute:
        x = np.abs(x)
    if not keepdim and dims:
        r = np.expand_dims(r, dims)
    mask = x == r
    if nan_matches and x.dtype.kind == "f":
        mask |= np.isnan(x)
    count = mask.sum(axis=dims, keepdims=True)
    with np.errstate(invalid="ignore"):
        return _const((mask / count).astype(dtype, copy=False))


def _extreme(fn, name):
    def reduce(a, dims, keepdim):
        if a.size == 0:
            if len(dims) == a.ndim:
                raise _no_dim_error(name)
            for d in dims:
                if a.shape[d] == 0:
                    raise _empty_dim_error(name, d)
        return fn(a, axis=dims, keepdims=keepdim)
    return reduce


def _median_all(a, dims, keepdim):
    if a.size == 0:
        return np.full((), np.nan, a.dtype if a.dtype.kind == "f" else np.float32)
    flat = a.reshape(-1)
    return flat[_lower_median_idx(flat, 0)[0]]


def _even(name: str, reduce, torch_name: str, nan_matches: bool = True, complex_error: str = "") -> type:
    ns = {"__slots__": (), "_reduce": staticmethod(reduce), "_name": torch_name, "__doc__": _EvenReduction.__doc__,
          "nan_matches": nan_matches, "complex_error": complex_error}
    return type(name, (_EvenReduction,), ns)


MaxAll = _even("MaxAll", _extreme(np.max, "max"), "MaxBackward1", complex_error="max_all")
MinAll = _even("MinAll", _extreme(np.min, "min"), "MinBackward1", complex_error="min_all")
Amax = _even("Amax", _extreme(np.max, "amax"), "AmaxBackward0", nan_matches=False, complex_error="max_values_cpu")
Amin = _even("Amin", _extreme(np.min, "amin"), "AminBackward0", nan_matches=False, complex_error="min_values_cpu")
MedianAll = _even("MedianAll", _median_all, "MedianBackward0", complex_error="median_cpu")


def _binary_extreme(name: str, input, other):
    try:
        from . import elementwise as _E
    except ImportError:  # TODO(issue): binary max/min belong to ops/elementwise.py (maximum/minimum)
        raise NotImplementedError(f"{name}(input, other) needs ember.{name}imum, which is not available") from None
    return getattr(_E, name + "imum")(input, other)


def _extreme_api(name: str, all_op: type, dim_op: type):
    def fn(input, dim=None, keepdim: bool = False, *, other=None, out=None):
        if other is not None:
            if dim is not None or keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                                f"{type(dim).__name__}, other=Tensor)")
            dim = other
        if isinstance(dim, Tensor):
            return _binary_extreme(name, input, dim)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments - got (keepdim=bool)")
            return all_op.apply(input, None, False)
        return dim_op.run(input, dim, keepdim)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {name}imum of all elements; with ``dim``, (values, indices) along it (first index on ties);"
                  f" with a tensor, the elementwise {name}imum.")
    return fn


max = _extreme_api("max", MaxAll, MaxDim)  # noqa: A001 - torch's names
min = _extreme_api("min", MinAll, MinDim)  # noqa: A001


def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims when empty); the gradient is shared evenly among ties."""
    return Amax.apply(input, dim, keepdim)


def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims when empty); the gradient is shared evenly among ties."""
    return Amin.apply(input, dim, keepdim)


def _arg_api(name: str, fn):
    def arg(input, dim=None, keepdim: bool = False) -> Tensor:
        if input._dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        a = input._data
        if type(a) not in _B.ARRAYS:  # values readable only through ops (a batched tensor under vmap)
            sel = globals()[name[3:]]
            if dim is None:
                r = sel(input.reshape(-1), 0).indices
                return r.reshape((1,) * input.dim()) if keepdim else r
            return sel(input, dim, keepdim).indices
        if dim is None:
            if a.size == 0:
                raise _no_dim_error(name, IndexError, "")
            out = _B.asarray(fn(a.reshape(-1)), np.int64)
            return _const(out.reshape((1,) * a.ndim) if keepdim else out)
        a1, d = _as_1d(a, dim)
        if a1.shape[d] == 0:
            raise _empty_dim_error(name, d)
        out = _B.asarray(fn(a1, axis=d, keepdims=keepdim and a.ndim > 0), np.int64)
        return _const(out.reshape(()) if a.ndim == 0 else out)
    arg.__name__ = arg.__qualname__ = name
    arg.__doc__ = f"Index of the {name[3:]}imum (flattened when ``dim`` is None); first index on ties."
    return arg


argmax = _arg_api("argmax", np.argmax)
argmin = _arg_api("argmin", np.argmin)


class Prod(Op):
    """d prod(x, dim) = grad * (product of the other elements), exact with zeros"""

    __slots__ = ("dim", "keepdim", "shape")
    _name = "ProdBackward1"
    save = ("self", "result")
    nattrs = 3
    holomorphic = True  # NOTE [holomorphic formulas]

    @staticmethod
    @silent
    def forward(ctx, self, dim, keepdim, dtype):
        dt = _int_result(self, dtype)
        if dim is None:
            d, keepdim = None, False
        else:
            d = _wrap_dim(dim, self.ndim) if self.ndim else None
        if ctx is not None:
            ctx.dim, ctx.keepdim, ctx.shape = d, keepdim, self.shape
        out = np.prod(self, axis=d, keepdims=keepdim and self.ndim > 0, dtype=dt)
        return _B.asarray(out)

    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        d = ctx.dim
        dims = tuple(range(len(ctx.shape))) if d is None else (d,)
        g = _expand_back(grad, ctx.shape, dims, ctx.keepdim)
        if not (self._data == 0).any():
            return g * _expand_back(result, ctx.shape, dims, ctx.keepdim) / self
        if d is None:
            return g * _exclusive_prod(self.reshape(-1), 0).reshape(ctx.shape)
        return g * _exclusive_prod(self, d)


class ProdAll(Prod):
    __slots__ = ()
    _name = "ProdBackward0"


def _shifted_cumprod(x: Tensor, d: int) -> Tensor:
    """Products of the elements strictly before each position along ``d``."""
    n = x._data.shape[d]
    one = _const(np.ones(tuple(1 if i == d else s for i, s in enumerate(x._data.shape)), x._data.dtype))
    return cumprod(_cat([one, x.narrow(d, 0, n - 1)], d), d)


def _exclusive_prod(x: Tensor, d: int) -> Tensor:
    """Product of all other elements of each slice along ``d`` (no division: exact with zeros)."""
    return _shifted_cumprod(x, d) * _Flip.apply(_shifted_cumprod(_Flip.apply(x, d), d), d)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one dimension ``dim``."""
    input = _cast_first(input, dtype)
    if dim is None:
        return ProdAll.apply(input, None, False, dtype)
    if not isinstance(dim, int):
        raise TypeError(f"prod() received an invalid combination of arguments - got ({type(dim).__name__}), but "
                        "expected one of: (int dim, bool keepdim = False, *, torch.dtype dtype = None)")
    return Prod.apply(input, dim, keepdim, dtype)


class _Cumulative(Op):
    """cumulative op along dim (sum/product), with torch's dtypes"""

    __slots__ = ("dim",)
    nattrs = 2

    @classmethod
    @silent
    def forward(cls, ctx, self, dim, dtype):
        a, d = _as_1d(self, dim)
        if ctx is not None:
            ctx.dim = d
        return cls._ufunc.accumulate(a, axis=d, dtype=_int_result(a, dtype)).reshape(self.shape)


class Cumsum(_Cumulative):
    """d cumsum(x) = reversed cumsum of grad"""

    __slots__ = ()
    jvp = linear
    _ufunc = np.add

    def backward(ctx, grad):
        if grad._data.ndim == 0:
            return grad
        return _revcumsum(grad, ctx.dim)


class Cumprod(_Cumulative):
    """d cumprod(x)_i = sum_{k>=i} grad_k * prod_{j<=k, j!=i} x_j, exact with zeros"""

    __slots__ = ()
    _ufunc = np.multiply
    save = ("self", "result")
    holomorphic = True  # NOTE [holomorphic formulas]

    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        if grad._data.ndim == 0:
            return grad
        d = ctx.dim
        x = self._data
        zero = x == 0
        if not zero.any():
            return _revcumsum(grad * result, d) / self
        if _mode.grad_enabled:  # building a graph (create_graph): the formula below is exact to any order
            return _cumprod_grad_quadratic(grad, self, d)
        # before the first zero of a slice, the division formula holds; at the first zero the gradient is
        # (product before it) * sum_k grad_k * (product after it up to k); after it, every term has a zero.
        seen = np.cumsum(zero, axis=d)
        before = seen == 0
        first = (seen == 1) & zero
        one = np.ones((), x.dtype)
        x_before = _where(_const(before), self, _const(one))
        after = cumprod(_where(_const(before | first), _const(one), self), d)
        g_before = _revcumsum(grad * result, d) / x_before
        g_first = cumprod(x_before, d) * _revcumsum(grad * after, d)
        return _where(_const(before), g_before, _where(_const(first), g_first, _const(np.zeros((), x.dtype))))


def _cumprod_grad_quadratic(grad: Tensor, x: Tensor, d: int) -> Tensor:
    """sum_{k>=i} grad_k * prod_{j<=k, j!=i} x_j via an (n, n) table per slice: O(n^2), differentiable."""
    shape = x._data.shape
    n = shape[d]
    table = shape[:d] + (n, n) + shape[d + 1:]  # axis d: i, axis d+1: k
    ik = (n, n) + (1,) * (len(shape) - d - 1)
    later = _const(np.broadcast_to(np.triu(np.ones((n, n), bool), 1).reshape(ik), table))
    from_i = _const(np.triu(np.ones((n, n), x._data.dtype)).reshape(ik))
    after_i = cumprod(_where(later, x.unsqueeze(d).expand(table), _const(np.ones((), x._data.dtype))), d + 1)
    return _shifted_cumprod(x, d) * sum(grad.unsqueeze(d) * after_i * from_i, d + 1)


def cumsum(input, dim: int, *, dtype=None) -> Tensor:
    """Cumulative sums along ``dim`` (integer inputs accumulate in int64)."""
    input = _cast_first(input, dtype)
    return Cumsum.apply(input, dim, dtype)


def cumprod(input, dim: int, *, dtype=None) -> Tensor:
    """Cumulative products along ``dim``; its gradient is exact when the input has zeros."""
    input = _cast_first(input, dtype)
    return Cumprod.apply(input, dim, dtype)


def cummax(input, dim: int):
    """Running maximum along ``dim`` and where it was found (the latest index on ties)."""
    return Cummax.run(input, dim, True)


def cummin(input, dim: int):
    """Running minimum along ``dim`` and where it was found (the latest index on ties)."""
    return Cummin.run(input, dim, True)


def _check_float(a: np.ndarray, msg: str) -> None:
    if a.dtype.kind not in "fc":
        raise RuntimeError(msg)


def _moments(with_mean: bool, root: bool, torch_name: str, fname: str) -> type:
    """var / std (``root``), optionally with the mean as a second output."""

    class Moments(Op):
        __slots__ = ("dims", "keepdim", "shape", "n", "dof")
        save = ("self", "result")
        nattrs = 3
        _name = torch_name
        __doc__ = f"d {fname}: var'=2(x-mean)/(n-correction); std'=var'/(2 std); mean'=1/n"

        @staticmethod
        @silent
        def forward(ctx, self, dim, correction, keepdim):
            _check_float(self, "std and var only support floating point and complex dtypes")
            dims = _dims(dim, self.ndim)
            n = int(np.prod([self.shape[d] for d in dims]))
            dof = n - correction
            if dof <= 0:
                warnings.warn(f"{fname.split('_')[0]}(): degrees of freedom is <= 0. Correction should be strictly "
                              "less than the reduction factor (input numel divided by output numel).",
                              UserWarning, stacklevel=4)
            if ctx is not None:
                ctx.dims, ctx.keepdim, ctx.shape, ctx.n, ctx.dof = dims, keepdim, self.shape, n, dof
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.sum(self, axis=dims, keepdims=True) / self.dtype.type(n) if n else \
                    _B.full(np.sum(self, axis=dims, keepdims=True).shape, np.nan, self.dtype, like=self)
                dev = self - mean
                sq = dev * dev if dev.dtype.kind != "c" else dev.real * dev.real + dev.imag * dev.imag  # |dev|^2
                out = _B.asarray(np.sum(sq, axis=dims, keepdims=keepdim) / sq.dtype.type(_builtin_max(dof, 0)),
                                 sq.dtype)
                if root:
                    out = np.sqrt(out)
            if with_mean:
                return out, mean if keepdim else mean.reshape(out.shape)
            return out

        def backward(ctx, grad, grad_mean=None):
            self, result = ctx.saved_tensors
            gx = None
            if grad is not None:
                if root:
                    zero = result._data == 0
                    if zero.any():  # a safe divisor: no NaN in the derivatives of the masked part
                        safe = _where(_const(zero), _const(np.ones((), result._data.dtype)), result)
                        grad = _where(_const(zero), _const(np.zeros((), grad._data.dtype)), grad / (2 * safe))
                    else:
                        grad = grad / (2 * result)
                centred = self - mean(self, ctx.dims, True)
                gx = (2.0 / ctx.dof if ctx.dof else np.inf) * _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) * centred
            if grad_mean is not None:
                gm = _expand_back(grad_mean, ctx.shape, ctx.dims, ctx.keepdim) / ctx.n
                gx = gm if gx is None else gx + gm
            return gx

    return Moments


Var = _moments(False, False, "VarBackward0", "var")
Std = _moments(False, True, "StdBackward0", "std")
VarMean = _moments(True, False, "VarMeanBackward0", "var_mean")
StdMean = _moments(True, True, "StdMeanBackward0", "std_mean")


def _correction(dim, unbiased, correction, keepdim):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, correction, keepdim


def _moment_api(op: type, name: str):
    def fn(input, dim=None, unbiased: bool = True, keepdim: bool = False, *, correction=None):
        dim, corr, keepdim = _correction(dim, unbiased, correction, keepdim)
        out = op.apply(input, dim, corr, keepdim)
        return tuple(out) if type(out) is tuple else out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name} over ``dim`` (all when None) with Bessel's ``correction`` (default 1)."
    return fn


var = _moment_api(Var, "var")
std = _moment_api(Std, "std")
var_mean = _moment_api(VarMean, "var_mean")
std_mean = _moment_api(StdMean, "std_mean")


class Norm(Op):
    """d ||x||_p = grad * sign(x)|x|^(p-1) / ||x||^(p-1) (0 where the norm is 0); inf: ties share it"""

    __slots__ = ("ord", "dims", "keepdim", "shape")
    _name = "LinalgVectorNormBackward0"
    save = ("self", "result")
    nattrs = 4

    @staticmethod
    @silent
    def forward(ctx, self, ord, dim, keepdim, dtype):  # noqa: A002 - torch's name
        if dtype is not None:
            want = D.to_dtype(dtype)
            if self.dtype.kind == "c" and not want.is_complex:
                raise RuntimeError(f"linalg.vector_norm: dtype should be complex for complex inputs, but got "
                                   f"{want._scalar_name}")
            self = self.astype(want.np)
        if self.dtype.kind not in "fc":
            raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                               f"{_title(D.from_numpy_dtype(self.dtype))}")
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.ord, ctx.dims, ctx.keepdim, ctx.shape = ord, dims, keepdim, self.shape
        a = np.abs(self)
        if ord in (np.inf, -np.inf):
            if a.size == 0 and (len(dims) == a.ndim or _builtin_any(a.shape[d] == 0 for d in dims)):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {'' if ord > 0 else '-'}inf norm on an "
                                   "empty tensor because the operation does not have an identity")
            out = (np.max if ord > 0 else np.min)(a, axis=dims, keepdims=keepdim)
        elif ord == 0:
            out = np.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
        elif ord == 1:
            out = np.sum(a, axis=dims, keepdims=keepdim)
        elif ord == 2:
            out = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
        else:
            with np.errstate(divide="ignore"):
                out = np.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
        return _B.asarray(out, a.dtype)  # real, also for complex inputs

    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        p, dims, keepdim, shape = ctx.ord, ctx.dims, ctx.keepdim, ctx.shape
        g = _expand_back(grad, shape, dims, keepdim)
        dt = grad._data.dtype
        zero = _const(made(np.zeros((), dt)))
        if p == 0:
            return g * zero
        if p == 1:
            return g * _sgn(self)
        if p in (np.inf, -np.inf):
            return g * _sgn(self) * _even_weights(self._data, result._data, dims, keepdim, dt, absolute=True)
        r = _expand_back(result, shape, dims, keepdim)
        rz = r == 0
        r = _where(rz, _const(made(np.ones((), dt))), r)  # a safe divisor: no NaN in the derivatives of the masked part
        if p == 2:
            return self * _where(rz, zero, g / r)
        xz = self == 0
        with np.errstate(divide="ignore", invalid="ignore"):  # the masked-out 0 ** (p - 1)
            scaled = _where(xz, zero, _sgn(self) * self.abs() ** (p - 1))
            return scaled * _where(rz, zero, g / r ** (p - 1))


_P_NAMES = {"fro": 2, "inf": np.inf, "-inf": -np.inf}


def norm(input, p="fro", dim=None, keepdim: bool = False, out=None, dtype=None) -> Tensor:
    """The vector p-norm over ``dim`` (all elements when None); p in numbers, inf, -inf, 'fro'."""
    if isinstance(p, str):
        if p not in _P_NAMES:  # TODO(issue): matrix norms ('nuc') belong to linalg
            raise RuntimeError(f"norm(): unsupported norm type {p!r}")
        if p == "fro" and dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
        p = _P_NAMES[p]
    if isinstance(dim, int):
        dim = (dim,)
    result = Norm.apply(input, float(p), dim, keepdim, dtype)
    return result if out is None else _args.write_out(out, result, "norm")


class Logsumexp(Op):
    """d logsumexp(x, dims) = grad * softmax(x) = grad * exp(x - result)"""

    __slots__ = ("dims", "keepdim", "shape")
    save = ("self", "result")
    nattrs = 2
    holomorphic = True  # NOTE [holomorphic formulas]

    @staticmethod
    @silent
    def forward(ctx, self, dim, keepdim):
        if self.dtype.kind in "biu":
            self = self.astype(D.get_default_dtype().np)
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, self.shape
        if self.size == 0:
            m = np.zeros(np.sum(self, axis=dims, keepdims=True).shape, self.dtype, like=self)
        else:  # (complex inputs shift by the largest real part: the log's branch is not changed)
            m = np.max(self.real, axis=dims, keepdims=True)
            m = np.where(np.isfinite(m), m, 0).astype(self.dtype)
        with np.errstate(divide="ignore"):
            out = np.log(np.sum(np.exp(self - m), axis=dims, keepdims=True)) + m
        return _B.asarray(out if keepdim else out.reshape(np.sum(self, axis=dims).shape), self.dtype)

    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        r = _expand_back(result, ctx.shape, ctx.dims, ctx.keepdim)
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) * (self - r).exp()


def logsumexp(input, dim, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim``, computed without overflow."""
    return Logsumexp.apply(input, dim, keepdim)


def median(input, dim=None, keepdim: bool = False):
    """Lower median of all elements (ties share the gradient); with ``dim``, (values, indices)."""
    if dim is None:
        return MedianAll.apply(input, None, False)
    return MedianDim.run(input, dim, keepdim)


class Nansum(Op):
    """d nansum(x) = grad where x is not NaN"""

    __slots__ = ("dims", "keepdim", "shape")
    save = ("self",)
    nattrs = 3

    @staticmethod
    @silent
    def forward(ctx, self, dim, keepdim, dtype):
        if self.dtype.kind == "c":
            raise RuntimeError("nansum on CPU does not support complex inputs")
        dims = _dims(dim, self.ndim)
        if ctx is not None:
            ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, self.shape
        return _B.asarray(np.nansum(self, axis=dims, keepdims=keepdim, dtype=_int_result(self, dtype)))

    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        keep = _const(_not_nan(self._data))
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) * keep


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum treating NaN as zero."""
    return Nansum.apply(input, dim, keepdim, dtype)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean of the non-NaN elements."""
    if input._dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is None and not input._dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{input._dtype.name.capitalize()}")
    count = input.isnan().logical_not().sum(dim, keepdim)  # ember ops: batches under vmap
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _sgn(x):
    """The sign of a real tensor, z/|z| of a complex one."""
    from .complex_numbers import sgn

    return sgn(x) if x._dtype.is_complex else x.sign()


def _logical_reduce(fn, name: str):
    @replayable  # computed on arrays from the values: NOTE [replayable steps]
    def reduce(input, dim=None, keepdim: bool = False) -> Tensor:
        a = input._data
        out = _B.asarray(fn(a, axis=_dims(dim, a.ndim), keepdims=keepdim and dim is not None))
        return _const(out.astype(np.uint8) if a.dtype == np.uint8 else out)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"Whether {name} elements (over ``dim``) are true (uint8 in, uint8 out)."
    return reduce


all = _logical_reduce(np.all, "all")  # noqa: A001 - torch's names
any = _logical_reduce(np.any, "any")  # noqa: A001


@replayable  # computed on arrays from the values: NOTE [replayable steps]
def count_nonzero(input, dim=None) -> Tensor:
    """Number of non-zero elements (over ``dim``), as int64."""
    a = input._data
    return _const(_B.asarray(np.count_nonzero(a, axis=_dims(dim, a.ndim)), np.int64))


for _base in (_Selection, _EvenReduction, _Cumulative):  # abstract bases: not ops of their own
    _registry.pop(_base._name, None)


# NOTE [foreign errors] (ember/_malloc.py): the bool reductions compute on arrays outside ops
_translate_errors_of(globals(), ("all", "any", "count_nonzero"))

_args.install(globals(), [n for n in __all__ if n not in ("sum_to_size", "norm")],
              out=("sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "var", "std", "logsumexp", "cumsum",
                   "cumprod", "cummax", "cummin", "median", "all", "any", "nansum", "nanmean"))
