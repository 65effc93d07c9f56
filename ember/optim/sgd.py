"""SGD with momentum, dampening, Nesterov, weight decay, maximize (torch's update rule)."""
from __future__ import annotations

from .._fuse import formula
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
        kernel = _sgd_kernel(group["nesterov"], lr != 1) if momentum != 0 else None
        for p, g in _params_with_grad(group):
            g = _grad_of(p, g, group["maximize"], group["weight_decay"])
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = _state_of(g.copy())
                    g = g + momentum * buf._data if group["nesterov"] else buf._data
                else:
                    s = p._data.dtype.type  # scalars in the parameter's dtype (NOTE [fused formulas])
                    kernel(p._data, g, buf._data, s(momentum), s(1 - dampening), s(lr))
                    _commit(p)
                    continue
            p._data -= lr * g if lr != 1 else g
            _commit(p)


# NOTE [fused SGD step]: a momentum step (after the first, which only copies the gradient into the buffer) is one
# formula (NOTE [fused formulas] in ember/_fuse.py), torch's arithmetic in its order: buf <- momentum buf +
# (1 - dampening) g, then p -= lr * (g + momentum buf if nesterov else buf) (no multiply when lr == 1).
def _sgd_formula(nesterov: bool, scaled: bool):
    def sgd_step(xp, p, g, buf, momentum, one_minus_dampening, lr):
        buf *= momentum
        buf += one_minus_dampening * g
        d = g + momentum * buf if nesterov else buf
        if scaled:
            p -= lr * d
        else:
            p -= d

    return formula(f"sgd_step_{int(nesterov)}{int(scaled)}")(sgd_step)


_SGD_KERNELS = {key: _sgd_formula(*key) for key in ((False, False), (False, True), (True, False), (True, True))}


def _sgd_kernel(nesterov: bool, scaled: bool):
    return _SGD_KERNELS[bool(nesterov), scaled]
