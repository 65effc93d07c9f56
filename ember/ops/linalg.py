"""Products: matmul (every rank case), mm, bmm, mv, dot, outer, the add-product family (addmm ...),
einsum, tensordot, kron, cross."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _backend as _B
from .. import _args
from .._args import tensor_arg as _tensor_arg
from .. import _dtype as D
from .._malloc import translate_errors_of as _translate_errors_of
from ._op import Op, multilinear, silent, _multilinear, _zero_or_const, refuse_tangents
from .._tensor import Tensor, _wrap, _CPP_NAMES, _all_examples, _wrap_dim
from ..autograd.grad_mode import _mode
from ._composing import _ember, _long
from .complex_numbers import conj_if_complex as _conj, conj_array as _conj_array

_matmul = silent(np.matmul)  # inf * 0 inside the products: nan as torch, no NumPy warning

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "baddbmm",
           "addbmm", "einsum", "tensordot", "kron", "cross"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)


def _check_dtypes(a, b, name: str) -> None:
    if a.dtype != b.dtype:
        da, db = D.from_numpy_dtype(a.dtype), D.from_numpy_dtype(b.dtype)
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {da.name_long} != {db.name_long}"
                           if hasattr(da, "name_long") else
                           f"expected m1 and m2 to have the same dtype, but got: {_cpp_name(da)} != {_cpp_name(db)}")


def _cpp_name(d) -> str:
    return _CPP_NAMES[d.name][0]


def _matmul_forward(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    _check_dtypes(a, b, "matmul")
    if a.ndim == 1 and b.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                               f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                               "respectively")
        return _B.asarray(np.dot(a, b))
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if b.ndim >= 3:
        try:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            from .arithmetic import _broadcast_error

            raise _broadcast_error(np.empty(a.shape[:-2]), np.empty(b.shape[:-2])) from None
        if k_a != k_b:
            n = int(np.prod(batch))
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {k_a}] but got: "
                               f"[{n}, {k_b}].")
    elif k_a != k_b:
        rows = int(np.prod(a.shape[:-1]))
        if b.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k_a}), vec ({k_b})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and {k_b}x{b.shape[-1]})")
    if b.ndim >= 3 and a.ndim >= 2 and a.size and b.size and not any(b.strides[:-2]) and a.shape[:-2] == np.broadcast_shapes(
            a.shape[:-2], b.shape[:-2]):
        # b is one matrix broadcast along its batch dims (an expanded parameter under vmap): one GEMM
        m = b[(0,) * (b.ndim - 2)]
        return _matmul(a.reshape(-1, k_a), m).reshape(a.shape[:-1] + (m.shape[-1],))
    if b.ndim == 2 and a.ndim >= 3 and a.size and b.size:
        # NOTE [folded matmul]: a batch of matrices times one matrix is one GEMM over all the rows (NumPy's matmul
        # loops over the batch with a small GEMM each); torch folds it the same way. The backward folds too.
        return _matmul(a.reshape(-1, k_a), b).reshape(a.shape[:-1] + (b.shape[1],))
    if k_a == 1 and a.ndim >= 3 and b.ndim >= 2:
        # batched outer products: NumPy's matmul loops slowly over k == 1; the broadcast product is the same sum
        return np.multiply(a, b)
    try:
        return _matmul(a, b)
    except ValueError:
        from .arithmetic import _broadcast_error

        raise _broadcast_error(np.empty(a.shape[:-2]), np.empty(b.shape[:-2])) from None


class Matmul(Op):
    """d(self @ other) = grad @ other^T, self^T @ grad (1-d operands act as vectors)"""

    __slots__ = ("ranks",)  # the operands' ndims: backward needs them when one operand was not saved
    jvp = multilinear
    _name = "UnsafeViewBackward0"
    save = ("self", "other")
    holomorphic = True  # NOTE [holomorphic formulas]: grad @ other^H, self^H @ grad for complex factors
    save_for = {"self": ("other",), "other": ("self",)}

    @staticmethod
    def forward(ctx, self, other):
        if ctx is not None:
            ctx.ranks = (self.ndim, other.ndim)
        return _matmul_forward(self, other)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        n0, n1 = ctx._next
        ga = gb = None
        ra, rb = ctx.ranks
        if ra == 1 and rb == 1:
            return (grad * b if n0[0] is not None else None, grad * a if n1[0] is not None else None)
        if ra == 1:
            if n0[0] is not None:
                ga = (grad.unsqueeze(-2) @ b.mT).squeeze(-2)
            if n1[0] is not None:
                gb = a.unsqueeze(-1) @ grad.unsqueeze(-2)
        elif rb == 1:
            if n0[0] is not None:
                ga = grad.unsqueeze(-1) @ b.unsqueeze(-2)
            if n1[0] is not None:
                gb = (a.mT @ grad.unsqueeze(-1)).squeeze(-1)
        else:
            return _mm_grads(grad, a, b, n0[0] is not None, n1[0] is not None, ra > 2 and rb == 2)
        return ga, gb


def _named(name: str, second: str = "other"):
    """Matmul under torch's node ``name``, its second operand named as torch's formula names it (``_saved_mat2``)."""
    ns = {"__slots__": (), "_name": name}
    if second != "other":
        ns.update(inputs=("self", second), save=("self", second), save_for={"self": (second,), second: ("self",)})
    return type(name.replace("Backward0", "").replace("Backward4", "Vec"), (Matmul,), ns)


# torch's matmul is a composite; the node it leaves on the result depends on the ranks (and, for a
# matrix times a batch, on whether the matrix requires grad). The math is Matmul's in every case.
Mm, Dot, Mv, Bmm = _named("MmBackward0", "mat2"), _named("DotBackward0", "tensor"), _named("MvBackward0", "vec"), \
    _named("BmmBackward0", "mat2")
VecMat, MatBatch = _named("SqueezeBackward4"), _named("CloneBackward0")


def matmul(input, other):
    """Matrix product with NumPy/torch rank rules (1-d operands are vectors, batches broadcast)."""
    na, nb = input.ndim, other.ndim
    if na == 2:
        if nb == 2:
            return Mm.apply(input, other)
        if nb == 1:
            return Mv.apply(input, other)
        if nb >= 3 and input._requires_grad and _mode.grad_enabled:
            return MatBatch.apply(input, other)
    elif na == 1:
        if nb == 1:
            return Dot.apply(input, other)
        if nb == 2:
            return VecMat.apply(input, other)
    return Matmul.apply(input, other)


def _no_out_dtype(name: str, out_dtype) -> None:
    """torch's ``out_dtype`` overloads (a float16/bfloat16 product accumulated into float32) have no CPU kernel."""
    if out_dtype is not None:
        raise NotImplementedError(f"Could not run 'aten::{name}.dtype' with arguments from the 'CPU' backend. This "
                                  "could be because the operator doesn't exist for this backend.")


