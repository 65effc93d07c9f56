"""Layers and nn functions on the stand-in ``cuda`` device with the default device left on the CPU, as a user
moves a model: ``model.to("cuda")`` and inputs made on cuda. Every tensor the library makes on its own (initial
RNN states, padding rows, zero attention slots, masks, bookkeeping indices) must land on the inputs' device, so
outputs and gradients equal the CPU run's (the stand-in computes with NumPy; to the last bits but where a host-only
fused kernel, such as the LSTM's, sums in another order) and live on cuda.

(op_db's stand-in run, tests/cuda/test_stand_in_ops.py, sets the default device to cuda for the tensors its samples
make, which would hide a factory call that forgets ``device=``.)"""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.utils import rnn as R


def _packed_lstm(dev, x):
    lstm = _seeded(lambda: nn.LSTM(4, 6, batch_first=True), dev)
    packed = R.pack_padded_sequence(x, ember.tensor([5, 3, 2]), batch_first=True, enforce_sorted=False)
    out, (h, c) = lstm(packed)
    padded, lengths = R.pad_packed_sequence(out, batch_first=True)
    assert str(lengths.device) == "cpu"  # torch's lengths, like batch_sizes, stay on the CPU
    return [padded, h, c], list(lstm.parameters())


def _seeded(make, dev):
    ember.manual_seed(0)
    return make().to(dev)


def _module(make, *shapes):
    """A case: the module made from one seed, moved to the device, called on inputs of ``shapes``."""
    def case(dev, *xs):
        m = _seeded(make, dev)
        return _flat(m(*xs)), list(m.parameters())
    return case, shapes


def _flat(out) -> list:
    return [t for o in out for t in _flat(o)] if isinstance(out, tuple) else [out]


def _mha(dev, q):
    m = _seeded(lambda: nn.MultiheadAttention(8, 2, add_zero_attn=True, batch_first=True), dev)
    out, weights = m(q, q, q, key_padding_mask=ember.tensor([[False] * 5, [False] * 3 + [True] * 2], device=dev))
    return [out, weights], list(m.parameters())


def _encoder_padding(dev, x):
    enc = _seeded(lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                                                2, enable_nested_tensor=True).eval(), dev)
    with ember.no_grad():
        out = enc(x.detach(), src_key_padding_mask=ember.tensor([[False] * 5, [False] * 3 + [True] * 2], device=dev))
    return [out], []


def _embedding_bag(dev, _x):
    m = _seeded(lambda: nn.EmbeddingBag(10, 3, mode="mean"), dev)
    out = m(ember.tensor([1, 2, 4, 5, 4, 3, 2, 9], device=dev), ember.tensor([0, 4], device=dev))
    return [out], list(m.parameters())


def _multilabel_margin(dev, x):
    target = ember.tensor([[3, 0, -1, 1], [1, 2, 3, -1]], device=dev)
    return [F.multilabel_margin_loss(x.reshape(2, -1)[:, :4], target)], []


def _pad_sequence(dev, x):
    return [R.pad_sequence([x[0, :5], x[1, :3]], batch_first=True, padding_value=-1.0)], []


def _invert_permutation(dev, _x):
    return [R.invert_permutation(ember.tensor([2, 0, 1], device=dev))], []


def _conv2d_weight_grad(dev, x):
    w = ember.tensor(np.linspace(-1, 1, 2 * 3 * 3 * 3, dtype=np.float32).reshape(2, 3, 3, 3), device=dev)
    go = F.conv2d(x, w, padding=1)
    return [nn.grad.conv2d_weight(x, (2, 3, 3, 3), go.detach(), padding=1),
            nn.grad.conv2d_input(tuple(x.shape), w, go.detach(), padding=1)], []


def _orthogonal(dev, x):
    lin = _seeded(lambda: nn.Linear(4, 4), dev)
    nn.utils.parametrizations.orthogonal(lin)
    return [lin(x)], list(lin.parameters())


def _ln_structured(dev, x):
    lin = _seeded(lambda: nn.Linear(4, 3), dev)
    nn.utils.prune.ln_structured(lin, "weight", amount=1, n=2, dim=0)
    return [lin(x), lin.weight_mask], list(lin.parameters())


