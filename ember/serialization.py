"""save/load in PyTorch's zip checkpoint format, readable by ``torch.load(..., weights_only=True)``.

A checkpoint is a zip archive (entries stored uncompressed, their data aligned to 64 bytes) under one
folder ``<name>/``: ``data.pkl`` (a protocol-2 pickle of the object in which every tensor is a call to
``torch._utils._rebuild_tensor_v2`` on a persistent-id storage), ``data/<key>`` (each storage's raw
little-endian bytes), ``byteorder``, ``version`` and a few small records torch writes as well.

Saving writes the pickle opcodes directly, so only plain data goes in: tensors, dicts, OrderedDicts,
lists, tuples, sets, str, bytes, int, float, complex, bool, None, dtypes, devices and sizes.
Loading never runs code from the file: the unpickler resolves only an explicit allow-list of globals
(the tensor rebuild functions, storage types, dtypes and a few containers) and refuses everything else.
"""
from __future__ import annotations

import collections
import io
import mmap as _mmap
import os
import pickle
import re
import socket
import struct
import sys
import threading
import time
import uuid
import zipfile
import zlib
from typing import IO, Any, Callable, Union

import numpy as np

from . import _backend as _B
from . import _dtype as D
from ._device import device as _device
from ._tensor import Size, Tensor, _wrap

__all__ = ["save", "load"]

FileLike = Union[str, os.PathLike, IO[bytes]]

_ALIGN = 64  # data of every record starts at a multiple of this (lets torch.load(mmap=True) map it)
_FORMAT_VERSION = b"3\n"
_CHUNK = 1 << 24

# Storage class names in the pickle <-> ember dtypes.
_STORAGE_NAMES = {"FloatStorage": D.float32, "DoubleStorage": D.float64, "HalfStorage": D.float16,
                  "LongStorage": D.int64, "IntStorage": D.int32, "ShortStorage": D.int16,
                  "CharStorage": D.int8, "ByteStorage": D.uint8, "BoolStorage": D.bool,
                  "BFloat16Storage": D.bfloat16}
_STORAGE_NAMES.update(ComplexFloatStorage=D.complex64, ComplexDoubleStorage=D.complex128)  # complex dtypes
_STORAGE_OF = {d: name for name, d in _STORAGE_NAMES.items()}


def _is_parameter(t: Tensor) -> bool:
    return any(c.__name__ == "Parameter" for c in type(t).__mro__)


# ====================================================================== writing: the pickle


