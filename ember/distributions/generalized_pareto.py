"""GeneralizedPareto(loc, scale, concentration)."""
from __future__ import annotations

import math

from .. import _factories as _F
from ..ops.comparison import isclose as _isclose
from ..ops.indexing import where as _where
from ..ops.shape import broadcast_to as _broadcast_to
from . import constraints
from .distribution import Distribution
from .utils import _Number, _broadcast_params

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Survival function (1 + xi z)^(-1/xi), z = (x - loc) / scale, xi = ``concentration`` (exp(-z) at xi = 0):
    the exponential (xi = 0), Pareto (xi > 0) and bounded (xi < 0) tails in one family. Sampled by inversion."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True
    _batched = {"loc": 0, "scale": 0, "concentration": 0}

    def __init__(self, loc, scale, concentration, validate_args=None):
        batch_shape = _broadcast_params(self, loc=loc, scale=scale, concentration=concentration)
        super().__init__(batch_shape, validate_args=validate_args)

    def _safe_concentration(self):
        """(concentration ~ 0, the concentration with those replaced by 1), so both branches stay finite."""
        xi = self.concentration
        at_zero = _isclose(xi, _F.zeros_like(xi))
        return at_zero, _where(at_zero, _F.ones_like(xi), xi)

    def rsample(self, sample_shape=()):
        return self.icdf(_F.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        at_zero, xi = self._safe_concentration()
        y = 1 / xi + _F.ones_like(z)
        nonzero = _where(y == 0, y, y * (xi * z).log1p())
        log_scale = math.log(self.scale) if isinstance(self.scale, _Number) else self.scale.log()
        return -log_scale - _where(at_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        at_zero, xi = self._safe_concentration()
        return _where(at_zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        at_zero, xi = self._safe_concentration()
        log_u = (-value).log1p()
        return _where(at_zero, self.loc - self.scale * log_u, self.loc + self.scale / xi * (-xi * log_u).expm1())

    @property
    def mean(self):
        valid = self.concentration < 1
        xi = _where(valid, self.concentration, 0.5)
        return _where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        xi = _where(valid, self.concentration, 0.25)
        return _where(valid, self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi)), math.nan)

    def entropy(self):
        return _broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = _where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
