"""Adamax: Adam with the infinity norm (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _commit, _grad_of, _lerp_, _no_differentiable, _validate

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (lr 2e-3 by default)."""

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _update_group(self, group: dict) -> None:
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        for p, g, state, step in self._param_steps(group, "exp_avg", "exp_inf"):
            g = _grad_of(p, g, group["maximize"], group["weight_decay"])
            m, u = state["exp_avg"]._data, state["exp_inf"]._data
            _lerp_(m, g, 1 - beta1)
            u *= beta2
            np.maximum(u, np.abs(g) + eps, out=u)
            clr = lr / (1 - beta1 ** step)
            p._data += (-clr) * m / u
            _commit(p)
