"""Recurrent layers and cells against torch: outputs, final states, input/state grads and every parameter grad."""
from __future__ import annotations

import numpy as np
import pytest

from nn._parity import copy_state, one_torch_thread  # noqa: F401 - autouse fixture
from oracle import assert_close, ember, same_error, torch

rng = np.random.default_rng(0)
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections")


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    if hasattr(out, "batch_sizes"):  # PackedSequence
        return [out.data]
    return [out]


def _parity(make, x: np.ndarray, states=(), call=None, rtol=None, atol=None):
    """Same module state in both libraries; compare every output, input/state grad and parameter grad."""
    em, tm = make(ember), make(torch)
    copy_state(em, tm)
    ex = [ember.tensor(a.copy(), requires_grad=True) for a in (x, *states)]
    tx = [torch.tensor(a.copy(), requires_grad=True) for a in (x, *states)]
    call = call or (lambda lib, m, x, *s: m(x, *s))
    eo, to = _flat(call(ember, em, *ex)), _flat(call(torch, tm, *tx))
    assert len(eo) == len(to)
    for i, (e, t) in enumerate(zip(eo, to)):
        assert_close(e, t, rtol, atol, what=f"output {i}")
    ups = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in to]
    sum(((e * ember.tensor(u)).sum() for e, u in zip(eo, ups)), ember.tensor(0.0)).backward()
    sum(((t * torch.tensor(u)).sum() for t, u in zip(to, ups)), torch.tensor(0.0)).backward()
    for i, (e, t) in enumerate(zip(ex, tx)):
        assert_close(e.grad, t.grad, rtol, atol, what=f"input grad {i}")
    names = [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in em.named_parameters()] == names
    for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        assert_close(p.grad, q.grad, rtol, atol, what=f"grad of {n}")
    return em, tm


def _randn(*shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=2, bidirectional=True, batch_first=True),
    dict(bias=False, batch_first=True),
]


@pytest.mark.parametrize("kind", ["RNN", "RNN_relu", "LSTM", "GRU"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_layer_parity(kind, cfg):
    name, extra = (kind.split("_") + [None])[:2]
    kw = dict(cfg, **({"nonlinearity": extra} if extra else {}))
    d = 2 if cfg.get("bidirectional") else 1
    layers = cfg.get("num_layers", 1)
    x = _randn(2, 5, 3) if cfg.get("batch_first") else _randn(5, 2, 3)
    make = lambda lib: getattr(lib.nn, name)(3, 4, **kw)  # noqa: E731
    _parity(make, x)  # zero initial state
    h0 = _randn(layers * d, 2, 4)
    states = (h0, _randn(layers * d, 2, 4)) if name == "LSTM" else (h0,)
    if name == "LSTM":
        _parity(make, x, states, call=lambda lib, m, x, h, c: m(x, (h, c)))
    else:
        _parity(make, x, states)


@pytest.mark.parametrize("cfg", [dict(), dict(num_layers=2, bidirectional=True, batch_first=True)])
def test_lstm_proj_size(cfg):
    d = 2 if cfg.get("bidirectional") else 1
    n = cfg.get("num_layers", 1) * d
    x = _randn(3, 4, 3)
    make = lambda lib: lib.nn.LSTM(3, 5, proj_size=2, **cfg)  # noqa: E731
    _parity(make, x)
    _parity(make, x, (_randn(n, 3 if cfg.get("batch_first") else 4, 2), _randn(n, 3 if cfg.get("batch_first") else 4,
                                                                                5)),
            call=lambda lib, m, x, h, c: m(x, (h, c)))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(name):
    make = lambda lib: getattr(lib.nn, name)(3, 4, num_layers=2, bidirectional=True)  # noqa: E731
    _parity(make, _randn(5, 3))
    h = (_randn(4, 4), _randn(4, 4)) if name == "LSTM" else (_randn(4, 4),)
    _parity(make, _randn(5, 3), h, call=(lambda lib, m, x, *s: m(x, tuple(s) if name == "LSTM" else s[0])))


def test_state_dict_round_trip_and_double():
    tm = torch.nn.GRU(3, 4, num_layers=2, bidirectional=True).double()
    em = ember.nn.GRU(3, 4, num_layers=2, bidirectional=True).double()
    sd = em.state_dict()
    assert list(sd) == list(tm.state_dict())
    tm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in sd.items()})
    x = rng.standard_normal((4, 2, 3))
    eo, eh = em(ember.tensor(x))
    to, th = tm(torch.tensor(x))
    assert_close(eo, to)
    assert_close(eh, th)


def test_dropout_between_layers_only_in_training():
    m = ember.nn.LSTM(3, 4, num_layers=3, dropout=0.5)
    x = ember.randn(5, 2, 3)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    ember.manual_seed(0)
    c = m(x)[0]
    ember.manual_seed(1)
    d = m(x)[0]
    assert not np.allclose(c.detach().numpy(), d.detach().numpy())
    tm = torch.nn.LSTM(3, 4, num_layers=3, dropout=0.5)  # p=1 zeroes the input of the upper layers
    em = ember.nn.LSTM(3, 4, num_layers=3, dropout=1.0)
    tm.dropout = 1.0
    copy_state(em, tm)
    assert_close(em(x)[0], tm(torch.tensor(x.numpy()))[0])


