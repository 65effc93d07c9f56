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

from bench.workloads import WORKLOADS, chain  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--no-cprofile", action="store_true", help="only run the loop (for a sampling profiler)")
    a = p.parse_args(argv)
    w = WORKLOADS["W1"]
    sizes = w.sizes
    n_ops = sizes["n_ops"]
    arrays = w.data(sizes)
    step, _ = w.build(ember, arrays, sizes)
    for _ in range(200):
        step()
    t = time.perf_counter()
    for _ in range(a.iters):
        step()
    per_op = (time.perf_counter() - t) / a.iters / n_ops * 1e6
    print(f"W1 ember without profiler: {per_op:.2f} µs/op (forward + backward)")
    if a.no_cprofile:
        return
    _split(arrays, n_ops, a.iters)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(a.iters):
        step()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime").print_stats(a.top)
    print(out.getvalue())


def _split(arrays: dict, n_ops: int, iters: int) -> None:
    """Forward without a graph, forward recording one, and backward alone, in µs per op."""
    x, y = (ember.tensor(arrays[k], requires_grad=True) for k in "xy")
    fwd = bwd = 0.0
    for _ in range(iters):
        x.grad = y.grad = None
        t0 = time.perf_counter()
        loss = chain(ember, x, y, n_ops).sum()
        t1 = time.perf_counter()
        loss.backward()
        fwd += t1 - t0
        bwd += time.perf_counter() - t1
    t0 = time.perf_counter()
    with ember.no_grad():
        for _ in range(iters):
            chain(ember, x, y, n_ops).sum()
    plain = time.perf_counter() - t0
    scale = 1e6 / iters / n_ops
    print(f"  forward, no graph (no_grad): {plain * scale:.2f} µs/op")
    print(f"  forward, recording:          {fwd * scale:.2f} µs/op")
    print(f"  backward:                    {bwd * scale:.2f} µs/op")


if __name__ == "__main__":
    main()
