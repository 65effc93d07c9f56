"""Configuration modules: torch._dynamo.config, torch._inductor.config, torch.compiler.config.

# NOTE [config modules]
torch's compiler settings live in module objects whose attributes are typed settings (``config.cache_size_limit
= 64``, ``config.triton.cudagraphs``, ``with config.patch(suppress_errors=True):``). ember runs eagerly, so no
setting has an effect; a ``ConfigModule`` keeps torch's defaults for the settings code commonly reads (one
table per module, dotted names for nested groups), records what is set, and answers reads of names it neither
knows nor was given with torch's AttributeError. A name torch has but the table lacks can still be set (and is
then read back), so code written for torch never fails on assignment.
"""
from __future__ import annotations

import copy
import importlib.machinery
import pickle
import sys
import types
from contextlib import ContextDecorator

__all__ = ["ConfigModule"]


class _Group:
    """A nested group of a config module (``config.triton``)."""

    def __init__(self, module: "ConfigModule", prefix: str) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str):
        return self._module._get(self._prefix + name)

    def __setattr__(self, name: str, value) -> None:
        self._module._values[self._prefix + name] = value


class _Patch(ContextDecorator):
    def __init__(self, module: "ConfigModule", changes: dict) -> None:
        self.module, self.changes, self.saved = module, changes, []

    def __enter__(self):
        for key, value in self.changes.items():
            self.module._get(key)  # torch refuses to patch a name it does not have
            self.saved.append((key, self.module._values.get(key, _MISSING)))
            self.module._values[key] = value
        return self

    def __exit__(self, *exc) -> bool:
        for key, old in reversed(self.saved):
            if old is _MISSING:
                self.module._values.pop(key, None)
            else:
                self.module._values[key] = old
        self.saved = []
        return False


_MISSING = object()


class ConfigModule(types.ModuleType):
    """A module of settings with torch's defaults (NOTE [config modules]); registered in ``sys.modules``."""

    def __init__(self, name: str, torch_name: str, defaults: dict) -> None:
        super().__init__(name)
        object.__setattr__(self, "_torch_name", torch_name)
        object.__setattr__(self, "_defaults", dict(defaults))
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "__spec__", importlib.machinery.ModuleSpec(name, None))  # for find_spec
        sys.modules[name] = self

    def _get(self, key: str):
        if key in self._values:
            return self._values[key]
        if key in self._defaults:
            return copy.copy(self._defaults[key])
        prefix = key + "."
        if any(k.startswith(prefix) for k in (*self._defaults, *self._values)):
            return _Group(self, prefix)
        raise AttributeError(f"{self._torch_name}.{key} does not exist")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._get(name)

    def __setattr__(self, name: str, value) -> None:
        self._values[name] = value

    def __delattr__(self, name: str) -> None:
        self._values.pop(name, None)

    def patch(self, arg1=None, arg2=None, **kwargs) -> _Patch:
        """Context manager / decorator setting the given names for its extent."""
        changes = dict(kwargs)
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        return _Patch(self, changes)

    def get_config_copy(self) -> dict:
        return {**copy.deepcopy(self._defaults), **copy.deepcopy(self._values)}

    def save_config(self) -> bytes:
        return pickle.dumps(self.get_config_copy(), protocol=2)

    def load_config(self, maybe_pickled_config) -> None:
        config = maybe_pickled_config
        if not isinstance(config, dict):
            config = pickle.loads(config)
        self._values.update(config)

    def to_dict(self) -> dict:
        return self.get_config_copy()

    def __dir__(self):
        return sorted({k.split(".")[0] for k in (*self._defaults, *self._values)} | {"patch", "get_config_copy"})
