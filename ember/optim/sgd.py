"""SGD with momentum, dampening, Nesterov, weight decay, maximize (torch's update rule)."""
from __future__ import annotations


from .optimizer import Optimizer, _state_of, _check, _commit, _grad_of, _no_differentiable, _params_with_grad, _validate

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum)."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None) -> None:
        _validate(lr=lr, weight_decay=weight_decay, momentum=momentum)
        _no_differentiable(differentiable)
        if nesterov:
            _check(momentum > 0 and dampening == 0, "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update_group(self, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        for p, g in _params_with_grad(group):
            g = _grad_of(p, g, group["maximize"], group["weight_decay"])
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = _state_of(g.copy())
                else:
                    b = buf._data
                    b *= momentum
                    b += (1 - dampening) * g
                g = g + momentum * buf._data if group["nesterov"] else buf._data
            p._data -= lr * g if lr != 1 else g
            _commit(p)
