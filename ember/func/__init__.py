"""Composable function transforms (torch.func): grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call."""
from __future__ import annotations

from ._functional_call import functional_call, stack_module_state
from ._grad import grad, grad_and_value, vjp
from ._jac import hessian, jacfwd, jacrev, jvp
from ._vmap import vmap, vmap_fallback_counts, reset_vmap_fallback_counts

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call", "stack_module_state",
           "vmap_fallback_counts", "reset_vmap_fallback_counts"]
