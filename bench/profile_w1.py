"""Profile ember on W1 with cProfile: ``python bench/profile_w1.py [--iters N] [--top K]``.

Prints the functions with the most own time (tottime) over ``--iters`` W1 steps, after a warm-up,
and the same run's per-op time without the profiler for scale. See bench/PROFILE_W1.md.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402

from bench.workloads import WORKLOADS  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--top", type=int, default=25)
    a = p.parse_args(argv)
    w = WORKLOADS["W1"]
    sizes = w.sizes
    step, _ = w.build(ember, w.data(sizes), sizes)
    for _ in range(200):
        step()
    t = time.perf_counter()
    for _ in range(a.iters):
        step()
    per_op = (time.perf_counter() - t) / a.iters / sizes["n_ops"] * 1e6
    print(f"W1 ember without profiler: {per_op:.2f} µs/op")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(a.iters):
        step()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime").print_stats(a.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()
