"""Distribution: the base class of every probability distribution (torch.distributions.Distribution's contract)."""
from __future__ import annotations

import warnings

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _all_true(valid) -> bool:
    return bool(valid.all()) if isinstance(valid, Tensor) else bool(valid)


class Distribution:
    """A probability distribution over events of ``event_shape``, batched over ``batch_shape``.

    Subclasses give ``arg_constraints`` and ``support`` (checked when ``validate_args``), ``log_prob``, the moments
    they have, and ``rsample`` (reparameterised: differentiable in the parameters) or ``sample``.

    # NOTE [expanding a distribution]
    ``expand(batch_shape)`` views every batched parameter at a larger batch shape. Instead of one hand-written
    ``expand`` per distribution, a distribution lists its batched attributes in ``_batched``: name -> the number of
    its own rightmost dims (0 for a per-element parameter, 1 for Categorical's probs, 2 for a scale matrix; for a
    component distribution, its rightmost batch dims kept), or a function ``(self, batch_shape) -> new value``.
    The base ``expand`` expands those, skips lazily computed attributes that are not listed (they are recomputed
    on the new instance) and attributes the caller already set on ``_instance``, and carries the remaining state
    (unbroadcast factors, temperatures, counts) over unchanged. As in torch, a subclass that defines its own
    ``__init__`` must define its own ``expand`` (``_get_checked_instance`` raises otherwise).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    _batched: dict = {}

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution built without ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # not given: computed lazily from a parameter that was
            value = getattr(self, param)
            if not _all_true(constraint.check(value)):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                                 f"invalid values:\n{value}")

    # ---------------------------------------------------------------- shapes
    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> Size:
        """The shape of a sample of ``sample_shape``: sample_shape + batch_shape + event_shape."""
        return Size(tuple(sample_shape) + self._batch_shape + self._event_shape)

    def expand(self, batch_shape, _instance=None):
        """A distribution with the batch dims expanded to ``batch_shape`` (parameters are expanded views; no
        argument checks are repeated). See NOTE [expanding a distribution]."""
        owner = next((c for c in type(self).__mro__ if "_batched" in c.__dict__ and c.__dict__["_batched"]), None)
        if owner is None:
            raise NotImplementedError
        new = self._get_checked_instance(owner, _instance)
        batch_shape = Size(batch_shape)
        spec = owner._batched
        cls = type(self)
        for name, value in self.__dict__.items():
            if name in ("_batch_shape", "_event_shape", "_validate_args") or name in new.__dict__:
                continue
            rule = spec.get(name)
            if rule is None:
                if not isinstance(getattr(cls, name, None), lazy_property):
                    new.__dict__[name] = value
            elif callable(rule):
                new.__dict__[name] = rule(self, batch_shape)
            elif isinstance(value, Distribution):
                own = value.batch_shape[len(value.batch_shape) - rule:]
                new.__dict__[name] = value.expand(batch_shape + own)
            else:
                new.__dict__[name] = value.expand(batch_shape + value.shape[value.dim() - rule:])
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    # ---------------------------------------------------------------- what subclasses provide
    @property
    def arg_constraints(self) -> dict:
        """Argument name -> the constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint every sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """A sample of shape sample_shape + batch_shape + event_shape, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterised sample: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log density (or log mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution along dim 0: shape (cardinality,) + batch_shape + event_shape
        (batch dims of size 1 when not ``expand``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    # ---------------------------------------------------------------- validation, printed form
    def _validate_sample(self, value: Tensor) -> None:
        """Checks that ``value`` broadcasts with batch_shape + event_shape and lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        actual = value.size()
        start = len(actual) - len(self._event_shape)
        if actual[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {actual} vs {self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not _all_true(support.check(value)):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def __repr__(self) -> str:
        shown = [(k, self.__dict__[k]) for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {v if v.numel() == 1 else v.size()}" for k, v in shown)
        return f"{self.__class__.__name__}({args})"
