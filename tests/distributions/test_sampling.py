"""Samplers: moments and frequencies of many draws against torch's closed forms (bounds of several standard
errors, fixed seeds), and reparameterised gradients: d/dtheta of a Monte Carlo average of rsample() against the
derivative of the exact expectation (torch's formula), again within standard errors.

Draws differ from torch's stream; the distributions they follow do not. The bounds are 5 standard errors (an
element fails by chance with probability ~6e-7), so a sampler off by a few percent in location or scale fails.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from _dist_cases import CASES
from oracle import ember, to_np, torch

N = 40_000
Z = 5.0


def _pair(case, seed=0):
    params = case.params(np.random.default_rng(seed))
    return (case.make(ember, *(ember.tensor(p) for p in params)),
            case.make(torch, *(torch.tensor(p) for p in params)), params)


def _finite(t) -> bool:
    return bool(torch.isfinite(t).all())


def _moments_ok(draws: np.ndarray, mean: np.ndarray, var: np.ndarray, what: str) -> None:
    """Sample mean and variance within Z standard errors of the exact ones (the variance's standard error from
    the sample's fourth central moment)."""
    n = draws.shape[0]
    m = draws.mean(0)
    z_mean = np.abs(m - mean) / np.sqrt(var / n)
    assert (z_mean < Z).all(), f"{what}: mean {m} vs {mean} (z {z_mean.max():.1f})"
    c = draws - m
    s2 = (c ** 2).mean(0)
    m4 = (c ** 4).mean(0)
    se = np.sqrt(np.maximum(m4 - s2 ** 2, 1e-300) / n)
    z_var = np.abs(s2 - var) / se
    assert (z_var < Z).all(), f"{what}: variance {s2} vs {var} (z {z_var.max():.1f})"


def _ks_ok(draws: np.ndarray, cdf, what: str) -> None:
    """One-sample Kolmogorov-Smirnov against ``cdf`` per batch element (critical value for alpha ~1e-6)."""
    n = draws.shape[0]
    x = np.sort(draws, axis=0)
    F = cdf(x)
    i = np.arange(1, n + 1).reshape((-1,) + (1,) * (x.ndim - 1))
    d = np.maximum(np.abs(F - i / n), np.abs(F - (i - 1) / n)).max(0)
    crit = math.sqrt(-math.log(1e-6 / 2) / 2) / math.sqrt(n)
    assert (d < crit).all(), f"{what}: KS distance {d.max():.4f} >= {crit:.4f}"


CONTINUOUS_CDF = {"Normal", "Normal f32", "Normal number scale", "Uniform", "Exponential", "Laplace", "Cauchy",
                  "LogNormal", "Gamma", "Chi2", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull", "Pareto",
                  "InverseGamma", "Kumaraswamy", "ContinuousBernoulli", "TransformedDistribution affine exp",
                  "TransformedDistribution tanh"}


# heavy right tails: the fourth moment is huge or infinite, so the variance's standard error cannot be estimated
# from a sample; the KS test covers their shape
HEAVY = {"LogNormal", "Pareto", "InverseGamma", "FisherSnedecor", "StudentT", "Weibull"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sample_moments(case) -> None:
    e, t, _ = _pair(case)
    ember.manual_seed(7)
    draws = to_np(e.sample((N,))).astype(np.float64)
    assert draws.shape == (N,) + tuple(t.batch_shape) + tuple(t.event_shape)
    assert bool(t.support.check(torch.tensor(draws).to(_dtype_of(t))).all())
    if case.name == "VonMises":  # circular moments: E[cos(x - loc)] = I1/I0 = 1 - variance, E[sin(x - loc)] = 0
        d = draws - to_np(t.loc)
        for stat, exact in ((np.cos(d), 1 - to_np(t.variance)), (np.sin(d), 0.0)):
            assert (np.abs(stat.mean(0) - exact) < Z * stat.std(0) / math.sqrt(N)).all()
        return
    try:
        mean, var = t.mean, t.variance
    except (NotImplementedError, RuntimeError):  # none, or torch's Wishart with a number df and a batch
        mean = var = None
    if mean is not None and _finite(mean) and _finite(var):
        m, v = to_np(mean), to_np(var)
        if case.name in HEAVY:  # the mean only
            assert (np.abs(draws.mean(0) - m) < Z * np.sqrt(v / N)).all(), f"{case.name}: mean"
        else:
            _moments_ok(draws, m, v, case.name)
    if case.name in CONTINUOUS_CDF:
        _ks_ok(draws, lambda x: to_np(t.cdf(torch.tensor(x).to(_dtype_of(t)))), case.name)


def _dtype_of(t):
    for v in vars(t).values():
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            return v.dtype
    return torch.float64


DISCRETE = ["Bernoulli probs", "Bernoulli logits", "Categorical probs", "Categorical logits", "Poisson",
            "Binomial probs", "Binomial logits", "Geometric probs", "Geometric logits", "NegativeBinomial"]


@pytest.mark.parametrize("name", DISCRETE)
def test_discrete_frequencies(name) -> None:
    """Each value's frequency within Z standard errors of torch's probability mass."""
    case = next(c for c in CASES if c.name == name)
    e, t, _ = _pair(case)
    ember.manual_seed(11)
    draws = to_np(e.sample((N,)))
    for k in range(0, 12):
        value = torch.full(t.batch_shape, k) if "Categorical" in name else torch.full(t.batch_shape, float(k))
        inside = t.support.check(value.to(_dtype_of(t)) if "Categorical" not in name else value)
        p = to_np(torch.where(inside, t.log_prob(torch.where(inside, value, 0).to(value.dtype)).exp(), 0.0))
        f = (draws == k).mean(0)
        bound = Z * np.sqrt(p * (1 - p) / N) + 1.0 / N
        assert (np.abs(f - p) <= bound).all(), f"{name}: frequency of {k}: {f} vs {p}"


@pytest.mark.parametrize("name", ["Dirichlet", "MultivariateNormal covariance", "MultivariateNormal precision",
                                  "MultivariateNormal scale_tril", "LowRankMultivariateNormal", "Multinomial",
                                  "OneHotCategorical", "MixtureSameFamily of Independent", "LogisticNormal"])
def test_multivariate_covariances(name) -> None:
    """The sample covariance matrix of each batch element against the exact one (element-wise z bounds)."""
    case = next(c for c in CASES if c.name == name)
    e, t, _ = _pair(case)
    ember.manual_seed(5)
    x = to_np(e.sample((N,))).astype(np.float64)
    if name == "LogisticNormal":  # no closed-form moments: compare with torch's own draws
        torch.manual_seed(5)
        y = to_np(t.sample((N,))).astype(np.float64)
        se = np.sqrt(x.var(0) / N + y.var(0) / N)
        assert (np.abs(x.mean(0) - y.mean(0)) < Z * se).all()
        return
    if "covariance_matrix" in dir(t) and hasattr(t, "covariance_matrix"):
        cov = to_np(t.covariance_matrix)
    else:  # Dirichlet, Multinomial, OneHotCategorical, mixtures: the diagonal
        cov = None
    mean = to_np(t.mean)
    c = x - x.mean(0)
    emp = np.einsum("n...i,n...j->...ij", c, c) / N
    prod = np.einsum("n...i,n...j->n...ij", c, c)
    se = np.sqrt(np.maximum(prod.var(0), 1e-300) / N)
    if cov is None:
        var = to_np(t.variance)
        diag = np.diagonal(emp, axis1=-2, axis2=-1)
        assert (np.abs(diag - var) < Z * np.diagonal(se, axis1=-2, axis2=-1)).all()
        assert (np.abs(x.mean(0) - mean) < Z * np.sqrt(var / N)).all()
    else:
        assert (np.abs(emp - cov) < Z * se + 1e-12).all(), f"{name}: covariance"
        assert (np.abs(x.mean(0) - mean) < Z * np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1) / N)).all()


