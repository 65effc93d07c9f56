"""W1 with the profiler off, on, and off again, in one process: ``python bench/profiler_overhead.py
[--before PATH]``.

Profiling off must cost nothing (NOTE [profiler]): the off blocks before and after a profiled run should match
within noise, and the profiled run shows what recording every op and backward node costs. With ``--before`` (a
checkout without the profiler, e.g. /work/main), both trees' ember packages are loaded into this process as copies
(alike, so neither has an import-order advantage) and their W1 blocks alternate, timed under the same load. The fastest block of
each mode is printed as microseconds per op (the minimum is the least disturbed by other load).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from time import perf_counter

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402


def _load_copy(root: str, name: str = "ember_before"):
    """Another checkout's ember package, imported as ``name`` (its modules import each other relatively)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, "ember", "__init__.py"),
                                                  submodule_search_locations=[os.path.join(root, "ember")])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _block(step, iters: int) -> float:
    t = perf_counter()
    for _ in range(iters):
        step()
    return (perf_counter() - t) / iters


def main(rounds: int = 15, iters: int = 200, before: str | None = None) -> dict:
    w = WORKLOADS["W1"]
    sizes = w.sizes
    data = w.data(sizes)
    lib = _load_copy(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ember_this") if before else ember
    step, _ = w.build(lib, data, sizes)
    ops = w.ops_per_iter(sizes)
    old_step = w.build(_load_copy(before), data, sizes)[0] if before else None
    for _ in range(50):
        step()
        if old_step:
            old_step()
    times = {"off (never profiled)": [], "on": [], "off (after profiling)": []}
    if old_step:
        times["before (other tree)"] = []
    for _ in range(rounds):
        times["off (never profiled)"].append(_block(step, iters))
        if old_step:
            times["before (other tree)"].append(_block(old_step, iters))
    for _ in range(rounds):
        with lib.profiler.profile():
            times["on"].append(_block(step, iters // 4))
        times["off (after profiling)"].append(_block(step, iters))
        if old_step:
            times["before (other tree)"].append(_block(old_step, iters))
    result = {k: min(v) * 1e6 / ops for k, v in times.items()}
    for k, v in result.items():
        print(f"W1 {k:24s} {v:8.3f} us/op")
    base = result["off (never profiled)"]
    print(f"off after / off before: {result['off (after profiling)'] / base:.3f}   on / off: {result['on'] / base:.2f}")
    if old_step:
        print(f"this tree / other tree (profiler off): {base / result['before (other tree)']:.3f}")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="a checkout to compare with (loaded in this process)")
    main(before=parser.parse_args().before)
