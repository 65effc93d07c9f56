"""What families of distributions share: a location/scale or a single rate parameterisation, a mean and mode at
``loc``, the parameters a wrapper reads off the distribution it wraps (a fixed transform's base, a Categorical).

These are mixins placed before the distribution base class (``class Normal(_LocationScale, ExponentialFamily)``).
They hold no ``_batched`` table: each public distribution keeps its own, so that ``expand`` names it in its
errors (NOTE [expanding a distribution]).
"""
from __future__ import annotations

from operator import attrgetter

from . import constraints
from .utils import _broadcast_params


class _CentredAtLoc:
    """A distribution symmetric and unimodal about ``loc``: its mean and its mode are both ``loc``."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class _LocationScale(_CentredAtLoc):
    """A univariate location-scale family, X = loc + scale * Z (Normal, Laplace, Cauchy): a real ``loc`` and a
    positive ``scale``, broadcast together, and reparameterised samples."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        batch_shape = _broadcast_params(self, loc=loc, scale=scale)
        super().__init__(batch_shape, validate_args=validate_args)


class _Rate:
    """A distribution with one parameter, ``rate`` (Exponential, Poisson), a tensor of the batch shape."""

    def __init__(self, rate, validate_args=None) -> None:
        batch_shape = _broadcast_params(self, rate=rate)
        super().__init__(batch_shape, validate_args=validate_args)


def _from_base(path: str) -> property:
    """A read-only property that reads ``path`` (an attribute, or a dotted chain of them) off ``base_dist``."""
    get = attrgetter(path)
    return property(lambda self: get(self.base_dist), doc=f"``base_dist.{path}``.")


class _Transformed:
    """A family defined as a fixed transform of a base distribution (LogNormal is exp of a Normal): placed before
    TransformedDistribution in the bases, its parameters are ``_from_base`` properties.

    # NOTE [expanding a transformed family]
    ``expand`` is TransformedDistribution's, behind the check that torch's families each spell out with their own
    class: the family is the class that lists ``_Transformed`` among its own bases, so a subclass of it that
    defines a custom ``__init__`` must define its own ``expand``, and the error names the family.
    """

    def expand(self, batch_shape, _instance=None):
        family = next(c for c in type(self).__mro__ if _Transformed in c.__bases__)
        return super().expand(batch_shape, _instance=self._get_checked_instance(family, _instance))


class _OverCategorical:
    """A distribution built on the Categorical it holds as ``_categorical`` (OneHotCategorical, Multinomial,
    ExpRelaxedCategorical): its parameters are the Categorical's, and its events are vectors over the K
    categories."""

    def _init_over_categories(self, validate_args) -> None:
        """``Distribution.__init__`` with the Categorical's batch shape and an event shape of (K,)."""
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs
