"""gradcheck / gradgradcheck: analytical gradients against float64 central differences."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


def _as_tensor(jac: np.ndarray) -> Tensor:
    from .._tensor import _wrap_any

    return _wrap_any(jac)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _numerical_jacobian(fn, inputs, out_index, eps):
    """d out / d input as (input.numel, out.numel) per differentiable input. Grad mode stays as it is:
    the function may itself differentiate (gradgradcheck)."""
    jacs = []
    base_out = _as_tuple(fn(*inputs))[out_index]
    for inp in inputs:
        if not (isinstance(inp, Tensor) and inp._requires_grad):
            jacs.append(None)
            continue
        arr = inp._data  # perturbed in place, whatever its layout
        jac = np.zeros((arr.size, base_out._data.size))
        for k, idx in enumerate(np.ndindex(arr.shape)):
            orig = arr[idx].copy()
            arr[idx] = orig + eps
            plus = _as_tuple(fn(*inputs))[out_index]._data.astype(np.float64).reshape(-1).copy()
            arr[idx] = orig - eps
            minus = _as_tuple(fn(*inputs))[out_index]._data.astype(np.float64).reshape(-1).copy()
            arr[idx] = orig
            jac[k] = (plus - minus) / (2 * eps)
        jacs.append(jac)
    return jacs


def _analytical_jacobian(fn, inputs, out_index):
    from . import grad as autograd_grad
    from .. import _factories as F

    out = _as_tuple(fn(*inputs))[out_index]
    diff_inputs = [i for i in inputs if isinstance(i, Tensor) and i._requires_grad]
    jacs = [np.zeros((i._data.size, out._data.size)) for i in diff_inputs]
    if not out._requires_grad:
        return jacs
    for j in range(out._data.size):
        g = np.zeros(out._data.size, out._data.dtype)
        g[j] = 1
        gt = F.tensor(g.reshape(out._data.shape))
        grads = autograd_grad(out, diff_inputs, gt, retain_graph=True, allow_unused=True)
        for k, gr in enumerate(grads):
            if gr is not None:
                jacs[k][:, j] = gr._data.reshape(-1)
    return jacs


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None,
              check_forward_ad: bool = False) -> bool:
    """Check analytical gradients of ``func`` at ``inputs`` against finite differences."""
    inputs = _as_tuple(inputs)
    for t in inputs:
        if isinstance(t, Tensor) and t._requires_grad and t._dtype.name != "float64":
            import warnings

            warnings.warn(f"Input #{inputs.index(t)} requires gradient and is not a double precision "
                          "floating point. This check will likely fail if all the inputs are not of double "
                          "precision floating point. ", UserWarning, stacklevel=2)
    outputs = _as_tuple(func(*inputs))
    for oi, out in enumerate(outputs):
        if not isinstance(out, Tensor) or not out._dtype._differentiable:
            continue
        numerical = _numerical_jacobian(func, inputs, oi, eps)
        analytical = _analytical_jacobian(func, inputs, oi)
        numerical = [n for n in numerical if n is not None]
        for k, (a, n) in enumerate(zip(analytical, numerical)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {oi} with respect to input {k},\n"
                        f"numerical:{_as_tensor(n)}\nanalytical:{_as_tensor(a)}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of the function input -> (vector-Jacobian product)."""
    from . import grad as autograd_grad
    from .. import _factories as F

    inputs = _as_tuple(inputs)
    outputs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(F.tensor(rng.standard_normal(o._data.shape), dtype=o._dtype,
                                      requires_grad=True) for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def new_func(*args):
        inp, gos = args[:n_in], args[n_in:]
        outs = _as_tuple(func(*inp))
        diff = [i for i in inp if isinstance(i, Tensor) and i._requires_grad]
        outs_d = [o for o in outs if o._requires_grad]
        gos_d = [g for o, g in zip(outs, gos) if o._requires_grad]
        grads = autograd_grad(outs_d, diff, gos_d, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
