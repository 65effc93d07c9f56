"""gradcheck / gradgradcheck: analytical gradients (reverse and forward mode) against float64 central differences,
with torch's checks of what backward returns.

# NOTE [gradcheck's options]
Each option does what torch's does, in torch's order (``_gradcheck_helper``): inputs checked (one must require
grad, none may have a zero stride), the Jacobian of every differentiable output (those requiring grad) w.r.t.
every differentiable input compared with central differences, computed by reverse mode (``check_backward_ad``:
twice, to check that backward is deterministic within ``nondet_tol``, and that each gradient has its input's
size and, with ``check_grad_dtypes``, dtype) and by forward mode (``check_forward_ad``); then batched forward
gradients under vmap (``check_batched_forward_grad``: through func.jvp, since vmap has no batching rule for
make_dual; torch's check uses its legacy vmap, which has, so a function writing in place into a tensor that is
not batched passes there and fails here, as under torch.func.vmap), batched gradients under vmap
(``check_batched_grad``),
backward run with zero output gradients giving zero input gradients of the inputs' dtype and size, and
(``check_undefined_grad``) the same with the output gradients undefined: ember has no undefined gradient
distinct from zeros, so this is the zeros check again. ``fast_mode`` checks the whole Jacobian (torch's slow
mode, which its fast mode projects onto random vectors: any Jacobian the slow check accepts passes);
``masked`` concerns sparse inputs' unstored elements, which dense inputs do not have.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


_BATCHED = ("gradcheck or gradgradcheck failed while testing batched gradient computation. (ember: the gradients "
            "computed under vmap differ from those computed one by one; check_batched_grad=False skips this.)")
_BATCHED_FORWARD = ("gradcheck failed while testing batched gradient computation with forward-mode AD. (ember: "
                    "the forward gradients computed under vmap differ from those computed one by one; "
                    "check_batched_forward_grad=False skips this.)")


def _as_tensor(jac: np.ndarray) -> Tensor:
    from .._tensor import _wrap_any

    return _wrap_any(jac)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _needs_grad(x) -> bool:
    return isinstance(x, Tensor) and x._requires_grad


def _numerical_jacobian(fn, inputs, out_index, eps):
    """d out / d input as (input.numel, out.numel) per differentiable input. Grad mode stays as it is:
    the function may itself differentiate (gradgradcheck)."""
    jacs = []
    base_out = _as_tuple(fn(*inputs))[out_index]
    for inp in inputs:
        if not _needs_grad(inp):
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
    return [j for j in jacs if j is not None]


def _analytical_jacobian(out, diff_inputs):
    """Reverse mode: one backward per output element. (jacobians, dtypes all right)."""
    from . import grad as autograd_grad
    from .. import _factories as _F

    jacs = [np.zeros((i._data.size, out._data.size)) for i in diff_inputs]
    types_ok = True
    for j in range(out._data.size):
        g = np.zeros(out._data.size, out._data.dtype)
        g[j] = 1
        grads = autograd_grad(out, diff_inputs, _F.tensor(g.reshape(out._data.shape)), retain_graph=True,
                              allow_unused=True)
        for k, (gr, inp) in enumerate(zip(grads, diff_inputs)):
            if gr is None:
                continue
            if gr.shape != inp.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            types_ok = types_ok and gr._dtype is inp._dtype
            jacs[k][:, j] = gr._data.reshape(-1)
    return jacs, types_ok


def _reverse_jacobian(out, diff_inputs, nondet_tol: float, check_grad_dtypes: bool):
    first, types_ok = _analytical_jacobian(out, diff_inputs)
    second, _ = _analytical_jacobian(out, diff_inputs)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    for a, b in zip(first, second):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
    return first


def _forward_jacobians(func, inputs, outputs_wanted, check_grad_dtypes: bool):
    """Forward mode: one jvp per input element; [output][input] -> (input.numel, out.numel)."""
    from . import forward_ad as fwAD
    from .. import _factories as _F

    diff = [i for i, x in enumerate(inputs) if _needs_grad(x)]
    jacs = None
    for col, i in enumerate(diff):
        inp = inputs[i]
        for k in range(inp._data.size):
            tangent = np.zeros(inp._data.size, inp._data.dtype)
            tangent[k] = 1
            with fwAD.dual_level():
                args = [fwAD.make_dual(x.detach(), _F.tensor(tangent.reshape(x.shape), dtype=x.dtype)) if n == i
                        else x.detach() if isinstance(x, Tensor) else x for n, x in enumerate(inputs)]
                outs = [o for n, o in enumerate(_as_tuple(func(*args))) if n in outputs_wanted]
                if jacs is None:
                    jacs = [[np.zeros((inputs[d]._data.size, o._data.size)) for d in diff] for o in outs]
                for oi, o in enumerate(outs):
                    t = fwAD.unpack_dual(o).tangent
                    if t is None:
                        continue
                    if check_grad_dtypes and t._dtype is not o._dtype:
                        raise GradcheckError("Forward AD gradient has dtype mismatch.")
                    jacs[oi][col][k] = t._data.astype(np.float64).reshape(-1)
    return jacs or []


def _mismatch(numerical, analytical, out_i: int, in_i: int, forward: bool) -> GradcheckError:
    mode = "computed with forward mode " if forward else ""
    return GradcheckError(f"Jacobian {mode}mismatch for output {out_i:d} with respect to input {in_i:d},\n"
                          f"numerical:{_as_tensor(numerical)}\nanalytical:{_as_tensor(analytical)}\n")


def _check_inputs(inputs) -> None:
    found = False
    for idx, t in enumerate(inputs):
        if not _needs_grad(t):
            continue
        found = True
        if t._dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", UserWarning, stacklevel=4)
        if any(st == 0 and n > 1 for st, n in zip(t._data.strides, t._data.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck.")
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _compare_batched(fn, vectors: list, note: str, pair) -> None:
    """``vmap(fn)`` over the stacked ``vectors`` equals ``fn`` of each, stacked; ``pair(n)``: the (output, input)
    indices that torch's message names for the n-th result."""
    from .. import allclose, stack
    from ..func import vmap

    expected = [stack(shards) for shards in zip(*[fn(v) for v in vectors])]
    try:
        result = vmap(fn)(stack(vectors))
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{note}") from ex
    for n, (res, exp) in enumerate(zip(result, expected)):
        if not allclose(res, exp):
            out_i, in_i = pair(n)
            raise GradcheckError(f"For output {out_i} and input {in_i}:\n\n{note}\n\nGot:\n{res}\n\n"
                                 f"Expected:\n{exp}")


