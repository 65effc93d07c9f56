"""ember.profiler: torch.profiler over ember's op-level recorder (NOTE [profiler] in ember/autograd/profiler.py).

CPU activity only, as on torch's CPU build: schedules (wait / warmup / active cycles, ``on_trace_ready`` at the end
of each), ``ProfilerStep#N`` ranges per ``step()``, summaries with torch's table layout and Chrome traces.
"""
from __future__ import annotations

import enum
import gzip
import os
import socket
import time
import warnings
from functools import partial

from ..autograd import profiler as _legacy
from ..autograd.profiler import record_function
from ..autograd.profiler_util import EventList

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function", "ExecutionTraceObserver"]


class _Enum(enum.IntEnum):
    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class ProfilerActivity(_Enum):
    """What a profiler records; ember records CPU activity."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class DeviceType(_Enum):
    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    """What a schedule asks of one step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities() -> set:
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """Whether torch's Kineto tracer is built in: ember's recorder stands in for it."""
    return True


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """A step -> ProfilerAction function: skip_first steps, then cycles of wait, warmup and active steps (the last
    active step of a cycle is RECORD_AND_SAVE), ``repeat`` times (0: forever)."""
    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _record_always(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                              use_python_export: bool = False):
    """An ``on_trace_ready`` that writes ``<worker>.<ns>.pt.trace.json[.gz]`` into ``dir_name`` (TensorBoard's
    profiler plugin and Perfetto read it)."""
    def handler_fn(prof) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """``with torch.profiler.profile(...) as prof:``: records CPU activity per the schedule (always, without one)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda=None, custom_trace_id_callback=None) -> None:
        acts = set(activities) if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning,
                          stacklevel=2)
        for act in acts - supported_activities():
            if act is ProfilerActivity.CUDA:
                warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
        self.activities = acts & supported_activities()  # none left: start() refuses, as torch
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.schedule = schedule if schedule is not None else _record_always
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.profiler = None  # the legacy profiler of the cycle being recorded
        self.step_rec_fn = None
        self._events = None
        self.use_device = None
        A = ProfilerAction
        start_stop = [self.start_trace, self.stop_trace]
        self._actions = {
            (A.NONE, A.RECORD): [self.start_trace], (A.NONE, A.RECORD_AND_SAVE): [self.start_trace],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed by NONE"), *start_stop],
            (A.WARMUP, A.RECORD): [self.start_trace], (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed by NONE"),
                                 self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD followed by WARMUP"),
                                   self.stop_trace],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready, self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready, self.start_trace],
            (A.WARMUP, None): start_stop, (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # the schedule's transitions
    def start_trace(self) -> None:
        if not self.activities:
            raise AssertionError("No activities specified for the profiler")
        self.profiler = _legacy.profile(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                        with_stack=self.with_stack)
        self.profiler.__enter__()

    def stop_trace(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        if self.profiler is not None and self.profiler._recorder is not None:
            self.profiler.__exit__(None, None, None)
            self._events = self.profiler.function_events

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, prev, current) -> None:
        for action in self._actions.get((prev, current), ()):
            action()

    def _open_step(self) -> None:
        if self.record_steps and self.profiler is not None and self.profiler._recorder is not None:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def start(self) -> None:
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Mark the end of one step (a training iteration): advance the schedule."""
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    # results
    def _results(self) -> EventList:
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._events

    def events(self) -> EventList:
        return self._results()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self._results().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Write the last recorded cycle as a Chrome trace (gzip-compressed when ``path`` ends in .gz)."""
        if str(path).endswith(".gz"):
            tmp = str(path)[:-3]
            self._results().export_chrome_trace(tmp)
            with open(tmp, "rb") as src, gzip.open(path, "wb") as dst:
                dst.writelines(src)
            os.remove(tmp)
        else:
            self._results().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        self._results().export_stacks(path, metric)

    def export_memory_timeline(self, path: str, device=None) -> None:
        raise NotImplementedError("ember's profiler records allocation sizes per op, not a memory timeline")


class ExecutionTraceObserver:
    """torch's execution-graph observer (records TorchScript-level graphs): not available in ember."""

    def __init__(self) -> None:
        raise NotImplementedError("ExecutionTraceObserver records torch's C++ execution graph; ember has none")
