"""InverseGamma(concentration, rate): 1 / X for X ~ Gamma(concentration, rate)."""
from __future__ import annotations

import math

from ..ops.indexing import where as _where
from . import constraints
from ._families import _Transformed, _from_base
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(_Transformed, TransformedDistribution):
    """Density rate^concentration / Gamma(concentration) x^-(concentration + 1) exp(-rate / x) on x > 0."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    concentration = _from_base("concentration")
    rate = _from_base("rate")

    @property
    def mean(self):
        return _where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return _where(self.concentration > 2, result, math.inf)

    def entropy(self):
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())
