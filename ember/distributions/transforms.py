"""Transforms: invertible (or not) maps between constrained spaces, with log|det J| (torch.distributions.transforms).

A ``Transform`` maps ``domain`` to ``codomain`` (constraints); ``t(x)`` applies it, ``t.inv(y)`` inverts it,
``log_abs_det_jacobian(x, y)`` is log |dy/dx| summed over the transform's event dims (``domain.event_dim``).
``forward_shape``/``inverse_shape`` map event shapes. ``cache_size=1`` remembers the last (x, y) pair, so that
``t.inv(t(x))`` returns ``x`` itself (as for non-injective transforms such as ``AbsTransform``).
"""
from __future__ import annotations

import math
import operator
from functools import reduce

from .. import _factories as _F
from .._dtype import finfo
from .._tensor import Size
from ..nn import functional as F
from ..ops.shape import broadcast_shapes, cat as _cat, stack as _stack
from . import constraints
from .utils import _Number, _sum_rightmost, broadcast_all, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
           "identity_transform"]


class Transform:
    """An invertible (``bijective``) or merely computable map with a computable log|det J|.

    Subclasses implement ``_call``, ``_inverse`` and ``log_abs_det_jacobian`` and declare ``domain``,
    ``codomain``, ``bijective`` and ``sign`` (the sign of the derivative, for monotone univariate maps). Transforms
    compare equal by identity unless a subclass says otherwise."""

    bijective = False

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 1:
            self._cached_x_y = None, None
        elif cache_size != 0:
            raise ValueError("cache_size must be 0 or 1")

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None  # the inverse holds a reference back: rebuilt on demand
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        """The inverse transform, such that ``t.inv(t(x)) == x`` (a weak pairing: built once and kept)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> int:
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        """This transform with a cache of ``cache_size`` (0 or 1)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        return self._through_cache(x, self._call, 0)

    def _inv_call(self, y):
        return self._through_cache(y, self._inverse, 1)

    def _through_cache(self, value, compute, side: int):
        """``compute(value)``, where ``value`` is the x (``side`` 0) or the y (``side`` 1) of the pair: with
        ``cache_size=1``, the other half of the last pair when ``value`` is that pair's own, else computed and
        remembered."""
        if self._cache_size == 0:
            return compute(value)
        if value is self._cached_x_y[side]:
            return self._cached_x_y[1 - side]
        result = compute(value)
        self._cached_x_y = (value, result) if side == 0 else (result, value)
        return result

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |dy/dx| for y = t(x)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """The shape of t(x) for x of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The shape of t.inv(y) for y of ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform (``t.inv``): calls go to the original's ``_inv_call``, sharing its cache."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self) -> bool:
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class _SameType:
    """Equality for transforms without parameters: any two of one class are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))


class ComposeTransform(Transform):
    """``parts`` applied in order; its log|det J| sums the parts' over the composed event dims."""

    def __init__(self, parts: list, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    def _event_dim(self, forward: bool) -> int:
        """The event dim of the domain (``not forward``) or codomain the whole chain needs."""
        parts = self.parts if forward else self.parts[::-1]
        ends = (lambda p: (p.domain, p.codomain)) if forward else (lambda p: (p.codomain, p.domain))
        event_dim = ends(parts[0])[0].event_dim
        for part in parts:
            src, dst = ends(part)
            event_dim = max(event_dim + dst.event_dim - src.event_dim, dst.event_dim)
        return event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self._event_dim(False)
        if event_dim < domain.event_dim:
            raise AssertionError(f"event_dim {event_dim} must be >= domain.event_dim {domain.event_dim}")
        return constraints.independent(domain, event_dim - domain.event_dim) if event_dim > domain.event_dim \
            else domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self._event_dim(True)
        if event_dim < codomain.event_dim:
            raise AssertionError(f"event_dim {event_dim} must be >= codomain.event_dim {codomain.event_dim}")
        return constraints.independent(codomain, event_dim - codomain.event_dim) if event_dim > codomain.event_dim \
            else codomain

    @lazy_property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self) -> int:
        return reduce(operator.mul, (p.sign for p in self.parts), 1)

    @property
    def inv(self) -> Transform:
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _F.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return self.__class__.__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims treated as event dims (its
    log|det J| is summed over them)."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (volume preserving)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + self.out_shape)

    def _inverse(self, y):
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _swap(shape, old: Size, new: Size):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


class _IncreasingBijection(_SameType, Transform):
    """An increasing elementwise bijection of the real line onto ``codomain``, without parameters (so any two of
    one class are equal)."""

    domain = constraints.real
    bijective = True
    sign = +1


class ExpTransform(_IncreasingBijection):
    """y = exp(x)."""

    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and self.exponent.eq(other.exponent).all().item()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    """sigmoid(x) kept inside [tiny, 1 - eps] of the dtype, so that its logit stays finite."""
    fi = finfo(x.dtype)
    return x.sigmoid().clamp(min=fi.tiny, max=1.0 - fi.eps)