@pytest.mark.parametrize("name", ["RNNCell", "RNNCell_relu", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cell_parity(name, bias):
    name, extra = (name.split("_") + [None])[:2]
    kw = {"bias": bias, **({"nonlinearity": extra} if extra else {})}
    make = lambda lib: getattr(lib.nn, name)(3, 4, **kw)  # noqa: E731
    _parity(make, _randn(5, 3))
    _parity(make, _randn(3))  # unbatched
    if name == "LSTMCell":
        _parity(make, _randn(5, 3), (_randn(5, 4), _randn(5, 4)), call=lambda lib, m, x, h, c: m(x, (h, c)))
    else:
        _parity(make, _randn(5, 3), (_randn(5, 4),))


def test_cell_second_order_grad():
    """Everything is built from differentiable ops: double backward matches torch."""
    x = _randn(2, 3)
    tm = torch.nn.GRUCell(3, 4)
    em = ember.nn.GRUCell(3, 4)
    copy_state(em, tm)
    outs = []
    for lib, m in ((ember, em), (torch, tm)):
        xi = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad((m(xi) ** 2).sum(), xi, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), xi)
        outs.append((g, gg))
    assert_close(outs[0][0], outs[1][0])
    assert_close(outs[0][1], outs[1][1])


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_printed_form_and_param_shapes(name):
    for kw in (dict(), dict(bias=False)) if "Cell" in name else (
            dict(), dict(num_layers=3, bias=False, batch_first=True, dropout=0.25, bidirectional=True)):
        em, tm = getattr(ember.nn, name)(3, 7, **kw), getattr(torch.nn, name)(3, 7, **kw)
        assert repr(em) == repr(tm)
        assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert repr(ember.nn.RNNCell(3, 4, nonlinearity="relu")) == repr(torch.nn.RNNCell(3, 4, nonlinearity="relu"))
    assert repr(ember.nn.LSTM(3, 4, proj_size=2)) == repr(torch.nn.LSTM(3, 4, proj_size=2))


def test_default_init_is_uniform_in_bound():
    m = ember.nn.LSTM(3, 16, num_layers=2)
    for p in m.parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= 0.25 and a.std() > 0.1


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.LSTM(3, 5)(lib.zeros(1, 2, 3, 3)),
    lambda lib: lib.nn.LSTM(3, 5)(lib.zeros(2, 3, 4)),
    lambda lib: lib.nn.GRU(3, 5)(lib.zeros(2, 3, 3), lib.zeros(2, 3, 5)),
    lambda lib: lib.nn.LSTM(3, 5)(lib.zeros(2, 3, 3), (lib.zeros(1, 3, 5), lib.zeros(2, 3, 5))),
    lambda lib: lib.nn.GRU(3, 5)(lib.zeros(2, 3), lib.zeros(1, 3, 5)),
    lambda lib: lib.nn.GRU(3, 5)(lib.zeros(2, 1, 3), lib.zeros(1, 5)),
    lambda lib: lib.nn.LSTM(3, 5)(lib.zeros(2, 1, 3), (lib.zeros(1, 5), lib.zeros(1, 5))),
    lambda lib: lib.nn.GRUCell(3, 5)(lib.zeros(2, 4)),
    lambda lib: lib.nn.GRUCell(3, 5)(lib.zeros(2, 3, 3)),
    lambda lib: lib.nn.GRUCell(3, 5)(lib.zeros(2, 3), lib.zeros(3, 5)),
    lambda lib: lib.nn.GRU(3, 5, proj_size=2),
    lambda lib: lib.nn.RNN(3, 5, nonlinearity="sigmoid"),
    lambda lib: lib.nn.LSTM(3, 5, proj_size=5),
    lambda lib: lib.nn.LSTM(3, 5, dropout=2),
    lambda lib: lib.nn.LSTM(3, 0),
    lambda lib: lib.nn.LSTM(3, 5, 0),
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(2, 3, 3, dtype=lib.float64)),
    lambda lib: lib.nn.GRU(3, 4)(lib.zeros(0, 3, 3)),
    lambda lib: lib.nn.GRU(3, 4)(lib.zeros(2, 3, 3), lib.zeros(1, 3, 4, dtype=lib.float64)),
    lambda lib: lib.nn.GRUCell(3, 4)(lib.zeros(2, 3, dtype=lib.float64)),
])
def test_errors(fn):
    same_error(fn)


def test_empty_batch():
    eo, (eh, ec) = ember.nn.LSTM(3, 4, bidirectional=True)(ember.zeros(2, 0, 3))
    to, (th, tc) = torch.nn.LSTM(3, 4, bidirectional=True)(torch.zeros(2, 0, 3))
    assert tuple(eo.shape) == tuple(to.shape) and tuple(eh.shape) == tuple(th.shape) == tuple(ec.shape)


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_layer_second_order_grad(name):
    x = _randn(3, 2, 2)
    em, tm = getattr(ember.nn, name)(2, 3, bidirectional=True), getattr(torch.nn, name)(2, 3, bidirectional=True)
    copy_state(em, tm)
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        xi = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad((m(xi)[0] ** 2).sum(), xi, create_graph=True)
        (gg,) = lib.autograd.grad((g ** 2).sum(), xi)
        res.append((g, gg))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def test_dropout_warning_with_one_layer():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
            lib.nn.GRU(3, 4, dropout=0.5)
