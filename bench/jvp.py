"""Forward-mode products: ember's func.jvp / jacfwd on forward-mode AD against the double-vjp path they replaced.

``python bench/jvp.py [--repeat 10] [--threads 1]`` prints a small table (best of ``--repeat`` runs after a warm-up):
  - ``func.jvp`` of the W2 MLP loss (bench/workloads.py: 784-512-256-10, batch 128) w.r.t. all parameters, with
    random tangents: ember forward mode, ember double vjp (J·t = d<J^T u, t>/du on the reverse engine, the former
    ``func._jac._jvp_impl``), torch.func.jvp;
  - ``func.jacfwd`` of f(x) = tanh(W x) * sin(x) + x.cumsum(0), x of 200 elements (a 200x200 Jacobian): the same three.
Not run by the tests (timing lives in bench/ only).
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.vmap_grad import THREAD_VARS, best_time  # noqa: E402 - after the path fix; loads no NumPy


def double_vjp_impl(func, primals: tuple, tangents: tuple):
    """The former ember ``_jvp_impl``: the vjp of the (linear) pullback, applied to the tangents."""
    from ember import zeros_like
    from ember.func import _pytree as P
    from ember.func._grad import _vjp, vjp

    out, pullback = vjp(func, *primals)
    out_flat, out_spec = P.tree_flatten(out)

    def pull(*cts):
        return pullback(P.tree_unflatten(list(cts), out_spec))

    _, push = _vjp(pull, tuple(zeros_like(o) for o in out_flat), False, frozenset(pullback.private_ids))
    return out, P.tree_unflatten(list(push(tuple(tangents))), out_spec)


def mlp_setup(lib):
    """(loss of the parameter dict, parameters, tangents) for W2's MLP on one batch."""
    import numpy as np

    from bench.workloads import WORKLOADS

    w2 = WORKLOADS["W2"]
    arrays = w2.data(w2.sizes)
    F = lib.nn.functional
    n_layers = len(w2.sizes["dims"]) - 1
    params = {k: lib.tensor(v) for k, v in arrays.items() if k not in ("x", "labels")}
    rng = np.random.default_rng(1)
    tangents = {k: lib.tensor(rng.standard_normal(v.shape).astype(v.dtype)) for k, v in arrays.items()
                if k not in ("x", "labels")}
    x, y = lib.tensor(arrays["x"]), lib.tensor(arrays["labels"])

    def loss(p):
        h = x
        for i in range(n_layers):
            h = h @ p[f"W{i}"] + p[f"b{i}"]
            if i < n_layers - 1:
                h = F.relu(h)
        return F.cross_entropy(h, y)

    return loss, params, tangents


def square_setup(lib, n: int = 200):
    import numpy as np

    rng = np.random.default_rng(2)
    w = lib.tensor(rng.standard_normal((n, n)) / np.sqrt(n))
    x = lib.tensor(rng.standard_normal(n))

    def f(v):
        return (w @ v).tanh() * v.sin() + v.cumsum(0)

    return f, x


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (set before the BLAS loads)")
    args = ap.parse_args(argv)
    for var in THREAD_VARS:
        os.environ.setdefault(var, str(args.threads))
    import torch

    import ember
    from ember.func import _jac

    torch.set_num_threads(args.threads)
    forward_impl = _jac._jvp_impl
    rows = {}

    def ember_both(name, run):
        rows[name, "ember forward mode"] = best_time(run, args.repeat)
        _jac._jvp_impl = double_vjp_impl
        try:
            rows[name, "ember double vjp"] = best_time(run, args.repeat)
        finally:
            _jac._jvp_impl = forward_impl

    loss, params, tangents = mlp_setup(ember)
    ember_both("jvp W2 MLP loss", lambda: ember.func.jvp(loss, (params,), (tangents,)))
    tloss, tparams, ttangents = mlp_setup(torch)
    rows["jvp W2 MLP loss", "torch.func"] = best_time(lambda: torch.func.jvp(tloss, (tparams,), (ttangents,)),
                                                      args.repeat)
    f, x = square_setup(ember)
    ember_both("jacfwd 200x200", lambda: ember.func.jacfwd(f)(x))
    tf, tx = square_setup(torch)
    rows["jacfwd 200x200", "torch.func"] = best_time(lambda: torch.func.jacfwd(tf)(tx), args.repeat)

    methods = ("ember forward mode", "ember double vjp", "torch.func")
    print(f"forward-mode products, best of {args.repeat}, {args.threads} BLAS thread(s); times in ms")
    print(f"  {'':18}" + "".join(f"{m:>20}" for m in methods) + f"{'double vjp / fwd':>18}{'fwd / torch':>13}")
    for name in ("jvp W2 MLP loss", "jacfwd 200x200"):
        t = [rows[name, m] for m in methods]
        print(f"  {name:18}" + "".join(f"{v * 1e3:20.2f}" for v in t) + f"{t[1] / t[0]:17.2f}x{t[0] / t[2]:12.2f}x")
    return rows


if __name__ == "__main__":
    main()
