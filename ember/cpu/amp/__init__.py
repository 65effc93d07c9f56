"""torch.cpu.amp: the deprecated CPU spellings of torch.amp.autocast / GradScaler (FutureWarning, then the same)."""
from __future__ import annotations

from ... import _dtype as D
from ...amp._deprecated import _device_classes

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = _device_classes("cpu", D.bfloat16, __name__)