class _PickleWriter:
    """Protocol-2 pickle opcodes for plain data and tensors, tensors' storages collected on the side."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.memo: dict[Any, tuple[int, Any]] = {}  # id(obj) or a tag -> (memo index, object kept alive)
        self.storages: dict[int, tuple[str, np.ndarray]] = {}  # id(root array) -> (key, root)
        self.records: list[tuple[str, np.ndarray]] = []  # (key, contiguous little-endian array)
        self.locations: dict[str, str] = {}  # key -> the device its tensor was on, when not the CPU

    def dumps(self, obj: Any) -> bytes:
        self.out += pickle.PROTO + b"\x02"
        self._save(obj)
        self.out += pickle.STOP
        return bytes(self.out)

    # --------------------------------------------------------------- primitives
    def _memo_put(self, key: Any, keep: Any = None) -> None:
        """Store the value on top of the stack under ``key`` (``keep`` stays alive while ids matter)."""
        idx = len(self.memo)
        self.memo[key] = (idx, keep)
        self.out += pickle.BINPUT + bytes([idx]) if idx < 256 else pickle.LONG_BINPUT + struct.pack("<I", idx)

    def _memo_get(self, key: Any) -> bool:
        """Push the value stored under ``key``; False when there is none."""
        hit = self.memo.get(key)
        if hit is None:
            return False
        idx = hit[0]
        self.out += pickle.BINGET + bytes([idx]) if idx < 256 else pickle.LONG_BINGET + struct.pack("<I", idx)
        return True

    def _put(self, obj: Any) -> None:
        self._memo_put(id(obj), obj)

    def _get(self, obj: Any) -> bool:
        return self._memo_get(id(obj))

    def _global(self, module: str, name: str) -> None:
        key = ("global", module, name)
        if not self._memo_get(key):
            self.out += pickle.GLOBAL + f"{module}\n{name}\n".encode()
            self._memo_put(key)

    def _int(self, x: int) -> None:
        if 0 <= x < 256:
            self.out += pickle.BININT1 + bytes([x])
        elif 0 <= x < 65536:
            self.out += pickle.BININT2 + struct.pack("<H", x)
        elif -(1 << 31) <= x < (1 << 31):
            self.out += pickle.BININT + struct.pack("<i", x)
        else:
            data = x.to_bytes((x.bit_length() >> 3) + 1, "little", signed=True)
            op = pickle.LONG1 + bytes([len(data)]) if len(data) < 256 else pickle.LONG4 + struct.pack("<i", len(data))
            self.out += op + data

    def _str(self, s: str) -> None:
        if self._get(s):
            return
        data = s.encode("utf-8", "surrogatepass")
        self.out += pickle.BINUNICODE + struct.pack("<I", len(data)) + data
        self._put(s)

    def _call(self, module: str, name: str, args: tuple) -> None:
        """``module.name(*args)`` as GLOBAL + args tuple + REDUCE."""
        self._global(module, name)
        self._tuple(args, memoize=False)
        self.out += pickle.REDUCE

    # --------------------------------------------------------------- containers
    def _tuple(self, t: tuple, memoize: bool = True) -> None:
        if not t:
            self.out += pickle.EMPTY_TUPLE
            return
        if memoize and self._get(t):
            return
        n = len(t)
        if n > 3:
            self.out += pickle.MARK
        for x in t:
            self._save(x)
        if memoize and id(t) in self.memo:  # reached itself through a list/dict: drop the copies, reuse it
            self.out += pickle.POP * n if n <= 3 else pickle.POP_MARK
            self._get(t)
            return
        self.out += (pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)[n - 1] if n <= 3 else pickle.TUPLE
        if memoize:
            self._put(t)

    def _items(self, pairs, n: int) -> None:
        for start in range(0, n, 1000):
            self.out += pickle.MARK
            for k, v in pairs[start:start + 1000]:
                self._save(k)
                self._save(v)
            self.out += pickle.SETITEMS

    def _dict(self, d: dict) -> None:
        if type(d) is collections.OrderedDict:
            self._call("collections", "OrderedDict", ())
        else:
            self.out += pickle.EMPTY_DICT
        self._put(d)
        self._items(list(d.items()), len(d))
        extra = getattr(d, "__dict__", None)
        if extra:  # e.g. a state_dict's _metadata, set back by BUILD as torch.save does
            self._save(dict(extra))
            self.out += pickle.BUILD

    def _list(self, lst: list) -> None:
        self.out += pickle.EMPTY_LIST
        self._put(lst)
        for start in range(0, len(lst), 1000):
            self.out += pickle.MARK
            for x in lst[start:start + 1000]:
                self._save(x)
            self.out += pickle.APPENDS

    # --------------------------------------------------------------- dispatch
    def _save(self, obj: Any) -> None:
        t = type(obj)
        if obj is None:
            self.out += pickle.NONE
        elif t is bool:
            self.out += pickle.NEWTRUE if obj else pickle.NEWFALSE
        elif t is int:
            self._int(obj)
        elif t is float:
            self.out += pickle.BINFLOAT + struct.pack(">d", obj)
        elif t is str:
            self._str(obj)
        elif isinstance(obj, Tensor):
            if not self._get(obj):
                self._tensor(obj)
                self._put(obj)
        elif self._get(obj):
            pass
        elif t is dict or t is collections.OrderedDict:
            self._dict(obj)
        elif t is list:
            self._list(obj)
        elif t is tuple:
            self._tuple(obj)
        elif t is Size:
            self._call("torch", "Size", (tuple(obj),))
            self._put(obj)
        elif t is D.dtype:
            self._global("torch", obj.name)
        elif t is _device:
            self._call("torch", "device", (str(obj),))
            self._put(obj)
        elif t is bytes:
            self._call("_codecs", "encode", (obj.decode("latin1"), "latin1"))
            self._put(obj)
        elif t is set:
            self._global("__builtin__", "set")
            self._list(list(obj))
            self.out += pickle.TUPLE1 + pickle.REDUCE
            self._put(obj)
        elif t is complex:
            self._call("__builtin__", "complex", (obj.real, obj.imag))
        elif isinstance(obj, (np.bool_, np.integer, np.floating)):
            self._save(obj.item())
        else:
            raise TypeError(
                f"ember.save cannot save an object of type {t.__module__}.{t.__qualname__}: checkpoints hold "
                "only tensors and plain data (dict, OrderedDict, list, tuple, set, str, bytes, int, float, "
                "complex, bool, None, dtype, device, Size) so that loading never runs code")

    def _tensor(self, t: Tensor) -> None:
        key, root, offset, strides = self._storage(t)
        if _is_parameter(t):
            self._global("torch._utils", "_rebuild_parameter")
            self.out += pickle.MARK
        self._global("torch._utils", "_rebuild_tensor_v2")
        self.out += pickle.MARK
        self._persistent_id(key, root)
        self._int(offset)
        self._tuple(tuple(int(s) for s in t._data.shape), memoize=False)
        self._tuple(strides, memoize=False)
        # A parameter's flag goes to _rebuild_parameter; the inner data tensor does not require grad.
        self.out += pickle.NEWTRUE if t._requires_grad and not _is_parameter(t) else pickle.NEWFALSE
        self._call("collections", "OrderedDict", ())  # backward hooks: never saved
        self.out += pickle.TUPLE + pickle.REDUCE
        if _is_parameter(t):
            self.out += pickle.NEWTRUE if t._requires_grad else pickle.NEWFALSE
            self._call("collections", "OrderedDict", ())
            self.out += pickle.TUPLE + pickle.REDUCE

    def _persistent_id(self, key: str, root: np.ndarray) -> None:
        if not self._memo_get(("pid", key)):
            self.out += pickle.MARK
            self._str("storage")
            self._global("torch", _STORAGE_OF[D.from_numpy_dtype(root.dtype)])
            self._str(key)
            self._str(self.locations.get(key, "cpu"))
            self._int(int(root.size))
            self.out += pickle.TUPLE
            self._memo_put(("pid", key))
        self.out += pickle.BINPERSID

    def _storage(self, t: Tensor) -> tuple[str, np.ndarray, int, tuple]:
        """(storage key, storage array, element offset, element strides) for ``t``; views share a storage."""
        arr = t._data
        location = None
        if not _B.is_cpu_array(arr):  # a device tensor: its values from a host copy, its device as the location
            location, arr = str(_B.device_of(arr)), _B.to_host(arr)
        want = t._dtype.np.newbyteorder("<")
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        shared = _view_of(arr, root, want)
        if shared is None:
            root = np.ascontiguousarray(arr, dtype=want).reshape(-1)
            offset, strides = 0, _contiguous_strides(arr.shape)
        else:
            offset, strides = shared
        hit = self.storages.get(id(root))
        if hit is None:
            hit = self.storages[id(root)] = (str(len(self.storages)), root)
            self.records.append(hit)
            if location is not None:
                self.locations[hit[0]] = location
        return hit[0], hit[1], offset, strides


def _contiguous_strides(shape: tuple) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _view_of(arr: np.ndarray, root: np.ndarray, want: np.dtype) -> tuple[int, tuple] | None:
    """(offset, strides) in elements of ``arr`` inside the contiguous buffer ``root``, or None."""
    if arr.size == 0 or root.dtype != want or arr.dtype != want or not root.flags.c_contiguous:
        return None
    item = want.itemsize
    start = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start < 0 or start % item or any(s < 0 or s % item for s in arr.strides):
        return None
    end = start + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + item
    if end > root.nbytes:
        return None
    return start // item, tuple(s // item for s in arr.strides)


# ====================================================================== writing: the archive


def _zip_entry(zf: zipfile.ZipFile, name: str, data) -> None:
    """One stored record whose data starts at a multiple of _ALIGN in the archive."""
    data = memoryview(data).cast("B")
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = len(data)
    zip64 = len(data) * 1.05 > zipfile.ZIP64_LIMIT
    header = 30 + len(name.encode()) + (20 if zip64 else 0) + 4  # local header incl. our padding field
    pad = -(zf.fp.tell() + header) % _ALIGN
    info.extra = struct.pack("<HH", 0x4246, pad) + bytes(pad)  # "FB": a padding extra field, as torch writes
    with zf.open(info, "w", force_zip64=zip64) as out:
        for start in range(0, len(data), _CHUNK):
            out.write(data[start:start + _CHUNK])


def _write_archive(fh: IO[bytes], name: str, pickled: bytes, records: list) -> None:
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _zip_entry(zf, f"{name}/data.pkl", pickled)
        _zip_entry(zf, f"{name}/.format_version", b"1")
        _zip_entry(zf, f"{name}/.storage_alignment", str(_ALIGN).encode())
        _zip_entry(zf, f"{name}/byteorder", b"little")
        for key, root in records:
            _zip_entry(zf, f"{name}/data/{key}", root.reshape(-1).view(np.uint8))
        _zip_entry(zf, f"{name}/version", _FORMAT_VERSION)
        _zip_entry(zf, f"{name}/.data/serialization_id", f"{uuid.uuid4().int:040d}".encode())


# NOTE [stale temp files]: a save writes ``.<target>.<host>.<pid>.<random>.tmp`` next to the target and renames it
# over the target. A writer killed mid-save (SIGKILL, OOM, a lost node) leaves its temp file behind, and seven
# killed saves of a large model left 684 MB. After a successful save the temp files of the same target that no
# writer can still be using are removed: those of this host whose process is gone (or is this one, outside the
# saves running now), and any older than a day (another host's, or the older name without host and pid).
_STALE_AGE_S = 24 * 3600
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"
_writing: set = set()  # temp files this process is writing now
_writing_lock = threading.Lock()


def _temp_name(folder: str, base: str) -> str:
    return os.path.join(folder, f".{base}.{_HOST}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or we cannot tell: keep its file
    return True


def _remove_stale_temps(folder: str, base: str) -> None:
    """Remove the temp files of earlier saves of ``base`` that no live writer owns (NOTE [stale temp files])."""
    pattern = re.compile(rf"^\.{re.escape(base)}\.(?:(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.)?[0-9a-f]{{12}}\.tmp$")
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    now = time.time()
    for e in entries:
        m = pattern.match(e.name)
        if m is None:
            continue
        with _writing_lock:
            if e.path in _writing:
                continue
        stale = False
        if m.group("host") == _HOST:
            pid = int(m.group("pid"))
            stale = pid == os.getpid() or not _pid_alive(pid)
        if not stale:
            try:
                stale = now - e.stat().st_mtime > _STALE_AGE_S
            except OSError:
                continue
        if stale:
            try:
                os.unlink(e.path)
            except OSError:
                pass


def _atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Write through ``write`` to a temp file next to ``path``, fsync it, then rename over ``path``; then remove
    stale temp files of earlier, interrupted saves of ``path`` (NOTE [stale temp files])."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    for _ in range(100):
        tmp = _temp_name(folder, base)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 uuid collisions
        raise FileExistsError(f"could not create a temporary file in {folder}")
    with _writing_lock:
        _writing.add(tmp)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    finally:
        with _writing_lock:
            _writing.discard(tmp)
    _remove_stale_temps(folder, base)
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        try:
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return
        try:
            os.fsync(dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)


def save(obj: Any, f: FileLike, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors and plain data) to ``f``, a path or a binary file, in torch's zip format.

    A file written here loads with ``torch.load(f, weights_only=True)`` and ``ember.load(f)``. Writing to
    a path is atomic: a failure leaves any previous file at that path untouched.
    """
    if pickle_module not in (None, pickle) or pickle_protocol != 2 or not _use_new_zipfile_serialization:
        raise ValueError("ember.save writes only torch's default format (zip archive, pickle protocol 2)")
    writer = _PickleWriter()
    pickled = writer.dumps(obj)  # before touching the file: an unsupported object fails here
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        name = os.path.splitext(os.path.basename(path))[0] or "archive"
        path = os.path.realpath(path)  # through a symlink, as open() would write
        _atomic_write(path, lambda fh: _write_archive(fh, name, pickled, writer.records))
    elif hasattr(f, "write"):
        _write_archive(f, "archive", pickled, writer.records)
    else:
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'write'")


