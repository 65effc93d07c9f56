"""torch.cuda.amp: the deprecated CUDA spellings of torch.amp (FutureWarning); without CUDA, autocast and
GradScaler warn and disable themselves, as in torch's CPU build."""
from __future__ import annotations

import functools
import warnings

from ... import _dtype as D
from ...amp import autocast_mode as _am
from ...amp._deprecated import _device_classes

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available() -> bool:
    return True


autocast, GradScaler = _device_classes("cuda", D.float16, __name__)


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

