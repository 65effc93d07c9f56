"""jvp, jacrev, jacfwd, hessian: Jacobians as vmaps of vector products over basis vectors.

jacrev maps the pullback of one ``vjp`` over the rows of the identity (the backward pass runs batched);
jacfwd maps ``_jvp_impl`` over its columns. ``_jvp_impl`` is the one place that computes forward-mode
products: forward-mode AD (ember.autograd.forward_ad) in a dual level of its own, placed under the vmap levels.
"""
from __future__ import annotations

from typing import Callable

from .._tensor import Tensor
from ..autograd import _interpose
from ..autograd.forward_ad import _DualLevel, _dual_at, _tangent
from . import _pytree as P
from ._grad import _check_argnums, _replace, _select, vjp
from ._vmap import active_levels, rewrap_all, unwrap_all, vmap

__all__ = ["jvp", "jacrev", "jacfwd", "hessian"]


def _jvp_impl(func: Callable, primals: tuple, tangents: tuple):
    """``(func(*primals), J·tangents)`` with ``tangents`` shaped like ``primals``: one forward pass inside a
    dual level of its own (NOTE [forward AD]).

    The level sits inside every active vmap level (between them and the physical ops, above older dual levels):
    under vmap, primals and tangents are lifted to all vmap levels and made dual on their physical values, so
    tangents follow vmap's physical ops and the physical reverse-mode graphs grad/vjp run inside (jacfwd(jacrev),
    vmap(jvp(grad))); vmap inside the function (jvp(vmap)) pushes its levels above as usual."""
    from .._factories import zeros_like

    levels = active_levels()
    pf, pspec = P.tree_flatten(primals)
    tf = P.tree_flatten(tangents)[0]
    level = _DualLevel(0)
    if levels:
        outer = levels[0]
        level.below, outer.below = outer.below, level
        pf = [rewrap_all(_dual_at(level, unwrap_all(p, levels), unwrap_all(t, levels)), levels)
              for p, t in zip(pf, tf)]
    else:
        _interpose.push(level)
        pf = [_dual_at(level, p, t) for p, t in zip(pf, tf)]
    try:
        out = func(*P.tree_unflatten(pf, pspec))
        out_flat, out_spec = P.tree_flatten(out)
        touts = []
        for o in out_flat:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            t = _tangent(unwrap_all(o, levels) if levels else o, level)
            if t is None:
                touts.append(zeros_like(o))
            else:
                touts.append(rewrap_all(t, levels) if levels else t)
    finally:
        if levels:
            levels[0].below = level.below
        else:
            _interpose.pop(level)
        level._clear()
    return out, P.tree_unflatten(touts, out_spec)


def _size_list(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J·tangents)`` (plus ``aux`` with ``has_aux``): the Jacobian-vector product."""
    if strict:
        raise RuntimeError("jvp(f, primals, tangents): strict=True is not implemented")
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it should be valid "
                           "to call f(*tangents).")
    pf, ps = P.tree_flatten(primals)
    tf, ts = P.tree_flatten(tangents)
    if ps != ts:
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {ps} and tangents with structure {ts}")
    for p, t in zip(pf, tf):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            bad = p if not isinstance(p, Tensor) else t
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(bad)}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {_size_list(p.shape)} "
                               f"while the given forward gradient is of size {_size_list(t.shape)}.")
    aux_box = []
    f = func
    if has_aux:
        def f(*args):
            out = func(*args)
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a tuple: (output, "
                                   "aux) if has_aux is True")
            aux_box.append(out[1])
            return out[0]
    out, tout = _jvp_impl(f, primals, tangents)
    if has_aux:
        return out, tout, _aux(aux_box[0], pf)
    return out, tout


def _aux(aux, primals_flat):
    """``aux`` cut from the transform's private graph unless an input is differentiated from outside."""
    if any(isinstance(x, Tensor) and x.requires_grad for x in primals_flat):
        return aux
    return P.tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, aux)


