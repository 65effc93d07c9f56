"""Pooling, padding, upsampling and pixel-shuffle layers against torch.nn: outputs, indices, input grads and
second grads, printed forms and error messages."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import torch, ember, same_error, check, assert_close

MODULES = [
    ("MaxPool2d", (2,), {}, (2, 3, 8, 7)),
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 8, 7)),
    ("MaxPool2d", ((2, 3),), dict(stride=1, dilation=(2, 1), padding=(1, 1)), (2, 2, 7, 9)),
    ("MaxPool2d", (3,), dict(stride=2, ceil_mode=True), (3, 9, 8)),  # unbatched
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 10)),
    ("MaxPool1d", (2,), dict(ceil_mode=True, dilation=2), (3, 11)),
    ("AvgPool2d", (2,), {}, (2, 3, 8, 7)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False), (2, 3, 8, 7)),
    ("AvgPool2d", ((3, 2),), dict(stride=(1, 2), padding=(1, 1), divisor_override=3), (2, 2, 6, 7)),
    ("AvgPool2d", (3,), dict(stride=2, ceil_mode=True), (3, 9, 8)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False), (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((3, 4),), {}, (2, 3, 8, 7)),
    ("AdaptiveAvgPool2d", ((None, 3),), {}, (2, 3, 5, 7)),
    ("AdaptiveAvgPool2d", (1,), {}, (3, 5, 7)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveMaxPool2d", ((3, 5),), {}, (2, 3, 8, 7)),
    ("AdaptiveMaxPool2d", (2,), {}, (3, 5, 7)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 10)),
    ("MaxPool3d", (2,), {}, (2, 2, 5, 4, 6)),
    ("MaxPool3d", ((3, 2, 2),), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), ceil_mode=True),
     (2, 2, 6, 5, 7)),
    ("MaxPool3d", (2,), dict(stride=1), (2, 3, 4, 3)),  # unbatched, overlapping windows
    ("AvgPool3d", (2,), {}, (2, 2, 5, 4, 6)),
    ("AvgPool3d", (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False), (2, 2, 5, 6, 4)),
    ("AvgPool3d", ((2, 1, 3),), dict(stride=(1, 2, 1), padding=(1, 0, 1), divisor_override=5), (2, 4, 5, 6)),
    ("AdaptiveAvgPool3d", ((2, 3, 4),), {}, (2, 2, 5, 6, 7)),
    ("AdaptiveAvgPool3d", ((None, 2, 3),), {}, (2, 3, 4, 5)),
    ("AdaptiveAvgPool3d", (1,), {}, (2, 2, 3, 4, 5)),
    ("AdaptiveMaxPool3d", ((2, 3, 4),), {}, (2, 2, 5, 6, 7)),
    ("AdaptiveMaxPool3d", ((3, None, 2),), {}, (2, 4, 3, 5)),
    ("Upsample", (), dict(scale_factor=(1.5, 2, 0.6), mode="trilinear"), (1, 2, 3, 4, 5)),
    ("Upsample", (), dict(size=(5, 3, 6), mode="trilinear", align_corners=True), (1, 2, 3, 4, 5)),
    ("Upsample", (), dict(scale_factor=2, mode="nearest"), (1, 2, 3, 2, 4)),
    ("Upsample", (), dict(scale_factor=1.7, mode="nearest-exact"), (2, 3, 4, 5)),
    ("Upsample", (), dict(scale_factor=2.3, mode="bicubic"), (2, 3, 4, 5)),
    ("Upsample", (), dict(size=(7, 3), mode="bicubic", align_corners=True), (2, 3, 4, 5)),
    ("ZeroPad2d", ((1, 2, 0, 3),), {}, (2, 3, 4, 5)),
    ("ConstantPad1d", (2, 3.5), {}, (2, 3, 4)),
    ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), -1.0), {}, (2, 3, 4, 5)),
    ("ReflectionPad1d", ((3, 1),), {}, (2, 3, 5)),
    ("ReflectionPad2d", ((1, 2, 3, 0),), {}, (2, 3, 4, 5)),
    ("ReflectionPad2d", (2,), {}, (3, 4, 5)),
    ("ReplicationPad1d", ((3, 1),), {}, (3, 5)),
    ("ReplicationPad2d", ((1, 2, 3, 0),), {}, (2, 3, 4, 5)),
    ("ReplicationPad3d", (1,), {}, (1, 2, 3, 4, 5)),
    ("CircularPad2d", ((1, 2, 3, 0),), {}, (2, 3, 4, 5)),
    ("CircularPad1d", (2,), {}, (2, 3, 4)),
    ("Upsample", (), dict(scale_factor=2), (2, 3, 4, 5)),
    ("Upsample", (), dict(size=(7, 3)), (2, 3, 4, 5)),
    ("Upsample", (), dict(scale_factor=1.5, mode="bilinear"), (2, 3, 4, 5)),
    ("Upsample", (), dict(size=(7, 9), mode="bilinear", align_corners=True), (2, 3, 4, 5)),
    ("Upsample", (), dict(scale_factor=(0.5, 2.5), mode="bilinear"), (2, 3, 5, 4)),
    ("Upsample", (), dict(scale_factor=3, mode="linear"), (2, 3, 4)),
    ("Upsample", (), dict(scale_factor=2.2, mode="nearest", recompute_scale_factor=True), (2, 3, 4)),
    ("UpsamplingNearest2d", (), dict(scale_factor=2), (2, 3, 4, 5)),
    ("UpsamplingBilinear2d", (), dict(size=(5, 9)), (2, 3, 4, 5)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 4)),
    ("PixelShuffle", (3,), {}, (9, 2, 2)),
    ("PixelUnshuffle", (2,), {}, (2, 3, 4, 6)),
]


def _outs(y):
    return list(y) if isinstance(y, tuple) else [y]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES, ids=lambda v: str(v))
def test_module_matches_torch(name, args, kwargs, shape):
    em, tm = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    eo, to = check(lambda lib, t: (em if lib is ember else tm)(t), x, gradgrad=True)
    for e, t in zip(eo, to):
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ or "Circular" in name


@pytest.mark.parametrize("name", ["MaxPool2d", "AdaptiveMaxPool2d", "MaxPool1d", "AdaptiveMaxPool1d", "MaxPool3d",
                                  "AdaptiveMaxPool3d"])
def test_max_pool_return_indices(name):
    arg = 3 if "Adaptive" in name else 2
    kw = {"return_indices": True}
    shape = {"1": (2, 3, 9), "2": (2, 3, 7, 6), "3": (2, 2, 5, 7, 6)}[name[-2]]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    eo, to = check(lambda lib, t: getattr(lib.nn, name)(arg, **kw)(t), x, gradgrad=True)
    assert eo[1].dtype == ember.int64 and not eo[1].requires_grad
    assert repr(getattr(ember.nn, name)(arg, **kw)) == repr(getattr(torch.nn, name)(arg, **kw))


def test_max_pool_ties_and_infinities():
    """Ties pick the first position in the window; -inf windows and padding never win over real values."""
    x = np.array([[[[1, 1, 0, 2], [1, 0, 2, 2], [-np.inf, -np.inf, 3, 3], [-np.inf, -np.inf, 3, 3]]]], np.float32)
    check(lambda lib, t: lib.nn.functional.max_pool2d(t, 2, return_indices=True), x)
    check(lambda lib, t: lib.nn.functional.max_pool2d(t, 3, 2, 1, return_indices=True), x)
    x3 = np.stack([x, x[..., ::-1]], 2)  # (1, 1, 2, 4, 4)
    check(lambda lib, t: lib.nn.functional.max_pool3d(t, 2, return_indices=True), x3)
    check(lambda lib, t: lib.nn.functional.max_pool3d(t, 3, 2, 1, return_indices=True), x3)
    check(lambda lib, t: lib.nn.functional.adaptive_max_pool3d(t, (1, 3, 2), return_indices=True), x3)


def test_max_pools_nan_picks_as_torch():
    """A NaN in a window wins (the last NaN of the window, as torch's kernels scan)."""
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(1, 2, 3, 4, 5) % 7
    x[0, 0, 1, 2, 3] = x[0, 1, 0, 0, 1] = x[0, 1, 0, 1, 1] = np.nan
    for fn in (lambda F, t: F.max_pool3d(t, 2, 1, return_indices=True),
               lambda F, t: F.adaptive_max_pool3d(t, (2, 2, 3), return_indices=True),
               lambda F, t: F.max_pool2d(t[:, :, 0], 2, 1, return_indices=True),
               lambda F, t: F.adaptive_max_pool2d(t[:, :, 0], (2, 3), return_indices=True)):
        check(lambda lib, t: fn(lib.nn.functional, t), x)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_pool2d_random_geometry(data):
    """Random kernel, stride, padding, dilation and ceil_mode for max and average pooling."""
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    s = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    p = (data.draw(st.integers(0, k[0] // 2)), data.draw(st.integers(0, k[1] // 2)))
    ceil, cip = data.draw(st.booleans()), data.draw(st.booleans())
    d = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    hw = (data.draw(st.integers(max(k[0], d[0] * (k[0] - 1) + 1), 9)),
          data.draw(st.integers(max(k[1], d[1] * (k[1] - 1) + 1), 9)))
    x = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal((2, 2, *hw)).astype(np.float32)
    check(lambda lib, t: lib.nn.functional.max_pool2d(t, k, s, p, d, ceil, True), x)
    check(lambda lib, t: lib.nn.functional.avg_pool2d(t, k, s, p, ceil, cip), x)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_max_pool_random_ties_pick_torchs_index(data):
    """Values from {0, 1, 2} (ties in most windows), random geometry and dtypes: torch's first-hit indices."""
    k = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    s = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    p = (data.draw(st.integers(0, k[0] // 2)), data.draw(st.integers(0, k[1] // 2)))
    d = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int64]))
    hw = (data.draw(st.integers(d[0] * (k[0] - 1) + 1, 9)), data.draw(st.integers(d[1] * (k[1] - 1) + 1, 9)))
    x = np.random.default_rng(data.draw(st.integers(0, 99))).integers(0, 3, (2, 3, *hw)).astype(dtype)
    ceil = data.draw(st.booleans())
    got = {lib: lib.nn.functional.max_pool2d(lib.tensor(x), k, s, p, d, ceil, True) for lib in (ember, torch)}
    for a, b in zip(got[ember], got[torch]):
        assert_close(a, b)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_max_pool_windows_of_the_lowest_value_never_pick_padding(data):
    """Windows whose input cells are all -inf (or the integer minimum, for integer dtypes) are as low as the
    padding: torch's index is the window's first input cell, never a padding cell (nor a negative index);
    the gradient goes there."""
    k = (data.draw(st.integers(2, 4)), data.draw(st.integers(2, 4)))
    s = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    p = (data.draw(st.integers(0, k[0] // 2)), data.draw(st.integers(0, k[1] // 2)))
    d = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    span = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
    hw = (data.draw(st.integers(span[0], span[0] + 5)), data.draw(st.integers(span[1], span[1] + 5)))
    ceil = data.draw(st.booleans())
    r = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = r.standard_normal((2, 2, *hw)).astype(np.float32)
    low = r.random(x.shape) < data.draw(st.sampled_from([0.3, 0.7, 1.0]))
    x[low] = -np.inf
    check(lambda lib, t: lib.nn.functional.max_pool2d(t, k, s, p, d, ceil, True), x)
    xi = r.integers(-2, 2, x.shape).astype(np.int64)
    xi[low] = np.iinfo(np.int64).min
    got = {lib: lib.nn.functional.max_pool2d(lib.tensor(xi), k, s, p, d, ceil, True) for lib in (ember, torch)}
    for a, b in zip(got[ember], got[torch]):
        assert_close(a, b)


@settings(max_examples=20, deadline=None)
@given(h=st.integers(1, 9), w=st.integers(1, 9), oh=st.integers(1, 6), ow=st.integers(1, 6))
def test_adaptive_pools_random_sizes(h, w, oh, ow):
    x = np.random.default_rng(h * 10 + w).standard_normal((2, 2, h, w)).astype(np.float32)
    check(lambda lib, t: lib.nn.functional.adaptive_avg_pool2d(t, (oh, ow)), x)
    check(lambda lib, t: lib.nn.functional.adaptive_max_pool2d(t, (oh, ow), True), x)


@settings(max_examples=20, deadline=None)
@given(h=st.integers(1, 6), w=st.integers(1, 6), oh=st.integers(1, 12), ow=st.integers(1, 12),
       corners=st.booleans())
def test_interpolate_random_sizes(h, w, oh, ow, corners):
    x = np.random.default_rng(h * 10 + w).standard_normal((1, 2, h, w)).astype(np.float32)
    check(lambda lib, t: lib.nn.functional.interpolate(t, (oh, ow), mode="bilinear", align_corners=corners), x)
    check(lambda lib, t: lib.nn.functional.interpolate(t, (oh, ow)), x)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [((2, 5), (1, 2)), ((2, 3, 5), (2, 1)), ((2, 3, 4, 5), (1, 2, 3, 0)),
                                       ((3, 4, 5), (0, 2, 1, 1)), ((1, 2, 3, 4, 5), (1, 0, 2, 1, 1, 2))])
def test_pad_modes(mode, shape, pad):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    check(lambda lib, t: lib.nn.functional.pad(t, pad, mode=mode), x, gradgrad=True)


def test_pad_constant_any_rank_and_ints():
    check(lambda lib, t: lib.nn.functional.pad(t, (1, 1, 0, 2, 1, 0, 2, 1)), np.ones((2, 3, 2, 2), np.float32))
    check(lambda lib, t: lib.nn.functional.pad(t, (1, 2), value=7), np.arange(6).reshape(2, 3), grad=False)
    check(lambda lib, t: lib.nn.functional.pad(t, (2, 1)), np.arange(3.0, dtype=np.float32))


def _f(lib):
    return lib.nn.functional


ERRORS = [
    lambda lib: _f(lib).max_pool2d(lib.zeros(2, 4, 8, 8), 9),
    lambda lib: _f(lib).max_pool2d(lib.zeros(2, 4, 8, 8), 3, padding=2),
    lambda lib: _f(lib).max_pool2d(lib.zeros(2, 3), 2),
    lambda lib: _f(lib).avg_pool2d(lib.zeros(2, 4, 8, 8), 3, padding=2),
    lambda lib: _f(lib).avg_pool2d(lib.zeros(1, 1, 2, 2), 3),
    lambda lib: _f(lib).adaptive_avg_pool2d(lib.zeros(3), 2),
    lambda lib: _f(lib).pad(lib.zeros(2, 4, 8, 8), (1, 2, 3)),
    lambda lib: _f(lib).pad(lib.zeros(2, 4, 8, 8), (9, 9, 1, 1), mode="reflect"),
    lambda lib: _f(lib).pad(lib.zeros(2, 4), (1, 1, 1, 1, 1, 1)),
    lambda lib: _f(lib).pad(lib.zeros(2, 4, 8, 8), (1, 1), mode="reflect"),
    lambda lib: _f(lib).pad(lib.zeros(4), (1, 1), mode="replicate"),
    lambda lib: _f(lib).pad(lib.zeros(2, 4, 8, 8), (1, 1), mode="bad"),
    lambda lib: _f(lib).pad(lib.zeros(2, 3), (-2, -2)),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 2, 2)),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 2, 2), size=3, scale_factor=2),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 2, 2), size=3, align_corners=True),
    lambda lib: _f(lib).interpolate(lib.zeros(2, 3, 4), size=3, mode="bilinear"),
    lambda lib: _f(lib).pixel_shuffle(lib.zeros(1, 3, 2, 2), 2),
    lambda lib: _f(lib).pixel_unshuffle(lib.zeros(1, 1, 3, 4), 2),
    lambda lib: _f(lib).max_pool3d(lib.zeros(2, 3), 2),
    lambda lib: _f(lib).avg_pool3d(lib.zeros(2, 3), 2),
    lambda lib: _f(lib).max_pool3d(lib.zeros(2, 1, 2, 3, 3), 3),
    lambda lib: _f(lib).avg_pool3d(lib.zeros(2, 1, 2, 3, 3), 3),
    lambda lib: _f(lib).avg_pool3d(lib.zeros(1, 1, 2, 4, 4), 3, padding=1, stride=3),
    lambda lib: _f(lib).max_pool3d(lib.zeros(2, 1, 4, 4, 4), 2, padding=2),
    lambda lib: _f(lib).max_pool3d(lib.zeros(2, 1, 0, 3, 3), 2),
    lambda lib: _f(lib).avg_pool3d(lib.zeros(1, 1, 0, 3, 3), 1),
    lambda lib: _f(lib).avg_pool3d(lib.zeros(2, 1, 4, 3, 3), 2, divisor_override=0),
    lambda lib: _f(lib).max_pool3d(lib.zeros(1, 1, 4, 4, 4), 2, stride=0),
    lambda lib: _f(lib).max_pool3d(lib.zeros(1, 1, 4, 4, 4), 2, 2, -1),
    lambda lib: _f(lib).avg_pool2d(lib.zeros(1, 1, 4, 4), 2, 2, -1),
    lambda lib: _f(lib).max_pool1d(lib.zeros(1, 1, 4), 2, 2, -1),
    lambda lib: _f(lib).adaptive_max_pool3d(lib.zeros(2, 3), 2),
    lambda lib: _f(lib).adaptive_avg_pool3d(lib.zeros(2, 3), 2),
    lambda lib: _f(lib).adaptive_avg_pool3d(lib.zeros(1, 2, 3, 3, 3), (2, 2)),
    lambda lib: _f(lib).adaptive_max_pool3d(lib.zeros(1, 2, 3, 3, 3), (2, 2)),
    lambda lib: _f(lib).adaptive_max_pool2d(lib.zeros(1, 2, 3, 3), (2, 2, 2)),
    lambda lib: _f(lib).adaptive_avg_pool2d(lib.zeros(1, 2, 3, 3), (2, -1)),
    lambda lib: _f(lib).adaptive_avg_pool3d(lib.zeros(1, 1, 3, 3, 3), (2, 2, -1)),
    lambda lib: _f(lib).adaptive_max_pool3d(lib.zeros(1, 1, 3, 3, 3), (2, 2, -1)),
    lambda lib: _f(lib).adaptive_max_pool3d(lib.zeros(1, 0, 3, 3, 3), (2, 2, 2)),
    lambda lib: _f(lib).adaptive_avg_pool3d(lib.zeros(1, 0, 3, 3, 3), (2, 2, 2)),
    lambda lib: _f(lib).adaptive_max_pool2d(lib.zeros(1, 0, 3, 3), 2),
    lambda lib: _f(lib).lp_pool3d(lib.zeros(2, 3), 2, 2),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_torch(fn):
    e, t = same_error(fn)
    if ERRORS.index(fn) >= 19:  # the 3-d and argument checks: torch's whole message
        assert str(e) == str(t)


# ---------------------------------------------------------------- power-average pooling, max unpooling, shuffling
_lp_rng = np.random.default_rng(11)

LP = [  # (module, norm_type, kernel_size, stride, ceil_mode, shape, positive input)
    ("LPPool2d", 2, 2, None, False, (2, 3, 6, 5), False),
    ("LPPool2d", 3, (2, 3), (1, 2), True, (2, 2, 5, 7), False),
    ("LPPool2d", 1.5, 3, 2, True, (3, 7, 6), True),
    ("LPPool2d", 1, 2, 1, False, (1, 2, 4, 4), False),
    ("LPPool2d", float("inf"), 2, 1, False, (2, 2, 4, 5), False),
    ("LPPool1d", 2, 3, 2, False, (2, 3, 9), False),
    ("LPPool1d", 2.5, 2, None, True, (3, 7), True),
    ("LPPool1d", 4, 4, 3, True, (2, 2, 10), False),
    ("LPPool3d", 2, 2, None, False, (2, 2, 4, 5, 4), False),
    ("LPPool3d", 1.5, (2, 1, 3), (1, 2, 2), True, (2, 3, 5, 5), True),
    ("LPPool3d", float("inf"), 2, 1, False, (1, 2, 3, 3, 3), False),
]


@pytest.mark.parametrize("cls,p,k,s,ceil,shape,pos", LP, ids=[f"{c[0]}-{c[1]}-{len(c[5])}d" for c in LP])
def test_lp_pool(cls, p, k, s, ceil, shape, pos):
    x = _lp_rng.uniform(0.2, 2.0, shape) if pos else _lp_rng.standard_normal(shape)
    fname = cls.replace("LPPool", "lp_pool")
    check(lambda lib, x: getattr(lib.nn.functional, fname)(x, p, k, s, ceil), x, gradgrad=True)
    check(lambda lib, x: getattr(lib.nn, cls)(p, k, s, ceil)(x), x.astype(np.float32))
    assert repr(getattr(ember.nn, cls)(p, k, s, ceil)) == repr(getattr(torch.nn, cls)(p, k, s, ceil))


def test_lp_pool_zero_window_has_zero_gradient():
    x = _lp_rng.standard_normal((1, 2, 4, 4))
    x[0, 0, :2, :2] = 0
    check(lambda lib, x: lib.nn.functional.lp_pool2d(x, 2, 2), x)
    same_error(lambda lib: lib.nn.functional.lp_pool1d(lib.randn(2, 3, 2), 2, 3))
    same_error(lambda lib: lib.nn.functional.lp_pool2d(lib.randn(2, 3, 4, 4, 4), 2, 2))


UNPOOL = [  # (nd, kernel_size, stride, padding, output_size, shape)
    (2, 2, None, 0, None, (2, 3, 6, 4)),
    (2, 3, 2, 1, (7, 8), (2, 2, 7, 8)),
    (2, 3, 2, 0, None, (2, 2, 7, 7)),
    (2, (2, 3), (2, 2), 0, (7, 9), (1, 3, 7, 9)),
    (2, 2, None, 0, (2, 3, 5, 5), (2, 3, 5, 5)),
    (2, 2, 1, 0, None, (3, 5, 4)),  # unbatched, overlapping windows (repeated indices)
    (1, 2, None, 0, None, (2, 3, 8)),
    (1, 3, 2, 1, (10,), (2, 2, 10)),
    (1, 2, None, 0, None, (3, 7)),
    (3, 2, None, 0, None, (2, 2, 4, 6, 4)),
    (3, (2, 3, 2), (2, 2, 1), (1, 1, 0), (5, 7, 6), (1, 2, 5, 7, 6)),
    (3, 2, 1, 0, None, (2, 3, 4, 3)),  # unbatched, overlapping windows (repeated indices)
]


@pytest.mark.parametrize("nd,k,s,pad,size,shape", UNPOOL, ids=[f"{u[0]}d-{i}" for i, u in enumerate(UNPOOL)])
def test_max_unpool_inverts_max_pool(nd, k, s, pad, size, shape):
    x = _lp_rng.standard_normal(shape)

    def fn(lib, x):
        F = lib.nn.functional
        y, idx = getattr(F, f"max_pool{nd}d")(x, k, s, pad, return_indices=True)
        return getattr(F, f"max_unpool{nd}d")(y * 2, idx, k, s, pad, output_size=size)

    check(fn, x, gradgrad=True)

    def mod(lib, x):
        y, idx = getattr(lib.nn, f"MaxPool{nd}d")(k, s, pad, return_indices=True)(x)
        return getattr(lib.nn, f"MaxUnpool{nd}d")(k, s, pad)(y, idx, size)

    check(mod, x.astype(np.float32))
    assert repr(getattr(ember.nn, f"MaxUnpool{nd}d")(k, s, pad)) == repr(getattr(torch.nn, f"MaxUnpool{nd}d")(k, s,
                                                                                                               pad))


def test_max_unpool_errors_like_torch():
    x = _lp_rng.standard_normal((2, 3, 4, 4)).astype(np.float32)

    def unpool(lib, f=lambda y, i: (y, i), **kw):
        y, i = lib.nn.functional.max_pool2d(lib.tensor(x), 2, return_indices=True)
        return lib.nn.functional.max_unpool2d(*f(y, i), 2, **kw)

    same_error(lambda lib: unpool(lib, lambda y, i: (y, i.float())))
    same_error(lambda lib: unpool(lib, lambda y, i: (y, i[:, :, :1])))
    same_error(lambda lib: unpool(lib, lambda y, i: (y, i * 0 + 150)))
    same_error(lambda lib: unpool(lib, lambda y, i: (y, i * 0 - 3)))
    same_error(lambda lib: unpool(lib, lambda y, i: (y[0, 0], i[0, 0])))
    same_error(lambda lib: unpool(lib, lambda y, i: (y[:, :0], i[:, :0])))
    same_error(lambda lib: unpool(lib, output_size=(9, 9)))
    same_error(lambda lib: unpool(lib, output_size=(5,)))
    same_error(lambda lib: lib.nn.functional.max_unpool1d(lib.ones(2, 3, 2), lib.zeros(2, 3, 1, dtype=lib.int64), 2))


@pytest.mark.parametrize("fn", [
    lambda F, lib: F.max_unpool3d(lib.zeros(2, 3), lib.zeros(2, 3, dtype=lib.int64), 2),
    lambda F, lib: F.max_unpool3d(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 2, 2, 2, dtype=lib.int32), 2),
    lambda F, lib: F.max_unpool3d(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 2, 2, 1, dtype=lib.int64), 2),
    lambda F, lib: F.max_unpool3d(lib.zeros(1, 0, 2, 2, 2), lib.zeros(1, 0, 2, 2, 2, dtype=lib.int64), 2),
    lambda F, lib: F.max_unpool3d(lib.zeros(2, 1, 2, 3, 2), lib.full((2, 1, 2, 3, 2), 100, dtype=lib.int64), 2),
    lambda F, lib: F.max_unpool3d(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 2, 2, 2, dtype=lib.int64), 2,
                                  output_size=(9, 4, 4)),
])
def test_max_unpool3d_errors_like_torch(fn):
    e, t = same_error(lambda lib: fn(lib.nn.functional, lib))
    assert str(e) == str(t)


