"""Parameter: a leaf tensor that requires grad and registers itself on Modules."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _init
from .. import _dtype as D

__all__ = ["Parameter", "Buffer", "UninitializedParameter"]


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


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (for lazy modules)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        self = Parameter.__new__(cls, None, requires_grad)
        self._dtype = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
        self._data = np.empty(0, self._dtype.np)
        return self

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the parameter storage of ``shape`` (uninitialized values) and make it a plain Parameter, in place."""
        if dtype is not None:
            self._dtype = D.to_dtype(dtype)
        self._data = np.empty(tuple(shape) if not isinstance(shape, int) else (shape,), self._dtype.np)
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


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
