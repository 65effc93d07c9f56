"""Bilinear (F.bilinear) and LazyLinear against torch."""
import numpy as np
import pytest

from nn._parity import module_parity
from oracle import assert_close, check, ember, same_error, torch

SHAPES = [((5, 2), (5, 3)), ((3, 4, 2), (3, 4, 3)), ((2,), (3,)), ((0, 2), (0, 3))]


@pytest.mark.parametrize("a,b", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_functional_bilinear_values_grads_gradgrad(a, b, bias):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(a), rng.standard_normal(b), rng.standard_normal((4, 2, 3))]
    if bias:
        arrays.append(rng.standard_normal(4))
    check(lambda lib, *ts: lib.nn.functional.bilinear(*ts), *arrays, gradgrad=True)


def test_functional_bilinear_float32_broadcast_bias_noncontiguous():
    rng = np.random.default_rng(1)
    x1, x2 = rng.standard_normal((3, 6)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)
    w, b = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((1,)).astype(np.float32)
    check(lambda lib, x, y, w: lib.nn.functional.bilinear(x.mT, y.mT, w), x1, x2, w)
    check(lambda lib, x, y, w, b: lib.nn.functional.bilinear(x.mT, y.mT, w, b.expand(2)), x1, x2, w, b)


@pytest.mark.parametrize("a,b,w,bias", [
    ((5, 2), (6, 3), (4, 2, 3), (4,)), ((5, 3), (5, 3), (4, 2, 3), (4,)), ((5, 2), (5, 4), (4, 2, 3), (4,)),
    ((5, 2), (5, 3), (4, 2, 3), (3,)), ((5, 2), (5,), (4, 2, 3), (4,))])
def test_functional_bilinear_errors(a, b, w, bias):
    same_error(lambda lib: lib.nn.functional.bilinear(lib.ones(a), lib.ones(b), lib.ones(w), lib.ones(bias)))


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module_parity_and_repr(bias):
    rng = np.random.default_rng(2)
    x1, x2 = rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal((6, 5)).astype(np.float32)
    module_parity(lambda lib: lib.nn.Bilinear(3, 5, 2, bias=bias), x1, x2)
    assert repr(ember.nn.Bilinear(3, 5, 2, bias=bias)) == repr(torch.nn.Bilinear(3, 5, 2, bias=bias))
    e = ember.nn.Bilinear(3, 5, 2, dtype=ember.float64)
    assert e.weight.shape == (2, 3, 5) and e.weight.dtype == ember.float64
    bound = 1 / np.sqrt(3)
    assert e.weight.abs().max().item() <= bound and e.bias.abs().max().item() <= bound
    same_error(lambda lib: lib.nn.Bilinear(0, 5, 2))


@pytest.mark.parametrize("bias", [True, False])
def test_lazy_linear_becomes_linear(bias):
    e, t = ember.nn.LazyLinear(3, bias=bias), torch.nn.LazyLinear(3, bias=bias)
    assert repr(e) == repr(t)
    assert repr(e.weight) == repr(t.weight) == "<UninitializedParameter>"
    assert {k: repr(v) for k, v in e.state_dict().items()} == {k: repr(v) for k, v in t.state_dict().items()}
    w = e.weight
    x = np.random.default_rng(3).standard_normal((4, 7)).astype(np.float32)
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    assert type(e) is ember.nn.Linear and type(t) is torch.nn.Linear
    assert repr(e) == repr(t) and e.weight is w and type(w) is ember.nn.Parameter
    assert ye.shape == yt.shape and ye.grad_fn.name() == yt.grad_fn.name()
    assert e.weight.abs().max().item() <= 1 / np.sqrt(7)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert not e._forward_pre_hooks


def test_lazy_linear_dtype_and_optimizer_sees_same_parameter():
    e = ember.nn.LazyLinear(2, dtype=ember.float64)
    opt = ember.optim.SGD(e.parameters(), lr=0.1)
    y = e(ember.ones(3, 5, dtype=ember.float64))
    assert e.weight.dtype == ember.float64 and e.weight.shape == (2, 5)
    before = e.weight.detach().clone()
    y.sum().backward()
    opt.step()
    assert not np.allclose(before.numpy(), e.weight.detach().numpy())


def test_lazy_linear_loads_a_state_dict_then_infers_in_features():
    t = torch.nn.Linear(6, 2)
    res = []
    for lib in (ember, torch):
        m = lib.nn.LazyLinear(2)
        m.load_state_dict({k: v.detach().numpy() if lib is ember else v for k, v in t.state_dict().items()})
        assert type(m) is lib.nn.LazyLinear and tuple(m.weight.shape) == (2, 6)
        res.append(m(lib.ones(3, 6)))
        assert type(m) is lib.nn.Linear and m.in_features == 6
    assert_close(*res)


def test_lazy_linear_loaded_shape_mismatch_error():
    sd = torch.nn.Linear(6, 2).state_dict()

    def run(lib):
        m = lib.nn.LazyLinear(2)
        m.load_state_dict({k: v.numpy() if lib is ember else v for k, v in sd.items()})
        m(lib.ones(3, 5))

    same_error(run)
