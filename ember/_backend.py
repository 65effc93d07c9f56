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
A kernel result made on the host is moved to the op's device by ``Op.apply`` (NOTE [host results] in
ember/ops/_op.py). ``EMBER_FAKE_CUDA=strict`` (``strict=True``) makes NumPy refuse host arrays beside stand-in
ones with a TypeError, as CuPy does, which sends such ops down the host fallback (NOTE [host fallback]).

# NOTE [cupy's missing numpy]
What NumPy code does that CuPy does not, each seen failing on a GPU (tools/gpu_check.py), and its spelling here:
- ``arr.flags.writeable``: CuPy's flags have none (a device array is always writable): ``writeable(arr)``.
- ``__array_interface__`` (``np.lib.stride_tricks.as_strided``, ``np.ndarray(buffer=...)``, data pointers):
  ``as_strided``, ``strided_view``, ``address``.
- ``ufunc.at`` (CuPy answers NotImplemented) and ``maximum/minimum.accumulate``: ``ufunc_at`` (an add is a
  bincount of the selected flat positions, on any device; the stand-in runs that code too) and ``accumulate``.
- ``np.asarray`` / ``np.ascontiguousarray`` of a device array (CuPy refuses the implicit copy; NumPy turns a
  stand-in array into a host one): ``asarray``, ``ascontiguousarray``. ``np.repeat`` with array counts (CuPy takes
  an int or a list): ``repeat``. ``isinstance(x, np.ndarray)`` (a CuPy array is none): ``is_array``.
- Arrays made from no array (``np.zeros(shape)``, ``np.arange(n)``) land on the host: kernels pass ``like=``
  an input (NumPy dispatches the creation to that array's module) or call ``like(ref, values)``; host index
  arrays in a key for a device array go through ``key_on``. Except ``np.full`` and ``np.ones``: NumPy 2 hands
  the array's module a ``device=`` that CuPy's creation functions do not take: ``full``, ``ones``.
- ``arr.base``: CuPy's ``as_strided`` (and ``strided_view``'s ``ndarray(memptr=...)``) makes a view with no base, so
  ``.base is None`` does not tell a copy from a view of another array's memory (a diagonal taken for a copy kept its
  in-place change out of its base's history: half the gradient, on a GPU only), and no ``.base`` chain leads to the
  storage: ``same_memory``, ``storage_of``.
- ufunc keywords beyond ``out``, ``dtype``, ``casting``: CuPy raises "Wrong arguments" for NumPy's ``where=``
  (the stand-in refuses a ``where=`` mask in ufunc calls; NumPy's own methods pass it other keywords, which CuPy's
  methods do not meet); a masked write is ``np.where``,
  ``np.copyto(..., where=)`` or a sign trick (``np.copysign``).
