"""One rank of the DDP checks (2 ranks): saves ``out/rank{r}.npz`` for test_ddp.py to compare with single-process
training on the global batch (ember and torch).

- "plain": MLP, default buckets, SGD with momentum, 20 steps, each rank on its half of the global batch.
- "tiny": the same with one bucket per parameter (bucket_cap_mb tiny) and an unused layer (find_unused_parameters).
- "late": one bucket per parameter, every all-reduce started at the end of backward (the benchmark's baseline).
- "accum": two no_sync micro-steps then a synced one, one optimizer step.
- "bn": a BatchNorm model: buffers follow rank 0.
"""
import os
import sys
import warnings

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

from _data import D_H, D_IN, D_OUT, GLOBAL_BATCH, STEPS, batches

out = sys.argv[1]
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
res = {}


class Net(nn.Module):
    def __init__(self, unused: bool = False) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D_IN, D_H), nn.Linear(D_H, D_OUT)
        self.extra = nn.Linear(D_H, 3) if unused else None

    def forward(self, x):
        return self.fc2(ember.relu(self.fc1(x)))


def local(x, y):
    per = GLOBAL_BATCH // world
    sl = slice(rank * per, (rank + 1) * per)
    return ember.tensor(x[sl]), ember.tensor(y[sl])


def params(m) -> dict:
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}


for name, kwargs in (("plain", {}), ("tiny", {"bucket_cap_mb": 1e-6, "find_unused_parameters": True}),
                     ("late", {"bucket_cap_mb": 1e-6})):
    ember.manual_seed(100 + rank)  # different replicas: DDP must broadcast rank 0's
    net = Net(unused=name == "tiny")
    for k, v in params(net).items():
        res[f"{name}_init_{k}"] = v
    model = DDP(net, **kwargs)
    model.reducer.overlap = name != "late"  # late: every all-reduce starts at the end of backward
    res[f"{name}_buckets"] = np.array(len(model.reducer.buckets))
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for x, y in batches(1, STEPS):
        xb, yb = local(x, y)
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()
    for k, v in params(model.module).items():
        res[f"{name}_final_{k}"] = v
    res[f"{name}_extra_grad_is_none"] = np.array(net.extra.weight.grad is None if net.extra is not None else True)

# gradient accumulation: micro-batches 0 and 1 under no_sync, micro-batch 2 synced, one step
ember.manual_seed(7 + rank)
net = Net()
for k, v in params(net).items():
    res[f"accum_init_{k}"] = v
model = DDP(net)
opt = ember.optim.SGD(model.parameters(), lr=0.5)
loss_fn = nn.CrossEntropyLoss()
micro = batches(2, 3)
opt.zero_grad()
for i, (x, y) in enumerate(micro):
    xb, yb = local(x, y)
    if i < 2:
        with model.no_sync():
            (loss_fn(model(xb), yb) / 3).backward()
        if i == 1:
            res["accum_local_grad"] = net.fc1.weight.grad.numpy().copy()  # not averaged yet
    else:
        (loss_fn(model(xb), yb) / 3).backward()
res["accum_grad"] = net.fc1.weight.grad.numpy().copy()
opt.step()
for k, v in params(net).items():
    res[f"accum_final_{k}"] = v

# buffers: BatchNorm running statistics follow rank 0 (broadcast before each synced forward)
ember.manual_seed(3)
bn_net = nn.Sequential(nn.Linear(D_IN, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, D_OUT))
model = DDP(bn_net)
opt = ember.optim.SGD(model.parameters(), lr=0.1)
for x, y in batches(3, 3):
    xb, yb = local(x, y)
    opt.zero_grad()
    loss_fn(model(xb), yb).backward()
    opt.step()
res["bn_mean_after_train"] = bn_net[1].running_mean.numpy().copy()
model.eval()
with ember.no_grad():
    model(xb)  # pre-forward broadcast of rank 0's buffers
res["bn_mean_after_eval"] = bn_net[1].running_mean.numpy().copy()
res["bn_batches_tracked"] = bn_net[1].num_batches_tracked.numpy().copy()

# find_unused_parameters with a different unused head on each rank
class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk, self.a, self.b = nn.Linear(D_IN, 8), nn.Linear(8, 2), nn.Linear(8, 2)

    def forward(self, x, head: int):
        h = ember.relu(self.trunk(x))
        return self.a(h) if head == 0 else self.b(h)


ember.manual_seed(11)
heads = TwoHeads()
for k, v in params(heads).items():
    res[f"heads_init_{k}"] = v
model = heads_model = DDP(heads, find_unused_parameters=True)
x, y = batches(4, 1)[0]
xb, yb = local(x, y % 2)
nn.CrossEntropyLoss()(model(xb, rank % 2), yb).backward()
for k, p in heads.named_parameters():
    res[f"heads_grad_{k}"] = p.grad.numpy().copy()

# torch's "Expected to have finished reduction" error: a second synced forward without backward, and a backward
# that left a parameter without gradient (no find_unused_parameters), both raise at the next forward
model = DDP(Net())
xb, yb = local(*batches(5, 1)[0])
model(xb)
for key in ("two_forwards", "after_two_forwards"):
    try:
        nn.CrossEntropyLoss()(model(xb), yb).backward()
        res[f"error_{key}"] = np.array("")
    except RuntimeError as e:
        res[f"error_{key}"] = np.array(str(e))
model = DDP(Net(unused=True))
nn.CrossEntropyLoss()(model(xb), yb).backward()
try:
    model(xb)
    res["error_unused"] = np.array("")
except RuntimeError as e:
    res["error_unused"] = np.array(str(e))

# the wrapper itself: printed form, state_dict keys, refused arguments
res["repr"] = np.array(repr(heads_model))
res["state_dict_keys"] = np.array(list(heads_model.state_dict()))
for key, fn in (("device_ids", lambda: DDP(nn.Linear(2, 2), device_ids=[0])),
                ("no_params", lambda: DDP(nn.ReLU())),
                ("unknown_keyword", lambda: DDP(nn.Linear(2, 2), bucket_size=1)),
                ("mixed_precision", lambda: DDP(nn.Linear(2, 2), mixed_precision=object()))):
    try:
        fn()
        res[f"error_{key}"] = np.array("")
    except Exception as e:  # noqa: BLE001
        res[f"error_{key}"] = np.array(f"{type(e).__name__}: {e}")


# buffer flags: broadcast_buffers (deprecated, warns) also skips the first sync; forward_sync_buffers=False still
# syncs at construction, then never in forward
for key, kwargs in (("default", {}), ("broadcast_false", {"broadcast_buffers": False}),
                    ("forward_sync_false", {"forward_sync_buffers": False}), ("check_reduction",
                                                                             {"check_reduction": True})):
    net = nn.BatchNorm1d(2)
    net.running_mean.fill_(float(rank))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = DDP(net, **kwargs)
    res[f"flags_{key}_warnings"] = np.array([f"{w.category.__name__}: {w.message}" for w in seen] or [""])
    res[f"flags_{key}_init"] = net.running_mean.numpy().copy()
    net.running_mean.fill_(float(10 + rank))
    model.eval()
    model(ember.ones(3, 2))
    res[f"flags_{key}_forward"] = net.running_mean.numpy().copy()

np.savez(os.path.join(out, f"rank{rank}.npz"), **res)
