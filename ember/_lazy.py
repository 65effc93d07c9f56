"""Lazily loaded package attributes: a package lists names whose module is imported on first access.

``import ember`` then stays small (fewer modules, less memory) while ``ember.optim.SGD``,
``ember.save`` or ``from ember.utils import data`` work exactly as if they had been imported eagerly.
"""
from __future__ import annotations

import importlib
import sys
from typing import Callable

__all__ = ["attach", "moved"]


def attach(package: str, table: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list]]:
    """Module ``__getattr__`` and ``__dir__`` for ``package`` (a package or a module). ``table`` maps a public
    name to the module (relative, as in that package's own imports, e.g. ``".optim"``) that is that name, or to ``"module:attr"`` for an
    attribute of it. A resolved name is stored in the package, so later lookups are plain attribute reads."""

    def __getattr__(name: str):
        spec = table.get(name)
        if spec is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = spec.partition(":")
        value = importlib.import_module(module, sys.modules[package].__package__)
        if attr:
            value = getattr(value, attr)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__


def moved(module: str, homes: tuple[str, ...]) -> Callable[[str], object]:
    """Module ``__getattr__`` for ``module``, whose names in ``homes`` (modules relative to its package, each in
    its ``__all__``) were once defined there (NOTE [names of a split module] in ops/indexing.py). A resolved name is
    stored in ``module``, so later lookups are plain attribute reads."""

    def __getattr__(name: str):
        if not name.startswith("__"):
            mod = sys.modules[module]
            for home in homes:
                family = importlib.import_module(home, mod.__package__)
                if name in family.__all__:
                    value = getattr(family, name)
                    setattr(mod, name, value)
                    return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
