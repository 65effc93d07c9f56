"""Normal(loc, scale): the Gaussian distribution."""
from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..ops.random import normal as _normal
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _Number, _broadcast_params, _standard_normal

__all__ = ["Normal"]

_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


class Normal(ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0
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
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        eps = _standard_normal(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_scale = math.log(self.scale) if isinstance(self.scale, _Number) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - log_scale - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()


