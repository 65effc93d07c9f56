"""Laplace(loc, scale)."""
from __future__ import annotations

from .._dtype import finfo
from . import constraints
from .distribution import Distribution
from .utils import _broadcast_params

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batched = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None) -> None:
        batch_shape = _broadcast_params(self, loc=loc, scale=scale)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

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