def mm(input, mat2, out_dtype=None):
    """Product of two matrices (2-d only)."""
    _no_out_dtype("mm", out_dtype)
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return Mm.apply(input, mat2)


def bmm(input, mat2, out_dtype=None):
    """Batched product of two 3-d tensors with the same batch size."""
    _no_out_dtype("bmm", out_dtype)
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
                           f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return Bmm.apply(input, mat2)


# ------------------------------------------------------------------ vector products
_DT_NAMES = {n: scalar for n, (_, scalar) in _CPP_NAMES.items()}


def _dt_title(t) -> str:
    return t._dtype._scalar_name


class Vdot(Dot):
    """d sum(conj(self) * other) = conj(grad) * other, grad * self (real tensors: vdot is dot)"""

    __slots__ = ()
    _name = "VdotBackward0"
    inputs = save = ("self", "other")
    save_for = {"self": ("other",), "other": ("self",)}
    holomorphic = False  # conjugate-linear in self: its own formula
    forward = staticmethod(lambda ctx, self, other: _matmul_forward(_conj_array(self), other))

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        n0, n1 = ctx._next
        return (_conj(grad) * b if n0[0] is not None else None, grad * a if n1[0] is not None else None)



def _dot_checks(input, other, fname: str) -> None:
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{fname} : expected both vectors to have same dtype, but found {_dt_title(input)} and "
                           f"{_dt_title(other)}")


