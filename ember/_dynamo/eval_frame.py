"""torch._dynamo.eval_frame: ``OptimizedModule``, what ``torch.compile(module)`` returns."""
from __future__ import annotations

from .. import nn

__all__ = ["OptimizedModule"]


class OptimizedModule(nn.Module):
    """A module compiled by ember.compile: calls go through compiled programs of ``_orig_mod``'s ``__call__``
    (NOTE [compile]); attributes are read from and written to the original module, as torch's. Its state_dict
    keys start with ``_orig_mod.``, as torch's."""

    _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable", "get_compiler_config",
                           "forward", "_forward", "__dict__", "_super_module_initialized"}

    def __init__(self, mod: nn.Module, dynamo_ctx=None) -> None:
        from .._compile.api import CompiledFunction

        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx
        self.forward = CompiledFunction(mod.__call__, module=mod, **(dynamo_ctx if isinstance(dynamo_ctx, dict)
                                                                      else {}))
        self._torchdynamo_orig_callable = mod.__call__

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        if self.__dict__.get("_super_module_initialized"):
            self._orig_mod.training = value

    @property
    def code(self) -> str:
        """The Python source of the latest compiled program (see ``CompiledFunction.code``)."""
        return self.__dict__["forward"].code

    def explain(self) -> str:
        """What was compiled, what runs eagerly and why (see ``CompiledFunction.explain``)."""
        return self.__dict__["forward"].explain()

    def __len__(self) -> int:
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    def __getattr__(self, name: str):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __dir__(self) -> list:
        mine = self._orig_mod.__dir__()
        return mine + [a for a in super().__dir__() if a not in mine]