def test_seeds_and_rsample_dtype() -> None:
    case = next(c for c in CASES if c.name == "Gamma")
    e, _, _ = _pair(case)
    ember.manual_seed(3)
    a = e.rsample((4,))
    ember.manual_seed(3)
    b = e.rsample((4,))
    assert (to_np(a) == to_np(b)).all() and a.dtype == ember.float64
    f32 = ember.distributions.Dirichlet(ember.tensor([0.5, 1.0, 2.0]))
    assert f32.rsample((3,)).dtype == ember.float32


# ---------------------------------------------------------------- reparameterised gradients
def _grad_estimates(make, params, f, chunks=8, per_chunk=N // 8):
    """Per-chunk Monte Carlo estimates of d E[f(x)] / d params from rsample (mean, standard error)."""
    ests = []
    for k in range(chunks):
        ember.manual_seed(100 + k)
        ts = [ember.tensor(p, requires_grad=True) for p in params]
        x = make(ember, *ts).rsample((per_chunk,))
        grads = ember.autograd.grad(f(x).mean(0).sum(), ts, allow_unused=True)
        ests.append(np.concatenate([to_np(g).ravel() if g is not None else np.zeros(p.size)
                                    for g, p in zip(grads, params)]))
    ests = np.array(ests)
    return ests.mean(0), ests.std(0, ddof=1) / math.sqrt(chunks)


def _exact_grad(make, params, moment):
    ts = [torch.tensor(p, requires_grad=True) for p in params]
    grads = torch.autograd.grad(moment(make(torch, *ts)).sum(), ts, allow_unused=True)
    return np.concatenate([to_np(g).ravel() if g is not None else np.zeros(p.size) for g, p in zip(grads, params)])


def _rsample_cases():
    """Parameters kept where the estimators' variances are moderate (no scale of 3 on a log-normal ...)."""
    from _dist_cases import Case, _cov, _d

    mild = {"LogNormal": Case("LogNormal", lambda lib, loc, s: _d(lib).LogNormal(loc, s * 0.3),
                              (("r", (3,)), ("p", (3,)))),
            "StudentT": Case("StudentT", lambda lib, df, loc, s: _d(lib).StudentT(df + 5, loc, s),
                             (("p", (3,)), ("r", (3,)), ("p", (3,)))),
            "FisherSnedecor": Case("FisherSnedecor", lambda lib, a, b: _d(lib).FisherSnedecor(a + 4, b + 10),
                                   (("p", (3,)), ("p", (3,)))),
            "InverseGamma": Case("InverseGamma", lambda lib, a, b: _d(lib).InverseGamma(a + 5, b),
                                 (("p", (3,)), ("p", (3,)))),
            "Weibull": Case("Weibull", lambda lib, s, k: _d(lib).Weibull(s, k + 1), (("p", (3,)), ("p", (3,)))),
            "MultivariateNormal precision": Case(
                "MultivariateNormal precision", lambda lib, loc, A: _d(lib).MultivariateNormal(
                    loc, precision_matrix=_cov(lib, A)), (("r", (3,)), ("m", (3, 3))))}
    names = ("Normal", "Beta", "Dirichlet", "Gamma", "Chi2", "Uniform", "Exponential", "Laplace",
             "MultivariateNormal covariance", "MultivariateNormal scale_tril", "LowRankMultivariateNormal",
             "Independent Normal", "HalfNormal", "Gumbel", "Kumaraswamy", "ContinuousBernoulli", "Normal f32")
    return [c for c in CASES if c.name in names] + list(mild.values())


RSAMPLE = _rsample_cases()


@pytest.mark.parametrize("case", RSAMPLE, ids=[c.name for c in RSAMPLE])
def test_rsample_gradient_of_moments(case) -> None:
    """d/dtheta mean(rsample) -> d mean / dtheta and d/dtheta mean(rsample^2) -> d (var + mean^2) / dtheta."""
    params = case.params(np.random.default_rng(0))
    for f, moment in ((lambda x: x, lambda d: d.mean),
                      (lambda x: x * x, lambda d: d.variance + d.mean ** 2)):
        exact = _exact_grad(case.make, params, moment)
        if not np.isfinite(exact).all():
            continue
        est, se = _grad_estimates(case.make, params, f)
        rounding = 1e-4 if case.dtype == np.float32 else 1e-9  # float32 sums of 10^4 terms
        bound = Z * se + rounding * (np.abs(exact) + 1e-3)
        assert (np.abs(est - exact) < bound).all(), f"{case.name}: {est} vs {exact} (se {se})"


@pytest.mark.parametrize("name", ["Cauchy", "HalfCauchy", "RelaxedBernoulli", "RelaxedOneHotCategorical",
                                  "TransformedDistribution tanh", "TransformedDistribution affine exp",
                                  "TransformedDistribution stick breaking", "Pareto", "Gamma", "Beta", "Dirichlet",
                                  "LogisticNormal", "StudentT"])
def test_rsample_gradient_against_torch_estimate(name) -> None:
    """Where moments do not exist (or have no closed form), a bounded statistic's gradient estimate against torch's
    own rsample estimate: the two must agree within their combined standard errors."""
    case = next(c for c in CASES if c.name == name)
    params = case.params(np.random.default_rng(0))
    f = (lambda lib: (lambda x: x.atan()))
    est, se = _grad_estimates(case.make, params, f(ember))
    ests = []
    for k in range(8):
        torch.manual_seed(200 + k)
        ts = [torch.tensor(p, requires_grad=True) for p in params]
        x = case.make(torch, *ts).rsample((N // 4,))
        grads = torch.autograd.grad(f(torch)(x).mean(0).sum(), ts, allow_unused=True)
        ests.append(np.concatenate([to_np(g).ravel() if g is not None else np.zeros(p.size)
                                    for g, p in zip(grads, params)]))
    ests = np.array(ests)
    t_est, t_se = ests.mean(0), ests.std(0, ddof=1) / math.sqrt(8)
    assert (np.abs(est - t_est) < Z * np.sqrt(se ** 2 + t_se ** 2) + 1e-12).all(), f"{name}: {est} vs {t_est}"
