"""Per-op audit: every op of the op table at a medium size, ember against torch in one process.

``python bench/ops.py [--match TEXT] [--blocks N] [--json PATH]``

Each entry of ``tests/ops/op_db.py`` (the op table the suite checks against torch) is run on a medium-size
sample: its first plain sample (float32, no empty or non-contiguous inputs) tiled along every dimension longer
than one until the largest input has about 64k elements (broadcasting, matching inner dimensions and index values
stay valid), or an explicit sample from ``MEDIUM`` (convolutions and pools on (32, 8, 28, 28), attention-shaped
batched products ...). ``EXTRA`` adds the cases the table's small samples cannot show (a float power of negative
bases, layer/batch/group norm at model sizes, indexing with many indices). Entries whose medium sample torch
refuses, or that do little work (their outputs hold fewer than ``MIN_OUT`` elements, full reductions excepted),
are listed apart and left out of the summary.

Timing: one thread for both libraries, in CPU time of the process (``time.process_time``: a shared machine's
waits for a core do not count); ``forward`` runs the op, ``forward + backward`` also sums every floating output
that requires grad (a complex one: its real and imaginary parts) and calls backward. Blocks of ember and torch
alternate (the order flips every block) and each library's best block counts. Ratios are ember / torch.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "ops"))

import numpy as np  # noqa: E402

TARGET = 65536      # elements of the largest input of a scaled sample
MAX_OUT = 1 << 21  # elements of the largest output of a scaled sample
MIN_OUT = 1024      # outputs smaller than this (and not a full reduction): little work, left out of the summary
BLOCK_S = 0.004     # seconds per timed block
SLOW_S = 0.25       # an op whose one call takes longer is timed once
# The process's CPU time, not the wall clock: on a machine shared with other jobs a block's wall time includes the
# time the process waited for a core, which lands on whichever library ran then (both run on one thread here).
_clock = time.process_time
F32 = np.float32


def _r(rng, *shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(F32)
    return rng.standard_normal(shape).astype(F32)


def _idx(rng, high, *shape):
    return rng.integers(0, high, shape).astype(np.int64)


def _F(lib):
    return lib.nn.functional


# name of an op_db entry -> rng -> arrays of its medium sample (where tiling its small sample would not be one)
_X4 = (32, 8, 28, 28)
MEDIUM = {
    "conv2d": lambda r: (_r(r, *_X4), _r(r, 16, 8, 3, 3), _r(r, 16)),
    "conv2d stride dilation groups": lambda r: (_r(r, *_X4), _r(r, 16, 4, 3, 2), _r(r, 16)),
    "conv1d": lambda r: (_r(r, 32, 8, 256), _r(r, 16, 8, 3), _r(r, 16)),
    "conv_transpose2d": lambda r: (_r(r, 32, 8, 14, 14), _r(r, 8, 4, 3, 3), _r(r, 4)),
    "conv2d same": lambda r: (_r(r, 32, 8, 28, 28), _r(r, 16, 8, 2, 3)),
    "conv2d unbatched": lambda r: (_r(r, 8, 64, 64), _r(r, 16, 8, 3, 3)),
    "conv1d groups valid": lambda r: (_r(r, 32, 8, 256), _r(r, 16, 1, 3)),
    "conv_transpose2d groups dilation": lambda r: (_r(r, 32, 8, 14, 14), _r(r, 8, 3, 2, 3)),
    "conv_transpose1d": lambda r: (_r(r, 32, 8, 128), _r(r, 8, 4, 3), _r(r, 4)),
    "bmm": lambda r: (_r(r, 128, 16, 16), _r(r, 128, 16, 16)),
}
for _n in ("max_pool2d", "max_pool2d pad ceil dilation", "max_pool2d overlap indices", "avg_pool2d",
           "avg_pool2d pad ceil exclude", "avg_pool2d divisor", "adaptive_avg_pool2d", "adaptive_max_pool2d",
           "pad constant", "pad reflect 2d", "pad replicate 2d", "interpolate nearest scale", "interpolate bilinear",
           "unfold"):
    MEDIUM[_n] = lambda r: (_r(r, *_X4),)

# cases the op table's samples do not reach at a medium size: name -> (fn(lib, *tensors), rng -> arrays)
_GELU_TANH = lambda lib, x: 0.5 * x * (1.0 + lib.tanh(0.7978845608028654 * (x + 0.044715 * lib.pow(x, 3.0))))  # noqa: E731
EXTRA = {
    "pow(x, 3.0), x of both signs": (lambda lib, x: lib.pow(x, 3.0), lambda r: (_r(r, 256, 256),)),
    "pow(x, 2.5), x of both signs": (lambda lib, x: lib.pow(x, 2.5), lambda r: (_r(r, 256, 256),)),
    "pow(x, 0.5)": (lambda lib, x: lib.pow(x, 0.5), lambda r: (_r(r, 256, 256, lo=0.1, hi=2.0),)),
    "pow(x, -1)": (lambda lib, x: lib.pow(x, -1), lambda r: (_r(r, 256, 256, lo=0.1, hi=2.0),)),
    "pow(x, 4)": (lambda lib, x: x ** 4, lambda r: (_r(r, 256, 256),)),
    "tanh-GELU written out (GPT)": (_GELU_TANH, lambda r: (_r(r, 512, 128),)),
    "F.gelu exact": (lambda lib, x: _F(lib).gelu(x), lambda r: (_r(r, 256, 256),)),
    "F.gelu tanh": (lambda lib, x: _F(lib).gelu(x, approximate="tanh"), lambda r: (_r(r, 256, 256),)),
    "erf": (lambda lib, x: lib.erf(x), lambda r: (_r(r, 256, 256),)),
    "erfc": (lambda lib, x: lib.erfc(x), lambda r: (_r(r, 256, 256),)),
    "erfinv": (lambda lib, x: lib.erfinv(x), lambda r: (_r(r, 256, 256, lo=-0.99, hi=0.99),)),
    "F.silu": (lambda lib, x: _F(lib).silu(x), lambda r: (_r(r, 256, 256),)),
    "relu": (lambda lib, x: lib.relu(x), lambda r: (_r(r, 256, 256),)),
    "F.softmax (512, 128) dim -1": (lambda lib, x: _F(lib).softmax(x, -1), lambda r: (_r(r, 512, 128),)),
    "F.log_softmax (512, 128) dim -1": (lambda lib, x: _F(lib).log_softmax(x, -1), lambda r: (_r(r, 512, 128),)),
    "attention softmax (32, 4, 16, 16)": (lambda lib, x: _F(lib).softmax(x, -1), lambda r: (_r(r, 128, 4, 16, 16),)),
    "F.cross_entropy (512, 128)": (lambda lib, x, t: _F(lib).cross_entropy(x, t),
                                   lambda r: (_r(r, 512, 128), _idx(r, 128, 512))),
    "F.cross_entropy label_smoothing": (lambda lib, x, t: _F(lib).cross_entropy(x, t, label_smoothing=0.1),
                                        lambda r: (_r(r, 512, 128), _idx(r, 128, 512))),
    "F.cross_entropy probabilities": (lambda lib, x, p: _F(lib).cross_entropy(x, p.detach().softmax(1)),
                                      lambda r: (_r(r, 512, 128), _r(r, 512, 128))),
    "F.layer_norm (512, 128)": (lambda lib, x, w, b: _F(lib).layer_norm(x, (128,), w, b),
                                lambda r: (_r(r, 512, 128), _r(r, 128), _r(r, 128))),
    "F.layer_norm GPT (32, 16, 64)": (lambda lib, x, w, b: _F(lib).layer_norm(x, (64,), w, b),
                                      lambda r: (_r(r, 32, 16, 64), _r(r, 64), _r(r, 64))),
    "F.batch_norm training (32, 16, 32, 32)": (
        lambda lib, x, w, b: _F(lib).batch_norm(x, None, None, w, b, training=True),
        lambda r: (_r(r, 32, 16, 32, 32), _r(r, 16), _r(r, 16))),
    "F.batch_norm eval (32, 16, 32, 32)": (
        lambda lib, x, w, b: _F(lib).batch_norm(x, lib.zeros(16), lib.ones(16), w, b, training=False),
        lambda r: (_r(r, 32, 16, 32, 32), _r(r, 16), _r(r, 16))),
    "F.group_norm (32, 16, 16, 16) 4 groups": (lambda lib, x, w, b: _F(lib).group_norm(x, 4, w, b),
                                               lambda r: (_r(r, 32, 16, 16, 16), _r(r, 16), _r(r, 16))),
    "F.linear 3-d (32, 16, 64) -> 256": (lambda lib, x, w, b: _F(lib).linear(x, w, b),
                                         lambda r: (_r(r, 32, 16, 64), _r(r, 256, 64), _r(r, 256))),
    "attention q @ k^T (128, 16, 16)": (lambda lib, q, k: q @ k.transpose(-2, -1),
                                        lambda r: (_r(r, 32, 4, 16, 16), _r(r, 32, 4, 16, 16))),
    "x[idx] (4096, 16) by 4096 rows": (lambda lib, x, i: x[i], lambda r: (_r(r, 4096, 16), _idx(r, 4096, 4096))),
    "index_select 4096 rows": (lambda lib, x, i: x.index_select(0, i),
                               lambda r: (_r(r, 4096, 16), _idx(r, 4096, 4096))),
    "gather (256, 256) dim 1": (lambda lib, x, i: x.gather(1, i), lambda r: (_r(r, 256, 256), _idx(r, 256, 256, 256))),
    "scatter_add (256, 256) dim 1": (lambda lib, x, s, i: x.scatter_add(1, i, s),
                                     lambda r: (_r(r, 256, 256), _r(r, 256, 256), _idx(r, 256, 256, 256))),
    "F.embedding (1000, 64) by 32x35": (lambda lib, w, i: _F(lib).embedding(i, w),
                                        lambda r: (_r(r, 1000, 64), _idx(r, 1000, 32, 35))),
    "F.embedding (27, 64) by 32x16 (GPT)": (lambda lib, w, i: _F(lib).embedding(i, w),
                                            lambda r: (_r(r, 27, 64), _idx(r, 27, 32, 16))),
    "torch.cdist (256, 64) x (256, 64)": (lambda lib, a, b: lib.cdist(a, b), lambda r: (_r(r, 256, 64), _r(r, 256, 64))),
    "norm dim -1": (lambda lib, x: x.norm(dim=-1), lambda r: (_r(r, 256, 256),)),
    "cumsum dim 1": (lambda lib, x: x.cumsum(1), lambda r: (_r(r, 256, 256),)),
    "topk 8 dim -1": (lambda lib, x: x.topk(8, -1).values, lambda r: (_r(r, 256, 256),)),
    "conv2d 3x3 (32, 16, 32, 32) pad 1 (ResNet)": (
        lambda lib, x, w: _F(lib).conv2d(x, w, padding=1), lambda r: (_r(r, 32, 16, 32, 32), _r(r, 16, 16, 3, 3))),
    "add": (lambda lib, a, b: a + b, lambda r: (_r(r, 256, 256), _r(r, 256, 256))),
    "mul": (lambda lib, a, b: a * b, lambda r: (_r(r, 256, 256), _r(r, 256, 256))),
    "sum": (lambda lib, x: x.sum(), lambda r: (_r(r, 256, 256),)),
}


def _plain(sample) -> bool:
    arrs = [np.asarray(a) for a in sample.arrays]
    return (not sample.nc and arrs and all(a.size for a in arrs) and all(a.dtype != np.float64 and
            a.dtype != np.float16 for a in arrs) and any(a.dtype == F32 for a in arrs))


def _tiled(arrays, f: int) -> tuple:
    return tuple(np.tile(a, tuple(f if n > 1 else 1 for n in a.shape)) if a.ndim else a for a in arrays)


def _out_size(fn, arrays) -> int:
    import torch

    with np.errstate(all="ignore"):
        out = fn(torch, *[torch.tensor(a.copy()) for a in arrays])
    return max([o.numel() for o in _outputs(out)] or [0])


def _scaled(fn, arrays) -> tuple:
    """``arrays`` tiled along every dimension longer than one, by one factor, up to about TARGET elements in the
    largest input and at most MAX_OUT in any output (extrapolated from the small sample and the one tiled twice:
    outer products, kron and distance matrices grow faster than their inputs)."""
    arrays = [np.asarray(a) for a in arrays]
    big = max(arrays, key=lambda a: a.size)
    dims = sum(1 for n in big.shape if n > 1)
    if not dims:
        return tuple(arrays)
    f = max(1, int(round((TARGET / big.size) ** (1.0 / dims))))
    try:
        o1, o2 = _out_size(fn, arrays), _out_size(fn, _tiled(arrays, 2))
    except Exception:  # noqa: BLE001 - torch refuses the tiled sample: the audit lists it as skipped
        return _tiled(arrays, f)
    if o1 and o2 > o1:
        growth = math.log2(o2 / o1)
        while f > 1 and o1 * f ** growth > MAX_OUT:
            f -= 1
    return _tiled(arrays, f)


def cases(match: str | None = None):
    """(name, fn(lib, *tensors), arrays, grad) for every op-table entry with a medium sample, then the extras."""
    from op_db import OPS, call

    rng = np.random.default_rng(0)
    for op in OPS:
        if match and match not in op.name:
            continue
        if op.name in MEDIUM:
            yield op.name, op.fn, MEDIUM[op.name](rng), op.grad
            continue
        plain = [smp for smp in op.samples(np.random.default_rng(0)) if _plain(smp)]
        if plain:  # the largest plain sample (the first of equals), tiled
            sample = max(plain, key=lambda smp: max(np.asarray(a).size for a in smp.arrays))
            fn = (lambda op, sample: lambda lib, *ts: call(op, sample, lib, ts))(op, sample)
            yield op.name, fn, _scaled(fn, sample.arrays), op.grad
    for name, (fn, make) in EXTRA.items():
        if match and match not in name:
            continue
        yield "* " + name, fn, make(rng), True


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for o in out if hasattr(o, "requires_grad")]
    return [out] if hasattr(out, "requires_grad") else []


def _runner(lib, fn, arrays, backward: bool):
    ts = []
    for a in arrays:
        t = lib.tensor(a.copy())
        if backward and a.dtype.kind == "f":
            t.requires_grad_(True)
        ts.append(t)
    leaves = [t for t in ts if t.requires_grad]
    if not backward:
        return lambda: fn(lib, *ts)

    def total(o):  # a complex output (fft ...) sums its real and imaginary parts
        return lib.view_as_real(o).sum() if o.is_complex() else o.sum()

    def run():
        outs = [o for o in _outputs(fn(lib, *ts)) if o.requires_grad]
        loss = total(outs[0])
        for o in outs[1:]:
            loss = loss + total(o)
        loss.backward()
        for t in leaves:
            t.grad = None
    return run


def _block(run, n: int) -> float:
    t = _clock()
    for _ in range(n):
        run()
    return (_clock() - t) / n


def compare(runs: dict, blocks: int) -> dict:
    """Best per-call seconds of each runner, blocks alternating between them."""
    n = {}
    for k, run in runs.items():
        t = _block(run, 1)
        if t > SLOW_S:  # one call is all the time it gets
            n[k] = 0
            continue
        t = min(t, _block(run, 1))
        n[k] = max(1, min(10_000, int(BLOCK_S / max(t, 1e-7))))
    if not all(n.values()):
        return {k: _block(run, 1) for k, run in runs.items()}
    best = {k: math.inf for k in runs}
    keys = list(runs)
    for b in range(blocks):
        for k in (keys if b % 2 == 0 else keys[::-1]):
            best[k] = min(best[k], _block(runs[k], n[k]))
    return best


def _work(out_arrays, in_arrays) -> bool:
    sizes = [o.numel() for o in out_arrays] or [0]
    return max(sizes) >= MIN_OUT or (max(sizes) == 1 and max(a.size for a in in_arrays) >= MIN_OUT)


def audit(match=None, blocks: int = 5, log=print) -> list[dict]:
    import ember
    import torch

    torch.set_num_threads(1)
    rows = []
    for name, fn, arrays, grad in cases(match):
        row = {"op": name}
        try:
            with np.errstate(all="ignore"):
                t_out = _outputs(fn(torch, *[torch.tensor(a.copy()) for a in arrays]))
                fn(ember, *[ember.tensor(a.copy()) for a in arrays])
        except Exception as e:  # noqa: BLE001 - a medium sample the op refuses: listed, not timed
            row["skipped"] = f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"
            rows.append(row)
            continue
        row["work"] = _work(t_out, arrays)
        row["shapes"] = " ".join("x".join(map(str, a.shape)) or "()" for a in arrays)
        with np.errstate(all="ignore"):
            best = compare({lib: _runner(m, fn, arrays, False) for lib, m in (("ember", ember), ("torch", torch))},
                           blocks)
            row["fwd"] = (best["ember"], best["torch"])
            tt = [torch.tensor(a.copy()).requires_grad_(a.dtype.kind == "f") for a in arrays]
            differentiable = grad and any(o.requires_grad for o in _outputs(fn(torch, *tt)))
            if differentiable:
                try:
                    best = compare({lib: _runner(m, fn, arrays, True) for lib, m in (("ember", ember),
                                                                                        ("torch", torch))}, blocks)
                    row["fwdbwd"] = (best["ember"], best["torch"])
                except Exception as e:  # noqa: BLE001 - torch has no backward for it (or ember differs): noted
                    row["bwd_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"
        rows.append(row)
        log(_line(row))
    return rows


def _ratio(pair) -> float:
    return pair[0] / pair[1]


def _key(row) -> float:
    return _ratio(row["fwdbwd"]) if "fwdbwd" in row else _ratio(row["fwd"])


def _line(row) -> str:
    if "skipped" in row:
        return f"{row['op']}: skipped ({row['skipped']})"
    s = f"{row['op']}: fwd {row['fwd'][0] * 1e6:.1f}/{row['fwd'][1] * 1e6:.1f} us = {_ratio(row['fwd']):.2f}"
    if "fwdbwd" in row:
        s += f"; fwd+bwd {row['fwdbwd'][0] * 1e6:.1f}/{row['fwdbwd'][1] * 1e6:.1f} us = {_ratio(row['fwdbwd']):.2f}"
    return s


def summary(rows) -> dict:
    timed = [r for r in rows if "fwd" in r and r["work"]]
    out = {"timed": len(timed), "small": sum(1 for r in rows if "fwd" in r and not r["work"]),
           "skipped": sum(1 for r in rows if "skipped" in r)}
    for part in ("fwd", "fwdbwd"):
        rs = [_ratio(r[part]) for r in timed if part in r]
        out[part] = {"n": len(rs), "geomean": math.exp(sum(map(math.log, rs)) / len(rs)) if rs else float("nan"),
                     "above_2x": sum(1 for x in rs if x > 2), "median": float(np.median(rs)) if rs else float("nan")}
    return out


def markdown(rows, top: int | None = None) -> list[str]:
    """The audit's section of BENCHMARKS.md: the summary, then every timed op sorted by ratio (worst first)."""
    s = summary(rows)
    lines = [f"{s['timed']} ops timed at a medium size ({s['small']} more do little work at that size and "
             f"{s['skipped']} have no medium sample torch accepts: listed at the end). Ratios are ember / torch, "
             "best of alternating blocks in one process, one thread.", "",
             "| | ops | geometric mean | median | above 2x |", "|---|---|---|---|---|"]
    for part, label in (("fwd", "forward"), ("fwdbwd", "forward + backward")):
        p = s[part]
        lines.append(f"| {label} | {p['n']} | {p['geomean']:.2f} | {p['median']:.2f} | {p['above_2x']} |")
    lines += ["", "Rows marked * are the audit's own cases (bench/ops.py EXTRA); the others are op_db entries "
              "on a tiled medium sample.", "",
              "| op | inputs | forward µs ember / torch | ratio | fwd+bwd µs ember / torch | ratio |",
              "|---|---|---|---|---|---|"]
    timed = sorted((r for r in rows if "fwd" in r and r["work"]), key=_key, reverse=True)
    for r in timed[:top] if top else timed:
        fb = r.get("fwdbwd")
        lines.append(f"| {r['op']} | {r['shapes']} | {r['fwd'][0] * 1e6:.1f} / {r['fwd'][1] * 1e6:.1f} | "
                     f"{_ratio(r['fwd']):.2f} | "
                     + (f"{fb[0] * 1e6:.1f} / {fb[1] * 1e6:.1f} | {_ratio(fb):.2f} |" if fb else
                        f"{r.get('bwd_error', '—')} | |"))
    small = [r["op"] for r in rows if "fwd" in r and not r["work"]]
    skipped = [f"{r['op']} ({r['skipped']})" for r in rows if "skipped" in r]
    lines += ["", f"Little work at this size (outputs under {MIN_OUT} elements): " + ", ".join(small) + ".", "",
              "No medium sample: " + "; ".join(skipped) + "."]
    return lines


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--match", default=None, help="only ops whose name contains this")
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--json", default=None, help="write the rows here")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    rows = audit(a.match, a.blocks, log=(lambda s: None) if a.quiet else (lambda s: print(s, flush=True)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f)
    print(json.dumps(summary(rows)))


if __name__ == "__main__":
    main()