@pytest.mark.parametrize("groups,shape", [(2, (2, 4, 3)), (3, (1, 6, 2, 2)), (1, (3, 5, 2)), (4, (2, 8, 1, 2, 2)),
                                          (5, (5, 3))])
def test_channel_shuffle(groups, shape):
    x = _lp_rng.standard_normal(shape)
    if len(shape) < 3:
        same_error(lambda lib: lib.nn.ChannelShuffle(groups)(lib.tensor(x)))
        return
    check(lambda lib, x: lib.nn.functional.channel_shuffle(x, groups), x, gradgrad=True)
    check(lambda lib, x: lib.nn.ChannelShuffle(groups)(x), x)
    assert repr(ember.nn.ChannelShuffle(groups)) == repr(torch.nn.ChannelShuffle(groups))
    same_error(lambda lib: lib.nn.functional.channel_shuffle(lib.tensor(x), 0))
    same_error(lambda lib: lib.nn.ChannelShuffle(shape[1] + 1)(lib.tensor(x)))


@pytest.mark.parametrize("p", [2, 1, 3.5, 0.5])
def test_functional_pdist(p):
    x = _lp_rng.standard_normal((5, 3))
    assert ember.nn.functional.pdist is ember.pdist
    check(lambda lib, x: lib.nn.functional.pdist(x, p), x)  # torch has no second derivative of pdist
    same_error(lambda lib: lib.nn.functional.pdist(lib.ones(2, 3, 4), p))