def _batched_grad(inputs, output, out_i: int) -> None:
    """vmap over two output gradients equals the two vector-Jacobian products one by one."""
    from . import grad as autograd_grad
    from .. import _factories as _F, randn_like

    diff = [x for x in inputs if _needs_grad(x)]

    def vjp(v):
        grads = autograd_grad(output, diff, v, retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else _F.zeros(x.shape, dtype=x.dtype) for g, x in zip(grads, diff))

    _compare_batched(vjp, [randn_like(output) for _ in range(2)], _BATCHED, lambda in_i: (out_i, in_i))


def _batched_forward_grad(func, inputs) -> None:
    """vmap over two tangents of each input equals the two Jacobian-vector products one by one (as torch's check,
    through func.jvp: ember's vmap, like torch.func's, has no batching rule for make_dual)."""
    from .. import randn_like
    from ..func import jvp as func_jvp

    for i, current in enumerate(inputs):
        if not _needs_grad(current) or not current._dtype._differentiable:
            continue

        def at(x, i=i):
            args = [x if n == i else a.detach() if isinstance(a, Tensor) else a for n, a in enumerate(inputs)]
            return tuple(o for o in _as_tuple(func(*args)) if isinstance(o, Tensor))

        def jvp(tangent, current=current, at=at):
            return func_jvp(at, (current.detach(),), (tangent,))[1]

        _compare_batched(jvp, [randn_like(current) for _ in range(2)], _BATCHED_FORWARD,
                         lambda n: (n, n))  # (torch names the n-th result twice)


