"""ExponentialFamily: distributions p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))."""
from __future__ import annotations

from ..autograd import grad as _grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """An exponential family: subclasses give their natural parameters theta (``_natural_params``), the log
    normalizer F (``_log_normalizer``) and the carrier measure's expectation E[k(x)] (``_mean_carrier_measure``).
    The entropy, and the KL divergence between two members of one family (a Bregman divergence of F), follow from
    F's gradient, computed by autograd."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        thetas = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*thetas)
        grads = _grad(log_norm.sum(), thetas, create_graph=True)
        result = -self._mean_carrier_measure + log_norm
        for theta, g in zip(thetas, grads):
            result = result - (theta * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