# ====================================================================== loading


class _StorageType:
    """What a ``torch.<X>Storage`` global resolves to: the element dtype of a storage."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: D.dtype | None) -> None:
        self.name, self.dtype = name, dtype


class _Storage:
    """A loaded storage: a flat, writable array that tensors view."""

    __slots__ = ("array", "device")

    def __init__(self, array: np.ndarray, device=None) -> None:
        self.array = array
        self.device = device  # where its tensors go (map_location), None: the CPU


class _Marker:
    """Stands for a torch class that only ever appears as an argument (``torch.Tensor``, ``Parameter``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


_TENSOR_TYPE, _PARAMETER_TYPE = _Marker("torch.Tensor"), _Marker("torch.nn.Parameter")


def _check_ints(what: str, values) -> tuple:
    """``values`` if it is a tuple of non-negative ints, else the weights-only error."""
    if not isinstance(values, tuple) or not all(type(v) is int and v >= 0 for v in values):
        raise pickle.UnpicklingError(f"Weights only load failed: bad tensor {what} {values!r} in the checkpoint")
    return values


def _rebuild_tensor(storage, storage_offset, size, stride) -> Tensor:
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError("Weights only load failed: a tensor was rebuilt from something not a storage")
    (storage_offset,) = _check_ints("offset", (storage_offset,))
    size, stride = _check_ints("size", size), _check_ints("stride", stride)
    if len(size) != len(stride):
        raise pickle.UnpicklingError(f"Weights only load failed: size {size} and stride {stride} differ in length")
    flat = storage.array
    dtype = D.from_numpy_dtype(flat.dtype)
    item = flat.itemsize
    if 0 in size:  # nothing to read: keep the saved strides, view no bytes
        return _wrap(np.ndarray(size, flat.dtype, buffer=flat, strides=[s * item for s in stride]), dtype)
    last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= flat.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{storage_offset} need a storage of {last + 1} elements, but it has {flat.size}")
    arr = np.ndarray(size, flat.dtype, buffer=flat, offset=storage_offset * item, strides=[s * item for s in stride])
    return _wrap(arr if storage.device is None else _B.to_device(arr, storage.device), dtype)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None) -> Tensor:
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if isinstance(metadata, dict):  # torch's conjugate / negative bits: the storage holds the plain values
        if metadata.get("neg"):
            t = _wrap(np.negative(t._data), t._dtype)
        if metadata.get("conj") and t._dtype.is_complex:
            from .ops.complex_numbers import conj

            t = conj(t)  # (computed: NOTE [lazy conjugation])
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None) -> Tensor:
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("Weights only load failed: a Parameter was rebuilt from something not a tensor")
    try:
        from .nn import Parameter
    except ImportError:  # the nn layer is optional here
        return data.detach().requires_grad_(bool(requires_grad))
    return Parameter(data, bool(requires_grad))


