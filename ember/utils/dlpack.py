"""DLPack interchange (zero-copy sharing with NumPy, torch and other DLPack libraries), over NumPy's support.

``from_dlpack(obj)`` takes an object with ``__dlpack__`` (an ndarray, a torch or ember tensor ...) or a
DLPack capsule; ``to_dlpack(tensor)`` makes a capsule. Memory is shared both ways; a capsule can be
consumed once.
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np

from .. import _dtype as D
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


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with ``ext_tensor`` (an object with ``__dlpack__``, or a DLPack capsule)."""
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
    else:
        raise RuntimeError(_CAPSULE_MSG)
    return _wrap(arr, D.from_numpy_dtype(arr.dtype))


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of ``tensor``'s memory (as torch, not refused for tensors requiring grad)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'data' (position 1) must be Tensor, not {type(tensor).__name__}")
    return _export(tensor)
