"""Beta(concentration1, concentration0): distributions on [0, 1]."""
from __future__ import annotations

from .. import _factories as _F
from ..ops.shape import stack as _stack
from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import _Number, broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Density proportional to x^(concentration1 - 1) (1 - x)^(concentration0 - 1): the first coordinate of a
    two-dimensional Dirichlet, which it is built on."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _batched = {"_dirichlet": 0}

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        if isinstance(concentration1, _Number) and isinstance(concentration0, _Number):
            pair = _F.tensor([float(concentration1), float(concentration0)])
        else:
            pair = _stack(broadcast_all(concentration1, concentration0), -1)
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(_stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
