"""Weight normalization as a forward pre-hook (torch.nn.utils.weight_norm, deprecated in torch in favour of
parametrizations.weight_norm), and the norm it is built on."""
from __future__ import annotations

import warnings

from ... import _args
from ..._tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from ._hooks import _pre_hooks, _remove_pre_hook

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-one dims (``dim=-1``: over all of it, a
    0-d result), as torch.norm_except_dim."""
    if dim == -1:
        return v.norm(pow)
    d = dim % v.dim()
    return v.norm(pow, dim=tuple(i for i in range(v.dim()) if i != d), keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)`` with the norm over every dim but ``dim`` (torch._weight_norm)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> "WeightNorm":
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        if _pre_hooks(module, WeightNorm, name):
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to run "
                             "the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Replace ``module.<name>`` by ``g * v / ||v||`` (parameters ``<name>_g``, ``<name>_v``), recomputed before
    every forward; the norm is over every dim but ``dim`` (``None``: over all)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``module.<name>`` becomes a plain parameter with the current value."""
    if _remove_pre_hook(module, WeightNorm, name):
        return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


_args.install(globals(), ("norm_except_dim", "_weight_norm"))
