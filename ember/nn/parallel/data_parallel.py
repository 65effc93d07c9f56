"""DataParallel on a machine without accelerators: a transparent wrapper, as torch's is then."""
from __future__ import annotations

from typing import Any, Sequence

from ...autograd.grad_mode import is_grad_enabled
from ..modules.module import Module
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module`` (as ``self.module``); with no GPU (always, in ember) it calls the module as is.

    As torch's on a CPU-only machine, ``device_ids`` is then ``[]`` whatever was asked for, state_dict keys
    are prefixed ``module.``.
    """

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)

    # torch's per-step helpers (over nn.parallel's); with no GPU ``dim`` is never set, so scatter and gather raise
    # torch's AttributeError, as on its CPU build
    def replicate(self, module: Module, device_ids) -> list:
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs: tuple, kwargs: dict | None, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs) -> list:
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs: Any, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: Any = None):
    """Functional DataParallel: needs an accelerator, so it raises as torch's does without one."""
    raise RuntimeError("device type could not be determined")
