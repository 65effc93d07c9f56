"""NegativeBinomial(total_count, probs | logits)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..nn.functional import logsigmoid as _logsigmoid
from ..ops.random import poisson as _poisson
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _BinaryParameter, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryParameter, Distribution):
    """The number of successes (probability ``probs`` each) before ``total_count`` failures; ``total_count`` may be
    any nonnegative real (a Gamma-Poisson mixture)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    _batched = {"total_count": 0, "probs": 0, "logits": 0, "_param": 0}

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        self._set_probs_or_logits(probs, logits, total_count=total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        with no_grad():
            return _poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * _logsigmoid(-self.logits) + value * _logsigmoid(self.logits)
        log_normalization = -(self.total_count + value).lgamma() + (1.0 + value).lgamma() + self.total_count.lgamma()
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)  # r = k = 0: P = 1
        return log_unnormalized - log_normalization
