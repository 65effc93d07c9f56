"""Uniform(low, high): the uniform distribution on [low, high)."""
from __future__ import annotations

import math

from .. import _factories as _F
from . import constraints
from .distribution import Distribution
from .utils import _broadcast_params

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniformly distributed on the half-open interval [low, high)."""

    has_rsample = True
    _batched = {"low": 0, "high": 0}

    def __init__(self, low, high, validate_args=None) -> None:
        batch_shape = _broadcast_params(self, low=low, high=high)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        u = _F.rand(self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = self.low.le(value).type_as(self.low).mul(self.high.gt(value).type_as(self.low))
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