CASES = {
    "LSTM, no initial state": _module(lambda: nn.LSTM(4, 6, num_layers=2), (5, 3, 4)),
    "GRU batch_first, no initial state": _module(lambda: nn.GRU(4, 6, batch_first=True), (3, 5, 4)),
    "RNN bidirectional, no initial state": _module(lambda: nn.RNN(4, 6, bidirectional=True), (5, 3, 4)),
    "LSTMCell, no initial state": _module(lambda: nn.LSTMCell(4, 6), (3, 4)),
    "GRUCell, no initial state": _module(lambda: nn.GRUCell(4, 6), (3, 4)),
    "packed LSTM (enforce_sorted=False)": (_packed_lstm, ((3, 5, 4),)),
    "MultiheadAttention add_zero_attn + key padding": (_mha, ((2, 5, 8),)),
    "TransformerEncoder nested padding (eval)": (_encoder_padding, ((2, 5, 8),)),
    "EmbeddingBag mean": (_embedding_bag, ((1,),)),
    "multilabel_margin_loss": (_multilabel_margin, ((2, 6),)),
    "pad_sequence": (_pad_sequence, ((2, 5, 3),)),
    "invert_permutation": (_invert_permutation, ((1,),)),
    "one_hot": (lambda dev, _x: ([F.one_hot(ember.tensor([0, 2, 1], device=dev), 4)], []), ((1,),)),
    "multinomial": (lambda dev, _x: ([ember.multinomial(ember.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                                                                      device=dev), 1)], []), ((1,),)),
    "legacy Tensor.new": (lambda dev, x: ([x.new(2, 3).zero_(), x.new([1.0, 2.0])], []), ((1,),)),
    "nn.grad.conv2d_weight / conv2d_input": (_conv2d_weight_grad, ((1, 3, 5, 5),)),
    "orthogonal parametrization": (_orthogonal, ((3, 4),)),
    "ln_structured pruning": (_ln_structured, ((3, 4),)),
    "BatchNorm1d (num_batches_tracked)": _module(lambda: nn.BatchNorm1d(4), (5, 4)),
}


def test_random_buffers_are_made_on_the_weight_device(stand_in) -> None:
    """spectral_norm's u and v (random draws: the device's generator, so only their place is compared)."""
    for make in (lambda m: nn.utils.spectral_norm(m), lambda m: nn.utils.parametrizations.spectral_norm(m)):
        m = make(nn.Linear(4, 3).to("cuda"))
        out = m(ember.randn(2, 4, device="cuda"))
        assert str(out.device) == "cuda:0"
        assert {str(b.device) for b in m.buffers()} == {"cuda:0"}
    bn = nn.BatchNorm1d(4, device="cuda")
    assert str(bn.num_batches_tracked.device) == "cuda:0"


def _run(case, shapes, dev):
    rng = np.random.default_rng(0)
    xs = [ember.tensor(rng.standard_normal(s).astype(np.float32), device=dev).requires_grad_() for s in shapes]
    outs, params = case(dev, *xs)
    floats = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    wrt = [t for t in xs + params if t.requires_grad]
    grads = []
    if floats:
        grads = ember.autograd.grad(sum((o * (k + 1)).sum() for k, o in enumerate(floats)), wrt, allow_unused=True)
    return outs, grads


@pytest.mark.parametrize("name", list(CASES))
def test_layers_make_their_tensors_on_the_input_device(stand_in, name) -> None:
    assert str(ember.get_default_device()) == "cpu"
    case, shapes = CASES[name]
    host_outs, host_grads = _run(case, shapes, "cpu")
    dev_outs, dev_grads = _run(case, shapes, "cuda")
    assert len(dev_outs) == len(host_outs) and len(dev_grads) == len(host_grads)
    for k, (d, h) in enumerate(zip(dev_outs, host_outs)):
        assert str(d.device) == "cuda:0", f"output {k} on {d.device}"
        np.testing.assert_allclose(d.cpu().detach().numpy(), h.detach().numpy(), rtol=1e-6, atol=1e-6,
                                   err_msg=f"output {k}")
    for k, (d, h) in enumerate(zip(dev_grads, host_grads)):
        assert (d is None) == (h is None), f"grad {k}"
        if d is not None:
            assert str(d.device) == "cuda:0", f"grad {k} on {d.device}"
            np.testing.assert_allclose(d.cpu().numpy(), h.numpy(), rtol=1e-6, atol=1e-6, err_msg=f"grad {k}")


def test_legacy_new_refuses_another_device_type() -> None:
    import torch

    msgs = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as e:
            lib.zeros(2).new(3, device="meta")
        msgs.append(str(e.value))
        assert tuple(lib.zeros(2).new(3, device="cpu").shape) == (3,)
    assert msgs[0] == msgs[1]
