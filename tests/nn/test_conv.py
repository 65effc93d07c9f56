"""Conv1d/2d/3d, ConvTranspose1d/2d/3d, Fold/Unfold against torch.nn: outputs, input/parameter grads and second
grads with torch's weights, init statistics, printed form and error messages."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import torch, ember, to_np, assert_close, same_error, check

CONV_CONFIGS = [
    ("Conv2d", (3, 4, 3), {}, (2, 3, 8, 7)),
    ("Conv2d", (4, 6, (3, 2)), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), (2, 4, 9, 8)),
    ("Conv2d", (2, 3, 3), dict(padding="same", bias=False), (1, 2, 5, 6)),
    ("Conv2d", (2, 3, 4), dict(padding="same", dilation=1), (1, 2, 6, 5)),
    ("Conv2d", (2, 3, 3), dict(padding="valid", stride=3), (2, 2, 10, 8)),
    ("Conv2d", (3, 3, 3), dict(padding=1, groups=3), (2, 3, 5, 5)),
    ("Conv2d", (2, 4, 3), dict(padding=(1, 2), padding_mode="reflect"), (2, 2, 6, 7)),
    ("Conv2d", (2, 4, 3), dict(padding=2, padding_mode="replicate", stride=2), (2, 2, 6, 7)),
    ("Conv2d", (2, 4, 3), dict(padding=1, padding_mode="circular"), (2, 2, 6, 7)),
    ("Conv2d", (2, 4, 3), dict(padding="same", padding_mode="reflect"), (2, 2, 6, 7)),
    ("Conv2d", (3, 4, 3), dict(padding=1), (3, 6, 5)),  # unbatched
    ("Conv1d", (3, 5, 3), {}, (2, 3, 10)),
    ("Conv1d", (4, 4, 2), dict(stride=2, padding=1, dilation=3, groups=4), (2, 4, 11)),
    ("Conv1d", (3, 2, 4), dict(padding="same", padding_mode="circular"), (2, 3, 9)),
    ("Conv1d", (3, 2, 3), dict(padding=2, padding_mode="reflect"), (3, 7)),  # unbatched
    ("ConvTranspose2d", (3, 4, 3), {}, (2, 3, 4, 5)),
    ("ConvTranspose2d", (4, 6, (3, 2)), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2,
                                             dilation=(1, 2)), (2, 4, 3, 4)),
    ("ConvTranspose2d", (2, 2, 2), dict(stride=2, bias=False), (2, 3, 3)),  # unbatched
    ("ConvTranspose1d", (3, 2, 3), dict(stride=2, padding=1, output_padding=1), (2, 3, 5)),
    ("ConvTranspose1d", (4, 2, 2), dict(groups=2, dilation=2, stride=3), (2, 4, 4)),
    ("Conv3d", (2, 3, 3), {}, (2, 2, 5, 4, 6)),
    ("Conv3d", (4, 6, (3, 2, 2)), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2),
     (2, 4, 6, 5, 5)),
    ("Conv3d", (2, 3, (2, 3, 2)), dict(padding="same", bias=False), (1, 2, 4, 5, 3)),
    ("Conv3d", (2, 2, 3), dict(padding=1, padding_mode="reflect"), (1, 2, 4, 4, 3)),
    ("Conv3d", (2, 2, 2), dict(padding=(1, 0, 1), padding_mode="replicate", stride=2), (1, 2, 4, 3, 5)),
    ("Conv3d", (2, 2, 2), dict(padding=1, padding_mode="circular"), (2, 3, 4, 3)),  # unbatched
    ("ConvTranspose3d", (3, 2, 3), {}, (2, 3, 3, 2, 4)),
    ("ConvTranspose3d", (4, 6, (2, 3, 2)), dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2),
                                                groups=2, dilation=(1, 2, 1)), (2, 4, 3, 3, 2)),
    ("ConvTranspose3d", (2, 2, 2), dict(stride=2, bias=False), (2, 2, 3, 2)),  # unbatched
]


def _pair(name, args, kwargs):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    em = getattr(ember.nn, name)(*args, **kwargs)
    em.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return em, tm


def _run_module(em, tm, x, gradgrad=True, atol=1e-5, call=lambda m, x: m(x)):
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ey, ty = call(em, ex), call(tm, tx)
    assert_close(ey, ty, atol=atol, what="output")
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    up = np.random.default_rng(1).standard_normal(ty.shape).astype(x.dtype)
    eps, tps = [ex, *em.parameters()], [tx, *tm.parameters()]
    eg = ember.autograd.grad(ey, eps, ember.tensor(up), create_graph=gradgrad)
    tg = torch.autograd.grad(ty, tps, torch.tensor(up), create_graph=gradgrad)
    for i, (a, b) in enumerate(zip(eg, tg)):
        assert_close(a, b, atol=atol, what=f"grad {i}")
    if not gradgrad:
        return
    es = sum(((g * g).sum() for g in eg), ember.tensor(0.0))
    ts = sum(((g * g).sum() for g in tg), torch.tensor(0.0))
    egg = ember.autograd.grad(es, eps, allow_unused=True)
    tgg = torch.autograd.grad(ts, tps, allow_unused=True)
    for i, (a, b) in enumerate(zip(egg, tgg)):
        if b is None:
            assert a is None or not np.any(to_np(a)), f"gradgrad {i}"
            continue
        assert_close(a, b, atol=1e-4, rtol=1e-4, what=f"gradgrad {i}")


@pytest.mark.parametrize("name,args,kwargs,shape", CONV_CONFIGS, ids=lambda v: str(v))
def test_conv_module_matches_torch(name, args, kwargs, shape):
    em, tm = _pair(name, args, kwargs)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    _run_module(em, tm, x)
    assert repr(em) == repr(tm)


def test_conv_transpose_output_size_argument():
    em, tm = _pair("ConvTranspose2d", (2, 3, 3), dict(stride=2, padding=1))
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    _run_module(em, tm, x, call=lambda m, x: m(x, output_size=[8, 8]))


def test_conv_float64_and_default_dtype():
    em, tm = _pair("Conv2d", (2, 3, 3), dict(padding=1, dtype=torch.float64))
    assert em.weight.dtype == ember.float64
    _run_module(em, tm, np.random.default_rng(0).standard_normal((2, 2, 5, 5)))


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_conv2d_random_geometry(data):
    """Random kernel/stride/padding/dilation/groups: values and first grads of input, weight and bias."""
    g = data.draw(st.sampled_from([1, 2]))
    cin, cout = g * data.draw(st.integers(1, 2)), g * data.draw(st.integers(1, 2))
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    s = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    d = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    p = (data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
    hw = [data.draw(st.integers(d[i] * (k[i] - 1) + 1 - 2 * p[i] if d[i] * (k[i] - 1) + 1 > 2 * p[i] else 1, 8))
          for i in range(2)]
    em, tm = _pair("Conv2d", (cin, cout, k), dict(stride=s, padding=p, dilation=d, groups=g))
    x = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal((2, cin, *hw)).astype(np.float32)
    _run_module(em, tm, x, gradgrad=False)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_conv3d_random_geometry(data):
    """Random kernel/stride/padding/dilation/groups in 3-d: values, first and second grads of input, weight and
    bias (through the same im2col/GEMM kernels as 1-d and 2-d)."""
    g = data.draw(st.sampled_from([1, 2]))
    cin, cout = g * data.draw(st.integers(1, 2)), g * data.draw(st.integers(1, 2))
    k = tuple(data.draw(st.integers(1, 3)) for _ in range(3))
    s = tuple(data.draw(st.integers(1, 2)) for _ in range(3))
    d = tuple(data.draw(st.integers(1, 2)) for _ in range(3))
    p = tuple(data.draw(st.integers(0, 1)) for _ in range(3))
    size = [data.draw(st.integers(max(1, d[i] * (k[i] - 1) + 1 - 2 * p[i]), 5)) for i in range(3)]
    em, tm = _pair("Conv3d", (cin, cout, k), dict(stride=s, padding=p, dilation=d, groups=g))
    x = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal((2, cin, *size)).astype(np.float32)
    _run_module(em, tm, x, gradgrad=True)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_conv_transpose_output_padding_up_to_the_dilation(data):
    """output_padding may reach max(stride, dilation) - 1, so it can exceed the stride: the input gradient
    (a convolution of the output gradient, longer by output_padding // stride) is cut to the input's size.
    Values, first and second grads of input and weight, 1-d, 2-d and 3-d, groups."""
    nd = data.draw(st.sampled_from([1, 2, 3]))
    g = data.draw(st.sampled_from([1, 2]))
    cin, cout = 2 * g, g * data.draw(st.integers(1, 2))
    k = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    s = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    d = tuple(data.draw(st.integers(2, 3)) for _ in range(nd))
    p = tuple(data.draw(st.integers(0, min(1, d[i] * (k[i] - 1) // 2))) for i in range(nd))  # output >= input
    op = tuple(data.draw(st.integers(0, max(s[i], d[i]) - 1)) for i in range(nd))
    size = tuple(data.draw(st.integers(2, 5 if nd < 3 else 3)) for _ in range(nd))
    r = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = r.standard_normal((2, cin, *size)).astype(np.float32)
    w = r.standard_normal((cin, cout // g, *k)).astype(np.float32)
    name = f"conv_transpose{nd}d"
    check(lambda lib, a, b: getattr(lib.nn.functional, name)(a, b, None, s, p, op, g, d), x, w, gradgrad=True)


def test_conv_init_statistics():
    """Default init: weight and bias uniform within torch's bounds (kaiming_uniform a=sqrt(5), 1/sqrt(fan_in))."""
    ember.manual_seed(0)
    m = ember.nn.Conv2d(8, 16, 3)
    bound = 1 / np.sqrt(8 * 9)
    w, b = to_np(m.weight), to_np(m.bias)
    assert w.shape == (16, 8, 3, 3) and b.shape == (16,)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(b).max() <= bound
    t = ember.nn.ConvTranspose2d(4, 6, 2, groups=2)
    assert tuple(t.weight.shape) == tuple(torch.nn.ConvTranspose2d(4, 6, 2, groups=2).weight.shape)
    assert m.weight.requires_grad and type(m.weight).__name__ == "Parameter"


def test_conv_printed_forms():
    for name, args, kwargs in [("Conv2d", (3, 8, (3, 5)), dict(stride=2, padding=1, dilation=2, bias=False,
                                                                padding_mode="reflect")),
                               ("Conv1d", (4, 4, 3), dict(groups=2, padding="same")),
                               ("ConvTranspose2d", (3, 4, 3), dict(stride=2, output_padding=1)),
                               ("ConvTranspose1d", (2, 2, 3), {}),
                               ("Conv3d", (2, 4, (1, 2, 3)), dict(stride=(1, 2, 1), padding="valid", groups=2)),
                               ("ConvTranspose3d", (4, 2, 3), dict(output_padding=(0, 1, 0), stride=2, dilation=2))]:
        assert repr(getattr(ember.nn, name)(*args, **kwargs)) == repr(getattr(torch.nn, name)(*args, **kwargs))


def _f(lib):
    return lib.nn.functional


ERRORS = [
    lambda lib: lib.nn.Conv2d(3, 8, 3)(lib.zeros(2, 4, 8, 8)),
    lambda lib: lib.nn.Conv2d(3, 8, 3)(lib.zeros(2, 8)),
    lambda lib: lib.nn.Conv2d(4, 8, 9)(lib.zeros(2, 4, 8, 8)),
    lambda lib: lib.nn.Conv1d(4, 8, 3)(lib.zeros(2, 4, 8, 8)),
    lambda lib: lib.nn.Conv2d(4, 8, 3, groups=2)(lib.zeros(1, 3, 5, 5)),
    lambda lib: lib.nn.ConvTranspose2d(4, 8, 3)(lib.zeros(1, 3, 5, 5)),
    lambda lib: lib.nn.Conv2d(4, 8, 3, groups=3),
    lambda lib: lib.nn.Conv2d(4, 8, 3, padding="same", stride=2),
    lambda lib: _f(lib).conv2d(lib.zeros(1, 2, 5, 5), lib.zeros(3, 2, 3, 3), stride=(1, 1, 1)),
    lambda lib: _f(lib).conv2d(lib.zeros(1, 2, 5, 5), lib.zeros(3, 2, 3, 3), padding="same", stride=2),
    lambda lib: _f(lib).conv_transpose2d(lib.zeros(1, 2, 5, 5), lib.zeros(2, 3, 3, 3), stride=2, output_padding=2),
    lambda lib: _f(lib).unfold(lib.zeros(1, 1, 2, 2), 3),
    lambda lib: _f(lib).conv2d(lib.ones(1, 2, 4, 4, dtype=lib.float64), lib.ones(1, 2, 2, 2)),
    lambda lib: _f(lib).fold(lib.zeros(1, 4, 5), (4, 4), 2),
    lambda lib: lib.nn.Conv3d(3, 8, 3)(lib.zeros(2, 4, 5, 5, 5)),
    lambda lib: lib.nn.Conv3d(3, 8, 3)(lib.zeros(2, 3, 5)),
    lambda lib: lib.nn.Conv3d(3, 8, (4, 3, 3))(lib.zeros(1, 3, 3, 3, 3)),
    lambda lib: _f(lib).conv3d(lib.zeros(1, 2, 5, 5, 5), lib.zeros(3, 2, 3, 3, 3), dilation=(1, 1)),
    lambda lib: _f(lib).conv3d(lib.zeros(1, 2, 5, 5, 5), lib.zeros(3, 2, 3, 3, 3), bias=lib.zeros(2)),
    lambda lib: _f(lib).conv_transpose3d(lib.zeros(1, 2, 3, 3, 3), lib.zeros(2, 3, 3, 3, 3), stride=2,
                                         output_padding=(0, 2, 0)),
    lambda lib: _f(lib).conv_transpose2d(lib.zeros(1, 2, 3, 3), lib.zeros(2, 3, 3, 3), stride=2,
                                         output_padding=(0, 2)),
    lambda lib: _f(lib).conv_transpose1d(lib.zeros(1, 2, 3), lib.zeros(2, 3, 3), stride=2, output_padding=2),
    lambda lib: lib.nn.ConvTranspose3d(2, 3, 3, padding_mode="reflect"),
    # weights with fewer output channels than groups, or not a multiple of them (a zero-width layer)
    lambda lib: lib.nn.Conv2d(4, 0, 1)(lib.zeros(1, 4, 5, 5)),
    lambda lib: _f(lib).conv1d(lib.zeros(1, 4, 5), lib.zeros(0, 4, 1)),
    lambda lib: _f(lib).conv2d(lib.zeros(1, 3, 5, 5), lib.zeros(0, 4, 1, 1)),
    lambda lib: _f(lib).conv2d(lib.zeros(1, 4, 5, 5), lib.zeros(1, 2, 1, 1), groups=2),
    lambda lib: _f(lib).conv2d(lib.zeros(1, 4, 5, 5), lib.zeros(3, 2, 1, 1), groups=2),
    lambda lib: _f(lib).conv_transpose2d(lib.zeros(1, 0, 5, 5), lib.zeros(0, 4, 1, 1)),
    lambda lib: _f(lib).conv_transpose2d(lib.zeros(1, 3, 5, 5), lib.zeros(3, 2, 1, 1), groups=2),
    lambda lib: _f(lib).conv_transpose1d(lib.zeros(1, 1, 5), lib.zeros(1, 2, 1), groups=2),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_conv_errors_match_torch(fn):
    same_error(fn)


@pytest.mark.parametrize("fn,words", [
    (lambda lib: lib.nn.Conv2d(4, 8, 3, padding="foo"), ["Invalid padding string 'foo'", "'same'", "'valid'"]),
    (lambda lib: lib.nn.Conv2d(4, 8, 3, padding_mode="bad"), ["padding_mode must be one of", "padding_mode='bad'"]),
])
def test_conv_errors_naming_sets(fn, words):
    """torch prints a set here (its order varies between runs): compare the words instead."""
    same_error(fn, match_words=words)


def test_conv_group_error_texts():
    for fn in ERRORS[-8:]:
        e, t = same_error(fn)
        assert str(e) == str(t)


def test_conv_channel_error_text():
    e, _ = same_error(lambda lib: lib.nn.Conv2d(3, 8, 3)(lib.zeros(2, 4, 8, 8)))
    assert str(e) == ("Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 4, 8, 8] to have 3 channels, "
                      "but got 4 channels instead")


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=2)])
def test_fold_unfold_modules(kw):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6)).astype(np.float32)
    eu, tu = ember.nn.Unfold(**kw), torch.nn.Unfold(**kw)
    _run_module(eu, tu, x, gradgrad=False)
    cols = to_np(tu(torch.tensor(x)))
    ef, tf = ember.nn.Fold((7, 6), **kw), torch.nn.Fold((7, 6), **kw)
    _run_module(ef, tf, cols, gradgrad=False)
    assert repr(eu) == repr(tu) and repr(ef) == repr(tf)


