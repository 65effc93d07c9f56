"""ember.futures: torch.futures.Future, a value that becomes available later (from jit.fork or an RPC)."""
from __future__ import annotations

import threading

from ._device import device

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A result set once (``set_result``/``set_exception``) and read with ``wait``; callbacks run on completion."""

    def __init__(self, *, devices=None) -> None:
        for d in devices or ():  # CPU devices with an index only: torch's errors for the rest
            if isinstance(d, int) and not isinstance(d, bool):
                raise RuntimeError("Cannot access accelerator device when none is available.")
            dev = device(d)
            if dev.type not in ("cpu", "meta"):
                raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")
            if dev.index is None:
                raise ValueError(f"Expected devices to have indices, got {dev}")
        self._done = threading.Event()
        self._value = self._error = None
        self._callbacks: list = []
        self._lock = threading.Lock()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self):
        """Block until complete; the value, or the exception set on it raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed future (torch's internal assert when it is not complete)."""
        if not self.done():
            raise RuntimeError("completed() INTERNAL ASSERT FAILED: the Future has no value yet; call wait() first")
        return self.wait()

    def _complete(self, value, error) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                                   "only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_result(self, result) -> None:
        self._complete(result, None)

    def set_exception(self, result) -> None:
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def add_done_callback(self, callback) -> None:
        """Call ``callback(self)`` once complete (now, if it already is)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback) -> "Future":
        """A future completed with ``callback(self)`` once this one completes."""
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:  # noqa: BLE001 - reported through the new future, as torch's
                out.set_exception(RuntimeError(f"Got the following error when running the callback: "
                                               f"{type(e).__name__}: {e}"))

        self.add_done_callback(run)
        return out

    def __repr__(self) -> str:
        return f"<torch.Future object at {id(self):#x}>"


def collect_all(futures: list) -> Future:
    """A future completed with the list of ``futures`` once all of them are."""
    out, futures = Future(), list(futures)
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: list) -> list:
    """The values of ``futures``, waiting for each (the first exception raised)."""
    return [f.wait() for f in collect_all(futures).wait()]
