"""Per-sample gradients of the W2 MLP loss: ``vmap(grad(loss))`` against a Python loop of backward calls.

``python bench/vmap_grad.py [--batch 64] [--repeat 10] [--lib ember|torch] [--threads 1]`` prints one line per method
and the ratio loop time / vmap time (best of ``--repeat`` runs each, after a warm-up run). The
parameters and data come from ``bench/workloads.py`` (W2's sizes and initialisation); the loop calls
``loss.backward()`` once per example and keeps each example's gradients, as the vmap version returns them.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def setup(lib, batch: int, sizes: dict | None = None):
    """(params, xs, ys, loss): W2's parameters as plain tensors and a per-example loss."""
    from bench.workloads import WORKLOADS  # NumPy loads here: after main() fixed the BLAS threads

    w2 = WORKLOADS["W2"]
    sizes = dict(sizes or w2.sizes, batch=batch)
    arrays = w2.data(sizes)
    F = lib.nn.functional
    n_layers = len(sizes["dims"]) - 1
    params = {k: lib.tensor(v) for k, v in arrays.items() if k not in ("x", "labels")}
    xs, ys = lib.tensor(arrays["x"]), lib.tensor(arrays["labels"])

    def loss(p, x, y):
        h = x.unsqueeze(0)
        for i in range(n_layers):
            h = h @ p[f"W{i}"] + p[f"b{i}"]
            if i < n_layers - 1:
                h = F.relu(h)
        return F.cross_entropy(h, y.unsqueeze(0))

    return params, xs, ys, loss


def per_sample_vmap(lib, params, xs, ys, loss) -> dict:
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, xs, ys)


def per_sample_loop(lib, params, xs, ys, loss) -> dict:
    leaves = {k: v.detach().requires_grad_() for k, v in params.items()}
    out = {k: [] for k in leaves}
    for i in range(xs.shape[0]):
        for p in leaves.values():
            p.grad = None
        loss(leaves, xs[i], ys[i]).backward()
        for k, p in leaves.items():
            out[k].append(p.grad)
    return {k: lib.stack(v) for k, v in out.items()}


def best_time(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None) -> float:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--lib", default="ember", choices=("ember", "torch"))
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (set before the BLAS loads, as bench/run.py)")
    args = ap.parse_args(argv)
    for var in THREAD_VARS:
        os.environ.setdefault(var, str(args.threads))
    lib = __import__(args.lib)
    if args.lib == "torch":
        lib.set_num_threads(args.threads)
    params, xs, ys, loss = setup(lib, args.batch)
    t_vmap = best_time(lambda: per_sample_vmap(lib, params, xs, ys, loss), args.repeat)
    t_loop = best_time(lambda: per_sample_loop(lib, params, xs, ys, loss), args.repeat)
    ratio = t_loop / t_vmap
    print(f"{args.lib}: per-sample gradients of the W2 MLP loss, batch {args.batch}")
    print(f"  vmap(grad(loss)):          {t_vmap * 1e3:8.1f} ms")
    print(f"  loop of {args.batch} backward calls: {t_loop * 1e3:8.1f} ms")
    print(f"  ratio loop / vmap:         {ratio:8.2f}x")
    return ratio


if __name__ == "__main__":
    main()
