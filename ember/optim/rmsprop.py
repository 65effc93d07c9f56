"""RMSprop with momentum and centering (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _check, _commit, _grad_of, _lerp_, _no_differentiable, _validate

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (lr 1e-2 by default)."""

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay, momentum=momentum)
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _update_group(self, group: dict) -> None:
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        buffers = ("square_avg",) + (("momentum_buffer",) if momentum > 0 else ()) + (
            ("grad_avg",) if group["centered"] else ())
        for p, g, state, _ in self._param_steps(group, *buffers):
            g = _grad_of(p, g, group["maximize"], group["weight_decay"])
            sq = state["square_avg"]._data
            sq *= alpha
            sq += (1 - alpha) * g * g
            if group["centered"]:
                ga = state["grad_avg"]._data
                _lerp_(ga, g, 1 - alpha)
                avg = np.sqrt(sq + (-1) * ga * ga)
            else:
                avg = np.sqrt(sq)
            avg += eps
            if momentum > 0:
                buf = state["momentum_buffer"]._data
                buf *= momentum
                buf += g / avg
                p._data -= lr * buf
            else:
                p._data += (-lr) * g / avg
            _commit(p)
