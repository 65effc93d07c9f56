"""Dropout family (train/eval, edge p, statistics, gradients) and Embedding (padding, max_norm, pretrained)."""
from __future__ import annotations

import warnings as _w

import numpy as np
import pytest

from oracle import check, same_error, ember, torch
from nn._parity import module_parity, reseeding

rng = np.random.default_rng(3)
_reseed = reseeding(rng, 3)


@pytest.mark.parametrize("cls", ["Dropout", "Dropout2d", "AlphaDropout"])
def test_eval_is_identity_and_edges(cls):
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    m = getattr(ember.nn, cls)(0.4).eval()
    xe = ember.tensor(x)
    assert m(xe) is xe
    train = getattr(ember.nn, cls)(0.0)
    assert np.array_equal(train(xe).numpy(), x)
    for lib in (ember, torch):  # p=1 drops everything in both
        out = getattr(lib.nn, cls)(1.0)(lib.tensor(x, requires_grad=True))
        assert not out.detach().numpy().any()
    assert repr(getattr(ember.nn, cls)(0.25, True)) == repr(getattr(torch.nn, cls)(0.25, True))
    same_error(lambda lib: getattr(lib.nn, cls)(1.5))
    fname = {"Dropout": "dropout", "Dropout2d": "dropout2d", "AlphaDropout": "alpha_dropout"}[cls]
    same_error(lambda lib: getattr(lib.nn.functional, fname)(lib.ones(3, 3, 3), -0.1))


def test_dropout_statistics_and_grad():
    ember.manual_seed(0)
    p = 0.3
    x = ember.ones(200, 500, requires_grad=True)
    y = ember.nn.functional.dropout(x, p)
    a = y.detach().numpy()
    kept = a != 0
    assert abs(kept.mean() - (1 - p)) < 0.01
    np.testing.assert_allclose(a[kept], 1 / (1 - p), rtol=1e-6)  # survivors scaled by 1/(1-p)
    assert abs(a.mean() - 1) < 0.02  # expectation preserved
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), a)  # grad = mask / (1-p)


def test_dropout2d_drops_whole_channels():
    ember.manual_seed(1)
    x = ember.ones(64, 32, 3, 3)
    y = ember.nn.Dropout2d(0.5)(x).numpy()
    per_channel = y.reshape(64, 32, -1)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert abs((per_channel[..., 0] == 0).mean() - 0.5) < 0.05


def test_alpha_dropout_keeps_moments():
    ember.manual_seed(2)
    x = ember.randn(400, 500)
    y = ember.nn.AlphaDropout(0.2).train()(x).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    dropped_value = -1.7580993408473766 * (1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)) + \
        1.7580993408473766 * (1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)) * 0.2
    assert abs(np.isclose(y, dropped_value, atol=1e-5).mean() - 0.2) < 0.01


def test_inplace_dropout():
    ember.manual_seed(3)
    x = ember.randn(10, 10, requires_grad=True)
    y = x * 1
    out = ember.nn.Dropout(0.5, inplace=True)(y)
    assert out is y
    y.sum().backward()
    assert set(np.unique(x.grad.numpy())) <= {0.0, 2.0}


def _emb_pair(num, dim, **kw):
    tm = torch.nn.Embedding(num, dim, **kw)
    em = ember.nn.Embedding(num, dim, **kw)
    em.load_state_dict({"weight": ember.tensor(tm.weight.detach().numpy().copy())})
    return em, tm


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -1}])
@pytest.mark.parametrize("idx_shape", [(5,), (3, 4), ()])
def test_embedding_vs_torch(kw, idx_shape):
    idx = rng.integers(0, 6, idx_shape)
    if idx.ndim:
        idx.flat[0] = 2  # padding row used
    em, tm = _emb_pair(6, 3, **kw)
    module_parity(lambda lib: em if lib is ember else tm, idx)
    ye, yt = em(ember.tensor(idx)), tm(torch.tensor(idx))
    up = rng.standard_normal(yt.shape).astype(np.float32)
    ye.backward(ember.tensor(up))
    yt.backward(torch.tensor(up))
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-6)
    assert repr(em) == repr(tm)
    if kw:
        assert not em.weight.grad.numpy()[em.padding_idx].any()
        assert em.padding_idx == tm.padding_idx


@pytest.mark.parametrize("kw", [{"padding_idx": 1}, {"scale_grad_by_freq": True},
                                {"scale_grad_by_freq": True, "padding_idx": 0}])
def test_embedding_second_grad_padding_and_freq_scaling(kw):
    w = rng.standard_normal((5, 3))
    idx = np.array([[0, 1, 1], [4, 2, 1]])
    check(lambda lib, w: lib.nn.functional.embedding(lib.tensor(idx), w, **kw) ** 2, w, gradgrad=True)


def test_embedding_max_norm_renormalises_in_place():
    em, tm = _emb_pair(6, 4, max_norm=1.0)
    with torch.no_grad():
        tm.weight.mul_(3)
    em.load_state_dict({"weight": ember.tensor(tm.weight.detach().numpy().copy())})
    idx = np.array([0, 2, 2, 5])
    v0 = em.weight._version
    ye, yt = em(ember.tensor(idx)), tm(torch.tensor(idx))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-5)
    assert em.weight._version > v0
    assert np.linalg.norm(em.weight.detach().numpy()[[0, 2, 5]], axis=1).max() <= 1.0 + 1e-5
    untouched = [1, 3, 4]
    assert np.linalg.norm(em.weight.detach().numpy()[untouched], axis=1).min() > 1.0


