"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from itertools import chain
from typing import Any, Iterable, Iterator, Mapping, TypeVar

from ..._tensor import Tensor
from ...autograd import graph as _graph
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _abs_index(idx: int, n: int, what: str) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n if n else idx


_S = TypeVar("_S", bound="_ModuleSequence")

_CONTAINER_DEPRECATED = ("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                         "Subclass that instead.")


class Container(Module):
    """Deprecated in torch (FutureWarning when built or subclassed): a Module holding its keyword arguments as
    submodules."""

    def __init_subclass__(cls, **kwargs) -> None:
        warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs: Any) -> None:
        if type(self) is Container:
            warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: submodules numbered "0", "1", ... in order, renumbered after a
    deletion, as torch's."""

    def __delitem__(self, idx) -> None:
        keys = list(self._modules.keys())
        if isinstance(idx, slice):
            for k in keys[idx]:
                delattr(self, k)
        else:
            delattr(self, keys[_abs_index(idx, len(keys), type(self).__name__)])
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self: _S, module: Module) -> _S:
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int) -> Module:
        v = self[key]
        del self[key]
        return v


class Sequential(_ModuleSequence):
    """Modules called in order, each on the previous one's output."""

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules.keys())
        return self._modules[keys[_abs_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx: int, module: Module) -> None:
        keys = list(self._modules.keys())
        setattr(self, keys[_abs_index(idx, len(keys), "Sequential")], module)

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))

    def _check_factor(self, other) -> None:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other: int) -> "Sequential":
        """The same modules (shared, not copied) repeated ``other`` times."""
        self._check_factor(other)
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other: int) -> "Sequential":
        self._check_factor(other)
        return self.extend(list(self) * (other - 1))

    def insert(self, index: int, module: Module) -> "Sequential":
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        mods = list(self._modules.values())
        mods.insert(index + n if index < 0 else index, module)
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(mods))
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        for m in sequential:
            self.append(m)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of modules, registered so their parameters are found."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_abs_index(idx, len(self), "ModuleList")), module)

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return ModuleList(chain(self, other))

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        if not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self) -> str:
        # torch groups runs of identical children: "(0-2): 3 x Linear(...)"
        list_of_reprs = [repr(m) for m in self]
        if not list_of_reprs:
            return self._get_name() + "()"
        start_end_indices = [[0, 0]]
        repeated_blocks = [list_of_reprs[0]]
        for i, r in enumerate(list_of_reprs[1:], 1):
            if r == repeated_blocks[-1]:
                start_end_indices[-1][1] += 1
                continue
            start_end_indices.append([i, i])
            repeated_blocks.append(r)
        lines = []
        main_str = self._get_name() + "("
        for (start_id, end_id), b in zip(start_end_indices, repeated_blocks):
            local_repr = f"({start_id}): {b}"
            if start_id != end_id:
                n = end_id - start_id + 1
                local_repr = f"({start_id}-{end_id}): {n} x {b}"
            lines.append(_addindent(local_repr, 2))
        main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(); iterate over it instead")


class ModuleDict(Module):
    """An ordered dict of modules, registered so their parameters are found."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Add or overwrite entries from a mapping (in its order) or from (key, module) pairs."""
        for key, module in _update_items("ModuleDict", "ModuleDict", modules, (ModuleDict,), False):
            self[key] = module


class ParameterList(Module):
    """A list of parameters (plain tensors are wrapped as Parameters)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_abs_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx: int, param) -> None:
        idx = _abs_index(idx, len(self), "ParameterList")
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value) -> "ParameterList":
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return _params_repr(enumerate(self), lambda p: str(p.dtype))


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors are wrapped as Parameters)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def copy(self) -> "ParameterDict":
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in self._keys.copy():
            del self[k]

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple:
        """The last inserted (key, parameter), removed."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        v = self[k]
        del self[k]
        return k, v

    def fromkeys(self, keys, default=None) -> "ParameterDict":
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters) -> None:
        """Add or overwrite entries: an OrderedDict or ParameterDict in its order, another mapping in sorted key
        order (as torch), or (key, value) pairs in theirs."""
        for key, value in _update_items("ParametersDict", "ParameterDict", parameters, (OrderedDict, ParameterDict),
                                        True):
            self[key] = value

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return _params_repr(self.items(), _typename)


def _update_items(name: str, element_name: str, pairs, ordered: tuple, sort_mappings: bool):
    """The (key, value) pairs a ModuleDict / ParameterDict ``update`` adds, with torch's checks and order: the
    ``ordered`` types and (unless ``sort_mappings``) any mapping in their order, pairs in theirs."""
    if not isinstance(pairs, Iterable):
        raise TypeError(f"{name}.update should be called with an iterable of key/value pairs, but got "
                        f"{type(pairs).__name__}")
    if isinstance(pairs, ordered) or (isinstance(pairs, Mapping) and not sort_mappings):
        return list(pairs.items())
    if isinstance(pairs, Mapping):
        return sorted(pairs.items())
    return _checked_pairs(element_name, pairs)


def _checked_pairs(element_name: str, pairs):
    """Each (key, value) pair, checked as it is reached (the earlier ones are added first, as in torch)."""
    for j, kv in enumerate(pairs):
        if not isinstance(kv, Iterable):
            raise TypeError(f"{element_name} update sequence element #{j} should be Iterable; is{type(kv).__name__}")
        if len(kv) != 2:
            raise ValueError(f"{element_name} update sequence element #{j} has length {len(kv)}; 2 is required")
        yield kv[0], kv[1]


def _typename(t: Tensor) -> str:
    """torch.typename of a tensor: ``torch.FloatTensor``."""
    return "torch." + _graph._type_name(t._dtype)


def _params_repr(items, type_str) -> str:
    """One line per entry: ``  (key): Parameter containing: [<type> of size AxB]``, as torch prints them."""
    lines = []
    for k, p in items:
        if isinstance(p, Tensor):
            kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
            size = "x".join(str(s) for s in p.size())
            lines.append(f"  ({k}): {kind} containing: [{type_str(p)} of size {size}]")
        else:
            lines.append(f"  ({k}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


