"""ember._malloc: after ``import ember`` a large NumPy buffer comes from the glibc heap, not a fresh mmap;
``EMBER_MALLOC_TUNING=0`` leaves glibc's defaults alone. Each case runs in a fresh interpreter."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Prints whether ember says the tuning applied, and whether an 8 MiB array (far above glibc's default
# 128 KiB mmap threshold, below the tuned one) lies inside the process's [heap] mapping.
PROBE = """
import numpy as np
import ember, ember._malloc as m
a = np.empty(8 << 20, dtype=np.uint8)
addr = a.__array_interface__["data"][0]
with open("/proc/self/maps") as f:
    heap = [[int(x, 16) for x in ln.split()[0].split("-")] for ln in f if ln.rstrip().endswith("[heap]")]
print(m.applied, any(lo <= addr < hi for lo, hi in heap))
"""


def _probe(**env) -> list[str]:
    full = dict(os.environ, PYTHONPATH=ROOT)
    full.pop("EMBER_MALLOC_TUNING", None)
    full.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=full, check=True)
    return out.stdout.split()


def _is_glibc() -> bool:
    import ctypes

    try:
        return hasattr(ctypes.CDLL(None), "gnu_get_libc_version")
    except OSError:
        return False


glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or not _is_glibc(), reason="glibc malloc only")


@glibc
def test_large_buffers_come_from_the_heap_after_import():
    assert _probe() == ["True", "True"]


@glibc
def test_opt_out_keeps_glibc_defaults():
    assert _probe(EMBER_MALLOC_TUNING="0") == ["False", "False"]


def test_thresholds_are_within_glibc_limits():
    from ember import _malloc

    # glibc refuses an mmap threshold above 32 MiB on 64-bit (HEAP_MAX_SIZE / 2); the trim threshold
    # must not be below it, or the heap top would be handed back right after every large free
    assert 0 < _malloc.MMAP_THRESHOLD <= 32 << 20
    assert _malloc.TRIM_THRESHOLD >= _malloc.MMAP_THRESHOLD
