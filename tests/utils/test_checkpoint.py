"""ember.utils.checkpoint: same gradients as without it (and as torch), lower peak memory."""
import tracemalloc

import numpy as np
import pytest

from oracle import torch, ember, to_np, assert_close

rng = np.random.default_rng(0)
X = rng.standard_normal((8, 16)).astype(np.float32)
W = [rng.standard_normal((16, 16)).astype(np.float32) * 0.3 for _ in range(4)]


def _block(lib, w):
    def f(x):
        return (x @ w).tanh().exp() * 0.5 + x
    return f


def _run(lib, mode):
    x = lib.tensor(X, requires_grad=True)
    ws = [lib.tensor(w, requires_grad=True) for w in W]
    h = x
    for w in ws:
        f = _block(lib, w)
        if mode is None:
            h = f(h)
        else:
            h = lib.utils.checkpoint.checkpoint(f, h, use_reentrant=mode)
    loss = (h * h).sum()
    loss.backward()
    return loss, x.grad, [w.grad for w in ws]


@pytest.mark.parametrize("mode", [True, False])
def test_checkpointed_gradients_equal_plain_and_torch(mode):
    le, gxe, gwe = _run(ember, mode)
    lp, gxp, gwp = _run(ember, None)
    lt, gxt, gwt = _run(torch, mode)
    assert_close(le, lt)
    np.testing.assert_array_equal(to_np(gxe), to_np(gxp))
    assert_close(gxe, gxt)
    for a, b, c in zip(gwe, gwp, gwt):
        np.testing.assert_array_equal(to_np(a), to_np(b))
        assert_close(a, c)


def test_non_reentrant_works_with_autograd_grad_and_inputs_not_requiring_grad():
    w = ember.tensor(W[0], requires_grad=True)
    x = ember.tensor(X)  # does not require grad: only the weight does
    out = ember.utils.checkpoint.checkpoint(_block(ember, w), x, use_reentrant=False)
    (g,) = ember.autograd.grad(out.sum(), [w])
    (g2,) = ember.autograd.grad(_block(ember, w)(x).sum(), [w])
    np.testing.assert_array_equal(g.numpy(), g2.numpy())


def test_rng_state_is_replayed_in_recomputation():
    x = ember.tensor(X, requires_grad=True)

    def noisy(t):
        return t * ember.rand(*t.shape)

    for mode in (True, False):
        ember.manual_seed(3)
        y = ember.utils.checkpoint.checkpoint(noisy, x, use_reentrant=mode)
        (g,) = ember.autograd.grad(y.sum(), [x])
        np.testing.assert_allclose(g.numpy(), (y / x).detach().numpy(), rtol=1e-5)


def test_checkpoint_sequential_matches_plain():
    ember.manual_seed(0)
    model = ember.nn.Sequential(*[ember.nn.Linear(16, 16) for _ in range(6)])
    x = ember.tensor(X, requires_grad=True)
    ember.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=False).sum().backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    gx = x.grad.numpy().copy()
    model.zero_grad()
    x.grad = None
    model(x).sum().backward()
    for g, p in zip(grads, model.parameters()):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-6)


def _peak(mode):
    big = np.random.default_rng(1).standard_normal((256, 256)).astype(np.float32)
    x = ember.tensor(big, requires_grad=True)

    def seg(t):
        for _ in range(8):
            t = (t * 1.01).tanh()
        return t

    tracemalloc.start()
    h = x
    for _ in range(6):
        h = seg(h) if mode is None else ember.utils.checkpoint.checkpoint(seg, h, use_reentrant=mode)
    h.sum().backward()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def test_checkpoint_lowers_peak_memory():
    plain = _peak(None)
    for mode in (True, False):
        assert _peak(mode) < 0.5 * plain
