"""Where a workload's time goes, by op: ``python bench/profile_ops.py W6 [--iters N] [--top K]``.

Times every ``Op.apply`` (forward, recording included) and every node's backward (``_apply``) by op
class, exclusive of the ops they call themselves (a backward formula's own ops count as that
backward's), plus the optimizer step and what is left (Python in the model, the engine loop).
cProfile cannot show this: NumPy's ufunc calls are not function calls to it, so their time lands on
the wrapper that calls every kernel.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
from ember.ops import _op  # noqa: E402
from ember.autograd import graph as _graph  # noqa: E402

from bench.workloads import WORKLOADS  # noqa: E402

_clock = time.process_time  # one thread: CPU time (a shared machine's waits for a core do not count)


class _Timer:
    """Exclusive time per key: a stack of running entries, each paused while an inner one runs."""

    def __init__(self):
        self.total = defaultdict(float)
        self.calls = defaultdict(int)
        self.stack = []  # [key, start, inner]

    def wrap(self, key_of, fn):
        def run(*args):
            key = key_of(*args)
            self.stack.append([key, _clock(), 0.0])
            try:
                return fn(*args)
            finally:
                k, t0, inner = self.stack.pop()
                dt = _clock() - t0
                self.total[k] += dt - inner
                self.calls[k] += 1
                if self.stack:
                    self.stack[-1][2] += dt
        return run


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("workload")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--top", type=int, default=30)
    a = p.parse_args(argv)
    w = WORKLOADS[a.workload]
    step, _ = w.build(ember, w.data(w.sizes), w.sizes)
    for _ in range(3):
        step()
    t = _clock()
    for _ in range(a.iters):
        step()
    plain = (_clock() - t) / a.iters

    timer = _Timer()
    apply_fn = _op.Op.apply.__func__
    node_apply = _op.Op._apply
    acc_apply = _graph.AccumulateGrad._apply
    _op.Op.apply = classmethod(timer.wrap(lambda cls, *args: ("fwd", cls.__name__), apply_fn))
    _op.Op._apply = timer.wrap(lambda node, grads: ("bwd", type(node).__name__), node_apply)
    _graph.AccumulateGrad._apply = timer.wrap(lambda node, grads: ("bwd", "AccumulateGrad"), acc_apply)
    step_fn = timer.wrap(lambda: ("step", "(whole step)"), step)
    try:
        t = _clock()
        for _ in range(a.iters):
            step_fn()
        profiled = (_clock() - t) / a.iters
    finally:
        _op.Op.apply = classmethod(apply_fn)
        _op.Op._apply = node_apply
        _graph.AccumulateGrad._apply = acc_apply

    rest = timer.total.pop(("step", "(whole step)"))
    total = sum(timer.total.values()) + rest
    print(f"{a.workload}: {plain * 1e3:.2f} ms/step without the timer, {profiled * 1e3:.2f} ms with it")
    print(f"{'part':<6} {'op':<40} {'calls/step':>10} {'ms/step':>9} {'share':>6}")
    rows = sorted(timer.total.items(), key=lambda kv: -kv[1])
    rows.insert(0, (("rest", "(not in an op: model code, engine, optimizer)"), rest))
    for (part, name), v in rows[:a.top]:
        calls = timer.calls.get((part, name), a.iters) / a.iters
        print(f"{part:<6} {name:<40} {calls:>10.0f} {v / a.iters * 1e3:>9.3f} {v / total:>6.1%}")


if __name__ == "__main__":
    main()
