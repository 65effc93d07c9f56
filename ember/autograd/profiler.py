"""ember.autograd.profiler: an op-level profiler (torch.autograd.profiler) and record_function.

# NOTE [profiler]
Profiling costs nothing while off: a profiler records through the interposition seam (NOTE [interposition]).
While one is active, a ``_Recorder`` level sits on this thread's level chain, so ``Op.apply`` and
``Function.apply`` hand it every op: it times the op (``perf_counter_ns``) around ``call_below`` and notes the
torch name (``aten::mul`` from ``MulBackward0``), the input shapes and dtypes (``record_shapes``), the bytes of
newly allocated outputs (``profile_memory``) and the user's Python frames (``with_stack``). The engine reads
``_mode.profiler`` once per backward call; when set, each node's evaluation is recorded as torch's
``autograd::engine::evaluate_function: <node>`` around a ``<node>`` range, with the ops its formula runs inside.
``record_function`` opens a user range in every active recorder. Ranges nest by a stack per recorder, which gives
each event its parent and children, so self time is total time minus the children's. While a profiler is active,
backward formulas run as ember ops (the array fast paths of NOTE [raw backward] see a level and step aside), so
their ops appear in the profile; results are unchanged.
"""
from __future__ import annotations

import os
import re
import sys
import threading
import time
import warnings
from contextlib import ContextDecorator

import numpy as np

from .._tensor import Tensor
from . import _interpose
from .grad_mode import _mode
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, Interval

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "load_nvprof", "EventList", "FunctionEvent",
           "FunctionEventAvg"]

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EMBER_NN = os.path.join(_EMBER_DIR, "nn")
_OP_NAMES: dict = {}


def _op_name(cls) -> str:
    """torch's name for an op class: ``MulBackward0`` -> ``aten::mul``; custom Functions keep their class name."""
    name = _OP_NAMES.get(cls)
    if name is None:
        raw = cls.__name__
        if hasattr(cls, "save") and hasattr(cls, "forward") and raw != "Function":
            stem = re.sub(r"Backward\d*$", "", raw.rsplit("::", 1)[-1])
            name = "aten::" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem).lower()
        else:
            name = raw
        _OP_NAMES[cls] = name
    return name


def _shapes(args) -> tuple[list, list]:
    shapes, dtypes = [], []
    for a in args:
        if isinstance(a, Tensor):
            shapes.append(list(a.shape))
            dtypes.append(str(a.dtype).replace("torch.", ""))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, Tensor) for x in a):
            shapes.append([list(x.shape) for x in a])
            dtypes.append("TensorList")
        else:
            shapes.append([])
            dtypes.append("Scalar" if isinstance(a, (int, float, bool)) else "")
    return shapes, dtypes


def _allocated(out) -> int:
    """Bytes of the arrays in ``out`` that own their memory (views allocate nothing)."""
    total = 0
    for t in (out if isinstance(out, (tuple, list)) else (out,)):
        if isinstance(t, Tensor):
            a = t._data
            if isinstance(a, np.ndarray) and a.base is None:
                total += a.nbytes
    return total


