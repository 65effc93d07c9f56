"""torch.cuda.nvtx: NVIDIA Tools Extension ranges (torch's RuntimeError without a CUDA build)."""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["mark", "range_push", "range_pop", "range_start", "range_end", "range"]


def _missing(*args, **kwargs):
    raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")


mark = range_push = range_pop = _missing


def range_start(msg) -> int:
    raise AttributeError("'_NVTXStub' object has no attribute 'rangeStartA'")


def range_end(range_id) -> None:
    raise AttributeError("'_NVTXStub' object has no attribute 'rangeEnd'")


@contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 - torch's name
    """Context manager for an NVTX range."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
