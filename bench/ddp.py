"""DDP benchmark: W2 (the MLP of bench/workloads.py, global batch 128) on 2 MPI ranks, 64 rows each.

    python bench/ddp.py [--ranks 2] [--steps 60] [--bucket-mb 25 0.5] [--quick]

Prints a table: the single-process step on the global batch, then per bucket size the DDP step and three
backward times, interleaved step by step: DDP as it runs (each bucket's all-reduce starts when it is full),
DDP with every all-reduce started only at the end of backward, and ``no_sync`` (no communication); then the
blocking all-reduce of all buckets alone and the time the end of backward waited for the all-reduces (the
reducer's ``last_wait_s``, overlapped / at end). The share of all-reduce time hidden under backward is
``overlap = (backward at end - backward overlapped) / all-reduce alone``. The last bucket (W2's first layer,
1.6 of its 2.1 MB) only fills when backward ends, so its all-reduce can never be hidden.
Every rank uses one BLAS thread. Medians over the timed steps (ranks aligned by a barrier before each).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

if __name__ == "__main__":  # before NumPy loads its BLAS: one thread per rank (not when imported by a test)
    for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_v] = "1"

from bench.workloads import WORKLOADS  # noqa: E402

SIZES = dict(WORKLOADS["W2"].sizes)


def _model(ember, arrays: dict, dims):
    """W2's MLP as a Module: ``h @ W_i + b_i``, ReLU between layers, parameters from the workload's arrays."""
    nn = ember.nn

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.n = len(dims) - 1
            for i in range(self.n):
                setattr(self, f"W{i}", nn.Parameter(ember.tensor(arrays[f"W{i}"])))
                setattr(self, f"b{i}", nn.Parameter(ember.tensor(arrays[f"b{i}"])))

        def forward(self, x):
            for i in range(self.n):
                x = x @ getattr(self, f"W{i}") + getattr(self, f"b{i}")
                if i < self.n - 1:
                    x = ember.relu(x)
            return x

    return MLP()


def _single(steps: int) -> float:
    """Median step (ms) of plain training on the global batch in this process."""
    import ember

    arrays = WORKLOADS["W2"].data(SIZES)
    model = _model(ember, arrays, SIZES["dims"])
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    x, y = ember.tensor(arrays["x"]), ember.tensor(arrays["labels"])
    loss_fn = ember.nn.CrossEntropyLoss()
    times = []
    for _ in range(steps + 5):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[5:]) * 1e3


def _rank_job(out: str, steps: int, bucket_mbs: list) -> None:
    """Runs on every rank: time DDP steps, local backward, and the all-reduce alone, per bucket size."""
    import numpy as np

    import ember
    import ember.distributed as dist
    from ember.distributed._mpi import mpi
    from ember.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    arrays = WORKLOADS["W2"].data(SIZES)
    per = SIZES["batch"] // world
    x = ember.tensor(arrays["x"][rank * per:(rank + 1) * per])
    y = ember.tensor(arrays["labels"][rank * per:(rank + 1) * per])
    loss_fn = ember.nn.CrossEntropyLoss()
    MPI = mpi()
    rows = []
    for mb in bucket_mbs:
        model = DDP(_model(ember, arrays, SIZES["dims"]), bucket_cap_mb=mb)
        opt = ember.optim.SGD(model.parameters(), lr=0.01)
        comm = model.process_group._comm

        def step(mode: str):
            """One training step: (step, backward, wait at the end of backward) in seconds."""
            model.reducer.overlap = mode == "overlap"
            dist.barrier()
            t0 = time.perf_counter()
            opt.zero_grad()
            if mode == "no_sync":
                with model.no_sync():
                    loss = loss_fn(model(x), y)
            else:
                loss = loss_fn(model(x), y)
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            wait = model.reducer.last_wait_s if mode != "no_sync" else 0.0
            opt.step()
            return time.perf_counter() - t0, t2 - t1, wait

        times = {k: [] for k in ("overlap", "at_end", "no_sync", "allreduce")}
        for i in range(steps + 5):
            got = {mode: step(mode) for mode in ("overlap", "at_end", "no_sync")}
            dist.barrier()
            t0 = time.perf_counter()  # the all-reduce of every bucket alone, blocking
            MPI.Request.Waitall([comm.Iallreduce(MPI.IN_PLACE, b.flat, op=MPI.SUM) for b in model.reducer.buckets])
            got["allreduce"] = (time.perf_counter() - t0,)
            if i >= 5:
                for k, v in got.items():
                    times[k].append(v)
        med = {k: np.median(np.array(v), axis=0) * 1e3 for k, v in times.items()}
        mine = np.concatenate([med["overlap"], med["at_end"], med["no_sync"], med["allreduce"]])
        dist.all_reduce(ember.from_numpy(mine), op=dist.ReduceOp.MAX)  # the slowest rank sets the pace
        keys = ("step", "backward", "wait", "step_end", "backward_end", "wait_end", "step_local", "backward_local",
                "wait_local", "allreduce")
        rows.append({"bucket_mb": mb, "buckets": len(model.reducer.buckets), **dict(zip(keys, mine.tolist()))})
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"world": world, "rows": [{k: float(v) for k, v in r.items()} for r in rows]}, f)
    dist.destroy_process_group()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--bucket-mb", type=float, nargs="+", default=[25.0, 0.5, 0.1])
    p.add_argument("--quick", action="store_true", help="10 steps")
    p.add_argument("--async-progress", action="store_true",
                   help="MPICH's progress thread (MPIR_CVAR_ASYNC_PROGRESS=1): all-reduces advance without MPI calls")
    p.add_argument("--_rank-job", dest="rank_job", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    steps = 10 if a.quick else a.steps
    if a.rank_job:
        _rank_job(a.rank_job, steps, a.bucket_mb)
        return 0
    from ember.distributed.run import command

    single = _single(steps)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ddp.json")
        cmd = command(a.ranks, os.path.abspath(__file__),
                      ["--steps", str(steps), "--bucket-mb", *map(str, a.bucket_mb), "--_rank-job", out])
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        if a.async_progress:
            env["MPIR_CVAR_ASYNC_PROGRESS"] = "1"
        subprocess.run(cmd, check=True, env=env, timeout=1800)
        with open(out) as f:
            res = json.load(f)
    print(f"W2 ({SIZES['dims']}, global batch {SIZES['batch']}, SGD), {res['world']} ranks x "
          f"{SIZES['batch'] // res['world']} rows, 1 BLAS thread per rank"
          f"{', MPICH progress thread' if a.async_progress else ''}; medians of {steps} steps, ms")
    print(f"single process, global batch: step {single:.2f}")
    print("| bucket_cap_mb | buckets | DDP step | backward: overlapped | backward: all-reduce at end | "
          "backward: no_sync | all-reduce alone | wait after backward | overlap |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in res["rows"]:
        hidden = (r["backward_end"] - r["backward"]) / r["allreduce"] if r["allreduce"] > 0 else float("nan")
        print(f"| {r['bucket_mb']:g} | {int(r['buckets'])} | {r['step']:.2f} | {r['backward']:.2f} | "
              f"{r['backward_end']:.2f} | {r['backward_local']:.2f} | {r['allreduce']:.2f} | "
              f"{r['wait']:.2f} / {r['wait_end']:.2f} | {min(max(hidden, 0.0), 1.0):.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
