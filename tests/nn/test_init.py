"""nn.init against torch.nn.init: gains, bounds, moments (random streams differ, distributions must not)."""
import math

import numpy as np
import pytest

from oracle import torch, ember


@pytest.mark.parametrize("nl,param", [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                                      ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)])
def test_calculate_gain_matches_torch(nl, param):
    assert ember.nn.init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl, param))


def test_calculate_gain_errors_match_torch():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="Unsupported nonlinearity"):
            lib.nn.init.calculate_gain("nope")


def _moments(lib, fn, shape, **kw):
    lib.manual_seed(0)
    t = lib.empty(*shape)
    getattr(lib.nn.init, fn)(t, **kw)
    a = t.detach().numpy().astype(np.float64)
    return a.min(), a.max(), a.mean(), a.std()


@pytest.mark.parametrize("fn,kw", [("uniform_", dict(a=-2.0, b=3.0)), ("normal_", dict(mean=1.0, std=0.5)),
                                   ("xavier_uniform_", dict(gain=2.0)), ("xavier_normal_", {}),
                                   ("kaiming_uniform_", dict(a=math.sqrt(5))),
                                   ("kaiming_normal_", dict(mode="fan_out", nonlinearity="relu")),
                                   ("trunc_normal_", dict(mean=0.5, std=1.0, a=-1.0, b=1.5))])
def test_distributions_match_torch(fn, kw):
    shape = (256, 128, 3)
    emn, emx, em, es = _moments(ember, fn, shape, **kw)
    tmn, tmx, tm, ts = _moments(torch, fn, shape, **kw)
    spread = max(ts, 1e-3)
    assert abs(em - tm) < 0.02 * spread + 1e-3 and abs(es - ts) < 0.02 * spread
    if "uniform" in fn or fn == "trunc_normal_":  # bounded: same support
        assert emn >= tmn - 0.01 * spread and emx <= tmx + 0.01 * spread
        assert emn < tmn + 0.02 * spread and emx > tmx - 0.02 * spread


def test_deterministic_fills_match_torch():
    for fn, shape, kw in [("constant_", (3, 4), dict(val=2.5)), ("ones_", (2, 3), {}), ("zeros_", (2, 3), {}),
                          ("eye_", (3, 5), {}), ("dirac_", (4, 2, 3, 3), dict(groups=2))]:
        e, t = ember.empty(*shape), torch.empty(*shape)
        getattr(ember.nn.init, fn)(e, **kw)
        getattr(torch.nn.init, fn)(t, **kw)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_orthogonal_is_orthogonal_with_gain():
    for shape in [(6, 4), (4, 6), (3, 2, 2)]:
        t = ember.empty(*shape)
        ember.nn.init.orthogonal_(t, gain=2.0)
        m = t.numpy().reshape(shape[0], -1).astype(np.float64)
        small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-5)


def test_init_does_not_record_a_graph_and_keeps_leaf():
    p = ember.nn.Parameter(ember.empty(3, 4))
    ember.nn.init.kaiming_uniform_(p)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_linear_initialises_like_torch():
    bound = 1 / math.sqrt(50)
    ember.manual_seed(0)
    m = ember.nn.Linear(50, 400)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound and abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
