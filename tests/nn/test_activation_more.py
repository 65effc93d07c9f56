"""logsigmoid, hardshrink, softshrink, rrelu and their modules (plus Softmax2d) vs torch: values, grads, second
grads on random shapes, in-place forms, reprs, torch's errors; rrelu's random training slopes by their properties."""
from __future__ import annotations

import numpy as np
import pytest

from nn._parity import module_parity, reseeding
from oracle import check, same_error, ember, torch

rng = np.random.default_rng(7)
_reseed = reseeding(rng, 7)


def _x(shape, dtype=np.float64, scale=2.0):
    x = rng.standard_normal(shape) * scale
    for kink in (0.0, 0.5, -0.5, 0.3, -0.3):  # off the kinks of relu-like and shrink functions
        x = np.where(np.abs(x - kink) < 0.02, kink + 0.1, x)
    return x.astype(dtype)


FNS = {
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "hardshrink 0.3": lambda lib, x: lib.nn.functional.hardshrink(x, 0.3),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "softshrink 1.5": lambda lib, x: lib.nn.functional.softshrink(x, lambd=1.5),
    "rrelu eval": lambda lib, x: lib.nn.functional.rrelu(x),
    "rrelu eval bounds": lambda lib, x: lib.nn.functional.rrelu(x, 0.05, 0.6, training=False),
    "torch.rrelu eval": lambda lib, x: lib.rrelu(x, 0.2, 0.4),
    "torch.hardshrink": lambda lib, x: lib.hardshrink(x, 0.3),
    "Tensor.hardshrink": lambda lib, x: x.hardshrink(0.3),
}
SHAPES = [(), (7,), (3, 5), (2, 3, 4), (0, 3), (2, 1, 3, 2)]


