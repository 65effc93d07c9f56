"""One rank of the collectives check: runs every collective on ember tensors of many dtypes and saves the inputs
and results (``out/rank{r}.npz``) and the errors raised (``out/rank{r}.json``) for the test to compare."""
import json
import os
import sys
import warnings

import numpy as np

import ember
import ember.distributed as dist

out = sys.argv[1]
dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
res, errors = {}, {}
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
OPS = ["SUM", "AVG", "MAX", "MIN", "PRODUCT", "BAND", "BOR", "BXOR"]


def data(name: str, shape=(3, 4)) -> np.ndarray:
    r = np.random.default_rng([rank, DTYPES.index(name), len(shape)])
    if name == "bool":
        return r.random(shape) < 0.5
    if name.startswith("float"):
        return r.uniform(-2, 2, shape).astype(name)
    lo = 0 if name == "uint8" else -3
    return r.integers(lo, 4, shape).astype(name)


def record_error(key, fn):
    try:
        fn()
        errors[key] = None
    except Exception as e:  # noqa: BLE001 - the test compares type and message
        errors[key] = [type(e).__name__, str(e)]


for name in DTYPES:
    x = data(name)
    res[f"in_{name}"] = x
    for op in OPS:
        t = ember.tensor(x)
        key = f"all_reduce_{op}_{name}"
        record_error(key, lambda: dist.all_reduce(t, op=getattr(dist.ReduceOp, op)))
        if errors[key] is None:
            res[key] = t.numpy()
    t = ember.tensor(x)
    record_error(f"reduce_MAX_{name}", lambda: dist.reduce(t, dst=size - 1, op=dist.ReduceOp.MAX))
    res[f"reduce_MAX_{name}"] = t.numpy()

# async handles, non-contiguous views (written back into their base), a 0-d tensor
t = ember.tensor(data("float32"))
work = dist.all_reduce(t, async_op=True)
res["async_wait"] = np.array([work.wait(), work.is_completed()])
res["async_all_reduce"] = t.numpy()
base = ember.tensor(data("float64", (4, 6)))
dist.all_reduce(base.t()[::2], op=dist.ReduceOp.MAX)
res["in_strided"] = data("float64", (4, 6))
res["strided_base"] = base.numpy()
scalar = ember.tensor(float(rank + 1))
dist.all_reduce(scalar, op=dist.ReduceOp.PRODUCT)
res["scalar_product"] = scalar.numpy()

# broadcast / all_gather / gather / scatter / reduce_scatter
t = ember.tensor(data("int64"))
dist.broadcast(t, src=size - 1)
res["broadcast_last"] = t.numpy()
t = ember.tensor(data("float32"))
dist.broadcast(t, src=1, async_op=True).wait()
res["broadcast_1_async"] = t.numpy()
outs = [ember.zeros(3, 4) for _ in range(size)]
dist.all_gather(outs, ember.tensor(data("float32")))
res["all_gather"] = np.stack([o.numpy() for o in outs])
flat = ember.zeros(size * 3, 4, dtype=ember.int32)
dist.all_gather_into_tensor(flat, ember.tensor(data("int32")))
res["all_gather_into_tensor"] = flat.numpy()
glist = [ember.zeros(3, 4) for _ in range(size)] if rank == 1 else None
dist.gather(ember.tensor(data("float32")), glist, dst=1)
if rank == 1:
    res["gather_1"] = np.stack([g.numpy() for g in glist])
recv = ember.zeros(2, dtype=ember.int64)
slist = [ember.tensor([10 * i, 10 * i + 1]) for i in range(size)] if rank == 0 else None
dist.scatter(recv, slist, src=0)
res["scatter_0"] = recv.numpy()
rs = ember.zeros(2)
dist.reduce_scatter(rs, [ember.full((2,), float(rank * 10 + i)) for i in range(size)])
res["reduce_scatter"] = rs.numpy()

# point to point: a ring (send/recv), then isend/irecv from any source
nxt, prv = (rank + 1) % size, (rank - 1) % size
t = ember.tensor([float(rank)] * 3)
got = ember.zeros(3)
if rank % 2 == 0:
    dist.send(t, nxt)
    sender = dist.recv(got, prv)
else:
    sender = dist.recv(got, prv)
    dist.send(t, nxt)
res["ring"] = got.numpy()
res["ring_sender"] = np.array(sender)
if rank == 0:
    got = ember.zeros(3)
    w = dist.irecv(got)  # any source
    w.wait()
    res["irecv_any_sender"] = np.array(w.source_rank())
    res["irecv_any"] = got.numpy()
elif rank == size - 1:
    dist.isend(ember.tensor([7.0, 8.0, 9.0]), dst=0, tag=0).wait()

# sub-groups: [0, size-1]; the others are not members
g = dist.new_group([size - 1, 0])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    t = ember.tensor([float(rank + 1)])
    dist.all_reduce(t, group=g)
res["group_sum"] = t.numpy()
res["group_rank"] = np.array([dist.get_rank(g), dist.get_world_size(g)])
res["group_warned"] = np.array(len(caught))
t = ember.tensor([float(rank)])
if g != dist.GroupMember.NON_GROUP_MEMBER:
    dist.broadcast(t, group=g, group_src=1)  # group rank 1 is global rank size-1
res["group_broadcast"] = t.numpy()
dist.barrier()
dist.barrier(async_op=True).wait()

objs = []
dist.all_gather_object(objs, {"rank": rank})
res["objects"] = np.array([o["rank"] for o in objs])
lst = [f"from {rank}", rank] if rank == 1 else [None, None]
dist.broadcast_object_list(lst, src=1)
res["object_list"] = np.array([lst[0] == "from 1", lst[1] == 1])

# DistributedSampler: num_replicas and rank from the process group
from ember.utils.data import DistributedSampler  # noqa: E402

for n, drop_last in ((23, False), (23, True), (30, False)):
    sampler = DistributedSampler(range(n), seed=5, drop_last=drop_last)
    sampler.set_epoch(2)
    res[f"sampler_{n}_{drop_last}"] = np.array(list(sampler))

# argument errors
record_error("gather_list_on_non_dst", lambda: dist.gather(ember.ones(2), [ember.ones(2)] * size, dst=(rank + 1) % size))
record_error("gather_list_missing", lambda: dist.gather(ember.ones(2), None, dst=rank))
record_error("all_gather_len", lambda: dist.all_gather([ember.ones(2)], ember.ones(2)))
record_error("all_gather_shape", lambda: dist.all_gather([ember.ones(3)] * size, ember.ones(2)))
record_error("scatter_missing", lambda: dist.scatter(ember.ones(2), None, src=rank))
record_error("not_a_tensor", lambda: dist.all_reduce([1, 2]))
record_error("send_to_self", lambda: dist.send(ember.ones(1), rank))
record_error("init_twice", lambda: dist.init_process_group("mpi"))
record_error("bad_src", lambda: dist.broadcast(ember.ones(1), src=size + 3))

dist.destroy_process_group()
res["initialized_after_destroy"] = np.array(dist.is_initialized())
np.savez(os.path.join(out, f"rank{rank}.npz"), **res)
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump(errors, f)
