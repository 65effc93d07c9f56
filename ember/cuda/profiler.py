"""torch.cuda.profiler: start/stop the CUDA profiler (torch's errors without CUDA)."""
from __future__ import annotations

from contextlib import contextmanager

from . import check_error, cudart

__all__ = ["start", "stop", "profile"]


def start() -> None:
    check_error(cudart().cudaProfilerStart())


def stop() -> None:
    check_error(cudart().cudaProfilerStop())


@contextmanager
def profile():
    """Collect a CUDA profile inside the block."""
    try:
        start()
        yield
    finally:
        stop()
