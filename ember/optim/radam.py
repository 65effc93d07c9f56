"""RAdam: Adam with variance rectification (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .optimizer import (Optimizer, _bump_step, _commit, _grad_of, _lerp_, _no_differentiable, _params_with_grad,
                        _step_tensor, _validate, _zeros_state)

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
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        for p, g in _params_with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = _step_tensor()
                state["exp_avg"] = _zeros_state(p)
                state["exp_avg_sq"] = _zeros_state(p)
            step = _bump_step(state)
            if group["decoupled_weight_decay"]:
                p._data *= 1 - lr * wd
                g = _grad_of(p, g, group["maximize"], 0)
            else:
                g = _grad_of(p, g, group["maximize"], wd)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            _lerp_(m, g, 1 - beta1)
            v *= beta2
            v += (1 - beta2) * g * g
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