def _partial(func, args, nums, has_aux, store):
    """``func`` as a function of the differentiated arguments only (aux, if any, kept in ``store``)."""
    def f(*diff):
        out = func(*_replace(args, nums, diff if isinstance(nums, tuple) else diff[0]))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("jacrev(f, ...)(*args): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            store.append(out[1])
            return out[0]
        return out
    return f


def _basis(refs: list, like) -> list:
    """Rows of the identity over all elements of ``refs``, split and shaped like each (batch dim first)."""
    from .._factories import eye

    sizes = [r.numel() for r in refs]
    n = sum(sizes)
    full = eye(n, dtype=like.dtype)
    out, off = [], 0
    for r, s in zip(refs, sizes):
        out.append(full[:, off:off + s].reshape((n,) + tuple(r.shape)).to(r.dtype))
        off += s
    return out


def _split_rows(rows: Tensor, refs: list, tail: tuple, rows_first: bool) -> list:
    """Blocks of ``rows`` (dim 0 runs over the elements of ``refs``) shaped ``ref.shape + tail`` (rows_first)
    or ``tail + ref.shape``."""
    out, off = [], 0
    for r in refs:
        s = r.numel()
        block = rows[off:off + s]
        if rows_first:
            out.append(block.reshape(tuple(r.shape) + tail))
        else:
            nt = len(tail)
            out.append(block.movedim(0, -1).reshape(tail + tuple(r.shape)) if nt else block.reshape(r.shape))
        off += s
    return out


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """``func`` returning its Jacobian w.r.t. ``args[argnums]`` by reverse mode (vmapped vjps)."""

    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))
        diff = _select(args, nums)
        primals = diff if isinstance(nums, tuple) else (diff,)
        store: list = []
        out, pullback = vjp(_partial(func, args, nums, has_aux, store), *primals)
        out_flat, out_spec = P.tree_flatten(out)
        in_flat, in_spec = P.tree_flatten(primals)
        for o in out_flat:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jacrev(f, ...)(*args): expected f(*args) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        total = sum(o.numel() for o in out_flat)
        if total == 0:
            from .._factories import zeros

            per_out = [[zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype) for x in in_flat] for o in out_flat]
        else:
            basis = _basis(out_flat, out_flat[0])
            rows = vmap(lambda *cts: pullback(P.tree_unflatten(list(cts), out_spec)), chunk_size=chunk_size)(*basis)
            rows_flat = P.tree_flatten(rows)[0]  # one (total, *in) per input leaf
            blocks = [_split_rows(r, out_flat, tuple(x.shape), True) for r, x in zip(rows_flat, in_flat)]
            per_out = [[blocks[i][k] for i in range(len(in_flat))] for k in range(len(out_flat))]
        jac = P.tree_unflatten([_in_tree(b, in_spec, nums) for b in per_out], out_spec)
        return (jac, _aux(store[0], in_flat)) if has_aux else jac

    return wrapper


def _in_tree(leaves: list, in_spec, nums):
    tree = P.tree_unflatten(leaves, in_spec)  # a tuple over the differentiated arguments
    return tree if isinstance(nums, tuple) else tree[0]


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """``func`` returning its Jacobian w.r.t. ``args[argnums]`` by forward products (vmapped jvps)."""

    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))
        diff = _select(args, nums)
        primals = diff if isinstance(nums, tuple) else (diff,)
        in_flat, in_spec = P.tree_flatten(primals)
        for x in in_flat:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        store: list = []
        f = _partial(func, args, nums, has_aux, store)
        basis = _basis(in_flat, in_flat[0])

        def push(*tangents):
            out, tout = _jvp_impl(f, primals, P.tree_unflatten(list(tangents), in_spec))
            return (tout, store[-1]) if has_aux else tout

        cols = vmap(push, randomness=randomness)(*basis)
        if has_aux:  # aux leaves the vmap batched (the same for every column): keep one
            cols, aux = cols
            aux = _aux(P.tree_map(lambda t: t[0] if isinstance(t, Tensor) else t, aux), in_flat)
        cols_flat, out_spec = P.tree_flatten(cols)
        per_out = [_split_rows(c, in_flat, tuple(c.shape[1:]), False) for c in cols_flat]
        jac = P.tree_unflatten([_in_tree(b, in_spec, nums) for b in per_out], out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """``func`` returning its Hessian w.r.t. ``args[argnums]``: jacfwd of jacrev."""
    return jacfwd(jacrev(func, argnums), argnums)
