"""Constraints: the sets a distribution's parameters and samples live in (``torch.distributions.constraints``).

A constraint's ``check(value)`` returns a bool tensor of ``value``'s batch shape (the shape left of its
``event_dim`` rightmost dims): whether each event lies in the set. ``is_discrete`` and ``event_dim`` say what kind of
set it is; ``biject_to``/``transform_to`` (constraint_registry) map unconstrained space onto it. The printed
form is torch's: the class name without its leading underscore, with the bounds a constraint was built from.
"""
from __future__ import annotations

from .. import _factories as _F
from .._dtype import bool as _bool, finfo
from ..ops.shape import cat as _cat, stack as _stack

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "MixtureSameFamilyConstraint", "multinomial",
           "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_semidefinite", "positive_definite",
           "positive_integer", "real", "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


class Constraint:
    """A region over which a variable is valid. ``check(value)`` says, per event, whether ``value`` lies in it."""

    is_discrete = False  # continuous unless a subclass says otherwise
    event_dim = 0  # univariate unless a subclass says otherwise
    _fields: tuple = ()  # constructor arguments shown by repr, e.g. ("lower_bound",)

    def check(self, value):
        """A bool tensor of ``value``'s batch shape: whether each event satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)}" for f in self._fields)
        return f"{type(self).__name__[1:]}({args})"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other variables (a ``Uniform``'s support depends on its
    bounds); it cannot be checked. ``is_discrete``/``event_dim`` are known only when given."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self) -> bool:
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """A dependent constraint with these static attributes (the others kept)."""
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a dependent (uncheckable) constraint."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose class-level value is a dependent constraint: ``Uniform.support`` is dependent,
    ``Uniform(0, 1).support`` is ``Interval(lower_bound=0.0, upper_bound=1.0)``. Used as a decorator, with or
    without ``(is_discrete=..., event_dim=...)``."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _OnBase(Constraint):
    """A constraint built on another, ``base_constraint``: discrete when it is; an event is valid when every
    element of it satisfies the base."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @staticmethod
    def _all_of_each_event(result, keep: int):
        """``result`` (the base's check) reduced with ``all`` over its dims after the first ``keep``."""
        return result.reshape(result.shape[:keep] + (-1,)).all(-1)


class _IndependentConstraint(_OnBase):
    """``base_constraint`` with its ``reinterpreted_batch_ndims`` rightmost batch dims made part of the event: an
    event is valid when every element of it is."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        super().__init__(base_constraint)
        if not isinstance(reinterpreted_batch_ndims, int):
            raise AssertionError(f"reinterpreted_batch_ndims must be an int, got "
                                 f"{type(reinterpreted_batch_ndims).__name__}")
        if reinterpreted_batch_ndims < 0:
            raise AssertionError(f"reinterpreted_batch_ndims must be >= 0, got {reinterpreted_batch_ndims}")
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.base_constraint.event_dim + n} but got {value.dim()}")
        return self._all_of_each_event(result, result.dim() - n)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(_OnBase):
    """The support of a ``MixtureSameFamily``: a value is valid when it lies in every component's support."""

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim

    def check(self, value):
        """Checks ``value`` (shape [sample, batch, event]) against every component's support at once."""
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return self._all_of_each_event(result, value.dim() - self.event_dim)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """{0, 1}."""

    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors: zeros and ones along the last dim, with exactly one 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


def _is_integer(value):
    return value % 1 == 0


class _LowerBounded(Constraint):
    """A set bounded below by ``lower_bound`` (shown in the printed form)."""

    _fields = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound


class _UpperBounded(Constraint):
    """A set bounded above by ``upper_bound`` (shown in the printed form)."""

    _fields = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound


class _Bounded(Constraint):
    """A set between ``lower_bound`` and ``upper_bound`` (shown in the printed form)."""

    _fields = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound


class _IntegerInterval(_Bounded):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def check(self, value):
        return _is_integer(value) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerLessThan(_UpperBounded):
    """Integers <= upper_bound."""

    is_discrete = True

    def check(self, value):
        return _is_integer(value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_LowerBounded):
    """Integers >= lower_bound."""

    is_discrete = True

    def check(self, value):
        return _is_integer(value) & (value >= self.lower_bound)


class _Real(Constraint):
    """The extended real line [-inf, inf] (NaN excluded)."""

    def check(self, value):
        return value == value


class _GreaterThan(_LowerBounded):
    """(lower_bound, inf]."""

    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_LowerBounded):
    """[lower_bound, inf]."""

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_UpperBounded):
    """[-inf, upper_bound)."""

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    """[lower_bound, upper_bound]."""

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Bounded):
    """[lower_bound, upper_bound)."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """The unit simplex along the last dim: nonnegative entries summing to 1 (within 1e-6)."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer count vectors whose sum is at most ``upper_bound`` (integrality is not checked)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


def _all_lower(value):
    return (value.tril() == value).view(value.shape[:-2] + (-1,)).min(-1)[0]


class _LowerTriangular(Constraint):
    """Lower triangular square matrices."""

    event_dim = 2

    def check(self, value):
        return _all_lower(value)


class _LowerCholesky(Constraint):
    """Lower triangular square matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        return _all_lower(value) & (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky with rows of unit Euclidean norm."""

    event_dim = 2

    def check(self, value):
        from ..linalg import vector_norm

        tol = finfo(value.dtype).eps * value.size(-1) * 10  # torch's tolerance, a fudge factor of 10
        unit_rows = (vector_norm(value.detach(), dim=-1) - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value):
        return _F.full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=_bool, device=value.device)


class _Symmetric(_Square):
    """Symmetric square matrices (within an absolute 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        from ..ops.comparison import isclose

        return isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        from ..linalg import eigvalsh

        return eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factorisation."""

    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        from ..linalg import cholesky_ex

        return cholesky_ex(value).info.eq(0)


def _check_dim(dim, value) -> None:
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(f"dim {dim} out of range for value with {value.dim()} dimensions")


class _OfParts(Constraint):
    """Constraints ``cseq`` applied to parts of a value along ``dim``: discrete when any of them is."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)


class _Cat(_OfParts):
    """``cseq[i]`` applied to the i-th of consecutive slices of ``lengths[i]`` along ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        super().__init__(cseq, dim)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _check_dim(self.dim, value)
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(_OfParts):
    """``cseq[i]`` applied to the i-th slice along ``dim``."""

    @property
    def event_dim(self) -> int:
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        _check_dim(self.dim, value)
        slices = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return _stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
