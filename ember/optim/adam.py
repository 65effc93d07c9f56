"""Adam and AdamW (decoupled weight decay), with amsgrad and maximize (torch's update rule)."""
from __future__ import annotations

from .._fuse import formula
from .optimizer import Optimizer, _commit, _grad_of, _lerp_, _no_differentiable, _validate

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
        amsgrad = group["amsgrad"]
        decoupled = group.get("decoupled_weight_decay", False) and group["weight_decay"] != 0
        lerp_in = 1 - beta1 < 0.5  # torch's lerp: the other branch runs outside the formula (_lerp_)
        kernel = _adam_kernel(decoupled, lerp_in, amsgrad)
        moments = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else ("exp_avg", "exp_avg_sq")
        wd = group["weight_decay"]
        scalars = {}  # (dtype, step) -> the formula's scalars in that dtype (NOTE [fused formulas])
        for p, g, state, step in self._param_steps(group, *moments):
            pd = p._data
            g = _grad_of(p, g, group["maximize"], 0 if decoupled else wd)
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            if not lerp_in:
                _lerp_(m, g, 1 - beta1)
            c = scalars.get((pd.dtype, step))
            if c is None:
                s = pd.dtype.type
                c = scalars[pd.dtype, step] = (s(1 - lr * wd), s(1 - beta1), s(beta2), s(1 - beta2),
                                               s((1 - beta2 ** step) ** 0.5), s(eps), s(-(lr / (1 - beta1 ** step))))
            kernel(pd, g, m, v, state["max_exp_avg_sq"]._data if amsgrad else v, *c)
            _commit(p)


# NOTE [fused Adam step]: one parameter's whole Adam step is one formula (NOTE [fused formulas] in ember/_fuse.py),
# one kernel on a GPU where the op-by-op update ran 13; on the host it is torch's single-tensor arithmetic, in its
# order: decoupled decay p *= 1 - lr wd, m <- lerp(m, g, 1 - beta1), v <- beta2 v + (1 - beta2) g^2 (amsgrad: vmax <-
# max(vmax, v), used for v), p += (-lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps). A variant per (decoupled decay,
# lerp inside, amsgrad): Python cannot branch inside a fused kernel.
def _adam_formula(decoupled: bool, lerp_in: bool, amsgrad: bool):
    def adam_step(xp, p, g, m, v, vmax, decay, w, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step_size):
        if decoupled:
            p *= decay
        if lerp_in:
            m += w * (g - m)
        v *= beta2
        v += one_minus_beta2 * g * g
        if amsgrad:
            xp.maximum(vmax, v, out=vmax)
            denom = xp.sqrt(vmax) / bc2_sqrt + eps
        else:
            denom = xp.sqrt(v) / bc2_sqrt + eps
        p += neg_step_size * m / denom

    return formula(f"adam_step_{int(decoupled)}{int(lerp_in)}{int(amsgrad)}")(adam_step)


_ADAM_KERNELS = {(d, li, a): _adam_formula(d, li, a) for d in (False, True) for li in (False, True) for a in (False, True)}


def _adam_kernel(decoupled: bool, lerp_in: bool, amsgrad: bool):
    return _ADAM_KERNELS[decoupled, lerp_in, bool(amsgrad)]


class AdamW(Adam):
    """Adam with decoupled weight decay (default weight_decay=1e-2)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
