"""The GPU check of issue 22: ember on ``cuda`` (CuPy) against torch on CUDA, on a machine with both.

    make gpu-check            (= PYTHONUNBUFFERED=1 PYTHONPATH=. python tools/gpu_check.py)

Sections, each guarded (an exception is recorded with its traceback and the next section runs), each printing
progress lines, in a total of about 7 minutes:
  env      versions, the card, whether ember sees cuda and CuPy arrays back its tensors
  smoke    a few ops, a backward, moves, mixing errors, printing, torch.cuda's answers
  ops      op_db.py on cuda, over --jobs processes: each op's samples (up to --samples each, within --ops-budget
           seconds) run in ember on cuda and in torch on cuda: outputs (values, dtypes, shapes) and first gradients compared
           with the op's tolerances; per-op pass / fail / error with the first message
  demo     the demo's DigitsNet trained on cuda (Adam, cross-entropy), loss and accuracy per epoch, beside the
           same run on the CPU (scikit-learn's digits when installed, else a synthetic 8x8 set)
  bench    workloads W2, W3, W5, W6 of bench/ on cuda in ember and in torch (eager), same inputs: first-step
           losses compared, then ms/iter over timed blocks (synchronized before and after); W2, W3, W6 also
           through ember.compile (time of the first two calls, which trace; ms/iter of the replays)
The summary goes to ``$OUT`` (or ``--out``) as gpu_check.json and gpu_check.md, and to stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import signal
import sys
import time
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "ops")]

RESULTS: dict = {"sections": {}}


def _ml_dtypes_or_shim() -> None:
    """tests/op_db.py and tests/oracle.py import ml_dtypes (bfloat16): without it (a bare GPU machine) a stand-in
    module whose bfloat16 no array converts to, so the bfloat16 samples fail to build and the rest runs."""
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        import types

        shim = types.ModuleType("ml_dtypes")
        shim.bfloat16 = np.dtype("V2")
        sys.modules["ml_dtypes"] = shim
        RESULTS["note"] = "ml_dtypes is not installed: op_db's bfloat16 samples are not run"


_ml_dtypes_or_shim()
T0 = time.perf_counter()
# --dry-run (no GPU): ember on the NumPy stand-in cuda device, torch on its CPU; checks the script itself
DRY = [False]


def torch_device() -> str:
    return "cpu" if DRY[0] else "cuda"


def say(*parts) -> None:
    print(f"[{time.perf_counter() - T0:6.1f}s]", *parts, flush=True)


def section(name: str):
    """Run the decorated function as a section: its result or its error goes into RESULTS."""
    def run(fn):
        say(f"== {name}")
        start = time.perf_counter()
        try:
            out = fn()
            RESULTS["sections"][name] = {"ok": True, "seconds": round(time.perf_counter() - start, 1), "result": out}
        except BaseException as e:  # noqa: BLE001 - recorded; the next section runs
            if isinstance(e, KeyboardInterrupt):
                raise
            RESULTS["sections"][name] = {"ok": False, "seconds": round(time.perf_counter() - start, 1),
                                         "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
            say(f"!! {name} failed: {type(e).__name__}: {e}")
        return fn
    return run


def sync() -> None:
    import torch

    import ember

    ember.cuda.synchronize()
    if not DRY[0]:
        torch.cuda.synchronize()


# ---------------------------------------------------------------------------------------------- env
def check_env() -> dict:
    import torch

    import ember

    try:
        import cupy

        cupy_version = cupy.__version__
    except ImportError:
        cupy_version = None
    out = {"python": platform.python_version(), "numpy": np.__version__, "cupy": cupy_version, "dry_run": DRY[0],
           "torch": torch.__version__, "torch_cuda": torch.version.cuda,
           "card": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
           "ember_cuda_available": ember.cuda.is_available(), "ember_device_count": ember.cuda.device_count()}
    x = ember.ones(3, device="cuda")
    out["ember_array_type"] = f"{type(x._data).__module__}.{type(x._data).__name__}"
    out["ember_card"] = ember.cuda.get_device_name(0)
    say(json.dumps(out))
    return out


# ---------------------------------------------------------------------------------------------- smoke
def check_smoke() -> dict:
    import ember

    steps = {}

    def step(name, fn):
        try:
            steps[name] = repr(fn())[:200]
        except Exception as e:  # noqa: BLE001 - recorded
            steps[name] = f"ERROR {type(e).__name__}: {e}"[:300]
        say(f"  {name}: {steps[name][:120]}")

    x = ember.randn(64, 32, device="cuda", requires_grad=True)
    w = ember.randn(32, 16, device="cuda", requires_grad=True)
    step("matmul+relu+sum+backward", lambda: (((x @ w).relu().sum()).backward(), x.grad.device, w.grad.shape))
    step("item", lambda: (x * 2).sum().item())
    step("repr", lambda: repr(ember.arange(3.0, device="cuda")))
    step("cpu roundtrip", lambda: ember.allclose(x.detach().cpu().cuda(), x.detach()))
    step("mixing error", lambda: ember.ones(2, device="cuda") + ember.ones(2))
    step("0-d cpu scalar", lambda: (ember.ones(2, device="cuda") * ember.tensor(3.0)).tolist())
    step("numpy() refuses", lambda: ember.ones(2, device="cuda").numpy())
    step("softmax/log_softmax/cross_entropy",
         lambda: ember.nn.functional.cross_entropy(x[:, :10], ember.randint(0, 10, (64,), device="cuda")).item())
    step("conv2d", lambda: ember.nn.functional.conv2d(ember.randn(2, 3, 8, 8, device="cuda"),
                                                     ember.randn(4, 3, 3, 3, device="cuda")).shape)
    step("memory_allocated", lambda: ember.cuda.memory_allocated())

    def events():
        start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
        start.record()
        (x.detach() @ w.detach()).sum().item()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    step("events elapsed_time (ms)", events)
    step("synchronize", lambda: ember.cuda.synchronize())
    return steps


# ---------------------------------------------------------------------------------------------- ops
def _tol(dtype_name: str) -> tuple:
    return {"float16": (1e-2, 1e-2), "bfloat16": (1.6e-2, 1e-5), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9),
            "complex64": (1e-4, 1e-5), "complex128": (1e-7, 1e-9)}.get(dtype_name, (0, 0))


def _host(t) -> np.ndarray:
    import torch

    from oracle import BF16

    t = t.detach().cpu()
    if isinstance(t, torch.Tensor):
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy(force=True).view(BF16)
        return t.resolve_conj().numpy(force=True)  # force: torch's lazy ZeroTensor gradients
    return t.resolve_conj().numpy()


def _compare(e, t, rtol, atol, what: str) -> None:
    import torch

    import ember

    if t is None or e is None:
        assert e is None and t is None, f"{what}: ember {type(e).__name__} vs torch {type(t).__name__}"
        return
    if not isinstance(t, torch.Tensor):
        assert not isinstance(e, ember.Tensor), f"{what}: ember gave a tensor, torch {type(t).__name__}"
        assert e == t or (isinstance(t, float) and math.isnan(t) and math.isnan(e)), f"{what}: {e!r} vs {t!r}"
        return
    assert isinstance(e, ember.Tensor), f"{what}: ember gave {type(e).__name__}"
    assert str(e.device) == "cuda:0", f"{what}: on {e.device}"  # (torch's side may be on either device)
    en, tn = str(e.dtype).replace("torch.", ""), str(t.dtype).replace("torch.", "")
    assert en == tn, f"{what}: dtype {en} vs {tn}"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} vs {tuple(t.shape)}"
    a, b = _host(e), _host(t)
    r0, a0 = _tol(tn)
    rtol, atol = max(rtol or 0, r0), max(atol or 0, a0)
    if b.dtype.kind in "fc" or str(b.dtype) == "bfloat16":
        wide = np.complex128 if b.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(a.astype(wide), b.astype(wide), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def _run_case(lib, op, sample, arrays, ups_seed: int, dev: str | None = None):
    """(outputs, grads) of ``op`` on ``arrays`` in ``lib`` on cuda, or on ``dev`` (an exception in place of
    either)."""
    from oracle import BF16, _random_like, lib_tensor
    from op_db import call

    lib.manual_seed(0)
    dev = dev or ("cuda" if lib.__name__ == "ember" else torch_device())
    ins = []
    for a in arrays:
        t = lib_tensor(lib, a).to(dev)
        if op.grad and (a.dtype.kind in "fc" or a.dtype == BF16):
            t.requires_grad_(True)
        ins.append(t)
    old = lib.get_default_device()
    lib.set_default_device(dev)  # the tensors an op's lambda makes (indices, bounds) on the inputs' device
    try:
        out = call(op, sample, lib, ins)
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return e, None
    finally:  # (None, not "cpu": torch keeps a device mode for any default device set, which changes its fast paths)
        lib.set_default_device(None if str(old) == "cpu" else old)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    diff = [t for t in ins if t.requires_grad]
    with_grad = [o for o in outs if isinstance(o, lib.Tensor) and o.requires_grad]
    if not diff or not with_grad:
        return outs, None
    rng = np.random.default_rng(ups_seed)
    ups = [lib_tensor(lib, _random_like(rng, _host(o))).to(dev) for o in with_grad]
    try:
        return outs, lib.autograd.grad(with_grad, diff, ups, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return outs, e


class _TooSlow(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise _TooSlow in the block after ``seconds`` (a stuck sample must not eat the whole run)."""
    def on_alarm(signum, frame):
        raise _TooSlow(f"sample took over {seconds:.0f}s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class _TorchCudaGap(Exception):
    """torch on CUDA raises where its CPU kernel computes (e.g. integer matmul: "addmm_cuda" not implemented for
    'Long'), or gives another answer, and ember agrees with torch's CPU: counted apart, not a failure."""


def _torch_cpu_runs(op, sample, arrays, i: int, backward: bool) -> bool:
    import torch

    out, grads = _run_case(torch, op, sample, arrays, i, dev="cpu")
    return not isinstance(grads if backward else out, Exception)


def _check_sample(op, sample, i: int, counts: dict) -> None:
    """Compare one sample between ember and torch on cuda; raises AssertionError on a difference."""
    import torch

    import ember

    arrays = [np.asarray(a) for a in sample.arrays]
    eo, eg = _run_case(ember, op, sample, arrays, i)
    to, tg = _run_case(torch, op, sample, arrays, i)
    if isinstance(to, Exception):
        if not isinstance(eo, Exception) and _torch_cpu_runs(op, sample, arrays, i, backward=False):
            raise _TorchCudaGap(f"torch CUDA raised {type(to).__name__}: {str(to)[:120]}; its CPU kernel runs")
        assert isinstance(eo, Exception), f"torch raised {type(to).__name__}: {str(to)[:120]}; ember did not"
        counts["both_raise"] += 1
        return
    assert not isinstance(eo, Exception), f"ember raised {type(eo).__name__}: {str(eo)[:300]}"
    assert len(eo) == len(to), f"{len(eo)} outputs vs {len(to)}"
    try:
        _compare_all(eo, to, op)
    except AssertionError as e:
        _cpu_agrees(op, sample, arrays, i, e, eo, backward=False)
    if isinstance(tg, Exception):
        if not isinstance(eg, Exception) and _torch_cpu_runs(op, sample, arrays, i, backward=True):
            raise _TorchCudaGap(f"torch CUDA's backward raised {type(tg).__name__}: {str(tg)[:120]}; its CPU "
                                "kernel runs")
        assert isinstance(eg, Exception), f"torch's backward raised {type(tg).__name__}; ember's did not"
    elif tg is not None:
        assert not isinstance(eg, Exception), f"ember's backward raised {type(eg).__name__}: {str(eg)[:300]}"
        assert eg is not None, "ember has no gradients"
        try:
            _compare_all(eg, tg, op, "grad")
        except AssertionError as e:
            _cpu_agrees(op, sample, arrays, i, e, eg, backward=True)


def _compare_all(es, ts, op, what: str = "output") -> None:
    for k, (e, t) in enumerate(zip(es, ts)):
        if t is None and what == "grad":
            assert e is None or not np.any(_host(e)), f"grad {k}: torch none"
        else:
            _compare(e, t, op.rtol, op.atol, f"{what} {k}")


def _cpu_agrees(op, sample, arrays, i: int, err: AssertionError, ours, backward: bool) -> None:
    """Re-raise ``err`` (ember's ``ours`` vs torch CUDA) unless ember agrees with torch's CPU kernel: then torch's two
    devices differ (e.g. geometric_ with p rounding to 1 draws 0 on CUDA, outside its support), counted apart."""
    import torch

    out, grads = _run_case(torch, op, sample, arrays, i, dev="cpu")
    theirs = grads if backward else out
    if isinstance(theirs, Exception) or theirs is None:
        raise err
    try:
        _compare_all(ours, theirs, op, "grad" if backward else "output")
    except AssertionError:
        raise err from None
    first = str(err).strip().splitlines()
    raise _TorchCudaGap(f"torch CUDA differs from its CPU kernel, ember agrees with the CPU: "
                        f"{' '.join(first[:3])[:200]}") from None


def _tf32(matmul: bool, cudnn: bool | None = None) -> tuple:
    """Set torch's TF32 switches (cudnn as matmul when not given); the previous values."""
    import torch

    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = matmul
    torch.backends.cudnn.allow_tf32 = matmul if cudnn is None else cudnn
    return old


def _ops_shard(names: list, budget: float, per_op: int, dry: bool, say_every: int = 50) -> dict:
    """Check the ops named ``names`` (one process): their per-op results, sample counts, torch CUDA gaps and the
    ops that took the host fallback."""
    from op_db import OPS

    from ember import _backend

    if dry and not DRY[0]:  # a worker process of --jobs: the stand-in as in the parent
        DRY[0] = True
        _backend.enable_stand_in(True, strict=True)
    per_op_result: dict = {}
    counts = {"samples": 0, "both_raise": 0}
    gaps: dict = {}  # op -> the first sample where torch CUDA raised and its CPU kernel did not
    # NOTE [oracle precision]: torch's cuDNN convolutions (and, where switched on, its matmuls) default to TF32,
    # 10-bit mantissas; ember's CuPy kernels compute in full float32, so the oracle is torch without TF32.
    torch_backends = _tf32(False)
    start = time.perf_counter()
    wanted = set(names)
    ops = [op for op in OPS if op.name in wanted]
    samples_of = {}
    for op in ops:
        try:
            samples_of[op.name] = list(op.samples(np.random.default_rng(0)))[:per_op]
        except Exception as e:  # noqa: BLE001
            samples_of[op.name] = []
            per_op_result[op.name] = {"status": "fail", "first": f"samples: {type(e).__name__}: {e}"}
    # pass 1: every op's first sample; pass 2: the others while the budget lasts (CuPy compiles each new kernel
    # on first use, so the first pass is the slow one)
    for rnd in (0, 1):
        for n, op in enumerate(ops):
            mine = samples_of[op.name][:1] if rnd == 0 else samples_of[op.name][1:]
            for i, sample in enumerate(mine, start=rnd):
                if time.perf_counter() - start > budget:
                    break
                counts["samples"] += 1
                r = per_op_result.setdefault(op.name, {"status": "pass"})
                try:
                    with _time_limit(20.0):
                        _check_sample(op, sample, i, counts)
                except _TorchCudaGap as e:
                    gaps.setdefault(op.name, f"sample {i} ({sample.desc}): {e}")
                    if r["status"] == "pass":
                        r["status"] = "torch_cuda_gap"
                except Exception as e:  # noqa: BLE001 - one failing sample marks the op; the others still run
                    if r["status"] == "pass":
                        r["status"], r["first"] = "fail", f"sample {i} ({sample.desc}): {type(e).__name__}: {str(e)[:400]}"
            if rnd == 0 and say_every and n % say_every == 0:
                say(f"  ops {n}/{len(ops)} (first samples): {sum(r['status'] == 'pass' for r in per_op_result.values())} "
                    f"pass, {sum(r['status'] == 'fail' for r in per_op_result.values())} fail")
        if say_every:
            say(f"  pass {rnd + 1} done at {time.perf_counter() - start:.0f}s")
    _tf32(*torch_backends)
    return {"per_op": per_op_result, "counts": counts, "gaps": gaps, "host_fallbacks": sorted(_backend.host_fallbacks)}


def _ops_in_workers(names: list, budget: float, per_op: int, jobs: int) -> list:
    """``_ops_shard`` over ``jobs`` processes, the ops dealt round-robin (neighbours in op_db are alike in cost).
    NOTE [sharded op check]: on a fresh machine most of the op section is CuPy compiling each new kernel (NVRTC,
    CPU-bound), so processes on the GPU machine's cores run the whole table in the time one runs a part of it.
    Processes are spawned (CUDA contexts do not survive a fork)."""
    import concurrent.futures
    import multiprocessing

    shards = [names[k::jobs] for k in range(jobs)]
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_ops_shard, shard, budget, per_op, DRY[0], 0) for shard in shards if shard]
        done = []
        for f in concurrent.futures.as_completed(futures):
            done.append(f.result())
            say(f"  ops: shard {len(done)}/{len(futures)} done")
        return done