# ---------------------------------------------------------------- fractional max pooling
FRACTIONAL = [  # (nd, kernel_size, output_size, output_ratio, shape)
    (2, 2, 4, None, (2, 3, 9, 8)),
    (2, (3, 2), (3, 5), None, (2, 2, 7, 9)),
    (2, 2, None, (0.5, 0.7), (2, 3, 8, 7)),
    (2, 3, (4, 2), None, (3, 8, 6)),  # unbatched
    (2, 1, 5, None, (1, 1, 5, 5)),  # one-cell windows, output as large as the input
    (3, 2, 3, None, (2, 2, 6, 5, 7)),
    (3, (2, 1, 3), (3, 4, 2), None, (2, 2, 5, 6, 6)),
    (3, 2, None, (0.5, 0.6, 0.4), (1, 2, 6, 6, 8)),
    (3, 2, 2, None, (2, 4, 5, 4)),  # unbatched
    (2, 2, 3, None, (2, 2, 6, 6), 4),  # more samples than the batch: the first ones are used
]


@pytest.mark.parametrize("nd,k,size,ratio,shape,n_samples", [f if len(f) == 6 else f + (None,) for f in FRACTIONAL],
                         ids=[f"{f[0]}d-{i}" for i, f in enumerate(FRACTIONAL)])