def test_conv_no_grad_and_requires_grad_flags():
    em, tm = _pair("Conv2d", (2, 3, 3), {})
    x = np.ones((1, 2, 4, 4), np.float32)
    with ember.no_grad():
        y = em(ember.tensor(x))
    assert not y.requires_grad and y.grad_fn is None
    em.weight.requires_grad_(False)
    em.bias.requires_grad_(False)
    y = em(ember.tensor(x, requires_grad=True))
    assert y.requires_grad and type(y.grad_fn).__name__ == "ConvolutionBackward0"


def test_conv_empty_batch_and_integer_input():
    check(lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), np.zeros((0, 3, 5, 5), np.float32),
          np.ones((2, 3, 3, 3), np.float32))
    check(lambda lib, x, w: lib.nn.functional.conv2d(x, w), np.arange(16).reshape(1, 1, 4, 4),
          np.ones((1, 1, 2, 2), np.int64), grad=False)


@pytest.mark.parametrize("fn", [
    # complex input: torch's complex convolution compares the weight's type first, before its shape
    lambda F, t: F.conv1d(t.ones(1, 3, 4, dtype=t.complex64), t.ones(2, 3, 2)),
    lambda F, t: F.conv1d(t.ones(1, 3, 4, dtype=t.complex64), t.ones(2, 3)),
    lambda F, t: F.conv1d(t.ones(1, 3, 4, dtype=t.complex64), t.ones(2, 2, 2)),
    lambda F, t: F.conv2d(t.ones(1, 3, 4, 4, dtype=t.complex128), t.ones(2, 3, 2, 2, dtype=t.complex64)),
    lambda F, t: F.conv3d(t.ones(1, 3, 2, 2, 2, dtype=t.complex64), t.ones(2, 3, 1, 1, 1, dtype=t.bfloat16)),
    lambda F, t: F.conv_transpose1d(t.ones(1, 3, 4, dtype=t.complex64), t.ones(3, 2, 2)),
    lambda F, t: F.conv1d(t.ones(1, 3, 4), t.ones(2, 3, 2, dtype=t.complex64)),
    # bias of another dtype
    lambda F, t: F.conv1d(t.ones(1, 3, 4), t.ones(2, 3, 2), t.ones(2, dtype=t.float64)),
    lambda F, t: F.conv1d(t.ones(1, 3, 4, dtype=t.complex64), t.ones(2, 3, 2, dtype=t.complex64), t.ones(2)),
    lambda F, t: F.conv_transpose1d(t.ones(1, 3, 4, dtype=t.complex64), t.ones(3, 2, 2, dtype=t.complex64),
                                    t.ones(2, dtype=t.complex128)),
    lambda F, t: F.conv_transpose1d(t.ones(1, 3, 4), t.ones(3, 2, 2), t.ones(2, dtype=t.complex64)),
])
def test_dtype_mismatch_errors_like_torch(fn):
    same_error(lambda lib: fn(lib.nn.functional, lib))


