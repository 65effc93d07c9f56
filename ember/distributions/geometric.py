"""Geometric(probs | logits): the number of failures before the first success."""
from __future__ import annotations

from .._dtype import finfo
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits as _bce_logits
from .. import _factories as _F
from . import constraints
from .distribution import Distribution
from .utils import _BinaryParameter, broadcast_all

__all__ = ["Geometric"]


class Geometric(_BinaryParameter, Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, 2, ... (failures before the first success of probability p)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _batched = {"probs": 0, "logits": 0, "_param": 0}

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0  # p = 0: no success ever
            if not valid.all():
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to be positive but found invalid values:\n"
                                 f"{value.data[~valid]}")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _F.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = self.probs.new(shape).uniform_(finfo(self.probs.dtype).tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0  # p = 1, k = 0: 0 * log(0) counts as 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return _bce_logits(self.logits, self.probs, reduction="none") / self.probs