def test_fractional_max_pool(nd, k, size, ratio, shape, n_samples):
    """Values, indices, first and second grads for given samples (torch's window sequence per plane)."""
    rng = np.random.default_rng(len(shape) * 7 + shape[-1])
    x = rng.standard_normal(shape)
    planes = (n_samples or (1 if len(shape) == nd + 1 else shape[0]), shape[-nd - 1])
    samples = rng.uniform(0, 1, planes + (nd,))
    fname = f"fractional_max_pool{nd}d"
    check(lambda lib, x, s: getattr(lib.nn.functional, fname)(x, k, size, ratio, True, _random_samples=s),
          x, samples, gradgrad=True, requires_grad=[True, False])
    check(lambda lib, x, s: getattr(lib.nn.functional, fname + "_with_indices")(x, k, size, ratio,
                                                                                 _random_samples=s),
          x, samples, requires_grad=[True, False])

    def mod(lib, x, s):
        m = getattr(lib.nn, f"FractionalMaxPool{nd}d")(k, size, ratio, return_indices=True, _random_samples=s)
        return m(x)

    eo, to = check(mod, x.astype(np.float32), samples.astype(np.float32), requires_grad=[True, False])
    assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__ == f"FractionalMaxPool{nd}DBackward0"


def test_fractional_max_pool_without_samples_draws_its_own():
    """Without _random_samples each call draws new windows: shape, dtype and that every value is a window max."""
    x = ember.randn(2, 3, 9, 9)
    y, idx = ember.nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)
    assert y.shape == (2, 3, 4, 4) and idx.dtype == ember.int64
    flat = x.reshape(2, 3, -1)
    assert np.array_equal(flat.gather(2, idx.reshape(2, 3, -1)).reshape(y.shape).numpy(), y.numpy())
    m = ember.nn.FractionalMaxPool3d(2, output_ratio=0.5)
    assert m(ember.randn(1, 2, 6, 6, 6)).shape == (1, 2, 3, 3, 3)
    assert list(m.state_dict()) == list(torch.nn.FractionalMaxPool3d(2, output_ratio=0.5).state_dict()) == []
    assert repr(m) == repr(torch.nn.FractionalMaxPool3d(2, output_ratio=0.5)) == "FractionalMaxPool3d()"
    s = np.random.default_rng(0).uniform(size=(1, 2, 2)).astype(np.float32)
    em = ember.nn.FractionalMaxPool2d(2, 3, _random_samples=ember.tensor(s))
    tm = torch.nn.FractionalMaxPool2d(2, 3, _random_samples=torch.tensor(s))
    assert list(em.state_dict()) == list(tm.state_dict()) == ["_random_samples"]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 1, 4, 4), 3, output_size=3),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.zeros(1, 1, 4, 4, 4), 2, output_size=(3, 1, 1)),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.zeros(1, 1, 4, 4, 4), 2, output_size=(1, 1, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 1, 4, 4), 2, output_size=(1, 4)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 1, 4, 4), 2, output_size=2,
                                                        _random_samples=lib.rand(1, 1, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 4), 2, output_size=2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 0, 4, 4), 2, output_size=2),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.zeros(1, 0, 4, 4, 4), 2, output_size=2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 1, 4, 4), 2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 1, 4, 4), 2, output_size=2,
                                                        _random_samples=lib.rand(1, 1, 2, dtype=lib.float64)),
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(2, 2, 4, 4), 2, 2, _random_samples=lib.rand(1, 3, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(2, 2, 4, 4), 2, 2, _random_samples=lib.rand(2, 3, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.zeros(2, 2, 4, 4, 4), 2, 2,
                                                        _random_samples=lib.rand(2, 2, 4)),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.zeros(2, 2, 4, 4, 4), 2, 2, _random_samples=lib.rand(2, 2)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(2, 2, 4, 4), 5, 2, _random_samples=lib.rand(1, 3, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 1, 4, 4), 2, output_ratio=0.5),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.zeros(1, 1, 4, 4), 2, output_ratio=(0.5, 0.5, 0.5)),
    lambda lib: lib.nn.FractionalMaxPool2d(2, 3, 0.5),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.5, 0.5)),
])
def test_fractional_max_pool_errors(fn):
    e, t = same_error(fn)
    assert str(e) == str(t)


