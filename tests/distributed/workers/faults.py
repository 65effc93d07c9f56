"""One rank of the fault checks: ``faults.py OUT MODE``.

ok: writes its rank, torchrun's environment variables and the world size (launcher check).
raise: rank 1 raises in the middle of training while rank 0 goes on into the gradient all-reduce.
exit: rank 1 calls sys.exit(3) before a collective the others wait in.
shapes: rank 1 builds a model of other shapes; DDP's constructor must refuse on every rank.
"""
import json
import os
import sys

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

out, mode = sys.argv[1], sys.argv[2]
dist.init_process_group("mpi")
rank = dist.get_rank()
if mode == "ok":
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "world": dist.get_world_size(), "argv": sys.argv[1:],
                   "env": [os.environ.get(k) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")]}, f)
elif mode == "shapes":
    DDP(nn.Linear(4, 3 if rank == 0 else 5))
elif mode == "exit":
    if rank == 1:
        sys.exit(3)
    dist.barrier()
else:
    model = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)))
    for step in range(10):
        if rank == 1 and step == 3:
            raise RuntimeError("rank 1 failed on purpose")
        model(ember.randn(5, 4)).sum().backward()
dist.destroy_process_group()
