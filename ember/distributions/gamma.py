"""Gamma(concentration, rate)."""
from __future__ import annotations

from .._dtype import finfo
from ..ops.elementwise import igamma as _igamma
from ..ops.random import _standard_gamma
from .._factories import as_tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _broadcast_params

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Density proportional to x^(concentration - 1) exp(-rate x) on x > 0. ``rsample`` is reparameterised by
    implicit differentiation of the sample (NOTE [reparameterised Gamma samples] in ops/random.py)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _batched = {"concentration": 0, "rate": 0}

    def __init__(self, concentration, rate, validate_args=None) -> None:
        batch_shape = _broadcast_params(self, concentration=concentration, rate=rate)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # keep samples positive, outside the graph
        return value

    def log_prob(self, value):
        value = as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration.xlogy(self.rate) + (self.concentration - 1).xlogy(value) - self.rate * value
                - self.concentration.lgamma())

    def entropy(self):
        return (self.concentration - self.rate.log() + self.concentration.lgamma()
                + (1.0 - self.concentration) * self.concentration.digamma())

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _igamma(self.concentration, self.rate * value)