class SigmoidTransform(_IncreasingBijection):
    """y = 1 / (1 + exp(-x)) (kept off 0 and 1)."""

    codomain = constraints.unit_interval

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        fi = finfo(y.dtype)
        y = y.clamp(min=fi.tiny, max=1.0 - fi.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(_IncreasingBijection):
    """y = log(1 + exp(x))."""

    codomain = constraints.positive

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(_IncreasingBijection):
    """y = tanh(x). Its log|det J| is written as 2 (log 2 - x - softplus(-2x)), which stays finite for large |x|.
    Prefer ``cache_size=1`` when inverting samples: atanh near +-1 loses precision."""

    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(_SameType, Transform):
    """y = |x| (not injective: its ``inv`` returns y itself)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, over ``event_dim`` rightmost dims (its log|det J| summed over those)."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(constraints.real, self.event_dim) if self.event_dim else constraints.real

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(constraints.real, self.event_dim) if self.event_dim else constraints.real

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, _Number) and isinstance(theirs, _Number):
                if mine != theirs:
                    return False
            elif not (mine == theirs).all().item():
                return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, _Number):
            s = float(self.scale)
            return 1 if s > 0 else -1 if s < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, _Number):
            result = _F.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.view(result.size()[:-self.event_dim] + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape


class CorrCholeskyTransform(Transform):
    """An unconstrained vector of length D(D-1)/2 -> the Cholesky factor of a D x D correlation matrix: tanh
    maps each entry into (-1, 1) (partial correlations), then the stick-breaking construction fills each row so
    that it has unit norm."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = x.tanh()
        eps = finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # row i: y_ij = r_ij * prod_{k<j} sqrt(1 - r_ik^2), with r_ii = 1
        remaining = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + _F.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * F.pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)  # 1 - (squared norm of each row so far)
        left_before = F.pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_before, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = 1 - (y * y).cumsum(-1)
        stick_breaking = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)


def _at_least_1d(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class SoftmaxTransform(_SameType, Transform):
    """y = softmax(x) along the last dim (not bijective: its ``inv`` is log)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        return _at_least_1d(shape)

    inverse_shape = forward_shape


def _stick_offset(x, k: int):
    """log(K - j) for j = 0 .. K-1: the shift that maps x = 0 to the simplex's centre."""
    return (k - x.new_ones(x.shape[-1]).cumsum(-1)).log()


class StickBreakingTransform(_SameType, Transform):
    """R^K -> the simplex in R^(K+1) by stick breaking: z_j = sigmoid(x_j - log(K - j)) is the fraction of the
    stick left that piece j takes; the last piece takes the rest. Bijective."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offset(x, x.shape[-1] + 1))
        left = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(left, [1, 0], value=1)

    def _inverse(self, y):
        pieces = y[..., :-1]
        left = (1 - pieces.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return pieces.log() - left.log() + _stick_offset(pieces, y.shape[-1])

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offset(x, x.shape[-1] + 1)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        return _at_least_1d(shape)[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        return _at_least_1d(shape)[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(_SameType, Transform):
    """Square matrices -> lower triangular matrices with a positive diagonal: the strict lower triangle is kept
    and the diagonal exponentiated (not bijective: the upper triangle is dropped)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_SameType, Transform):
    """Square matrices -> positive-definite matrices: L L^T with L = LowerCholeskyTransform()(x)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return low @ low.mT

    def _inverse(self, y):
        from ..linalg import cholesky

        return LowerCholeskyTransform().inv(cholesky(y))


def _parts_with_cache(tseq, cache_size: int) -> list:
    """The transforms ``tseq`` (checked to be Transforms) as a new list, each with ``cache_size``: the parts of a
    CatTransform or StackTransform."""
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")
    if cache_size:
        return [t.with_cache(cache_size) for t in tseq]
    return list(tseq)


class CatTransform(Transform):
    """``tseq[i]`` applied to consecutive slices of ``lengths[i]`` along ``dim``, the results concatenated."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        tseq = _parts_with_cache(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, name: str, t, what: str = "tensor"):
        if not -t.dim() <= self.dim < t.dim():
            raise AssertionError(f"dim {self.dim} out of range for {what} with {t.dim()} dimensions")
        if t.size(self.dim) != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {t.size(self.dim)} must equal length {self.length}")
        start = 0
        for length in self.lengths:
            yield t.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return _cat([t(p) for t, p in zip(self.transforms, self._pieces("x", x))], dim=self.dim)

    def _inverse(self, y):
        return _cat([t.inv(p) for t, p in zip(self.transforms, self._pieces("y", y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        xs, ys = list(self._pieces("x", x, "x")), list(self._pieces("y", y, "y"))
        terms = []
        for t, xp, yp in zip(self.transforms, xs, ys):
            term = t.log_abs_det_jacobian(xp, yp)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return _cat(terms, dim=dim) if dim < 0 else sum(terms)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` applied to the i-th slice along ``dim``, the results stacked."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        tseq = _parts_with_cache(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, name: str, z, what: str = "tensor"):
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for {what} with {z.dim()} dimensions")
        if z.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {z.size(self.dim)} must equal len(transforms) "
                                 f"{len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return _stack([t(s) for s, t in zip(self._slices("x", x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        return _stack([t.inv(s) for s, t in zip(self._slices("y", y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        xs, ys = self._slices("x", x, "x"), self._slices("y", y, "y")
        return _stack([t.log_abs_det_jacobian(a, b) for a, b, t in zip(xs, ys, self.transforms)], dim=self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x): the support -> [0, 1]; its log|det J| is the log density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