@pytest.mark.parametrize("name", sorted(FNS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_values_grads_gradgrads(name, shape):
    eo, to = check(FNS[name], _x(shape), gradgrad=True)
    assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__


@pytest.mark.parametrize("name", sorted(FNS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_lower_precision(name, dtype):
    check(FNS[name], _x((4, 5), dtype), grad=dtype == np.float32, gradgrad=dtype == np.float32)


def test_logsigmoid_extremes_finite():
    x = np.array([-1e4, -200.0, -80.0, -1.0, 0.0, 1.0, 80.0, 200.0, 1e4], np.float32)
    eo, _ = check(FNS["logsigmoid"], x, gradgrad=True)
    assert np.isfinite(eo[0].detach().numpy()).all()


def test_shrinks_at_the_thresholds():
    x = np.array([-0.6, -0.5, -0.4, 0.0, 0.4, 0.5, 0.6], np.float64)
    check(FNS["hardshrink"], x, gradgrad=True)
    eo, to = check(FNS["softshrink"], x, gradgrad=True)
    assert (np.signbit(eo[0].detach().numpy()) == np.signbit(to[0].detach().numpy())).all()  # torch's -0.0


@pytest.mark.parametrize("name", ["hardshrink", "softshrink", "logsigmoid", "rrelu"])
def test_autograd_links_and_in_place(name):
    def fn(lib, x):
        y = x * 1.0
        if name == "rrelu":
            out = lib.nn.functional.rrelu(y, 0.1, 0.3, False, True)
            assert out is y
            z = x * 2.0
            assert lib.rrelu_(z, 0.1, 0.2) is z
            return y + z
        return getattr(lib.nn.functional, name)(y) * 2
    check(fn, _x((3, 4)), gradgrad=True)


def _rrelu_training(lib, x, lower, upper, inplace=False):
    t = lib.tensor(x, requires_grad=True)
    y = t * 1.0
    out = lib.nn.functional.rrelu(y, lower, upper, training=True, inplace=inplace)
    assert (out is y) == inplace
    g = lib.randn(*x.shape, dtype=lib.float64)
    (gx,) = lib.autograd.grad(out, t, g, create_graph=True)
    return out, g, gx, t


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
@pytest.mark.parametrize("lower,upper,inplace", [(1 / 8, 1 / 3, False), (0.1, 0.9, True), (0.25, 0.25, False)])
def test_rrelu_training_slopes(lib, lower, upper, inplace):
    """The same properties hold for torch and ember: positives pass unchanged, each negative is scaled by its own
    slope in [lower, upper], the slopes vary, and the gradient is the slope used (its own derivative is zero)."""
    x = _x((40, 50))
    out, g, gx, t = _rrelu_training(lib, x, lower, upper, inplace)
    o = out.detach().numpy()
    pos, neg = x > 0, x < 0
    np.testing.assert_array_equal(o[pos], x[pos])
    slopes = o[neg] / x[neg]
    assert slopes.min() >= lower - 1e-12 and slopes.max() <= upper + 1e-12
    if upper > lower:
        assert slopes.std() > (upper - lower) / 5  # U(lower, upper): std (upper - lower) / sqrt(12)
        assert abs(slopes.mean() - (lower + upper) / 2) < (upper - lower) / 10
    gn = gx.detach().numpy()
    np.testing.assert_allclose(gn[pos], g.numpy()[pos], rtol=0, atol=0)
    np.testing.assert_allclose(gn[neg], g.numpy()[neg] * slopes, rtol=1e-12)
    assert gx.grad_fn is not None and type(out.grad_fn).__name__.startswith("RreluWithNoiseBackward")
    (ggx,) = lib.autograd.grad(gx.sum(), t, allow_unused=True)
    assert ggx is None or not ggx.detach().numpy().any()


def test_rrelu_training_reproducible_with_seed_and_generator():
    x = ember.tensor(_x((6, 7)))
    ember.manual_seed(3)
    a = ember.nn.functional.rrelu(x, training=True)
    ember.manual_seed(3)
    b = ember.nn.functional.rrelu(x, training=True)
    c = ember.nn.functional.rrelu(x, training=True)
    assert (a.numpy() == b.numpy()).all() and not (a.numpy() == c.numpy()).all()
    gen = ember.Generator().manual_seed(5)
    d = ember.rrelu(x, training=True, generator=gen)
    e = ember.rrelu(x, training=True, generator=ember.Generator().manual_seed(5))
    assert (d.numpy() == e.numpy()).all()


def test_rrelu_module_train_and_eval():
    x = _x((5, 6))
    for lib in (ember, torch):
        m = lib.nn.RReLU(0.1, 0.3)
        t = lib.tensor(x)
        y = m(t).numpy()
        neg = x < 0
        s = y[neg] / x[neg]
        assert s.min() >= 0.1 - 1e-12 and s.max() <= 0.3 + 1e-12 and s.std() > 0
        m.eval()
        np.testing.assert_allclose(m(t).numpy(), np.where(x > 0, x, x * 0.2))


@pytest.mark.parametrize("ctor", [
    lambda nn: nn.LogSigmoid(), lambda nn: nn.Hardshrink(), lambda nn: nn.Hardshrink(0.3),
    lambda nn: nn.Softshrink(), lambda nn: nn.Softshrink(lambd=1.2), lambda nn: nn.RReLU(),
    lambda nn: nn.RReLU(0.1, 0.2, True), lambda nn: nn.RReLU(upper=0.5), lambda nn: nn.Softmax2d(),
], ids=["LogSigmoid", "Hardshrink", "Hardshrink 0.3", "Softshrink", "Softshrink 1.2", "RReLU", "RReLU inplace",
        "RReLU upper", "Softmax2d"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 5)], ids=str)
def test_modules_vs_torch(ctor, shape):
    inplace = getattr(ctor(torch.nn), "inplace", False)
    forward = (lambda m, x: m(x * 1.0)) if inplace else None
    module_parity(lambda lib: ctor(lib.nn), _x(shape), train=False, forward=forward)
    em, tm = ctor(ember.nn), ctor(torch.nn)
    assert repr(em) == repr(tm) and em.extra_repr() == tm.extra_repr()
    assert list(getattr(em, "__constants__", [])) == list(getattr(tm, "__constants__", []))


def test_softmax2d_second_grads():
    check(lambda lib, x: lib.nn.Softmax2d()(x), _x((2, 3, 2, 2)), gradgrad=True)


ERRORS = [
    lambda lib: lib.nn.functional.softshrink(lib.randn(3), -1.0),
    lambda lib: lib.nn.functional.softshrink(lib.randn(3, dtype=lib.float64), -0.25),
    lambda lib: lib.nn.functional.softshrink(lib.randn(3, dtype=lib.float16), -0.5),
    lambda lib: lib.nn.functional.logsigmoid(lib.tensor([1, -2, 3])),
    lambda lib: lib.nn.functional.hardshrink(lib.tensor([1, -2, 3])),
    lambda lib: lib.nn.functional.softshrink(lib.tensor([1, -2, 3])),
    lambda lib: lib.nn.functional.rrelu(lib.tensor([1, -2, 3])),
    lambda lib: lib.nn.functional.rrelu(lib.tensor([1, -2, 3]), training=True),
    lambda lib: lib.nn.functional.rrelu(lib.randn(3), 0.5, 0.1),
    lambda lib: lib.nn.functional.rrelu(lib.randn(3), 0.5, 0.1, training=True),
    lambda lib: lib.rrelu_(lib.randn(3), 0.5, 0.1),
    lambda lib: lib.nn.Softmax2d()(lib.randn(2, 3)),
    lambda lib: lib.nn.Softmax2d()(lib.randn(1, 2, 3, 4, 5)),
    lambda lib: lib.hardshrink([1.0]),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_torch(i):
    same_error(ERRORS[i])


def test_names_exist():
    for name in ("logsigmoid", "hardshrink", "softshrink", "rrelu", "rrelu_"):
        assert callable(getattr(ember.nn.functional, name)) and hasattr(torch.nn.functional, name)
    for name in ("LogSigmoid", "Hardshrink", "Softshrink", "RReLU", "Softmax2d"):
        assert issubclass(getattr(ember.nn, name), ember.nn.Module) and hasattr(torch.nn, name)
