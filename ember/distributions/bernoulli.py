"""Bernoulli(probs | logits): a single {0, 1} trial."""
from __future__ import annotations

import math

from .. import _factories as _F
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits as _bce_logits
from ..ops.random import bernoulli as _bernoulli
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _BinaryParameter, broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(_BinaryParameter, ExponentialFamily):
    """1 with probability ``probs`` (or sigmoid(``logits``)), else 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0
    _batched = {"probs": 0, "logits": 0, "_param": 0}

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        with no_grad():
            return _bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_logits(logits, value, reduction="none")

    def entropy(self):
        return _bce_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = _F.arange(2, dtype=self._param.dtype, device=self._param.device).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self):
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()
