"""torch.amp: automatic mixed precision (autocast regions, GradScaler, custom_fwd/custom_bwd)."""
from .autocast_mode import _enter_autocast, _exit_autocast, autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
