"""torch.utils.benchmark Timer/Measurement: statistics and printed summaries equal torch's for the same block
times; timing calls give torch's shapes of result (block sizes, counts) and errors."""
from __future__ import annotations

import re

import pytest
import torch.utils.benchmark  # noqa: F401 - torch loads it on request

from oracle import ember, same_outcome

RAW = {
    "one": [2.5e-4],
    "few": [1.2e-3, 1.1e-3, 1.3e-3],
    "steady": [1.00e-3, 1.01e-3, 0.99e-3, 1.02e-3, 1.00e-3, 0.98e-3],
    "noisy": [1e-3, 5e-3, 1.2e-3, 0.9e-3, 9e-3, 1.1e-3, 1e-3],
    "nanos": [3.1e-7, 3.0e-7, 3.3e-7, 2.9e-7, 3.0e-7],
}


def _measurement(lib, key: str, **spec):
    b = lib.utils.benchmark
    task = b.TaskSpec(stmt=spec.pop("stmt", "x + y"), setup=spec.pop("setup", "pass"), **spec)
    return b.Measurement(number_per_run=100, raw_times=RAW[key], task_spec=task)


def _summary(m) -> tuple:
    text = repr(m).split("\n", 1)[1]  # after the object's address line
    return (m.median, m.mean, m.iqr, m.significant_figures, m.has_warnings, m.title, m.env, m.as_row_name, text,
            m.times, m.num_threads, m.meets_confidence(0.2))


@pytest.mark.parametrize("key", list(RAW))
@pytest.mark.parametrize("spec", [{}, {"label": "add", "sub_label": "small", "description": "cpu", "num_threads": 2},
                                  {"stmt": "a = 1\nb = a + 1", "setup": "import math\nx = 2", "sub_label": "s"}])
def test_measurement_statistics_and_repr_match_torch(key: str, spec: dict) -> None:
    same_outcome(lambda lib: _summary(_measurement(lib, key, **dict(spec))))


def test_merge_matches_torch() -> None:
    same_outcome(lambda lib: [(m.number_per_run, m.times, m.title) for m in lib.utils.benchmark.Measurement.merge(
        [_measurement(lib, "few"), _measurement(lib, "steady"), _measurement(lib, "one", label="L")])])


def _shape(m) -> str:
    """The summary with the timing-dependent parts (values, block counts and sizes) blanked."""
    text = repr(m).split("\n", 1)[1]
    text = re.sub(r"\n  WARNING:.*", "", text, flags=re.S)
    text = re.sub(r"\n  IQR: .*", "", text)
    text = re.sub(r"(Median: )?-?[0-9]+\.[0-9]+ (ns|us|ms|s)\b", "T", text)
    return re.sub(r"[0-9]+ measurements?, [0-9]+ runs (per measurement,|,)", "N measurements, R runs", text)


CALLS = """
_shape(torch.utils.benchmark.Timer("x + 1", globals={"x": torch.ones(4)}, label="add", sub_label="s", description="d").timeit(50))
_shape(torch.utils.benchmark.Timer("torch.ones(3).sum()").timeit(20))
_shape(torch.utils.benchmark.Timer("y * 2", setup="y = torch.ones(2)").blocked_autorange(min_run_time=0.02))
_shape(torch.utils.benchmark.Timer("y * 2", setup="y = 3").adaptive_autorange(min_run_time=0.01, max_run_time=0.3))
torch.utils.benchmark.Timer("x + 1", globals={"x": 1}).timeit(7).number_per_run
torch.utils.benchmark.Timer(lambda: 1)
torch.utils.benchmark.Timer("pass", global_setup="int x;")
torch.utils.benchmark.Timer("pass", language="fortran")
torch.utils.benchmark.Timer("pass").repeat()
torch.utils.benchmark.Timer("pass").autorange()
torch.utils.benchmark.Timer("undefined_name").timeit(1)
torch.utils.benchmark.select_unit(3e-7), torch.utils.benchmark.select_unit(2.5), torch.utils.benchmark.select_unit(4e-3)
torch.utils.benchmark.trim_sigfig(3.14159, 2), torch.utils.benchmark.trim_sigfig(123456.0, 3)
torch.utils.benchmark.unit_to_english("us"), torch.utils.benchmark.ordered_unique([3, 1, 3, 2])
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_timer_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"torch": lib, "_shape": _shape}))


def test_blocked_autorange_block_size_rule() -> None:
    """Blocks grow tenfold until the timer overhead is negligible; the run lasts at least min_run_time."""
    m = ember.utils.benchmark.Timer("sum(range(50))").blocked_autorange(min_run_time=0.05)
    assert str(m.number_per_run).strip("0") == "1" and sum(m.raw_times) >= 0.05
    assert len(m.raw_times) >= 1 and all(t > 0 for t in m.times)
