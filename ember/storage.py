"""ember.storage: torch.storage, the memory behind tensors (``Tensor.untyped_storage()`` / ``Tensor.storage()``).

A tensor's storage is the NumPy array that owns its memory (the root of its view chain); every view of it shares
that storage. ``UntypedStorage`` presents it as bytes, ``TypedStorage`` (deprecated in torch, with its warning)
as elements of the tensor's dtype; both read and write the tensor's memory.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _dtype as D
from ._device import _check_device

__all__ = ["UntypedStorage", "TypedStorage"]

_warned = [False]
_always_warn = [False]


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """torch's deprecation warning for TypedStorage, once per process (always with the always-warn switch)."""
    if _always_warn[0] or not _warned[0]:
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel + 1)
        _warned[0] = True


def _reset_warn_typed_storage_removal() -> None:
    _warned[0] = False


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _bytes_of(root: np.ndarray) -> np.ndarray:
    """A writable uint8 view of all of ``root``'s memory, in address order."""
    try:
        return np.ndarray((root.nbytes,), np.uint8, buffer=root)
    except (TypeError, ValueError):  # dense but neither C nor F order: its memory from the lowest address
        flat = np.lib.stride_tricks.as_strided(root, (root.size,), (root.itemsize,), writeable=True)
        return flat.view(np.uint8)


def _format(values, header: str) -> str:
    return "".join(f" {v}\n" for v in values) + header


class UntypedStorage:
    """A tensor's memory as bytes (``len`` and ``size()`` in bytes; items are ints 0..255)."""

    is_sparse = False
    device = None  # set below: the CPU device

    def __init__(self, *args, device=None) -> None:
        _check_device(device)
        if len(args) == 1 and isinstance(args[0], np.ndarray):  # the bytes of an existing storage
            self._bytes = args[0]
        elif len(args) == 1 and isinstance(args[0], int):
            self._bytes = np.zeros(args[0], np.uint8)
        elif len(args) == 1:
            self._bytes = np.array(list(args[0]), dtype=np.uint8)
        elif not args:
            self._bytes = np.zeros(0, np.uint8)
        else:
            raise TypeError("UntypedStorage(): expected a size or a sequence of bytes")

    @classmethod
    def _of(cls, arr: np.ndarray) -> "UntypedStorage":
        return cls(_bytes_of(_root(arr)))

    def size(self) -> int:
        return int(self._bytes.size)

    nbytes = size

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._bytes.__array_interface__["data"][0]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return UntypedStorage(self._bytes[idx])
        if not -self.size() <= idx < self.size():
            raise IndexError(f"index {idx} out of range for storage of size {self.size()}")
        return int(self._bytes[idx])

    def __setitem__(self, idx, value) -> None:
        self._bytes[idx] = value

    def tolist(self) -> list:
        return self._bytes.tolist()

    def fill_(self, value) -> "UntypedStorage":
        self._bytes[...] = value
        return self

    def copy_(self, source, non_blocking=None) -> "UntypedStorage":
        src = source._bytes if isinstance(source, UntypedStorage) else source.untyped()._bytes
        if src.size != self._bytes.size:
            raise RuntimeError(f"size mismatch, got {self._bytes.size} and {src.size}")
        self._bytes[...] = src
        return self

    def clone(self) -> "UntypedStorage":
        return UntypedStorage(self._bytes.copy())

    def cpu(self) -> "UntypedStorage":
        return self

    def resize_(self, size: int) -> "UntypedStorage":
        """Resize to ``size`` bytes (the old bytes are kept; tensors viewing the old memory keep it)."""
        new = np.zeros(size, np.uint8)
        n = min(size, self._bytes.size)
        new[:n] = self._bytes[:n]
        self._bytes = new
        return self

    def is_shared(self) -> bool:
        from .multiprocessing import _reductions

        return _reductions.is_shared_array(self._bytes)

    def share_memory_(self) -> "UntypedStorage":
        return self

    def is_pinned(self, device="cuda") -> bool:
        return False

    def untyped(self) -> "UntypedStorage":
        return self

    def type(self, dtype=None, non_blocking: bool = False):
        return "torch.UntypedStorage" if dtype is None else dtype

    def __repr__(self) -> str:
        return _format(self.tolist(), f"[torch.storage.UntypedStorage(device=cpu) of size {self.size()}]")

    __str__ = __repr__

    def __iter__(self):
        return iter(self.tolist())


