"""HalfNormal(scale) and HalfCauchy(scale): |X| for a centred Normal or Cauchy X."""
from __future__ import annotations

import math

from .. import _factories as _F
from .._factories import as_tensor
from ..ops.indexing import where as _where
from . import constraints
from ._families import _Transformed, _from_base
from .cauchy import Cauchy
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal", "HalfCauchy"]


class _Folded(TransformedDistribution):
    """|X| for X symmetric about 0 with scale ``scale``: the density doubles on [0, inf)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: type

    def __init__(self, scale, validate_args=None) -> None:
        super().__init__(self._base(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    scale = _from_base("scale")

    @property
    def mode(self):
        return _F.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = as_tensor(value, dtype=self.base_dist.scale.dtype)
        return _where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Transformed, _Folded):
    """|X| for X ~ Normal(0, scale)."""

    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Transformed, _Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    _base = Cauchy

    @property
    def mean(self):
        return _F.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
