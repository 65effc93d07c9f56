"""Tensor: one ndarray plus its autograd state (requires_grad, grad, grad_fn, version, hooks)."""
from __future__ import annotations

import os
import sys
import warnings
import weakref
from operator import index as _operator_index
from collections import OrderedDict
from typing import Callable

import numpy as np

from . import _dtype as D
from . import _layout as _L
from ._dtype import NotAScalar as _NotAScalar
from ._device import device as _device_cls, _cpu, _check_device, NO_ATEN_CUDA
from .autograd import graph as _graph
from .autograd.grad_mode import _mode, _inference_blocks
from .autograd import _provenance as _prov

__all__ = ["Tensor"]

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class _VersionCounter:
    """Shared by a tensor and its views; bumped by every in-place change, remembering where the
    last few changes were made (user file and line) for the in-place error message."""

    __slots__ = ("value", "sites")

    def __init__(self) -> None:
        self.value = 0
        self.sites = None  # [(version reached, filename, lineno), ...], the most recent few


def _record_site(vc: _VersionCounter) -> None:
    """Remember the innermost frame outside the ember package as the site of version ``vc.value``."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return
    sites = vc.sites
    if sites is None:
        sites = vc.sites = []
    elif len(sites) >= 8:
        del sites[:4]
    sites.append((vc.value, f.f_code.co_filename, f.f_lineno))


def _inplace_site(vc: _VersionCounter | None, saved_version: int) -> str | None:
    """file:line of the change that first moved ``vc`` past ``saved_version`` (else the latest known)."""
    if vc is None or not vc.sites:
        return None
    for version, filename, lineno in vc.sites:
        if version > saved_version:
            return f"{filename}:{lineno}"
    return None


_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more informations."
)


# dtype name -> (C++ element type name, ScalarType name), as torch's messages print them
_CPP_NAMES = {"float32": ("float", "Float"), "float64": ("double", "Double"), "float16": ("c10::Half", "Half"),
              "bfloat16": ("c10::BFloat16", "BFloat16"), "int64": ("long int", "Long"), "int32": ("int", "Int"),
              "int16": ("short int", "Short"), "int8": ("signed char", "Char"), "uint8": ("unsigned char", "Byte"),
              "bool": ("bool", "Bool"), "complex64": ("c10::complex<float>", "ComplexFloat"),
              "complex128": ("c10::complex<double>", "ComplexDouble")}


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""

    __slots__ = ("_data", "_dtype", "_requires_grad", "_grad_fn", "_output_nr", "_grad",
                 "_vc", "_base", "_acc", "_ext", "__weakref__")

    # ``Tensor(...)`` is the legacy constructor (torch.Tensor(2, 3) / torch.Tensor([1, 2])).
    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        _init(self, np.empty(0, np.float32), D.float32, False)
        return self

    def __init__(self, *args, device=None, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"Tensor() got unexpected keyword arguments {list(kwargs)}")
        if device is not None:
            kind = (device if isinstance(device, _device_cls) else _device_cls(device)).type
            if kind != "cpu":
                raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {kind} was passed")
        self._dtype = D.get_default_dtype()
        self._data = _legacy_array(args, self._dtype)

    # ----------------------------------------------------------------- metadata
    @property
    def shape(self) -> "Size":
        return _new_size(Size, self._data.shape)

    def size(self, dim: int | None = None):
        """The shape (a ``Size``), or the length of dimension ``dim``."""
        if dim is None:
            return _new_size(Size, self._data.shape)
        return self._data.shape[_wrap_dim_strict(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    @property
    def dtype(self) -> D.dtype:
        return self._dtype

    @property
    def device(self) -> _device_cls:
        return _cpu

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    @property
    def layout(self):
        return _L.strided

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def stride(self, dim: int | None = None):
        """Strides in elements, as torch reports them."""
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim_strict(dim, self._data.ndim)]

    def is_contiguous(self, *, memory_format=_L.contiguous_format) -> bool:
        """Whether the elements lie densely in ``memory_format``'s order (row-major by default)."""
        return _L.is_contiguous(self._data, memory_format)

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def is_signed(self) -> bool:
        return self._dtype.is_signed

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def storage_offset(self) -> int:
        base = self._data
        while base.base is not None and isinstance(base.base, np.ndarray):
            base = base.base
        off = self.data_ptr() - base.__array_interface__["data"][0]
        return off // self._data.itemsize

    @property
    def _version(self) -> int:
        return self._vc.value if self._vc is not None else 0

    def _version_counter(self) -> _VersionCounter:
        vc = self._vc
        if vc is None:
            vc = self._vc = _VersionCounter()
        return vc

    def _bump(self) -> None:
        """Record an in-place change (version + where it happened)."""
        vc = self._vc
        if vc is None:
            vc = self._vc = _VersionCounter()
        vc.value += 1
        _record_site(vc)
        if _mode.tracer is not None:  # ember.compile: every in-place change must be one it recorded
            _mode.tracer.bumped(self)

    def is_inference(self) -> bool:
        ext = self._ext
        return bool(ext is not None and ext.get("inference"))

    # ----------------------------------------------------------------- autograd state
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value, "floating point and complex dtype")

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` of a leaf in place; returns self."""
        return self._set_requires_grad(requires_grad, "floating point dtype")

    def _set_requires_grad(self, requires_grad: bool, kinds: str) -> "Tensor":
        # torch words the dtype error differently for the method and the attribute.
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use "
                    "a computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return self
        if requires_grad and not self._dtype._differentiable:
            raise RuntimeError(f"only Tensors of {kinds} can require gradients")
        if requires_grad and self.is_inference() and not _mode.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode "
                               "is not allowed.")
        if requires_grad and not self._requires_grad:
            _prov.note_requires_grad(self)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def grad(self) -> "Tensor | None":
        if self._grad_fn is not None and not self.retains_grad and self._grad is None:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                                   f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                                   "and the tensor are the same size")
            if value._dtype is not self._dtype:
                got = _CPP_NAMES.get(value._dtype.name, (value._dtype.name,) * 2)[0]
                want = _CPP_NAMES.get(self._dtype.name, (self._dtype.name,) * 2)[1]
                raise RuntimeError(f"attempting to assign a gradient with dtype '{got}' to a tensor with "
                                   f"grad_dtype '{want}'. The gradient must match the tensor's grad_dtype "
                                   "(defaults to the tensor's dtype).")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        ext = self._ext
        return bool(ext is not None and ext.get("retain"))

    def retain_grad(self) -> None:
        """Populate ``.grad`` of this non-leaf tensor during backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self.retains_grad:
            return
        self._install_retain_hook()

    def _install_retain_hook(self) -> None:
        ref = weakref.ref(self)

        def retain(grad):
            t = ref()
            if t is None or grad is None:
                return grad
            t._grad = grad.clone() if t._grad is None else t._grad + grad
            return grad

        self._ext_dict()["retain"] = True
        self._grad_fn._ext().retain[self._output_nr] = retain

    def _ext_dict(self) -> dict:
        ext = self._ext
        if ext is None:
            ext = self._ext = {}
        return ext

    def _grad_accumulator(self):
        """The AccumulateGrad node of this leaf, created on first use and cached weakly."""
        acc = self._acc
        if acc is not None:
            node = acc()
            if node is not None:
                return node
        node = _graph.AccumulateGrad(self)
        self._acc = weakref.ref(node)
        return node

    def register_hook(self, hook: Callable[["Tensor"], "Tensor | None"]):
        """``hook(grad)`` runs when the gradient of this tensor is computed; may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        _prov.note_hook(self, hook, "tensor hook")
        if self._grad_fn is None:
            hooks = self._ext_dict().setdefault("hooks", OrderedDict())
            return _graph._add_hook(hooks, hook)
        return self._grad_fn._register_tensor_hook(self._output_nr, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[["Tensor"], None]):
        """``hook(tensor)`` runs after the gradient has been accumulated into ``.grad``."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = self._ext_dict().setdefault("post_acc_hooks", OrderedDict())
        return _graph._add_hook(hooks, hook)

    # ----------------------------------------------------------------- insight (autograd/_explain.py)
    def explain_grad(self, root=None):
        """Why this tensor's ``.grad`` is None or zero after a backward from ``root`` (default: the last one)."""
        from .autograd._explain import explain

        return explain(self, root)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Compute the gradient of this tensor w.r.t. graph leaves (accumulated into ``.grad``)."""
        from .autograd import backward as _backward

        _backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> "Tensor":
        """A new tensor sharing data (and version counter) but outside the graph."""
        t = _wrap(self._data, self._dtype)
        t._vc = self._version_counter()
        ext = self._ext
        if ext is not None:
            if ext.get("inference"):
                t._ext = {"inference": True}
            if ext.get("conj"):  # a view: the conjugate bit carries over (NOTE [lazy conjugation])
                t._ext_dict()["conj"] = True
        if self._requires_grad:
            _prov.note_break(self, ".detach()", t)
        return t

    def detach_(self) -> "Tensor":
        """Detach this tensor from the graph in place (it becomes a leaf)."""
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view "
                               "is set as True, gradients are views of DDP buckets, and hence detach_() "
                               "cannot be called on these gradients. To fix this error, please refer to "
                               "the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                               "solution.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    @property
    def data(self) -> "Tensor":
        """The same data as a tensor outside the graph (no shared version counter)."""
        t = _wrap(self._data, self._dtype)
        if self._requires_grad:
            _prov.note_break(self, ".data", t)
        return t

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data
        self._dtype = value._dtype

    # ----------------------------------------------------------------- conversion
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if self._requires_grad:
            _prov.note_break(self, ".item()")
        if _mode.tracer is not None:  # a value read into Python: ember.compile cannot replay past it
            _mode.tracer.read(self, ".item()")
        return self._data.reshape(()).item()

    def tolist(self):
        if self._requires_grad:
            _prov.note_break(self, ".tolist()")
        if _mode.tracer is not None:
            _mode.tracer.read(self, ".tolist()")
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as an ndarray sharing memory."""
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

    __array_priority__ = 1000  # NumPy defers ndarray <op> Tensor to our reflected operators

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

    __hash__ = object.__hash__

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._tensor_str import _str

        if _mode.tracer is not None:
            _mode.tracer.read(self, "printing")
        return _str(self)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._data, self._requires_grad))

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

    # ----------------------------------------------------------------- device / dtype
    def to(self, *args, **kwargs) -> "Tensor":
        """Convert dtype and/or device: ``to(dtype)``, ``to(device[, dtype])``, ``to(other)``; returns
        ``self`` when nothing changes (unless ``copy=True``: then a ToCopyBackward0 node, as in torch);
        ``memory_format``: the result laid out so (a copy when the layout differs)."""
        fmt = kwargs.get("memory_format")
        dtype, dev, copy = _parse_to(args, kwargs)
        if dev is not None:
            _check_device(dev)
        if fmt is not None and fmt is not _L.preserve_format and not _L.is_contiguous(self._data, fmt):
            t = self if dtype is None or dtype is self._dtype else _convert(self, dtype)
            return _S.clone(t, memory_format=fmt)
        if (dtype is None or dtype is self._dtype) and not copy:
            return self
        return _convert(self, self._dtype if dtype is None else dtype)

    def type(self, dtype=None, non_blocking=False, **kwargs):
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
        """The tensor itself (it is on the CPU), or a copy laid out as ``memory_format`` asks."""
        return self.to(memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
        return _to_accelerator(self, "cuda", device)

    def xpu(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
        return _to_accelerator(self, "xpu", device)

    def ipu(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
        return _to_accelerator(self, "ipu", device)

    def mtia(self, device=None, non_blocking=False, memory_format=_L.preserve_format) -> "Tensor":
        return _to_accelerator(self, "mtia", device)

    def float(self) -> "Tensor":
        return self.to(D.float32)

    def double(self) -> "Tensor":
        return self.to(D.float64)

    def half(self) -> "Tensor":
        return self.to(D.float16)

    def cfloat(self, memory_format=_L.preserve_format) -> "Tensor":
        return self.to(D.complex64, memory_format=memory_format)

    def cdouble(self, memory_format=_L.preserve_format) -> "Tensor":
        return self.to(D.complex128, memory_format=memory_format)

    def chalf(self, *, memory_format=None) -> "Tensor":
        return self.to(D.complex32, memory_format=memory_format)

    def bfloat16(self) -> "Tensor":
        return self.to(D.bfloat16)

    def long(self) -> "Tensor":
        return self.to(D.int64)

    def int(self) -> "Tensor":
        return self.to(D.int32)

    def short(self) -> "Tensor":
        return self.to(D.int16)

    def char(self) -> "Tensor":
        return self.to(D.int8)

    def byte(self) -> "Tensor":
        return self.to(D.uint8)

    def bool(self) -> "Tensor":
        return self.to(D.bool)

    def pin_memory(self, device=None) -> "Tensor":
        """torch's error: pinning needs an accelerator, which ember never has."""
        raise RuntimeError("Cannot access accelerator device when none is available.")

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
        return -1


    # ----------------------------------------------------------------- ops (ember.ops)
    # Binary operators answer NotImplemented to operands that are neither tensors nor numbers, so Python
    # raises its usual TypeError (and ``t == 'a'`` is False), as torch does. try/except is free when nothing
    # is raised.
    def __add__(self, other):
        try:
            return _A.Add.apply(self, other, 1)
        except _NotAScalar:
            return NotImplemented

    def __radd__(self, other):
        try:
            return _A.Add.apply(self, other, 1)
        except _NotAScalar:
            return NotImplemented

    def __sub__(self, other):
        try:
            return _A.Sub.apply(self, other, 1)
        except _NotAScalar:
            return NotImplemented

    def __rsub__(self, other):
        try:
            return _A.Rsub.apply(self, other, 1)
        except _NotAScalar:
            return NotImplemented

    def __mul__(self, other):
        try:
            return _A.Mul.apply(self, other)
        except _NotAScalar:
            return NotImplemented

    def __rmul__(self, other):
        try:
            return _A.Mul.apply(self, other)
        except _NotAScalar:
            return NotImplemented

    def __truediv__(self, other):
        try:
            return _A.Div.apply(self, other)
        except _NotAScalar:
            return NotImplemented

    def __rtruediv__(self, other):
        try:
            return _A.rdiv(self, other)
        except _NotAScalar:
            return NotImplemented

    def __pow__(self, exponent):
        try:
            return _A.pow(self, exponent)
        except _NotAScalar:
            return NotImplemented

    def __rpow__(self, base):
        try:
            return _A.RPow.apply(base, self)
        except _NotAScalar:
            return NotImplemented

    def __matmul__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        return _A.matmul(self, other)

    def __rmatmul__(self, other):
        return _A.matmul(other, self)

    def __neg__(self):
        return _A.Neg.apply(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _U.abs(self)

    def __iadd__(self, other):
        return _IP.inplace(self, _A.add, other)

    def __isub__(self, other):
        return _IP.inplace(self, _A.sub, other)

    def __imul__(self, other):
        return _IP.inplace(self, _A.mul, other)

    def __itruediv__(self, other):
        return _IP.inplace(self, _A.div, other)

    def __eq__(self, other):
        try:
            return _C.eq(self, other)
        except _NotAScalar:
            return NotImplemented

    def __ne__(self, other):
        try:
            return _C.ne(self, other)
        except _NotAScalar:
            return NotImplemented

    def __lt__(self, other):
        try:
            return _C.lt(self, other)
        except _NotAScalar:
            return NotImplemented

    def __le__(self, other):
        try:
            return _C.le(self, other)
        except _NotAScalar:
            return NotImplemented

    def __gt__(self, other):
        try:
            return _C.gt(self, other)
        except _NotAScalar:
            return NotImplemented

    def __ge__(self, other):
        try:
            return _C.ge(self, other)
        except _NotAScalar:
            return NotImplemented

    def __and__(self, other):
        try:
            return _C.bitwise_and(self, other)
        except _NotAScalar:
            return NotImplemented

    __rand__ = __and__

    def __or__(self, other):
        try:
            return _C.bitwise_or(self, other)
        except _NotAScalar:
            return NotImplemented

    __ror__ = __or__

    def __xor__(self, other):
        try:
            return _C.bitwise_xor(self, other)
        except _NotAScalar:
            return NotImplemented

    __rxor__ = __xor__

    def __invert__(self):
        if self._dtype._kind >= 2:  # (the operator's own check, before the kernel's)
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return _C.bitwise_not(self)

    def __getitem__(self, key):
        return _I.getitem(self, key)

    def __setitem__(self, key, value):
        _IP.setitem(self, key, value)

    def where(self, condition, other):
        return _I.where(condition, self, other)


    def zero_(self):
        """Fill with zeros in place."""
        return _IP.inplace(self, _I.Zero.apply) if _needs_graph(self) else _fill(self, 0)

    def fill_(self, value):
        """Fill with ``value`` (a number or a 0-d tensor) in place."""
        if _needs_graph(self) or (isinstance(value, Tensor) and (value._requires_grad or value._data.ndim
                                                                 or value._ext is not None)):
            return _IP.inplace(self, _I.fill_value, value)
        return _fill(self, value.item() if isinstance(value, Tensor) else value)

    def copy_(self, other, non_blocking: bool = False):
        """Copy ``other`` (broadcast) into this tensor in place (``non_blocking``: a no-op on the CPU, as torch's)."""
        if not isinstance(other, Tensor):
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return _IP.inplace(self, _I.copy_value, other)

    @property
    def T(self):
        n = self._data.ndim
        if n == 2:
            return _S.permute(self, (1, 0))
        if n > 2:
            import warnings

            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                          "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                          "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
                          "to reverse the dimensions of a tensor.", UserWarning, stacklevel=2)
        return _S.permute(self, tuple(range(n - 1, -1, -1)))

    @property
    def mT(self):
        if self._data.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return _S.transpose(self, -2, -1)

    @property
    def H(self):
        n = self._data.ndim
        if n == 0:
            return _CX.conj(self)
        if n != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
                               + (" For batches of matrices, consider using tensor.mH" if n > 2 else ""))
        return _CX.conj(_S.permute(self, (1, 0)))

    @property
    def mH(self):
        if self._data.ndim < 2:
            raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return _CX.conj(_S.transpose(self, -2, -1))

    def view_as(self, other):
        return _S.view(self, other._data.shape)

    def reshape_as(self, other):
        return _S.reshape(self, other._data.shape)

    def expand_as(self, other):
        return _S.expand(self, other._data.shape)

    def split(self, split_size, dim: int = 0):
        """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the sizes in a list."""
        return _S.split(self, split_size, dim)

    def contiguous(self, *, memory_format=_L.contiguous_format):
        """The tensor itself when laid out as ``memory_format`` asks (row-major by default), else such a copy."""
        if _L.is_contiguous(self._data, memory_format):
            return self
        return _S.clone(self, memory_format=memory_format)

    # new_* take torch's factory options; ember/_args.py checks layout and pin_memory (bind, below)
    def new_tensor(self, data, *, dtype=None, device=None, pin_memory=False, requires_grad=False):
        return _FA.tensor(data, dtype=dtype or self._dtype, device=device or "cpu", requires_grad=requires_grad)

    def new_zeros(self, *sizes, size=None, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
        return _FA.zeros(*sizes, size=size, dtype=dtype or self._dtype, device=device or "cpu",
                         requires_grad=requires_grad)

    def new_ones(self, *sizes, size=None, dtype=None, layout=None, device=None, pin_memory=False,
                 requires_grad=False):
        return _FA.ones(*sizes, size=size, dtype=dtype or self._dtype, device=device or "cpu",
                        requires_grad=requires_grad)

    def new_empty(self, *sizes, size=None, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
        return _FA.empty(*sizes, size=size, dtype=dtype or self._dtype, device=device or "cpu",
                         requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=False,
                 requires_grad=False):
        return _FA.full(size, fill_value, dtype=dtype or self._dtype, device=device or "cpu",
                        requires_grad=requires_grad)

    def equal(self, other) -> bool:
        """True when both have the same shape and elements."""
        if _mode.tracer is not None:
            _mode.tracer.read(self, "torch.equal")
        return self._data.shape == other._data.shape and bool(np.array_equal(self._data, other._data))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        if _mode.tracer is not None:
            _mode.tracer.read(self, "torch.allclose")
        return bool(np.allclose(self._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))

    # ---- Tensor methods: elementwise (ops/elementwise.py) ----
    # (one block per op family: add methods of the family here, nowhere else)

    def sign_(self):
        return _IP.inplace(self, _U.sign)

    def __floordiv__(self, other):
        return _E.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _E.floor_divide(other, self)

    def __mod__(self, other):
        return _E.remainder(self, other)

    def __rmod__(self, other):
        return _E.remainder(other, self)

    def __lshift__(self, other):
        return _E.bitwise_left_shift(self, other)

    def __rlshift__(self, other):
        return _E.bitwise_left_shift(other, self)

    def __rshift__(self, other):
        return _E.bitwise_right_shift(self, other)

    def __rrshift__(self, other):
        return _E.bitwise_right_shift(other, self)

    def __ifloordiv__(self, other):
        return _IP.inplace(self, _E.floor_divide, other)

    def __imod__(self, other):
        return _IP.inplace(self, _E.remainder, other)

    def __ilshift__(self, other):
        return _IP.inplace(self, _E.bitwise_left_shift, other)

    def __irshift__(self, other):
        return _IP.inplace(self, _E.bitwise_right_shift, other)


    # ---- Tensor methods: reductions, sorting, scans (ops/reduction.py, ops/sorting.py) ----
    # (one block per op family: add methods of the family here, nowhere else)


    # ---- Tensor methods: linear algebra (ops/linalg.py) ----
    # (one block per op family: add methods of the family here, nowhere else)
    def matrix_power(self, n):
        return _DEC.matrix_power(self, n)
    def pinverse(self, rcond=1e-15):
        return _DEC.pinverse(self, rcond)


    # ---- Tensor methods: shape and indexing (ops/shape.py, ops/indexing.py) ----
    # (one block per op family: add methods of the family here, nowhere else)



    # ---- Tensor methods: conversions and random (ops/random.py) ----
    # (one block per op family: add methods of the family here, nowhere else)
    def uniform_(self, from_: float = 0, to: float = 1, *, generator=None, **kwargs):
        """Fill with uniform samples from [from, to)."""
        return _IP.inplace(self, _RND.uniform_value, kwargs.pop("from", from_), to, generator=generator, **kwargs)

    def normal_(self, mean: float = 0, std: float = 1, *, generator=None):
        return _IP.inplace(self, _RND.normal_value, mean, std, generator=generator)

    def log_normal_(self, mean: float = 1, std: float = 2, *, generator=None):
        return _IP.inplace(self, _RND.log_normal_value, mean, std, generator=generator)

    def cauchy_(self, median: float = 0, sigma: float = 1, *, generator=None):
        return _IP.inplace(self, _RND.cauchy_value, median, sigma, generator=generator)

    def exponential_(self, lambd: float = 1, *, generator=None):
        return _IP.inplace(self, _RND.exponential_value, lambd, generator=generator)

    def geometric_(self, p: float, *, generator=None):
        return _IP.inplace(self, _RND.geometric_value, p, generator=generator)

    def random_(self, *args, generator=None, **kwargs):
        """Fill with integers from [from, to) (default: [0, 2**mantissa digits or the dtype's max])."""
        return _IP.inplace(self, _RND.random_value, *args, generator=generator, **kwargs)

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fill with ones with probability ``p`` (a number or a tensor broadcast to this shape), else zeros."""
        return _IP.inplace(self, _RND.bernoulli_value, p, generator=generator)

    def bernoulli(self, p=None, *, generator=None):
        return _RND.bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None):
        return _RND.multinomial(self, num_samples, replacement, generator=generator)

    def __dlpack__(self, *args, **kwargs):
        """Export as a DLPack capsule (through NumPy's exporter); tensors requiring grad are refused."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return _DL._export(self, *args, **kwargs)

    def __dlpack_device__(self):
        return _DL._cpu_device()

    # ---- Tensor methods: surface (h-surface) ----
    # Bindings of torch.Tensor names to what ember has (ember/_surface.py, the op families), in-place forms of
    # comparison/logical/bitwise ops, in-place view-metadata changes (t_, transpose_ ...), legacy constructors.


    def polygamma(self, n: int) -> "Tensor":
        return _E.polygamma(n, self)

    def polygamma_(self, n: int) -> "Tensor":
        return _IP.inplace(self, lambda t: _E.polygamma(n, t))

    def float_power_(self, exponent) -> "Tensor":
        cplx = self._dtype.is_complex or (exponent._dtype.is_complex if isinstance(exponent, Tensor)
                                          else type(exponent) is complex)
        want = D.complex128 if cplx else D.float64
        if self._dtype is not want:
            raise RuntimeError(f"the base given to float_power_ has dtype {_IP._title(self._dtype)} but the "
                               f"operation's result requires dtype {want._scalar_name}")
        return _IP.inplace(self, _E.float_power, exponent)

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> "Tensor":
        """Write ``fill_value`` on the main diagonal (all dims equal, or 2-d; ``wrap``: restart below tall ones)."""
        a = self._data
        if a.ndim < 2:
            raise RuntimeError("dimensions must larger than 1")
        if a.ndim > 2 and len(set(a.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        mask = np.zeros(a.shape, bool)
        n = min(a.shape)
        mask[(np.arange(n),) * a.ndim] = True
        if wrap and a.ndim == 2:
            mask.reshape(-1)[::a.shape[1] + 1] = True  # row-major positions one row and one column apart
        keep = _wrap(mask, D.bool)
        return _IP.inplace(self, lambda t: _I.where(keep, fill_value, t))

    def is_nonzero(self) -> bool:
        """The truth value of a one-element tensor."""
        return self.__bool__()

    @property
    def real(self) -> "Tensor":
        """The real part (a view sharing memory for complex tensors; the tensor itself for real ones)."""
        return _CX.real(self)

    @real.setter
    def real(self, value) -> None:
        _CX.real(self).copy_(value if isinstance(value, Tensor) else _wrap(np.asarray(value), D._scalar_dtype(value)))

    @property
    def imag(self) -> "Tensor":
        """The imaginary part of a complex tensor (a view sharing memory)."""
        return _CX.imag(self)

    @imag.setter
    def imag(self, value) -> None:
        _CX.imag(self).copy_(value if isinstance(value, Tensor) else _wrap(np.asarray(value), D._scalar_dtype(value)))

    def unfold(self, dimension: int, size: int, step: int) -> "Tensor":
        """A view of all windows of ``size`` elements, ``step`` apart, along ``dimension`` (as a new last dim)."""
        return _I.unfold(self, dimension, size, step)

    def apply_(self, callable) -> "Tensor":
        """Replace each element x by ``callable(x)`` (Python numbers), in place."""
        if self._requires_grad and _mode.grad_enabled:
            raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() "
                               "instead.")
        _IP.check_inplace(self)
        flat = self._data.reshape(-1)
        self._data[...] = np.array([callable(v) for v in flat.tolist()], self._data.dtype).reshape(self._data.shape)
        self._bump()
        return self

    def map_(self, other: "Tensor", callable) -> "Tensor":
        """Replace each element x by ``callable(x, y)`` with y from ``other`` (broadcast), in place."""
        return self._map(callable, other)

    def map2_(self, x: "Tensor", y: "Tensor", callable) -> "Tensor":
        return self._map(callable, x, y)

    def _map(self, callable, *others) -> "Tensor":
        if self._requires_grad and _mode.grad_enabled:
            raise RuntimeError("Can't call map_() on Variable that requires grad. Use var.detach().map_() instead.")
        _IP.check_inplace(self)
        cols = [np.broadcast_to(o._data, self._data.shape).reshape(-1).tolist() for o in others]
        vals = [callable(*args) for args in zip(self._data.reshape(-1).tolist(), *cols)]
        self._data[...] = np.array(vals, self._data.dtype).reshape(self._data.shape)
        self._bump()
        return self

    def resize_(self, *sizes, size=None, memory_format=None) -> "Tensor":
        """Give the tensor ``size``, keeping its leading elements in row-major order (new ones uninitialised);
        ``memory_format`` lays the result out so (row-major when None)."""
        if size is not None:
            sizes = (size,)
        size = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else tuple(sizes)
        if self._requires_grad and _mode.grad_enabled:
            raise RuntimeError("cannot resize variables that require grad")
        if any(s < 0 for s in size):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
        n = int(np.prod(size))
        if _mode.tracer is not None:  # ember.compile: a new array for the tensor, made outside any op
            _mode.tracer.unsupported("Tensor.resize_")
        if n == self._data.size:
            self._data = self._data.reshape(size)
        else:
            new = np.zeros(n, self._data.dtype)
            k = min(n, self._data.size)
            new[:k] = self._data.reshape(-1)[:k]
            self._data = new.reshape(size)
        if memory_format is not None and memory_format is not _L.preserve_format \
                and not _L.is_contiguous(self._data, memory_format):
            laid = _L.empty(size, self._data.dtype, memory_format)
            laid[...] = self._data
            self._data = laid
        self._bump()
        return self

    def resize_as_(self, the_template: "Tensor", *, memory_format=None) -> "Tensor":
        return self.resize_(tuple(the_template.shape), memory_format=memory_format)

    def resize(self, *sizes) -> "Tensor":
        """A resized copy (deprecated in torch for reshape / resize_)."""
        return self.detach().clone().resize_(*sizes)

    def resize_as(self, tensor: "Tensor") -> "Tensor":
        return self.resize(tuple(tensor.shape))

    def new(self, *args, **kwargs) -> "Tensor":
        """Legacy constructor of this dtype: new(2, 3) (uninitialised), new([1, 2]) (data), new() (empty)."""
        if kwargs.pop("device", None) not in (None, "cpu"):
            raise RuntimeError("ember tensors live on the CPU")
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0]
        return _wrap(_legacy_array(args, self._dtype), self._dtype)

    def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                          requires_grad=False):
        return _SF.empty_strided(size, stride, dtype=dtype or self._dtype, device=device,
                                 requires_grad=requires_grad)

    def dim_order(self, *, ambiguity_check: bool | list = False) -> tuple:
        """Dims from outermost to innermost in memory (NOTE [dim order] in _layout.py)."""
        return _L.dim_order(self, ambiguity_check)

    def const_data_ptr(self) -> int:
        return self.data_ptr()

    def to_dense(self, dtype=None, *, masked_grad=None) -> "Tensor":
        """The tensor itself (strided tensors are dense)."""
        return self if dtype is None or dtype is self._dtype else self.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """The nonzero entries as a sparse COO tensor (NOTE [sparse COO over dense storage])."""
        from .sparse import to_sparse

        return to_sparse(self, sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def to_sparse_coo(self) -> "Tensor":
        return self.to_sparse()

    # A strided tensor has no COO parts: torch's refusals (ember.sparse.SparseTensor overrides these)
    def indices(self) -> "Tensor":
        raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")

    def values(self) -> "Tensor":
        raise RuntimeError("values expected sparse tensor layout but got Strided")

    def coalesce(self) -> "Tensor":
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")

    def is_coalesced(self) -> bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")

    def sparse_dim(self) -> int:
        return 0

    def dense_dim(self) -> int:
        return self.dim()

    def is_set_to(self, tensor: "Tensor") -> bool:
        """Same storage, offset, sizes and strides."""
        return (self.data_ptr() == tensor.data_ptr() and self._data.shape == tensor._data.shape
                and self._data.strides == tensor._data.strides and _SF._storage(self) is _SF._storage(tensor))

    def is_distributed(self) -> bool:
        return False

    is_meta = is_mkldnn = is_mps = is_quantized = is_sparse = is_sparse_csr = is_vulkan = is_xla = is_xpu = \
        is_ipu = is_maia = is_mtia = is_nested = property(lambda self: False,
                                                          doc="False: ember tensors are dense CPU tensors.")


    # ---- Tensor methods: nn (nn/functional.py) ----
    # (one block per op family: add methods of the family here, nowhere else)



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


class _LegacyTensorType(type):
    """``ember.FloatTensor`` and friends: constructors of one dtype, and ``isinstance`` tests of it."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj._dtype is cls.dtype

    def __call__(cls, *args) -> "Tensor":
        return _wrap(_legacy_array(args, cls.dtype), cls.dtype)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


LEGACY_CLASSES = {name: _LegacyTensorType(name, (), {"dtype": d}) for name, d in _LEGACY_TYPES.items()}


def _to_accelerator(t: "Tensor", kind: str, device) -> "Tensor":
    """Tensor.cuda / xpu / ipu / mtia: torch's errors without that accelerator (an index asks for the current
    accelerator, which does not exist)."""
    _check_device(_device_cls(device) if isinstance(device, int) else kind if device is None else device)
    return t  # pragma: no cover - _check_device raises


def _torch_type_name(cls: type) -> str:
    """A class as torch's C++ argument errors name it: torch's C types by their dotted name, others by name."""
    if cls is _LegacyTensorType:
        return "torch.tensortype"
    if cls.__module__.startswith("ember") and cls.__name__ in ("Size", "dtype", "device", "Generator", "layout",
                                                               "memory_format"):
        return "torch." + cls.__name__
    return cls.__name__


_new_size = tuple.__new__


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


class Size(tuple):
    """A tensor shape: a tuple of ints printed as ``torch.Size([2, 3])``."""

    def __new__(cls, sizes=()):
        out = []
        for i, s in enumerate(sizes):
            if isinstance(s, Tensor) and s._data.size == 1 and not s._dtype.is_floating_point:
                s = int(s)
            elif not isinstance(s, (int, np.integer)):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')")
            out.append(int(s))
        return _new_size(cls, out)

    def __mul__(self, n):
        return _new_size(Size, tuple(self) * n)

    __rmul__ = __mul__

    def __radd__(self, other):
        return _new_size(Size, tuple(other) + tuple(self))

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return _new_size(Size, r) if isinstance(item, slice) else r

    def __add__(self, other):
        return _new_size(Size, tuple(self) + tuple(other))


# NOTE [0-d results are arrays]
# NumPy returns a scalar (np.float32 ...), not a 0-d array, from a ufunc or reduction whose result is 0-d, from
# `arr[i]` to 0-d and from 0-d arithmetic. A tensor always holds an ndarray (in-place ops, `out=`, views and
# `np.copyto` need one, and code that tells arrays from numbers by type would take the scalar for a number), so
# the constructors below turn such a scalar into its 0-d array: one type test on the hot path, and kernels need
# not care. (Batched tensors under vmap hold a placeholder, which is neither.)
_NP_SCALAR = np.generic


def _init(t: Tensor, arr: np.ndarray, dtype: D.dtype, requires_grad: bool) -> None:
    if type(arr) is not np.ndarray and isinstance(arr, _NP_SCALAR):
        arr = np.asarray(arr)
    t._data = arr
    t._dtype = dtype
    t._requires_grad = requires_grad
    t._grad_fn = None
    t._output_nr = 0
    t._grad = None
    t._vc = None
    t._base = None
    t._acc = None
    t._ext = {"inference": True} if _mode.inference else None


_new = object.__new__
_BY_NP = D._BY_NP


def _wrap(arr: np.ndarray, dtype: D.dtype) -> Tensor:
    """A plain tensor around ``arr`` (no copy, no graph). The hot-path constructor."""
    if type(arr) is not np.ndarray and isinstance(arr, _NP_SCALAR):  # NOTE [0-d results are arrays]
        arr = np.asarray(arr)
    t = _new(Tensor)
    t._data = arr
    t._dtype = dtype
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._grad = None
    t._vc = None
    t._base = None
    t._acc = None
    t._ext = {"inference": True} if _inference_blocks[0] and _mode.inference else None
    return t


def _wrap_out(arr: np.ndarray, dtype: D.dtype, grad_fn, output_nr: int) -> Tensor:
    """An op's output recorded in the graph: ``_wrap`` with its history set (one store per slot)."""
    if type(arr) is not np.ndarray and isinstance(arr, _NP_SCALAR):  # NOTE [0-d results are arrays]
        arr = np.asarray(arr)
    t = _new(Tensor)
    t._data = arr
    t._dtype = dtype
    t._requires_grad = True
    t._grad_fn = grad_fn
    t._output_nr = output_nr
    t._grad = None
    t._vc = None
    t._base = None
    t._acc = None
    t._ext = {"inference": True} if _inference_blocks[0] and _mode.inference else None
    return t


def _all_examples(t: Tensor) -> np.ndarray:
    """The values of ``t``, or of every example of a batched tensor under vmap (for argument checks only)."""
    while type(t._data) is not np.ndarray and not isinstance(t._data, np.generic):  # (or a 0-d's NumPy scalar)
        t = t._phys
    return t._data


def _wrap_any(arr: np.ndarray) -> Tensor:
    return _wrap(arr, D.from_numpy_dtype(arr.dtype))


def _rewrap(arr: np.ndarray, dtype, grad_fn, output_nr: int) -> Tensor:
    """A tensor around ``arr`` whose history is ``grad_fn`` (for unpacking saved outputs)."""
    if dtype is None:
        dtype = _BY_NP.get(arr.dtype) or D.from_numpy_dtype(arr.dtype)
    return _wrap_out(arr, dtype, grad_fn, output_nr)


def _rebuild(arr, requires_grad):
    t = _wrap(arr, D.from_numpy_dtype(arr.dtype))
    t._requires_grad = requires_grad
    return t


def _real_value(x: np.ndarray, ctype: str):
    """A one-element array as a real number: a complex one only when its imaginary part is 0 (torch's error)."""
    if x.dtype.kind == "c":
        if x.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return x.real
    return x


def _wrap_dim_strict(dim: int, ndim: int) -> int:
    """Like ``_wrap_dim`` but a 0-d tensor has no dimension to ask about (size(0), stride(0))."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _as_dim(dim) -> int:
    """``dim`` as an int (Python and NumPy integers, integer 0-d tensors); torch's TypeError for anything else."""
    if type(dim) is int:
        return dim
    if not isinstance(dim, bool):
        try:
            return _operator_index(dim)
        except TypeError:
            pass
    raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}")


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if type(dim) is not int:
        dim = _as_dim(dim)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def _convert(t: Tensor, dtype: D.dtype) -> Tensor:
    from .ops.shape import _to_dtype

    return _to_dtype(t, dtype)


_graph._wrap = _wrap
_graph._wrap_plain = _wrap_any
_graph._rewrap = _rewrap
_graph._wrap_number = lambda v: _wrap_any(np.asarray(v))
_graph._VersionCounter = _VersionCounter


def _needs_graph(t: Tensor) -> bool:
    """Whether an in-place fill must run as an op: it joins a graph, or a forward-AD level sees it."""
    return (_mode.grad_enabled and t._requires_grad) or _mode.interpose is not None


def _fill(t: Tensor, value) -> Tensor:
    _IP.check_inplace(t)
    if not t._data.flags.writeable:
        _IP._write(t._data, t._data)
    t._data[...] = value
    t._bump()
    return t


# Op modules import Tensor, so they are bound here, after it exists; methods above look them up
# as module globals at call time (the F401 ones are imported for their order only).
from .ops import arithmetic as _A, unary as _U, reduction as _R, shape as _S  # noqa: E402,F401
from .ops import indexing as _I, comparison as _C, _inplace as _IP  # noqa: E402
from .ops import sorting as _SO  # noqa: E402,F401
from .ops import elementwise as _E  # noqa: E402
from .ops import random as _RND  # noqa: E402
from .utils import dlpack as _DL  # noqa: E402
from .ops import linalg as _LA, decompositions as _DEC  # noqa: E402,F401
from . import _surface as _SF  # noqa: E402
from . import _factories as _FA  # noqa: E402
from .ops import composites as _CO  # noqa: E402,F401 - looked up by name in the surface method table
from .ops import complex_numbers as _CX  # noqa: E402
from . import _methods  # noqa: E402 - the methods that are functions with the tensor first (NOTE [Tensor methods from functions])

_methods.bind(Tensor)
