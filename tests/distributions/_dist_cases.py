"""The distributions under test: how to build each one in ember or torch from the same parameter arrays.

A ``Case`` names a distribution, builds it from ``lib`` (ember or torch) and parameter tensors, and says how to
draw its parameters: a list of (kind, shape) pairs, kinds being "r" (real), "p" (positive), "u" (in (0, 1)),
"s" (a point of the simplex along the last dim), "n" (a nonnegative integer count), "t" (a temperature) and
"m" (a square matrix, turned into a covariance or Cholesky factor by ``make``). Shapes broadcast, so batch
shapes come from broadcasting as in real code.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable  # (lib, *param tensors) -> distribution
    specs: tuple  # (kind, shape) per parameter
    dtype: type = np.float64
    rtol: float | None = None
    atol: float | None = None
    gradgrad: bool = True
    tags: tuple = field(default_factory=tuple)

    def params(self, rng) -> tuple:
        return tuple(_draw(rng, kind, shape).astype(self.dtype) for kind, shape in self.specs)


def _draw(rng, kind: str, shape) -> np.ndarray:
    if kind == "r":
        return rng.standard_normal(shape)
    if kind == "p":
        return rng.uniform(0.5, 3.0, shape)
    if kind == "u":
        return rng.uniform(0.1, 0.9, shape)
    if kind == "s":
        return rng.dirichlet(np.ones(shape[-1]), shape[:-1]) if len(shape) > 1 else rng.dirichlet(np.ones(shape[0]))
    if kind == "n":
        return rng.integers(1, 8, shape).astype(np.float64)
    if kind == "t":
        return rng.uniform(0.3, 1.5, shape)
    if kind == "m":
        return rng.standard_normal(shape) * 0.5
    raise ValueError(kind)


def _d(lib):
    return lib.distributions


def _cov(lib, A):
    return A @ A.mT + lib.eye(A.shape[-1], dtype=A.dtype)


def _tril(lib, A):
    return A.tril(-1) + A.diagonal(dim1=-2, dim2=-1).exp().diag_embed()


CASES = [
    Case("Normal", lambda lib, loc, scale: _d(lib).Normal(loc, scale), (("r", (3, 1)), ("p", (4,)))),
    Case("Normal f32", lambda lib, loc, scale: _d(lib).Normal(loc, scale), (("r", (5,)), ("p", (5,))),
         dtype=np.float32),
    Case("Normal number scale", lambda lib, loc: _d(lib).Normal(loc, 2.0), (("r", (3,)),)),
    Case("Bernoulli probs", lambda lib, p: _d(lib).Bernoulli(probs=p), (("u", (2, 3)),)),
    Case("Bernoulli logits", lambda lib, x: _d(lib).Bernoulli(logits=x), (("r", (4,)),)),
    Case("Categorical probs", lambda lib, p: _d(lib).Categorical(probs=p), (("s", (2, 4)),)),
    Case("Categorical logits", lambda lib, x: _d(lib).Categorical(logits=x), (("r", (3, 5)),)),
    Case("OneHotCategorical", lambda lib, x: _d(lib).OneHotCategorical(logits=x), (("r", (2, 4)),)),
    Case("Beta", lambda lib, a, b: _d(lib).Beta(a, b), (("p", (2, 3)), ("p", (3,)))),
    Case("Dirichlet", lambda lib, a: _d(lib).Dirichlet(a), (("p", (2, 4)),)),
    Case("Gamma", lambda lib, a, b: _d(lib).Gamma(a, b), (("p", (3,)), ("p", (2, 1)))),
    Case("Chi2", lambda lib, df: _d(lib).Chi2(df), (("p", (4,)),)),
    Case("Uniform", lambda lib, lo, w: _d(lib).Uniform(lo, lo + w), (("r", (2, 3)), ("p", (3,)))),
    Case("Exponential", lambda lib, r: _d(lib).Exponential(r), (("p", (2, 3)),)),
    Case("Laplace", lambda lib, loc, s: _d(lib).Laplace(loc, s), (("r", (3,)), ("p", (2, 3)))),
    Case("Cauchy", lambda lib, loc, s: _d(lib).Cauchy(loc, s), (("r", (3,)), ("p", (3,)))),
    Case("LogNormal", lambda lib, loc, s: _d(lib).LogNormal(loc, s), (("r", (2, 3)), ("p", (3,)))),
    Case("Poisson", lambda lib, r: _d(lib).Poisson(r), (("p", (2, 3)),)),
    Case("Binomial probs", lambda lib, n, p: _d(lib).Binomial(n, probs=p), (("n", (3,)), ("u", (2, 3)))),
    Case("Binomial logits", lambda lib, x: _d(lib).Binomial(5, logits=x), (("r", (4,)),)),
    Case("Geometric probs", lambda lib, p: _d(lib).Geometric(probs=p), (("u", (2, 3)),)),
    Case("Geometric logits", lambda lib, x: _d(lib).Geometric(logits=x), (("r", (4,)),)),
    Case("MultivariateNormal covariance", lambda lib, loc, A: _d(lib).MultivariateNormal(loc, _cov(lib, A)),
         (("r", (2, 3)), ("m", (3, 3)))),
    Case("MultivariateNormal precision", lambda lib, loc, A: _d(lib).MultivariateNormal(
        loc, precision_matrix=_cov(lib, A)), (("r", (3,)), ("m", (2, 3, 3)))),
    Case("MultivariateNormal scale_tril", lambda lib, loc, A: _d(lib).MultivariateNormal(
        loc, scale_tril=_tril(lib, A)), (("r", (2, 4)), ("m", (2, 4, 4)))),
    Case("LowRankMultivariateNormal", lambda lib, loc, W, d: _d(lib).LowRankMultivariateNormal(loc, W, d),
         (("r", (2, 4)), ("m", (4, 2)), ("p", (4,)))),
    Case("StudentT", lambda lib, df, loc, s: _d(lib).StudentT(df, loc, s), (("p", (3,)), ("r", (2, 3)), ("p", (3,)))),
    Case("RelaxedBernoulli", lambda lib, t, p: _d(lib).RelaxedBernoulli(t, probs=p), (("t", ()), ("u", (2, 3)))),
    Case("RelaxedOneHotCategorical", lambda lib, t, x: _d(lib).RelaxedOneHotCategorical(t, logits=x),
         (("t", ()), ("r", (2, 4)))),
    Case("Independent Normal", lambda lib, loc, s: _d(lib).Independent(_d(lib).Normal(loc, s), 1),
         (("r", (2, 3)), ("p", (3,)))),
    Case("MixtureSameFamily", lambda lib, x, loc, s: _d(lib).MixtureSameFamily(
        _d(lib).Categorical(logits=x), _d(lib).Normal(loc, s)), (("r", (2, 3)), ("r", (2, 3)), ("p", (3,)))),
    Case("MixtureSameFamily of Independent", lambda lib, x, loc, s: _d(lib).MixtureSameFamily(
        _d(lib).Categorical(logits=x), _d(lib).Independent(_d(lib).Normal(loc, s), 1)),
        (("r", (3,)), ("r", (3, 2)), ("p", (3, 2)))),
    Case("TransformedDistribution affine exp", lambda lib, loc, s, a: _d(lib).TransformedDistribution(
        _d(lib).Normal(loc, s), [_d(lib).AffineTransform(0.5, a), _d(lib).ExpTransform()]),
        (("r", (3,)), ("p", (3,)), ("p", (2, 3)))),
    Case("TransformedDistribution tanh", lambda lib, loc, s: _d(lib).TransformedDistribution(
        _d(lib).Normal(loc, s), [_d(lib).TanhTransform()]), (("r", (4,)), ("p", (4,)))),
    Case("TransformedDistribution stick breaking", lambda lib, loc, s: _d(lib).TransformedDistribution(
        _d(lib).Normal(loc, s), _d(lib).StickBreakingTransform()), (("r", (2, 3)), ("p", (3,)))),
    # beyond the list of the issue
    Case("HalfNormal", lambda lib, s: _d(lib).HalfNormal(s), (("p", (2, 3)),)),
    Case("HalfCauchy", lambda lib, s: _d(lib).HalfCauchy(s), (("p", (3,)),)),
    Case("Gumbel", lambda lib, loc, s: _d(lib).Gumbel(loc, s), (("r", (2, 3)), ("p", (3,)))),
    Case("Weibull", lambda lib, s, k: _d(lib).Weibull(s, k), (("p", (3,)), ("p", (2, 3)))),
    Case("Pareto", lambda lib, s, a: _d(lib).Pareto(s, a + 2), (("p", (3,)), ("p", (2, 3)))),
    Case("InverseGamma", lambda lib, a, b: _d(lib).InverseGamma(a + 2, b), (("p", (3,)), ("p", (2, 3)))),
    Case("Kumaraswamy", lambda lib, a, b: _d(lib).Kumaraswamy(a, b), (("p", (3,)), ("p", (2, 3)))),
    Case("LogisticNormal", lambda lib, loc, s: _d(lib).LogisticNormal(loc, s), (("r", (2, 3)), ("p", (3,)))),
    Case("FisherSnedecor", lambda lib, a, b: _d(lib).FisherSnedecor(a + 4, b + 4), (("p", (3,)), ("p", (2, 3)))),
    Case("VonMises", lambda lib, loc, k: _d(lib).VonMises(loc, k), (("r", (3,)), ("p", (2, 3))),
         rtol=1e-6, atol=1e-7),  # torch evaluates log I0 by a polynomial fit good to ~1e-7
    Case("Multinomial", lambda lib, x: _d(lib).Multinomial(6, logits=x), (("r", (2, 4)),)),
    Case("NegativeBinomial", lambda lib, n, p: _d(lib).NegativeBinomial(n, probs=p), (("p", (3,)), ("u", (2, 3)))),
    Case("ContinuousBernoulli", lambda lib, p: _d(lib).ContinuousBernoulli(probs=p), (("u", (2, 3)),)),
    # float32: torch's GeneralizedPareto.log_prob compares float64 parameters with a float32 zero and raises
    Case("GeneralizedPareto", lambda lib, loc, s, xi: _d(lib).GeneralizedPareto(loc, s, xi * 0.3),
         (("r", (3,)), ("p", (2, 3)), ("r", (3,))), dtype=np.float32, rtol=1e-3),
    Case("GeneralizedPareto xi 0", lambda lib, loc, s: _d(lib).GeneralizedPareto(loc, s, 0.0),
         (("r", (3,)), ("p", (3,))), dtype=np.float32, rtol=1e-3),
    Case("LKJCholesky", lambda lib, c: _d(lib).LKJCholesky(3, c), (("p", (2,)),)),
    Case("Wishart covariance", lambda lib, df, A: _d(lib).Wishart(df + 3, _cov(lib, A)), (("p", (2,)), ("m", (3, 3)))),
    Case("Wishart scale_tril", lambda lib, A: _d(lib).Wishart(4.5, scale_tril=_tril(lib, A)), (("m", (2, 3, 3)),)),
    Case("Wishart precision", lambda lib, A: _d(lib).Wishart(5.0, precision_matrix=_cov(lib, A)), (("m", (3, 3)),)),
    Case("ContinuousBernoulli near 1/2", lambda lib, p: _d(lib).ContinuousBernoulli(probs=p * 0.001 + 0.4995),
         (("u", (5,)),)),
]
