"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty/eye, ranges, random."""
from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from . import _args
from . import _backend as _B
from . import _dtype as D
from . import _layout as _L
from ._backend import like as _like_array, to_device as _to_device, to_host as _to_host
from ._device import _check_device, device as _as_device
from ._random import _rng
from ._data import check_numpy as _check_numpy, to_array as _to_array
from ._tensor import Tensor, _wrap, _CPP_NAMES
from .autograd import _provenance as _prov
from .autograd._interpose import made, replayable as _replayable
from .autograd.grad_mode import _mode

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty", "eye",
           "arange", "range", "linspace", "logspace", "rand", "randn", "randint", "randperm",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
           "randint_like", "scalar_tensor"]

_default_device = ["cpu"]


def _finish(arr: np.ndarray, dtype, requires_grad: bool, device=None, out: Tensor | None = None) -> Tensor:
    dev = _check_device(device if device is not None else _default_device[0])
    d = D.from_numpy_dtype(arr.dtype) if dtype is None else dtype
    if dev.type != "cpu" or type(arr) is not np.ndarray:
        # NOTE [factories on cuda]: values are made on the host (ember's generators, NumPy's kernels) and copied,
        # so a seeded run draws the same numbers on every device
        arr = _to_device(arr, out.device if out is not None else dev)
    if _mode.tracer is not None:  # a constant ember.compile may hold (NOTE [compile])
        _mode.tracer.made(arr)
    t = _wrap(arr, d)
    if out is not None:
        from .ops._inplace import copy_out

        return copy_out(out, t)
    if requires_grad:
        if not d._differentiable:  # the factories' wording differs from requires_grad_()'s
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _out_dtype(out: Tensor | None, dtype):
    """With ``out=``, the result takes out's dtype; an explicit different ``dtype`` is an error."""
    if out is None:
        return dtype
    if dtype is None:
        return out._dtype
    d = D.to_dtype(dtype)
    if d is not out._dtype:
        raise RuntimeError(f"dtype {d._scalar_name} does not match dtype of out parameter "
                           f"({out._dtype._scalar_name})")
    return d


