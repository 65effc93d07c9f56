"""Where a tensor's array lives: NumPy for ``cpu``, CuPy for ``cuda``, or the test stand-in for ``cuda``.

# NOTE [device seam]
A tensor's device is not stored: it follows from its array's type. ``numpy.ndarray`` is ``cpu``; a
``cupy.ndarray`` is ``cuda:<its device id>``; a ``StandInArray`` (below) is ``cuda:0``. Op kernels are written
once against NumPy's API and run on either, because CuPy implements NumPy's dispatch protocols
(``__array_ufunc__``, ``__array_function__``): ``np.exp(x)`` or ``np.matmul(a, b)`` on CuPy arrays runs CuPy's
kernel and returns a CuPy array. What does not dispatch goes through this module, the one place that knows
about CuPy: an array made from host values for a device input (``like(arr, values)``), results normalised
without dropping the device (``asarray``), moves between host and device (``to_device``, ``to_host``), the
device of an array (``device_of``) and the array types (``ARRAYS``, where kernels tell arrays from Python
scalars). There is no ``if cuda:`` in op files.

Ops check devices in ``Op.apply`` (NOTE [device check] in ember/ops/_op.py): all tensors of one op must be on
one device, except 0-d CPU tensors, which torch lets into a CUDA op as scalars.

# NOTE [cuda stand-in]
CI has no GPU and CuPy has no CPU mode, so the device plumbing (``.to``, factories, mixing errors, modules,
optimizers, serialization, ``torch.cuda.*``) is tested on a stand-in: with ``EMBER_FAKE_CUDA=1`` in the
environment (or ``enable_stand_in(True)``, which the tests use), ``cuda`` is available and its arrays are
``StandInArray``, a NumPy subclass that keeps its type through NumPy's functions and ufuncs (so results of
stand-in inputs stay on the stand-in device, as CuPy's results stay on the GPU). The values are NumPy's, so a
stand-in run must equal the CPU run exactly. Real CuPy kernels are checked on a GPU by tools/gpu_check.py.
A kernel that makes a host array from a device input (``np.asarray(x)``, ``np.empty`` then filling it) would
break on CuPy; on the stand-in ``Op.apply`` puts such results back on the device and records the op's name in
``host_results``, so the stand-in tests can list them. ``EMBER_FAKE_CUDA=strict`` (``strict=True``) makes NumPy
refuse host arrays beside stand-in ones with a TypeError, as CuPy does, which sends such ops down the host
fallback (NOTE [host fallback] in ember/ops/_op.py).
"""
from __future__ import annotations

import os

import numpy as np

from ._device import device, _cpu

__all__ = ["ARRAYS", "SINGLE_DEVICE", "StandInArray", "asarray", "cuda_available", "cuda_device_count", "cupy", "device_of",
           "enable_stand_in", "host_fallbacks", "host_results", "is_cpu_array", "is_host_only", "like",
           "stand_in_enabled", "to_device", "to_host"]

_nd = np.ndarray
_CUDA0 = device("cuda", 0)
_cupy = [None, False]  # the cupy module once imported; whether the import was tried
_stand_in = [os.environ.get("EMBER_FAKE_CUDA", "") not in ("", "0"), os.environ.get("EMBER_FAKE_CUDA") == "strict"]
# The array types of every device: kernels test ``type(x) in ARRAYS`` where they tell arrays from Python scalars
# (cupy.ndarray joins when CuPy is imported).
ARRAYS: set = {_nd}
SINGLE_DEVICE = [True]  # one cuda device: arrays of one type are on one device (NOTE [device check])
_CUDA_BY_ID: dict = {}
host_results: set = set()  # ops whose kernel returned a host array for stand-in inputs (NOTE [cuda stand-in])
host_fallbacks: set = set()  # ops run on the CPU because their kernel refused device arrays (NOTE [host fallback])
# what CuPy (and the strict stand-in) say when NumPy code meets their arrays (a TypeError)
_HOST_ONLY = ("Implicit conversion to a NumPy array is not allowed", "Unsupported type <class 'numpy.ndarray'>",
              "Stand-in array mixed with a host array")


def _unwrap(x):
    t = type(x)
    if t is StandInArray:
        return x.view(_nd)
    if t is tuple or t is list:
        return t(_unwrap(v) for v in x)
    return x


def _rewrap(x):
    t = type(x)
    if t is _nd:
        return x.view(StandInArray)
    if isinstance(x, np.generic):  # a full reduction: a 0-d array, as CuPy's
        return np.asarray(x).view(StandInArray)
    if t is tuple or t is list:
        return t(_rewrap(v) for v in x)
    return x


