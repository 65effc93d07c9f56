"""Run the benchmark suite and write BENCHMARKS.md: ``python bench/run.py [--quick]``.

Every (workload, library) cell runs in its own subprocess (``run_one.py``); rounds interleave the
cells so slow drifts of the machine hit every library alike. Libraries: ember, torch, the NumPy floor
and the peers (HIPS autograd, mygrad) when the bench's peers extra is installed. Before any timing, the
correctness guard compares every library's gradients and loss with torch's on the same inputs: a
mismatch stops the run. Reported: the median per-iteration time over all timed blocks and its spread (min-max).
"""
from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from bench.run_one import LIBRARIES, PEER_PACKAGES, THREAD_VARS  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402

# (row label, workload, threads) of the timing table
CELLS = (("W1", "W1", 1), ("W2", "W2", 1), ("W2 (2 threads)", "W2", 2), ("W3", "W3", 1), ("W4", "W4", 1),
         ("W5", "W5", 1), ("W6", "W6", 1), ("W7", "W7", 1), ("W8", "W8", 1),
         ("W1 compiled", "W1", 1), ("W2 compiled", "W2", 1), ("W4 compiled", "W4", 1), ("W6 compiled", "W6", 1))
# rows whose ember column is the workload through ember.compile (against eager torch and the floor)
COMPILED = {"W1 compiled", "W2 compiled", "W4 compiled", "W6 compiled"}
COMPILED_LIBS = ("ember", "torch", "floor")
GUARD_STEPS = 3  # compiled guard: steps of every library before comparing (the third call replays the program)
QUICK_CELLS = tuple(c for c in CELLS if c[2] == 1)
CORE = ("ember", "torch", "floor")   # G1 runs these only: a 10^6-op chain in a peer takes minutes
G1_SIZES = (100_000, 1_000_000)
G1_FALLBACK = (100_000, 300_000)
G1_BUDGET_S = 60.0          # ember's largest G1 must fit in about this
QUICK_G1_SIZES = (10_000,)
GUARD_N_OPS = {"G1": 120}  # long chains underflow the gradient of x to 0: the guard checks a short one
RTOL = 1e-3                 # guard: |e - t| <= RTOL * |t| + RTOL * max|t|


def _installed(pkg: str) -> bool:
    try:
        return importlib.util.find_spec(pkg) is not None
    except ModuleNotFoundError:  # a submodule ("autograd.numpy") whose parent package is missing
        return False


def _libraries() -> list[str]:
    """ember, torch, the floor, and every peer whose packages are installed (the bench extra)."""
    return [name for name in LIBRARIES if name != "ember-compiled"
            and all(_installed(pkg) for pkg in PEER_PACKAGES.get(name, ()))]


def _env(threads: int) -> dict:
    env = dict(os.environ)
    for v in THREAD_VARS:
        env[v] = str(threads)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    return env


def _run(workload: str, library: str, *extra: str, threads: int = 1) -> dict:
    cmd = [sys.executable, os.path.join(HERE, "run_one.py"), workload, library, "--threads", str(threads), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env(threads))
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[1:])} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- correctness guard
def guard(workloads, libraries, log, compiled=()) -> dict:
    """Gradients (and loss) of every library against torch's, on the same inputs; exits on a mismatch.
    Returns {(workload, library): (loss dtype, gradient dtypes)}."""
    dtypes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for w in workloads:
            extra = ["--n-ops", str(GUARD_N_OPS[w])] if w in GUARD_N_OPS else []
            others = [lib for lib in libraries if lib != "torch" and (w != "G1" or lib in CORE)
                      and lib in WORKLOADS[w].libraries]
            got = {}
            for lib in ["torch"] + others:
                path = os.path.join(tmp, f"{w}-{lib}.npz")
                res = _run(w, lib, "--mode", "grads", "--out", path, *extra)
                dtypes[(w, lib)] = (res["loss_dtype"], res["grad_dtypes"])
                with np.load(path) as z:
                    got[lib] = {k: z[k] for k in z.files}
            ref = got["torch"]
            for lib in others:
                bad = [k for k in ref if not _close(got[lib].get(k), ref[k])]
                if bad:
                    raise SystemExit(f"correctness guard: {lib} differs from torch on {w}: {', '.join(bad)}")
            log(f"guard {w}: {', '.join(others)} match torch ({len(ref) - 1} gradients and the loss)")
        for w in compiled:  # the compiled programs (replayed from the third call) against torch after as many steps
            got = {}
            for lib in ("torch", "ember-compiled"):
                path = os.path.join(tmp, f"{w}-{lib}-steps.npz")
                _run(w, lib, "--mode", "grads", "--out", path, "--grad-steps", str(GUARD_STEPS))
                with np.load(path) as z:
                    got[lib] = {k: z[k] for k in z.files}
            bad = [k for k in got["torch"] if not _close(got["ember-compiled"].get(k), got["torch"][k])]
            if bad:
                raise SystemExit(f"correctness guard: compiled ember differs from torch on {w}: {', '.join(bad)}")
            log(f"guard {w}: compiled ember matches torch after {GUARD_STEPS} steps")
    return dtypes


