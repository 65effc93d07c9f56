"""Module parity helper: build the same layer in ember and torch, copy the state, compare forward/backward."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, ember, torch


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """One torch thread for a whole test module (import it there): torch's recurrent kernels crawl when threads are
    oversubscribed by parallel test workers."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def copy_state(em, tm) -> None:
    """Load torch module ``tm``'s state into ember module ``em``."""
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def module_parity(make, *arrays, train: bool = True, grad: bool = True, seed: int = 0, rtol=None, atol=None,
                  forward=None):
    """``make(lib)`` builds the layer; compare outputs, input grads, parameter grads and buffers after a step."""
    em, tm = make(ember), make(torch)
    copy_state(em, tm)
    em.train(train)
    tm.train(train)
    ei = [ember.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    ti = [torch.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    call = forward or (lambda m, *xs: m(*xs))
    eo, to = call(em, *ei), call(tm, *ti)
    assert_close(eo, to, rtol, atol, what="output")
    if grad and to.requires_grad:
        up = np.random.default_rng(seed).standard_normal(tuple(to.shape)).astype(to.detach().numpy().dtype)
        eo.backward(ember.tensor(up))
        to.backward(torch.tensor(up))
        for i, (e, t) in enumerate(zip(ei, ti)):
            if t.requires_grad:
                assert_close(e.grad, t.grad, rtol, atol, what=f"input grad {i}")
        for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
            assert_close(p.grad, q.grad, rtol, atol, what=f"grad of {n}")
    for (n, b), (_, c) in zip(em.named_buffers(), tm.named_buffers()):
        assert_close(b, c, rtol, atol, what=f"buffer {n}")
    return eo, to


def reseeding(rng: np.random.Generator, seed: int):
    """An autouse fixture resetting the module's ``rng`` before each test (same values under any test order)."""
    import pytest

    @pytest.fixture(autouse=True)
    def _reseed():
        rng.bit_generator.state = np.random.default_rng(seed).bit_generator.state
        ember.manual_seed(seed)
        torch.manual_seed(seed)
    return _reseed
