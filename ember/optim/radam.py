"""RAdam: Adam with variance rectification (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _adam_moments, _commit, _decayed_grad, _no_differentiable, _validate

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Rectified Adam."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        for p, g, state, step in self._param_steps(group, "exp_avg", "exp_avg_sq"):
            g = _decayed_grad(p, g, group)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            _adam_moments(m, v, g, beta1, beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            corrected = m / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = (bias_correction2 ** 0.5) / (np.sqrt(v) + eps)
                p._data -= corrected * lr * adaptive * rect
            else:
                p._data -= corrected * lr
            _commit(p)