def test_transposed_conv_casts_a_real_bias_of_another_dtype():
    check(lambda lib, x, w, b: lib.nn.functional.conv_transpose1d(x, w, b.double()),
          *(np.random.default_rng(0).standard_normal(s).astype(np.float32) for s in ((1, 3, 4), (3, 2, 2), (2,))))


@pytest.mark.parametrize("nd, transposed", [(1, False), (2, False), (3, False), (1, True), (2, True), (3, True)])
def test_aten_convolution_entry(nd, transposed):
    """torch.convolution (ATen's entry, all ranks, plain or transposed) against torch."""
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 2) + (4,) * nd)
    w = rng.standard_normal((2, 3) + (2,) * nd) if transposed else rng.standard_normal((3, 2) + (2,) * nd)
    pad, opad = [1] * nd, [1 if transposed else 0] * nd
    check(lambda lib, a, b: lib.convolution(a, b, None, [2] * nd, pad, [1] * nd, transposed, opad, 1), x, w)


def test_aten_convolution_errors():
    same_error(lambda lib: lib.convolution(lib.ones(1, 1, 2, 2, 2, 2), lib.ones(1, 1, 1, 1, 1, 1), None, [1] * 4,
                                           [0] * 4, [1] * 4, False, [0] * 4, 1))
    same_error(lambda lib: lib.convolution(lib.ones(1, 1), lib.ones(1), None, [1], [0], [1], False, [0], 1))


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_conv_chunked_wide_columns(data):
    """Stride-1 convolutions whose columns are built chunk by chunk (NOTE [wide columns]: large inputs; here every
    input, in chunks of a few positions, the last one short): values, first and second grads against torch."""
    from ember.ops import conv as _conv

    limits = {"_TILE_ABOVE": 0, "_CHUNK": data.draw(st.integers(1, 200)), "_MIN_STEP": data.draw(st.integers(1, 40))}
    saved = {name: getattr(_conv, name) for name in limits}
    nd = data.draw(st.sampled_from([1, 2, 3]))
    k = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    d = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    p = tuple(data.draw(st.integers(0, 2)) for _ in range(nd))
    low = [max(1, d[i] * (k[i] - 1) + 1 - 2 * p[i]) for i in range(nd)]
    size = tuple(data.draw(st.integers(low[i], max(low[i], 6 if nd < 3 else 4))) for i in range(nd))
    r = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = r.standard_normal((2, data.draw(st.integers(1, 3)), *size)).astype(np.float32)
    w = r.standard_normal((data.draw(st.integers(1, 3)), x.shape[1], *k)).astype(np.float32)
    name = f"conv{nd}d"
    try:
        for key, value in limits.items():
            setattr(_conv, key, value)
        check(lambda lib, a, b: getattr(lib.nn.functional, name)(a, b, None, 1, p, d), x, w, gradgrad=True)
    finally:
        for key, value in saved.items():
            setattr(_conv, key, value)
