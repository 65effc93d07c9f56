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
from . import _backend as _B
from ._device import device as _device_cls, _cpu
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


def _type_string(dt: D.dtype) -> str:
    """A CPU tensor's type as torch's C++ toString() names it in messages: the legacy class name, or CPU...Type for
    the dtypes without one there (complex, bfloat16)."""
    s = dt._scalar_name
    return f"CPU{s}Type" if dt.is_complex or s == "BFloat16" else f"torch.{s}Tensor"


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""

    __slots__ = ("_data", "_dtype", "_requires_grad", "_grad_fn", "_output_nr", "_grad",
                 "_vc", "_base", "_acc", "_ext", "__weakref__")

    # ``Tensor(...)`` is the legacy constructor (torch.Tensor(2, 3) / torch.Tensor([1, 2])); ``Tensor(t)`` is an
    # alias of ``t`` (a view of any dtype, as torch's).
    def __new__(cls, *args, **kwargs):
        if cls is Tensor and len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
            return _I.Alias.apply(args[0])
        self = object.__new__(cls)
        _init(self, np.empty(0, np.float32), D.float32, False)
        return self

    def __init__(self, *args, device=None, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"Tensor() got unexpected keyword arguments {list(kwargs)}")
        if len(args) == 1 and isinstance(args[0], Tensor) and type(self) is Tensor:
            return  # (the alias __new__ made)
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
        d = self._data
        return _cpu if type(d) is np.ndarray else _B.device_of(d)  # NOTE [device seam] in ember/_backend.py

    @property
    def is_cuda(self) -> bool:
        d = self._data
        return type(d) is not np.ndarray and _B.device_of(d).type == "cuda"

    @property
    def is_cpu(self) -> bool:
        d = self._data
        return type(d) is np.ndarray or _B.device_of(d).type == "cpu"

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
        return _B.address(self._data)

    def storage_offset(self) -> int:
        base = self._data
        while base.base is not None and isinstance(base.base, np.ndarray):
            base = base.base
        off = self.data_ptr() - _B.address(base)
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

    __array_priority__ = 1000  # NumPy defers ndarray <op> Tensor to our reflected operators
    __hash__ = object.__hash__

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._data, self._requires_grad))

    # ----------------------------------------------------------------- ops (ember.ops)
    # Python's binary and in-place operators are bound from ember/_methods.py (_OPERATORS).
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
        return _J.split(self, split_size, dim)

    def contiguous(self, *, memory_format=_L.contiguous_format):
        """The tensor itself when laid out as ``memory_format`` asks (row-major by default), else such a copy."""
        if _L.is_contiguous(self._data, memory_format):
            return self
        return _S.clone(self, memory_format=memory_format)

    # new_* take torch's factory options; ember/_args.py checks layout and pin_memory (bind, below)

    def equal(self, other) -> bool:
        """True when both have the same shape and elements."""
        if _mode.tracer is not None:
            _mode.tracer.read(self, "torch.equal")
        return self._data.shape == other._data.shape and bool(np.array_equal(self._data, other._data))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        if isinstance(other, Tensor) and other._dtype is not self._dtype:  # (isclose's check)
            raise RuntimeError(f"{self._dtype._scalar_name} did not match {other._dtype._scalar_name}")
        if _mode.tracer is not None:
            _mode.tracer.read(self, "torch.allclose")
        return bool(np.allclose(self._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))

    # ---- Tensor methods: reductions, sorting, scans (ops/reduction.py, ops/sorting.py) ----
    # (one block per op family: add methods of the family here, nowhere else)


    # ---- Tensor methods: linear algebra (ops/linalg.py) ----
    # (one block per op family: add methods of the family here, nowhere else)


    # ---- Tensor methods: shape and indexing (ops/shape.py, ops/indexing.py) ----
    # (one block per op family: add methods of the family here, nowhere else)



    # ---- Tensor methods: conversions and random (ops/random.py) ----
    # (one block per op family: add methods of the family here, nowhere else)

    # ---- Tensor methods: truth value, legacy constructors and the rest written here ----
    # (the methods that are functions with the tensor first, in-place view-metadata changes (t_, transpose_ ...)
    # included, are bound from ember/_methods.py's tables)


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

    # A strided tensor has no COO parts: torch's refusals (ember.sparse.SparseTensor overrides these)

    is_meta = is_mkldnn = is_mps = is_quantized = is_sparse = is_sparse_csr = is_vulkan = is_xla = is_xpu = \
        is_ipu = is_maia = is_mtia = is_nested = property(lambda self: False,
                                                          doc="False: ember tensors are dense CPU tensors.")


    # ---- Tensor methods: nn (nn/functional.py) ----
    # (one block per op family: add methods of the family here, nowhere else)



_new_size = tuple.__new__


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
    while type(t._data) not in _B.ARRAYS and not isinstance(t._data, np.generic):  # (or a 0-d's NumPy scalar)
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


_graph._wrap = _wrap
_graph._wrap_plain = _wrap_any
_graph._rewrap = _rewrap
_graph._wrap_number = lambda v: _wrap_any(np.asarray(v))
_graph._VersionCounter = _VersionCounter


# Op modules import Tensor, so they are bound here, after it exists; methods above look them up
# as module globals at call time (the F401 ones are imported for their order only).
from .ops import arithmetic as _A, piecewise as _U, reduction as _R, shape as _S  # noqa: E402,F401
from .ops import indexing as _I, comparison as _C, _inplace as _IP  # noqa: E402
from .ops import sorting as _SO, joining as _J  # noqa: E402,F401
from .ops import linalg as _LA, decompositions as _DEC  # noqa: E402,F401
from .ops import composites as _CO  # noqa: E402,F401 - looked up by name in the surface method table
from .ops import complex_numbers as _CX  # noqa: E402
from ._conversions import _legacy_array  # noqa: E402
from . import _methods  # noqa: E402 - the methods that are functions with the tensor first (NOTE [Tensor methods from functions])

_methods.bind(Tensor)
