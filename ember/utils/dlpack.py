"""DLPack interchange (zero-copy sharing with NumPy, torch and other DLPack libraries), over NumPy's support.

``from_dlpack(obj)`` takes an object with ``__dlpack__`` (an ndarray, a torch or ember tensor ...) or a
DLPack capsule; ``to_dlpack(tensor)`` makes a capsule. Memory is shared both ways; a capsule can be
consumed once.
"""
from __future__ import annotations

import ctypes
from enum import IntEnum

import numpy as np

from .. import _dtype as D
from .._device import _check_device
from .._tensor import Tensor, _wrap

__all__ = ["from_dlpack", "to_dlpack", "DLDeviceType"]

_KDL_CPU = 1
_CAPSULE_MSG = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, "
                "so you might have already constructed a tensor from it once.")


class DLDeviceType(IntEnum):
    """DLPack's device type numbers (ember has only the CPU)."""

    kDLCPU = _KDL_CPU


def _cpu_device() -> tuple:
    """``(device type, device id)`` as DLPack numbers them: every ember tensor is on the CPU."""
    return (DLDeviceType.kDLCPU, 0)


def _export(t: Tensor, stream=None, *, max_version=None, dl_device=None, copy=None):
    """``t``'s array as a capsule; an array NumPy keeps read-only (a broadcast view) is shared when the consumer
    reads the versioned protocol, else exported as a copy."""
    if stream is not None and stream != -1:
        raise BufferError("stream is not supported for CPU tensors")
    arr = t._data
    try:
        return arr.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)
    except BufferError:
        if arr.flags.writeable or copy is False:
            raise
        return arr.copy().__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)


class _Capsule:
    """A capsule dressed as a producer: NumPy's ``from_dlpack`` wants an object with ``__dlpack__``."""

    __slots__ = ("capsule",)

    def __init__(self, capsule) -> None:
        self.capsule = capsule

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return _cpu_device()


def _writable(arr: np.ndarray) -> np.ndarray:
    """A writable view of the memory behind ``arr`` (which it keeps alive).

    NumPy marks arrays imported from an unversioned capsule read-only, as that protocol cannot say
    whether the producer allows writes; torch's capsules do, and torch shares them writable."""
    if arr.size == 0:
        return np.empty(arr.shape, arr.dtype)
    back = sum((n - 1) * st for st, n in zip(arr.strides, arr.shape) if st < 0)  # lowest byte, from arr's start
    span = sum((n - 1) * abs(st) for st, n in zip(arr.strides, arr.shape)) + arr.itemsize
    buf = (ctypes.c_char * span).from_address(arr.__array_interface__["data"][0] + back)
    buf.owner = arr  # the exporter's memory lives as long as the view does
    return np.ndarray(arr.shape, arr.dtype, buffer=buf, offset=-back, strides=arr.strides)


def from_dlpack(ext_tensor, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor sharing memory with ``ext_tensor`` (an object with ``__dlpack__``, or a DLPack capsule);
    ``copy=True``: a copy; ``device``: the CPU only."""
    if device is not None:
        _check_device(device)
    t = _from_dlpack(ext_tensor)
    return _wrap(t._data.copy(), t._dtype) if copy else t


def _from_dlpack(ext_tensor) -> Tensor:
    if hasattr(ext_tensor, "__dlpack__"):
        if hasattr(ext_tensor, "__dlpack_device__"):
            dev = ext_tensor.__dlpack_device__()
            if int(dev[0]) != _KDL_CPU:
                raise RuntimeError(f"ember tensors live on the CPU; cannot import a DLPack tensor from device "
                                   f"type {int(dev[0])}")
        arr = np.from_dlpack(ext_tensor)
    elif type(ext_tensor).__name__ == "PyCapsule":
        try:
            arr = np.from_dlpack(_Capsule(ext_tensor))
        except (ValueError, TypeError, BufferError):
            raise RuntimeError(_CAPSULE_MSG) from None
        if not arr.flags.writeable:
            arr = _writable(arr)
    else:
        raise RuntimeError(_CAPSULE_MSG)
    return _wrap(arr, D.from_numpy_dtype(arr.dtype))


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of ``tensor``'s memory (as torch, not refused for tensors requiring grad)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'data' (position 1) must be Tensor, not {type(tensor).__name__}")
    return _export(tensor)


# Tensor.__dlpack__ and Tensor.__dlpack_device__ (bound by ember/_methods.py)
def __dlpack__(self, *args, **kwargs):
    """Export as a DLPack capsule (through NumPy's exporter); tensors requiring grad are refused."""
    if self._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    return _export(self, *args, **kwargs)


def __dlpack_device__(self):
    return _cpu_device()
