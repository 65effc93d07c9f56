"""DataLoader: batches from a dataset, in this process or in worker processes."""
from __future__ import annotations

import atexit
import itertools
import multiprocessing
import os
import queue
import sys
import warnings
import weakref
from typing import Any, Callable, Generic, Iterable

from ... import _backend as _B
from ..._random import Generator, _rng
from . import _worker
from ._collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset, T_co
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterates over a dataset in batches (shuffling, samplers, collation, worker processes)."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None, batch_sampler: Sampler | Iterable | None = None,
                 num_workers: int = 0, collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable | None = None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:  # (an iterable dataset orders and batches itself)
            for option, value, given in (("shuffle", shuffle, shuffle not in (None, False)),
                                         ("sampler", sampler, sampler is not None),
                                         ("batch_sampler", batch_sampler, batch_sampler is not None)):
                if given:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {option} option, but "
                                     f"got {option}={value}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)


class _BaseIter:
    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(loader._index_sampler)
        # NOTE [worker seeds]: the workers' base seed is drawn from the loader's generator by every iterator, with
        # or without workers, after the sampler iterator is made (which draws nothing until its first index), as
        # torch's _BaseDataLoaderIter: a seeded generator gives the same shuffle order for any num_workers.
        self._base_seed = int(_rng(loader.generator).integers(0, 2**62))
        self._num_yielded = 0
        if loader.pin_memory and not _B.cuda_available():  # no accelerator: pinning is a no-op, as torch says
            if loader.pin_memory_device:
                warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                              f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=4)
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=4)  # (the user's iter(loader) / for loop)

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._dataset_iter = iter(self._dataset) if loader._is_iterable else None

    def __next__(self):
        index = next(self._sampler_iter)
        if self._dataset_iter is not None:
            if self._auto_collation:
                items = list(itertools.islice(self._dataset_iter, len(index)))
                if not items or (self._loader.drop_last and len(items) < len(index)):
                    raise StopIteration
                data = items
            else:
                data = next(self._dataset_iter)
        elif self._auto_collation:
            getitems = getattr(self._dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self._dataset[i] for i in index]
        else:
            data = self._dataset[index]
        self._num_yielded += 1
        return self._collate_fn(data)


class _MultiProcessIter(_BaseIter):
    """Workers fetch batches by index; results come back in order; a failing worker's error is re-raised."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if loader.prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._ctx = ctx
        self._n = loader.num_workers
        self._prefetch = loader.prefetch_factor * self._n
        self._timeout = loader.timeout
        self._result_queue = ctx.Queue()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        _LIVE.add(self)
        for wid in range(self._n):
            iq = ctx.Queue()
            # NOTE [worker shutdown]: a queue's feeder thread is joined at exit; if the worker is gone, that join
            # would wait for ever on a full pipe. Nothing put here needs to arrive once we stop.
            iq.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop, daemon=True,
                            args=(self._dataset, loader._is_iterable, iq, self._result_queue, self._collate_fn,
                                  self._auto_collation, loader.batch_size, loader.drop_last, self._base_seed + wid,
                                  loader.worker_init_fn, wid, self._n, os.getpid()))
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        try:
            self._reset(loader, first=True)
        except BaseException:  # the sampler failed: no worker may outlive this iterator
            self._shutdown_workers()
            raise

    def _reset(self, loader: DataLoader, first: bool = False) -> None:
        self._sampler_iter = iter(loader._index_sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, Any] = {}
        self._buffer: dict[int, Any] = {}
        self._active = [True] * self._n
        self._worker_cycle = itertools.cycle(range(self._n))
        self._num_yielded = 0
        if not first:
            # drain results of the previous epoch that never got consumed
            while True:
                try:
                    self._result_queue.get_nowait()
                except queue.Empty:
                    break
        for _ in range(self._prefetch):
            self._try_put_index()

    def _try_put_index(self) -> None:
        if not any(self._active):
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._n):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = wid
        self._send_idx += 1

    def _get(self):
        waited = 0.0
        while True:
            try:
                return self._result_queue.get(timeout=1.0)
            except queue.Empty:
                waited += 1.0
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
                if self._timeout and waited >= self._timeout:  # workers live on (a slow one may still finish)
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None

    def __next__(self):
        """The next batch: in sampler order, or (``in_order=False``) whichever a worker finishes first."""
        while True:
            while self._rcvd_idx < self._send_idx and self._rcvd_idx not in self._task_info:
                self._rcvd_idx += 1  # already handed out early (in_order=False)
            if self._rcvd_idx >= self._send_idx:
                if not self._loader.persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._buffer:
                idx, data = self._rcvd_idx, self._buffer.pop(self._rcvd_idx)
            else:
                idx, data = self._get()
                if idx != self._rcvd_idx and self._loader.in_order:
                    self._buffer[idx] = data
                    continue
            del self._task_info[idx]
            if isinstance(data, _worker.IterableStop):
                self._active[data.worker_id] = False
                self._try_put_index()
                continue
            self._try_put_index()
            if isinstance(data, _worker.ExceptionWrapper):
                self._shutdown_workers()
                data.reraise()
            self._num_yielded += 1
            return data

    def _shutdown_workers(self) -> None:
        """Stop the workers: ask them (None), give them a moment, then terminate. Safe at interpreter exit."""
        if self._shutdown:
            return
        self._shutdown = True
        _LIVE.discard(self)
        if not sys.is_finalizing():  # (a put starts a feeder thread, which cannot start during finalization)
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
        for w in self._workers:
            w.join(timeout=5.0 if not sys.is_finalizing() else 0.1)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
                if w.is_alive():
                    w.kill()
        for q in (*self._index_queues, self._result_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# NOTE [worker shutdown]: an iterator still alive when the script ends (an exception left it in a traceback) stops
# its workers here, at exit, before the interpreter finalizes (registered after multiprocessing's own exit hook,
# so it runs first): workers never keep the interpreter alive.
_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _stop_live_iterators() -> None:
    for it in list(_LIVE):
        try:
            it._shutdown_workers()
        except Exception:  # noqa: BLE001 - exit path: stop the others regardless
            pass
