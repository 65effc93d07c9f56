"""torch.cuda.nccl: NCCL collectives on CUDA tensors (not available without CUDA, as torch's CPU build)."""
from __future__ import annotations

import warnings

from ._runtime import runtime

__all__ = ["is_available", "version"]


def is_available(tensors) -> bool:
    """Whether NCCL can run a collective on ``tensors``: False, with torch's warning, without NCCL."""
    if not getattr(runtime, "has_nccl", False):
        warnings.warn("PyTorch is not compiled with NCCL support", stacklevel=2)
        return False
    return runtime.nccl_available(tensors)


def version() -> tuple:
    ver = runtime.nccl_version()
    return ver >> 32, (ver >> 16) & 65535, ver & 65535
