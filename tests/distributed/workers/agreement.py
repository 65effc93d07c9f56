"""One rank of the agreement and timeout checks: ``agreement.py OUT MODE``.

mismatch: runs collectives whose ranks disagree (shape, dtype, collective, root, reduce op ...); each must raise on
    every rank before any data moves, after which the group still works. Writes rank<r>.json.
timeout: init_process_group(timeout=2 s); rank 1 never joins the all-reduce rank 0 waits in.
early_exit: rank 1 finishes its loop early and exits 0 while rank 0 goes on into another all-reduce.
destroyed: rank 1 destroys the default group and exits while rank 0 waits in a barrier.
barrier_timeout: barrier(timeout=2 s) in a group with the default timeout; rank 1 never joins.
"""
import json
import os
import sys
import time
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist

out, mode = sys.argv[1], sys.argv[2]
dist.init_process_group("mpi", timeout=timedelta(seconds=2) if mode == "timeout" else None)
rank = dist.get_rank()


def attempt(fn):
    try:
        fn()
    except RuntimeError as e:
        return f"{type(e).__name__}: {e}"
    return "ok"


if mode == "mismatch":
    one = rank == 0
    cases = {
        "shape": lambda: dist.all_reduce(ember.ones(3 if one else 4)),
        "dtype": lambda: dist.all_reduce(ember.ones(3, dtype=ember.float32 if one else ember.float64)),
        "collective": lambda: dist.all_reduce(ember.ones(3)) if one else dist.broadcast(ember.ones(3), 0),
        "root": lambda: dist.broadcast(ember.ones(3), src=rank),
        "reduce op": lambda: dist.all_reduce(ember.ones(3), op=dist.ReduceOp.SUM if one else dist.ReduceOp.MAX),
        "all_gather": lambda: dist.all_gather([ember.zeros(2, 2 + rank)] * 2, ember.ones(2, 2 + rank)),
        "gather": lambda: dist.gather(ember.ones(2 + rank), [ember.zeros(2)] * 2 if one else None, dst=0),
        "reduce_scatter": lambda: dist.reduce_scatter(ember.zeros(2, dtype=ember.int64 if one else ember.int32),
                                                      [ember.ones(2, dtype=ember.int64 if one else ember.int32)] * 2),
        "barrier vs all_reduce": lambda: dist.barrier() if one else dist.all_reduce(ember.ones(1)),
        "async": lambda: dist.all_reduce(ember.ones(2, 3) if one else ember.ones(3, 2), async_op=True).wait(),
    }
    result = {name: attempt(fn) for name, fn in cases.items()}
    t = ember.full((3,), float(rank + 1))
    dist.all_reduce(t)  # the group still works after the refused collectives
    result["after"] = t.tolist()
    objs = [None, None]
    dist.all_gather_object(objs, {"rank": rank, "arr": np.arange(rank + 2)})
    result["objects"] = [o["arr"].tolist() for o in objs]
    box = [f"from {rank}"]
    dist.broadcast_object_list(box, src=1)
    result["broadcast_object"] = box
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
elif mode == "timeout":
    if rank == 1:
        time.sleep(600)  # never joins; the launcher's own timeout (far longer than 2 s) would end a hung job
    dist.all_reduce(ember.ones(3))
elif mode == "early_exit":
    for _step in range(3 if rank == 1 else 5):
        dist.all_reduce(ember.ones(3))
elif mode == "barrier_timeout":
    if rank == 1:
        time.sleep(600)
    try:
        dist.barrier(device_ids=0)
    except TypeError as e:
        print(f"device_ids: {e}", file=sys.stderr)
    try:
        dist.broadcast_object_list([1], src=0, device="cuda")
    except AssertionError as e:
        print(f"broadcast_object_list: {e}", file=sys.stderr)
    try:
        dist.new_group(backend="nccl")
    except RuntimeError as e:
        print(f"new_group: {e}", file=sys.stderr)
    dist.barrier(timeout=timedelta(seconds=2))
elif mode == "destroyed":
    if rank == 1:
        dist.destroy_process_group()
        time.sleep(600)  # alive but out of the group: rank 0's barrier must still end
    dist.barrier()
