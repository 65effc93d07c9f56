"""Adagrad with lr decay and an initial accumulator value (torch's update rule)."""
from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _check, _commit, _grad_of, _no_differentiable, _state_of, _step_tensor, _validate

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (lr 1e-2 by default); state is created at construction, as torch does."""

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        _validate(lr=lr, eps=eps, weight_decay=weight_decay)
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= initial_accumulator_value, f"Invalid initial_accumulator_value value: "
               f"{initial_accumulator_value}")
        _no_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = _state_of(np.full_like(p._data, group["initial_accumulator_value"]))

    def _update_group(self, group: dict) -> None:
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        for p, g, state, step in self._param_steps(group):  # its state is filled by __init__
            g = _grad_of(p, g, group["maximize"], group["weight_decay"])
            clr = lr / (1 + (step - 1) * lr_decay)
            s = state["sum"]._data
            s += g * g
            std = np.sqrt(s)
            std += eps
            p._data += (-clr) * g / std
            _commit(p)
