"""NAdam: Adam with Nesterov momentum and momentum decay (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .. import _factories as _F
from .optimizer import Optimizer, _adam_moments, _check, _commit, _decayed_grad, _no_differentiable, _validate

__all__ = ["NAdam"]


def _one():
    """A fresh float32 0-d one: the running product of the momentum coefficients starts there."""
    return _F.tensor(1.0)


class NAdam(Optimizer):
    """NAdam (lr 2e-3 by default)."""

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, eps, md = group["lr"], group["eps"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        for p, g, state, step in self._param_steps(group, "exp_avg", "exp_avg_sq", mu_product=_one):
            g = _decayed_grad(p, g, group)
            bias_correction2 = 1 - beta2 ** step
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
            mp = state["mu_product"]._data
            mp *= np.float32(mu)  # a float32 tensor in torch too
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            _adam_moments(m, v, g, beta1, beta2)
            denom = np.sqrt(v / bias_correction2)
            mu_product = float(mp)
            mu_product_next = mu_product * mu_next
            denom += eps
            p._data += (-lr * (1.0 - mu) / (1.0 - mu_product)) * g / denom
            p._data += ((-lr * mu_next) / (1.0 - mu_product_next)) * m / denom
            _commit(p)
