"""RelaxedOneHotCategorical(temperature, probs | logits): the Concrete / Gumbel-softmax distribution."""
from __future__ import annotations

from .. import _factories as _F
from . import constraints
from ._families import _OverCategorical, _Transformed, _from_base
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(_OverCategorical, Distribution):
    """The log of a RelaxedOneHotCategorical sample: log_softmax((logits + Gumbel noise) / temperature)
    (Maddison et al., 2017; Jang et al., 2017)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # in fact a submanifold: the logs of points of the simplex
    has_rsample = True
    _batched = {"_categorical": 0}

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        self._init_over_categories(validate_args)

    def rsample(self, sample_shape=()):
        u = clamp_probs(_F.rand(self._extended_shape(sample_shape), dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = _F.full_like(self.temperature, float(K)).lgamma() - self.temperature.log().mul(-(K - 1))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Transformed, TransformedDistribution):
    """A continuous relaxation of OneHotCategorical on the simplex: exp of an ExpRelaxedCategorical sample
    (the Gumbel-softmax); ``rsample`` is reparameterised."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    temperature = _from_base("temperature")
    logits = _from_base("logits")
    probs = _from_base("probs")
