"""Transforms, constraints and the constraint registries against torch: forward and inverse values,
log|det J| with first and second gradients, shapes, signs, domains, equality and caching; constraint checks;
biject_to / transform_to results."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from oracle import check, ember, same_error, to_np, torch


def _t(lib):
    return lib.distributions.transforms


# name -> (transform from parameter tensors, parameter arrays, input array in the domain)
def _cases():
    rng = np.random.default_rng(0)
    x34 = rng.standard_normal((3, 4))
    pos34 = rng.uniform(0.2, 3.0, (3, 4))
    return {
        "Exp": (lambda lib: _t(lib).ExpTransform(), [], x34),
        "Sigmoid": (lambda lib: _t(lib).SigmoidTransform(), [], x34 * 3),
        "Tanh": (lambda lib: _t(lib).TanhTransform(), [], x34 * 2),
        "Softplus": (lambda lib: _t(lib).SoftplusTransform(), [], x34 * 3),
        "Abs": (lambda lib: _t(lib).AbsTransform(), [], x34),
        "Affine tensor": (lambda lib, a, b: _t(lib).AffineTransform(a, b), [rng.standard_normal(4),
                                                                           rng.uniform(-2, 2, (3, 1))], x34),
        "Affine numbers": (lambda lib: _t(lib).AffineTransform(1.5, -2.0), [], x34),
        "Affine event_dim 1": (lambda lib, a, b: _t(lib).AffineTransform(a, b, event_dim=1),
                               [rng.standard_normal(4), rng.uniform(0.5, 2, 4)], x34),
        "Power": (lambda lib, e: _t(lib).PowerTransform(e), [rng.uniform(-2, 2, 4)], pos34),
        "Softmax": (lambda lib: _t(lib).SoftmaxTransform(), [], x34),
        "StickBreaking": (lambda lib: _t(lib).StickBreakingTransform(), [], x34),
        "LowerCholesky": (lambda lib: _t(lib).LowerCholeskyTransform(), [], rng.standard_normal((2, 3, 3))),
        "PositiveDefinite": (lambda lib: _t(lib).PositiveDefiniteTransform(), [], rng.standard_normal((2, 3, 3))),
        "CorrCholesky": (lambda lib: _t(lib).CorrCholeskyTransform(), [], rng.standard_normal((2, 6))),
        "Reshape": (lambda lib: _t(lib).ReshapeTransform((3, 4), (2, 6)), [], rng.standard_normal((2, 3, 4))),
        "Independent(Exp, 1)": (lambda lib: _t(lib).IndependentTransform(_t(lib).ExpTransform(), 1), [], x34),
        "Compose(Affine, Exp)": (lambda lib, b: _t(lib).ComposeTransform(
            [_t(lib).AffineTransform(0.3, b), _t(lib).ExpTransform()]), [rng.uniform(0.5, 2, 4)], x34),
        "Compose(StickBreaking, Affine event_dim 1)": (lambda lib: _t(lib).ComposeTransform(
            [_t(lib).StickBreakingTransform(), _t(lib).AffineTransform(0.0, 2.0, event_dim=1)]), [], x34),
        "Compose(Exp, Independent(Affine))": (lambda lib: _t(lib).ComposeTransform(
            [_t(lib).ExpTransform(), _t(lib).IndependentTransform(_t(lib).AffineTransform(1.0, 3.0), 2)]), [], x34),
        "Exp.inv": (lambda lib: _t(lib).ExpTransform().inv, [], pos34),
        "Cat": (lambda lib: _t(lib).CatTransform([_t(lib).ExpTransform(), _t(lib).SigmoidTransform()], 1, [1, 3]),
                [], x34),
        "Cat event_dim": (lambda lib: _t(lib).CatTransform(
            [_t(lib).ExpTransform(), _t(lib).IndependentTransform(_t(lib).SigmoidTransform(), 1)], 0, [1, 2]), [], x34),
        "Stack": (lambda lib: _t(lib).StackTransform([_t(lib).ExpTransform(), _t(lib).TanhTransform(),
                                                      _t(lib).AffineTransform(1.0, 2.0)], 0), [], x34),
        "CumulativeDistribution": (lambda lib, s: _t(lib).CumulativeDistributionTransform(
            lib.distributions.Normal(0.2, s)), [rng.uniform(0.5, 2, 4)], x34),
    }


CASES = _cases()
NAMES = list(CASES)


def _parts(name):
    make, params, x = CASES[name]
    return make, params, x


@pytest.mark.parametrize("name", NAMES)
def test_forward_inverse_and_log_det_match_torch(name) -> None:
    make, params, x = _parts(name)
    n = len(params)

    try:
        tt = make(torch, *(torch.tensor(p) for p in params))
        tt.log_abs_det_jacobian(torch.tensor(x), tt(torch.tensor(x)))
        has_log_det = True
    except NotImplementedError:  # not bijective (Abs, Softmax, LowerCholesky ...): ember refuses too
        same_error(lambda lib: make(lib, *(lib.tensor(p) for p in params)).log_abs_det_jacobian(
            lib.tensor(x), lib.tensor(x)), match_words=[])
        has_log_det = False

    def fn(lib, *ts):
        t = make(lib, *ts[:n])
        y = t(ts[n])
        outs = [y, t.inv(y.detach() * 1)]
        if has_log_det:
            outs.append(t.log_abs_det_jacobian(ts[n], y))
        return outs

    check(fn, *params, x, gradgrad=True)


@pytest.mark.parametrize("name", NAMES)
def test_attributes_shapes_and_printed_form(name) -> None:
    make, params, x = _parts(name)
    e, t = make(ember, *(ember.tensor(p) for p in params)), make(torch, *(torch.tensor(p) for p in params))
    assert repr(e) == repr(t) and repr(e.inv) == repr(t.inv)
    for attr in ("bijective",):
        assert getattr(e, attr) == getattr(t, attr)
    assert repr(e.domain) == repr(t.domain) and repr(e.codomain) == repr(t.codomain)
    assert (e.domain.event_dim, e.codomain.event_dim) == (t.domain.event_dim, t.codomain.event_dim)
    for shape in (tuple(x.shape), (5,) + tuple(x.shape)):
        for method in ("forward_shape", "inverse_shape"):
            try:
                expected = getattr(t, method)(torch.Size(shape))
            except Exception:  # noqa: BLE001 - compared below
                same_error(lambda lib: getattr(make(lib, *(lib.tensor(p) for p in params)), method)(lib.Size(shape)),
                           match_words=[])
                continue
            assert tuple(getattr(e, method)(ember.Size(shape))) == tuple(expected)
    try:
        ts = t.sign
    except NotImplementedError:
        same_error(lambda lib: make(lib, *(lib.tensor(p) for p in params)).sign, match_words=[])
    else:
        es = e.sign
        assert (to_np(es) == to_np(ts)).all() if isinstance(ts, torch.Tensor) else es == ts
    assert e == make(ember, *(ember.tensor(p) for p in params)) or not _stateless(name)
    assert e.inv.inv is e


def _stateless(name: str) -> bool:
    return name in ("Exp", "Sigmoid", "Tanh", "Softplus", "Abs", "Softmax", "StickBreaking", "LowerCholesky",
                    "PositiveDefinite", "Affine numbers")


def test_equality_and_caching() -> None:
    T = ember.distributions.transforms
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, ember.tensor([2.0, 3.0])) == T.AffineTransform(1.0, ember.tensor([2.0, 3.0]))
    assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.ComposeTransform([T.ExpTransform()]) == T.ComposeTransform([T.ExpTransform()])
    assert T.PowerTransform(ember.tensor(2.0)) == T.PowerTransform(2.0)
    assert T.ExpTransform().inv == T.ExpTransform().inv
    t = T.AbsTransform(cache_size=1)
    x = ember.tensor([-1.0, 2.0])
    y = t(x)
    assert t(x) is y and t.inv(y) is x  # the cache returns the pre-image, so a non-injective map inverts
    assert T.AbsTransform().inv(y) is y
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    same_error(lambda lib: lib.distributions.transforms.ExpTransform(cache_size=2))
    same_error(lambda lib: lib.distributions.transforms.CorrCholeskyTransform().with_cache(1) and
               lib.distributions.transforms.CumulativeDistributionTransform(
                   lib.distributions.Normal(0.0, 1.0)).with_cache(1).inv.with_cache(0).event_dim + 1 and
               lib.distributions.transforms.ReshapeTransform((2,), (3,)), match_words=[])
    c = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in c.parts) and c.inv.inv is c
    restored = [pickle.loads(pickle.dumps(lib.distributions.transforms.ExpTransform().inv)) for lib in (ember, torch)]
    assert repr(restored[0]) == repr(restored[1])  # the back reference is not pickled
    assert T.identity_transform(x) is x and repr(T.identity_transform) == "ComposeTransform(\n    \n)"


# ---------------------------------------------------------------- constraints
def _constraint_cases(lib):
    C = lib.distributions.constraints
    return {
        "real": C.real, "positive": C.positive, "nonnegative": C.nonnegative, "unit_interval": C.unit_interval,
        "boolean": C.boolean, "nonnegative_integer": C.nonnegative_integer, "positive_integer": C.positive_integer,
        "integer_interval": C.integer_interval(0, 3), "interval": C.interval(-1.0, 2.0),
        "half_open_interval": C.half_open_interval(-1.0, 2.0), "greater_than": C.greater_than(0.5),
        "greater_than_eq": C.greater_than_eq(0.5), "less_than": C.less_than(0.5), "simplex": C.simplex,
        "real_vector": C.real_vector, "independent": C.independent(C.positive, 2), "one_hot": C.one_hot,
        "lower_triangular": C.lower_triangular, "lower_cholesky": C.lower_cholesky,
        "corr_cholesky": C.corr_cholesky, "square": C.square, "symmetric": C.symmetric,
        "positive_definite": C.positive_definite, "positive_semidefinite": C.positive_semidefinite,
        "multinomial": C.multinomial(4), "cat": C.cat([C.positive, C.real], -1, [2, 2]),
        "stack": C.stack([C.positive, C.real, C.unit_interval, C.boolean], -1),
    }


def _values() -> list:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 4, 4))
    L = np.tril(A)
    L[0, range(4), range(4)] = np.abs(L[0, range(4), range(4)])
    corr = L / np.linalg.norm(L, axis=-1, keepdims=True)
    return [rng.standard_normal((3, 4, 4)), rng.integers(-1, 4, (2, 4, 4)).astype(np.float64),
            rng.uniform(0, 1, (2, 4, 4)), A @ np.swapaxes(A, -1, -2), A + np.swapaxes(A, -1, -2), L, corr,
            np.eye(4)[rng.integers(0, 4, (2, 4))], rng.dirichlet(np.ones(4), (2, 4)),
            np.array([[1.0, np.nan, 0.5, 2.0]]), rng.integers(0, 2, (2, 4, 4)).astype(np.float64)]


@pytest.mark.parametrize("name", list(_constraint_cases(torch)))
def test_constraint_checks_match_torch(name) -> None:
    ec, tc = _constraint_cases(ember)[name], _constraint_cases(torch)[name]
    assert repr(ec) == repr(tc)
    assert (ec.event_dim, ec.is_discrete) == (tc.event_dim, tc.is_discrete)
    for v in _values():
        try:
            expected = tc.check(torch.tensor(v))
        except Exception:  # noqa: BLE001 - compared below
            same_error(lambda lib: _constraint_cases(lib)[name].check(lib.tensor(v)), match_words=[])
            continue
        got = ec.check(ember.tensor(v))
        assert tuple(got.shape) == tuple(expected.shape) and (to_np(got) == to_np(expected)).all(), (name, v.shape)


def test_dependent_constraints() -> None:
    for lib in (ember, torch):
        C = lib.distributions.constraints
        assert C.is_dependent(C.dependent) and C.is_dependent(lib.distributions.Uniform.support)
        assert not C.is_dependent(C.real)
        d = C.dependent(is_discrete=True, event_dim=1)
        assert d.is_discrete and d.event_dim == 1 and repr(d) == "Dependent()"
    same_error(lambda lib: lib.distributions.constraints.dependent.check(lib.zeros(1)))
    same_error(lambda lib: lib.distributions.constraints.dependent.event_dim)
    same_error(lambda lib: lib.distributions.constraints.independent(lib.distributions.constraints.real, 2).check(
        lib.zeros(3)))


# ---------------------------------------------------------------- biject_to / transform_to
@pytest.mark.parametrize("name", [n for n in _constraint_cases(torch) if n not in ("boolean", "one_hot")])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registries_match_torch(registry, name) -> None:
    tc = _constraint_cases(torch)[name]
    try:
        tt = getattr(torch.distributions, registry)(tc)
    except NotImplementedError:
        same_error(lambda lib: getattr(lib.distributions, registry)(_constraint_cases(lib)[name]))
        return
    et = getattr(ember.distributions, registry)(_constraint_cases(ember)[name])
    assert repr(et) == repr(tt) and type(et).__name__ == type(tt).__name__
    shape = tt.inverse_shape(torch.Size((2, 4, 4)))
    x = np.random.default_rng(4).standard_normal(tuple(shape))

    def fn(lib, x):
        t = getattr(lib.distributions, registry)(_constraint_cases(lib)[name])
        y = t(x)
        assert bool(t.codomain.check(y).all())
        return y, t.log_abs_det_jacobian(x, y)

    if tt.bijective:
        check(fn, x)


def test_registry_errors_and_custom_registration() -> None:
    same_error(lambda lib: lib.distributions.biject_to(lib.distributions.constraints.boolean))
    same_error(lambda lib: lib.distributions.transform_to.register(3, lambda c: None))
    for lib in (ember, torch):
        D = lib.distributions

        class _Odd(D.constraints.Constraint):
            def check(self, value):
                return value % 2 == 1

        D.biject_to.register(_Odd, lambda c: D.transforms.AffineTransform(1.0, 2.0))
        assert repr(D.biject_to(_Odd())) == "AffineTransform()"