def check_ops(budget: float, per_op: int, only: str | None, jobs: int = 1) -> dict:
    from op_db import OPS

    names = [op.name for op in OPS if only is None or only in op.name]
    parts = [_ops_shard(names, budget, per_op, DRY[0])] if jobs <= 1 else _ops_in_workers(names, budget, per_op, jobs)
    per_op_result: dict = {}
    gaps: dict = {}
    counts = {"pass": 0, "fail": 0, "torch_cuda_gap": 0, "both_raise": 0, "not_run": 0, "samples": 0}
    fallbacks: set = set()
    for part in parts:
        per_op_result.update(part["per_op"])
        gaps.update(part["gaps"])
        fallbacks.update(part["host_fallbacks"])
        for k, v in part["counts"].items():
            counts[k] += v
    per_op_result = {name: per_op_result.get(name, {"status": "not run (time budget)"}) for name in names}
    for r in per_op_result.values():
        key = {"pass": "pass", "fail": "fail", "torch_cuda_gap": "torch_cuda_gap"}.get(r["status"], "not_run")
        counts[key] += 1
    say(f"  ops done: {counts}")
    fails: dict = {}
    for name, r in per_op_result.items():
        if r["status"] in ("fail", "error"):
            key = r["first"].split("): ", 1)[-1]  # the error after "sample i (desc): "
            key = re.sub(r"[-+]?\d[\d.e+-]*", "N", key.split("\n")[0])[:100]
            fails.setdefault(key, []).append(name)
    return {"counts": counts, "torch_cuda_gaps": gaps, "jobs": max(1, jobs),
            "failure_kinds": {k: v for k, v in sorted(fails.items(), key=lambda kv: -len(kv[1]))},
            "host_fallbacks": sorted(fallbacks), "per_op": per_op_result}