def _rebuild_from_type_v2(func, new_type, args, state) -> Tensor:
    if func not in (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_parameter) or not isinstance(args, tuple):
        raise pickle.UnpicklingError("Weights only load failed: _rebuild_from_type_v2 with a disallowed function")
    t = func(*args)
    if new_type is _PARAMETER_TYPE:
        return _rebuild_parameter(t, t.requires_grad)
    if new_type is not _TENSOR_TYPE:
        raise pickle.UnpicklingError("Weights only load failed: tensor subclasses other than Parameter are refused")
    return t


def _encode(text, encoding="utf-8") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for bytes: text to bytes, nothing else."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise pickle.UnpicklingError("Weights only load failed: _codecs.encode called with unexpected arguments")
    return text.encode(encoding)


def _torch_device(spec, index=None) -> _device:
    if not isinstance(spec, (str, int)) or not (index is None or type(index) is int):
        raise pickle.UnpicklingError("Weights only load failed: bad torch.device arguments")
    return _device(spec, index)


def _torch_size(dims=()) -> Size:
    return Size(_check_ints("size", tuple(dims)))


def _allowed_globals() -> dict[tuple[str, str], Any]:
    table: dict[tuple[str, str], Any] = {
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
        ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
        ("torch", "Tensor"): _TENSOR_TYPE,
        ("torch.nn.parameter", "Parameter"): _PARAMETER_TYPE,
        ("torch", "Size"): _torch_size,
        ("torch", "device"): _torch_device,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,
        ("builtins", "set"): set,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("_codecs", "encode"): _encode,
    }
    for name, dt in _STORAGE_NAMES.items():
        table["torch", name] = _StorageType(name, dt)
    table["torch.storage", "UntypedStorage"] = _StorageType("UntypedStorage", D.uint8)
    for d in D.ALL:
        table["torch", d.name] = d
    return table


