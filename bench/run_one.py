"""Run one (workload, library) in this process and print one JSON line: ``python bench/run_one.py W1 ember``.

Thread counts are fixed in the environment before NumPy or torch is imported, so each library runs
alone in a fresh process with the BLAS it would really use. Modes:
  time   (default) warm up, then time several blocks; per-iteration seconds of each block (with ``--compile``
         also the first two iterations' seconds: tracing, then confirming the program)
  grads  one step; gradients and loss saved to ``--out`` (an .npz) for the correctness guard
  once   one step of a big graph (G1): its time, and peak RSS over the RSS before it
  rss    ``--steps`` steps (M1); the process's peak RSS
  env    versions, BLAS and thread settings for the report header (workload and library ignored)
  base   peak RSS of the bare interpreter with NumPy imported (workload and library ignored)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _torch(threads: int):
    import torch

    torch.set_num_threads(threads)
    return torch


def _ember(threads: int):
    import ember

    return ember


def _lib_runner(load, compile: bool = False):
    def build(workload, arrays, sizes, threads):
        if compile:
            return workload.build(load(threads), arrays, sizes, compile=True)
        return workload.build(load(threads), arrays, sizes)
    return build


def _floor_runner(workload, arrays, sizes, threads):
    from bench.floor import BUILDERS

    return BUILDERS[workload.name](arrays, sizes)


def _peer_runner(module: str):
    def build(workload, arrays, sizes, threads):
        from importlib import import_module

        return import_module(f"bench.{module}").BUILDERS[workload.name](arrays, sizes)
    return build


# name -> build(workload, arrays, sizes, threads) -> (step, grads)
LIBRARIES = {
    "ember": _lib_runner(_ember),
    "ember-compiled": _lib_runner(_ember, compile=True),  # the workload through ember.compile
    "torch": _lib_runner(_torch),
    "floor": _floor_runner,
    "autograd": _peer_runner("peer_autograd"),
    "mygrad": _peer_runner("peer_mygrad"),
}
# the packages a peer needs (the bench extra installs them); a peer whose packages are missing is left out
# (autograd.numpy, not autograd: a tests/autograd folder on sys.path is a namespace package of that name;
# autograd.scipy.signal, W3's convolution, imports SciPy)
PEER_PACKAGES = {"autograd": ("autograd.numpy", "scipy"), "mygrad": ("mygrad",)}


def _rss_now() -> int:
    """Current resident set size in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _peak_rss() -> int:
    """Peak resident set size of this process in bytes (VmHWM: unlike ru_maxrss on Linux, it does
    not inherit the parent's peak across fork + exec)."""
    try:
        with open("/proc/self/status") as f:
            for ln in f:
                if ln.startswith("VmHWM:"):
                    return int(ln.split()[1]) * 1024
    except OSError:
        pass
    import resource

    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb if sys.platform == "darwin" else kb * 1024


def _time(step, quick: bool, threads: int = 1) -> list[float]:
    """Per-iteration seconds of each timed block. One thread: the process's CPU time (on a machine shared with other
    jobs the wall clock also counts the waits for a core, which land on whichever cell ran then); more threads: the
    wall clock (CPU time would add the threads up)."""
    from time import perf_counter, process_time

    clock = process_time if threads == 1 else perf_counter
    warm, block, nblocks = (0.05, 0.05, 3) if quick else (0.5, 0.25, 7)
    t0 = clock()
    n = 0
    while True:
        step()
        n += 1
        elapsed = clock() - t0
        if n >= 2 and elapsed >= warm:
            break
    iters = max(1, int(block / (elapsed / n)))
    out = []
    for _ in range(nblocks):
        t = clock()
        for _ in range(iters):
            step()
        out.append((clock() - t) / iters)
    return out


def _env_info() -> dict:
    import platform

    import numpy as np

    info = {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
            "env": {v: os.environ.get(v) for v in THREAD_VARS + BLAS_VARS}}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), None)
    except OSError:
        info["cpu"] = None
    try:
        import threadpoolctl

        info["numpy_blas"] = [{k: d.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                              for d in threadpoolctl.threadpool_info()]
    except ImportError:
        info["numpy_blas"] = None
    import torch

    info["torch"] = torch.__version__
    info["torch_threads"] = torch.get_num_threads()
    info["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    m = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    info["torch_blas"] = m.group(1) if m else None
    import ember

    info["ember"] = ember.__version__
    from importlib.metadata import PackageNotFoundError, version

    info["peers"] = {}
    for name in ("autograd", "mygrad"):
        try:
            info["peers"][name] = version(name)
        except PackageNotFoundError:
            pass
    return info


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", nargs="?", default="W1")
    p.add_argument("library", nargs="?", default="ember")
    p.add_argument("--mode", default="time", choices=("time", "grads", "once", "rss", "env", "base"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--n-ops", type=int, default=None, help="override the chain length (W1, G1)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--grad-steps", type=int, default=1, help="grads mode: steps before saving (compiled programs "
                   "replay from the third call)")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    for v in THREAD_VARS:
        os.environ[v] = str(a.threads)
    sys.path.insert(0, ROOT)

    if a.mode == "base":
        import numpy  # noqa: F401

        print(json.dumps({"peak_rss": _peak_rss()}))
        return
    if a.mode == "env":
        print(json.dumps(_env_info()))
        return

    from bench.workloads import WORKLOADS

    w = WORKLOADS[a.workload]
    sizes = dict(w.sizes)
    if a.n_ops is not None:
        sizes["n_ops"] = a.n_ops
    arrays = w.data(sizes)
    runner = LIBRARIES[a.library]
    step, grads = runner(w, arrays, sizes, a.threads)

    if a.mode == "time":
        res = {}
        if a.library == "ember-compiled":  # what compiling costs: the first calls trace (compile time)
            from time import perf_counter

            first = []
            for _ in range(2):
                t = perf_counter()
                step()
                first.append(perf_counter() - t)
            res["first_calls_s"] = first
        res["per_iter_s"] = _time(step, a.quick, a.threads)
    elif a.mode == "grads":
        import numpy as np

        for _ in range(a.grad_steps):
            loss = step()
        loss_dtype = str(getattr(loss, "dtype", type(loss).__name__)).removeprefix("torch.").removeprefix("ember.")
        loss = float(loss if isinstance(loss, (float, np.floating)) else loss.item())
        g = {k: np.asarray(v) for k, v in grads().items()}
        np.savez(a.out, __loss__=np.float64(loss), **g)
        res = {"loss": loss, "loss_dtype": loss_dtype, "grad_dtypes": sorted({str(v.dtype) for v in g.values()})}
    elif a.mode == "once":
        from time import perf_counter

        if "n_ops" in sizes:  # warm up on a short chain: first-call costs are not what G1 measures
            runner(w, w.data(sizes), dict(sizes, n_ops=min(sizes["n_ops"], 600)), a.threads)[0]()
        before = _rss_now()
        t = perf_counter()
        step()
        res = {"seconds": perf_counter() - t, "peak_rss": _peak_rss(), "rss_before": before}
    else:  # rss
        for _ in range(a.steps):
            step()
        res = {"peak_rss": _peak_rss()}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