def _dt(dtype) -> D.dtype | None:
    return None if dtype is None else D.to_dtype(dtype)


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays, tensors)."""
    if isinstance(data, Tensor):
        import warnings

        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                      "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "torch.tensor(sourceTensor).", UserWarning, stacklevel=3)  # (2: the wrapper of NOTE [foreign errors])
        if data._requires_grad:  # a copy of the values only: autograd.explain names this line
            _prov.note_break(data, "torch.tensor(x)")
    d = _dt(dtype)
    if _mode.tracer is not None and _has_tensor(data):  # values of tensors copied into a new one
        _mode.tracer.read(data if isinstance(data, Tensor) else None, "torch.tensor(tensors)")
    arr = _to_array(data, D.get_default_dtype(), d)
    arr = np.array(arr, copy=True, order="C")
    return _finish(arr, d, requires_grad, device)


def _has_tensor(data) -> bool:
    if isinstance(data, Tensor):
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_tensor(x) for x in data)
    return False


def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with ndarrays/tensors when the dtype allows."""
    d = _dt(dtype)
    if isinstance(data, Tensor):
        return data if d is None or d is data._dtype else data.to(d)
    if isinstance(data, np.ndarray):
        _check_numpy(data)
        arr = data if d is None or data.dtype == d.np else data.astype(d.np)
        return _finish(arr, d, False, device)
    if _mode.tracer is not None and _has_tensor(data):
        _mode.tracer.read(None, "torch.as_tensor(tensors)")
    return _finish(_to_array(data, D.get_default_dtype(), d), d, False, device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool | None = None) -> Tensor:
    if copy is False and dtype is not None and isinstance(obj, (np.ndarray, Tensor)):
        src = D.from_numpy_dtype(obj.dtype) if isinstance(obj, np.ndarray) else obj._dtype
        if src is not D.to_dtype(dtype):
            raise ValueError(f"can't alias tensor with dtype '{src._scalar_name}' into dtype "
                             f"'{D.to_dtype(dtype)._scalar_name}'.")
    t = as_tensor(obj, dtype=dtype, device=device)
    if copy:
        if _mode.tracer is not None and isinstance(obj, Tensor):
            _mode.tracer.read(obj, "torch.asarray(tensor, copy=True)")
        t = _wrap(made(t._data.copy()), t._dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (changes show in both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check_numpy(ndarray)
    return _wrap(made(ndarray), D.from_numpy_dtype(ndarray.dtype))


def _size(size: tuple, fn: str) -> tuple:
    """The shape from ``f(2, 3)`` / ``f((2, 3))`` / ``f(Size)`` style arguments, checked as torch does."""
    if not size:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    first = size[0]
    if len(size) == 1 and (isinstance(first, builtins.bool) or not isinstance(first, (int, np.integer, Tensor))):
        if not isinstance(size[0], (tuple, list)):
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(size[0]).__name__}")
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s._data.size == 1 and not s._dtype.is_floating_point:
            s = int(s)
        if isinstance(s, builtins.bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f'"type must be tuple of ints,but got {type(s).__name__}"')
        out.append(int(s))
    for s in out:
        if s < 0:
            if fn == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _sizes(sizes: tuple, size, fn: str) -> tuple:
    """The size given as separate values (``zeros(2, 3)``), one sequence (``zeros((2, 3))``) or by keyword
    (``zeros(size=(2, 3))``), as torch's parser takes it."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{fn}() got multiple values for argument 'size'")
    return (size,)


def _float_dtype(dtype) -> D.dtype:
    return D.get_default_dtype() if dtype is None else D.to_dtype(dtype)


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """A tensor of zeros of the given size."""
    dtype = _out_dtype(out, dtype)
    d = _float_dtype(dtype)
    return _finish(np.zeros(_size(_sizes(sizes, size, "zeros"), "zeros"), d.np), d, requires_grad, device, out)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """A tensor of ones of the given size."""
    dtype = _out_dtype(out, dtype)
    d = _float_dtype(dtype)
    return _finish(np.ones(_size(_sizes(sizes, size, "ones"), "ones"), d.np), d, requires_grad, device, out)


@_replayable  # uninitialised memory: a fresh array on each replayed call (NOTE [replayable steps])
def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False, memory_format=None) -> Tensor:
    """An uninitialised tensor of the given size."""
    dtype = _out_dtype(out, dtype)
    d = _float_dtype(dtype)
    return _finish(_L.empty(_size(_sizes(sizes, size, "empty"), "empty"), d.np, memory_format), d, requires_grad,
                   device, out)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from it)."""
    dtype = _out_dtype(out, dtype)
    if isinstance(fill_value, (Tensor, np.generic)):
        fill_value = fill_value.item()  # a number: its dtype is not kept (as torch's Scalar)
    d = D.to_dtype(dtype) if dtype is not None else D._scalar_dtype(fill_value)
    fill_value = D.scalar_into(fill_value, d)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    return _finish(np.full(_size((size,), "full"), fill_value, d.np), d, requires_grad, device, out)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    d = _float_dtype(dtype)
    return _finish(np.asarray(D.scalar_into(s, d), d.np), d, requires_grad, device)


def eye(n: int, m: int | None = None, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
        requires_grad: bool = False) -> Tensor:
    """The identity matrix (n x m)."""
    d = _float_dtype(_out_dtype(out, dtype))
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _finish(np.eye(n, m, dtype=d.np), d, requires_grad, device, out)


def arange(start=None, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is a float."""
    dtype = _out_dtype(out, dtype)
    if start is None:  # arange(end=n)
        start = 0
    elif end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is not None:
        d = D.to_dtype(dtype)
        if d.is_complex:
            raise NotImplementedError(f'"arange_cpu" not implemented for \'{d._scalar_name}\'')
    elif any(isinstance(v, float) for v in vals):
        d = D.get_default_dtype()
    else:
        d = D.int64
    if not d.is_floating_point and any(isinstance(v, float) for v in vals):
        start, end, step = int(start), int(end), int(step)  # torch truncates the bounds for integer dtypes
        if step == 0:
            raise ValueError("step must be nonzero")
    n = max(0, math.ceil((end - start) / step))
    _range_out_warning(out, n, stacklevel=4)
    arr = (start + np.arange(n, dtype=np.float64) * step) if d.is_floating_point else np.arange(start, end, step)
    return _finish(arr.astype(d.np), d, requires_grad, device, out)


def _range_out_warning(out: Tensor | None, n: int, stacklevel: int) -> None:
    """torch's warning when the ``out`` of a range factory (arange, fftfreq ...) has another number of elements."""
    if out is not None and out._data.size not in (0, n):
        warnings.warn(f"The number of elements in the out tensor of shape {list(out._data.shape)} is {out._data.size} "
                      f"which does not match the computed number of elements {n}. Note that this may occur as a "
                      f"result of rounding error. The out tensor will be resized to a tensor of shape ({n},).",
                      UserWarning, stacklevel=stacklevel)


def range(start, end, step=1, *, out=None, dtype=None, device=None, requires_grad: bool = False,  # noqa: A001
          pin_memory: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` inclusive by ``step`` (deprecated in torch for ``arange``)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=3)
    d = _float_dtype(_out_dtype(out, dtype))
    n = int(math.floor((end - start) / step)) + 1
    return _finish((start + np.arange(n) * step).astype(d.np), d, requires_grad, device, out)


def _number(v):
    """A Python number, or a 0-d tensor's value."""
    return v._data.item() if isinstance(v, Tensor) else v


def _spaced_dtype(fname: str, start, end, dtype) -> D.dtype:
    """linspace/logspace's dtype: a complex end point (number or tensor) infers the default dtype's complex form,
    which a real ``dtype`` cannot hold."""
    if not any(isinstance(v, complex) or (isinstance(v, Tensor) and v._dtype.is_complex) for v in (start, end)):
        return _float_dtype(dtype)
    inferred = D.get_default_dtype().to_complex()
    if dtype is None:
        return inferred
    d = D.to_dtype(dtype)
    if not d.is_complex:
        raise RuntimeError(f"torch.{fname}(): inferred dtype {_CPP_NAMES[inferred.name][0]} can't be safely cast to "
                           f"passed dtype {d._scalar_name}")
    return d


def linspace(start, end, steps: int, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    dtype = _out_dtype(out, dtype)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _spaced_dtype("linspace", start, end, dtype)
    return _finish(np.linspace(_number(start), _number(end), steps).astype(d.np), d, requires_grad, device, out)


def logspace(start, end, steps: int, base: float = 10.0, *, out=None, dtype=None, layout=None, device=None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** x`` for x evenly spaced from ``start`` to ``end`` inclusive."""
    d = _spaced_dtype("logspace", start, end, _out_dtype(out, dtype))
    return _finish(np.logspace(_number(start), _number(end), steps, base=base).astype(d.np), d, requires_grad, device,
                   out)


def _float_sampler_dtype(dtype, kernel: str) -> D.dtype:
    d = _float_dtype(dtype)
    if not d.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_CPP_NAMES[d.name][1]}\'')
    return d


def _float_sampler(name: str, kernel: str, draw, doc: str, normal: bool = False):
    """torch's ``rand``/``randn``: ``draw(rng, shape)`` float64 samples, in a floating dtype (``kernel``: the torch
    kernel its error names for any other)."""
    def sample(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
               requires_grad: bool = False,
               pin_memory: bool = False) -> Tensor:
        dtype = _out_dtype(out, dtype)
        d = _float_dtype(dtype)
        if not d._differentiable:
            raise NotImplementedError(f'"{kernel}" not implemented for \'{d._scalar_name}\'')
        rng = _rng(generator)
        arr = _draw(lambda sh: draw(rng, sh), _size(_sizes(sizes, size, name), name), d, normal=normal)
        return _finish(arr, d, requires_grad, device, out)

    sample.__name__ = sample.__qualname__ = name
    sample.__doc__ = doc
    return _replayable(sample)  # draws random numbers: NOTE [replayable steps]


rand = _float_sampler("rand", "check_uniform_bounds", lambda rng, sh: rng.random(sh, dtype=np.float64),
                      "Uniform samples in [0, 1).")
randn = _float_sampler("randn", "normal_kernel_cpu", lambda rng, sh: rng.standard_normal(sh, dtype=np.float64),
                       "Standard normal samples.", normal=True)


def _draw(draw, shape: tuple, d: D.dtype, normal: bool = False) -> np.ndarray:
    """``draw(shape)`` (float64 samples) as ``d``; complex dtypes draw both parts, a normal one each with variance
    1/2 (so that the complex sample has variance 1, as torch's)."""
    if not d.is_complex:
        return draw(shape).astype(d.np)
    pair = draw(tuple(shape) + (2,)) * (np.sqrt(0.5) if normal else 1.0)
    return (pair[..., 0] + 1j * pair[..., 1]).astype(d.np)


@_replayable  # draws random numbers: NOTE [replayable steps]
def randint(low=None, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Integers uniformly from [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    dtype = _out_dtype(out, dtype)
    args = tuple(a for a in (low, high, size) if a is not None)
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    if len(args) not in (2, 3) or not all(_is_int(v) for v in (low, high)):
        raise TypeError(f"randint() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of:\n"
                        " * (int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, "
                        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
                        "bool pin_memory = False, bool requires_grad = False)\n"
                        " * (int low, int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, "
                        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
                        "bool pin_memory = False, bool requires_grad = False)")
    low, high = int(low), int(high)
    if not (-2 ** 63 <= low < 2 ** 63 and -2 ** 63 <= high < 2 ** 63):
        raise ValueError("Overflow when unpacking long long")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = D.int64 if dtype is None else D.to_dtype(dtype)
    if d.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if not d.is_floating_point:
        _check_random_bounds(low, high, d)
    arr = _rng(generator).integers(low, high, _size((size,), "randint")).astype(d.np)
    return _finish(arr, d, requires_grad, device, out)


def _is_int(v) -> bool:
    if isinstance(v, Tensor):
        return v._data.size == 1 and not v._dtype.is_floating_point
    return isinstance(v, (int, np.integer))


_C_TYPE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
           "int64": "int64_t"}


def _check_random_bounds(low: int, high: int, d: D.dtype) -> None:
    lo, hi = (0, 1) if d is D.bool else (np.iinfo(d.np).min, np.iinfo(d.np).max)
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {_C_TYPE[d.name]}")
    if not lo <= high - 1 <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPE[d.name]}")


@_replayable  # draws random numbers: NOTE [replayable steps]
def randperm(n: int, *, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1."""
    dtype = _out_dtype(out, dtype)
    d = D.int64 if dtype is None else D.to_dtype(dtype)
    if d.is_complex:
        raise NotImplementedError(f'"randperm" not implemented for \'{d._scalar_name}\'')
    n = _size((n,), "randperm")[0]
    return _finish(_rng(generator).permutation(n).astype(d.np), d, requires_grad, device, out)


def _like(input: Tensor, dtype, device, requires_grad, memory_format, fill) -> Tensor:
    """A tensor shaped (and laid out) like ``input``; ``fill(out)`` writes its values."""
    d = input._dtype if dtype is None else D.to_dtype(dtype)
    out = _L.empty_like(input._data, d.np, memory_format)
    fill(out)
    return _finish(out, d, requires_grad, device or input.device)


def _fill_value(v):
    def fill(out):
        out[...] = _like_array(out, v) if _B.is_array(v) else D.scalar_into(v, D.from_numpy_dtype(out.dtype))
    return fill


def _fill_random(draw, generator):
    def fill(out):
        d = D.from_numpy_dtype(out.dtype)
        if not d._differentiable:  # floating and complex, bfloat16 too (NumPy's kind "V" for it)
            name = "check_uniform_bounds" if draw == "random" else "normal_kernel_cpu"
            raise NotImplementedError(f'"{name}" not implemented for \'{d._scalar_name}\'')
        out[...] = _like_array(out, _draw(getattr(_rng(generator), draw), out.shape, d, normal=draw != "random"))
    return fill


def zeros_like(input: Tensor, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    """Zeros shaped like ``input`` (its dtype unless ``dtype`` is given)."""
    return _like(input, dtype, device, requires_grad, memory_format, _fill_value(0))


def ones_like(input: Tensor, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    """Ones shaped like ``input``."""
    return _like(input, dtype, device, requires_grad, memory_format, _fill_value(1))


@_replayable  # uninitialised memory: a fresh array on each replayed call (NOTE [replayable steps])
def empty_like(input: Tensor, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    """An uninitialised tensor shaped like ``input``."""
    return _like(input, dtype, device, requires_grad, memory_format, lambda out: None)


def full_like(input: Tensor, fill_value, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    """``fill_value`` everywhere, shaped like ``input``."""
    if isinstance(fill_value, (Tensor, np.generic)):
        fill_value = fill_value.item()
    return _like(input, dtype, device, requires_grad, memory_format, _fill_value(fill_value))


@_replayable  # draws random numbers: NOTE [replayable steps]
def rand_like(input: Tensor, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
              memory_format=None, generator=None) -> Tensor:
    """Uniform samples in [0, 1) shaped like ``input``."""
    return _like(input, dtype, device, requires_grad, memory_format, _fill_random("random", generator))


@_replayable  # draws random numbers: NOTE [replayable steps]
def randn_like(input: Tensor, *, dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
               memory_format=None, generator=None) -> Tensor:
    """Standard normal samples shaped like ``input``."""
    return _like(input, dtype, device, requires_grad, memory_format, _fill_random("standard_normal", generator))


@_replayable  # draws random numbers: NOTE [replayable steps]
def randint_like(input: Tensor, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 pin_memory: bool = False, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Integers uniformly from [low, high) shaped like ``input``: ``randint_like(input, high)`` or
    ``randint_like(input, low, high)``."""
    if high is None:
        low, high = 0, low
    d = input._dtype if dtype is None else D.to_dtype(dtype)
    values = randint(low, high, input._data.shape, generator=generator, dtype=d, device=device)
    return _like(input, d, device, requires_grad, memory_format, _fill_value(_to_host(values._data)))


# NOTE [allocation failures], NOTE [foreign errors] (ember/_malloc.py): factories raise torch's errors, not NumPy's.
def _translate_allocation_errors() -> None:
    from ._malloc import translate_errors_of

    translate_errors_of(globals(), __all__)


_translate_allocation_errors()


_args.install(globals(), __all__, own_out=("zeros", "ones", "empty", "full", "eye", "arange", "range", "linspace",
                                           "logspace", "rand", "randn", "randint", "randperm"))


# ------------------------------------------------------------------ Tensor.new_* (bound by ember/_methods.py)
# new_* take torch's factory options; ember/_args.py checks layout and pin_memory (_methods._HANDWRITTEN)
def new_tensor(self, data, *, dtype=None, device=None, pin_memory=False, requires_grad=False):
    return tensor(data, dtype=dtype or self._dtype, device=device or self.device, requires_grad=requires_grad)


def new_zeros(self, *sizes, size=None, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    return zeros(*sizes, size=size, dtype=dtype or self._dtype, device=device or self.device,
                     requires_grad=requires_grad)


def new_ones(self, *sizes, size=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    return ones(*sizes, size=size, dtype=dtype or self._dtype, device=device or self.device,
                    requires_grad=requires_grad)


def new_empty(self, *sizes, size=None, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    return empty(*sizes, size=size, dtype=dtype or self._dtype, device=device or self.device,
                     requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    return full(size, fill_value, dtype=dtype or self._dtype, device=device or self.device,
                    requires_grad=requires_grad)


def new(self, *args, **kwargs) -> "Tensor":
    """Legacy constructor of this dtype: new(2, 3) (uninitialised), new([1, 2]) (data), new() (empty)."""
    here = self.device
    dev = kwargs.pop("device", None)
    if dev is not None and _as_device(dev).type != here.type:
        raise RuntimeError(f"legacy constructor expects device type: {here.type} but device type: "
                           f"{_as_device(dev).type} was passed")
    from ._conversions import _legacy_array, _tensor_options  # noqa: PLC0415 - the legacy constructors live there

    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0]._dtype is not self._dtype:
            raise TypeError(f"expected {_tensor_options(self._dtype)} (got {_tensor_options(args[0]._dtype)})")
        return args[0]
    arr = _legacy_array(args, self._dtype)
    return _wrap(_to_device(arr, here), self._dtype)  # on self's device


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad=False):
    return empty_strided(size, stride, dtype=dtype or self._dtype, device=device, requires_grad=requires_grad)


# ---------------------------------------------------------------- memory laid out by hand
__all__ += ["empty_strided", "empty_permuted", "frombuffer"]


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """Uninitialised memory viewed with the given sizes and strides."""
    from .ops import strided as _strided  # noqa: PLC0415 - ops load after this module

    size, stride = tuple(size), tuple(stride)
    n = 1 + sum((a - 1) * s for a, s in zip(size, stride)) if all(size) else 0
    store = empty(n, dtype=dtype, device=device)
    out = _wrap(_strided._as_strided_view(store, size, stride, 0), store._dtype)
    return out.requires_grad_(requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """Uninitialised memory laid out in ``physical_layout`` order, seen with the logical ``size``."""
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError(f"Dimension {len(size)} of physical_layout is not a permutation")
    phys = empty(*[size[d] for d in order], dtype=dtype, device=device)
    inverse = [order.index(d) for d in builtins.range(len(size))]
    out = _wrap(phys._data.transpose(inverse), phys._dtype)
    return out.requires_grad_(requires_grad)


def frombuffer(buffer, *, dtype: D.dtype, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-d tensor sharing memory with a Python buffer (bytes are read-only: a copy-on-write warning in torch)."""
    arr = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    if not arr.flags.writeable:
        arr = arr.copy()
    return _wrap(arr, dtype).requires_grad_(requires_grad)


_args.install(globals(), ("empty_strided", "empty_permuted", "frombuffer"))
