"""Direct NumPy forms of common op kernels, for the compiled program's lines.

An op step calls its op's kernel (``Op.forward``), which checks its arguments, promotes dtypes and picks a path on
each call. For the ops most programs are made of, the path the traced call took is one or two NumPy calls; a
``fast form`` writes them into the program instead. Each form is used only when it reproduces the traced output bit
for bit, as a view exactly when the kernel's output was one and with the same strides (``check``), so a fast form
is the same kernel without the interpretation around it. The check runs on the traced arrays, of whatever device:
a form whose calls a device's array module lacks, or computes differently, fails it and the kernel stays
(NOTE [compiled on devices] in ember/_compile/__init__.py).
"""
from __future__ import annotations

import numpy as np

from .._backend import is_array as _is_array
from .program import same_array

__all__ = ["fast_form", "check"]


def _two(st, a):
    """Both factors are 2-d arrays of one dtype (the plain GEMM path of the matmul kernels)."""
    x, y = a[0], a[1]
    return (_is_array(x) and _is_array(y) and x.ndim == 2 and y.ndim == 2
            and x.dtype == y.dtype and x.dtype.kind == "f" and x.size and y.size)


def _mm(st, n, a, out):
    if not _two(st, a):
        return None
    return [f"{out} = np.matmul({n[0]}, {n[1]})"]


def _bmm(st, n, a, out):
    x, y = a[0], a[1]
    if not (_is_array(x) and _is_array(y) and x.ndim == y.ndim >= 3
            and x.shape[:-2] == y.shape[:-2] and x.dtype == y.dtype and x.dtype.kind == "f" and x.shape[-1] > 1):
        return None
    return [f"{out} = np.matmul({n[0]}, {n[1]})"]


def _addmm(st, n, a, out):
    bias, beta, alpha = a[0], a[3], a[4]
    if beta != 1 or alpha != 1 or not _two(st, a[1:]) or not _is_array(bias) \
            or bias.dtype != a[1].dtype:
        return None
    return [f"{out} = np.matmul({n[1]}, {n[2]})", f"np.add({out}, {n[0]}, out={out})"]


def _t(st, n, a, out):
    return [f"{out} = {n[0]}.T"] if _is_array(a[0]) and a[0].ndim == 2 else None


def _transpose(st, n, a, out):
    x = a[0]
    if not _is_array(x) or x.ndim < 2:
        return None
    d0, d1 = a[1] % x.ndim, a[2] % x.ndim
    if {d0, d1} == {x.ndim - 2, x.ndim - 1} and x.ndim == 2:
        return [f"{out} = {n[0]}.T"]
    return [f"{out} = np.swapaxes({n[0]}, {d0}, {d1})"]


def _permute(st, n, a, out):
    return [f"{out} = np.transpose({n[0]}, {tuple(d % a[0].ndim for d in a[1])!r})"] \
        if _is_array(a[0]) and isinstance(a[1], tuple) else None


def _reshape(st, n, a, out):
    shape = st.outs[0].shape
    return [f"{out} = {n[0]}.reshape({shape!r})"] if _is_array(a[0]) else None


def _expand(st, n, a, out):
    return [f"{out} = np.broadcast_to({n[0]}, {st.outs[0].shape!r})"] if _is_array(a[0]) else None


def _unsqueeze(st, n, a, out):
    x = a[0]
    return [f"{out} = np.expand_dims({n[0]}, {a[1] % (x.ndim + 1)})"] if _is_array(x) else None


def _sum(st, n, a, out):
    x, dims, keepdim, dtype = a[0], a[1], a[2], a[3]
    if not _is_array(x) or dtype is not None or x.dtype.kind != "f" or not st.outs[0].shape:
        return None
    if isinstance(dims, int):
        dims = (dims,)
    if not isinstance(dims, tuple):
        return None
    dims = tuple(d % x.ndim for d in dims)
    return [f"{out} = np.add.reduce({n[0]}, axis={dims!r}, keepdims={bool(keepdim)!r})"]


def _relu(st, n, a, out):
    x = a[0]
    if not _is_array(x) or x.dtype.kind != "f" or not x.ndim:
        return None
    return [f"{out} = np.maximum({n[0]}, {n[0]}.dtype.type(0))"]


def _tanh_backward(st, n, a, out):
    g, r = a[0], a[1]
    if not (_is_array(g) and _is_array(r) and g.dtype == r.dtype and g.ndim
            and g.dtype.kind == "f" and np.broadcast_shapes(g.shape, r.shape) == st.outs[0].shape):
        return None
    return [f"{out} = np.multiply({n[1]}, {n[1]})", f"np.subtract(1, {out}, out={out})",
            f"np.multiply({n[0]}, {out}, out={out})"] if r.shape == st.outs[0].shape else None


def _clone(st, n, a, out):
    return [f"{out} = {n[0]}.copy()"] if _is_array(a[0]) else None


_FORMS = {
    "MmBackward0": _mm, "BmmBackward0": _bmm, "AddmmBackward0": _addmm, "TBackward0": _t,
    "TransposeBackward0": _transpose, "PermuteBackward0": _permute, "ViewBackward0": _reshape,
    "UnsafeViewBackward0": _reshape, "ExpandBackward0": _expand, "UnsqueezeBackward0": _unsqueeze,
    "SumBackward1": _sum, "ReluBackward0": _relu, "TanhBackwardBackward0": _tanh_backward, "CloneBackward0": _clone,
}


def fast_form(st, names: list, arrays: list, out: str):
    """Lines computing ``out`` for op step ``st`` (``names``: the argument expressions, ``arrays``: the traced
    argument values), or None."""
    maker = _FORMS.get(st.label)
    if maker is None or st.reduced or st.multi or len(st.outs) != 1 or st.outs[0] is None:
        return None
    try:
        return maker(st, names, arrays, out)
    except Exception:  # noqa: BLE001 - an unexpected argument: the kernel stays
        return None


def check(lines: list, names: list, arrays: list, want: np.ndarray) -> bool:
    """Whether ``lines`` (arguments in ``@i@`` slots, the result ``@out@``) compute ``want`` from ``arrays`` bit
    for bit (a view exactly when ``want`` is one of an argument, with its strides)."""
    ns = {"np": np}
    text = "\n".join(lines).replace("@out@", "_out")
    for i, (nm, v) in enumerate(zip(names, arrays)):
        if nm == f"@{i}@":
            ns[f"_a{i}"] = v.copy() if _is_array(v) and v.base is None else v
            text = text.replace(nm, f"_a{i}")
    try:
        with np.errstate(all="ignore"):
            exec(text, ns)  # noqa: S102 - lines of a fast form
    except Exception:  # noqa: BLE001
        return False
    got = ns.get("_out")
    if not same_array(got, want):  # (an array of want's type: on its device)
        return False
    if (want.base is not None) != (got.base is not None):
        return False
    return got.strides == want.strides or got.size <= 1
