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


# NOTE [allocation failures]: a failed allocation raises torch's RuntimeError (code catching RuntimeError to skip
# a batch that does not fit keeps working), still a MemoryError for code written against NumPy.
_HUGE = [
    lambda lib: lib.empty(10**13),
    lambda lib: lib.zeros(10**7, 10**6),
    lambda lib: lib.full((10**13,), 1.0),
    lambda lib: lib.arange(10**13),
    lambda lib: lib.ones(1).expand(10**13).clone(),
    lambda lib: lib.ones(10**5, 1) @ lib.ones(1, 10**7),
    lambda lib: lib.ones(10).repeat(10**12),
    lambda lib: lib.ones(10**12, dtype=lib.float64),
]


@pytest.mark.parametrize("fn", _HUGE)
def test_failed_allocations_raise_torchs_runtime_error(fn):
    import ember
    import torch
    from oracle import same_error

    e, _ = same_error(fn, match_words=["DefaultCPUAllocator: can't allocate memory"])
    assert isinstance(e, RuntimeError) and isinstance(e, MemoryError)
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator"):
        fn(ember)
    assert torch  # (the oracle's library, imported for same_error)


def test_a_failed_allocation_in_backward_is_torchs_error():
    import numpy as np

    import ember

    x = ember.ones(3, requires_grad=True)
    y = (x * 2).sum()
    y.grad_fn.register_prehook(lambda grads: (ember.from_numpy(np.ones(10**13)),))  # a backward that cannot fit
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator") as ei:
        y.backward()
    assert isinstance(ei.value, MemoryError)


def test_own_errors_pass_whatever_the_source_file_says(monkeypatch) -> None:
    """Which instruction raised is read from the running bytecode: a source file edited while the program runs (here,
    a cached copy whose lines no longer match) leaves ember's own errors as they are (torch's IndexError for cat's
    dim), and a kernel's error is still translated."""
    import linecache

    import torch

    import ember
    import ember._tensor as J  # (where _wrap_dim raises)

    lines = ["x = 1\n"] * 400  # no line starts with "raise"
    monkeypatch.setitem(linecache.cache, J.__file__, (len(lines) * 6, None, lines, J.__file__))
    for lib in (torch, ember):
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib.cat([lib.zeros(2, 3), lib.zeros(2, 3)], 2)
    with pytest.raises(RuntimeError):  # a NumPy error inside a kernel: torch's kind, not NumPy's
        ember.ones(2, 3).view(4)
