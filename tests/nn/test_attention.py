"""scaled_dot_product_attention, MultiheadAttention and the Transformer layers against torch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nn._parity import copy_state, one_torch_thread  # noqa: F401 - autouse fixture
from oracle import assert_close, check, ember, same_error, torch

rng = np.random.default_rng(2)
pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]


def _randn(*shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _lib_tensor(lib, a):
    return lib.tensor(a.copy())


# ---------------------------------------------------------------- scaled_dot_product_attention
@pytest.mark.parametrize("shape_q,shape_kv", [((2, 3, 4), (2, 5, 4)), ((2, 2, 3, 4), (2, 2, 6, 4)), ((3, 4), (3, 4))])
def test_sdpa_plain_and_scale(shape_q, shape_kv):
    q, k, v = _randn(*shape_q), _randn(*shape_kv), _randn(*shape_kv[:-1], 5)
    check(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v), q, k, v, gradgrad=True)
    check(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.3), q, k, v)


@pytest.mark.parametrize("L,S", [(4, 4), (3, 5), (5, 3)])
def test_sdpa_causal(L, S):
    q, k, v = _randn(2, L, 4), _randn(2, S, 4), _randn(2, S, 4)
    check(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)


def test_sdpa_masks_bool_and_float_with_blocked_rows():
    q, k, v = _randn(2, 3, 4), _randn(2, 5, 4), _randn(2, 5, 4)
    bool_mask = rng.random((3, 5)) > 0.4
    bool_mask[1] = False  # a row that may attend nowhere gives zeros
    float_mask = _randn(2, 3, 5)
    float_mask[0, 2] = -np.inf
    for m in (bool_mask, float_mask, bool_mask[None].repeat(2, 0)):
        check(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=_lib_tensor(lib, m)), q, k, v)


@settings(max_examples=20, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), L=st.integers(1, 4), S=st.integers(1, 4), E=st.integers(1, 4),
       Ev=st.integers(1, 3), mask_kind=st.sampled_from(["none", "bool_row", "float_full", "causal"]))
def test_sdpa_random_shapes_and_masks(batch, L, S, E, Ev, mask_kind):
    q, k, v = _randn(*batch, L, E), _randn(*batch, S, E), _randn(*batch, S, Ev)
    if mask_kind == "bool_row":  # broadcast over the query rows ((1, S): torch refuses a 1-d mask of size 1)
        m = rng.random((1, S)) > 0.5
        kw = lambda lib: {"attn_mask": lib.tensor(m)}  # noqa: E731
    elif mask_kind == "float_full":
        m = _randn(*batch, L, S)
        kw = lambda lib: {"attn_mask": lib.tensor(m)}  # noqa: E731
    elif mask_kind == "causal":
        kw = lambda lib: {"is_causal": True}  # noqa: E731
    else:
        kw = lambda lib: {}  # noqa: E731
    check(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw(lib)), q, k, v)


def test_sdpa_gqa():
    q, k, v = _randn(2, 4, 3, 4), _randn(2, 2, 5, 4), _randn(2, 2, 5, 4)
    check(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True), q, k, v)


def test_sdpa_dropout_keeps_shape_and_expectation():
    q, k, v = (ember.randn(2, 3, 4) for _ in range(3))
    ref = ember.nn.functional.scaled_dot_product_attention(q, k, v)
    outs = np.stack([ember.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.3).numpy()
                     for _ in range(400)])
    assert outs.shape[1:] == tuple(ref.shape)
    assert not np.allclose(outs[0], outs[1])
    np.testing.assert_allclose(outs.mean(0), ref.numpy(), atol=0.15)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), attn_mask=lib.ones(3, 3, dtype=lib.bool),
        is_causal=True),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(lib.zeros(4), lib.zeros(4), lib.zeros(4)),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
])
def test_sdpa_errors(fn):
    same_error(fn)


# ---------------------------------------------------------------- modules
def _parity(make, inputs, call, train=False, rtol=None, atol=None):
    em, tm = make(ember), make(torch)
    copy_state(em, tm)
    em.train(train)
    tm.train(train)
    ex = [ember.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in inputs]
    tx = [torch.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in inputs]
    eo, to = call(ember, em, *ex), call(torch, tm, *tx)
    eo, to = (eo, to) if isinstance(to, tuple) else ((eo,), (to,))
    assert len(eo) == len(to)
    loss_e, loss_t = ember.tensor(0.0), torch.tensor(0.0)
    for i, (e, t) in enumerate(zip(eo, to)):
        assert_close(e, t, rtol, atol, what=f"output {i}")
        if t is not None:
            up = _randn(*t.shape)
            loss_e, loss_t = loss_e + (e * ember.tensor(up)).sum(), loss_t + (t * torch.tensor(up)).sum()
    loss_e.backward()
    loss_t.backward()
    for i, (e, t) in enumerate(zip(ex, tx)):
        if t.requires_grad:
            assert_close(e.grad, t.grad, rtol, atol, what=f"input grad {i}")
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        assert_close(p.grad, q.grad, rtol, atol, what=f"grad of {n}")
    return em, tm


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("masks", ["none", "kpm", "bool_attn", "float_attn", "both"])
def test_mha_parity(batch_first, need_weights, average, masks):
    L, S, N, E = 3, 5, 2, 6
    q = _randn(N, L, E) if batch_first else _randn(L, N, E)
    kv = _randn(N, S, E) if batch_first else _randn(S, N, E)
    kpm = np.zeros((N, S), bool)
    kpm[0, 3:] = True
    bool_attn = rng.random((L, S)) > 0.7
    float_attn = _randn(N * 2, L, S)
    kw = {}
    if masks in ("kpm", "both"):
        kw["key_padding_mask"] = kpm
    if masks in ("bool_attn", "both"):
        kw["attn_mask"] = bool_attn
    if masks == "float_attn":
        kw["attn_mask"] = float_attn

    def call(lib, m, q, kv):
        extra = {k: lib.tensor(v) for k, v in kw.items()}
        return m(q, kv, kv, need_weights=need_weights, average_attn_weights=average, **extra)
    _parity(lambda lib: lib.nn.MultiheadAttention(E, 2, batch_first=batch_first), [q, kv], call)


@pytest.mark.parametrize("kw", [dict(kdim=3, vdim=5), dict(bias=False), dict(add_bias_kv=True),
                                dict(add_zero_attn=True), dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5)])
def test_mha_options(kw):
    L, S, N, E = 4, 3, 2, 6
    q, k, v = _randn(L, N, E), _randn(S, N, kw.get("kdim", E)), _randn(S, N, kw.get("vdim", E))
    kpm = np.zeros((N, S), bool)
    kpm[1, 0] = True
    make = lambda lib: lib.nn.MultiheadAttention(E, 3, **kw)  # noqa: E731
    _parity(make, [q, k, v], lambda lib, m, q, k, v: m(q, k, v, key_padding_mask=lib.tensor(kpm)))
    _parity(make, [q, k, v], lambda lib, m, q, k, v: m(q, k, v, need_weights=False))


def test_mha_unbatched_and_causal_hint():
    E = 4
    q = _randn(3, E)
    _parity(lambda lib: lib.nn.MultiheadAttention(E, 2), [q], lambda lib, m, q: m(q, q, q))
    x = _randn(3, 2, E)
    mask = np.triu(np.full((3, 3), -np.inf, np.float32), 1)
    _parity(lambda lib: lib.nn.MultiheadAttention(E, 2), [x],
            lambda lib, m, x: m(x, x, x, attn_mask=lib.tensor(mask), is_causal=True, need_weights=False))


def test_mha_printed_form_and_init():
    for kw in (dict(), dict(kdim=3, vdim=5, add_bias_kv=True, bias=False)):
        em, tm = ember.nn.MultiheadAttention(4, 2, **kw), torch.nn.MultiheadAttention(4, 2, **kw)
        assert repr(em) == repr(tm)
        assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    m = ember.nn.MultiheadAttention(8, 2)
    assert np.all(m.in_proj_bias.detach().numpy() == 0) and np.all(m.out_proj.bias.detach().numpy() == 0)
    bound = np.sqrt(6 / (8 + 24))
    assert np.abs(m.in_proj_weight.detach().numpy()).max() <= bound


def test_mha_errors():
    same_error(lambda lib: lib.nn.MultiheadAttention(5, 2))
    same_error(lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),
                                                          attn_mask=lib.zeros(2, 2)))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_parity(norm_first, activation, batch_first):
    x = _randn(2, 4, 8) if batch_first else _randn(4, 2, 8)
    kpm = np.zeros((2, 4), bool)
    kpm[1, 2:] = True
    make = lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=activation,  # noqa: E731
                                                      batch_first=batch_first, norm_first=norm_first)
    _parity(make, [x], lambda lib, m, x: m(x), train=True)
    _parity(make, [x], lambda lib, m, x: m(x, src_key_padding_mask=lib.tensor(kpm)), train=True)
    mask = np.triu(np.full((4, 4), -np.inf, np.float32), 1)
    _parity(make, [x], lambda lib, m, x: m(x, src_mask=lib.tensor(mask)), train=True)


def test_encoder_stack_parity_and_printed_form():
    x = _randn(5, 2, 8)
    mask = np.triu(np.full((5, 5), -np.inf, np.float32), 1)

    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8), enable_nested_tensor=False)
    em, tm = _parity(make, [x], lambda lib, m, x: m(x, mask=lib.tensor(mask)), train=True)
    assert repr(em) == repr(tm)
    assert_close(ember.nn.Transformer.generate_square_subsequent_mask(4),
                 torch.nn.Transformer.generate_square_subsequent_mask(4))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_and_transformer_parity(norm_first):
    tgt, mem = _randn(4, 2, 8), _randn(6, 2, 8)
    tmask = np.triu(np.full((4, 4), -np.inf, np.float32), 1)
    mkpm = np.zeros((2, 6), bool)
    mkpm[0, 4:] = True
    make = lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first,  # noqa: E731
                                                      activation="gelu")
    em, tm = _parity(make, [tgt, mem], lambda lib, m, t, s: m(t, s, tgt_mask=lib.tensor(tmask),
                                                              memory_key_padding_mask=lib.tensor(mkpm)), train=True)
    assert repr(em) == repr(tm)
    make_t = lambda lib: lib.nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, norm_first=norm_first)  # noqa: E731
    em, tm = _parity(make_t, [mem, tgt], lambda lib, m, s, t: m(s, t, tgt_mask=lib.tensor(tmask)), train=True)
    assert repr(em) == repr(tm)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("which", ["key_padding_mask", "attn_mask"])
def test_mha_rows_that_attend_nowhere(need_weights, which):
    """torch's explicit path (need_weights) gives NaN there, its fused path zeros: both reproduced."""
    x = _randn(3, 2, 4)
    mask = np.zeros((2, 3) if which == "key_padding_mask" else (3, 3), bool)
    mask[0] = True
    em, tm = ember.nn.MultiheadAttention(4, 2), torch.nn.MultiheadAttention(4, 2)
    copy_state(em, tm)
    eo = em(*(ember.tensor(x),) * 3, need_weights=need_weights, **{which: ember.tensor(mask)})
    to = tm(*(torch.tensor(x),) * 3, need_weights=need_weights, **{which: torch.tensor(mask)})
    assert_close(eo[0], to[0])
    assert_close(eo[1], to[1])


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("pad_right", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
def test_encoder_eval_padded_positions_as_torch_nested_path(grad, pad_right, batch_first):
    x = _randn(2, 5, 8) if batch_first else _randn(5, 2, 8)
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    if not pad_right:
        kpm[0, 0] = True
    outs = []
    for lib in (ember, torch):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first)
        outs.append(lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8)))
    em, tm = outs
    copy_state(em, tm)
    em.eval()
    tm.eval()
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        with lib.set_grad_enabled(grad):
            res.append(m(lib.tensor(x), src_key_padding_mask=lib.tensor(kpm)))
    assert_close(res[0], res[1])


def test_encoder_nested_tensor_warning():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="use_nested_tensor is False because encoder_layer.norm_first was True"):
            lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(4, 2, 8, norm_first=True), 1)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(3, 2, 8), lib.zeros(4, 3, 8)),
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.zeros(3, 2, 6), lib.zeros(4, 2, 6)),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, activation="tanh"),
])
def test_transformer_errors(fn):
    same_error(fn)