def _cx(lib, *shape, grad=False):
    return lib.randn(*shape, dtype=lib.complex64, requires_grad=grad)


@pytest.mark.parametrize("fn", [
    # max_pool1d computes values alone (its own kernel) unless a gradient needs the indices
    lambda lib: lib.nn.functional.max_pool1d(_cx(lib, 1, 2, 8), 2),
    lambda lib: lib.nn.functional.max_pool1d(_cx(lib, 2, 8, grad=True), 2),
    lambda lib: lib.nn.functional.max_pool1d(_cx(lib, 1, 2, 8), 2, return_indices=True),
    lambda lib: lib.max_pool1d(_cx(lib, 1, 2, 8), 2),
    # the kernel of each rank
    lambda lib: lib.nn.functional.avg_pool3d(_cx(lib, 1, 2, 4, 4, 4), 2),
    lambda lib: lib.nn.functional.max_pool3d(_cx(lib, 1, 2, 4, 4, 4), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool3d(_cx(lib, 1, 2, 4, 4, 4), 3),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(_cx(lib, 1, 2, 4, 4, 4), 3),
    lambda lib: lib.nn.functional.lp_pool1d(_cx(lib, 1, 2, 8), 2, 2),
    lambda lib: lib.nn.functional.lp_pool3d(_cx(lib, 1, 2, 4, 4, 4), 2, 2),
    lambda lib: lib.nn.functional.max_unpool1d(_cx(lib, 1, 2, 4), lib.zeros(1, 2, 4, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.fractional_max_pool3d(_cx(lib, 1, 2, 8, 8, 8), 2, output_size=3),
    lambda lib: lib.nn.functional.interpolate(_cx(lib, 1, 2, 4, 4), scale_factor=0.5, mode="bicubic",
                                              antialias=True),
])
def test_complex_inputs_raise_torchs_kernel_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("shape,pad", [((1, 1, 0), (4, 4)), ((1, 0), (1, 1)), ((2, 0, 3), (1, 1)),
                                       ((1, 1, 2, 0), (1, 1, 1, 1)), ((1, 0, 3), (1, 1, 1, 1)),
                                       ((1, 1, 1, 1, 0), (1, 1, 1, 1, 1, 1))])
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_reflect_and_replicate_pads_refuse_empty_dims_but_the_batch(shape, pad, mode):
    same_error(lambda lib: lib.nn.functional.pad(lib.ones(shape), pad, mode=mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pads_of_an_empty_batch(mode):
    check(lambda lib, x: lib.nn.functional.pad(x, (1, 1), mode=mode), np.ones((0, 2, 3)), grad=False)
