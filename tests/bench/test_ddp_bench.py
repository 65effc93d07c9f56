"""bench/ddp.py times W2: its Module gives the workload's loss and gradients (tiny sizes)."""
import os
import sys

import numpy as np

import ember

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench.ddp import _model  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402


def test_ddp_bench_model_is_w2():
    w = WORKLOADS["W2"]
    arrays = w.data(w.tiny)
    step, grads = w.build(ember, arrays, w.tiny)
    want_loss = float(step())
    model = _model(ember, arrays, w.tiny["dims"])
    loss = ember.nn.functional.cross_entropy(model(ember.tensor(arrays["x"])), ember.tensor(arrays["labels"]))
    loss.backward()
    assert float(loss) == want_loss
    for k, g in grads().items():
        np.testing.assert_array_equal(getattr(model, k).grad.numpy(), g)