The stand-in refuses the first three as CuPy does (its ``flags`` has no ``writeable``, it has no
``__array_interface__``, its ``ufunc.at``, ``maximum.accumulate`` and array ``repeats`` raise CuPy's errors), and
the ``device=`` of np.full/np.ones(like=) (CuPy's TypeError); its ``as_strided`` and ``strided_view`` results have
no ``.base``, and its full reductions, 0-d indexing (``a[0, 0]``) and ``argmax``/``argmin`` give 0-d arrays where
NumPy gives NumPy scalars, as CuPy's; so
tests/cuda/test_stand_in_ops.py fails on a kernel that uses them; the others it cannot see (NumPy gives ndarray
subclasses no hook in ``np.asarray`` or ``isinstance``), so tests/cuda/test_seam.py reads the op kernels for them.

# NOTE [stand-in counters]
On a GPU a small training step costs what it launches and what it waits for, not what it computes: each CuPy call
is a kernel launch (~10-20 us), and each read of a device value by the host (``item``, ``bool(arr)``, ``float``,
``int``, ``tolist``, a move to the host, a host fallback) waits for every queued kernel. ``counting()`` counts both
on the stand-in while a block runs: a "kernel" is each call that reaches ``StandInArray.__array_ufunc__`` or
``__array_function__`` (ufuncs, their reductions, NumPy functions, creations with ``like=``) except the ones that
only make views, allocate without filling or read metadata (``_VIEWS``), each ``astype`` that converts, ``copy``,
``fill``, ``ravel``/``flatten``/``reshape`` that copy, the methods that call no ufunc (``argmax``, ``cumsum``,
``take``, ``sort`` ...), each advanced-index read and each write through ``[...] =`` (one CuPy call each) and each
``like`` (a host-to-device copy); a "sync" is each of the conversions above. A fused formula (NOTE [fused formulas] in ember/_fuse.py), one
``cupy.fuse`` kernel on a GPU, counts as one kernel whatever NumPy calls stand in for it. It is an approximation of CuPy's launches (a CuPy function may launch
several kernels, e.g. ``mean`` a sum and a divide; a creation launches one fill) that counts the same calls ember
makes. Counting touches only ``StandInArray``; the CPU path (``numpy.ndarray``) is unchanged. Used by
tools/kernel_count.py and tests/cuda/test_stand_in_syncs.py.

# NOTE [device-side asserts]
A check of values (a class target out of range, an embedding index past the table) on the host is a Python ``if``
on an array: on a GPU that is a host sync per call. torch's CUDA kernels check with a device-side assert instead,
which raises at a later sync ("CUDA error: device-side assert triggered"). ``device_assert(bad, error)`` does the
same: on the host it raises ``error()`` at once when the 0-d boolean ``bad`` is true (the CPU's error, unchanged);
on a device it queues ``bad`` and ``check_pending()`` raises the first failed check's error at the next read of a
device value by the host (``item``, ``tolist``, ``to_host``, ``cuda.synchronize``; torch's is a RuntimeError, ember
raises the CPU's error, naming the bad value). The queue is read when it holds ``_MAX_PENDING`` checks (one sync
per that many unchecked calls, for loops that never read a value).
"""
from __future__ import annotations

import os
from sys import getrefcount

import numpy as np

from ._device import device, _cpu

__all__ = ["ARRAYS", "Counts", "check_pending", "counting", "device_assert", "one_kernel", "sole_array", "whole_stand_in", "SINGLE_DEVICE", "StandInArray", "accumulate", "address", "as_strided", "asarray",
           "ascontiguousarray", "cuda_available", "cuda_device_count", "cupy", "device_of", "enable_stand_in", "full", "host_fallbacks", "host_results", "is_array",
           "is_cpu_array", "is_host_only", "key_on", "like", "ones", "ref", "repeat", "same_memory", "stand_in_enabled", "storage_of", "strided_view", "to_device", "to_host",
           "ufunc_at", "writeable"]

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
              "has incorrect type (expected cupy", "Stand-in array mixed with a host array")
# ufuncs whose ``accumulate`` CuPy implements (NOTE [cupy's missing numpy])
_ACCUMULATES = frozenset({"add", "multiply"})


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


class Counts:
    """What ran on the stand-in while ``counting()`` was active: kernels and host syncs, total and by name
    (NOTE [stand-in counters])."""

    __slots__ = ("kernels", "syncs", "by_kernel", "by_sync")

    def __init__(self) -> None:
        self.kernels = self.syncs = 0
        self.by_kernel: dict = {}
        self.by_sync: dict = {}

    def kernel(self, name: str) -> None:
        self.kernels += 1
        self.by_kernel[name] = self.by_kernel.get(name, 0) + 1

    def sync(self, name: str) -> None:
        self.syncs += 1
        self.by_sync[name] = self.by_sync.get(name, 0) + 1

    def __repr__(self) -> str:
        return f"Counts(kernels={self.kernels}, syncs={self.syncs}, by_sync={self.by_sync})"


_counts: list = [None]  # the active Counts of counting(), or None


class counting:
    """``with counting() as c:`` counts the kernels and host syncs made on stand-in arrays in the block
    (NOTE [stand-in counters]); blocks nest (the inner one counts alone)."""

    def __enter__(self) -> Counts:
        self._outer = _counts[0]
        c = _counts[0] = Counts()
        return c

    def __exit__(self, *exc) -> None:
        _counts[0] = self._outer


def one_kernel(name: str, fn, *args):
    """``fn(*args)``, counted as the one kernel ``name`` (a fused formula: one CuPy kernel for the NumPy calls that
    stand in for it; NOTE [stand-in counters])."""
    c = _counts[0]
    if c is None:
        return fn(*args)
    c.kernel(name)
    _counts[0] = None
    try:
        return fn(*args)
    finally:
        _counts[0] = c


def _sync(name: str) -> None:
    c = _counts[0]
    if c is not None:
        c.sync(name)


_pending: list = []  # (bad flag on a device, error factory) not yet read (NOTE [device-side asserts])
_MAX_PENDING = 256


def device_assert(bad, error) -> None:
    """Raise ``error()`` where the 0-d boolean array ``bad`` is true: now on the host, at the next host sync on a
    device (NOTE [device-side asserts])."""
    if type(bad) is _nd or type(bad) not in ARRAYS:
        if bad:
            raise error()
        return
    _pending.append((bad, error))
    if len(_pending) >= _MAX_PENDING:
        check_pending()


def check_pending() -> None:
    """Read the queued device-side checks; raise the first failed one's error (NOTE [device-side asserts])."""
    if not _pending:
        return
    checks = _pending[:]
    _pending.clear()
    try:
        flags = to_host(_xp(checks[0][0])[0].stack([b for b, _ in checks]))  # (one read for all)
    except ValueError:  # (flags on several GPUs)
        flags = [to_host(b) for b, _ in checks]
    for (_, error), bad in zip(checks, flags):
        if bad:
            raise error()


# NumPy functions that make views, allocate without filling or read metadata: no kernel (NOTE [stand-in counters])
_VIEWS = frozenset({"empty", "empty_like", "reshape", "transpose", "swapaxes", "moveaxis", "broadcast_to", "broadcast_arrays",
                    "expand_dims", "squeeze", "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size",
                    "result_type", "may_share_memory", "shares_memory", "iscomplexobj", "isrealobj", "real", "imag",
                    "diagonal", "broadcast_shapes", "can_cast", "min_scalar_type", "permute_dims", "matrix_transpose",
                    "split", "array_split", "unstack", "flip", "rollaxis", "asanyarray"})
_ADVANCED = (list, np.ndarray)


def _advanced(key) -> bool:
    if type(key) is tuple:
        return any(isinstance(k, _ADVANCED) for k in key)
    return isinstance(key, _ADVANCED)


class _DeviceFlags:
    """CuPy's ``flags``: contiguity and ownership, no ``writeable`` (a device array is always writable)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, f) -> None:
        self.c_contiguous, self.f_contiguous, self.owndata = f.c_contiguous, f.f_contiguous, f.owndata


_nd_flags = _nd.flags.__get__
_nd_base = _nd.base.__get__
_nd_getitem = _nd.__getitem__


class StandInArray(np.ndarray):
    """A NumPy array that ember treats as living on ``cuda:0`` (NOTE [cuda stand-in]). NumPy functions and
    ufuncs given one return stand-in arrays. Like a CuPy array it has no ``flags.writeable``, no
    ``__array_interface__`` and no ``ufunc.at`` (NOTE [cupy's missing numpy])."""

    @property
    def flags(self):
        return _DeviceFlags(_nd_flags(self))

    @property
    def __array_interface__(self):
        raise AttributeError("'ndarray' object has no attribute '__array_interface__'")

    @property
    def base(self):
        """NumPy's, except None for an array made over raw memory (``as_strided``, ``strided_view``), as CuPy's
        ``ndarray(memptr=...)`` has no base (NOTE [cupy's missing numpy])."""
        d = self.__dict__
        return None if d and d.get("_memptr") else _nd_base(self)

    def __getitem__(self, key):
        r = _nd_getitem(self, key)
        return np.asarray(r).view(StandInArray) if isinstance(r, np.generic) else r  # a 0-d array, as CuPy's

    def argmax(self, *args, **kwargs):
        return _rewrap(_nd.argmax(self.view(_nd), *args, **kwargs))

    def argmin(self, *args, **kwargs):
        return _rewrap(_nd.argmin(self.view(_nd), *args, **kwargs))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" and method != "reduce":
            _refuse_method(ufunc, method)
        c = _counts[0]
        if c is not None:
            c.kernel(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
        if _stand_in[1]:
            _refuse_host(inputs, 0)
            if method == "__call__" and kwargs.get("where", True) is not True:
                raise TypeError(f"Wrong arguments {kwargs}")  # (CuPy's words)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = _unwrap(out)
        res = getattr(ufunc, method)(*_unwrap(inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _rewrap(res)

    def __array_function__(self, func, types, args, kwargs):
        if "device" in kwargs and _stand_in[1]:  # np.ones/np.full(like=) pass NumPy 2's device=; CuPy's take none
            raise TypeError(f"{func.__name__}() got an unexpected keyword argument 'device'")
        if func is np.repeat and type(args[1] if len(args) > 1 else kwargs.get("repeats")) is StandInArray:
            raise ValueError("cupy.ndaray cannot be specified as `repeats` argument.")  # (CuPy's words)
        if _stand_in[1]:
            _refuse_host(args)
        c = _counts[0]
        if c is not None and func.__name__ not in _VIEWS:
            c.kernel(func.__name__)
        if "out" in kwargs and kwargs["out"] is not None:
            out = kwargs["out"]
            kwargs = dict(kwargs, out=_unwrap(out))
            func(*_unwrap(args), **kwargs)
            return out
        return _rewrap(func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))


def _counted_methods() -> None:
    """StandInArray's methods that launch a kernel or sync without passing NumPy's dispatch: counted while
    ``counting()`` is active (NOTE [stand-in counters])."""
    nd = _nd

    def counted(name, what: str, when=None):
        base = getattr(StandInArray, name)  # (the stand-in's own where it has one: its 0-d results)

        def method(self, *a, **k):
            c = _counts[0]
            if c is not None and (when is None or when(self, a, k)):
                getattr(c, what)(name)
            return base(self, *a, **k)

        method.__name__ = name
        setattr(StandInArray, name, method)

    def kernel(name, when=None):
        counted(name, "kernel", when)

    for name in ("argmax", "argmin", "cumsum", "cumprod", "take", "put", "repeat", "sort", "argsort", "dot",
                 "searchsorted", "partition", "argpartition", "trace"):
        kernel(name)
    kernel("astype", lambda self, a, k: k.get("copy", True) or np.dtype(a[0] if a else k["dtype"]) != self.dtype)
    kernel("copy")
    kernel("fill")
    kernel("flatten")
    kernel("ravel", lambda self, a, k: not nd.flags.__get__(self).c_contiguous)
    kernel("reshape", lambda self, a, k: self.size > 1 and not nd.flags.__get__(self).contiguous)
    kernel("__getitem__", lambda self, a, k: _advanced(a[0]))
    kernel("__setitem__")
    for name in ("item", "tolist", "__bool__", "__float__", "__int__", "__index__", "__complex__", "nonzero"):
        counted(name, "sync")


def _refuse_method(ufunc, method: str) -> None:
    """The stand-in refuses the ufunc methods CuPy lacks, with CuPy's errors (NOTE [cupy's missing numpy])."""
    if method == "at":
        raise TypeError(f"operand type(s) all returned NotImplemented from __array_ufunc__({ufunc!r}, 'at', ...): "
                        "'ndarray' (CuPy has no ufunc.at: ember._backend.ufunc_at)")
    if method == "accumulate" and ufunc.__name__ not in _ACCUMULATES:
        raise NotImplementedError(f"`cupy_{ufunc.__name__}.accumulate` is not supported yet")


def sole_array(arr) -> bool:
    """Whether the device array ``arr`` owns its C-contiguous memory alone (no view of another array, no other
    view of its memory: the stand-in's NumPy array below it is referred to by ``arr`` only), so that the engine may
    keep it as a leaf's gradient without a copy (NOTE [stolen gradients] in ember/autograd/graph.py)."""
    t = type(arr)
    if t is StandInArray:
        b = arr.base
        if type(b) is not _nd or b.base is not None:
            return False
        del b
        f = _nd_flags(arr)
        return f.c_contiguous and f.writeable and _base_refs(arr) == _SOLE_BASE_REFS[0]
    if t is _nd or isinstance(arr, _nd):
        return False
    return arr.base is None and arr.flags.c_contiguous


def whole_stand_in(arr) -> bool:
    """Whether ``arr`` is a stand-in array over the whole of the NumPy array below it (what owning its memory is
    for a CuPy array: its ``base`` is never None, as every stand-in array is a view of a NumPy array)."""
    if type(arr) is not StandInArray:
        return False
    b = arr.base
    return (type(b) is _nd and b.base is None and b.nbytes == arr.nbytes and b.shape == arr.shape
            and b.strides == arr.strides and b.ctypes.data == arr.ctypes.data)


def _base_refs(arr) -> int:
    """References to the NumPy array below a stand-in array (compared with a fresh one's: calibrated once on this
    interpreter, as NOTE [stolen gradients] calibrates the engine's counts)."""
    return getrefcount(arr.base)


_SOLE_BASE_REFS = [0]  # (set below, once StandInArray exists)


def is_host_only(e: TypeError) -> bool:
    """Whether ``e`` is a device array refused by NumPy code (NOTE [host fallback] in ember/ops/_op.py)."""
    msg = str(e)
    return any(m in msg for m in _HOST_ONLY)


def asarray(x, dtype=None):
    """``x`` (an array of any device, or a NumPy scalar) as an array of ``dtype`` on its device."""
    if type(x) in ARRAYS:
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype)


def repeat(x, counts, axis=None):
    """``np.repeat`` with an array of counts on any device (CuPy takes counts only as an int or a list)."""
    if type(counts) is _nd or type(counts) not in ARRAYS:
        return np.repeat(x, counts, axis)
    xp, a, back = _xp(x)
    if xp is np:
        return back(np.repeat(a, _unwrap(counts), axis))
    return xp.repeat(a, counts.tolist(), axis)


def ascontiguousarray(x, dtype=None):
    """``np.ascontiguousarray`` keeping the device (NumPy's converts a device array: NOTE [cupy's missing numpy])."""
    t = type(x)
    if t is _nd or t not in ARRAYS:
        return np.ascontiguousarray(x, dtype)
    if t is StandInArray:
        return np.ascontiguousarray(x.view(_nd), dtype).view(StandInArray)
    return _cupy[0].ascontiguousarray(x, dtype)


def _refuse_host(values, ndim: int = 1) -> None:
    """Strict stand-in: a host array of ``ndim`` or more dimensions beside a stand-in array is refused, as CuPy does:
    its ufuncs take NumPy scalars but no NumPy array, not even a 0-d one (``ndim`` 0); its other functions are
    checked from one dimension up."""
    for v in values:
        if type(v) is _nd and v.ndim >= ndim:
            raise TypeError("Stand-in array mixed with a host array (CuPy: Unsupported type <class 'numpy.ndarray'>)")
        if type(v) is tuple or type(v) is list:
            _refuse_host(v, ndim)


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


def ref(x):
    """``x`` as the ``like=`` of an array creation: itself when it is an array of a device, else None (a NumPy
    scalar, a batched value under vmap: a host array, as without ``like``)."""
    return x if type(x) in ARRAYS else None


def full(shape, value, dtype=None, like=None):
    """``np.full(shape, value, dtype, like=like)`` on every device: NumPy 2's np.full and np.ones hand CuPy a
    ``device=`` it does not take (NOTE [cupy's missing numpy])."""
    if like is not None and type(like).__module__.startswith("cupy"):
        with like.device:
            return _cupy[0].full(shape, value, dtype)
    if type(like) is StandInArray:
        return np.full(shape, value, dtype).view(StandInArray)
    return np.full(shape, value, dtype, like=like)


def ones(shape, dtype=None, like=None):
    """``np.ones(shape, dtype, like=like)`` on every device (see full)."""
    return full(shape, 1, dtype, like)


def is_array(x) -> bool:
    """Whether ``x`` is an array of any device (a CuPy array is no ``np.ndarray``: kernels ask this instead)."""
    return type(x) in ARRAYS or isinstance(x, _nd)


def address(arr) -> int:
    """The address of ``arr``'s first element (a device pointer for CuPy's)."""
    t = type(arr)
    if t is _nd:
        return arr.__array_interface__["data"][0]
    if t is StandInArray or isinstance(arr, _nd):
        return arr.ctypes.data
    return arr.data.ptr


def writeable(arr) -> bool:
    """``arr.flags.writeable`` on the host; device arrays have no read-only flag (the stand-in answers NumPy's,
    so that it writes where the CPU writes)."""
    t = type(arr)
    if t is _nd:
        return arr.flags.writeable
    if t is StandInArray:
        return _nd_flags(arr).writeable
    return not isinstance(arr, _nd) or arr.flags.writeable


def key_on(ref, key: tuple) -> tuple:
    """An index tuple for ``ref`` with its host index arrays moved to ``ref``'s device (torch indexes a CUDA
    tensor with CPU index tensors; CuPy refuses NumPy arrays in a key)."""
    if type(ref) is _nd:
        return key
    return tuple(like(ref, k) if type(k) is _nd else k for k in key)


def _xp(arr):
    """(the array module of ``arr``'s kind, ``arr`` as that module's array, a function putting results back)."""
    t = type(arr)
    if t is StandInArray:
        return np, arr.view(_nd), _rewrap
    if isinstance(arr, (_nd, np.generic)) or not t.__module__.startswith("cupy"):
        return np, arr, _same
    return _cupy[0], arr, _same


def _same(x):
    return x


def as_strided(arr, shape, strides):
    """A view of ``arr``'s memory with ``shape`` and byte ``strides`` (``np.lib.stride_tricks.as_strided`` needs
    ``__array_interface__``, which a CuPy array lacks)."""
    xp, a, back = _xp(arr)
    return _over_memory(back(xp.lib.stride_tricks.as_strided(a, tuple(shape), tuple(strides))))


def _over_memory(v):
    """A stand-in array made over another's memory loses its ``.base``, as CuPy's (NOTE [cupy's missing numpy])."""
    if type(v) is StandInArray:
        v._memptr = True
    return v


def same_memory(view, arr) -> bool:
    """Whether ``view``, an array without ``.base``, lies in ``arr``'s allocation: CuPy's ``as_strided`` and
    ``strided_view`` results have no base (``cupy.ndarray(memptr=...)``), so ``.base`` cannot tell them from a
    copy (NOTE [cupy's missing numpy])."""
    t = type(view)
    if t is StandInArray:
        return type(arr) is StandInArray and np.may_share_memory(view.view(_nd), arr.view(_nd))
    if t is _nd or isinstance(view, _nd):
        return False
    return type(arr) is t and view.data.mem is arr.data.mem


def storage_of(arr):
    """An array over all of ``arr``'s memory (its storage): the end of its ``.base`` chain on the host; on a device,
    where an array made over raw memory has no base, an array over its whole allocation (a new one each call)."""
    t = type(arr)
    if t is _nd or (isinstance(arr, _nd) and t is not StandInArray):
        while isinstance(arr.base, _nd):
            arr = arr.base
        return arr
    if t is StandInArray:  # a stand-in array over the NumPy array owning the memory
        a = arr.view(_nd)
        while isinstance(a.base, _nd):
            a = a.base
        return a.view(StandInArray)
    mem = arr.data.mem
    cp = _cupy[0]
    return cp.ndarray((mem.size // arr.itemsize,), arr.dtype, memptr=cp.cuda.MemoryPointer(mem, 0))


def strided_view(store, shape: tuple, strides: tuple, offset: int, dtype=None):
    """A view of ``store``'s memory from byte ``offset`` with ``shape``, byte ``strides`` and ``dtype`` (``store``'s
    by default)."""
    t = type(store)
    dt = store.dtype if dtype is None else np.dtype(dtype)
    if t is not _nd and t is not StandInArray and not isinstance(store, _nd):  # CuPy: a view of its memory
        return _cupy[0].ndarray(tuple(shape), dt, memptr=store.data + offset, strides=tuple(strides))
    a = store.view(_nd) if t is StandInArray else store
    try:
        v = np.ndarray(shape, dt, buffer=a, offset=offset, strides=strides)
    except (TypeError, ValueError):  # a store NumPy cannot use as a buffer (dense, but neither C nor F order, as a
        # ufunc's result on a permuted input): its memory in address order from its first element (no negative
        # strides), which a reshape would have copied
        item = a.itemsize
        extent = 1 + sum((n - 1) * st for n, st in zip(a.shape, a.strides)) // item if a.size else 0
        flat = np.lib.stride_tricks.as_strided(a, (extent,), (item,), writeable=True)
        v = np.lib.stride_tricks.as_strided(flat[offset // item:], shape, strides, writeable=True)
    return _over_memory(v.view(StandInArray)) if t is StandInArray else v


def ufunc_at(ufunc, out, key, values) -> None:
    """``ufunc.at(out, key, values)`` on any device (NOTE [cupy's missing numpy]): on a device, ``np.add.at`` as a
    bincount of the selected flat positions (every dtype CuPy has; the stand-in runs the same code), the other
    ufuncs by a host round trip."""
    t = type(out)
    if t is _nd:
        ufunc.at(out, key, values)
        return
    if t is StandInArray:
        xp, o = np, out.view(_nd)
        key, values = _unwrap(key), _unwrap(values)
    elif isinstance(out, _nd):
        ufunc.at(out, _unwrap(key), _unwrap(values))
        return
    else:
        xp, o = _cupy[0], out
        key = key_on(o, key) if type(key) is tuple else like(o, key) if type(key) is _nd else key
        values = like(o, values) if type(values) is _nd else values
    if ufunc is np.add and o.dtype.kind in "iufc":
        _add_at(xp, o, key, values)
        return
    h = to_host(out)
    ufunc.at(h, _host_key(key), to_host(values) if type(values) in ARRAYS else values)
    o[...] = h if xp is np else like(o, h)


def _add_at(xp, o, key, values) -> None:
    """``np.add.at`` from array-module functions only: the flat positions ``key`` selects (repeats included) and
    a weighted bincount of them."""
    pos = xp.arange(o.size).reshape(o.shape)[key]
    if not pos.size:
        return
    vals = xp.broadcast_to(xp.asarray(values), pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    if o.dtype.kind == "c":
        add = (xp.bincount(pos, weights=vals.real, minlength=o.size)
               + 1j * xp.bincount(pos, weights=vals.imag, minlength=o.size))
    elif o.dtype.kind in "iu":  # (exact: integer sums need no float weights)
        add = xp.zeros(o.size, o.dtype)
        order = xp.argsort(pos)
        sp, sv = pos[order], vals[order].astype(o.dtype)
        csum = xp.cumsum(sv)
        ends = xp.flatnonzero(xp.concatenate([sp[1:] != sp[:-1], xp.ones(1, bool)]))
        tot = csum[ends] - xp.concatenate([xp.zeros(1, o.dtype), csum[ends[:-1]]])
        add[sp[ends]] = tot
    else:
        add = xp.bincount(pos, weights=vals, minlength=o.size)
    o += add.reshape(o.shape).astype(o.dtype, copy=False)


def _host_key(key):
    if type(key) is tuple:
        return tuple(_host_key(k) for k in key)
    return to_host(key) if type(key) in ARRAYS else key


def accumulate(ufunc, a, axis: int):
    """``ufunc.accumulate(a, axis)`` on any device: CuPy has only add's and multiply's (the others on the host)."""
    xp, x, back = _xp(a)
    if xp is np or ufunc.__name__ in _ACCUMULATES:
        return back(ufunc.accumulate(x, axis=axis))
    return like(a, ufunc.accumulate(to_host(x), axis=axis))


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
        if _counts[0] is not None:
            _counts[0].kernel("like (host to device)")
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
    if _pending:
        check_pending()
    if t is StandInArray:
        if _counts[0] is not None:
            _counts[0].sync("to_host")
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


_counted_methods()
ARRAYS.add(StandInArray)
_SOLE_BASE_REFS[0] = _base_refs(np.empty(1).view(StandInArray))
