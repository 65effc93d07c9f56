"""torch.cuda.streams: CUDA streams and events (they cannot be made without CUDA, as on torch's CPU build). Their
work is the runtime's (NOTE [cuda seam]): CuPy's streams and events, or the stand-in's, where all work is done by
the time it is queued."""
from __future__ import annotations

from .._device import device as _device_cls
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

    @property
    def device(self):
        return _device_cls("cuda", self.device_index)

    def synchronize(self) -> None:
        """Wait for the stream's queued work."""
        runtime.synchronize_stream(self)

    def query(self) -> bool:
        """Whether the stream's queued work is done."""
        return runtime.query_stream(self)

    def wait_event(self, event) -> None:
        """Make the stream's later work wait for ``event``."""
        event.wait(self)

    def wait_stream(self, stream) -> None:
        """Make the stream's later work wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one when None) on the stream, and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.stream_id, self.device_index) == (other.stream_id,
                                                                                   other.device_index)

    def __hash__(self) -> int:
        return hash((self.stream_id, self.device_index))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


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

    def record(self, stream=None) -> None:
        """Mark the point reached by ``stream`` (the current stream when None)."""
        runtime.record_event(self, current_stream() if stream is None else stream)

    def wait(self, stream=None) -> None:
        """Make ``stream``'s later work (the current stream's when None) wait for this event."""
        runtime.wait_event(self, current_stream() if stream is None else stream)

    def query(self) -> bool:
        """Whether the work before the event is done."""
        return runtime.query_event(self)

    def synchronize(self) -> None:
        """Wait for the work before the event."""
        runtime.synchronize_event(self)

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded, with ``enable_timing=True``)."""
        return runtime.elapsed_time(self, end_event)


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