# ---------------------------------------------------------------------------------------------- demo
def _digits():
    """(x_train, y_train, x_test, y_test) as NumPy arrays: scikit-learn's digits, or a synthetic 8x8 set."""
    try:
        from sklearn.datasets import load_digits

        d = load_digits()
        x, y, source = (d.images / 16.0).astype(np.float32)[:, None], d.target.astype(np.int64), "sklearn digits"
    except ImportError:
        r = np.random.default_rng(0)
        protos = r.uniform(0, 1, (10, 8, 8)).astype(np.float32)
        y = r.integers(0, 10, 1800).astype(np.int64)
        x = np.clip(protos[y] + 0.35 * r.standard_normal((1800, 8, 8)), 0, 1).astype(np.float32)[:, None]
        source = "synthetic 8x8 (10 noisy prototypes)"
    idx = np.random.default_rng(1).permutation(len(y))
    cut = int(0.75 * len(y))
    return x[idx[:cut]], y[idx[:cut]], x[idx[cut:]], y[idx[cut:]], source


def check_demo(epochs: int) -> dict:
    import ember
    from ember.demo.__main__ import DigitsNet
    from ember.utils.data import DataLoader, TensorDataset

    xtr, ytr, xte, yte, source = _digits()
    say(f"  data: {source}, train {len(ytr)} / test {len(yte)}")
    out = {"data": source}
    for device in ("cuda", "cpu"):
        ember.manual_seed(0)
        model = DigitsNet().to(device)
        opt = ember.optim.Adam(model.parameters(), lr=3e-3)
        loader = DataLoader(TensorDataset(ember.from_numpy(xtr), ember.from_numpy(ytr)), batch_size=32, shuffle=True,
                            generator=ember.Generator().manual_seed(0), pin_memory=device == "cuda")
        loss_fn = ember.nn.CrossEntropyLoss()
        xt, yt = ember.from_numpy(xte).to(device), ember.from_numpy(yte).to(device)
        hist = []
        start = time.perf_counter()
        for epoch in range(epochs):
            total = 0.0
            for xb, yb in loader:
                xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
                opt.zero_grad()
                loss = loss_fn(model(xb), yb)
                loss.backward()
                opt.step()
                total += loss.item() * len(yb)
            with ember.no_grad():
                acc = (model(xt).argmax(1) == yt).float().mean().item()
            hist.append((round(total / len(ytr), 4), round(acc, 4)))
            say(f"  {device} epoch {epoch + 1}: train loss {hist[-1][0]}, test acc {hist[-1][1]}")
        if device == "cuda":
            ember.cuda.synchronize()
        out[device] = {"seconds": round(time.perf_counter() - start, 2), "epochs": hist,
                       "params_on": str(next(model.parameters()).device)}
    return out


