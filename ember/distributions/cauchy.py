"""Cauchy(loc, scale) (the Lorentz distribution)."""
from __future__ import annotations

import math

from .. import _factories as _F
from . import constraints
from .distribution import Distribution
from .utils import _broadcast_params

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The ratio of two independent normals, located at ``loc`` with half width ``scale``; it has no mean and
    an infinite variance."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batched = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None) -> None:
        batch_shape = _broadcast_params(self, loc=loc, scale=scale)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return _F.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return _F.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        eps = self.loc.new(self._extended_shape(sample_shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
