"""nn.utils.rnn (padding, packing) and recurrent layers on PackedSequence, against torch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nn._parity import copy_state, one_torch_thread  # noqa: F401 - autouse fixture
from oracle import assert_close, ember, same_error, torch

rng = np.random.default_rng(1)
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections")


def _seqs(lengths, feat=(3,)):
    return [rng.standard_normal((n, *feat)).astype(np.float32) for n in lengths]


def _leaves(arrays):
    """The same leaves made from ``arrays`` in ember and in torch."""
    return [[lib.tensor(a.copy(), requires_grad=True) for a in arrays] for lib in (ember, torch)]


def _backward_and_compare(eo, to, ein, tin):
    up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    (eo * ember.tensor(up)).sum().backward()
    (to * torch.tensor(up)).sum().backward()
    for i, (e, t) in enumerate(zip(ein, tin)):
        assert_close(e.grad, t.grad, what=f"grad {i}")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("lengths", [[3, 1, 4], [2], [0, 2]])
def test_pad_sequence(batch_first, side, lengths):
    (es, ts) = _leaves(_seqs(lengths, (2,)))
    eo = ember.nn.utils.rnn.pad_sequence(es, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    to = torch.nn.utils.rnn.pad_sequence(ts, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    assert_close(eo, to)
    _backward_and_compare(eo, to, es, ts)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce", [([4, 3, 1], True), ([2, 4, 1, 4], False), ([1], True)])
def test_pack_and_pad_packed_round_trip(batch_first, lengths, enforce):
    T, B = max(lengths), len(lengths)
    x = rng.standard_normal((B, T, 2) if batch_first else (T, B, 2)).astype(np.float32)
    (ex,), (tx,) = _leaves([x])
    ep = ember.nn.utils.rnn.pack_padded_sequence(ex, lengths, batch_first=batch_first, enforce_sorted=enforce)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce)
    assert isinstance(ep, ember.nn.utils.rnn.PackedSequence) and isinstance(ep, tuple)
    assert_close(ep.data, tp.data)
    assert_close(ep.batch_sizes, tp.batch_sizes)
    for a, b in ((ep.sorted_indices, tp.sorted_indices), (ep.unsorted_indices, tp.unsorted_indices)):
        assert_close(a, b)
    for total in (None, T + 2):
        eo, el = ember.nn.utils.rnn.pad_packed_sequence(ep, batch_first=batch_first, padding_value=0.5,
                                                        total_length=total)
        to, tl = torch.nn.utils.rnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=0.5,
                                                        total_length=total)
        assert_close(eo, to)
        assert_close(el, tl)
    _backward_and_compare(eo, to, [ex], [tx])


def test_pack_sequence_and_unpack():
    arrays = _seqs([2, 5, 3])
    (es, ts) = _leaves(arrays)
    ep = ember.nn.utils.rnn.pack_sequence(es, enforce_sorted=False)
    tp = torch.nn.utils.rnn.pack_sequence(ts, enforce_sorted=False)
    assert_close(ep.data, tp.data)
    for e, t in zip(ember.nn.utils.rnn.unpack_sequence(ep), torch.nn.utils.rnn.unpack_sequence(tp)):
        assert_close(e, t)
    padded = ember.nn.utils.rnn.pad_sequence(es)
    for e, a in zip(ember.nn.utils.rnn.unpad_sequence(padded, [2, 5, 3]), arrays):
        np.testing.assert_array_equal(e.detach().numpy(), a)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2)], padding_side="x"),
    lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2), [1, 2]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2), [2, 0], enforce_sorted=False),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2), [3, 2]), total_length=2),
])
def test_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("name,kw", [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(bidirectional=True, batch_first=True)),
    ("RNN", dict(num_layers=2)),
    ("LSTM", dict(proj_size=2, bidirectional=True)),
])
@pytest.mark.parametrize("enforce", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_layers_on_packed_sequences(name, kw, enforce, with_state):
    lengths = [5, 3, 3, 1] if enforce else [3, 5, 1, 3]
    B, T = len(lengths), max(lengths)
    bf = kw.get("batch_first", False)
    x = rng.standard_normal((B, T, 3) if bf else (T, B, 3)).astype(np.float32)
    d = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * d
    states = [rng.standard_normal((n, B, kw.get("proj_size") or 4)).astype(np.float32)]
    if name == "LSTM":
        states.append(rng.standard_normal((n, B, 4)).astype(np.float32))
    em, tm = getattr(ember.nn, name)(3, 4, **kw), getattr(torch.nn, name)(3, 4, **kw)
    copy_state(em, tm)
    results = []
    for lib, m in ((ember, em), (torch, tm)):
        xi = lib.tensor(x, requires_grad=True)
        si = [lib.tensor(s, requires_grad=True) for s in states]
        packed = lib.nn.utils.rnn.pack_padded_sequence(xi, lengths, batch_first=bf, enforce_sorted=enforce)
        hx = (tuple(si) if name == "LSTM" else si[0]) if with_state else None
        out, hn = m(packed, hx)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=bf)
        finals = list(hn) if name == "LSTM" else [hn]
        results.append((xi, si, padded, finals, m))
    (exi, esi, ep, ef, _), (txi, tsi, tp, tf, _) = results
    assert_close(ep, tp, what="output")
    for e, t in zip(ef, tf):
        assert_close(e, t, what="final state")
    ups = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in (tp, *tf)]
    sum((o * ember.tensor(u)).sum() for o, u in zip((ep, *ef), ups)).backward()
    sum((o * torch.tensor(u)).sum() for o, u in zip((tp, *tf), ups)).backward()
    assert_close(exi.grad, txi.grad, what="input grad")
    if with_state:
        for e, t in zip(esi, tsi):
            assert_close(e.grad, t.grad, what="state grad")
    for (nm, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        assert_close(p.grad, q.grad, what=f"grad of {nm}")


@settings(max_examples=15, deadline=None)
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4), name=st.sampled_from(["RNN", "LSTM", "GRU"]),
       bidirectional=st.booleans())
def test_packed_random_lengths_match_torch(lengths, name, bidirectional):
    x = rng.standard_normal((max(lengths), len(lengths), 2)).astype(np.float32)
    em, tm = getattr(ember.nn, name)(2, 3, bidirectional=bidirectional), getattr(torch.nn, name)(
        2, 3, bidirectional=bidirectional)
    copy_state(em, tm)
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        xi = lib.tensor(x, requires_grad=True)
        out, hn = m(lib.nn.utils.rnn.pack_padded_sequence(xi, lengths, enforce_sorted=False))
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(out)
        h = hn[0] if name == "LSTM" else hn
        (padded.sum() + (h * h).sum()).backward()
        res.append((padded, lens, h, xi.grad))
    for e, t in zip(*res):
        assert_close(e, t)