def _zero_output_grads(outputs, inputs, undefined: bool) -> None:
    """Zero output gradients give zero (or no) input gradients, of the inputs' dtype and size."""
    from . import grad as autograd_grad
    from .. import zeros_like

    diff = [x for x in inputs if _needs_grad(x)]
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")
    try:
        grads = autograd_grad(outputs, diff, [zeros_like(o) for o in outputs], allow_unused=True)
    except RuntimeError as e:
        if not undefined:
            raise
        raise GradcheckError('Expected backward function to handle undefined output grads. Please look at "Notes '
                             'about undefined output gradients" in "tools/autograd/derivatives.yaml"') from e
    for g, x in zip(grads, diff):
        if g is None:
            continue
        if not bool((g == 0).all()):
            raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are undefined "
                                 'or zero. Please look at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"' if undefined else
                                 "backward not multiplied by grad_output")
        if not undefined:
            if g._dtype is not x._dtype:
                raise GradcheckError("grad is incorrect type")
            if g.shape != x.shape:
                raise GradcheckError("grad is incorrect size")


def _check(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes, check_batched_grad,
           check_batched_forward_grad, check_forward_ad, check_backward_ad) -> bool:
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    wanted = [n for n, o in enumerate(func_out) if _needs_grad(o)]
    outputs = [func_out[n] for n in wanted]
    if not outputs:  # nothing differentiable: the numerical derivatives must vanish
        for n, o in enumerate(func_out):
            if isinstance(o, Tensor) and any(j.any() for j in _numerical_jacobian(func, inputs, n, eps)):
                raise GradcheckError("Numerical gradient for function expected to be zero")
    numerical = [_numerical_jacobian(func, inputs, n, eps) for n in wanted]
    if check_forward_ad and outputs:
        for oi, per_input in enumerate(_forward_jacobians(func, inputs, wanted, check_grad_dtypes)):
            for ii, (a, n) in enumerate(zip(per_input, numerical[oi])):
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise _mismatch(n, a, oi, ii, forward=True)
    if check_backward_ad:
        diff = [x for x in inputs if _needs_grad(x)]
        for oi, out in enumerate(outputs):
            analytical = _reverse_jacobian(out, diff, nondet_tol, check_grad_dtypes)
            for ii, (a, n) in enumerate(zip(analytical, numerical[oi])):
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise _mismatch(n, a, oi, ii, forward=False)
    if check_batched_forward_grad:
        _batched_forward_grad(func, inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for oi, out in enumerate(outputs):
            _batched_grad(inputs, out, oi)
    if outputs:
        _zero_output_grads(outputs, inputs, undefined=False)
        if check_undefined_grad:  # on a fresh graph, as torch's
            _zero_output_grads([o for o in _as_tuple(func(*inputs)) if _needs_grad(o)], inputs, undefined=True)
    return True


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check analytical gradients of ``func`` at ``inputs`` against finite differences (NOTE [gradcheck's
    options])."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _check(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                      check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of inputs and output gradients -> the vector-Jacobian product, by
    reverse mode (``check_rev_over_rev``) and forward mode (``check_fwd_over_rev``)."""
    from . import grad as autograd_grad
    from .. import _dtype as D
    from ..testing import make_tensor

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = [o for o in _as_tuple(func(*inputs)) if _needs_grad(o)]
        grad_outputs = tuple(make_tensor(o.shape, dtype=o.dtype if o._dtype._differentiable else D.float64,
                                         device=o.device, low=-1, high=1, requires_grad=True,
                                         noncontiguous=gen_non_contig_grad_outputs) for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if _needs_grad(x)}
    diff_go = {i for i, x in enumerate(grad_outputs) if _needs_grad(x)}

    def new_func(*args):
        ins = tuple(x.requires_grad_() if i in diff_in else x for i, x in enumerate(args[:-n_out]))
        outs = [o for o in _as_tuple(func(*ins)) if _needs_grad(o)]
        gos = tuple(x.requires_grad_() if i in diff_go else x for i, x in enumerate(args[-n_out:]))
        grads = autograd_grad(outs, [x for i, x in enumerate(ins) if i in diff_in], gos, create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