def _user_stack() -> list:
    """The calling Python frames, innermost first, as torch prints them ("file(line): function"); ember's own
    frames are left out except its nn modules (whose forward torch shows)."""
    frames = []
    f = sys._getframe(2)
    while f is not None:
        path = f.f_code.co_filename
        if not path.startswith(_EMBER_DIR) or path.startswith(_EMBER_NN):
            if path.startswith(_EMBER_DIR):
                path = "ember" + path[len(_EMBER_DIR):]
            frames.append(f"{path}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return frames


class _Recorder(_interpose.Level):
    """One profiler's recording on one thread (NOTE [profiler])."""

    __slots__ = ("events", "open", "record_shapes", "profile_memory", "with_stack", "thread", "_ids")

    def __init__(self, record_shapes: bool, profile_memory: bool, with_stack: bool) -> None:
        self.events: list = []
        self.open: list = []
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.thread = threading.get_native_id()
        self._ids = 0

    def begin(self, name: str, args=(), annotation: bool = False, sequence_nr: int = -1) -> FunctionEvent:
        shapes = dtypes = None
        if self.record_shapes and args:
            shapes, dtypes = _shapes(args)
        ev = FunctionEvent(self._ids, name, self.thread, 0.0, 0.0, input_shapes=shapes, input_dtypes=dtypes,
                           stack=_user_stack() if self.with_stack else None, is_user_annotation=annotation,
                           sequence_nr=sequence_nr)
        self._ids += 1
        if self.open:
            parent = self.open[-1]
            ev.cpu_parent = parent
            parent.cpu_children.append(ev)
        self.open.append(ev)
        self.events.append(ev)
        ev.time_range = (time.perf_counter_ns(), 0)
        return ev

    def end(self, ev: FunctionEvent, out=None) -> None:
        stop = time.perf_counter_ns()
        ev.time_range = (ev.time_range[0], stop)
        if self.profile_memory:
            ev.cpu_memory_usage = _allocated(out) + sum(c.cpu_memory_usage for c in ev.cpu_children)
        while self.open and self.open.pop() is not ev:  # ranges left open by an exception close with it
            pass

    def process(self, cls, args):
        ev = self.begin(_op_name(cls), args)
        out = None
        try:
            out = _interpose.call_below(self, cls, args)
        finally:
            self.end(ev, out)
        return out

    def process_function(self, cls, args: tuple, kwargs: dict):
        """A custom Function: its forward's ops are recorded inside its range, unless another level lies below
        (which must then see the call: its ops run below the profiler)."""
        ev = self.begin(cls.__name__, args)
        out = None
        try:
            if self.below is None:
                out = cls._apply_plain(args, kwargs)
            else:
                saved = _mode.interpose
                _mode.interpose = self.below
                try:
                    out = cls.apply(*args, **kwargs)
                finally:
                    _mode.interpose = saved
        finally:
            self.end(ev, out)
        return out


class _ThreadProfilers:
    """The recorders active on one thread: what the engine and record_function report to."""

    __slots__ = ("recorders",)

    def __init__(self) -> None:
        self.recorders: list = []

    def evaluate(self, fn, grads):
        """Run a backward node's formula inside torch's two ranges."""
        name = fn.name()
        seq = getattr(fn, "_seq", -1)
        outer = [(r, r.begin("autograd::engine::evaluate_function: " + name, sequence_nr=seq))
                 for r in self.recorders]
        inner = [(r, r.begin(name, grads, sequence_nr=seq)) for r in self.recorders]
        result = None
        try:
            result = fn._apply(grads)
        finally:
            for r, ev in reversed(inner):
                r.end(ev, result)
            for r, ev in reversed(outer):
                r.end(ev)
        return result


def _start(record_shapes: bool, profile_memory: bool, with_stack: bool) -> _Recorder:
    rec = _Recorder(record_shapes, profile_memory, with_stack)
    _interpose.push(rec)
    if _mode.profiler is None:
        _mode.profiler = _ThreadProfilers()
    _mode.profiler.recorders.append(rec)
    return rec


def _stop(rec: _Recorder) -> EventList:
    """End recording; the events in microseconds from the epoch (a Chrome trace's clock)."""
    if _mode.interpose is rec:
        _interpose.pop(rec)
    else:  # a transform level entered inside the profiled block is still active above it: unlink this one
        level = _mode.interpose
        while level is not None and level.below is not rec:
            level = level.below
        if level is not None:
            level.below = rec.below
    profilers = _mode.profiler
    if profilers is not None and rec in profilers.recorders:
        profilers.recorders.remove(rec)
        if not profilers.recorders:
            _mode.profiler = None
    now_ns = time.perf_counter_ns()
    offset_us = (time.time_ns() - now_ns) / 1000.0
    for ev in rec.events:
        start, stop = ev.time_range
        if stop == 0:  # still open (the block raised inside it)
            stop = now_ns
        ev.time_range = Interval(start / 1000.0 + offset_us, stop / 1000.0 + offset_us)
    return EventList(rec.events, profile_memory=rec.profile_memory)


class record_function(ContextDecorator):  # noqa: N801 - torch's name
    """A named range in every active profiler (``with record_function("forward"):``, or as a decorator)."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self.run_callbacks_on_exit = True
        self._open: list = []

    def __enter__(self):
        profilers = _mode.profiler
        if profilers is not None:
            self._open = [(r, r.begin(self.name, annotation=True)) for r in profilers.recorders]
        return self

    def __exit__(self, *exc) -> bool:
        for r, ev in reversed(self._open):
            r.end(ev)
        self._open = []
        return False

    def _call_end_callbacks_on_future(self, fut):
        return fut


class profile:
    """``with torch.autograd.profiler.profile() as prof:`` records every op of the block (NOTE [profiler])."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False, custom_trace_id_callback=None) -> None:
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device == "cuda":
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
        elif use_device is not None and use_device != "cpu":
            raise AssertionError(f"{use_device} is not available, disabling {use_device} profiling")
        self.use_device = None
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.entered = False
        self._recorder = None
        self._function_events = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._recorder = _start(self.record_shapes, self.profile_memory, self.with_stack)
        return self

    def __exit__(self, *exc) -> bool:
        if not self.enabled:
            return False
        self._function_events = _stop(self._recorder)
        self._recorder = None
        return False

    def _check_finish(self) -> None:
        if self._function_events is None:  # not run (yet): no events, as torch
            self._function_events = EventList(profile_memory=self.profile_memory)

    @property
    def function_events(self) -> EventList:
        self._check_finish()
        return self._function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        self._check_finish()
        return self._function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def table(self, sort_by=None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header=None,
              top_level_events_only: bool = False, time_unit=None) -> str:
        self._check_finish()
        return self._function_events.table(sort_by=sort_by, row_limit=row_limit,
                                           max_src_column_width=max_src_column_width,
                                           max_name_column_width=max_name_column_width,
                                           max_shapes_column_width=max_shapes_column_width, header=header,
                                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path: str) -> None:
        self._check_finish()
        self._function_events.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        self._check_finish()
        self._function_events.export_stacks(path, metric)

    def total_average(self) -> FunctionEventAvg:
        self._check_finish()
        return self._function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        self._check_finish()
        return self._function_events.self_cpu_time_total

    def __repr__(self) -> str:
        if self._function_events is None or self._recorder is not None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self) -> str:
        if self._function_events is None or self._recorder is not None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)


class emit_nvtx:  # noqa: N801 - torch's name
    """Annotate ops with NVTX ranges for NVIDIA's profilers (needs CUDA, as on torch's CPU build)."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __exit__(self, *exc) -> bool:
        return False


class emit_itt:  # noqa: N801 - torch's name
    """Annotate ops with Intel ITT ranges for VTune (nothing listens for them here: a no-op block)."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled

    def __enter__(self):
        return self if self.enabled else None

    def __exit__(self, *exc) -> bool:
        return False


def load_nvprof(path: str):
    """Events of an nvprof trace (needs CUDA's tools)."""
    raise RuntimeError("nvprof traces come from CUDA runs; ember has no CUDA backend")