def dot(input, tensor):
    """Inner product of two 1-d tensors of the same dtype."""
    _dot_checks(input, tensor, "dot")
    return Dot.apply(input, tensor)


def vdot(input, other):
    """dot with the first argument conjugated (the same as dot for real tensors)."""
    _dot_checks(input, other, "vdot")
    return Vdot.apply(input, other)


def mv(input, vec):
    """Matrix (2-d) times vector (1-d)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    return Mv.apply(input, vec)


def outer(input, vec2):
    """Outer product of two 1-d tensors."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D" if input.ndim != 1 else
                           f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return input.unsqueeze(-1) * vec2


ger = outer


def inner(input, other):
    """Sum product over the last dimensions (scalars multiply)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


# ------------------------------------------------------------------ beta * self + alpha * product
def _beta_alpha(self, prod, beta, alpha):
    """beta * self + alpha * prod, written into ``prod`` (a fresh product of the same dtype); self is
    ignored when beta is 0 (nan included, as torch)."""
    if alpha != 1:
        np.multiply(prod, alpha, out=prod)
    if beta == 0:
        return prod
    try:
        np.add(prod, self if beta == 1 else self * beta, out=prod)  # the sum torch computes (+ commutes)
    except ValueError:  # self does not broadcast to the product's shape
        raise RuntimeError(_expand_msg(self.shape, prod.shape)) from None
    return prod


def _expand_msg(have, want) -> str:
    for i in range(1, len(have) + 1):
        if i > len(want) or (have[-i] != want[-i] and have[-i] != 1):
            dim = len(want) - i
            return (f"The expanded size of the tensor ({want[-i] if i <= len(want) else -1}) must match the existing "
                    f"size ({have[-i]}) at non-singleton dimension {dim}.  Target sizes: {list(want)}.  "
                    f"Tensor sizes: {list(have)}")
    return f"expand: cannot expand {list(have)} to {list(want)}"


# Gradients of <g, product> w.r.t. the factors that need one (need_a, need_b), in ember ops.
def _mm_grads(g, a, b, need_a, need_b, folded=False):
    # folded: a is a batch of matrices, b one matrix (NOTE [folded matmul]); a factor whose gradient partner needs
    # none is not saved (None)
    if (not _mode.grad_enabled and _mode.interpose is None and not g._dtype._reduced  # NOTE [raw backward]
            and (folded or ((a is None or a.ndim == 2) and (b is None or b.ndim == 2)))):
        return _mm_grads_raw(g, a, b, need_a, need_b)
    if folded and need_b:  # NOTE [folded matmul]: b's gradient sums over every row at once
        rows = math.prod(a.shape[:-1])
        gb = a.reshape(rows, a.shape[-1]).mT @ g.reshape(rows, g.shape[-1])
        return g @ b.mT if need_a else None, gb
    return g @ b.mT if need_a else None, a.mT @ g if need_b else None


def _mm_grads_raw(g, a, b, need_a, need_b):
    """``_mm_grads`` of a matrix or a batch of matrices times a matrix without a graph (create_graph=False): the
    same NumPy products the ops compute, without the transpose, reshape and product dispatches
    (tests/ops/test_raw_backward.py)."""
    ga = gb = None
    dt = g._dtype
    g_ = g._data
    if need_a:
        b_ = b._data
        ga = _wrap(_matmul_forward(g_, b_.T) if g_.ndim > 2 else _matmul(g_, b_.T), dt)
    if need_b:
        a_ = a._data
        if a_.ndim > 2:  # folded
            rows = math.prod(a_.shape[:-1])
            a_, g_ = a_.reshape(rows, a_.shape[-1]), g_.reshape(rows, g_.shape[-1])
        gb = _wrap(_matmul(a_.T, g_), dt)
    return ga, gb


def _mv_grads(g, a, v, need_a, need_b):
    return g.unsqueeze(-1) * v if need_a else None, a.mT @ g if need_b else None


def _r_grads(g, u, v, need_a, need_b):
    return g @ v if need_a else None, g.mT @ u if need_b else None


def _addbmm_grads(g, a, b, need_a, need_b):
    g = g.unsqueeze(0)
    return g @ b.mT if need_a else None, a.mT @ g if need_b else None


def _checked_mm(a, b, name):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"{name}: Expected 2-D matrices, got {a.ndim}-D and {b.ndim}-D")
    return _matmul_forward(a, b)


def _checked_bmm(a, b):
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if a.ndim != 3 else "batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, "
                           f"{a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    _check_dtypes(a, b, "bmm")
    return np.matmul(a, b)


def _checked_mv(a, v):
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a.ndim}, {v.ndim}")
    return _matmul_forward(a, v)


def _checked_r(u, v):
    if u.ndim != 1 or v.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {u.ndim}-D" if u.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {v.ndim}-D")
    return np.multiply.outer(u, v)


# name: (product on arrays, gradients of <g, product> w.r.t. both factors, in ember ops, torch's factor names)
_ADD_PRODUCTS = {
    "addmm": (lambda a, b: _checked_mm(a, b, "addmm"), _mm_grads, ("mat1", "mat2")),
    "addmv": (_checked_mv, _mv_grads, ("mat", "vec")),
    "addr": (_checked_r, _r_grads, ("vec1", "vec2")),
    "baddbmm": (_checked_bmm, _mm_grads, ("batch1", "batch2")),
    "addbmm": (lambda a, b: _checked_bmm(a, b).sum(0), _addbmm_grads, ("batch1", "batch2")),
}


def _add_product_dtype_msg(name: str, self, m1, m2) -> str:
    t = [D.from_numpy_dtype(a.dtype)._scalar_name for a in (self, m1, m2)]
    if name == "addmm":
        if t[1] != t[2]:
            return f"mat1 and mat2 must have the same dtype, but got {t[1]} and {t[2]}"
        return f"self and mat2 must have the same dtype, but got {t[0]} and {t[2]}"
    return f"{name} input tensors must have the same dtype, but got {t[0]}, {t[1]}, and {t[2]}"


def _make_add_product(name: str, prod, grads, factors: tuple) -> type:
    f1, f2 = factors

    class AddProduct(Op):
        __slots__ = ()
        _name = name.capitalize() + "Backward0"
        inputs = ("self", f1, f2)
        save = factors
        save_for = {f1: (f2,), f2: (f1,)}  # each factor only for the other's gradient
        attrs = ("beta", "alpha")
        holomorphic = True  # NOTE [holomorphic formulas] (a complex beta or alpha is conjugated with the rest)
        __doc__ = f"d {name}: grad * beta for self; alpha times the product's gradients for the factors"

        @staticmethod
        def forward(ctx, self, m1, m2, beta, alpha):
            if not (self.dtype == m1.dtype == m2.dtype):
                raise RuntimeError(_add_product_dtype_msg(name, self, m1, m2))
            return _beta_alpha(self, prod(m1, m2), beta, alpha)

        def backward(ctx, grad):
            n = ctx._next
            # as torch, a beta of 1 passes the gradient itself on
            gs = None if n[0][0] is None else grad if ctx.beta == 1 else grad * ctx.beta
            need1, need2 = n[1][0] is not None, n[2][0] is not None
            if not (need1 or need2):
                return gs, None, None
            m1, m2 = ctx.saved_tensors
            return (gs,) + grads(grad if ctx.alpha == 1 else grad * ctx.alpha, m1, m2, need1, need2)

        @staticmethod
        def jvp(args, out, tangents):  # beta * t_self + the product's bilinear terms (self held at zero)
            ts, t1, t2 = tangents
            zero = (_zero_or_const(args[0]),) + args[1:]
            total = _multilinear(AddProduct, zero, out, (None, t1, t2))
            if ts is not None:
                ts = ts * args[3] if args[3] != 1 else ts
                total = ts if total is None else total + ts
            return total

    return AddProduct


Addmm, Addmv, Addr, Baddbmm, Addbmm = (_make_add_product(n, *_ADD_PRODUCTS[n]) for n in _ADD_PRODUCTS)


def addmm(input, mat1, mat2, out_dtype=None, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    _no_out_dtype("addmm", out_dtype)
    return Addmm.apply(input, mat1, mat2, beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    return Addmv.apply(input, mat, vec, beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    return Addr.apply(input, vec1, vec2, beta, alpha)


def baddbmm(input, batch1, batch2, out_dtype=None, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2)."""
    _no_out_dtype("baddbmm", out_dtype)
    return Baddbmm.apply(input, batch1, batch2, beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum over the batch of bmm(batch1, batch2)."""
    return Addbmm.apply(input, batch1, batch2, beta, alpha)


# ------------------------------------------------------------------ einsum
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Einsum(Op):
    """d einsum(eq, *ops) w.r.t. operand i = einsum(output, other operands -> operand i's subscript), with
    identity operands placing gradients on repeated-index diagonals and ones broadcasting summed-out indices."""

    __slots__ = ("subs", "out", "sizes")
    jvp = multilinear
    inputs = tuple(f"op{i}" for i in range(52))
    nattrs = 3
    holomorphic = True  # multilinear: NOTE [holomorphic formulas]
    _by_arity: dict = {}

    @classmethod
    def run(cls, subs, out, sizes, operands):
        """Apply with every operand saved (one subclass per operand count)."""
        n = len(operands)
        k = Einsum._by_arity.get(n)
        if k is None:
            k = Einsum._by_arity[n] = type("Einsum", (Einsum,), {"__slots__": (), "_name": "EinsumBackward0",
                                                                "save": Einsum.inputs[:n]})
        return k.apply(*operands, subs, out, sizes)

    @staticmethod
    def forward(ctx, *args):
        *ops, subs, out, sizes = args
        if ctx is not None:
            ctx.subs, ctx.out, ctx.sizes = subs, out, sizes
        eq = ",".join(subs) + "->" + out
        big = len(ops) > 2 or max(o.size for o in ops) > 512  # BLAS-backed contraction paths pay off
        if big:  # a broadcast (stride-0) operand keeps NumPy in its own loops, which sum float32 naively: far less
            ops = [_B.ascontiguousarray(o) if 0 in o.strides else o for o in ops]  # accurate than torch's BLAS sums
        with np.errstate(all="ignore"):
            r = np.einsum(eq, *ops, optimize=big)
        return _B.asarray(r, dtype=np.result_type(*ops))

    def backward(ctx, grad):
        ops = ctx.saved_tensors
        subs, out, sizes = ctx.subs, ctx.out, ctx.sizes
        res = []
        for i, sub in enumerate(subs):
            if not ctx.needs_input_grad[i]:
                res.append(None)
                continue
            others = [s for j, s in enumerate(subs) if j != i]
            tensors = [grad] + [o for j, o in enumerate(ops) if j != i]
            in_subs = [out] + others
            target, seen, spare = [], set(), iter(c for c in _LETTERS if c not in sizes)
            gsizes = dict(sizes)
            for c in sub:
                if c in seen:  # a repeated index: the gradient lives on the diagonal
                    d = next(spare)
                    gsizes[d] = sizes[c]
                    target.append(d)
                    in_subs.append(c + d)
                    tensors.append(_const_eye(sizes[c], grad._data.dtype))
                else:
                    seen.add(c)
                    target.append(c)
            present = set("".join(in_subs))
            for c in seen - present:  # summed out by this operand alone: broadcast back
                in_subs.append(c)
                tensors.append(_const_ones(sizes[c], grad._data.dtype))
            res.append(Einsum.run(in_subs, "".join(target), gsizes, tensors))
        return tuple(res)


def _const_eye(n, dt):
    a = np.eye(n, dtype=dt)
    return _wrap(a, D.from_numpy_dtype(a.dtype))


def _const_ones(n, dt):
    a = np.ones(n, dtype=dt)
    return _wrap(a, D.from_numpy_dtype(a.dtype))


def _parse_einsum(equation: str, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    used = set(c for c in eq if c.isalpha())
    spare = [c for c in _LETTERS if c not in used]
    ell_n = 0
    for t, op in zip(terms, operands):
        labels = t.replace("...", "")
        if not all(c.isalpha() for c in labels):
            bad = next(c for c in labels if not c.isalpha())
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(bad)} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
        if "..." in t:
            ell_n = max(ell_n, op.ndim - len(labels))
        elif len(labels) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(labels)}) does not match "
                               f"the number of dimensions ({op.ndim}) for operand {terms.index(t)} and no ellipsis "
                               "was given")
    ell = "".join(spare[:ell_n])
    subs = []
    for t, op in zip(terms, operands):
        k = op.ndim - len(t.replace("...", ""))
        subs.append(t.replace("...", ell[ell_n - k:] if k else ""))
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in sub for sub in subs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
    else:
        counts = {}
        for sub in subs:
            for c in sub:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return subs, out


def _sublist_equation(args: tuple) -> tuple:
    """``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` (torch's sublist format) as (equation, operands)."""
    def letters(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)

    operands, subs = args[0:len(args) - len(args) % 2:2], args[1:len(args) - len(args) % 2:2]
    equation = ",".join(letters(s) for s in subs)
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, tuple(operands)


def einsum(*args):
    """Sum of products over the indices of the equation (implicit output, ellipsis and diagonals included):
    ``einsum(equation, *operands)``, ``einsum(equation, operands)`` or the sublist format."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or at least one "
                        "operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], args[1:]
    else:
        equation, operands = _sublist_equation(args)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    subs, out = _parse_einsum(equation, operands)
    for op in operands[1:]:
        if op._dtype is not operands[0]._dtype:
            raise RuntimeError(f"expected scalar type {_dt_title(operands[0])} but found {_dt_title(op)}")
    sizes, ops = {}, []
    for i, (sub, op) in enumerate(zip(subs, operands)):
        for c, n in zip(sub, op.shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
            if n != 1 or c not in sizes:
                sizes[c] = n
    for sub, op in zip(subs, operands):  # size-1 dims broadcast: expand them (the engine sums their gradient)
        want = tuple(sizes[c] for c in sub)
        ops.append(op.expand(want) if want != tuple(op.shape) else op)
    return Einsum.run(subs, out, sizes, ops)


class EuclideanDist(Op):
    """d ||x1_i - x2_j|| = W (x1_i - x2_j), -W^T (...) with W = grad / dist (0 where the distance is 0)"""

    __slots__ = ()
    save = ("self", "other", "result")

    @staticmethod
    def forward(ctx, self, other):
        # torch's matrix-product form (cdist for p = 2 beyond 25 rows), as torch groups it: one product of
        # [-2 x1, |x1|^2, 1] and [x2, 1, |x2|^2], clamped at 0 before the square root
        n1 = np.einsum("...i,...i->...", self, self)[..., None]
        n2 = np.einsum("...i,...i->...", other, other)[..., None]
        a = np.concatenate([self * -2.0, n1, np.ones_like(n1)], -1)
        b = np.concatenate([other, np.ones_like(n2), n2], -1)
        d2 = _matmul(a, np.swapaxes(b, -1, -2))
        np.maximum(d2, 0.0, out=d2)
        return np.sqrt(d2, out=d2)

    def backward(ctx, grad):
        from .indexing import where

        x1, x2, dist = ctx.saved_tensors
        n0, n1 = ctx._next
        w = where(dist == 0, 0.0, grad / dist)
        g1 = x1 * w.sum(-1, keepdim=True) - w @ x2 if n0[0] is not None else None
        g2 = x2 * w.sum(-2).unsqueeze(-1) - w.mT @ x1 if n1[0] is not None else None
        return g1, g2


def tensordot(a, b, dims=2, out=None):
    """Sum over ``dims`` (a count of trailing/leading dims, or two lists of dims) of a and b."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        if hasattr(dims, "tolist"):
            dims = dims.tolist()
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da = [d % a.ndim for d in da]
        db = [d % b.ndim for d in db]
    sa = list(_LETTERS[:a.ndim])
    sb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} and "
                               f"second has size {b.shape[y]} in dim {y}")
        sb[y] = sa[x]
    out_s = "".join(c for i, c in enumerate(sa) if i not in da) + "".join(c for i, c in enumerate(sb) if i not in db)
    result = einsum("".join(sa) + "," + "".join(sb) + "->" + out_s, a, b)
    return result if out is None else _args.write_out(out, result, "tensordot")


def kron(input, other):
    """Kronecker product: blocks of ``other`` scaled by each element of ``input``."""
    n = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (n - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.ndim) + tuple(other.shape))
    ia = tuple(x for i in range(n) for x in (a.shape[i], 1))
    ib = tuple(x for i in range(n) for x in (1, b.shape[i]))
    return (a.reshape(ia) * b.reshape(ib)).reshape(tuple(a.shape[i] * b.shape[i] for i in range(n)))


class LinalgCross(Op):
    """d (a x b) = b x grad, grad x a"""

    __slots__ = ()
    save = ("self", "other")
    save_for = {"self": ("other",), "other": ("self",)}
    attrs = ("dim",)
    holomorphic = True  # bilinear: NOTE [holomorphic formulas]

    @staticmethod
    def forward(ctx, self, other, dim):
        return np.cross(self, other, axis=dim)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (LinalgCross.apply(b, grad, ctx.dim) if need[0] else None,
                LinalgCross.apply(grad, a, ctx.dim) if need[1] else None)


def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (torch.cross: the first size-3 dim when None)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        from .arithmetic import _broadcast_error

        raise _broadcast_error(input._data, other._data) from None
    if dim is None:
        dim = next((i for i, n in enumerate(shape) if n == 3), -1)
    from .._tensor import _wrap_dim

    given, dim = dim, _wrap_dim(dim, len(shape))
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {given} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    if input._dtype is not other._dtype:  # (no promotion: torch's kernel reads both in the first's dtype)
        raise RuntimeError(f"expected scalar type {_dt_title(input)} but found {_dt_title(other)}")
    if input._dtype is D.bool:
        raise NotImplementedError('"cross" not implemented for \'Bool\'')
    if tuple(input.shape) != shape:
        input = input.expand(shape)
    if tuple(other.shape) != shape:
        other = other.expand(shape)
    return LinalgCross.apply(input, other, dim)


def vecdot(x, y, *, dim: int = -1, out=None):
    """Dot products of vectors along ``dim`` (the first conjugated), broadcasting the other dims."""
    return (_conj(x) * y).sum(dim)


_args.install(globals(), ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr",
                          "baddbmm", "addbmm", "kron", "cross", "vecdot"),
              out=("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr",
                   "baddbmm", "addbmm", "kron", "cross"))


# ---------------------------------------------------------------- norms of differences and matrices, chained products
__all__ += ["dist", "frobenius_norm", "nuclear_norm", "chain_matmul"]


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast)."""
    _tensor_arg("dist", input)
    from ..linalg import vector_norm

    return vector_norm(input - other, p)


def frobenius_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False) -> Tensor:
    """Deprecated in torch for linalg.vector_norm(input, 2, dim, keepdim)."""
    from ..linalg import vector_norm

    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in "
                  "a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    return vector_norm(input, 2, dim=dim, keepdim=keepdim)


def nuclear_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False) -> Tensor:
    from ..linalg import matrix_norm

    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim=dim, keepdim=keepdim)


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """The product of the matrices (deprecated in torch for linalg.multi_dot)."""
    from ..linalg import multi_dot

    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=2)
    result = matrices[0].clone() if len(matrices) == 1 else multi_dot(list(matrices))
    return result if out is None else _args.write_out(out, result, "chain_matmul")


_args.install(globals(), ("dist", "frobenius_norm", "nuclear_norm", "chain_matmul"), python=("chain_matmul",),
              out=("frobenius_norm", "nuclear_norm"))


# ---------------------------------------------------------------- distances and norms of slices, the matrix exponential
__all__ += ["cdist", "pdist", "renorm", "matrix_exp"]


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distances between the rows of x1 and x2 (batched)."""
    from ..linalg import vector_norm

    for name, x in (("X1", x1), ("X2", x2)):
        if x._dtype.is_complex:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {x._dtype._scalar_name}")

    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mm = compute_mode == "use_mm_for_euclid_dist" or (compute_mode == "use_mm_for_euclid_dist_if_necessary"
                                                      and (x1.shape[-2] > 25 or x2.shape[-2] > 25))
    refuse_tangents("_euclidean_dist" if p == 2 and mm else "_cdist_forward", x1, x2)  # torch's kernel names
    if p == 2 and mm and x1._dtype.is_floating_point and x1._dtype is x2._dtype:
        # torch's matrix-product form: GEMMs instead of every difference (viewed back, as torch's graph)
        from .linalg import EuclideanDist

        out = EuclideanDist.apply(x1, x2)
        return out.view(out.shape)
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """Distances between every pair of rows i < j, in row-major order of the pairs."""
    from ..linalg import vector_norm

    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input._dtype.is_complex:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    refuse_tangents("_pdist_forward", input)
    i, j = np.triu_indices(input.shape[0], 1)
    return vector_norm(input[_long(i)] - input[_long(j)], p, dim=-1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``."""
    from ..linalg import vector_norm

    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _wrap_dim(dim, input.dim())
    others = [k for k in range(input.dim()) if k != d]
    norm = vector_norm(input, p, dim=others, keepdim=True) if others else input.abs()
    factor = _ember().where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


def matrix_exp(input: Tensor) -> Tensor:
    """e**A of square matrices A (batched): scaling and squaring around a degree-18 Taylor polynomial."""
    em = _ember()
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{input.shape[-2] if input.dim() >= 2 else 1} by {input.shape[-1] if input.dim() else 1} matrices")
    n = input.shape[-1]
    # one scaling for the whole batch (under vmap: every example's), from the largest 1-norm of a row
    norm = float(np.max(np.abs(_all_examples(input)).sum(-1))) if input.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm / 0.5)))) if norm > 0.5 and math.isfinite(norm) else 0
    X = input / (2.0 ** s) if s else input
    eye = em.eye(n, dtype=input.dtype, device=input.device)
    term, total = eye, eye
    for k in range(1, 19):
        term = term @ X / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


# NOTE [foreign errors] (ember/_malloc.py): these compute on arrays outside ops
_translate_errors_of(globals(), ("cdist", "pdist", "renorm", "matrix_exp"))
_args.install(globals(), ("cdist", "pdist", "renorm", "matrix_exp"), python=("cdist",), out=("renorm",))
