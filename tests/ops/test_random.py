"""Random sampling (ops/random.py): what the op table cannot express.

Streams need not equal torch's; node names, zero gradients, shapes, dtypes, argument errors, leaf rules,
determinism under seeds/Generators and the sampled distributions are checked (against torch where it can
compute them). Moment checks use large samples and bounds of several standard errors.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import ember, same_error, to_np, torch

N = 200_000

INPLACE = [  # (method, args): every in-place sampler and overload
    ("uniform_", (-1.0, 2.0)), ("normal_", (1.0, 2.0)), ("log_normal_", (0.0, 0.5)), ("cauchy_", (1.0, 2.0)),
    ("exponential_", (2.0,)), ("geometric_", (0.3,)), ("random_", (2, 9)), ("random_", (7,)), ("random_", ()),
    ("bernoulli_", (0.3,)), ("bernoulli_", ("tensor",)),
]


def _args(lib, args):
    return tuple(lib.full((1,), 0.25) if a == "tensor" else a for a in args)


@pytest.mark.parametrize("name,args", INPLACE, ids=[f"{n}{a}" for n, a in INPLACE])
def test_inplace_node_names_and_zero_grads(name, args) -> None:
    names, grads = [], []
    for lib in (ember, torch):
        x = lib.randn(4, requires_grad=True)
        y = x * 1
        out = getattr(y, name)(*_args(lib, args))
        assert out is y
        names.append(type(y.grad_fn).__name__)
        (g,) = lib.autograd.grad(y.sum(), x)
        grads.append(to_np(g))
    assert names[0] == names[1]
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("name,args", INPLACE, ids=[f"{n}{a}" for n, a in INPLACE])
def test_inplace_on_leaf_requiring_grad(name, args) -> None:
    same_error(lambda lib: getattr(lib.randn(4, requires_grad=True), name)(*_args(lib, args)))
    for lib in (ember, torch):  # allowed under no_grad; the leaf stays a leaf requiring grad
        x = lib.zeros(4, requires_grad=True)
        with lib.no_grad():
            getattr(x, name)(*_args(lib, args))
        assert x.is_leaf and x.requires_grad and x.grad_fn is None


def test_inplace_sampler_on_view_of_graph_tensor() -> None:
    res = []
    for lib in (ember, torch):
        x = lib.randn(3, 4, requires_grad=True)
        y = x * 2
        v = y[:, 1]
        v.normal_()
        y.t()[0].uniform_()
        (g,) = lib.autograd.grad(y.sum(), x)
        res.append((type(y.grad_fn).__name__, to_np(g).tolist()))
    assert res[0] == res[1]


def test_inplace_bumps_version_and_breaks_saved_values() -> None:
    def run(lib):
        x = lib.randn(3, requires_grad=True)
        y = x * 1
        z = y.exp()  # saves its result
        z.normal_()
        z.sum().backward()
    same_error(run)


def test_bernoulli_p_tensor_gradient_reaches_p() -> None:
    res = []
    for lib in (ember, torch):
        x, p = lib.randn(3, requires_grad=True), lib.full((3,), 0.5, requires_grad=True)
        y = (x * 1).bernoulli_(p)
        res.append((type(y.grad_fn).__name__, [to_np(g) for g in lib.autograd.grad(y.sum(), [x, p])]))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_array_equal(a, b)


NORMAL_CALLS = [
    ("tensor, tensor", lambda lib, m, s: lib.normal(m, s)),
    ("tensor, float", lambda lib, m, s: lib.normal(m, 2.0)),
    ("float, tensor", lambda lib, m, s: lib.normal(1.0, s)),
    ("mean= only", lambda lib, m, s: lib.normal(mean=m)),
]


@pytest.mark.parametrize("call", [c for _, c in NORMAL_CALLS], ids=[n for n, _ in NORMAL_CALLS])
@pytest.mark.parametrize("shapes,dts", [(((2, 3), (3,)), (np.float32, np.float32)),
                                        (((), (4,)), (np.float64, np.float32)),
                                        (((4,), ()), (np.float16, np.float64)),
                                        (((0, 2), (2,)), (np.float32, np.float64))])
def test_normal_overloads_shape_dtype_grads(call, shapes, dts) -> None:
    rng = np.random.default_rng(0)
    out = []
    for lib in (ember, torch):
        m = lib.tensor(rng.standard_normal(shapes[0]).astype(dts[0]), requires_grad=True)
        s = lib.tensor(np.abs(rng.standard_normal(shapes[1])).astype(dts[1]), requires_grad=True)
        y = call(lib, m, s)
        gs = lib.autograd.grad(y.sum(), [m, s], allow_unused=True)
        out.append((tuple(y.shape), str(y.dtype), type(y.grad_fn).__name__,
                    [None if g is None else (to_np(g).tolist(), str(g.dtype)) for g in gs]))
    assert out[0] == out[1]


def test_normal_size_overload() -> None:
    for kw in ({}, {"dtype": "float64"}, {"requires_grad": True}):
        res = []
        for lib in (ember, torch):
            k = {n: (getattr(lib, v) if n == "dtype" else v) for n, v in kw.items()}
            y = lib.normal(2.0, 3.0, (3, 2), **k)
            res.append((tuple(y.shape), str(y.dtype), y.requires_grad, y.is_leaf))
        assert res[0] == res[1]
    for lib in (ember, torch):  # 0-d tensors stand for numbers with size=
        assert tuple(lib.normal(lib.tensor(0.), lib.tensor(1.), (4,)).shape) == (4,)
    e = ember.empty(5)
    assert ember.normal(ember.zeros(5), 1.0, out=e) is e


ERRORS = {
    "normal std<0": lambda lib: lib.normal(lib.zeros(2, 3), -1.),
    "normal std tensor<0": lambda lib: lib.normal(lib.zeros(2, 3), -lib.ones(3)),
    "normal size std<0": lambda lib: lib.normal(0., -1., size=(2,)),
    "normal std nan": lambda lib: lib.zeros(3).normal_(0, float("nan")),
    "normal bad broadcast": lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(4)),
    "normal int mean": lambda lib: lib.normal(lib.zeros(3, dtype=lib.int64), 1.),
    "normal int std": lambda lib: lib.normal(1, lib.ones(3, dtype=lib.int64)),
    "normal int dtype": lambda lib: lib.normal(0, 1, size=(3,), dtype=lib.int64),
    "normal no size": lambda lib: lib.normal(0., 1.),
    "normal tensor with size": lambda lib: lib.normal(lib.zeros(3), 1, (3,)),
    "normal_ int": lambda lib: lib.zeros(3, dtype=lib.int64).normal_(),
    "bernoulli p>1": lambda lib: lib.bernoulli(lib.tensor([1.5])),
    "bernoulli p<0": lambda lib: lib.bernoulli(lib.tensor([-0.5])),
    "bernoulli p= >1": lambda lib: lib.bernoulli(lib.rand(3), 1.5),
    "bernoulli int": lambda lib: lib.bernoulli(lib.tensor([1, 0])),
    "bernoulli bool": lambda lib: lib.bernoulli(lib.tensor([True])),
    "bernoulli_ int p": lambda lib: lib.zeros(3).bernoulli_(lib.tensor([1, 0, 1])),
    "bernoulli_ p shape": lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.5, 0.2])),
    "bernoulli_ p tensor>1": lambda lib: lib.zeros(3).bernoulli_(lib.tensor(1.5)),
    "bernoulli_ p>1": lambda lib: lib.zeros(3).bernoulli_(1.5),
    "uniform_ from>to": lambda lib: lib.zeros(3).uniform_(2, 1),
    "uniform_ inf": lambda lib: lib.zeros(3).uniform_(float("inf"), float("inf")),
    "uniform_ to too big": lambda lib: lib.zeros(3).uniform_(0, 1e39),
    "uniform_ range too big": lambda lib: lib.zeros(3).uniform_(-1e38, 3e38),
    "uniform_ int": lambda lib: lib.zeros(3, dtype=lib.int64).uniform_(),
    "log_normal_ std=0": lambda lib: lib.zeros(3).log_normal_(1, 0),
    "log_normal_ int": lambda lib: lib.zeros(3, dtype=lib.int64).log_normal_(),
    "cauchy_ sigma<0": lambda lib: lib.zeros(3).cauchy_(1, -1),
    "cauchy_ int": lambda lib: lib.zeros(3, dtype=lib.int64).cauchy_(),
    "cauchy_ uint8": lambda lib: lib.zeros(3, dtype=lib.uint8).cauchy_(),
    "exponential_ 0": lambda lib: lib.zeros(3).exponential_(0),
    "exponential_ int16": lambda lib: lib.zeros(3, dtype=lib.int16).exponential_(),
    "geometric_ p=1": lambda lib: lib.zeros(3).geometric_(1),
    "geometric_ p=0": lambda lib: lib.zeros(3).geometric_(0),
    "geometric_ bool": lambda lib: lib.zeros(3, dtype=lib.bool).geometric_(0.5),
    "random_ from=to": lambda lib: lib.zeros(3).random_(5, 5),
    "random_ to=0": lambda lib: lib.zeros(3).random_(0),
    "random_ to<0": lambda lib: lib.zeros(3).random_(-1),
    "random_ uint8 to": lambda lib: lib.zeros(3, dtype=lib.uint8).random_(300),
    "random_ uint8 from": lambda lib: lib.zeros(3, dtype=lib.uint8).random_(-3, 5),
    "random_ bool to": lambda lib: lib.zeros(3, dtype=lib.bool).random_(3),
    "random_ half to": lambda lib: lib.zeros(3, dtype=lib.float16).random_(2 ** 20),
    "random_ float arg": lambda lib: lib.zeros(3, dtype=lib.int64).random_(1.5),
    "random_ from_ kw": lambda lib: lib.zeros(3, dtype=lib.int64).random_(from_=2),
    "poisson negative": lambda lib: lib.poisson(-lib.ones(2)),
    "poisson int": lambda lib: lib.poisson(lib.tensor([1, 2])),
    "multinomial too many": lambda lib: lib.multinomial(lib.tensor([0., 1., 0.]), 4),
    "multinomial negative": lambda lib: lib.multinomial(lib.tensor([0., 1., -1.]), 1),
    "multinomial inf": lambda lib: lib.multinomial(lib.tensor([0., 1., float("inf")]), 1),
    "multinomial nan": lambda lib: lib.multinomial(lib.tensor([0., 1., float("nan")]), 1),
    "multinomial zero sum": lambda lib: lib.multinomial(lib.tensor([[0., 0.], [1, 1]]), 1),
    "multinomial int": lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    "multinomial n=0": lambda lib: lib.multinomial(lib.tensor([1., 2]), 0),
    "multinomial n<0": lambda lib: lib.multinomial(lib.tensor([1., 2]), -1),
    "multinomial 0-d": lambda lib: lib.multinomial(lib.tensor(1.), 1),
    "multinomial 3-d": lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    "multinomial float n": lambda lib: lib.multinomial(lib.tensor([1., 2]), 1.5),
    "multinomial empty rows": lambda lib: lib.multinomial(lib.ones(2, 0), 1),
}


@pytest.mark.parametrize("fn", list(ERRORS.values()), ids=list(ERRORS))
def test_argument_errors(fn) -> None:
    same_error(fn)


def test_bernoulli_with_p_has_no_derivative() -> None:
    def run(lib):
        x = lib.randn(3, requires_grad=True)
        y = lib.bernoulli(x, 0.3)
        assert y.requires_grad and type(y.grad_fn).__name__ == "NotImplemented"
        y.sum().backward()
    same_error(run)


def test_random_from_to_kwargs_and_open_top() -> None:
    for lib in (ember, torch):
        assert (lib.zeros(50, dtype=lib.int64).random_(2, to=3) == 2).all()
        y = lib.zeros(1000, dtype=lib.int64).random_(to=3)
        assert set(y.tolist()) == {0, 1, 2}
        assert (lib.zeros(100, dtype=lib.int64).random_(2, None) >= 2).all()
    names = []
    for lib in (ember, torch):
        x = lib.randn(3, requires_grad=True)
        names.append([type((x * 1).random_(*a, **k).grad_fn).__name__
                      for a, k in [((), {"to": 3}), ((1,), {"to": 3}), ((1, 3), {}), ((3,), {}), ((), {})]])
    assert names[0] == names[1]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                                   "float64"])
def test_random_default_range_per_dtype(dtype) -> None:
    e = ember.zeros(20000, dtype=getattr(ember, dtype)).random_()
    t = torch.zeros(20000, dtype=getattr(torch, dtype)).random_()
    assert e.dtype == getattr(ember, dtype)
    top = {"bool": 1, "float16": 2 ** 11, "float32": 2 ** 24, "float64": 2 ** 53}.get(dtype)
    top = top if top is not None else np.iinfo(getattr(np, dtype)).max
    ev, tv = to_np(e).astype(np.float64), to_np(t).astype(np.float64)
    for v in (ev, tv):
        assert v.min() >= 0 and v.max() <= top
        assert v.mean() == pytest.approx(top / 2, rel=0.05)


# ---------------------------------------------------------------- determinism
SAMPLERS = {
    "rand": lambda lib, **g: lib.rand(5, **g),
    "randn": lambda lib, **g: lib.randn(5, **g),
    "randint": lambda lib, **g: lib.randint(0, 100, (5,), **g),
    "randperm": lambda lib, **g: lib.randperm(10, **g),
    "normal": lambda lib, **g: lib.normal(lib.zeros(5), lib.ones(5), **g),
    "normal size": lambda lib, **g: lib.normal(0., 1., (5,), **g),
    "bernoulli": lambda lib, **g: lib.bernoulli(lib.full((50,), 0.5), **g),
    "poisson": lambda lib, **g: lib.poisson(lib.full((5,), 4.0), **g),
    "multinomial": lambda lib, **g: lib.multinomial(lib.ones(2, 6), 4, **g),
    "multinomial repl": lambda lib, **g: lib.multinomial(lib.ones(6), 20, True, **g),
    "_standard_gamma": lambda lib, **g: lib._standard_gamma(lib.full((6,), 0.3), **g),
    "_sample_dirichlet": lambda lib, **g: lib._sample_dirichlet(lib.full((2, 3), 0.7), **g),
    "binomial": lambda lib, **g: lib.binomial(lib.full((6,), 9.0), lib.full((6,), 0.4), **g),
    **{name: (lambda n, a: lambda lib, **g: getattr(lib.zeros(6), n)(*_args(lib, a), **g))(name, args)
       for name, args in INPLACE},
}


@pytest.mark.parametrize("draw", list(SAMPLERS.values()), ids=list(SAMPLERS))
def test_seed_determinism(draw) -> None:
    ember.manual_seed(123)
    a = to_np(draw(ember))
    ember.manual_seed(123)
    b = to_np(draw(ember))
    ember.manual_seed(124)
    c = to_np(draw(ember))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    ember.manual_seed(5)
    state = ember.get_rng_state()
    np.testing.assert_array_equal(to_np(draw(ember, generator=g1)), to_np(draw(ember, generator=g2)))
    assert ember.get_rng_state().equal(state)  # an explicit generator leaves the default one alone
    assert isinstance(torch.manual_seed(0), torch.Generator) and isinstance(ember.manual_seed(0), ember.Generator)


def test_generator_state_round_trip() -> None:
    g = ember.Generator().manual_seed(3)
    state = g.get_state()
    a = ember.randn(4, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(to_np(ember.randn(4, generator=g)), to_np(a))
    assert g.initial_seed() == 3
    ember.manual_seed(11)
    s = ember.get_rng_state()
    x = ember.zeros(5).uniform_()
    ember.set_rng_state(s)
    np.testing.assert_array_equal(to_np(ember.zeros(5).uniform_()), to_np(x))
    assert s.dtype == ember.uint8 and s.ndim == 1


# ---------------------------------------------------------------- distributions
def _sample(name, args, dtype="float64"):
    ember.manual_seed(2024)
    return to_np(getattr(ember.zeros(N, dtype=getattr(ember, dtype)), name)(*args)).astype(np.float64)


def _close(v, mean, sd) -> None:
    """Sample mean within 6 standard errors; sample sd within 2%."""
    assert abs(v.mean() - mean) < 6 * sd / math.sqrt(len(v)), (v.mean(), mean)
    assert v.std() == pytest.approx(sd, rel=0.02)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_uniform_and_normal_moments(dtype) -> None:
    v = _sample("uniform_", (-1.0, 3.0), dtype)
    assert v.min() >= -1.0 and v.max() <= 3.0
    _close(v, 1.0, 4 / math.sqrt(12))
    _close(_sample("normal_", (2.0, 0.5), dtype), 2.0, 0.5)


def test_other_inplace_distributions() -> None:
    m, s = 0.5, 0.4
    _close(_sample("log_normal_", (m, s)), math.exp(m + s * s / 2), math.sqrt((math.exp(s * s) - 1)
                                                                              * math.exp(2 * m + s * s)))
    _close(_sample("exponential_", (4.0,)), 0.25, 0.25)
    g = _sample("geometric_", (0.3,))
    assert g.min() == 1 and (g == np.round(g)).all()
    _close(g, 1 / 0.3, math.sqrt(0.7) / 0.3)
    c = _sample("cauchy_", (1.0, 2.0))
    q1, med, q3 = np.quantile(c, [0.25, 0.5, 0.75])
    assert med == pytest.approx(1.0, abs=0.05) and q1 == pytest.approx(-1.0, abs=0.06) \
        and q3 == pytest.approx(3.0, abs=0.06)
    b = _sample("bernoulli_", (0.3,))
    assert set(np.unique(b)) == {0.0, 1.0}
    _close(b, 0.3, math.sqrt(0.21))
    r = _sample("random_", (3, 8))
    assert set(np.unique(r)) == {3, 4, 5, 6, 7}
    _close(r, 5.0, math.sqrt(2.0))


def test_out_of_place_distributions() -> None:
    ember.manual_seed(0)
    mean = ember.tensor([[-3.0], [0.0], [5.0]])
    std = ember.tensor([0.5, 1.0, 2.0, 0.0])
    y = ember.normal(mean[:, :, None], std[:, None].expand(4, 20000))  # broadcast to (3, 4, 20000)
    v = to_np(y)
    for i, m in enumerate([-3.0, 0.0, 5.0]):
        for j, s in enumerate([0.5, 1.0, 2.0, 0.0]):
            if s == 0:
                assert (v[i, j] == m).all()
            else:
                _close(v[i, j], m, s)
    p = ember.tensor([0.1, 0.5, 0.9]).expand(N, 3)
    b = to_np(ember.bernoulli(p))
    for j, q in enumerate([0.1, 0.5, 0.9]):
        _close(b[:, j], q, math.sqrt(q * (1 - q)))
    rate = to_np(ember.poisson(ember.full((N,), 3.5, dtype=ember.float64)))
    _close(rate, 3.5, math.sqrt(3.5))
    assert (to_np(ember.poisson(ember.zeros(10))) == 0).all()


def test_multinomial_frequencies() -> None:
    ember.manual_seed(1)
    w = np.array([0.0, 1.0, 3.0, 0.0, 6.0])
    p = w / w.sum()
    s = to_np(ember.multinomial(ember.tensor(w), N, replacement=True))
    freq = np.bincount(s, minlength=5) / N
    assert freq[0] == 0 and freq[3] == 0
    np.testing.assert_allclose(freq, p, atol=6 * math.sqrt(0.25 / N))
    rows = to_np(ember.multinomial(ember.tensor(w).expand(N // 5, 5), 3))  # without replacement
    assert rows.shape == (N // 5, 3)
    assert all(len(set(r)) == 3 for r in rows[:1000])
    assert not np.isin(rows, [0, 3]).any()  # only 3 positive categories: all of them, never a zero one
    first = np.bincount(rows[:, 0], minlength=5) / len(rows)
    np.testing.assert_allclose(first, p, atol=6 * math.sqrt(0.25 / len(rows)))
    # rows are independent distributions
    two = to_np(ember.multinomial(ember.tensor([[1.0, 0, 0], [0, 0, 2.0], [1.0, 1.0, 0]]), 20000, True))
    assert (two[0] == 0).all() and (two[1] == 2).all() and set(two[2].tolist()) == {0, 1}
    assert abs(two[2].mean() - 0.5) < 6 * math.sqrt(0.25 / 20000)
    # more draws than positive categories: the zero-weight categories come last
    r = to_np(ember.multinomial(ember.tensor([0.0, 1.0, 0.0]), 3))
    assert r[0] == 1 and sorted(r) == [0, 1, 2]


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(0, 4), n=st.integers(1, 6), k=st.integers(1, 8), repl=st.booleans(),
       two_d=st.booleans(), dtype=st.sampled_from(["float16", "float32", "float64"]))
def test_multinomial_shapes_match_torch(rows, n, k, repl, two_d, dtype) -> None:
    if not two_d and rows == 0:
        rows = 1
    shape = (rows, n) if two_d else (n,)
    w = np.random.default_rng(rows * 100 + n).uniform(0.1, 1.0, shape).astype(dtype)
    res = []
    for lib in (ember, torch):
        try:
            y = lib.multinomial(lib.tensor(w), k, repl)
            res.append((tuple(y.shape), str(y.dtype), bool((y >= 0).all() and (y < n).all())))
        except RuntimeError as e:
            res.append(str(e))
    assert res[0] == res[1]
    if isinstance(res[0], tuple) and not repl and k <= n:
        y = to_np(ember.multinomial(ember.tensor(w), k)).reshape(-1, k)
        assert all(len(set(r)) == k for r in y)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_out_of_place_dtypes_and_shapes_match_torch(dtype) -> None:
    for shape in [(), (0,), (2, 3)]:
        res = []
        for lib in (ember, torch):
            p = lib.full(shape, 0.5, dtype=getattr(lib, dtype))
            outs = [lib.bernoulli(p), lib.poisson(p), p.bernoulli(), p.bernoulli(0.2), lib.normal(p, 1.0),
                    lib.rand_like(p), lib.randn_like(p)]
            res.append([(tuple(o.shape), str(o.dtype)) for o in outs])
        assert res[0] == res[1]


def test_bernoulli_inplace_on_integer_and_bool() -> None:
    for dt in ("int64", "bool", "uint8"):
        e = ember.zeros(1000, dtype=getattr(ember, dt)).bernoulli_(0.5)
        t = torch.zeros(1000, dtype=getattr(torch, dt)).bernoulli_(0.5)
        assert str(e.dtype) == str(t.dtype)
        assert set(to_np(e).astype(int).tolist()) == {0, 1}
    assert set(to_np(ember.zeros(1000, dtype=ember.int64).geometric_(0.5)).tolist()) >= {1, 2}


# ---------------------------------------------------------------- random factories (ember/_factories.py)
FACTORY_ERRORS = {
    "randperm negative": lambda lib: lib.randperm(-1),
    "rand int dtype": lambda lib: lib.rand(2, dtype=lib.int64),
    "randn int dtype": lambda lib: lib.randn(2, dtype=lib.int32),
    "rand_like int": lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.int64)),
    "randn_like bool": lambda lib: lib.randn_like(lib.zeros(2, dtype=lib.bool)),
    "randint low=high": lambda lib: lib.randint(5, 5, (3,)),
    "randint overflow": lambda lib: lib.randint(0, 2 ** 70, (3,)),
    "randint uint8 high": lambda lib: lib.randint(0, 300, (3,), dtype=lib.uint8),
    "randint uint8 low": lambda lib: lib.randint(-5, 5, (3,), dtype=lib.uint8),
    "randint int requires grad": lambda lib: lib.randint(0, 5, (3,), requires_grad=True),
}


@pytest.mark.parametrize("fn", list(FACTORY_ERRORS.values()), ids=list(FACTORY_ERRORS))
def test_factory_errors(fn) -> None:
    same_error(fn)


def test_factory_overloads_shapes_dtypes() -> None:
    calls = [lambda lib: lib.randint(3, (2, 2)), lambda lib: lib.randint(2, 9, size=(4,)),
             lambda lib: lib.randint(0, 5, (3,), dtype=lib.float32), lambda lib: lib.randint_like(lib.zeros(2), 5),
             lambda lib: lib.randint_like(lib.zeros(2, dtype=lib.int8), 2, 5), lambda lib: lib.randperm(0),
             lambda lib: lib.randperm(5, dtype=lib.float64), lambda lib: lib.rand(2, 3, dtype=lib.float16),
             lambda lib: lib.randn((2, 3)), lambda lib: lib.rand(0)]
    for call in calls:
        e, t = call(ember), call(torch)
        assert (tuple(e.shape), str(e.dtype)) == (tuple(t.shape), str(t.dtype))
    ember.manual_seed(0)
    assert set(to_np(ember.randint(3, (1000,))).tolist()) == {0, 1, 2}
    assert sorted(to_np(ember.randperm(50)).tolist()) == list(range(50))
    assert set(to_np(ember.randint(-3, -1, (500,), dtype=ember.int8)).tolist()) == {-3, -2}


def test_overflow_saturates_silently() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for lib in (ember, torch):
            assert lib.isinf(lib.zeros(10).log_normal_(100.0, 1.0)).all()
            assert lib.isinf(lib.zeros(10, dtype=lib.float16).normal_(1e6, 1.0)).all()


# ---------------------------------------------------------------- Gamma, Dirichlet, binomial (torch.distributions' kernels)
GAMMA_ERRORS = [
    lambda lib: lib._standard_gamma(lib.tensor([1, 2])),
    lambda lib: lib._sample_dirichlet(lib.tensor([1, 2])),
    lambda lib: lib._standard_gamma_grad(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.binomial(lib.tensor([1, 2]), lib.tensor([1, 1])),
    lambda lib: lib.binomial(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.5], dtype=lib.float64)),
    lambda lib: lib.binomial(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.5, 0.5])),
    lambda lib: lib.binomial(lib.tensor([3.0], requires_grad=True), lib.tensor([0.5])).sum().backward(),
    lambda lib: lib._sample_dirichlet(lib.tensor([1.0, 2.0], requires_grad=True)).sum().backward(),
]


@pytest.mark.parametrize("fn", GAMMA_ERRORS, ids=range(len(GAMMA_ERRORS)))
def test_gamma_family_errors(fn) -> None:
    same_error(fn)


def test_standard_gamma_moments_dtypes_and_node() -> None:
    alpha = np.array([0.01, 0.3, 1.0, 4.5, 80.0])
    ember.manual_seed(0)
    for dtype in (ember.float32, ember.float64):
        x = ember._standard_gamma(ember.tensor(alpha, dtype=dtype).expand(N, 5))
        assert x.dtype == dtype and x.shape == (N, 5)
        v = to_np(x).astype(np.float64)
        assert (v > 0).all()  # clamped to the smallest normal number, as torch's kernel
        assert (np.abs(v.mean(0) - alpha) < 6 * np.sqrt(alpha / N)).all()
        var_se = alpha * np.sqrt((6 / alpha + 2) / N)  # kurtosis of Gamma(a) is 6 / a
        assert (np.abs(v.var(0) - alpha) < 6 * var_se).all()
    a = ember.tensor(alpha, requires_grad=True)
    y = ember._standard_gamma(a)
    assert type(y.grad_fn).__name__ == "StandardGammaBackward0"
    (g,) = ember.autograd.grad(y.sum(), a, create_graph=True)
    same_error(lambda lib: lib.autograd.grad(lib.autograd.grad(
        lib._standard_gamma(lib.tensor([2.0], requires_grad=True)).sum(), [], allow_unused=True) or
        lib._standard_gamma_grad(lib.tensor([2.0], requires_grad=True), lib.tensor([1.0])).sum(),
        []) if False else lib.autograd.grad(lib._standard_gamma_grad(
            lib.tensor([2.0], requires_grad=True), lib.tensor([1.0])).sum(), []), match_words=[])


def test_standard_gamma_grad_against_mpmath_and_torch() -> None:
    """dx/dalpha at fixed CDF level: -(dP(alpha, x)/dalpha) / p(x) from mpmath, over shapes from 1e-3 to 1e5 and
    samples from the far left tail (x = 1e-300) to the right tail; torch's approximation agrees to ~1e-4."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    rng = np.random.default_rng(0)
    alphas, xs = [], []
    for a in (1e-3, 0.02, 0.3, 0.9, 1.0, 2.5, 7.0, 30.0, 300.0, 3000.0, 2e4, 1e5):
        draws = np.maximum(rng.standard_gamma(a, 4), 1e-300)
        alphas += [a] * 6
        xs += list(draws) + [a * 0.2 + 1e-200, a * 3 + 2]
    alphas, xs = np.array(alphas), np.array(xs)
    got = to_np(ember._standard_gamma_grad(ember.tensor(alphas), ember.tensor(xs)))
    for a, x, g in zip(alphas, xs, got):
        ma, mx = mpmath.mpf(a), mpmath.mpf(x)
        if x < a:  # differentiate the smaller of P and Q = 1 - P, so that no digits cancel
            dP = mpmath.diff(lambda s: mpmath.gammainc(s, 0, mx, regularized=True), ma)
        else:
            dP = -mpmath.diff(lambda s: mpmath.gammainc(s, mx, mpmath.inf, regularized=True), ma)
        exact = float(-dP / (mx ** (ma - 1) * mpmath.exp(-mx) / mpmath.gamma(ma)))
        assert g == pytest.approx(exact, rel=1e-6, abs=1e-300), (a, x)
    theirs = to_np(torch._standard_gamma_grad(torch.tensor(alphas), torch.tensor(xs)))
    ok = np.isfinite(theirs) & (np.abs(theirs) > 1e-250)
    np.testing.assert_allclose(got[ok], theirs[ok], rtol=2e-3)