def _close(a, b) -> bool:
    if a is None or a.shape != b.shape:
        return False
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return bool(np.allclose(a, b, rtol=RTOL, atol=RTOL * scale))


# ----------------------------------------------------------------------------- timing
def time_cells(cells, libraries, rounds: int, quick: bool, log) -> dict:
    """{(label, lib): [per-iteration seconds of every block]}, rounds interleaved, order rotated."""
    out = {}
    extra = ["--quick"] if quick else []
    for r in range(rounds):
        k = r % len(libraries)
        rotated = libraries[k:] + libraries[:k]
        for label, w, threads in cells:
            for lib in rotated:
                if lib not in WORKLOADS[w].libraries:
                    continue
                if label in COMPILED:
                    if lib not in COMPILED_LIBS:
                        continue
                    res = _run(w, "ember-compiled" if lib == "ember" else lib, *extra, threads=threads)
                    if "first_calls_s" in res:
                        out.setdefault((label, "first calls"), []).append(res["first_calls_s"])
                else:
                    res = _run(w, lib, *extra, threads=threads)
                out.setdefault((label, lib), []).extend(res["per_iter_s"])
        log(f"round {r + 1}/{rounds} done")
    return out


def run_g1(sizes, libraries, log) -> dict:
    """{(n_ops, lib): result of one G1 step}; 10^6 becomes 3*10^5 when ember would take too long."""
    out = {}
    sizes = list(sizes)
    for i, n in enumerate(sizes):
        for lib in (lib for lib in libraries if lib in CORE):
            out[(n, lib)] = _run("G1", lib, "--mode", "once", "--n-ops", str(n))
            log(f"G1 n={n} {lib}: {out[(n, lib)]['seconds']:.2f} s")
        if i == 0 and len(sizes) > 1 and "ember" in libraries:
            projected = out[(n, "ember")]["seconds"] * sizes[-1] / n
            if projected > G1_BUDGET_S and sizes != list(G1_FALLBACK):
                log(f"G1: ember would take ~{projected:.0f} s at n={sizes[-1]}; measuring {G1_FALLBACK[-1]}")
                sizes[1:] = G1_FALLBACK[1:]
    return out


def run_m1(libraries, log) -> tuple[int, dict]:
    # byte-compile ember and bench first: with PYTHONDONTWRITEBYTECODE (or a fresh checkout) every import
    # would compile from source, and the compiler's memory would count in the peak (installed packages,
    # torch and the peers included, ship their .pyc)
    for pkg in ("ember", "bench"):
        compileall.compile_dir(os.path.join(ROOT, pkg), quiet=1)
    base = _run("W2", "floor", "--mode", "base")["peak_rss"]
    out = {lib: _run("W2", lib, "--mode", "rss", "--steps", "20")["peak_rss"] for lib in libraries}
    log("M1 done")
    return base, out


# ----------------------------------------------------------------------------- report
def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def _cell(times, scale) -> str:
    if not times:
        return "n/a"
    return f"{_fmt(statistics.median(times) * scale)} [{_fmt(min(times) * scale)}–{_fmt(max(times) * scale)}]"


def _ratio(times, label, a, b, stat=statistics.median) -> str:
    ta, tb = times.get((label, a)), times.get((label, b))
    if not ta or not tb:
        return "n/a"
    return f"{stat(ta) / stat(tb):.2f}"


def _mb(n: int) -> str:
    return f"{n / 2**20:.0f}"


