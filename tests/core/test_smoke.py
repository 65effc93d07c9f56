"""A first end-to-end check against torch: the seeds' leaf / non-leaf example."""
from oracle import check, torch, ember


def test_seed_chain_grad_matches_torch():
    for lib in (ember, torch):
        x = lib.tensor(3.0, requires_grad=True)
        loss = ((x + 1) - 2 * x) ** 2
        loss.backward()
        assert x.grad.item() == 4.0


def test_binary_broadcast_values_and_grads():
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 1, 4)).astype(np.float32)
    b = rng.standard_normal((5, 1)).astype(np.float32)
    check(lambda lib, x, y: (x * y + x / (y * y + 1) - y).tanh().exp(), a, b, gradgrad=True)
