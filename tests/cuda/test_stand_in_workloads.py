"""Training steps of the bench workloads on the strict cuda stand-in take no host fallback (NOTE [host fallback] in
ember/ops/_op.py): W6's causal mask runs masked_fill and its backward on the device at the size where the select
takes its bitwise form (``_kernels.SELECT_MIN`` elements), as on a GPU. Their losses and gradients equal the CPU's."""
from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import ember
from ember import _backend as B
from ember import _kernels

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from bench.workloads import WORKLOADS  # noqa: E402

# small sizes whose attention scores (batch, heads, block, block) reach SELECT_MIN elements
W6_SIZES = {"vocab": 7, "block": 16, "batch": 2, "n_embd": 16, "n_head": 4, "n_layer": 1}
SIZES = {"W2": None, "W3": None, "W5": None, "W6": W6_SIZES}


def _steps(name: str, device: str, n: int = 2):
    """``n`` training steps of workload ``name`` with its arrays on ``device``: losses, last gradients, the ops
    that took the host fallback."""
    w = WORKLOADS[name]
    sizes = SIZES[name] or w.tiny
    arrays = w.data(sizes)
    ember.manual_seed(0)
    seen = set(B.host_fallbacks)
    B.host_fallbacks.clear()
    ember.set_default_device(device)
    try:
        step, grads = w.build(ember, arrays, sizes)
        losses = [float(step().item()) for _ in range(n)]
        return losses, grads(), set(B.host_fallbacks)
    finally:
        ember.set_default_device("cpu")
        B.host_fallbacks.update(seen)


def test_w6_sizes_reach_the_bitwise_select() -> None:
    s = W6_SIZES
    assert math.prod((s["batch"], s["n_head"], s["block"], s["block"])) >= _kernels.SELECT_MIN


@pytest.mark.parametrize("name", sorted(SIZES))
def test_training_step_on_cuda_takes_no_host_fallback(stand_in, name) -> None:
    cpu_losses, cpu_grads, _ = _steps(name, "cpu")
    losses, grads, fallbacks = _steps(name, "cuda")
    assert not fallbacks, f"{name}'s step ran these ops on the host: {sorted(fallbacks)}"
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-5)
    assert grads.keys() == cpu_grads.keys()
    for k in grads:
        np.testing.assert_allclose(grads[k], cpu_grads[k], rtol=1e-4, atol=1e-6, err_msg=k)  # (host copies)
