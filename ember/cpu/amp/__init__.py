"""torch.cpu.amp: the deprecated CPU spellings of torch.amp.autocast / GradScaler (FutureWarning, then the same)."""
from __future__ import annotations

import warnings

from ... import _dtype as D
from ...amp import autocast_mode as _am, grad_scaler as _gs

__all__ = ["autocast", "GradScaler"]


class autocast(_am.autocast):  # noqa: N801 - torch's name
    """``torch.cpu.amp.autocast(args...)`` is deprecated: ``torch.amp.autocast("cpu", args...)``."""

    def __init__(self, enabled: bool = True, dtype=D.bfloat16, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_gs.GradScaler):
    """``torch.cpu.amp.GradScaler(args...)`` is deprecated: ``torch.amp.GradScaler("cpu", args...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
