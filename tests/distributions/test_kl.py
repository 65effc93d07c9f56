"""kl_divergence against torch for every pair torch registers (values, first and second gradients), the dispatch
rules of register_kl, and torch's errors for unregistered pairs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch.distributions.kl as torch_kl

from _dist_cases import _cov, _draw, _tril
from oracle import check, ember, same_error, torch


def _d(lib):
    return lib.distributions


# class name -> (builder from parameter tensors, parameter kinds); every batch shape is (3,)
MAKERS = {
    "Bernoulli": (lambda lib, p: _d(lib).Bernoulli(p), "u"),
    "Beta": (lambda lib, a, b: _d(lib).Beta(a, b), "pp"),
    "Binomial": (lambda lib, p: _d(lib).Binomial(4, p), "u"),
    "Categorical": (lambda lib, x: _d(lib).Categorical(logits=x.unsqueeze(-1) * lib.arange(1.0, 5.0)), "r"),
    "Cauchy": (lambda lib, a, b: _d(lib).Cauchy(a, b), "rp"),
    "ContinuousBernoulli": (lambda lib, p: _d(lib).ContinuousBernoulli(p), "u"),
    "Dirichlet": (lambda lib, a: _d(lib).Dirichlet(a.unsqueeze(-1) * lib.arange(1.0, 4.0)), "p"),
    "Exponential": (lambda lib, r: _d(lib).Exponential(r), "p"),
    "Gamma": (lambda lib, a, b: _d(lib).Gamma(a, b), "pp"),
    "Geometric": (lambda lib, p: _d(lib).Geometric(p), "u"),
    "Gumbel": (lambda lib, a, b: _d(lib).Gumbel(a, b), "rp"),
    "HalfNormal": (lambda lib, s: _d(lib).HalfNormal(s), "p"),
    "Laplace": (lambda lib, a, b: _d(lib).Laplace(a, b), "rp"),
    "LowRankMultivariateNormal": (lambda lib, loc, w, d: _d(lib).LowRankMultivariateNormal(
        loc.unsqueeze(-1) * lib.ones(3), w.reshape(3, 1, 1) * lib.tensor([[1.0, 0.5], [0.2, -1.0], [0.3, 0.1]],
                                                                          dtype=w.dtype), d.unsqueeze(-1) + lib.tensor([0.5, 1.0, 0.2], dtype=d.dtype)),
        "rrp"),
    "MultivariateNormal": (lambda lib, loc, s: _d(lib).MultivariateNormal(
        loc.unsqueeze(-1) * lib.tensor([1.0, -0.5, 2.0], dtype=loc.dtype),
        scale_tril=_tril(lib, s.reshape(3, 1, 1) * lib.tensor([[0.3, 0.0, 0.0], [0.5, -0.2, 0.0], [0.1, 0.4, 0.2]],
                                                             dtype=s.dtype))), "rp"),
    "Normal": (lambda lib, a, b: _d(lib).Normal(a, b), "rp"),
    "OneHotCategorical": (lambda lib, x: _d(lib).OneHotCategorical(logits=x.unsqueeze(-1) * lib.arange(1.0, 5.0)),
                          "r"),
    "Pareto": (lambda lib, s, a: _d(lib).Pareto(s, a + 1.5), "pp"),
    "Poisson": (lambda lib, r: _d(lib).Poisson(r), "p"),
    "Uniform": (lambda lib, lo, w: _d(lib).Uniform(lo, lo + w), "rp"),
}
MAKERS["Uniform on [0, 1]"] = (lambda lib, lo, w: _d(lib).Uniform(lo * 0.4, 1 - w * 0.2), "uu")

PAIRS = sorted({(p.__name__, q.__name__) for p, q in torch_kl._KL_REGISTRY if p.__name__ in MAKERS
                and q.__name__ in MAKERS})
PAIRS += [(p, "Uniform on [0, 1]") for p in ("Beta", "ContinuousBernoulli")]
PAIRS += [("Uniform on [0, 1]", q) for q in ("Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Pareto")]


def _arrays(rng, kinds):
    return [_draw(rng, k, (3,)) for k in kinds]


@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=[f"{p}-{q}" for p, q in PAIRS])
def test_kl_matches_torch(p_name, q_name) -> None:
    (make_p, kp), (make_q, kq) = MAKERS[p_name], MAKERS[q_name]
    rng = np.random.default_rng(0)
    arrays = _arrays(rng, kp) + _arrays(rng, kq)

    def kl(lib, *ts):
        return lib.distributions.kl_divergence(make_p(lib, *ts[:len(kp)]), make_q(lib, *ts[len(kp):]))

    if p_name == "Binomial" and q_name == "Binomial":
        return check(kl, *arrays, gradgrad=True, requires_grad=[True] * len(arrays))
    check(kl, *arrays, gradgrad=True)


def test_independent_transformed_and_expfamily_fallback() -> None:
    def kl(lib, a, b, c, d):
        D = lib.distributions
        ind = D.kl_divergence(D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(c, d), 1))
        tr = D.kl_divergence(D.TransformedDistribution(D.Normal(a, b), D.ExpTransform()),
                             D.TransformedDistribution(D.Normal(c, d), D.ExpTransform()))
        lookup = ember_kl if lib is ember else torch_kl
        bregman = lookup._kl_expfamily_expfamily(D.Normal(a, b), D.Normal(c, d))  # the generic Bregman form
        return ind, tr, bregman

    ember_kl = ember.distributions.kl
    rng = np.random.default_rng(1)
    check(kl, rng.standard_normal((2, 3)), rng.uniform(0.5, 2, 3), rng.standard_normal(3), rng.uniform(0.5, 2, (2, 3)))


def test_multivariate_normals_with_broadcast_batches() -> None:
    def kl(lib, l1, a1, l2, a2):
        D = lib.distributions
        p = D.MultivariateNormal(l1, _cov(lib, a1))
        q = D.MultivariateNormal(l2, scale_tril=_tril(lib, a2))
        lr = D.LowRankMultivariateNormal(l2, a1[..., :2], a2.diagonal(dim1=-2, dim2=-1).exp())
        return D.kl_divergence(p, q), D.kl_divergence(q, p), D.kl_divergence(lr, p), D.kl_divergence(p, lr)

    rng = np.random.default_rng(2)
    check(kl, rng.standard_normal((2, 1, 3)), rng.standard_normal((4, 3, 3)) * 0.5, rng.standard_normal(3),
          rng.standard_normal((4, 3, 3)) * 0.3, gradgrad=True)


def test_errors() -> None:
    D = "distributions"
    same_error(lambda lib: getattr(lib, D).kl_divergence(getattr(lib, D).Normal(0.0, 1.0),
                                                         getattr(lib, D).StudentT(2.0)))
    same_error(lambda lib: getattr(lib, D).kl_divergence(getattr(lib, D).Binomial(2, lib.tensor([0.3])),
                                                         getattr(lib, D).Binomial(5, lib.tensor([0.3]))))
    same_error(lambda lib: getattr(lib, D).kl_divergence(
        getattr(lib, D).MultivariateNormal(lib.zeros(2), lib.eye(2)),
        getattr(lib, D).MultivariateNormal(lib.zeros(3), lib.eye(3))))
    same_error(lambda lib: getattr(lib, D).kl._kl_expfamily_expfamily(getattr(lib, D).Normal(0.0, 1.0),
                                                                      getattr(lib, D).Gamma(1.0, 1.0)))
    same_error(lambda lib: getattr(lib, D).kl.kl_divergence(getattr(lib, D).Independent(
        getattr(lib, D).Normal(lib.zeros(2, 2), 1.0), 1), getattr(lib, D).Independent(
        getattr(lib, D).Normal(lib.zeros(2, 2), 1.0), 2)), match_words=[])


def test_register_kl_dispatch_and_ambiguity() -> None:
    """The most specific registration wins; a tie between two registrations warns and names both types."""
    results = []
    for lib in (ember, torch):
        D = lib.distributions

        class MyNormal(D.Normal):
            pass

        class Base(D.Distribution):
            arg_constraints = {}

        class A(Base):
            pass

        class B(Base):
            pass

        @D.register_kl(MyNormal, D.Normal)
        def _kl_mine(p, q):
            return lib.tensor(42.0)

        x = D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 2.0))
        y = D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 2.0))  # Normal-Normal still applies
        D.register_kl(A, Base)(lambda p, q: lib.tensor(1.0))
        D.register_kl(Base, B)(lambda p, q: lib.tensor(2.0))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            z = D.kl_divergence(A(validate_args=False), B(validate_args=False))
        results.append((float(x), round(float(y), 10), float(z), [str(m.message) for m in w],
                        [m.category.__name__ for m in w]))
    assert results[0] == results[1]
    assert results[0][3] == ["Ambiguous kl_divergence(A, B). Please register_kl(A, B)"]