class TypedStorage:
    """A storage of elements of one dtype (deprecated in torch: its warning on first use)."""

    is_sparse = False

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal: bool = False) -> None:
        if not _internal:
            _warn_typed_storage_removal()
        _check_device(device)
        self.dtype = dtype if dtype is not None else D.get_default_dtype()
        np_dtype = self.dtype.np
        if wrap_storage is not None:
            self._untyped = wrap_storage
        elif len(args) == 1 and isinstance(args[0], int):
            self._untyped = UntypedStorage(np.zeros(args[0], np_dtype).view(np.uint8))
        elif len(args) == 1:
            self._untyped = UntypedStorage(np.array(list(args[0]), dtype=np_dtype).view(np.uint8))
        else:
            self._untyped = UntypedStorage(np.zeros(0, np.uint8))

    @classmethod
    def _of(cls, arr: np.ndarray, dtype) -> "TypedStorage":
        return cls(dtype=dtype, wrap_storage=UntypedStorage._of(arr), _internal=True)

    @property
    def _values(self) -> np.ndarray:
        return self._untyped._bytes.view(self.dtype.np)

    @property
    def device(self):
        return self._untyped.device

    def size(self) -> int:
        _warn_typed_storage_removal()
        return int(self._values.size)

    def __len__(self) -> int:
        return int(self._values.size)

    def nbytes(self) -> int:
        return self._untyped.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped

    @property
    def _untyped_storage(self) -> UntypedStorage:
        return self._untyped

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._values[idx].item()

    def __setitem__(self, idx, value) -> None:
        self._values[idx] = value

    def tolist(self) -> list:
        return self._values.tolist()

    def fill_(self, value) -> "TypedStorage":
        self._values[...] = value
        return self

    def copy_(self, source, non_blocking=None) -> "TypedStorage":
        self._untyped.copy_(source.untyped() if isinstance(source, TypedStorage) else source)
        return self

    def clone(self) -> "TypedStorage":
        return TypedStorage(dtype=self.dtype, wrap_storage=self._untyped.clone(), _internal=True)

    def cpu(self) -> "TypedStorage":
        return self

    def resize_(self, size: int) -> None:
        self._untyped.resize_(size * self.element_size())

    def is_shared(self) -> bool:
        return self._untyped.is_shared()

    def share_memory_(self) -> "TypedStorage":
        return self

    def is_pinned(self, device="cuda") -> bool:
        return False

    def type(self, dtype=None, non_blocking: bool = False):
        if dtype is None:
            return f"torch.{self.dtype._scalar_name}Storage"
        return dtype

    def _to(self, dtype) -> "TypedStorage":
        values = self._values.astype(dtype.np)
        return TypedStorage(dtype=dtype, wrap_storage=UntypedStorage(values.view(np.uint8)), _internal=True)

    def float(self) -> "TypedStorage":
        return self._to(D.float32)

    def double(self) -> "TypedStorage":
        return self._to(D.float64)

    def half(self) -> "TypedStorage":
        return self._to(D.float16)

    def long(self) -> "TypedStorage":
        return self._to(D.int64)

    def int(self) -> "TypedStorage":
        return self._to(D.int32)

    def bool(self) -> "TypedStorage":
        return self._to(D.bool)

    def __reduce__(self):
        return (_rebuild_typed, (self.tolist(), self.dtype))

    def __repr__(self) -> str:
        return _format(self.tolist(), f"[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                                      f"{len(self)}]")

    __str__ = __repr__

    def __iter__(self):
        return iter(self.tolist())


def _rebuild_typed(values: list, dtype) -> TypedStorage:
    return TypedStorage(values, dtype=dtype, _internal=True)


def _set_device() -> None:
    from ._device import _cpu

    UntypedStorage.device = _cpu


_set_device()
