"""ember.multiprocessing: Python's multiprocessing with tensors shared through shared memory, as torch's.

Importing it registers the tensor reductions (``_reductions.py``): a tensor sent to another process (a Queue,
Pipe, or a Process's arguments) has its memory moved to shared memory first, and the receiver maps the same
memory, so in-place changes on either side are seen by both. ``spawn`` starts ``nprocs`` processes running
``fn(i, *args)`` and raises the first failure's traceback in the parent.
"""
from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F401,F403 - torch.multiprocessing re-exports the standard module

from . import _reductions
from .spawn import (ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException, spawn,
                    start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException", *multiprocessing.__all__]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def set_sharing_strategy(new_strategy: str) -> None:
    """How shared memory is passed between processes; both of torch's strategies pass it as a file descriptor of
    anonymous memory here."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy '{new_strategy}', expected one of {_STRATEGIES}")
    _strategy[0] = new_strategy


def get_sharing_strategy() -> str:
    return _strategy[0]


def get_all_sharing_strategies() -> set:
    return set(_STRATEGIES)


_reductions.init_reductions()
