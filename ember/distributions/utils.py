"""Helpers shared by the distributions: parameter broadcasting, probs <-> logits, lazy properties, tril vectors."""
from __future__ import annotations

from functools import update_wrapper

from .. import _factories as _F
from .._dtype import finfo, get_default_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..ops.shape import broadcast_tensors

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant
_Number = (int, float, bool)  # what torch.types._Number admits as a scalar parameter


def broadcast_all(*values) -> tuple:
    """The tensors and numbers in ``values`` as tensors broadcast to one shape. Numbers take the dtype of the
    first tensor among ``values`` (the default dtype when there is none)."""
    if not all(isinstance(v, (Tensor,) + _Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, Tensor)), None)
        dtype, device = (get_default_dtype(), None) if ref is None else (ref.dtype, ref.device)
        values = [v if isinstance(v, Tensor) else _F.tensor(v, dtype=dtype, device=device) for v in values]
    return broadcast_tensors(*values)


def _standard_normal(shape, dtype, device) -> Tensor:
    """N(0, 1) samples of ``shape`` (drawn from the default generator)."""
    return _F.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (``is_binary``) or from unnormalised log-probabilities along the last dim."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into [eps, 1 - eps] of its dtype, so that logs and log1p(-p) stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (``is_binary``) or log-probabilities of ``probs`` (clamped first, see ``clamp_probs``)."""
    p = clamp_probs(probs)
    if is_binary:
        return p.log() - (-p).log1p()
    return p.log()


class lazy_property:
    """A method computed on first access (with gradients enabled) and then stored on the instance, so later reads
    are plain attribute reads. On the class it reads as a property (``_lazy_property_and_property``)."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a ``lazy_property`` is when read from the class: a property for documentation tools and a
    ``lazy_property`` for argument validation (which skips lazily computed parameters)."""

    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int, device=None) -> Tensor:
    rows = _F.arange(n, device=device)
    return rows < rows.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The elements of the lower triangle of (a batch of) ``D x D`` matrices, on and below diagonal ``diag``,
    row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``: (a batch of) ``D x D`` lower triangular matrices."""
    m = vec.shape[-1]
    # n solves n (n + 1 + 2 diag) / 2 - diag (diag + 1) / 2 ... = m: the count of entries on and below ``diag``
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular "
                         "part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., _tril_mask(n, diag, mat.device)] = vec
    return mat


def _broadcast_params(owner, **params) -> tuple:
    """Sets each parameter on ``owner`` as a tensor, all broadcast together (``broadcast_all``), and returns the
    batch shape: () when every parameter was a number, else their broadcast shape."""
    tensors = broadcast_all(*params.values())
    for name, t in zip(params, tensors):
        setattr(owner, name, t)
    if all(isinstance(v, _Number) for v in params.values()):
        return ()
    return tensors[0].size()


class _BinaryParameter:
    """The ``probs``/``logits`` pair of a distribution over {0, 1} trials (Bernoulli, Binomial, Geometric ...):
    exactly one is given, the other is computed on first use (log-odds <-> probability)."""

    def _set_probs_or_logits(self, probs, logits, **others) -> tuple:
        """Sets the given one of ``probs``/``logits`` (broadcast with ``others``) and ``_param``; returns the batch
        shape as ``_broadcast_params``."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        shape = _broadcast_params(self, **others, **{name: value})
        self._param = self.__dict__[name]
        return shape

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)
