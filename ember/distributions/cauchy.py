"""Cauchy(loc, scale) (the Lorentz distribution)."""
from __future__ import annotations

import math

from .. import _factories as _F
from ._families import _LocationScale
from .distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(_LocationScale, Distribution):
    """The ratio of two independent normals, located at ``loc`` with half width ``scale``; it has no mean and
    an infinite variance."""

    _batched = {"loc": 0, "scale": 0}

    @property
    def mean(self):
        return _F.full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self):
        return _F.full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

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
