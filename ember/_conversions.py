"""Tensor conversions: to other dtypes and devices (``to``, ``type``, ``float``, ``double`` ...), to Python and NumPy
values (``item``, ``tolist``, ``numpy``, ``__array__``, ``__float__`` ...), to storages, and torch's legacy tensor types
(``torch.FloatTensor`` ...). The methods are functions of ``self`` bound to Tensor by ember/_methods.py (NOTE [Tensor
methods from functions]); a method whose name is a builtin's (``float``, ``type`` ...) has another name here.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _dtype as D
from . import _layout as _L
from . import _backend as _B
from ._device import device as _device_cls, _check_device, _cpu, NO_ATEN_CUDA
from ._tensor import Tensor, Size, _CPP_NAMES, _init, _wrap
from .autograd import _provenance as _prov
from .autograd.grad_mode import _mode
from .ops import comparison as _C, indexing as _I, shape as _S

__all__ = ["LEGACY_CLASSES"]


def item(self):
    """The value of a one-element tensor as a Python number."""
    if self._data.size != 1:
        raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
    if self._requires_grad:
        _prov.note_break(self, ".item()")
    if _mode.tracer is not None:  # a value read into Python: ember.compile cannot replay past it
        _mode.tracer.read(self, ".item()")
    if _B._pending:  # NOTE [device-side asserts]
        _B.check_pending()
    return self._data.reshape(()).item()


def tolist(self):
    if self._requires_grad:
        _prov.note_break(self, ".tolist()")
    if _mode.tracer is not None:
        _mode.tracer.read(self, ".tolist()")
    if _B._pending:  # NOTE [device-side asserts]
        _B.check_pending()
    return self._data.tolist()


def numpy(self, *, force: bool = False) -> np.ndarray:
    """The data as an ndarray sharing memory (a CPU tensor's only; ``force=True`` copies others to the host)."""
    if type(self._data) is not np.ndarray and not _B.is_cpu_array(self._data):
        if not force:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        return _B.to_host(self._data)
    if self._requires_grad and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    ext = self._ext
    if ext is not None and ext.get("conj") and not force:
        raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                           "tensor.resolve_conj().numpy() instead.")
    if self._requires_grad:
        _prov.note_break(self, ".numpy()")
    if _mode.tracer is not None:
        _mode.tracer.read(self, ".numpy()")
    return self._data


def __array__(self, dtype=None, copy=None):
    arr = self.numpy()
    if dtype is not None and arr.dtype != dtype:
        return arr.astype(dtype)
    return arr.copy() if copy else arr


def __len__(self) -> int:
    if self._data.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self._data.shape[0]


def __iter__(self):
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    if self._requires_grad and _mode.grad_enabled:
        return iter(self.unbind(0))
    dt = self._dtype
    return iter([_wrap(a, dt) for a in self._data])


def __contains__(self, element) -> bool:
    if not isinstance(element, (Tensor, int, float, np.generic)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                           f"{type(element)}.")
    found = _C.eq(self, element)
    if _mode.tracer is not None:
        _mode.tracer.read(found, "`in`")
    return bool(np.any(found._data))


def __bool__(self) -> bool:
    n = self._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if _mode.tracer is not None:
        _mode.tracer.read(self, "bool()")
    return bool(self._data.reshape(()))


def __float__(self) -> float:
    if self._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    if self._requires_grad:
        _prov.note_break(self, "float()")
    if _mode.tracer is not None:
        _mode.tracer.read(self, "float()")
    return float(_real_value(self._data.reshape(()), "double"))


def __int__(self) -> int:
    if self._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    if _mode.tracer is not None:
        _mode.tracer.read(self, "int()")
    return int(_real_value(self._data.reshape(()), "int64_t"))


def __index__(self) -> int:
    if self._dtype._kind >= 2 or self._data.size != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    if _mode.tracer is not None:
        _mode.tracer.read(self, "an index")
    return int(self._data.reshape(()))


