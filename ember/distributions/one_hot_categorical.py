"""OneHotCategorical(probs | logits): one of K categories, as a one-hot vector."""
from __future__ import annotations

from .. import _factories as _F
from .._tensor import Size
from ..nn.functional import one_hot as _one_hot
from . import constraints
from ._families import _OverCategorical
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(_OverCategorical, Distribution):
    """A Categorical whose samples are one-hot vectors of length K (the event shape)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True
    _batched = {"_categorical": 0}

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        self._init_over_categories(validate_args)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=()):
        indices = self._categorical.sample(Size(sample_shape))
        return _one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _F.eye(n, dtype=self._param.dtype, device=self._param.device).view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with the straight-through gradient estimator: ``rsample`` is the one-hot sample in the
    forward pass and carries the gradient of ``probs`` (Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
