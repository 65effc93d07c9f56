"""Dirichlet(concentration): distributions over the probability simplex."""
from __future__ import annotations

from ..nn.functional import one_hot as _one_hot
from ..ops.random import _log_standard_gamma
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """A point of the simplex with density proportional to prod x_i^(concentration_i - 1); the last dim of
    ``concentration`` is the event dim. ``rsample`` is reparameterised (NOTE [reparameterised Gamma samples] in
    ops/random.py: normalised Gamma samples, drawn in log space)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _batched = {"concentration": 1}

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape=()):
        concentration = self.concentration.expand(self._extended_shape(sample_shape))
        return _log_standard_gamma(concentration).softmax(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((self.concentration - 1.0).xlogy(value).sum(-1) + self.concentration.sum(-1).lgamma()
                - self.concentration.lgamma().sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, True)
        corner = (self.concentration < 1).all(dim=-1)  # all below 1: the density peaks at a vertex
        mode[corner] = _one_hot(mode[corner].argmax(dim=-1), excess.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        total = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - total.lgamma() - (k - total) * total.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
