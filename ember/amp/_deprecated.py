"""torch.cpu.amp's and torch.cuda.amp's deprecated autocast and GradScaler: each warns (FutureWarning) and then is
torch.amp's for its device."""
from __future__ import annotations

import warnings

from . import autocast_mode as _am, grad_scaler as _gs


def _deprecation(device: str, name: str) -> None:
    warnings.warn(f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use `torch.amp.{name}('{device}', "
                  "args...)` instead.", FutureWarning, stacklevel=3)


def _device_classes(device: str, default_dtype, module: str) -> tuple[type, type]:
    """The classes ``autocast`` (autocasting to ``default_dtype`` unless told) and ``GradScaler`` of the module
    ``module`` (torch.<device>.amp), with torch's signatures."""
    def autocast_init(self, enabled: bool = True, dtype=default_dtype, cache_enabled: bool = True):
        _deprecation(device, "autocast")
        super(autocast, self).__init__(device, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    def scaler_init(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                    growth_interval: int = 2000, enabled: bool = True) -> None:
        _deprecation(device, "GradScaler")
        super(GradScaler, self).__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                                         enabled=enabled)

    def member(base: type, init) -> type:
        name = base.__name__
        init.__name__, init.__qualname__ = "__init__", f"{name}.__init__"
        return type(name, (base,), {"__init__": init, "__module__": module, "__doc__": (
            f'``torch.{device}.amp.{name}(args...)`` is deprecated: ``torch.amp.{name}("{device}", args...)``.')})

    autocast, GradScaler = member(_am.autocast, autocast_init), member(_gs.GradScaler, scaler_init)
    return autocast, GradScaler
