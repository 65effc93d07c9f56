"""Higher-level autograd: vjp, jvp, jacobian, hessian, vhp, hvp (torch.autograd.functional)."""
from __future__ import annotations

from typing import Callable

from .._tensor import Tensor
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, (tuple, list)):
        raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                        f"value given has type {type(x)}.")
    for i, el in enumerate(x):
        if not isinstance(el, Tensor):
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"element {i} of the given {arg_name} has type {type(el)}.")
    return True, tuple(x)


def _unpack(is_tuple: bool, values: tuple):
    return values if is_tuple else values[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Inputs that require grad: connected to the caller's graph only with create_graph."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(values, create_graph: bool):
    if isinstance(values, tuple):
        return tuple(_finish(v, create_graph) for v in values)
    if values is None or create_graph:
        return values
    return values.detach()


def _grad(outputs, inputs, grad_outputs, create_graph: bool, strict: bool, where: str):
    from . import grad as autograd_grad
    from .._factories import zeros_like

    outs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if outs:
        grads = autograd_grad([o for o, _ in outs], inputs, [g for _, g in outs], retain_graph=True,
                              create_graph=create_graph, allow_unused=True)
    else:
        grads = (None,) * len(inputs)
    result = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                                   f"not allowed in strict mode{where}.")
            g = zeros_like(inputs[i])
        result.append(g)
    return tuple(result)


def _check_v(v, outputs: tuple, fn_name: str, what: str = "output") -> tuple:
    from .._factories import ones_like

    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        return (ones_like(outputs[0]),)
    _, vt = _as_tuple(v, "v", fn_name)
    if len(vt) != len(outputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(outputs)} but got {len(vt)}.")
    for i, (a, b) in enumerate(zip(vt, outputs)):
        if a.shape != b.shape:
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {b.shape} but got {a.shape}.")
    return vt


def _call(func: Callable, inputs: tuple, fn_name: str) -> tuple[bool, tuple]:
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    return is_tuple, outputs


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), vᵀ·J)``: the vector-Jacobian product at ``inputs``."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    with enable_grad():
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _call(func, inputs, "vjp")
        vt = _check_v(v, outputs, "vjp")
        grads = _grad(outputs, inputs, vt, create_graph, strict, "")
    return _finish(_unpack(out_tuple, outputs), create_graph), _finish(_unpack(in_tuple, grads), create_graph)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J·v)``: the Jacobian-vector product, by the double-vjp trick."""
    from .._factories import zeros_like

    in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        from .._factories import ones_like

        vt = (ones_like(inputs[0]),)
    else:
        _, vt = _as_tuple(v, "v", "jvp")
        if len(vt) != len(inputs):
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(inputs)} but got {len(vt)}.")
        for i, (a, b) in enumerate(zip(vt, inputs)):
            if a.shape != b.shape:
                raise RuntimeError(f"Entry {i} in v has invalid size: should be {b.shape} but got {a.shape}.")
    with enable_grad():
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _call(func, inputs, "jvp")
        dummies = tuple(zeros_like(o).requires_grad_(True) for o in outputs)
        g = _grad(outputs, inputs, dummies, True, strict, "")
        grads = _grad(g, dummies, vt, create_graph, strict, "")
    return _finish(_unpack(out_tuple, outputs), create_graph), _finish(_unpack(out_tuple, grads), create_graph)


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (shape output.shape + input.shape per pair)."""
    from .._factories import zeros
    from ..ops.shape import stack

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                                      'mode"` are not supported together (yet). Please either set `create_graph=False` '
                                      'or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                           "together. Please either set `strict=False` or `vectorize=False`.")
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _call(func, inputs, "jacobian")
        jac = []
        for oi, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(flat.numel()):
                gk = zeros(flat.numel(), dtype=out.dtype)
                gk._data[k] = 1
                gk = gk.reshape(out.shape)
                if out.requires_grad:
                    g = _grad((out,), inputs, (gk,), create_graph, strict, f" (output {oi})")
                else:
                    if strict:
                        raise RuntimeError(f"Output {oi} of the user-provided function does not require gradients. "
                                           "The outputs must be computed in a differentiable manner from the input "
                                           "when running in strict mode.")
                    g = tuple(zeros(i.shape, dtype=i.dtype) for i in inputs)
                for ii, gi in enumerate(g):
                    rows[ii].append(gi)
            per_input = []
            for ii, inp in enumerate(inputs):
                if rows[ii]:
                    j = stack(rows[ii], 0).reshape(tuple(out.shape) + tuple(inp.shape))
                else:
                    j = zeros(tuple(out.shape) + tuple(inp.shape), dtype=out.dtype)
                per_input.append(j)
            jac.append(tuple(per_input))
    return _unnest(_finish(tuple(jac), create_graph), out_tuple, in_tuple)


