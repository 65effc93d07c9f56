"""``biject_to`` and ``transform_to``: from a constraint to a transform from unconstrained space onto it.

``biject_to(c)`` is bijective (usable for change of variables, e.g. HMC); ``transform_to(c)`` need not be (it may
be overparameterised, e.g. softmax onto the simplex), which suits unconstrained optimisation. Both are
``ConstraintRegistry`` objects: ``register(constraint_or_class, factory)`` adds a constraint type.
"""
from __future__ import annotations

from . import constraints, transforms
from .utils import _Number

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint class -> factory(constraint) returning a Transform."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Registers ``factory`` for ``constraint``'s class (a Constraint subclass or instance); usable as a
        decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got "
                            f"{constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register(registries, constraint_types, factory):
    for registry in registries:
        for c in constraint_types:
            registry.register(c, factory)


def _to_interval(c):
    low, high = c.lower_bound, c.upper_bound
    if isinstance(low, _Number) and low == 0 and isinstance(high, _Number) and high == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(low, high - low)])


_BOTH = (biject_to, transform_to)
# constraint types -> factory, for both registries
_register(_BOTH, [constraints.real], lambda c: transforms.identity_transform)
_register(_BOTH, [constraints.positive, constraints.nonnegative], lambda c: transforms.ExpTransform())
_register(_BOTH, [constraints.greater_than, constraints.greater_than_eq], lambda c: transforms.ComposeTransform(
    [transforms.ExpTransform(), transforms.AffineTransform(c.lower_bound, 1)]))
_register(_BOTH, [constraints.less_than], lambda c: transforms.ComposeTransform(
    [transforms.ExpTransform(), transforms.AffineTransform(c.upper_bound, -1)]))
_register(_BOTH, [constraints.interval, constraints.half_open_interval], _to_interval)
_register(_BOTH, [constraints.corr_cholesky], lambda c: transforms.CorrCholeskyTransform())
# structured constraints: the same construction over each registry's own base transforms
for _reg in _BOTH:
    _reg.register(constraints.independent, lambda c, r=_reg: transforms.IndependentTransform(
        r(c.base_constraint), c.reinterpreted_batch_ndims))
    _reg.register(constraints.cat, lambda c, r=_reg: transforms.CatTransform(
        [r(x) for x in c.cseq], c.dim, c.lengths))
    _reg.register(constraints.stack, lambda c, r=_reg: transforms.StackTransform([r(x) for x in c.cseq], c.dim))
# where the two differ: a bijection onto the simplex is stick breaking; transform_to may be many-to-one
biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
_register([transform_to], [constraints.lower_cholesky], lambda c: transforms.LowerCholeskyTransform())
_register([transform_to], [constraints.positive_definite, constraints.positive_semidefinite],
          lambda c: transforms.PositiveDefiniteTransform())
del _reg
