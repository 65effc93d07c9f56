"""DataParallel on a machine without accelerators: a transparent wrapper, as torch's is then."""
from __future__ import annotations

from typing import Any, Sequence

from ..modules.module import Module

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


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: Any = None):
    """Functional DataParallel: needs an accelerator, so it raises as torch's does without one."""
    raise RuntimeError("device type could not be determined")
