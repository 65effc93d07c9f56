"""DataLoader worker processes: the loop each worker runs and what it tells the main process."""
from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

__all__ = ["WorkerInfo", "get_worker_info"]

_worker_info = None


@dataclass
class WorkerInfo:
    """What a worker knows about itself (``get_worker_info()`` inside a worker)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """This worker's WorkerInfo, or None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, where: str) -> None:
        exc_type, exc, _ = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(*sys.exc_info()))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            err = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - exception types with other signatures
            raise RuntimeError(msg) from None
        raise err


class IterableStop:
    """Sent by a worker whose iterable dataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def worker_loop(dataset, is_iterable, index_queue, result_queue, collate_fn, auto_collation, batch_size,
                drop_last, seed, worker_init_fn, worker_id, num_workers, parent):
    """Fetch the batches the main process (pid ``parent``) asks for until told to stop (None), or until it is gone.
    (The parent's pid comes from the parent: read here, it would be the reaper's when the parent was killed while
    this worker started.)"""
    global _worker_info
    from ... import _random

    _random.manual_seed(seed)
    random.seed(seed)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_error = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
    except Exception:  # noqa: BLE001 - reported to the main process
        init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    it = iter(dataset) if is_iterable and init_error is None else None
    exhausted = False
    while True:
        try:
            r = index_queue.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:  # the main process is gone (killed): nobody will ask again
                break
            continue
        if r is None:
            break
        idx, indices = r
        if init_error is not None:
            result_queue.put((idx, init_error))
            init_error = None
            continue
        try:
            if is_iterable:
                if exhausted:
                    data = IterableStop(worker_id)
                else:
                    items = []
                    try:
                        if auto_collation:
                            for _ in range(batch_size):
                                items.append(next(it))
                        else:
                            items.append(next(it))
                    except StopIteration:
                        exhausted = True
                    if not items or (auto_collation and drop_last and len(items) < batch_size):
                        data = IterableStop(worker_id)
                    else:
                        data = collate_fn(items) if auto_collation else collate_fn(items[0])
            elif auto_collation:
                getitems = getattr(dataset, "__getitems__", None)
                samples = getitems(indices) if getitems else [dataset[i] for i in indices]
                data = collate_fn(samples)
            else:
                data = collate_fn(dataset[indices])
        except Exception:  # noqa: BLE001 - reported to the main process
            data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        result_queue.put((idx, data))
