"""torch.cuda.graphs: captured CUDA graphs (they cannot be made without CUDA, as on torch's CPU build)."""
from __future__ import annotations

from . import _is_compiled, runtime
from .streams import Stream

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables", "is_current_stream_capturing"]


def _dummy(name: str):
    raise RuntimeError(f"Tried to instantiate dummy base class {name}")


class CUDAGraph:
    """A captured sequence of CUDA work, replayable as one launch."""

    def __init__(self, keep_graph: bool = False) -> None:
        if not _is_compiled():
            _dummy("CUDAGraph")
        runtime.new_graph(self, keep_graph)


def graph_pool_handle():
    if not _is_compiled():
        _dummy("_graph_pool_handle")
    return runtime.graph_pool_handle()


def is_current_stream_capturing() -> bool:
    if not _is_compiled():
        _dummy("_cuda_isCurrentStreamCapturing")
    return runtime.is_current_stream_capturing()


class graph:
    """Context manager capturing the CUDA work of its block into ``cuda_graph``."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode: str = "global") -> None:
        if self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.cuda_graph, self.pool, self.stream = cuda_graph, pool, stream
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        return runtime.begin_capture(self)

    def __exit__(self, *exc) -> None:
        runtime.end_capture(self)


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3, allow_unused_input: bool = False,
                           pool=None):
    """Capture each callable's forward and backward as CUDA graphs."""
    single = not isinstance(callables, tuple)
    count = 1 if single else len(callables)
    graphs = [CUDAGraph() for _ in range(2 * count)]
    return runtime.make_graphed_callables(callables, sample_args, graphs, num_warmup_iters, allow_unused_input,
                                          pool)
