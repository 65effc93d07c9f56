"""W1 with the profiler off, on, and off again, in one process: ``python bench/profiler_overhead.py``.

Profiling off must cost nothing (NOTE [profiler]): the off blocks before and after a profiled run should match
within noise, and the profiled run shows what recording every op and backward node costs. After the first
phase (never profiled) the modes alternate (on, off, on, off ...); the fastest block of each mode is printed
as microseconds per op of W1 (the minimum is the least disturbed by other load on a shared machine).
"""
from __future__ import annotations

import os
import sys
from time import perf_counter

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402


def _block(step, iters: int) -> float:
    t = perf_counter()
    for _ in range(iters):
        step()
    return (perf_counter() - t) / iters


def main(rounds: int = 15, iters: int = 200) -> dict:
    w = WORKLOADS["W1"]
    sizes = w.sizes
    step, _ = w.build(ember, w.data(sizes), sizes)
    ops = w.ops_per_iter(sizes)
    for _ in range(50):
        step()
    times = {"off (never profiled)": [], "on": [], "off (after profiling)": []}
    for _ in range(rounds):
        times["off (never profiled)"].append(_block(step, iters))
    for _ in range(rounds):
        with ember.profiler.profile():
            times["on"].append(_block(step, iters // 4))
        times["off (after profiling)"].append(_block(step, iters))
    result = {k: min(v) * 1e6 / ops for k, v in times.items()}
    for k, v in result.items():
        print(f"W1 {k:24s} {v:8.3f} us/op")
    base = result["off (never profiled)"]
    print(f"off after / off before: {result['off (after profiling)'] / base:.3f}   on / off: {result['on'] / base:.2f}")
    return result


if __name__ == "__main__":
    main()
