"""Parameter: a leaf tensor that requires grad and registers itself on Modules; Buffer; the uninitialized
parameters and buffers of lazy modules."""
from __future__ import annotations

import sys

import numpy as np

from .._tensor import Tensor, _init
from .. import _dtype as D
from .._device import _check_device

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin", "is_lazy"]


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = Tensor.__new__(Tensor)
            _init(data, np.empty(0, D.get_default_dtype().np), D.get_default_dtype(), False)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, not {type(data).__name__}")
        self = object.__new__(cls)
        _init(self, data._data, data._dtype, False)
        self._vc = data._version_counter()
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self._requires_grad))


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    __slots__ = ("persistent",)

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = Tensor.__new__(Tensor)
        self = object.__new__(cls)
        _init(self, data._data, data._dtype, data._requires_grad)
        self.persistent = persistent
        return self

    def __init__(self, data=None, *, persistent: bool = True) -> None:
        pass


# NOTE [uninitialized tensors]
# A lazy module's parameters and buffers have no shape until its first forward (or load_state_dict) calls
# ``materialize``. Until then, as in torch, only metadata, ``size()``, dtype conversions and ``copy_`` may be used:
# a Tensor method outside ``_ALLOWED`` (found by __getattribute__ on the instance) or any op reading the storage
# (an ndarray whose NumPy entry points refuse, ``_Unset``) raises torch's ValueError, and ``shape`` raises its
# RuntimeError (read by an ember function's argument checks, it raises the ValueError naming that function, as torch
# refuses the call); operators raise it too, naming the tensor call torch's refusal names. ``materialize`` gives the tensor real (uninitialized) storage and turns it into ``cls_to_become``.
_ALLOWED = frozenset({"size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char", "short",
                      "int", "long", "cuda", "cpu", "to", "get_device", "materialize", "share_memory_"})


# modules whose reading of ``shape`` is itself torch's refusal (not a function called on the tensor)
_SHAPE_READERS = frozenset({"ember.nn.modules.module", "ember.nn.init"})


def _refuse(cls_name: str, func: str) -> ValueError:
    return ValueError(f"Attempted to use an uninitialized parameter in {func}. This error happens when you are using "
                      f"a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls_name}` objects. When using "
                      f"LazyModules Call `forward` with a dummy batch to initialize the parameters before calling torch "
                      f"functions")


class _Unset(np.ndarray):
    """The empty storage of an uninitialized tensor: NumPy functions and ufuncs on it raise torch's error."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _refuse("UninitializedParameter", f"<built-in function {ufunc.__name__}>")

    def __array_function__(self, func, types, args, kwargs):
        raise _refuse("UninitializedParameter", f"<built-in function {func.__name__}>")


def _unset(dtype: D.dtype) -> np.ndarray:
    return np.empty(0, dtype.np).view(_Unset)


class UninitializedTensorMixin:
    """Shape-less until ``materialize`` (NOTE [uninitialized tensors])."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def __getattribute__(self, name: str):
        if name[0] != "_" and name not in _ALLOWED:
            attr = getattr(type(self), name, None)
            if callable(attr) and not isinstance(attr, (property, type)):
                raise _refuse(type(self).__name__, f"<method '{name}' of 'torch._C.TensorBase' objects>")
        return object.__getattribute__(self, name)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor storage of ``shape`` (uninitialized values) and make it a ``cls_to_become``, in place."""
        _check_device(device)
        if dtype is not None:
            self._dtype = D.to_dtype(dtype)
        self._data = np.empty(tuple(shape) if not isinstance(shape, int) else (shape,), self._dtype.np)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        caller = sys._getframe(1)
        while caller.f_globals.get("__name__") == __name__:  # (past __getattribute__)
            caller = caller.f_back
        where = caller.f_globals.get("__name__", "")
        if where.startswith("ember.") and where not in _SHAPE_READERS:
            # an ember function reading the shape for its checks: torch refuses the call itself
            raise _refuse(type(self).__name__, f"<built-in function {caller.f_code.co_name}>")
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        return (type(self), (self._requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._requires_grad, None, self._dtype)
        return memo[id(self)]


def _method(name: str) -> str:
    return f"<method '{name}' of 'torch._C.TensorBase' objects>"


# operators (Python calls them on the type, past __getattribute__) -> the tensor call torch names when refusing
_OPERATORS = {"__add__": _method("add"), "__radd__": _method("add"), "__iadd__": _method("add_"),
              "__sub__": _method("sub"), "__rsub__": "<function Tensor.__rsub__>", "__isub__": _method("sub_"),
              "__mul__": _method("mul"), "__rmul__": _method("mul"), "__imul__": _method("mul_"),
              "__truediv__": _method("div"), "__rtruediv__": "<function Tensor.__rdiv__>",
              "__itruediv__": _method("div_"), "__matmul__": _method("matmul"), "__rmatmul__": _method("__rmatmul__"),
              "__pow__": "<function TensorBase.pow>", "__rpow__": "<function Tensor.__rpow__>",
              "__neg__": _method("neg"), "__abs__": _method("abs"), "__bool__": _method("__bool__"),
              "__float__": _method("__float__"), "__int__": _method("__int__"), "__len__": "<function Tensor.__len__>",
              "__iter__": _method("dim"),
              "__getitem__": "<slot wrapper '__getitem__' of 'torch._C.TensorBase' objects>",
              "__setitem__": "<slot wrapper '__setitem__' of 'torch._C.TensorBase' objects>"}


def _refusing(func: str):
    def op(self, *args, **kwargs):
        raise _refuse(type(self).__name__, func)
    return op


for _name, _func in _OPERATORS.items():
    setattr(UninitializedTensorMixin, _name, _refusing(_func))
del _name, _func


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (for lazy modules); becomes a ``Parameter`` when materialized."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        _check_device(device)
        self = object.__new__(cls)
        dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
        _init(self, _unset(dt), dt, requires_grad)
        return self

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (for lazy modules); becomes a plain Tensor when materialized."""

    __slots__ = ()
    cls_to_become = Tensor
    _is_buffer = True  # (a Module registers it as a buffer, as it does a Buffer)

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        _check_device(device)
        self = object.__new__(cls)
        dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
        _init(self, _unset(dt), dt, requires_grad)
        self._ext_dict()["persistent"] = persistent
        return self

    def __init__(self, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True) -> None:
        pass

    @property
    def persistent(self) -> bool:
        return self._ext["persistent"]


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)