def _unnest(jac: tuple, out_tuple: bool, in_tuple: bool):
    """The (outputs x inputs) nest of Jacobian blocks, without the levels the caller passed as bare tensors."""
    if not out_tuple and not in_tuple:
        return jac[0][0]
    if not out_tuple:
        return jac[0]
    if not in_tuple:
        return tuple(j[0] for j in jac)
    return jac


def _jacfwd(func: Callable, inputs, strict: bool, vectorize: bool):
    """The Jacobian by forward-mode AD: ember.func.jacfwd (a vmap of jvps over the inputs' standard basis)."""
    from ..func import jacfwd

    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")  # sic: torch's message
    box = []

    def outputs_tuple(*xs):
        out_tuple, outs = _as_tuple(func(*xs), "outputs", "jacobian")
        box.append(out_tuple)
        return outs

    jac = jacfwd(outputs_tuple, argnums=tuple(range(len(inputs))))(*inputs)
    return _unnest(jac, box[0], in_tuple)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function ``func`` at ``inputs``."""
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    in_tuple, tinputs = _as_tuple(inputs, "inputs", "hessian")

    def single(*inp):
        out = func(*inp)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element.")
        return out

    def jac_func(*inp):
        from . import grad as autograd_grad
        from .._factories import zeros_like

        out = single(*inp)
        grads = autograd_grad(out, inp, create_graph=True, allow_unused=True)
        return tuple(zeros_like(i) if g is None else g for g, i in zip(grads, inp))

    if outer_jacobian_strategy == "forward-mode":  # forward over reverse: the inner gradient as a transform
        from ..func import grad as func_grad

        def jac_func(*inp):  # noqa: F811 - the transform form works on the batched duals of the outer jacobian
            return func_grad(lambda *a: single(*a).reshape(()), argnums=tuple(range(len(inp))))(*inp)

    res = jacobian(jac_func, tinputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    if not in_tuple:
        return res[0][0]
    return res


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), vᵀ·H)`` for a scalar function."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
    with enable_grad():
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _call(func, inputs, "vhp")
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The function given in vhp should return a single Tensor with a single element.")
        vt = _check_inputs_v(v, inputs, "vhp")
        g = _grad(outputs, inputs, _ones(outputs), True, strict, "")
        res = _grad(g, inputs, vt, create_graph, strict, "")
    return _finish(outputs[0], create_graph), _finish(_unpack(in_tuple, res), create_graph)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H·v)`` for a scalar function (double-backward trick)."""
    from .._factories import zeros_like

    in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
    with enable_grad():
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _call(func, inputs, "hvp")
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The function given in hvp should return a single Tensor with a single element.")
        vt = _check_inputs_v(v, inputs, "hvp")
        g = _grad(outputs, inputs, _ones(outputs), True, strict, "")
        dummies = tuple(zeros_like(x).requires_grad_(True) for x in g)
        gg = _grad(g, inputs, dummies, True, strict, "")
        res = _grad(gg, dummies, vt, create_graph, strict, "")
    return _finish(outputs[0], create_graph), _finish(_unpack(in_tuple, res), create_graph)


def _ones(outputs):
    from .._factories import ones_like

    return tuple(ones_like(o) for o in outputs)


def _check_inputs_v(v, inputs, fn_name):
    from .._factories import ones_like

    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        return (ones_like(inputs[0]),)
    _, vt = _as_tuple(v, "v", fn_name)
    if len(vt) != len(inputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(inputs)} but got {len(vt)}.")
    for i, (a, b) in enumerate(zip(vt, inputs)):
        if a.shape != b.shape:
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {b.shape} but got {a.shape}.")
    return vt