def test_from_pretrained_and_freeze():
    w = rng.standard_normal((4, 3)).astype(np.float32)
    for freeze in (True, False):
        em = ember.nn.Embedding.from_pretrained(ember.tensor(w), freeze=freeze, padding_idx=0)
        tm = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=freeze, padding_idx=0)
        assert em.weight.requires_grad == tm.weight.requires_grad == (not freeze)
        np.testing.assert_array_equal(em.weight.detach().numpy(), w)
        assert repr(em) == repr(tm)
    default = ember.nn.Embedding(5, 2, padding_idx=3)
    assert not default.weight.detach().numpy()[3].any()


def test_embedding_errors_like_torch():
    same_error(lambda lib: lib.nn.functional.embedding(lib.tensor([5]), lib.randn(3, 2)))
    same_error(lambda lib: lib.nn.functional.embedding(lib.tensor([-1]), lib.randn(3, 2)))
    same_error(lambda lib: lib.nn.functional.embedding(lib.tensor([1.0]), lib.randn(3, 2)))
    same_error(lambda lib: lib.nn.Embedding(3, 2, padding_idx=5))


# ---------------------------------------------------------------- channel dropout of every rank, feature alpha dropout
CHANNEL = [("Dropout1d", "dropout1d", (6, 40, 7), 2), ("Dropout1d", "dropout1d", (40, 7), 1),
           ("Dropout2d", "dropout2d", (6, 40, 3, 4), 2), ("Dropout2d", "dropout2d", (6, 40, 7), 2),
           ("Dropout3d", "dropout3d", (6, 40, 2, 3, 2), 2), ("Dropout3d", "dropout3d", (40, 2, 3, 2), 1),
           ("FeatureAlphaDropout", "feature_alpha_dropout", (6, 40, 3, 2), 2),
           ("FeatureAlphaDropout", "feature_alpha_dropout", (5, 40), 2)]


@pytest.mark.parametrize("cls,fname,shape,lead", CHANNEL, ids=[f"{c[0]}-{len(c[2])}d" for c in CHANNEL])
def test_channel_dropout_masks_whole_channels(cls, fname, shape, lead):
    p = float(rng.uniform(0.2, 0.6))
    x = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    for lib in (ember, torch):
        lib.manual_seed(int(rng.integers(1 << 30)))
        xt = lib.tensor(x, requires_grad=True)
        with _w.catch_warnings():
            _w.simplefilter("ignore")
            out = getattr(lib.nn, cls)(p)(xt)
        out.backward(lib.tensor(g))
        y, factor = out.detach().numpy(), xt.grad.numpy() / g
        per_channel = factor.reshape(shape[:lead] + (-1,))  # one mask factor per channel
        np.testing.assert_allclose(per_channel, per_channel[..., :1].repeat(per_channel.shape[-1], -1), rtol=1e-4)
        if cls == "FeatureAlphaDropout":  # kept: a * x + alpha a p; dropped: the constant SELU low value
            alpha = 1.6732632423543772 * 1.0507009873554805
            a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
            kept = np.isclose(factor, a, rtol=1e-4)
            assert (kept | (factor == 0)).all()
            np.testing.assert_allclose(y[kept], a * x[kept] + alpha * a * p, rtol=1e-5)
            np.testing.assert_allclose(y[~kept], -alpha * a + alpha * a * p, rtol=1e-5)
        else:  # kept channels scaled by 1 / (1 - p), dropped all zero; the gradient is the same mask
            kept = factor != 0
            np.testing.assert_allclose(factor[kept], 1 / (1 - p), rtol=1e-4)
            np.testing.assert_allclose(y, x * factor, rtol=1e-5)
        kept = per_channel[..., 0] != 0
        assert (shape[:lead] == (40,) or kept.mean() > 0.1) and kept.mean() < 0.95
    xe = ember.tensor(x)
    for lib in (ember, torch):
        with _w.catch_warnings():
            _w.simplefilter("ignore")
            assert getattr(ember.nn, cls)(p).eval()(xe) is xe
            assert getattr(ember.nn.functional, fname)(xe, 0.0, True) is xe
            assert not getattr(lib.nn, cls)(1.0)(lib.tensor(x)).numpy().any()
    assert repr(getattr(ember.nn, cls)(0.25, True)) == repr(getattr(torch.nn, cls)(0.25, True))
    same_error(lambda lib: getattr(lib.nn.functional, fname)(lib.ones(*shape), 1.5))


def test_channel_dropout_inplace_and_wrong_ranks():
    for lib in (ember, torch):
        x = lib.ones(4, 8, 3)
        assert lib.nn.functional.dropout1d(x, 0.5, True, True) is x
        assert set(np.unique(x.numpy())) <= {0.0, 2.0}
    for fname, shape in [("dropout1d", (2, 3, 4, 5)), ("dropout1d", (3,))]:
        same_error(lambda lib: getattr(lib.nn.functional, fname)(lib.ones(*shape)))
    for fname, shape in [("dropout2d", (2, 3)), ("dropout2d", (2, 3, 4)), ("dropout3d", (2, 3, 4)),
                         ("dropout3d", (2, 3, 4, 5, 6, 2))]:
        msgs = []
        for lib in (ember, torch):
            with _w.catch_warnings(record=True) as rec:
                _w.simplefilter("always")
                getattr(lib.nn.functional, fname)(lib.ones(*shape), 0.5, False)
            msgs.append([str(w.message) for w in rec])
        assert msgs[0] == msgs[1] and msgs[0]
    with _w.catch_warnings():
        _w.simplefilter("error")
        ember.nn.functional.dropout3d(ember.ones(2, 3, 4, 5), 0.5)
