"""torch.autocast (torch.amp.autocast): regions where listed ops run in a lower-precision dtype, and the
``custom_fwd``/``custom_bwd`` decorators for autograd Functions.

CPU autocast casts as CPU torch does (NOTE [autocast policies] in ``_policy``). Other device types behave as on a
machine without them, as CPU torch's build does: ``"cuda"`` warns and disables itself; the others only record state.
"""
from __future__ import annotations

import collections.abc
import functools
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from .. import _state as S
from .._state import is_autocast_available

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_SUPPORTED = (D.bfloat16, D.float16)


def autocast_decorator(autocast_instance, func):
    """``func`` run inside ``autocast_instance``."""
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:  # noqa: N801 - torch's name
    """A context manager / decorator running a region in mixed precision (torch.autocast).

    ``device_type`` "cpu" casts the ops of torch's CPU lists to ``dtype`` (bfloat16 by default, or float16);
    ``enabled=False`` turns autocast off inside; ``cache_enabled`` keeps one cast of each float32 weight per region.
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = S.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = S.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":  # no CUDA here, as in torch's CPU build
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in _SUPPORTED:
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = S.is_autocast_cache_enabled()
        self.prev = S.is_autocast_enabled(self.device)
        self.prev_fastdtype = S.get_autocast_dtype(self.device)
        S.set_autocast_enabled(self.device, self._enabled)
        S.set_autocast_dtype(self.device, self.fast_dtype)
        S.autocast_increment_nesting()
        S.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if S.autocast_decrement_nesting() == 0:  # leaving every autocast region: drop the cached weight casts
            S.clear_autocast_cache()
        S.set_autocast_enabled(self.device, self.prev)
        S.set_autocast_dtype(self.device, self.prev_fastdtype)
        S.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                            f"Did you mean to use autocast as a context manager? For example:\n"
                            f"    with torch.autocast(device_type=...):\n"
                            f"        output = model(input)")
        return autocast_decorator(self, func)


class _UnmanagedAutocast(autocast):
    """An autocast entered by ``_enter_autocast`` rather than a ``with`` statement."""


def _enter_autocast(*vals):
    mode = _UnmanagedAutocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode) -> None:
    mode.__exit__(None, None, None)


def _cast(value, device_type: str, dtype):
    """``value`` with its eligible tensors (floating, not float64; in containers too) cast to ``dtype``."""
    if isinstance(value, Tensor):
        ok = value._dtype.is_floating_point and device_type == "cpu" and value._dtype is not D.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a custom Function's ``forward``: with ``cast_inputs``, inside an autocast region its floating
    tensor inputs are cast to that dtype and it runs with autocast off; otherwise it runs in the current state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = S.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = S.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = S.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if on:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom Function's ``backward`` to run in the autocast state its ``forward`` ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
