"""RelaxedBernoulli(temperature, probs | logits): the Concrete / Gumbel-softmax relaxation of a Bernoulli."""
from __future__ import annotations

from .. import _factories as _F
from . import constraints
from ._families import _Transformed, _from_base
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _BinaryParameter, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_BinaryParameter, Distribution):
    """The logit of a RelaxedBernoulli sample: (logistic noise + logits) / temperature (Maddison et al., 2017)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    _batched = {"probs": 0, "logits": 0, "_param": 0}

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self.temperature = temperature
        batch_shape = self._set_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(_F.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(_Transformed, TransformedDistribution):
    """A continuous relaxation of Bernoulli on (0, 1): sigmoid of a LogitRelaxedBernoulli sample; as the
    ``temperature`` goes to 0 its samples approach {0, 1}. ``rsample`` is reparameterised."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    temperature = _from_base("temperature")
    logits = _from_base("logits")
    probs = _from_base("probs")