def run_ops(blocks: int, log) -> dict:
    """The per-op audit (bench/ops.py) in its own one-thread process: {"rows": [...], "blocks": blocks}."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ops.json")
        cmd = [sys.executable, os.path.join(HERE, "ops.py"), "--blocks", str(blocks), "--json", path, "--quiet"]
        r = subprocess.run(cmd, capture_output=True, text=True, env=_env(1))
        if r.returncode != 0:
            raise SystemExit(f"bench/ops.py failed:\n{r.stderr}")
        with open(path) as f:
            rows = json.load(f)
    log(f"OPS done: {r.stdout.strip().splitlines()[-1]}")
    return {"rows": rows, "blocks": blocks}


def report(env, cells, libraries, times, g1, m1, dtypes, rounds, quick, elapsed, ops=None) -> str:
    lines = ["# ember benchmarks", ""]
    if quick:
        lines += ["**Quick smoke run (`--quick`): short blocks, not for comparison.**", ""]
    blas = env.get("numpy_blas") or []
    blas_s = "; ".join(f"{d['internal_api']} {d['version']} ({d['architecture']}, {d['num_threads']} thread(s))"
                       for d in blas) or "unknown (threadpoolctl not installed)"
    blas_env = ", ".join(f"{k}={v if v is not None else 'unset'}" for k, v in env["env"].items()
                         if k.startswith("OPENBLAS_C") or k.startswith("OPENBLAS_L"))
    lines += [
        "Written by `make bench` (`python bench/run.py`). Workloads: `../shared/docs/benchmarks.md`; code: "
        "`bench/workloads.py` (written once, run by ember and torch), `bench/floor.py` (hand-written NumPy), "
        "`bench/peer_autograd.py` and `bench/peer_mygrad.py` (the peers, each in its own idiom).",
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M')}; wall time of the run: {elapsed:.0f} s",
        f"- CPU: {env.get('cpu')} ({env.get('machine')}, {os.cpu_count()} logical CPUs)",
        f"- Python {env['python']}, NumPy {env['numpy']}, torch {env['torch']}, ember {env['ember']}"
        + "".join(f", {k} {v}" for k, v in env.get("peers", {}).items()),
        f"- NumPy's BLAS (threadpoolctl): {blas_s}",
        f"- torch's BLAS: {env.get('torch_blas')}, CPU capability {env.get('torch_cpu_capability')}",
        "- threads: OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = 1 and torch.set_num_threads(1), "
        "except the 2-thread row",
        f"- {blas_env} (recorded, never changed)",
        f"- 1-minute load average at start / end: {env['load'][0]:.2f} / {env['load'][1]:.2f} (the machine may be "
        "shared: ratios from interleaved rounds are steadier than absolute times)",
        f"- method: each cell in its own process; {rounds} interleaved round(s) of warm-up then "
        f"{3 if quick else 7} timed blocks; median [min–max] over all blocks; one-thread cells in the process's CPU "
        "time (a shared machine's waits for a core do not count), the 2-thread row in wall-clock time",
        f"- correctness guard passed: the gradients and loss of {', '.join(x for x in libraries if x != 'torch')} "
        "match torch's on every workload (G1: ember and the floor only)",
        "",
        "## Time",
        "",
    ]
    peers = [lib for lib in libraries if lib not in ("ember", "torch", "floor")]
    head = ["workload", "unit", "ember", "torch", "floor (NumPy)", *peers, "ember/torch", "ember/floor",
            "torch/floor", *(f"ember/{p}" for p in peers), "ember/torch (best)", "ember/floor (best)"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, w, _ in cells:
        wl = WORKLOADS[w]
        scale = 1e6 / wl.ops_per_iter(wl.sizes) if wl.unit == "us/op" else 1e3
        row = [label, wl.unit.replace("us", "µs")]
        row += [_cell(times.get((label, lib)), scale) for lib in ["ember", "torch", "floor", *peers]]
        row += [_ratio(times, label, "ember", "torch"), _ratio(times, label, "ember", "floor"),
                _ratio(times, label, "torch", "floor"), *(_ratio(times, label, "ember", p) for p in peers),
                _ratio(times, label, "ember", "torch", min),
                _ratio(times, label, "ember", "floor", min)]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "W1 is reported per op (one iteration / 64), forward + backward. Ratios use medians; the "
              "(best) ratios use each cell's fastest block, which contention from other processes cannot "
              "make faster. Peer cells marked n/a: the peer is not installed, or (W6-W8, the model workloads in "
              "`bench/models.py`) the workload exists for ember and torch only, or the row is a compiled one.",
              "", "*compiled* rows: ember's column is the workload through `ember.compile` (the function or model "
              "compiled as a user would; backward and the update outside), against eager torch and the floor.", ""]
    firsts = [(label, times[(label, "first calls")]) for label, _, _ in cells if (label, "first calls") in times]
    if firsts:
        lines += ["## Compile time", "", "The first two calls of a compiled function run eagerly under the tracer "
                  "(the second confirms the first's program); replays start with the third. Median over the runs.",
                  "", "| row | first call (ms) | second call (ms) | replayed call (ms) |", "|---|---|---|---|"]
        for label, runs in firsts:
            scale = 1e3
            lines.append(f"| {label} | {_fmt(statistics.median(r[0] for r in runs) * scale)} | "
                         f"{_fmt(statistics.median(r[1] for r in runs) * scale)} | "
                         f"{_fmt(statistics.median(times[(label, 'ember')]) * scale)} |")
        lines.append("")
    if ops:
        from bench.ops import markdown

        table = markdown(ops["rows"])
        lines += ["## OPS: per-op audit (forward, and forward + backward, at a medium size)", "",
                  f"`bench/ops.py`, best of {ops['blocks']} alternating blocks. " + table[0], *table[1:], ""]
    lines += _dtype_notes(dtypes, libraries)
    if g1:
        lines += ["## G1: a long chain on a (1,) tensor (one forward + backward)", "",
                  "ember, torch and the floor only (a peer's 10^6-op chain would take minutes).", "",
                  "| ops | library | time (s) | µs/op | peak RSS (MB) | peak RSS − RSS before (MB) |",
                  "|---|---|---|---|---|---|"]
        for (n, lib), r in g1.items():
            lines.append(f"| {n:,} | {lib} | {r['seconds']:.2f} | {r['seconds'] / n * 1e6:.1f} | "
                         f"{_mb(r['peak_rss'])} | {_mb(r['peak_rss'] - r['rss_before'])} |")
        lines.append("")
    if m1:
        base, peaks = m1
        lines += ["## M1: peak RSS of 20 W2 steps", "",
                  f"Whole process, minus the bare interpreter with NumPy ({_mb(base)} MB); torch's figure "
                  "includes its own libraries.", "", "| library | peak RSS − base (MB) |", "|---|---|"]
        lines += [f"| {lib} | {_mb(v - base)} |" for lib, v in peaks.items()]
        lines.append("")
    return "\n".join(lines)


_DTYPE_FACTS = {
    "mygrad": "a Python float operand is a float64 array to mygrad (no weak scalars), so `h / 3.0` promotes: "
              "W1's chain runs in float64 from its first division on (loss float64); mygrad casts each "
              "gradient back to its tensor's dtype, so the gradients stay float32.",
    "autograd": "float32 in, float32 loss and gradients out (only the outputs are checked, not each vjp); "
                "SGD builds new float32 arrays (`p - np.float32(lr) * g`).",
}


def _dtype_notes(dtypes, libraries) -> list[str]:
    """The loss and gradient dtypes the guard saw, per library: float32 everywhere unless noted."""
    if not dtypes:
        return []
    lines = ["## Dtypes", "", "All inputs float32. Loss / gradient dtypes the correctness guard saw "
             "(only departures from float32 / float32 are listed):", "", "| library | departures | note |",
             "|---|---|---|"]
    for lib in libraries:
        odd = [f"{w}: {loss} / {'+'.join(grads)}" for (w, x), (loss, grads) in sorted(dtypes.items())
               if x == lib and (loss != "float32" or grads != ["float32"])]
        lines.append(f"| {lib} | {'; '.join(odd) or 'none'} | {_DTYPE_FACTS.get(lib, '')} |")
    return lines + [""]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="a fast smoke run (short blocks, small G1, one round)")
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--only", nargs="*", default=None, help="labels of timing rows to run (default: all)")
    p.add_argument("--no-g1", action="store_true")
    p.add_argument("--no-m1", action="store_true")
    p.add_argument("--no-ops", action="store_true", help="skip the per-op audit")
    p.add_argument("--ops-blocks", type=int, default=5)
    p.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    log = lambda msg: print(f"[bench {time.perf_counter() - t0:6.1f}s] {msg}", flush=True)
    libraries = _libraries()
    cells = QUICK_CELLS if a.quick else CELLS
    if a.only is not None:
        cells = tuple(c for c in CELLS if c[0] in a.only)
    rounds = a.rounds or (1 if a.quick else 3)

    env = _run("W1", "ember", "--mode", "env")
    load0 = os.getloadavg()[0]
    workloads = sorted({c[1] for c in cells} | (set() if a.no_g1 else {"G1"}) | (set() if a.no_m1 else {"W2"}))
    dtypes = guard(workloads, libraries, log, sorted({c[1] for c in cells if c[0] in COMPILED}))
    times = time_cells(cells, libraries, rounds, a.quick, log)
    g1 = None if a.no_g1 else run_g1(QUICK_G1_SIZES if a.quick else G1_SIZES, libraries, log)
    m1 = None if a.no_m1 else run_m1(libraries, log)
    ops = None if a.no_ops or a.quick else run_ops(a.ops_blocks, log)
    env["load"] = (load0, os.getloadavg()[0])
    text = report(env, cells, libraries, times, g1, m1, dtypes, rounds, a.quick, time.perf_counter() - t0, ops)
    gpu = os.path.join(ROOT, "bench", "GPU.md")  # recorded on a GPU machine by make gpu-check (issue 22)
    if os.path.exists(gpu):
        with open(gpu) as f:
            text = text.rstrip("\n") + "\n\n" + f.read().rstrip("\n")
    with open(a.out, "w") as f:
        f.write(text + "\n")
    print(text)
    log(f"wrote {a.out}")


if __name__ == "__main__":
    main()