def test_log_space_gamma_keeps_tiny_concentrations_finite() -> None:
    """Dirichlet samples for concentrations ~0.01 (Gamma samples far below the float range) stay on the simplex
    and their gradients finite, where normalising linear-space Gamma samples would give 0/0."""
    ember.manual_seed(1)
    c = ember.tensor([0.005, 0.01, 0.02], dtype=ember.float64, requires_grad=True)
    x = ember.distributions.Dirichlet(c).rsample((2000,))
    v = to_np(x)
    assert np.isfinite(v).all() and np.allclose(v.sum(-1), 1.0)
    (g,) = ember.autograd.grad((x * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum(), c)
    assert np.isfinite(to_np(g)).all()
    d = to_np(ember._sample_dirichlet(ember.tensor([[1e-3, 1e-3, 1e-3]]).expand(1000, 3)))
    assert np.isfinite(d).all() and np.allclose(d.sum(-1), 1.0, atol=1e-6)


def test_dirichlet_and_binomial_moments() -> None:
    alpha = np.array([0.5, 2.0, 7.0])
    ember.manual_seed(2)
    d = to_np(ember._sample_dirichlet(ember.tensor(alpha, dtype=ember.float64).expand(N, 3)))
    a0 = alpha.sum()
    mean, var = alpha / a0, alpha * (a0 - alpha) / (a0 ** 2 * (a0 + 1))
    assert (np.abs(d.mean(0) - mean) < 6 * np.sqrt(var / N)).all() and np.allclose(d.var(0), var, rtol=0.05)
    n, p = np.array([0.0, 1.0, 10.0, 200.0], np.float32), np.array([0.3, 0.0, 0.9, 0.45], np.float32)
    b = to_np(ember.binomial(ember.tensor(n).expand(N, 4), ember.tensor(p).expand(N, 4)))
    assert b.dtype == np.float32 and (b == np.round(b)).all() and (b >= 0).all() and (b <= n).all()
    sd = np.sqrt(n * p * (1 - p))
    assert (np.abs(b.mean(0) - n * p) <= 6 * sd / math.sqrt(N) + 1e-12).all()
