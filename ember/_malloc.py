"""glibc malloc tuning, applied once when ember is imported.

Training steps allocate and free the same large NumPy buffers (activations, im2col columns, gradients)
every iteration. With glibc's defaults each buffer above the mmap threshold is mmap'd, page-faulted in
and munmap'd again, and the heap top is trimmed back to the kernel: most of a small CNN step goes to page
faults. Raising the mmap and trim thresholds keeps those buffers in the heap, so the next step reuses them.

Opt out with ``EMBER_MALLOC_TUNING=0`` in the environment before ``import ember``. Nothing happens where
the C library is not glibc (musl, macOS, Windows). ``applied`` says whether the tuning took effect.
"""
from __future__ import annotations

import os
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "applied"]

_M_TRIM_THRESHOLD = -1   # mallopt parameter numbers (<malloc.h>)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20   # blocks below this come from the heap: glibc's ceiling on 64-bit (32 MiB)
TRIM_THRESHOLD = 128 << 20  # free memory kept at the heap top before it is given back to the kernel


def _tune() -> bool:
    """Set the thresholds through ``mallopt``; True when glibc accepted both."""
    if os.environ.get("EMBER_MALLOC_TUNING", "1").strip() == "0" or not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    # glibc only: musl's mallopt is a stub that ignores everything
    if not (hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt")):
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


applied: bool = _tune()
