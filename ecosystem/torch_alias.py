"""`import torch` and `import torch.X` give ember and ember.X: the same module objects, under both names.

The ecosystem harness copies this file into the venv that has no torch and names it in a ``.pth`` line, so the
finder is in place when the interpreter starts, before any library imports torch. Nothing is imported until a
``torch`` name is: interpreters that never touch torch pay one list entry.
"""
import importlib
import importlib.abc
import importlib.util
import sys


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch[.X]`` as ``ember[.X]``; a name ember lacks is not found (ModuleNotFoundError, as for torch)."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch" and not name.startswith("torch."):
            return None
        try:
            found = importlib.util.find_spec("ember" + name[5:])
        except ModuleNotFoundError:
            return None
        return None if found is None else importlib.util.spec_from_loader(name, self, origin=found.origin)

    def create_module(self, spec):
        # The import system keeps an existing module's __name__/__spec__/__path__ (it only fills missing ones),
        # so torch.nn IS ember.nn: one set of classes, and isinstance agrees whichever name was imported.
        return importlib.import_module("ember" + spec.name[5:])

    def exec_module(self, module):
        pass


def install():
    if not any(isinstance(f, TorchAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchAlias())


install()
