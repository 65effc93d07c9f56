"""DDP benchmark: W2 (the MLP of bench/workloads.py, global batch 128) on 2 MPI ranks, 64 rows each.

    python bench/ddp.py [--ranks 2] [--steps 60] [--bucket-mb 25 0.5] [--quick]

Prints a table: the single-process step on the global batch, then per bucket size the DDP step, its backward,
the same backward without communication (``no_sync``), the blocking all-reduce of all gradients alone, the time
backward's end still waited for the all-reduces (the reducer's ``last_wait_s``, slowest rank), and the share of
the all-reduce hidden under backward: ``overlap = 1 - wait / allreduce``. ``backward (DDP) - backward (no_sync)``
is DDP's whole cost in backward: that wait plus copying gradients in and out of the buckets and rank skew.
``best possible`` is ``1 - last bucket / allreduce``: the last bucket (W2's first layer, 1.6 of its 2.1 MB) only
fills when backward ends, so its all-reduce can never be hidden.
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
    rows = []
    for mb in bucket_mbs:
        model = DDP(_model(ember, arrays, SIZES["dims"]), bucket_cap_mb=mb)
        opt = ember.optim.SGD(model.parameters(), lr=0.01)
        step_t, bwd_t, local_t, comm_t, wait_t, last_t = [], [], [], [], [], []
        for i in range(steps + 5):
            dist.barrier()
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            wait = model.reducer.last_wait_s
            opt.step()
            t3 = time.perf_counter()
            dist.barrier()
            with model.no_sync():  # the same backward without communication
                opt.zero_grad()
                loss = loss_fn(model(x), y)
                t4 = time.perf_counter()
                loss.backward()
                t5 = time.perf_counter()
            dist.barrier()
            flats = [b.flat for b in model.reducer.buckets]  # the all-reduce of every bucket, blocking, alone
            t6 = time.perf_counter()
            MPI = mpi()
            MPI.Request.Waitall([model.process_group._comm.Iallreduce(MPI.IN_PLACE, f, op=MPI.SUM) for f in flats])
            t7 = time.perf_counter()
            dist.barrier()
            t8 = time.perf_counter()  # the last bucket alone: it starts when backward ends, so it is never hidden
            model.process_group._comm.Allreduce(MPI.IN_PLACE, flats[-1], op=MPI.SUM)
            t9 = time.perf_counter()
            if i >= 5:
                step_t.append(t3 - t0)
                bwd_t.append(t2 - t1)
                local_t.append(t5 - t4)
                comm_t.append(t7 - t6)
                wait_t.append(wait)
                last_t.append(t9 - t8)
        med = [statistics.median(v) * 1e3 for v in (step_t, bwd_t, local_t, comm_t, wait_t, last_t)]
        mine = np.array(med)
        dist.all_reduce(ember.from_numpy(mine), op=dist.ReduceOp.MAX)  # the slowest rank sets the pace
        rows.append({"bucket_mb": mb, "buckets": len(model.reducer.buckets), "step": mine[0], "backward": mine[1],
                     "backward_local": mine[2], "allreduce": mine[3], "wait": mine[4],
                     "last_bucket": mine[5]})
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
    print("| bucket_cap_mb | buckets | DDP step | backward (DDP) | backward (no_sync) | all-reduce alone | "
          "wait after backward | overlap | best possible |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in res["rows"]:
        hidden = min(max(1.0 - r["wait"] / r["allreduce"], 0.0), 1.0) if r["allreduce"] > 0 else float("nan")
        best = min(max(1.0 - r["last_bucket"] / r["allreduce"], 0.0), 1.0) if r["allreduce"] > 0 else float("nan")
        print(f"| {r['bucket_mb']:g} | {int(r['buckets'])} | {r['step']:.2f} | {r['backward']:.2f} | "
              f"{r['backward_local']:.2f} | {r['allreduce']:.2f} | {r['wait']:.2f} | {hidden:.0%} | {best:.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
