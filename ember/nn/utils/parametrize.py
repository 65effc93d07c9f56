"""Parametrizations: a module's tensor computed from stored originals by small modules (torch.nn.utils.parametrize).

# NOTE [parametrized modules]
``register_parametrization(module, "weight", p)`` moves the tensor into
``module.parametrizations.weight`` (a ``ParametrizationList``) as ``original`` (or ``original0``, ``original1``
... when ``p.right_inverse`` splits it), and swaps the module's class for a subclass ``Parametrized<Class>`` that
has a ``weight`` property: reading it runs the list (``p(original)`` then each further parametrization), assigning
to it runs the ``right_inverse`` chain backwards into the originals. As in torch, the originals keep their
identity when they are written (an optimizer holding them keeps working), the state_dict keys become
``parametrizations.weight.original``, and ``cached()`` computes each parametrized tensor once per block.
"""
from __future__ import annotations

import collections.abc
import copy
from contextlib import contextmanager

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_depth = 0
_cache: dict = {}


@contextmanager
def cached():
    """Inside the block, each parametrized tensor is computed on first use and then reused."""
    global _cache_depth, _cache
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache = {}


def _register(module: Module, name: str, t: Tensor) -> None:
    if isinstance(t, Parameter):
        module.register_parameter(name, t)
    else:
        module.register_buffer(name, t)


def _set(dest: Tensor, src: Tensor) -> None:
    """``dest`` takes ``src``'s values, shape and dtype in place, keeping its identity (torch's ``set_``)."""
    dest._data = src._data if src._data is not dest._data else src._data.copy()
    dest._dtype = src._dtype
    dest._bump()


def _check_unchanged(t: Tensor, dtype, shape, message: str, **names) -> None:
    """ValueError(message) when ``t`` lacks the ``dtype`` (checked first) or the ``shape``: ``message`` is a template
    with {attr} (dtype or shape), {old} (the expected value), {new} (``t``'s) and the ``names``."""
    for attr, old in (("dtype", dtype), ("shape", shape)):
        new = getattr(t, attr)
        if new != old:
            raise ValueError(message.format(attr=attr, old=old, new=new, **names))


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its originals (``original`` or ``original0``, ``original1`` ...)."""

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for m in reversed(self):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got "
                             f"{type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set(original, new)
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register(self, f"original{i}", part)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            _check_unchanged(z, dtype, shape, "Registering a parametrization may not change the {attr} of the "
                             "tensor, unless `unsafe` flag is enabled.\nunparametrized {attr}: {old}\nparametrized "
                             "{attr}: {new}")

    def right_inverse(self, value: Tensor) -> None:
        """Write ``value`` into the originals through each parametrization's ``right_inverse``, last first."""
        with no_grad():
            for m in reversed(self):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse.")
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. Got a "
                                 f"sequence of length {len(value)}.")
            for i, t in enumerate(value):
                orig = getattr(self, f"original{i}")
                if not isinstance(t, Tensor):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors or reference-type opaques. "
                                     f"Got element {i} of type {type(t).__name__}.")
                if orig.dtype != t.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {t.dtype} while "
                                     f"`original{i}` has dtype {orig.dtype}")
                _set(orig, t)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in list(self)[1:]:
            x = m(x)
        return x


def _getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _deepcopy(self, memo):
    found = memo.get(id(self))
    if found is not None:
        return found
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _swap_class(module: Module) -> None:
    """Give ``module`` a class of its own (``Parametrized<Class>``) to hold the parametrized properties."""
    cls = type(module)
    body = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        body["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), body)


def _add_property(module: Module, name: str) -> None:
    if hasattr(module, name):
        raise AssertionError(f"Module already has an attribute named '{name}'")

    def get(self) -> Tensor:
        plist = self.parametrizations[name]
        if not _cache_depth:
            return plist()
        key = (id(module), name)
        t = _cache.get(key)
        if t is None:
            t = _cache[key] = plist()
        return t

    def put(self, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(get, put))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Compute ``module.<tensor_name>`` as ``parametrization(original)`` from now on (NOTE [parametrized modules]);
    a second registration on the same name chains after the first."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            _check_unchanged(x, y.dtype, y.shape, "Registering a parametrization may not change the {attr} of the "
                             "tensor, unless the `unsafe` flag is enabled.\nmodule.{name}.{attr}: {old}\n"
                             "parametrization(module.{name}).{attr}: {new}", name=tensor_name)
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                         f"{type(z).__name__}")
                    _check_unchanged(z, y.dtype, y.shape, "The tensor returned by parametrization.right_inverse "
                                     "must have the same {attr} as module.{name}, unless the `unsafe` flag is "
                                     "enabled.\nmodule.{name}.{attr}: {old}\nreturned {attr}: {new}",
                                     name=tensor_name)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _swap_class(module)
            module.parametrizations = ModuleDict()
        _add_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name "
                         f"'{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has parametrizations (on ``tensor_name``, when given)."""
    plists = getattr(module, "parametrizations", None)
    if plists is None or not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo the parametrizations of ``tensor_name``: it becomes a plain parameter (or buffer) again, holding the
    parametrized value (``leave_parametrized``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                _set(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t.detach()) if t.requires_grad else t
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (all, or ``tensor_name``'s) on ``to_module`` and share the
    originals."""
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            for p in from_module.parametrizations[name]:
                register_parametrization(to_module, name, p)
            source, target = from_module.parametrizations[name], to_module.parametrizations[name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                i = 0
                while hasattr(source, f"original{i}"):
                    setattr(target, f"original{i}", getattr(source, f"original{i}"))
                    i += 1
    return to_module
