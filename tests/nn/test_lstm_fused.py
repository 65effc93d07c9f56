"""nn.LSTM's layers as one fused node each (NOTE [fused LSTM layer] in ember/ops/rnn.py): torch's values, gradients
(every input: sequence, initial state, weights) and second gradients; the fused node equals the per-step composition
it replaces; torch's node names; the composition stays for projections, packed input and transform levels."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import check, ember, torch

from ember.nn.modules import rnn as ember_rnn

CONFIGS = [(1, False, True), (2, False, True), (2, True, False), (1, True, True)]  # layers, bidirectional, batch_first


def _arrays(layers, bidir, batch_first=True, seed=0):
    r = np.random.default_rng(seed)
    m = torch.nn.LSTM(4, 5, num_layers=layers, bidirectional=bidir)
    names = [n for n, _ in m.named_parameters()]
    ws = [p.detach().numpy().astype(np.float64) + 0.1 * r.standard_normal(p.shape) for p in m.parameters()]
    d = layers * (2 if bidir else 1)
    x = r.standard_normal((3, 6, 4) if batch_first else (6, 3, 4))  # batch 3, 6 steps
    return names, [x, r.standard_normal((d, 3, 5)), r.standard_normal((d, 3, 5)), *ws]


def _fn(layers, bidir, batch_first, names):
    def fn(lib, x, h0, c0, *ws):
        m = lib.nn.LSTM(4, 5, num_layers=layers, bidirectional=bidir, batch_first=batch_first, dtype=lib.float64)
        out, (h, c) = lib.func.functional_call(m, dict(zip(names, ws)), (x, (h0, c0)))
        return out, h, c
    return fn


@pytest.mark.parametrize("layers,bidir,batch_first", CONFIGS)
def test_values_grads_and_second_grads_match_torch(layers, bidir, batch_first):
    names, arrays = _arrays(layers, bidir, batch_first)
    check(_fn(layers, bidir, batch_first, names), *arrays, gradgrad=True)


@pytest.mark.parametrize("layers,bidir,batch_first", CONFIGS)
def test_fused_layers_equal_the_step_composition(layers, bidir, batch_first, monkeypatch):
    names, arrays = _arrays(layers, bidir, batch_first, seed=1)
    fn = _fn(layers, bidir, batch_first, names)

    def run():
        ts = [ember.tensor(a, requires_grad=True) for a in arrays]
        outs = fn(ember, *ts)
        r = np.random.default_rng(2)
        ups = [ember.tensor(r.standard_normal(o.shape)) for o in outs]
        grads = ember.autograd.grad(outs, ts, ups)
        return [o.detach().numpy() for o in outs] + [g.numpy() for g in grads]

    fused = run()
    real_apply = ember_rnn._R.LstmLayer.apply
    calls = []
    monkeypatch.setattr(ember_rnn._R.LstmLayer, "apply", lambda *a: calls.append(1) or real_apply(*a))
    assert run() and calls  # (the fused path ran)
    monkeypatch.setattr(ember_rnn, "_fused_ok", lambda: False)  # the composition's condition (a transform level)
    composite = run()
    for a, b in zip(fused, composite):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


def test_torch_node_names():
    names = []
    for lib in (ember, torch):
        m = lib.nn.LSTM(4, 5, num_layers=2, batch_first=True)
        out, (h, c) = m(lib.randn(3, 6, 4, requires_grad=True))
        g = out.grad_fn
        names.append((type(g).__name__, type(g.next_functions[0][0]).__name__, type(h.grad_fn).__name__,
                      type(c.grad_fn).__name__))
    assert names[0] == names[1] == ("TransposeBackward0", "MkldnnRnnLayerBackward0", "StackBackward0",
                                    "StackBackward0")


def test_float32_training_step_matches_torch():
    r = np.random.default_rng(3)
    x = r.standard_normal((4, 7, 6)).astype(np.float32)
    torch.manual_seed(0)
    models = {"torch": torch.nn.LSTM(6, 8, num_layers=2, batch_first=True),
              "ember": ember.nn.LSTM(6, 8, num_layers=2, batch_first=True)}
    with ember.no_grad():
        for p, q in zip(models["ember"].parameters(), models["torch"].parameters()):
            p.copy_(ember.tensor(q.detach().numpy()))
    grads = []
    for lib in (torch, ember):
        m = models[lib.__name__]
        out, _ = m(lib.tensor(x))
        (out * out).sum().backward()
        grads.append([p.grad.numpy().copy() for p in m.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["projection", "packed"])
def test_composition_remains_where_the_layer_does_not_apply(kind, monkeypatch):
    calls = []
    real_apply = ember_rnn._R.LstmLayer.apply
    monkeypatch.setattr(ember_rnn._R.LstmLayer, "apply", lambda *a: calls.append(1) or real_apply(*a))
    if kind == "projection":
        m = ember.nn.LSTM(4, 5, proj_size=3)
        m(ember.randn(6, 2, 4))
    else:
        m = ember.nn.LSTM(4, 5)
        packed = ember.nn.utils.rnn.pack_padded_sequence(ember.randn(6, 2, 4), [6, 4])
        m(packed)
    assert not calls
