"""Multinomial(total_count, probs | logits): category counts of ``total_count`` Categorical draws."""
from __future__ import annotations

import math

from .. import _factories as _F
from .._tensor import Size
from . import constraints
from ._families import _OverCategorical
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_OverCategorical, Distribution):
    """Counts over K categories of ``total_count`` independent draws with probabilities ``probs``
    (``log_prob`` does not need ``total_count``: it is read off each value's sum)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _batched = {"_categorical": 0, "_binomial": 1}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        self._init_over_categories(validate_args)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        draws = draws.permute(*range(1, draws.dim()), 0)  # the draws last
        counts = draws.new(self._extended_shape(sample_shape)).zero_()
        counts.scatter_add_(-1, draws, _F.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        n = _F.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        return term1 + (binomial_probs * (support + 1).lgamma()).sum([0, -1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits[(value == 0) & (logits == -math.inf)] = 0  # 0 * log(0) counts as 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