# ---------------------------------------------------------------------------------------------- bench
def check_bench(names: list, seconds: float, compiled: tuple = ("W2", "W3", "W6"), tiny: bool = False) -> dict:
    """Each workload on cuda in torch (eager) and ember (eager), and, for ``compiled``, ember through ember.compile
    (``ember_compiled``: built as bench/run_one.py's "ember-compiled"; its first two calls trace, their time is
    reported apart, and the timed steps replay the program). ``tiny``: the workloads' test sizes (to check the
    script)."""
    import torch

    import ember
    from bench.workloads import WORKLOADS
    from ember import _backend, _fuse
    from ember._compile import api as _compile_api

    by_name = WORKLOADS if isinstance(WORKLOADS, dict) else {w.name: w for w in WORKLOADS}
    out = {}
    for name in names:
        w = by_name[name]
        sizes = w.tiny if tiny else w.sizes
        arrays = w.data(sizes)
        row = {"what": w.what}
        losses = {}
        runs = [("torch", torch, False), ("ember", ember, False)]
        if name in compiled:
            runs.append(("ember_compiled", ember, True))
        for lib_name, lib, comp in runs:
            before = set(_backend.host_fallbacks)
            fused_before = dict(_fuse.runs)
            known = set(_compile_api._registry)
            try:
                lib.set_default_device("cuda" if lib is ember else torch_device())
                try:
                    step, _ = w.build(lib, arrays, sizes, compile=True) if comp else w.build(lib, arrays, sizes)
                    sync()
                    t = time.perf_counter()
                    first = step()
                    losses[lib_name] = float(first.item())  # the first step's loss (same inputs in each)
                    step()
                    sync()
                    if comp:  # what compiling costs: the first two calls trace (and confirm) the program
                        row[lib_name + "_first_two_s"] = round(time.perf_counter() - t, 3)
                    for _ in range(3):
                        step()
                    sync()
                    times = []
                    spent = time.perf_counter()
                    while time.perf_counter() - spent < seconds or len(times) < 3:
                        n = 5
                        sync()
                        t = time.perf_counter()
                        for _ in range(n):
                            step()
                        sync()
                        times.append((time.perf_counter() - t) / n)
                        if len(times) >= 50:
                            break
                    row[lib_name + "_ms"] = round(1e3 * min(times), 3)
                    row[lib_name + "_ms_median"] = round(1e3 * float(np.median(times)), 3)
                    if comp:
                        row[lib_name + "_entries"] = _entries(set(_compile_api._registry) - known)
                finally:
                    lib.set_default_device(None)
            except Exception as e:  # noqa: BLE001 - recorded per library
                row[lib_name + "_error"] = f"{type(e).__name__}: {str(e)[:300]}"
                row[lib_name + "_traceback"] = traceback.format_exc()[-2000:]
            if lib is ember:
                row[lib_name + "_host_fallbacks"] = sorted(_backend.host_fallbacks - before)
                # NOTE [fused formulas]: which formulas ran as fused kernels, and any cupy.fuse refused (plain ops)
                row[lib_name + "_fused_runs"] = {k: v - fused_before.get(k, 0) for k, v in _fuse.runs.items()
                                                 if v > fused_before.get(k, 0)}
                row[lib_name + "_fuse_fallbacks"] = dict(_fuse.fallbacks)
        close = lambda a, b: bool(np.isclose(a, b, rtol=1e-3, atol=1e-4))  # noqa: E731
        if "torch" in losses and "ember" in losses:
            row["first_loss"] = {"torch": losses["torch"], "ember": losses["ember"]}
            row["loss_close"] = close(losses["ember"], losses["torch"])
        if "torch" in losses and "ember_compiled" in losses:
            row["ember_compiled_first_loss"] = losses["ember_compiled"]
            row["ember_compiled_loss_close"] = close(losses["ember_compiled"], losses["torch"])
        if "torch_ms" in row and "ember_ms" in row:
            row["ratio"] = round(row["ember_ms"] / row["torch_ms"], 2)
        if "torch_ms" in row and "ember_compiled_ms" in row:
            row["ember_compiled_ratio"] = round(row["ember_compiled_ms"] / row["torch_ms"], 2)
        say(f"  {name}: {json.dumps({k: v for k, v in row.items() if 'traceback' not in k})}")
        out[name] = row
    return out