_ALLOWED = _allowed_globals()
_TORCH_DTYPE_NAMES = {"bfloat16", "complex32", "complex64", "complex128", "uint16", "uint32", "uint64",
                      "float8_e4m3fn", "float8_e5m2", "qint8", "quint8", "qint32"}

_REFUSED_HEADER = ("Weights only load failed. ember.load never runs code stored in a file, so it loads only "
                   "tensors and plain data (weights_only=True).\n\n")


def _refuse_opcode(name: str) -> Callable:
    def refuse(self) -> None:
        raise pickle.UnpicklingError(f"{_REFUSED_HEADER}Unsupported operand {name}: the checkpoint builds "
                                     "objects other than tensors and plain data.")
    return refuse


_NEWOBJ_CLASSES = (collections.OrderedDict, collections.Counter, set, complex, bytearray)


class _WeightsUnpickler(pickle._Unpickler):
    """Resolves only allow-listed globals; tensors' storages come from the archive's data records.

    Built on the pure-Python unpickler so that every opcode that could touch an object's attributes or
    create instances (BUILD, NEWOBJ, INST, OBJ, extension codes) is checked, not only globals: a file
    must not be able to alter ember's shared objects (dtypes, storage types) while loading.
    """

    dispatch = dict(pickle._Unpickler.dispatch)
    for _op, _name in ((pickle.INST, "INST"), (pickle.OBJ, "OBJ"), (pickle.EXT1, "EXT1"), (pickle.EXT2, "EXT2"),
                       (pickle.EXT4, "EXT4"), (pickle.NEWOBJ_EX, "NEWOBJ_EX"), (pickle.NEXT_BUFFER, "NEXT_BUFFER"),
                       (pickle.READONLY_BUFFER, "READONLY_BUFFER")):
        dispatch[_op[0]] = _refuse_opcode(_name)
    del _op, _name

    def __init__(self, fh, storage_loader: Callable[[tuple], _Storage], **kwargs) -> None:
        super().__init__(fh, **kwargs)
        self._storage_loader = storage_loader

    def find_class(self, module: str, name: str) -> Any:
        if module == "__builtin__":
            module = "builtins"
        hit = _ALLOWED.get((module, name))
        if hit is not None:
            return hit
        msg = f"{_REFUSED_HEADER}Unsupported global: GLOBAL {module}.{name} was not an allowed global."
        if module == "torch" and (name.endswith("Storage") or name.endswith("Tensor") or name in _TORCH_DTYPE_NAMES):
            msg += f" ember has no dtype for {module}.{name}."
        elif module.startswith("torch.nn."):
            msg += (" The file holds a whole pickled module. Save the model's state_dict() instead "
                    "(torch.save(model.state_dict(), f)) and load it with model.load_state_dict(ember.load(f)).")
        raise pickle.UnpicklingError(msg)

    def persistent_load(self, pid: Any) -> Any:
        if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
                or not isinstance(pid[1], _StorageType) or not isinstance(pid[2], str)
                or not isinstance(pid[3], str) or type(pid[4]) is not int or pid[4] < 0):
            raise pickle.UnpicklingError(f"Weights only load failed: unsupported persistent id {pid!r}")
        return self._storage_loader(pid)

    def load_build(self) -> None:
        """Only attributes of an OrderedDict (a state_dict's ``_metadata``) may be set."""
        state = self.stack.pop()
        inst = self.stack[-1]
        if (type(inst) is not collections.OrderedDict or not isinstance(state, dict)
                or not all(type(k) is str for k in state)):
            raise pickle.UnpicklingError(f"{_REFUSED_HEADER}Unsupported operand BUILD on a "
                                         f"{type(inst).__name__}: only an OrderedDict's attributes may be set.")
        inst.__dict__.update(state)

    dispatch[pickle.BUILD[0]] = load_build

    def load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls not in _NEWOBJ_CLASSES or not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"{_REFUSED_HEADER}Unsupported operand NEWOBJ for {cls!r}.")
        self.append(cls.__new__(cls, *args))

    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load(self) -> Any:
        """The unpickled object; a damaged pickle raises torch's UnpicklingError, never the pure-Python unpickler's
        internals (a KeyError for an unknown opcode, IndexError on an empty stack ...)."""
        try:
            return super().load()
        except pickle.UnpicklingError:
            raise
        except KeyError as e:  # an opcode the pickle protocol does not have: the bytes are not a pickle
            code = e.args[0] if e.args else "?"
            raise pickle.UnpicklingError(f"{_REFUSED_HEADER}WeightsUnpickler error: \n\nUnsupported operand {code}"
                                         "\n\n(ember: the checkpoint's data.pkl is damaged or not a pickle)") from None
        except (EOFError, IndexError, ValueError, TypeError, AttributeError, struct.error, UnicodeDecodeError) as e:
            raise pickle.UnpicklingError(f"{_REFUSED_HEADER}WeightsUnpickler error: {type(e).__name__}: {e}\n\n"
                                         "(ember: the checkpoint's data.pkl is damaged or truncated)") from None


