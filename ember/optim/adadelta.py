"""Adadelta (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _check, _commit, _grad_of, _no_differentiable, _validate

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (lr 1.0 by default)."""

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach=None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p, g, state, _ in self._param_steps(group, "square_avg", "acc_delta"):
            g = _grad_of(p, g, group["maximize"], group["weight_decay"])
            sq, acc = state["square_avg"]._data, state["acc_delta"]._data
            sq *= rho
            sq += (1 - rho) * g * g
            std = np.sqrt(sq + eps)
            delta = np.sqrt(acc + eps)
            delta /= std
            delta *= g
            acc *= rho
            acc += (1 - rho) * delta * delta
            p._data -= lr * delta
            _commit(p)
