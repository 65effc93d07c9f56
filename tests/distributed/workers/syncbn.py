"""One rank of the SyncBatchNorm and differentiable-collective checks: saves ``out/rank{r}.npz`` for
test_syncbn.py to compare with single-process torch on the global batch.

- "bn": SyncBatchNorm over (8, 3, 5) global batches (each rank its slice), 2 training steps then eval: outputs,
  input/weight/bias grads of a loss summed over ranks, running statistics.
- "conv": convert_sync_batchnorm of a conv + BatchNorm2d net wrapped in DDP, 3 SGD steps.
- "gather"/"reduce": ember.distributed.nn.functional.all_gather/all_reduce outputs and input grads.
"""
import os
import sys

import numpy as np

import ember
import ember.distributed as dist
import ember.distributed.nn.functional as dnn
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

out = sys.argv[1]
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
res = {}
r = np.random.default_rng(0)
xs = [r.standard_normal((8, 3, 5)) * 2 + 1 for _ in range(2)]
ups = [r.standard_normal((8, 3, 5)) for _ in range(2)]
w0, b0 = r.standard_normal(3), r.standard_normal(3)
per = 8 // world
sl = slice(rank * per, (rank + 1) * per)

bn = nn.SyncBatchNorm(3, momentum=0.3, dtype=ember.float64)
with ember.no_grad():
    bn.weight.copy_(ember.tensor(w0))
    bn.bias.copy_(ember.tensor(b0))
for i, (x, up) in enumerate(zip(xs, ups)):
    xt = ember.tensor(x[sl], requires_grad=True)
    bn.zero_grad()
    y = bn(xt)
    (y * ember.tensor(up[sl])).sum().backward()
    res[f"bn_y{i}"], res[f"bn_gx{i}"] = y.detach().numpy(), xt.grad.numpy()
    res[f"bn_gw{i}"], res[f"bn_gb{i}"] = bn.weight.grad.numpy(), bn.bias.grad.numpy()
res["bn_running_mean"], res["bn_running_var"] = bn.running_mean.numpy(), bn.running_var.numpy()
res["bn_tracked"] = bn.num_batches_tracked.numpy()
bn.eval()
res["bn_eval"] = bn(ember.tensor(xs[0][sl])).detach().numpy()

ember.manual_seed(3)  # the same start on every rank (DDP would broadcast rank 0's anyway)
net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 16, 3))
res["conv_init"] = np.concatenate([p.detach().numpy().ravel() for p in net.parameters()])  # a copy
model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(net))
res["conv_repr"] = np.array(repr(model.module))
opt = ember.optim.SGD(model.parameters(), lr=0.1)
data = np.random.default_rng(1)
for _ in range(3):
    x = data.standard_normal((8, 1, 4, 4)).astype(np.float32)
    y = data.integers(0, 3, 8)
    opt.zero_grad()
    nn.functional.cross_entropy(model(ember.tensor(x[sl])), ember.tensor(y[sl])).backward()
    opt.step()
for k, v in model.module.state_dict().items():
    res[f"conv_final_{k}"] = v.numpy()

v = ember.tensor(np.arange(3.0) + 10 * rank, requires_grad=True)
parts = dnn.all_gather(v)
weights = [ember.tensor(np.full(3, 1.0 + j + 10 * rank)) for j in range(world)]
sum((p * w).sum() for p, w in zip(parts, weights)).backward()
res["gather_out"] = np.stack([p.detach().numpy() for p in parts])
res["gather_grad"] = v.grad.numpy()
u = ember.tensor(np.arange(3.0) * (rank + 1), requires_grad=True)
s = dnn.all_reduce(u)
(s * (rank + 2)).sum().backward()
res["reduce_out"], res["reduce_grad"] = s.detach().numpy(), u.grad.numpy()

np.savez(os.path.join(out, f"rank{rank}.npz"), **res)
