"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty/eye, ranges, random."""
from __future__ import annotations

import math

import numpy as np

from . import _dtype as D
from ._device import _check_device
from ._random import _rng
from ._tensor import Tensor, _to_array, _wrap, _CPP_NAMES
from .ops import random as _random

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty", "eye",
           "arange", "range", "linspace", "logspace", "rand", "randn", "randint", "randperm",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
           "randint_like", "scalar_tensor"]

_default_device = ["cpu"]


def _finish(arr: np.ndarray, dtype, requires_grad: bool, device=None) -> Tensor:
    _check_device(device if device is not None else _default_device[0])
    d = D.from_numpy_dtype(arr.dtype) if dtype is None else dtype
    t = _wrap(arr, d)
    if requires_grad:
        if not d.is_floating_point:  # the factories' wording differs from requires_grad_()'s
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _dt(dtype) -> D.dtype | None:
    return None if dtype is None else D.to_dtype(dtype)


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays, tensors)."""
    if isinstance(data, Tensor):
        import warnings

        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                      "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    d = _dt(dtype)
    arr = _to_array(data, D.get_default_dtype(), d)
    arr = np.array(arr, copy=True, order="C")
    return _finish(arr, d, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with ndarrays/tensors when the dtype allows."""
    d = _dt(dtype)
    if isinstance(data, Tensor):
        return data if d is None or d is data._dtype else data.to(d)
    if isinstance(data, np.ndarray):
        arr = data if d is None or data.dtype == d.np else data.astype(d.np)
        D.from_numpy_dtype(arr.dtype)
        return _finish(arr, d, False, device)
    return _finish(_to_array(data, D.get_default_dtype(), d), d, False, device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    t = as_tensor(obj, dtype=dtype, device=device)
    if copy:
        t = _wrap(t._data.copy(), t._dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (changes show in both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _wrap(ndarray, D.from_numpy_dtype(ndarray.dtype))


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"zeros(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {len(out)}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _float_dtype(dtype) -> D.dtype:
    return D.get_default_dtype() if dtype is None else D.to_dtype(dtype)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """A tensor of zeros of the given size."""
    d = _float_dtype(dtype)
    return _finish(np.zeros(_size(size), d.np), d, requires_grad, device)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """A tensor of ones of the given size."""
    d = _float_dtype(dtype)
    return _finish(np.ones(_size(size), d.np), d, requires_grad, device)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False, memory_format=None) -> Tensor:
    """An uninitialised tensor of the given size."""
    d = _float_dtype(dtype)
    return _finish(np.empty(_size(size), d.np), d, requires_grad, device)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from it)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    d = D.to_dtype(dtype) if dtype is not None else D._scalar_dtype(fill_value)
    return _finish(np.full(_size((size,)), fill_value, d.np), d, requires_grad, device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    d = _float_dtype(dtype)
    return _finish(np.asarray(s, d.np), d, requires_grad, device)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The identity matrix (n x m)."""
    d = _float_dtype(dtype)
    return _finish(np.eye(n, m, dtype=d.np), d, requires_grad, device)


def arange(start, end=None, step=1, *, out=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is a float."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is not None:
        d = D.to_dtype(dtype)
    elif any(isinstance(v, float) for v in vals):
        d = D.get_default_dtype()
    else:
        d = D.int64
    n = max(0, math.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64) * step) if d.is_floating_point else np.arange(start, end, step)
    return _finish(arr.astype(d.np), d, requires_grad, device)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # noqa: A001
    d = _float_dtype(dtype)
    n = int(math.floor((end - start) / step)) + 1
    return _finish((start + np.arange(n) * step).astype(d.np), d, requires_grad, device)


def linspace(start, end, steps: int, *, out=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _float_dtype(dtype)
    return _finish(np.linspace(start, end, steps).astype(d.np), d, requires_grad, device)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    d = _float_dtype(dtype)
    return _finish(np.logspace(start, end, steps, base=base).astype(d.np), d, requires_grad, device)


def _float_sampler_dtype(dtype, kernel: str) -> D.dtype:
    d = _float_dtype(dtype)
    if not d.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_CPP_NAMES[d.name][1]}\'')
    return d


def rand(*size, generator=None, out=None, dtype=None, device=None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    d = _float_sampler_dtype(dtype, "check_uniform_bounds")
    arr = _rng(generator).random(_size(size), dtype=np.float64).astype(d.np)
    return _finish(arr, d, requires_grad, device)


def randn(*size, generator=None, out=None, dtype=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """Standard normal samples."""
    d = _float_sampler_dtype(dtype, "normal_kernel_cpu")
    arr = _rng(generator).standard_normal(_size(size), dtype=np.float64).astype(d.np)
    return _finish(arr, d, requires_grad, device)


def randint(low, high=None, size=None, *, generator=None, out=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniformly from [low, high); ``randint(high, size)`` draws from [0, high)."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    if high is None or size is None:
        raise TypeError("randint() missing 1 required positional arguments: \"size\"")
    low, high = (int(v) for v in (low, high))
    if not (-2 ** 63 <= low < 2 ** 63 and -2 ** 63 <= high < 2 ** 63):
        raise ValueError("Overflow when unpacking long long")
    d = D.int64 if dtype is None else D.to_dtype(dtype)
    blank = _wrap(np.empty(_size((size,)), d.np), d)
    return _finish(_random.random_value(blank, low, high, generator=generator)._data, d, requires_grad, device)


def randperm(n: int, *, generator=None, out=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = D.int64 if dtype is None else D.to_dtype(dtype)
    return _finish(_rng(generator).permutation(n).astype(d.np), d, requires_grad, device)


def _like(fn, input: Tensor, dtype, requires_grad, **kw) -> Tensor:
    d = input._dtype if dtype is None else D.to_dtype(dtype)
    return fn(*input._data.shape, dtype=d, requires_grad=requires_grad, **kw)


def zeros_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    return _like(zeros, input, dtype, requires_grad)


def ones_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    return _like(ones, input, dtype, requires_grad)


def empty_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    return _like(empty, input, dtype, requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    d = input._dtype if dtype is None else D.to_dtype(dtype)
    return full(input._data.shape, fill_value, dtype=d, requires_grad=requires_grad)


def rand_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
              memory_format=None, generator=None) -> Tensor:
    return _like(rand, input, dtype, requires_grad, generator=generator)


def randn_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
               memory_format=None, generator=None) -> Tensor:
    return _like(randn, input, dtype, requires_grad, generator=generator)


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad: bool = False, memory_format=None) -> Tensor:
    if high is None:
        low, high = 0, low
    d = input._dtype if dtype is None else D.to_dtype(dtype)
    return randint(low, high, input._data.shape, dtype=d)
