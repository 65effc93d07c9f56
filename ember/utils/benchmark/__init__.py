"""ember.utils.benchmark: torch.utils.benchmark's Timer and Measurement (Python statements; C++ statements and
Callgrind counts need torch's compiler toolchain and are not available).

``Timer`` wraps ``timeit.Timer`` with warm-up, replicates and torch's block-size rule (grow the statements per
block tenfold until the timer's own overhead is under 0.01% and a block takes a thousandth of ``min_run_time``);
``Measurement`` keeps the raw block times and derives median, mean, IQR, significant figures and torch's printed
summary (with its warnings when the IQR is large next to the median).
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import math
import sys
import textwrap
import timeit

import numpy as np

__all__ = ["Timer", "Measurement", "TaskSpec", "Language", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads", "timer"]

timer = timeit.default_timer
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_MAX_SIGNIFICANT_FIGURES = 4


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def select_unit(t: float) -> tuple:
    """(unit, scale) that shows ``t`` seconds as a number of order one."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(np.log10(np.float32(t)) // 3), "s")  # float32, as torch
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(np.ceil(np.log10(np.abs(np.float32(x)))))  # in float32, as torch's tensor arithmetic
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * scale)


def ordered_unique(elements) -> list:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int):
    """Run the block with ``n`` threads (ember's NumPy kernels take their thread count from the environment)."""
    from ... import get_num_threads, set_num_threads

    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a Timer measures (everything but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self) -> str:
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """Block times of one statement: ``raw_times[i]`` is the time of ``number_per_run`` executions."""

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple = ()
        self._warnings: tuple = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list:
        """Seconds per execution of the statement, one per block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            values = np.array(self._sorted_times, dtype=np.float64)
            self._median = float(np.quantile(values, 0.5))
            self._mean = float(values.mean())
            self._p25, self._p75 = float(np.quantile(values, 0.25)), float(np.quantile(values, 0.75))
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                self._add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, msg: str) -> None:
        rel_iqr = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% of the median measurement.\n"
                           f"           {msg}",)

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread of the interquartile times supports (1 to 4)."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = np.array(self._sorted_times[n // 4:int(math.ceil(3 * n / 4))])
        ci = max(1.645 * float(middle.std()) / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        figures = int(math.floor(math.log10(self._median / ci)))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        threads = self.num_threads
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {id(self):#x}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        return "\n".join(ln for ln in "\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements) -> list:
        """One Measurement per TaskSpec, its times extrapolated to one run each."""
        groups: dict = {}
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec) for spec, times in groups.items()]


class Timer:
    """Time a Python statement (``stmt``, with ``setup`` run once) as torch.utils.benchmark.Timer does.

    ``globals`` name what the statements use; ``torch`` is ember unless given."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "", timer=timer,
                 globals: dict | None = None, label: str | None = None, sub_label: str | None = None,  # noqa: A002
                 description: str | None = None, env: str | None = None, num_threads: int = 1,
                 language=Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", sys.modules[__name__.split(".")[0]])
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply "
                                 f"be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("C++ statements need torch's C++ extension toolchain; ember times Python "
                                      "statements only")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` executions, after a warm-up of a hundredth of that."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                               task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        with set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                    break
                if number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _measure(self, number: int, stop, min_run_time: float, max_run_time=None, callback=None) -> list:
        total, can_stop, times = 0.0, False, []
        with set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of a size that makes the timer's overhead negligible, until ``min_run_time`` has passed."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure(number, lambda times: True, min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> Measurement:
        """Blocks until the IQR is under ``threshold`` of the median (at least 4 blocks), or ``max_run_time``."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times: list) -> bool:
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)

        times = self._measure(number, stop, min_run_time, max_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("Callgrind instruction counts need valgrind and torch's C++ bindings; ember times "
                                  "wall clock only")
