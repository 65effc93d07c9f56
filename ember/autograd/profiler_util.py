"""Profiler results: recorded events, their averages by key, torch's summary table and the Chrome trace format."""
from __future__ import annotations

import json
import os
import threading
from collections import namedtuple

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "Interval"]

Interval = namedtuple("Interval", ["start", "end"])


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _Times:
    """The derived times every event kind shows (microseconds; ``*_str`` formatted as torch's)."""

    use_device = None
    device_type = "CPU"
    node_id = -1
    is_async = False
    is_legacy = False
    is_remote = False
    overload_name = ""
    flops = 0
    device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0

    cuda_time = device_time
    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = device_time_total_str = self_device_time_total_str = property(lambda self: _format_time(0))


class FunctionEvent(_Times):
    """One recorded range: an op, a record_function block, or a backward node's evaluation."""

    count = 1

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float, *,  # noqa: A002
                 input_shapes=None, input_dtypes=None, stack=None, cpu_memory_usage: int = 0,
                 is_user_annotation: bool = False, sequence_nr: int = -1, scope: int = 0) -> None:
        self.id, self.name, self.thread = id, name, thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_dtypes = input_dtypes if input_dtypes is not None else []
        self.stack = stack if stack is not None else []
        self.cpu_memory_usage = cpu_memory_usage
        self.is_user_annotation = is_user_annotation
        self.sequence_nr, self.scope = sequence_nr, scope
        self.cpu_children: list = []
        self.cpu_parent = None
        self.fwd_thread = thread
        self.kernels: list = []

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.end - self.time_range.start

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def append_cpu_child(self, child: "FunctionEvent") -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: "FunctionEvent") -> None:
        self.cpu_parent = parent

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_Times):
    """The sum of the events sharing one key (name, and shapes / stack when grouped by them)."""

    def __init__(self) -> None:
        self.key = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.input_shapes = self.stack = None
        self.is_user_annotation = False
        self.scope = 0
        self.cpu_parent = None
        self.cpu_children = None

    def add(self, other) -> "FunctionEventAvg":
        if self.key is None:
            self.key, self.input_shapes, self.stack = other.key, other.input_shapes, other.stack
            self.is_user_annotation, self.scope = other.is_user_annotation, other.scope
            self.cpu_parent = other.cpu_parent
        elif other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {self.key} vs {other.key}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    __iadd__ = add

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


def _average_key(name: str) -> str:
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


class EventList(list):
    """A list of events with torch's summaries: key_averages, table, export_chrome_trace."""

    def __init__(self, *args, use_device=None, profile_memory: bool = False, with_flops: bool = False) -> None:
        super().__init__(*args)
        self._use_device, self._profile_memory, self._with_flops = use_device, profile_memory, with_flops

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> "EventList":
        """One FunctionEventAvg per key (name; plus input shapes / the top ``group_by_stack_n`` frames)."""
        groups: dict = {}
        for e in self:
            key = [_average_key(e.key)]
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += e.stack[:group_by_stack_n]
            avg = groups.get(tuple(key))
            if avg is None:
                avg = groups[tuple(key)] = FunctionEventAvg()
            avg.add(_Renamed(e, key[0]))
        for avg in groups.values():
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if group_by_stack_n == 0:
                avg.stack = []
            else:
                avg.stack = avg.stack[:group_by_stack_n]
        return EventList(groups.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                         with_flops=self._with_flops)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg()
        for e in self:
            total.add(_Renamed(e, "Total"))
        return total

    def table(self, sort_by=None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header=None,
              top_level_events_only: bool = False, time_unit=None) -> str:
        """torch's summary table: one row per event (or average), sorted by the attribute ``sort_by``."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width, max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, profile_memory=self._profile_memory,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events in the Chrome trace event format (open with Perfetto or chrome://tracing)."""
        _write_chrome_trace(self, path, self._profile_memory)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write "frame;frame;...;op value" lines (a flame graph's input), innermost frame last."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    value = int(getattr(e, metric.replace("cuda", "device")))
                    f.write(";".join(reversed(e.stack)) + f";{e.name} {value}\n")


class _Renamed:
    """An event seen under another key (ProfilerStep#3 averaged as ProfilerStep*)."""

    def __init__(self, event, key: str) -> None:
        self._e, self.key = event, key

    def __getattr__(self, name):
        return getattr(self._e, name)


def _build_table(events, sort_by=None, header=None, row_limit: int = 100, max_src_column_width: int = 75,
                 max_name_column_width: int = 55, max_shapes_column_width: int = 80, profile_memory: bool = False,
                 top_level_events_only: bool = False, time_unit=None) -> str:
    """The summary table in torch's layout (column widths, formats and the closing total)."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device").replace("xpu", "device")),
                        reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width or 10 ** 9)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width or 10 ** 9)
    src_width = None
    if stacks:
        src_width = min(max(len(s) for st in stacks for s in st) + 4, max_src_column_width or 10 ** 9)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [(name_width, ">")] + [(12, ">")] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append((shapes_width, ">"))
    if stacks:
        headers.append("Source Location")
        widths.append((src_width, "<"))
    row_format = "".join("{: " + align + str(w) + "}  " for w, align in widths)
    separator = "".join("-" * w + "  " for w, _ in widths)
    line_length = sum(w + 2 for w, _ in widths) - 2

    def time(us: float, text: str) -> str:
        return {"s": f"{us / 1e6:.3f}s", "ms": f"{us / 1e3:.3f}ms", "us": f"{us:.3f}us"}.get(time_unit, text)

    def trim(path: str) -> str:
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    total_self = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total_self),
               time(e.self_cpu_time_total, e.self_cpu_time_total_str),
               _format_time_share(e.cpu_time_total, total_self), time(e.cpu_time_total, e.cpu_time_total_str),
               time(e.cpu_time, e.cpu_time_str)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim(e.stack[0]) if e.stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for frame in e.stack[1:]:
                lines.append(row_format.format(*blank, trim(frame)))
            lines.append(row_format.format(*blank, ""))
    lines += [separator, f"Self CPU time total: {time(total_self, _format_time(total_self))}"]
    return "\n".join(lines) + "\n"


def _write_chrome_trace(events, path: str, profile_memory: bool) -> None:
    pid = os.getpid()
    trace = []
    threads = sorted({e.thread for e in events})
    trace.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}})
    for tid in threads:
        label = "thread " + str(tid) + (" (main)" if tid == threading.main_thread().native_id else "")
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": label}})
    for e in events:
        args = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_dtypes
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if profile_memory:
            args["CPU Mem"] = e.cpu_memory_usage
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.name,
                      "pid": pid, "tid": e.thread, "ts": e.time_range.start, "dur": e.cpu_time_total, "args": args})
    doc = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms", "traceEvents": trace,
           "traceName": str(path)}
    with open(path, "w") as f:
        json.dump(doc, f)
