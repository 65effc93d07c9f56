"""torch.cuda.amp: the deprecated CUDA spellings of torch.amp (FutureWarning); without CUDA, autocast and
GradScaler warn and disable themselves, as in torch's CPU build."""
from __future__ import annotations

import functools
import warnings

from ... import _dtype as D
from ...amp import autocast_mode as _am, grad_scaler as _gs

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available() -> bool:
    return True


class autocast(_am.autocast):  # noqa: N801 - torch's name
    """``torch.cuda.amp.autocast(args...)`` is deprecated: ``torch.amp.autocast("cuda", args...)``."""

    def __init__(self, enabled: bool = True, dtype=D.float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd(args...)`` is deprecated: ``torch.amp.custom_fwd(args..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_am.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``torch.cuda.amp.custom_bwd(args...)`` is deprecated: ``torch.amp.custom_bwd(args..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use `torch.amp.custom_bwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_am.custom_bwd, device_type="cuda")(bwd)


class GradScaler(_gs.GradScaler):
    """``torch.cuda.amp.GradScaler(args...)`` is deprecated: ``torch.amp.GradScaler("cuda", args...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
