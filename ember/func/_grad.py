"""Reverse-mode transforms: grad, grad_and_value, vjp (torch.func semantics over ember's graph engine).

Each call runs the function on private copies of the differentiated inputs (fresh leaves, or views when
the input itself requires grad so outer differentiation still reaches it) and asks the engine for the
gradients. Under vmap the private inputs are batched at every active level (expanded where they were
not), so each example's gradient is its own; the engine works on the physical tensors (see NOTE [vmap]).
The graph of the gradients is kept (create_graph) only when something outside can differentiate them:
an input that requires grad, a captured tensor that does, or a cotangent that does.
"""
from __future__ import annotations

from typing import Callable

from .._tensor import Tensor
from ..autograd.grad_mode import _mode, enable_grad
from ..autograd.graph import _reachable_leaves
from . import _pytree as P
from ..autograd.forward_ad import _set_tangent
from ._vmap import BatchedTensor, _wrap_batched, active_levels, lift, rewrap_all, unwrap_all

__all__ = ["grad", "grad_and_value", "vjp"]


def _check_argnums(argnums, nargs: int) -> tuple[int, ...] | int:
    def one(a):
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        return a % nargs

    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        out = tuple(one(a) for a in argnums)
        if len(set(out)) != len(out):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return out
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    return one(argnums)


def _select(args: tuple, argnums):
    return tuple(args[i] for i in argnums) if isinstance(argnums, tuple) else args[argnums]


def _replace(args: tuple, argnums, values) -> tuple:
    new = list(args)
    if isinstance(argnums, tuple):
        for i, v in zip(argnums, values):
            new[i] = v
    else:
        new[argnums] = values
    return tuple(new)


def _cut(t: Tensor) -> Tensor:
    """``t`` detached from the reverse-mode graph, keeping its forward-AD tangents (under a jvp, a gradient or
    value computed here still carries them), at every vmap wrapper."""
    if type(t) is BatchedTensor:
        d = _wrap_batched(_cut(t._phys), t._lvl)
    else:
        d = t.detach()
    if t._ext is not None:
        fw = t._ext.get("fw")
        if fw:
            for level, tangent in fw.items():
                _set_tangent(d, level, tangent)
    return d


def _innermost(t: Tensor) -> Tensor:
    while type(t) is BatchedTensor:
        t = t._phys
    return t


def _private_inputs(flat: list, levels) -> tuple[list, set]:
    """Private differentiable copies of ``flat`` (checked to be tensors), batched at ``levels``, and the ids
    of the new physical leaves."""
    out, ids = [], set()
    for x in flat:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        leaf = x.view_as(x) if x.requires_grad else _cut(x).requires_grad_()
        ids.add(id(_innermost(leaf)))
        out.append(lift(leaf, levels))
    return out, ids


def _needs_graph(primals_flat, private_ids: set, outputs_phys) -> bool:
    if not _mode.grad_enabled:
        return False
    if any(x.requires_grad for x in primals_flat):
        return True
    return not _reachable_leaves(outputs_phys) <= private_ids


def _engine_grads(outputs, inputs, grad_outputs, create_graph: bool) -> list:
    from ..autograd import grad as autograd_grad

    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    return list(autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                              create_graph=create_graph, allow_unused=True))


def _finish(grads, private, levels, keep_graph: bool) -> list:
    from .._factories import zeros_like

    out = []
    for g, p in zip(grads, private):
        if g is None:
            out.append(zeros_like(p).detach())
            continue
        g = rewrap_all(g, levels)
        out.append(g if keep_graph else _cut(g))
    return out


def _detach_tree(tree, keep_graph: bool):
    if keep_graph:
        return tree
    return P.tree_map(lambda t: _cut(t) if isinstance(t, Tensor) else t, tree)


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func`` returning ``(gradient of its scalar output w.r.t. args[argnums], output)`` (with ``aux``
    as ``(grad, (output, aux))`` when ``has_aux``)."""

    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        with enable_grad():
            levels = active_levels()
            diff = _select(args, nums)
            flat, spec = P.tree_flatten(diff)
            private, ids = _private_inputs(flat, levels)
            output = func(*_replace(args, nums, P.tree_unflatten(private, spec)), **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                                   f"APIs instead?")
            out_p = unwrap_all(output, levels)
            keep = _needs_graph(flat, ids, [out_p])
            phys_inputs = [unwrap_all(p, levels) for p in private]
            from .._factories import ones_like

            grads = _engine_grads([out_p], phys_inputs, [ones_like(out_p)], keep)
            result = P.tree_unflatten(_finish(grads, private, levels, keep), spec)
            value = output if keep else _cut(output)
        if has_aux:
            return result, (value, _detach_tree(aux, keep))
        return result, value

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``func`` returning the gradient of its scalar output w.r.t. ``args[argnums]`` (``(grad, aux)`` with
    ``has_aux``)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


class _VjpFn:
    """The pullback of one ``vjp`` call: cotangents shaped like the outputs -> gradients of the primals."""

    def __init__(self, out_spec, outputs, outputs_phys, private, phys_inputs, levels, keep, primals_spec, ids):
        self.out_spec, self.outputs, self.outputs_phys = out_spec, outputs, outputs_phys
        self.private, self.phys_inputs, self.levels, self.keep = private, phys_inputs, levels, keep
        self.primals_spec = primals_spec
        self.private_ids = ids  # the physical leaves this call made (a nested vjp may treat them as its own)

    def __call__(self, cotangents, *, retain_graph: bool = True, create_graph: bool | None = None):
        flat, spec = P.tree_flatten(cotangents)
        if spec != self.out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {spec}, primal output: {self.out_spec}")
        from .._tensor import Size

        for i, (c, o) in enumerate(zip(flat, self.outputs)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp: expected cotangents to be Tensors, got {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(c.shape)} and "
                                   f"output[{i}] has a shape of {Size(o.shape)}.")
        keep = _mode.grad_enabled and (self.keep or any(c.requires_grad for c in flat))
        if create_graph is not None:
            keep = create_graph
        with enable_grad():
            cts = [unwrap_all(c, self.levels) for c in flat]
            grads = _engine_grads(self.outputs_phys, self.phys_inputs, cts, keep)
            res = _finish(grads, self.private, self.levels, keep)
        return P.tree_unflatten(res, self.primals_spec)


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` (plus ``aux``): ``vjp_fn(cotangents)`` gives the vector-Jacobian products,
    one per primal, as a tuple."""
    return _vjp(func, primals, has_aux, frozenset())


def _vjp(func: Callable, primals: tuple, has_aux: bool, also_private: frozenset):
    """vjp; leaves whose ids are in ``also_private`` count as this call's own (no outer graph through them)."""
    with enable_grad():
        levels = active_levels()
        flat, spec = P.tree_flatten(primals)
        private, ids = _private_inputs(flat, levels)
        output = func(*P.tree_unflatten(private, spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) if "
                                   "has_aux is True")
            output, aux = output
        out_flat, out_spec = P.tree_flatten(output)
        for o in out_flat:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        outs_phys = [unwrap_all(o, levels) for o in out_flat]
        ids |= also_private
        keep = _needs_graph(flat, ids, outs_phys)
        phys_inputs = [unwrap_all(p, levels) for p in private]
    fn = _VjpFn(out_spec, out_flat, outs_phys, private, phys_inputs, levels, keep, spec, ids)
    result = _detach_tree(output, keep)
    if has_aux:
        return result, fn, _detach_tree(aux, keep)
    return result, fn
