"""torch.cuda.streams: CUDA streams and events (they cannot be made without CUDA, as on torch's CPU build)."""
from __future__ import annotations

from . import _device_index, _is_compiled, _lazy_init, _select, runtime

__all__ = ["Stream", "Event", "ExternalStream", "StreamContext", "stream", "set_stream", "current_stream",
           "default_stream", "get_stream_from_external"]


class Stream:
    """A CUDA stream: a queue of device work."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        if not _is_compiled():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        with _select(device):
            return runtime.new_stream(cls, priority, **kwargs)


class ExternalStream(Stream):
    """A stream allocated outside ember (by its ``cudaStream_t`` pointer)."""

    def __new__(cls, stream_ptr, device=None, **kwargs):
        with _select(device):
            return super().__new__(cls, stream_ptr=stream_ptr, **kwargs)


class Event:
    """A CUDA event: a marker in a stream, for synchronisation and timing."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 external: bool = False) -> None:
        if not _is_compiled():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        runtime.new_event(self, enable_timing, blocking, interprocess, external)


class StreamContext:
    """Context manager selecting a stream (a no-op for None, or without a CUDA device)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        index = _device_index(None, True)
        self.idx = -1 if index is None else index
        self.src_prev_stream = self.dst_prev_stream = None

    def __enter__(self):
        if self.stream is None or self.idx == -1:
            return
        self.src_prev_stream = current_stream(None)
        if self.src_prev_stream.device != self.stream.device:
            with _select(self.stream.device):
                self.dst_prev_stream = current_stream(self.stream.device)
        set_stream(self.stream)

    def __exit__(self, *exc) -> None:
        if self.stream is None or self.idx == -1:
            return
        if self.src_prev_stream.device != self.stream.device:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)


def stream(stream) -> StreamContext:
    """Context manager selecting ``stream`` (None: no-op)."""
    return StreamContext(stream)


def set_stream(stream) -> None:
    """Make ``stream`` current (None: no-op)."""
    if stream is None:
        return
    ids = {"stream_id": stream.stream_id, "device_index": stream.device_index, "device_type": stream.device_type}
    runtime.set_stream(**ids)


def current_stream(device=None):
    _lazy_init()
    index = _device_index(device, optional=True)
    return runtime.current_stream(index)


def default_stream(device=None):
    _lazy_init()
    index = _device_index(device, optional=True)
    return runtime.default_stream(index)


def get_stream_from_external(data_ptr: int, device=None):
    _lazy_init()
    index = _device_index(device, optional=True)
    return runtime.stream_from_external(data_ptr, index)
