"""ember.backends: the flags torch code reads to pick a device (no accelerator backend exists here)."""
from __future__ import annotations

from types import SimpleNamespace

__all__ = ["mps", "cuda", "cudnn"]


def _false() -> bool:
    return False


mps = SimpleNamespace(is_available=_false, is_built=_false)
cuda = SimpleNamespace(is_built=_false, matmul=SimpleNamespace(allow_tf32=False))
# cudnn flags are settable as in torch (``ember.backends.cudnn.benchmark = True``) and have no effect.
cudnn = SimpleNamespace(is_available=_false, enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                        version=lambda: None)