def _entries(fns) -> str:
    """What compiled callables did, in one line: their cache entries (compiled programs and their replays, eager
    guard sets) and graph breaks (a compiled row whose steps ran eagerly says so and why)."""
    parts, breaks = [], []
    for fn in fns:
        parts += [f"{e.kind} x{e.hits}" for e in fn._cache]
        breaks += [f"{b.where()}: {b.reason}" for b, _ in fn._breaks]
    return (", ".join(parts) or "no entries") + (f"; breaks: {'; '.join(breaks)}" if breaks else "")


# ---------------------------------------------------------------------------------------------- report
def markdown() -> str:
    s = RESULTS["sections"]
    lines = ["# ember GPU check (issue 22)", ""]
    env = s.get("env", {}).get("result") or {}
    lines.append(f"Card: {env.get('card')}; torch {env.get('torch')} (CUDA {env.get('torch_cuda')}), CuPy "
                 f"{env.get('cupy')}, NumPy {env.get('numpy')}, Python {env.get('python')}; ember arrays: "
                 f"{env.get('ember_array_type')}.")
    lines.append("")
    for name, r in s.items():
        lines.append(f"- **{name}**: {'ok' if r['ok'] else 'FAILED: ' + r['error']} ({r['seconds']} s)")
    ops = (s.get("ops") or {}).get("result")
    if ops:
        lines += ["", "## op_db on cuda vs torch CUDA", "", f"Counts: {ops['counts']}", ""]
        for kind, names in list(ops["failure_kinds"].items())[:40]:
            lines.append(f"- {len(names)} ops: `{kind}`: {', '.join(names[:12])}{' ...' if len(names) > 12 else ''}")
        gaps = ops.get("torch_cuda_gaps") or {}
        if gaps:
            lines += ["", f"Where torch CUDA raises or differs and ember agrees with torch's CPU kernel: {len(gaps)} "
                      "ops, not counted as failures:", ""]
            lines += [f"- {name}: {why}" for name, why in gaps.items()]
        fb = ops.get("host_fallbacks") or []
        lines += ["", f"Ops that ran on the host (NOTE [host fallback]): {len(fb)}: {', '.join(fb)}"]
    bench = (s.get("bench") or {}).get("result")
    if bench:
        lines += ["", "## Workloads on cuda (ms/iter, best block; torch eager)", "",
                  "| workload | ember | torch | ember/torch | first loss close | ops on the host fallback |",
                  "|---|---|---|---|---|---|"]
        for name, row in bench.items():
            lines.append(f"| {name} | {row.get('ember_ms', row.get('ember_error', '-'))} | "
                         f"{row.get('torch_ms', row.get('torch_error', '-'))} | {row.get('ratio', '-')} | "
                         f"{row.get('loss_close', '-')} | {', '.join(row.get('ember_host_fallbacks', [])) or '-'} |")
        fused = {name: row.get("ember_fused_runs") for name, row in bench.items() if row.get("ember_fused_runs")}
        refused = {k: v for row in bench.values() for k, v in (row.get("ember_fuse_fallbacks") or {}).items()}
        lines += ["", "Fused formulas run (NOTE [fused formulas]; calls over the timed run): "
                  + ("; ".join(f"{n}: {r}" for n, r in fused.items()) or "none")]
        lines += [f"Fused formulas cupy.fuse refused (their plain ops ran): {len(refused)}"]
        lines += [f"- {k}: {v}" for k, v in refused.items()]
        rows = {k: r for k, r in bench.items() if any(x.startswith("ember_compiled") for x in r)}
        if rows:
            lines += ["", "## Compiled workloads on cuda (ember.compile; ms/iter, best block; against torch eager)", "",
                      "| workload | ember compiled | first two calls (s) | torch | compiled/torch | eager/torch | "
                      "first loss close | cache entries, breaks |", "|---|---|---|---|---|---|---|---|"]
            for name, row in rows.items():
                lines.append(f"| {name} | {row.get('ember_compiled_ms', row.get('ember_compiled_error', '-'))} | "
                             f"{row.get('ember_compiled_first_two_s', '-')} | {row.get('torch_ms', '-')} | "
                             f"{row.get('ember_compiled_ratio', '-')} | {row.get('ratio', '-')} | "
                             f"{row.get('ember_compiled_loss_close', '-')} | {row.get('ember_compiled_entries', '-')} |")
    demo = (s.get("demo") or {}).get("result")
    if demo:
        lines += ["", "## Demo (DigitsNet, Adam)", "", f"Data: {demo.get('data')}"]
        for dev in ("cuda", "cpu"):
            if dev in demo:
                lines.append(f"- {dev}: {demo[dev]['seconds']} s, (loss, test acc) per epoch {demo[dev]['epochs']}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.environ.get("OUT") or os.path.join(ROOT, "gpu_check_out"))
    p.add_argument("--ops-budget", type=float, default=180.0, help="seconds for the op section")
    p.add_argument("--samples", type=int, default=3, help="samples per op")
    p.add_argument("--jobs", type=int, default=min(8, max(1, (os.cpu_count() or 1) - 2)),
                   help="processes for the op section (NOTE [sharded op check])")
    p.add_argument("--only", default=None, help="only ops whose name contains this")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--bench-seconds", type=float, default=6.0, help="timed seconds per workload and library")
    p.add_argument("--bench-tiny", action="store_true", help="the workloads' test sizes (to check the script)")
    p.add_argument("--sections", default="env,smoke,ops,demo,bench")
    p.add_argument("--dry-run", action="store_true", help="no GPU: ember on the stand-in cuda, torch on the CPU")
    args = p.parse_args(argv)
    if args.dry_run:
        from ember import _backend

        DRY[0] = True
        _backend.enable_stand_in(True, strict=True)
    os.makedirs(args.out, exist_ok=True)
    wanted = args.sections.split(",")
    plan = [("env", check_env), ("smoke", check_smoke),
            ("ops", lambda: check_ops(args.ops_budget, args.samples, args.only, args.jobs)),
            ("demo", lambda: check_demo(args.epochs)),
            ("bench", lambda: check_bench(["W2", "W3", "W5", "W6"], args.bench_seconds, tiny=args.bench_tiny))]
    for name, fn in plan:
        if name in wanted:
            section(name)(fn)
            with open(os.path.join(args.out, "gpu_check.json"), "w") as f:  # after each section: partial runs count
                json.dump(RESULTS, f, indent=1, default=str)
            with open(os.path.join(args.out, "gpu_check.md"), "w") as f:
                f.write(markdown())
    print(markdown(), flush=True)
    say(f"total {time.perf_counter() - T0:.0f}s; written to {args.out}")
    return 0 if all(r["ok"] for r in RESULTS["sections"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
