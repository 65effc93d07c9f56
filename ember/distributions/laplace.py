"""Laplace(loc, scale)."""
from __future__ import annotations

from .._dtype import finfo
from ._families import _LocationScale
from .distribution import Distribution

__all__ = ["Laplace"]


class Laplace(_LocationScale, Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale)."""

    _batched = {"loc": 0, "scale": 0}

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        # u uniform on (-1, 1): -sign(u) log(1 - |u|) is a standard Laplace sample (u = -1 excluded: log 0)
        u = self.loc.new(self._extended_shape(sample_shape)).uniform_(finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
