"""Binomial(total_count, probs | logits)."""
from __future__ import annotations

from .. import _factories as _F
from ..autograd.grad_mode import no_grad
from ..ops.random import binomial as _binomial
from . import constraints
from .distribution import Distribution
from .utils import _BinaryParameter

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) whose gradient at 0 is 1/2 (the mean of the two sides)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryParameter, Distribution):
    """The number of successes in ``total_count`` independent trials of probability ``probs``."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    _batched = {"total_count": 0, "probs": 0, "logits": 0, "_param": 0}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        self._set_probs_or_logits(probs, logits, total_count=total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_binom = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        # n log(1 + e^logits), written so that it cannot overflow
        log_norm = n * _clamp_by_zero(self.logits) + n * (-self.logits.abs()).exp().log1p()
        return value * self.logits + log_binom - log_norm

    def _homogeneous_count(self, what: str) -> int:
        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = _F.arange(1 + total, dtype=self._param.dtype, device=self._param.device).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
