"""Adam and AdamW (decoupled weight decay), with amsgrad and maximize (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _adam_moments, _commit, _decayed_grad, _no_differentiable, _validate

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam: adaptive moment estimation (``decoupled_weight_decay=True`` is AdamW)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update_group(self, group: dict) -> None:
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        moments = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if group["amsgrad"] else ("exp_avg", "exp_avg_sq")
        for p, g, state, step in self._param_steps(group, *moments):
            g = _decayed_grad(p, g, group)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            _adam_moments(m, v, g, beta1, beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            step_size = lr / bias_correction1
            if group["amsgrad"]:
                vmax = state["max_exp_avg_sq"]._data
                np.maximum(vmax, v, out=vmax)
                denom = np.sqrt(vmax) / bias_correction2_sqrt
            else:
                denom = np.sqrt(v) / bias_correction2_sqrt
            denom += eps
            p._data += (-step_size) * m / denom
            _commit(p)


class AdamW(Adam):
    """Adam with decoupled weight decay (default weight_decay=1e-2)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
