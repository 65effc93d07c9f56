"""bench/vmap_grad.py on W2's and W3's tiny sizes: vmap(grad) and the loop of backward calls give the same gradients,
in ember and torch (no timing here)."""
import os
import sys

import numpy as np
import pytest

from oracle import ember, torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench import vmap_grad  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402


@pytest.mark.parametrize("workload", ["W2", "W3"])
@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_vmap_and_loop_agree(lib, workload):
    params, xs, ys, loss = vmap_grad.setup(lib, 5, WORKLOADS[workload].tiny, workload)
    v = vmap_grad.per_sample_vmap(lib, params, xs, ys, loss)
    l_ = vmap_grad.per_sample_loop(lib, params, xs, ys, loss)
    assert set(v) == set(l_)
    for k in v:
        assert tuple(v[k].shape) == (5,) + tuple(params[k].shape)
        np.testing.assert_allclose(v[k].detach().numpy(), l_[k].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("workload", ["W2", "W3"])
def test_ember_matches_torch(workload):
    out = []
    for lib in (ember, torch):
        params, xs, ys, loss = vmap_grad.setup(lib, 4, WORKLOADS[workload].tiny, workload)
        out.append({k: t.detach().numpy() for k, t in vmap_grad.per_sample_vmap(lib, params, xs, ys, loss).items()})
    for k in out[0]:
        np.testing.assert_allclose(out[0][k], out[1][k], rtol=1e-5, atol=1e-6)