def _resolve_location(location: str, map_location):
    """The device storages saved on ``location`` go to under ``map_location`` (None: the CPU), or torch's error
    when it is not available."""
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif map_location is not None:
        location = str(map_location)
    if not location.startswith("cpu"):
        if location.startswith("cuda") and _B.cuda_available():
            dev = _device(location)
            count = _B.cuda_device_count()
            if dev.index is not None and dev.index >= count:
                raise RuntimeError(f"Attempting to deserialize object on CUDA device {dev.index} but "
                                   f"torch.cuda.device_count() is {count}. Please use torch.load with "
                                   "map_location to map your storages to an existing device.")
            return dev
        if location.startswith("cuda"):
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                "If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU.")
        raise RuntimeError(f"don't know how to restore data location of storage on {location!r} "
                           "(ember only has the CPU; pass map_location='cpu')")


class _Archive:
    """Reads a torch zip checkpoint: finds its folder, reads storages once each."""

    def __init__(self, zf: zipfile.ZipFile, map_location, mapped: _mmap.mmap | None = None) -> None:
        self.zf = zf
        self.map_location = map_location
        self.mapped = mapped  # the whole file mapped copy-on-write: storages then view it instead of copying
        names = zf.namelist()
        prefix = names[0].split("/", 1)[0] if names else ""
        if f"{prefix}/data.pkl" not in names:
            if f"{prefix}/constants.pkl" in names:
                raise RuntimeError("this file is a TorchScript archive (torch.jit.save); ember.load reads only "
                                   "torch.save checkpoints")
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        self.prefix = prefix
        order = (_read_record(zf, f"{prefix}/byteorder").decode(errors="replace") if f"{prefix}/byteorder" in names
                 else sys.byteorder)
        if order not in ("little", "big"):
            raise RuntimeError(f"unknown byteorder {order!r} in the checkpoint")
        self.byteorder = order
        self.storages: dict[str, _Storage] = {}

    def storage(self, pid: tuple) -> _Storage:
        _, stype, key, location, numel = pid
        hit = self.storages.get(key)
        if hit is not None:
            return hit
        dev = _resolve_location(location, self.map_location)
        np_dt = stype.dtype.np  # (bfloat16: ml_dtypes', or the install hint)
        read_dt = np.dtype(np.uint16) if stype.dtype is D.bfloat16 else np_dt  # its bits, byte order applied
        raw = self._read(f"{self.prefix}/data/{key}", read_dt.newbyteorder("<" if self.byteorder == "little" else ">"),
                         numel)
        if raw.dtype != read_dt:
            raw = raw.astype(read_dt)
        if read_dt is not np_dt:
            raw = raw.view(np_dt)
        hit = self.storages[key] = _Storage(raw, dev)
        return hit

    def _read(self, name: str, dt: np.dtype, numel: int) -> np.ndarray:
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found") from None
        if info.file_size < numel * dt.itemsize:
            raise RuntimeError(f"storage record {name} holds {info.file_size} bytes, fewer than its "
                               f"{numel} elements need")
        if self.mapped is not None and info.compress_type == zipfile.ZIP_STORED:
            return np.frombuffer(self.mapped, dt, count=numel, offset=self._data_offset(info))
        arr = np.empty(numel, dt)
        view = memoryview(arr.view(np.uint8))
        try:
            with self.zf.open(info) as fh:
                pos = 0
                while pos < len(view):
                    n = fh.readinto(view[pos:pos + _CHUNK])
                    if not n:
                        raise RuntimeError(f"storage record {name} ended early")
                    pos += n
        except (zipfile.BadZipFile, zlib.error, EOFError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid header or archive is "
                               f"corrupted (ember: {e})") from None
        return arr

    def _data_offset(self, info: zipfile.ZipInfo) -> int:
        """Where a stored record's bytes start in the file (after its local header)."""
        mm, at = self.mapped, info.header_offset
        if mm[at:at + 4] != b"PK\x03\x04":
            raise RuntimeError(f"bad local header for {info.filename} in the checkpoint")
        name_len, extra_len = struct.unpack("<HH", mm[at + 26:at + 30])
        start = at + 30 + name_len + extra_len
        if start + info.file_size > len(mm):
            raise RuntimeError(f"record {info.filename} runs past the end of the checkpoint")
        return start


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load an object saved by ``ember.save`` or ``torch.save`` (zip format) without running code from it.

    Only tensors and plain data load (torch's ``weights_only=True``); torch is not needed. Storages saved
    on an accelerator need ``map_location="cpu"``. With ``mmap=True`` (paths only) tensors view the file
    mapped copy-on-write instead of being read into memory.
    """
    if weights_only is False:
        raise ValueError("ember.load does not support weights_only=False: unpickling arbitrary objects can run "
                         "any code stored in the file. Only tensors and plain data (weights_only=True) load; "
                         "save a model's state_dict() rather than the model.")
    if pickle_module is not None:
        raise ValueError("ember.load uses its own weights-only unpickler; pickle_module is not supported")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if callable(map_location):
        raise NotImplementedError("ember.load: a callable map_location is not supported (only the CPU exists); "
                                  "pass map_location='cpu'")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        raise TypeError(f"ember.load got unexpected keyword arguments {sorted(pickle_load_args)}")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            big = mmap and os.fstat(fh.fileno()).st_size > 0
            mapped = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY) if big else None
            return _load_file(fh, map_location, encoding, mapped)
    if not hasattr(f, "read"):
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read'")
    return _load_file(f, map_location, encoding)


def _load_file(fh: IO[bytes], map_location, encoding: str, mapped: _mmap.mmap | None = None) -> Any:
    try:
        zf = zipfile.ZipFile(fh)
    except zipfile.BadZipFile:
        raise RuntimeError("ember.load reads only torch's zip checkpoint format (the default of torch.save since "
                           "PyTorch 1.6); this file is not a zip archive") from None
    with zf:
        archive = _Archive(zf, map_location, mapped)
        data = _read_record(zf, f"{archive.prefix}/data.pkl")
        return _WeightsUnpickler(io.BytesIO(data), archive.storage, encoding=encoding).load()


def _read_record(zf: zipfile.ZipFile, name: str) -> bytes:
    """A record of the archive; a damaged one raises torch's PytorchStreamReader error (not zipfile's)."""
    try:
        return zf.read(name)
    except KeyError:
        raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid header or archive is corrupted "
                           f"(ember: {e})") from None
