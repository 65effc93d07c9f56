"""Per-sample gradients of the W2 MLP loss: ``vmap(grad(loss))`` against a Python loop of backward calls.

``python bench/vmap_grad.py [--batch 64] [--repeat 10] [--lib ember|torch] [--workload W2|W3] [--threads 1]``
prints one line per method and the ratio loop time / vmap time (best of ``--repeat`` runs each, after a warm-up
run). The parameters and data come from ``bench/workloads.py`` (W2's sizes and initialisation; ``--workload W3``:
the W3 CNN, whose per-example conv weights batch as grouped convolutions); the loop calls
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


def setup(lib, batch: int, sizes: dict | None = None, workload: str = "W2"):
    """(params, xs, ys, loss): the workload's parameters as plain tensors and a per-example loss."""
    from bench.workloads import WORKLOADS  # NumPy loads here: after main() fixed the BLAS threads

    if workload == "W3":
        return _setup_cnn(lib, batch, WORKLOADS["W3"], sizes)
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


def _setup_cnn(lib, batch: int, w3, sizes: dict | None):
    """W3's CNN (conv-relu-pool twice, linear) with a per-example loss: its convolutions get per-example weights
    under vmap(grad), one grouped convolution each."""
    sizes = dict(sizes or w3.sizes, batch=batch)
    arrays = w3.data(sizes)
    F = lib.nn.functional
    params = {k: lib.tensor(v) for k, v in arrays.items() if k not in ("x", "labels")}
    xs, ys = lib.tensor(arrays["x"]), lib.tensor(arrays["labels"])

    def loss(p, x, y):
        h = F.max_pool2d(F.relu(F.conv2d(x.unsqueeze(0), p["conv1_w"], p["conv1_b"], padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2_w"], p["conv2_b"], padding=1)), 2)
        return F.cross_entropy(F.linear(h.flatten(1), p["fc_w"], p["fc_b"]), y.unsqueeze(0))

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
    ap.add_argument("--workload", default="W2", choices=("W2", "W3"), help="W2 MLP (issue 8's target) or W3 CNN")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (set before the BLAS loads, as bench/run.py)")
    args = ap.parse_args(argv)
    for var in THREAD_VARS:
        os.environ.setdefault(var, str(args.threads))
    lib = __import__(args.lib)
    if args.lib == "torch":
        lib.set_num_threads(args.threads)
    params, xs, ys, loss = setup(lib, args.batch, workload=args.workload)
    t_vmap = best_time(lambda: per_sample_vmap(lib, params, xs, ys, loss), args.repeat)
    t_loop = best_time(lambda: per_sample_loop(lib, params, xs, ys, loss), args.repeat)
    ratio = t_loop / t_vmap
    what = "W2 MLP" if args.workload == "W2" else "W3 CNN"
    print(f"{args.lib}: per-sample gradients of the {what} loss, batch {args.batch}")
    print(f"  vmap(grad(loss)):          {t_vmap * 1e3:8.1f} ms")
    print(f"  loop of {args.batch} backward calls: {t_loop * 1e3:8.1f} ms")
    print(f"  ratio loop / vmap:         {ratio:8.2f}x")
    return ratio


if __name__ == "__main__":
    main()
