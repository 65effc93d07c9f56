"""Profile ember on W3 (the CNN step) with cProfile: ``python bench/profile_conv.py [--iters N] [--top K]``.

Prints the per-step time without the profiler (with and, in a child process, without ember's malloc
tuning), then the functions with the most own time (tottime) over ``--iters`` profiled steps. See
bench/PROFILE_CONV.md.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import ember  # noqa: E402
from ember import _malloc  # noqa: E402

from bench.workloads import WORKLOADS  # noqa: E402


def _step_time(step, iters: int) -> float:
    for _ in range(20):
        step()
    best = float("inf")
    for _ in range(5):   # best of 5 blocks: the machine may be shared
        t = time.perf_counter()
        for _ in range(iters):
            step()
        best = min(best, (time.perf_counter() - t) / iters)
    return best


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--time-only", action="store_true", help="print the step time only (used for the child run)")
    a = p.parse_args(argv)
    w = WORKLOADS["W3"]
    step, _ = w.build(ember, w.data(w.sizes), w.sizes)
    ms = _step_time(step, max(1, a.iters // 5)) * 1e3
    if a.time_only:
        print(f"{ms:.3f}")
        return
    env = dict(os.environ, EMBER_MALLOC_TUNING="0", PYTHONPATH=ROOT)
    off = subprocess.run([sys.executable, __file__, "--time-only", "--iters", str(a.iters)], env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    print(f"W3 ember, best block: {ms:.3f} ms/step (malloc tuning applied: {_malloc.applied}); "
          f"{off} ms/step with EMBER_MALLOC_TUNING=0")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(a.iters):
        step()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(a.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()