class StandInArray(np.ndarray):
    """A NumPy array that ember treats as living on ``cuda:0`` (NOTE [cuda stand-in]). NumPy functions and
    ufuncs given one return stand-in arrays."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if _stand_in[1]:
            _refuse_host(inputs)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = _unwrap(out)
        res = getattr(ufunc, method)(*_unwrap(inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _rewrap(res)

    def __array_function__(self, func, types, args, kwargs):
        if _stand_in[1]:
            _refuse_host(args)
        if "out" in kwargs and kwargs["out"] is not None:
            out = kwargs["out"]
            kwargs = dict(kwargs, out=_unwrap(out))
            func(*_unwrap(args), **kwargs)
            return out
        return _rewrap(func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))


def is_host_only(e: TypeError) -> bool:
    """Whether ``e`` is a device array refused by NumPy code (NOTE [host fallback] in ember/ops/_op.py)."""
    msg = str(e)
    return any(m in msg for m in _HOST_ONLY)


def asarray(x, dtype=None):
    """``x`` (an array of any device, or a NumPy scalar) as an array of ``dtype`` on its device."""
    if type(x) in ARRAYS:
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype)


def _refuse_host(values) -> None:
    """Strict stand-in: a host array of one or more dimensions beside a stand-in array is refused, as CuPy does."""
    for v in values:
        if type(v) is _nd and v.ndim:
            raise TypeError("Stand-in array mixed with a host array (CuPy: Unsupported type <class 'numpy.ndarray'>)")
        if type(v) is tuple or type(v) is list:
            _refuse_host(v)


def enable_stand_in(on: bool = True, strict: bool = False) -> None:
    """Make ``cuda`` the NumPy-backed stand-in device (True) or not (False); tests switch it per test.
    ``strict``: NumPy functions refuse host arrays mixed with stand-in ones (TypeError), as CuPy's do."""
    _stand_in[0] = bool(on)
    _stand_in[1] = bool(on and strict)
    from .cuda import _runtime

    _runtime.select()


def stand_in_enabled() -> bool:
    return _stand_in[0]


def cupy():
    """The cupy module, or None when it is not installed or sees no GPU (imported on first use)."""
    if not _cupy[1]:
        _cupy[1] = True
        try:
            import cupy as cp

            if cp.cuda.runtime.getDeviceCount() > 0:
                _cupy[0] = cp
                ARRAYS.add(cp.ndarray)
                SINGLE_DEVICE[0] = cp.cuda.runtime.getDeviceCount() == 1
        except Exception:  # noqa: BLE001 - no CuPy, no driver or no device: no cuda
            _cupy[0] = None
    return _cupy[0]


def cuda_device_count() -> int:
    if _stand_in[0]:
        return 1
    cp = cupy()
    return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def cuda_available() -> bool:
    return _stand_in[0] or cupy() is not None


def is_cpu_array(arr) -> bool:
    return type(arr) is _nd or (isinstance(arr, _nd) and type(arr) is not StandInArray)


def device_of(arr) -> device:
    """The device an array lives on."""
    t = type(arr)
    if t is _nd:
        return _cpu
    if t is StandInArray:
        return _CUDA0
    if isinstance(arr, (_nd, np.generic)) or not t.__module__.startswith("cupy"):
        return _cpu
    i = arr.device.id
    d = _CUDA_BY_ID.get(i)
    if d is None:
        d = _CUDA_BY_ID[i] = device("cuda", i)
    return d


def like(ref, value):
    """``value`` (a host array or number) as an array on ``ref``'s device (no copy when ``ref`` is on the host)."""
    t = type(ref)
    if t is StandInArray:
        return np.asarray(value).view(StandInArray)
    if isinstance(ref, _nd) or not t.__module__.startswith("cupy"):
        return np.asarray(value)
    with ref.device:
        return _cupy[0].asarray(value)


def to_host(arr):
    """``arr`` as a host (NumPy) array: itself when it is one, else a copy."""
    t = type(arr)
    if t is _nd:
        return arr
    if t is StandInArray:
        return arr.view(_nd).copy()
    if isinstance(arr, _nd) or not t.__module__.startswith("cupy"):
        return arr
    return arr.get()


def to_device(arr, dev: device):
    """A copy of ``arr`` on ``dev`` (``arr`` itself when it is already there)."""
    src = device_of(arr)
    if src == dev or (dev.index is None and src.type == dev.type):
        return arr
    if dev.type == "cpu":
        return to_host(arr)
    if dev.type != "cuda":  # pragma: no cover - _check_device refuses other kinds first
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
    if _stand_in[0]:
        if dev.index not in (None, 0):
            raise RuntimeError("CUDA error: invalid device ordinal")
        return np.array(to_host(arr), copy=True).view(StandInArray)
    cp = cupy()
    if cp is None:
        raise AssertionError("Torch not compiled with CUDA enabled")
    index = cp.cuda.runtime.getDevice() if dev.index is None else dev.index
    with cp.cuda.Device(index):
        if src.type == "cuda":
            return cp.array(arr, copy=True)  # peer copy
        return cp.asarray(arr)


ARRAYS.add(StandInArray)
