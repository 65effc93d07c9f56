"""Activations and the softmax family vs torch: values, grads, second grads, modules, in-place, reprs."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import check, same_error, ember, torch
from nn._parity import module_parity, reseeding

rng = np.random.default_rng(0)
_reseed = reseeding(rng, 0)


def _x(shape=(3, 5), dtype=np.float64, scale=3.0):
    x = rng.standard_normal(shape) * scale
    x = np.where(np.abs(x) < 0.05, 0.3, x)  # off the kinks
    x = np.where(np.abs(np.abs(x) - 3) < 0.05, 2.5, x)  # off hardswish/hardsigmoid corners
    return x.astype(dtype)


SMOOTH = {
    "elu": lambda lib, x: lib.nn.functional.elu(x),
    "elu alpha": lambda lib, x: lib.nn.functional.elu(x, 0.7),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "celu": lambda lib, x: lib.nn.functional.celu(x, 1.7),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "gelu tanh": lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x),
    "softplus beta": lambda lib, x: lib.nn.functional.softplus(x, beta=2.0, threshold=3.0),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "tanhshrink": lambda lib, x: lib.nn.functional.tanhshrink(x),
    "sigmoid": lambda lib, x: lib.nn.functional.sigmoid(x),
    "tanh": lambda lib, x: lib.nn.functional.tanh(x),
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, dim=1),
    "softmax dim0": lambda lib, x: lib.nn.functional.softmax(x, dim=0),
    "log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x, dim=-1),
    "softmin": lambda lib, x: lib.nn.functional.softmin(x, dim=1),
    "glu": lambda lib, x: lib.nn.functional.glu(x[:, :4], dim=1),
    "normalize": lambda lib, x: lib.nn.functional.normalize(x, dim=1),
    "normalize p1": lambda lib, x: lib.nn.functional.normalize(x, p=3.0, dim=0),
    "cosine_similarity": lambda lib, x: lib.nn.functional.cosine_similarity(x, x.flip(0) if hasattr(x, "flip")
                                                                            else x * 2 + 1),
    "pairwise_distance": lambda lib, x: lib.nn.functional.pairwise_distance(x, x * 0.5 + 1),
}
PIECEWISE = {
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x * 3),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x, -2.0, 1.5),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.5, -2.0),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_smooth_vs_torch(name, dtype):
    fn = SMOOTH[name]
    if name == "cosine_similarity":
        fn = lambda lib, x: lib.nn.functional.cosine_similarity(x, x * x + 1)  # noqa: E731
    check(fn, _x(dtype=dtype), gradgrad=dtype == np.float64)


@pytest.mark.parametrize("name", sorted(PIECEWISE))
@pytest.mark.parametrize("shape", [(3, 5), (), (0, 4), (2, 3, 4)])
def test_piecewise_vs_torch(name, shape):
    check(PIECEWISE[name], _x(shape), gradgrad=name != "hardsigmoid")  # torch: no hardsigmoid double backward


@pytest.mark.parametrize("name", ["elu", "gelu", "silu", "softplus", "softmax", "log_softmax", "hardswish"])
def test_float16_and_grad_fn_names(name):
    fn = {**SMOOTH, **PIECEWISE}[name]
    check(fn, _x(dtype=np.float16, scale=1.0), grad=False)
    x = _x()
    e, t = fn(ember, ember.tensor(x, requires_grad=True)), fn(torch, torch.tensor(x, requires_grad=True))
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__


@pytest.mark.parametrize("fn", [lambda lib, x: lib.nn.functional.softmax(x, -1),
                                lambda lib, x: lib.nn.functional.log_softmax(x, -1),
                                lambda lib, x: lib.logsumexp(x, -1)])
def test_softmax_family_finite_for_large_inputs(fn):
    x = np.array([[1e4, 1e4 + 1, -1e4], [1e30, 1e30, 0.0]], np.float32)
    eo, _ = check(fn, x)
    assert np.isfinite(eo[0].detach().numpy()).all()


def test_softmax_implicit_dim_warns_and_picks_torchs_dim():
    x = _x((2, 3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension"):
        e = ember.nn.functional.softmax(ember.tensor(x))
    with pytest.warns(UserWarning):
        t = torch.nn.functional.softmax(torch.tensor(x))
    np.testing.assert_allclose(e.numpy(), t.numpy())


@pytest.mark.parametrize("name,ctor", [
    ("ReLU", lambda nn: nn.ReLU()), ("ReLU6", lambda nn: nn.ReLU6()), ("LeakyReLU", lambda nn: nn.LeakyReLU(0.3)),
    ("PReLU", lambda nn: nn.PReLU()), ("PReLU ch", lambda nn: nn.PReLU(4, 0.1)), ("ELU", lambda nn: nn.ELU(0.5)),
    ("SELU", lambda nn: nn.SELU()), ("CELU", lambda nn: nn.CELU(2.0)), ("GELU", lambda nn: nn.GELU("tanh")),
    ("SiLU", lambda nn: nn.SiLU()), ("Mish", lambda nn: nn.Mish()), ("Softplus", lambda nn: nn.Softplus(2, 5)),
    ("Softsign", lambda nn: nn.Softsign()), ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.5)),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid()), ("Hardswish", lambda nn: nn.Hardswish()),
    ("Sigmoid", lambda nn: nn.Sigmoid()), ("Tanh", lambda nn: nn.Tanh()), ("Tanhshrink", lambda nn: nn.Tanhshrink()),
    ("Softmax", lambda nn: nn.Softmax(dim=1)), ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=2)),
    ("Softmin", lambda nn: nn.Softmin(dim=-1)), ("GLU", lambda nn: nn.GLU(1)),
    ("Threshold", lambda nn: nn.Threshold(0.2, 20.0)), ("Flatten", lambda nn: nn.Flatten()),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 2))),
])
def test_modules_vs_torch(name, ctor):
    x = _x((2, 4, 3), np.float32)
    em, _ = module_parity(lambda lib: ctor(lib.nn), x)
    assert repr(ctor(ember.nn)) == repr(ctor(torch.nn))
    assert [n for n, _ in ctor(ember.nn).named_parameters()] == [n for n, _ in ctor(torch.nn).named_parameters()]


def test_distance_modules():
    a, b = _x((4, 5)), _x((4, 5))
    for ctor in (lambda nn: nn.CosineSimilarity(dim=1), lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True)):
        module_parity(lambda lib: ctor(lib.nn), a, b)
        assert repr(ctor(ember.nn)) == repr(ctor(torch.nn))


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "elu", "selu", "celu", "silu", "hardtanh", "relu6",
                                  "hardsigmoid", "hardswish", "mish", "threshold"])
def test_inplace_matches_torch(name):
    args = {"threshold": (0.1, 5.0)}.get(name, ())

    def fn(lib, x):
        y = x * 1.0
        out = getattr(lib.nn.functional, name)(y, *args, inplace=True)
        assert out is y
        return y

    check(fn, _x(), gradgrad=name != "hardsigmoid")


def test_relu_module_inplace():
    def fn(lib, x):
        y = x * 2
        out = lib.nn.ReLU(inplace=True)(y)
        assert out is y and y._version == 1 if hasattr(y, "_version") else True
        return y
    check(fn, _x())


def test_one_hot_and_gumbel():
    t = np.array([0, 3, 1, 2])
    for k in (-1, 6):
        e = ember.nn.functional.one_hot(ember.tensor(t), k)
        r = torch.nn.functional.one_hot(torch.tensor(t), k)
        assert e.dtype == ember.int64 and (e.numpy() == r.numpy()).all()
    same_error(lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 5]), 3))
    same_error(lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0]), 3))
    ember.manual_seed(0)
    logits = ember.tensor(_x((2000, 3), scale=0.5), requires_grad=True)
    y = ember.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0} and (y.detach().numpy().sum(1) == 1).all()
    freq = y.detach().numpy().mean(0)
    p = torch.softmax(torch.tensor(logits.detach().numpy()), 1).mean(0).numpy()
    assert np.abs(freq - p).max() < 0.06  # argmax of Gumbel-perturbed logits ~ Categorical(softmax(logits))
    y.sum(0)[0].backward()
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all()
    soft = ember.nn.functional.gumbel_softmax(logits, tau=1.0)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), 1, rtol=1e-6)


def test_errors_like_torch():
    same_error(lambda lib: lib.nn.functional.glu(lib.ones(3, 3)))
    same_error(lambda lib: lib.nn.functional.gelu(lib.ones(3), approximate="foo"))
    same_error(lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2)))
    same_error(lambda lib: lib.nn.Hardtanh(1.0, -1.0))


@pytest.mark.parametrize("shape,bias", [((4, 3), True), ((4, 3), False), ((2, 4, 3), True), ((3,), True)])
def test_linear_vs_torch(shape, bias):
    x, w, b = _x(shape), _x((5, 3)), _x((5,))
    fn = (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b)) if bias else \
        (lambda lib, x, w, b: lib.nn.functional.linear(x, w) + b * 0)
    eo, to = check(fn, x, w, b, gradgrad=True)
    if bias and len(shape) == 2 and hasattr(ember.ops.linalg, "addmm"):
        assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__ == "AddmmBackward0"


EDGES = {
    "cosine_similarity zero vector": (lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b),
                                      np.zeros((2, 3)), np.ones((2, 3))),
    "cosine_similarity broadcast": (lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim=-1),
                                    _x((3, 4)), _x((1, 4))),
    "pairwise_distance 1-d": (lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b), _x((4,)), _x((4,))),
    "pairwise_distance p3 keepdim": (lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b, 3.0, keepdim=True),
                                     _x((2, 4)), _x((2, 4))),
    "softmax empty": (lambda lib, a: lib.nn.functional.softmax(a, 1), np.zeros((0, 3))),
    "log_softmax -inf entry": (lambda lib, a: lib.nn.functional.log_softmax(
        a + lib.tensor([0.0, -float("inf"), 0.0], dtype=lib.float64), 1), _x((2, 3))),
    "softmax dtype": (lambda lib, a: lib.nn.functional.softmax(a, 1, dtype=lib.float64), _x((2, 3), np.float32)),
    "normalize zeros": (lambda lib, a: lib.nn.functional.normalize(a), np.zeros((2, 3))),
    "softplus large": (lambda lib, a: lib.nn.functional.softplus(a * 1000), _x((5,))),
    "elu large negative": (lambda lib, a: lib.nn.functional.elu(a * 1000), _x((5,))),
    "relu6 int": (lambda lib, a: lib.nn.functional.relu6(a), np.array([-1, 3, 8])),
    "hardtanh int": (lambda lib, a: lib.nn.functional.hardtanh(a, -2, 2), np.array([-5, 1, 8])),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_cases(name):
    fn, *arrays = EDGES[name]
    check(fn, *arrays)


@pytest.mark.parametrize("name", ["elu", "celu", "leaky_relu", "hardsigmoid", "hardswish", "softplus", "gelu",
                                  "silu", "mish"])
def test_integer_inputs_error_like_torch(name):
    same_error(lambda lib: getattr(lib.nn.functional, name)(lib.tensor([1, -2])))


def test_softmax_integer_error_like_torch():
    same_error(lambda lib: lib.nn.functional.softmax(lib.tensor([1, -2]), 0))
    same_error(lambda lib: lib.nn.functional.log_softmax(lib.tensor([1, -2]), 0))
