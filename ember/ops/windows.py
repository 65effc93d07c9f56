"""Window functions (torch.hann_window, hamming, blackman, bartlett, kaiser): values computed in float64 on
arrays, then cast to the requested dtype."""
from __future__ import annotations

import math

import numpy as np

from .. import _args
from .. import _dtype as D
from .._factories import _finish
from .._malloc import translate_errors_of as _translate_errors_of
from .._tensor import Tensor, _wrap
from . import reduction as _R

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _window(name: str, window_length: int, periodic: bool, dtype, fn, device=None, requires_grad=False) -> Tensor:
    t = _window_host(name, window_length, periodic, dtype, fn)
    return _finish(t._data, t._dtype, False, device).requires_grad_(requires_grad)


def _window_host(name: str, window_length: int, periodic: bool, dtype, fn) -> Tensor:
    dt = dtype or D.get_default_dtype()
    if dt.is_complex:  # torch builds windows from an arange in the dtype, which has no complex kernel
        raise _R.complex_refused("arange_cpu", dt.np)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window length, got window_length={window_length}")
    if window_length == 0:
        return _wrap(np.empty(0, dt.np), dt)
    if window_length == 1:
        return _wrap(np.ones(1, dt.np), dt)
    m = window_length + 1 if periodic else window_length
    w = fn(np.arange(m, dtype=np.float64), m)
    return _wrap(w[:window_length].astype(dt.np), dt)


def _cosine_sum(*coefs):
    def fn(k, m):
        return sum(((-1) ** i) * c * np.cos(2 * math.pi * i * k / (m - 1)) for i, c in enumerate(coefs))
    return fn


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    return _window("hann_window", window_length, periodic, dtype, _cosine_sum(0.5, 0.5), device, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *, dtype=None,
                   layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", window_length, periodic, dtype,
                   _cosine_sum(alpha, beta), device, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", window_length, periodic, dtype,
                   _cosine_sum(0.42, 0.5, 0.08), device, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    def fn(k, m):
        return 1 - np.abs(2 * k / (m - 1) - 1)
    return _window("bartlett_window", window_length, periodic, dtype, fn, device, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    from ._special import i0

    def fn(k, m):
        r = 2 * k / (m - 1) - 1
        return i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / i0(np.array([float(beta)]))[0]
    return _window("kaiser_window", window_length, periodic, dtype, fn, device, requires_grad)


# NOTE [foreign errors] (ember/_malloc.py): these compute on arrays outside ops
_translate_errors_of(globals(), __all__)
_args.install(globals(), __all__)