def __complex__(self) -> complex:
    return complex(self.item())


def __format__(self, spec: str) -> str:
    if self._data.ndim == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def __repr__(self, *, tensor_contents=None) -> str:
    from ._tensor_str import _str

    if _mode.tracer is not None:
        _mode.tracer.read(self, "printing")
    return _str(self)


def __deepcopy__(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                           "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                           "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                           "https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    new = type(self).__new__(type(self))
    _init(new, self._data.copy(), self._dtype, self._requires_grad)
    if type(self) is not Tensor:
        for k, v in getattr(self, "__dict__", {}).items():
            setattr(new, k, v)
    if self._grad is not None:
        new._grad = self._grad.__deepcopy__(memo)
    memo[id(self)] = new
    return new


def to(self, *args, **kwargs) -> "Tensor":
    """Convert dtype and/or device: ``to(dtype)``, ``to(device[, dtype])``, ``to(other)``; returns
    ``self`` when nothing changes (unless ``copy=True``: then a ToCopyBackward0 node, as in torch);
    ``memory_format``: the result laid out so (a copy when the layout differs)."""
    fmt = kwargs.get("memory_format")
    dtype, dev, copy = _parse_to(args, kwargs)
    if dev is not None:
        dev = _check_device(dev)
        src = self.device
        if src != dev and not (dev.index is None and src.type == dev.type):
            from .ops.device import to_device

            return to_device(self, dev).to(dtype=dtype, memory_format=fmt or _L.preserve_format)
    if fmt is not None and fmt is not _L.preserve_format and not _L.is_contiguous(self._data, fmt):
        t = self if dtype is None or dtype is self._dtype else _convert(self, dtype)
        return _S.clone(t, memory_format=fmt)
    if (dtype is None or dtype is self._dtype) and not copy:
        return self
    return _convert(self, self._dtype if dtype is None else dtype)


def to_type(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name (``"torch.FloatTensor"``), or a conversion to ``dtype``: a dtype, a legacy type
    class or its name, or ``Tensor`` itself (the default tensor type)."""
    for k in kwargs:
        if k not in ("async", "memory_format"):
            raise TypeError(f"type() got an unexpected keyword argument '{k}'")
    if dtype is None:
        return "torch." + self._dtype._scalar_name + "Tensor"
    if isinstance(dtype, str):
        if dtype.startswith("torch.cuda."):
            raise RuntimeError(NO_ATEN_CUDA)
        legacy = D.get_default_dtype() if dtype == "torch.Tensor" else (
            _LEGACY_TYPES.get(dtype[6:]) if dtype.startswith("torch.") else None)
        if legacy is None:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = legacy
    elif isinstance(dtype, _LegacyTensorType):
        dtype = dtype.dtype
    elif dtype is Tensor:
        dtype = D.get_default_dtype()
    elif isinstance(dtype, type):
        if getattr(dtype, "is_cuda", False) is True:  # ember.cuda.FloatTensor ...
            raise RuntimeError(NO_ATEN_CUDA)
        raise ValueError(f"invalid type: '{_torch_type_name(dtype)}'")
    elif not isinstance(dtype, D.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return self.to(dtype)


def type_as(self, other: "Tensor") -> "Tensor":
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return self.to(other._dtype)


def cpu(self, *, memory_format=_L.preserve_format) -> "Tensor":
    """The tensor on the CPU: itself when it is there (and laid out as ``memory_format`` asks), else a copy."""
    return self.to(_cpu, memory_format=memory_format)


def cuda(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
    return _to_accelerator(self, "cuda", device)


def xpu(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
    return _to_accelerator(self, "xpu", device)


def ipu(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
    return _to_accelerator(self, "ipu", device)


def mtia(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
    return _to_accelerator(self, "mtia", device)


def _to_complex64(self, memory_format=_L.preserve_format) -> "Tensor":
    return self.to(D.complex64, memory_format=memory_format)


def _to_complex128(self, memory_format=_L.preserve_format) -> "Tensor":
    return self.to(D.complex128, memory_format=memory_format)


def _to_complex32(self, *, memory_format=None) -> "Tensor":
    return self.to(D.complex32, memory_format=memory_format)


def pin_memory(self, device=None) -> "Tensor":
    """The tensor, for fast copies to the GPU (torch's error without one). Host memory is not pinned: NumPy
    allocates it, and CuPy copies from any host array."""
    if device is not None:
        warnings.warn("The argument 'device' of Tensor.pin_memory() is deprecated. Please do not pass this "
                      "argument.", DeprecationWarning, stacklevel=2)
    if not _B.cuda_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if not self.is_cpu:
        raise RuntimeError(f"cannot pin 'torch.cuda.{self._dtype._scalar_name}Tensor' only dense CPU tensors can be "
                           "pinned")
    return self


def share_memory_(self) -> "Tensor":
    """Move the memory to shared memory (NOTE [shared tensors] in ember/multiprocessing/_reductions.py)."""
    from .multiprocessing._reductions import share_memory_

    return share_memory_(self)


def is_shared(self) -> bool:
    from .multiprocessing._reductions import is_shared_array

    return type(self._data) is np.ndarray and is_shared_array(self._data)


def untyped_storage(self):
    """The memory holding this tensor's elements, as bytes (shared with every view of it)."""
    from .storage import UntypedStorage

    return UntypedStorage._of(self._data)


def storage(self):
    """The memory holding this tensor's elements, typed (torch's deprecated TypedStorage, with its warning)."""
    from .storage import TypedStorage, _warn_typed_storage_removal

    _warn_typed_storage_removal()
    return TypedStorage._of(self._data, self._dtype)


def is_pinned(self, device=None) -> bool:
    if device is not None:
        warnings.warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this "
                      "argument.", DeprecationWarning, stacklevel=2)
    return False


def get_device(self) -> int:
    d = self._data
    if type(d) is np.ndarray:
        return -1
    dev = _B.device_of(d)
    return -1 if dev.type == "cpu" else dev.index


def _cast(dtype: D.dtype):
    def method(self) -> Tensor:
        return self.to(dtype)
    return method


_to_float32 = _cast(D.float32)  # Tensor.float
_to_float64 = _cast(D.float64)  # Tensor.double
_to_float16 = _cast(D.float16)  # Tensor.half
_to_bfloat16 = _cast(D.bfloat16)  # Tensor.bfloat16
_to_int64 = _cast(D.int64)  # Tensor.long
_to_int32 = _cast(D.int32)  # Tensor.int
_to_int16 = _cast(D.int16)  # Tensor.short
_to_int8 = _cast(D.int8)  # Tensor.char
_to_uint8 = _cast(D.uint8)  # Tensor.byte
_to_bool = _cast(D.bool)  # Tensor.bool


_LEGACY_TYPES = {d._scalar_name + "Tensor": d for d in D.ALL}


_PY_DTYPES = {float: D.float64, int: D.int64, bool: D.bool}


def _as_dtype(x):
    if type(x) is D.dtype:
        return D.to_dtype(x)
    return _PY_DTYPES.get(x) if isinstance(x, type) else None


def _parse_to(args: tuple, kwargs: dict):
    """(dtype, device, copy) from torch's overloads of ``Tensor.to``."""
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise _to_error(args, kwargs)
    rest = args
    if args:
        a = args[0]
        if isinstance(a, Tensor):
            dtype, rest = a._dtype, args[1:]
        elif isinstance(a, (str, _device_cls)):
            dev, rest = a, args[1:]
            if rest and (rest[0] is None or _as_dtype(rest[0]) is not None):
                dtype, rest = rest[0], rest[1:]
        elif a is None or _as_dtype(a) is not None:
            dtype, rest = a, args[1:]
        else:
            raise _to_error(args, kwargs)
    if len(rest) > 2 or not all(isinstance(f, bool) for f in rest):
        raise _to_error(args, kwargs)
    if len(rest) == 2:
        copy = rest[1]
    if dtype is not None:
        d = _as_dtype(dtype)
        if d is None:
            raise _to_error(args, {"dtype": dtype})
        dtype = d
    return dtype, dev, copy


def _legacy_array(args: tuple, dtype: D.dtype) -> np.ndarray:
    """The data of ``Tensor(2, 3)`` (zeros of that size) or ``Tensor([1, 2])`` (a copy, as ``dtype``)."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        from ._data import to_array

        data = args[0]
        if isinstance(data, Size):
            return np.zeros(tuple(data), dtype.np)
        return np.array(to_array(data, dtype, dtype), copy=True)
    return np.zeros(tuple(args) if args else (0,), dtype.np)


def _tensor_options(dt: D.dtype) -> str:
    return (f"TensorOptions(dtype={_CPP_NAMES[dt.name][0]}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


class _LegacyTensorType(type):
    """``ember.FloatTensor`` and friends: constructors of one dtype, and ``isinstance`` tests of it."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj._dtype is cls.dtype

    def __call__(cls, *args) -> "Tensor":
        if len(args) == 1 and isinstance(args[0], Tensor):  # an alias, of this class's dtype only
            src = args[0]._dtype
            if src is not cls.dtype:
                raise TypeError(f"expected {_tensor_options(cls.dtype)} (got {_tensor_options(src)})")
            return _I.Alias.apply(args[0])
        return _wrap(_legacy_array(args, cls.dtype), cls.dtype)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


LEGACY_CLASSES = {name: _LegacyTensorType(name, (), {"dtype": d}) for name, d in _LEGACY_TYPES.items()}


def _to_accelerator(t: "Tensor", kind: str, device) -> "Tensor":
    """Tensor.cuda / xpu / ipu / mtia: the tensor on that accelerator, or torch's errors without it (an index
    asks for the current accelerator, which then does not exist)."""
    if kind == "cuda" and isinstance(device, int) and _B.cuda_available():
        device = _device_cls("cuda", device)
    dev = _check_device(_device_cls(device) if isinstance(device, int) else kind if device is None else device)
    if dev.type != kind:
        raise RuntimeError(f"Invalid device, must be {kind} device")
    return t.to(dev)


def _torch_type_name(cls: type) -> str:
    """A class as torch's C++ argument errors name it: torch's C types by their dotted name, others by name."""
    if cls is _LegacyTensorType:
        return "torch.tensortype"
    if cls.__module__.startswith("ember") and cls.__name__ in ("Size", "dtype", "device", "Generator", "layout",
                                                               "memory_format"):
        return "torch." + cls.__name__
    return cls.__name__


_TO_KWARGS = frozenset(("dtype", "device", "copy", "non_blocking", "memory_format"))


def _arg_type_name(v) -> str:
    """A value's type as torch's argument errors name it."""
    if isinstance(v, D.dtype):
        return "torch.dtype"
    if isinstance(v, _device_cls):
        return "torch.device"
    return type(v).__name__


def _to_error(args, kwargs) -> TypeError:
    kw = [f"{k}={_arg_type_name(v)}" for k, v in kwargs.items()]
    # torch's wording: "(float, foo=int)", but "(foo=int, )" without positional arguments
    got = ", ".join([_arg_type_name(a) for a in args] + kw) if args else "".join(k + ", " for k in kw)
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
                     "bool copy = False, *, torch.memory_format memory_format = None)\n"
                     " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
                     "torch.memory_format memory_format = None)\n"
                     " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
                     "torch.memory_format memory_format = None)\n")


def _real_value(x: np.ndarray, ctype: str):
    """A one-element array as a real number: a complex one only when its imaginary part is 0 (torch's error)."""
    if x.dtype.kind == "c":
        if x.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return x.real
    return x


def _convert(t: Tensor, dtype: D.dtype) -> Tensor:
    return _S._to_dtype(t, dtype)


