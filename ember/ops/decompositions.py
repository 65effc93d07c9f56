"""Matrix functions and decompositions: inv, det, slogdet, solve, cholesky, qr, eigh, svd, and the
composites built on them (norms, pinv, matrix_power, multi_dot).

Backward formulas are written with ember ops, so they are differentiable again. Ops with several
outputs keep their output arrays on the node; under ``create_graph`` they recompute the factors
from the saved input through the op itself, so second derivatives see the factors' own graph.
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .. import _args
from .. import _dtype as D
from .. import return_types as _RT
from .._tensor import Tensor, _rewrap
from ..autograd.grad_mode import _mode
from ..autograd._interpose import made
from ._op import Op, unsupported
from ._op import const as _const
from .indexing import where
from .reduction import Norm
from .joining import cat
from .linalg import _dt_title, matmul

__all__ = ["inverse", "det", "logdet", "slogdet", "cholesky", "svd", "matrix_power", "pinverse", "LinAlgError", "geqrf",
           "householder_product"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)



class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a numerical failure (singular or non positive-definite input)."""


_LinAlgError.__module__ = "torch._C"
LinAlgError = _LinAlgError


# ------------------------------------------------------------------ helpers
def _eye(n: int, dt) -> Tensor:
    return _const(made(np.eye(n, dtype=dt)))


def _tril_mask(n: int, dt, k: int = 0) -> Tensor:
    return _const(np.tril(np.ones((n, n), dt), k))


def _diag(x: Tensor) -> Tensor:
    """The diagonal of the last two dims (differentiable)."""
    return (x * _eye(x.shape[-1], x._data.dtype)).sum(-1)


def _diag_embed(v: Tensor) -> Tensor:
    return v.unsqueeze(-1) * _eye(v.shape[-1], v._data.dtype)


def _square_check(a: np.ndarray, fname: str, float_only: bool = True) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    if float_only:
        _float_check(a, fname)


# the CPU kernel torch names when an op meets float16 (None: "Low precision dtypes not supported")
_HALF_KERNELS = {"linalg.det": "lu_cpu", "linalg.solve": "lu_cpu", "linalg.svd": "linalg_svd_cpu",
                 "linalg.eigh": "linalg_eigh_cpu", "linalg.qr": "geqrf_cpu", "linalg.cholesky": "cholesky_cpu",
                 "geqrf": "geqrf_cpu"}


def _float_check(a: np.ndarray, fname: str) -> None:
    kernel = _HALF_KERNELS.get(fname)
    if a.dtype.kind not in "fc" and a.dtype not in D._REDUCED_NP:
        if fname in ("linalg.eigh", "geqrf"):
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_dt_title(_const(a[..., :0]))}\'')
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got "
                           f"{_dt_title(_const(a[..., :0]))}")
    if a.dtype in D._REDUCED_NP and fname != "linalg.matrix_norm":  # (these ops' forwards see 16-bit arrays:
        name = _dt_title(_const(a[..., :0]))                         # ``reduced_native``)
        if kernel is None:
            raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {name}")
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def _matrix_check(a: np.ndarray, fname: str) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    _float_check(a, fname)


def _batch_prefix(a: np.ndarray, i: int) -> str:
    return f"(Batch element {i}): " if a.ndim > 2 else ""


def _first_zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first zero pivot of LU with partial pivoting (0 when none)."""
    u = m.astype(np.float64, copy=True)
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return 0


def _singular_error(a: np.ndarray, fname: str) -> _LinAlgError:
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        k = _first_zero_pivot(m)
        if k:
            return _LinAlgError(f"{fname}: {_batch_prefix(a, i)}The diagonal element {k} is zero, the inversion could "
                                "not be completed because the input matrix is singular.")
    return _LinAlgError(f"{fname}: The inversion could not be completed because the input matrix is singular.")


def _inv_array(a: np.ndarray, fname: str = "linalg.inv") -> np.ndarray:
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular_error(a, fname) from None


def _outputs(ctx, cls, self, *attrs) -> tuple:
    """The node's outputs as tensors; when grad mode is on, as outputs of the node itself (its saved outputs, as
    torch's), so that a second derivative flows back through this node."""
    if _mode.grad_enabled and self.requires_grad:
        return tuple(_rewrap(o, None, ctx, i) for i, o in enumerate(ctx.outs))
    return tuple(_const(o) for o in ctx.outs)


# ------------------------------------------------------------------ inv, det, slogdet
class LinalgInvEx(Op):
    """d A^-1 = -A^-T grad A^-T"""

    __slots__ = ()
    save = ("result",)
    holomorphic = True  # NOTE [holomorphic formulas]: -A^-H grad A^-H for complex A

    @staticmethod
    def forward(ctx, self):
        _square_check(self, "linalg.inv")
        return _inv_array(self)

    def backward(ctx, grad):
        inv, = ctx.saved_tensors
        it = inv.mT
        return -(it @ grad @ it)


def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix (linalg.LinAlgError when singular)."""
    return LinalgInvEx.apply(A)


def inverse(input: Tensor) -> Tensor:
    """torch.inverse: linalg.inv."""
    return LinalgInvEx.apply(input)


def _inv_t(a: Tensor) -> Tensor:
    return LinalgInvEx.apply(a).mT


class LinalgDet(Op):
    """d det(A) = grad * det(A) * A^-T"""

    __slots__ = ()
    save = ("self", "result")
    holomorphic = True  # NOTE [holomorphic formulas]

    @staticmethod
    def forward(ctx, self):
        _square_check(self, "linalg.det")
        return _B.asarray(np.linalg.det(self), self.dtype)

    def backward(ctx, grad):
        a, d = ctx.saved_tensors
        g = grad.unsqueeze(-1).unsqueeze(-1)
        if np.all(d._data != 0):
            return (g * d.unsqueeze(-1).unsqueeze(-1)) * _inv_t(a)
        return g * _cofactors(a)


def _cofactors(a: Tensor) -> Tensor:
    """det(A) A^-T extended to singular A: det(U) det(V) U diag(prod_{j != i} s_j) V^T from A = U S V^T."""
    if not np.isfinite(a._data).all():  # no SVD of non-finite values: the gradient is nan, as torch's
        return _const(np.full(a._data.shape, np.nan, a._data.dtype))
    u, s, vh = LinalgSvd.apply(a, False)
    n = s.shape[-1]
    eye = _eye(n, s._data.dtype)
    others = (s.unsqueeze(-2) * (1.0 - eye) + eye).prod(-1)
    sign = np.linalg.det(u._data) * np.linalg.det(vh._data)
    return _const(_B.asarray(sign, u._data.dtype)[..., None, None]) * ((u * others.unsqueeze(-2)) @ vh)


def _linalg_det(A: Tensor) -> Tensor:
    """Determinant of each square matrix."""
    return LinalgDet.apply(A)


def det(input: Tensor) -> Tensor:
    """torch.det: linalg.det."""
    return LinalgDet.apply(input)


class LinalgSlogdet(Op):
    """d log|det A| = grad * A^-T (real A: the sign is piecewise constant); complex A: (g_logabs - i imag(conj(g_sign)
    sign)) A^-H, the sign being det / |det|"""

    __slots__ = ()
    save = ("self", "result")  # (the result: the sign)

    @staticmethod
    def forward(ctx, self):
        _square_check(self, "linalg.slogdet")
        with np.errstate(divide="ignore"):
            sign, logabs = np.linalg.slogdet(self)
        return _B.asarray(sign, self.dtype), _B.asarray(logabs, np.abs(self[..., :0, :0]).dtype)

    def backward(ctx, grad_sign, grad_logabs):
        a, sign = ctx.saved_tensors
        if not a._dtype.is_complex:
            if grad_logabs is None:
                return None
            return grad_logabs.unsqueeze(-1).unsqueeze(-1) * _inv_t(a)
        from .complex_numbers import conj_physical, imag

        g = 0
        if grad_sign is not None:
            g = -1j * imag(conj_physical(grad_sign) * sign)
        if grad_logabs is not None:
            g = grad_logabs + g
        if isinstance(g, int):
            return None
        return g.unsqueeze(-1).unsqueeze(-1) * _inv_t(a).conj()


def _linalg_slogdet(A: Tensor, *, out=None):
    """(sign, log|det|) of each square matrix."""
    return _RT.linalg_slogdet(*LinalgSlogdet.apply(A))


def slogdet(input: Tensor):
    """torch.slogdet: (sign, log|det|) of each square matrix."""
    return _RT.slogdet(*LinalgSlogdet.apply(input))


def logdet(input: Tensor) -> Tensor:
    """log det(input): nan for a negative determinant, -inf for a zero one (complex input: log(sign) + log|det|)."""
    sign, logabs = LinalgSlogdet.apply(input)
    if input._dtype.is_complex:
        return sign.log() + logabs
    return where(sign < 0, float("nan"), logabs)


# ------------------------------------------------------------------ solve
def _is_vector_rhs(A, B) -> bool:
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


class LinalgSolveEx(Op):
    """X = A^-1 B: dB = A^-T grad, dA = -dB X^T (left=False, X = B A^-1: dB = grad A^-T, dA = -X^T dB)"""

    __slots__ = ("vec", "left")
    save = ("self", "result")
    nattrs = 2
    holomorphic = True  # NOTE [holomorphic formulas]

    @staticmethod
    def forward(ctx, self, other, vec, left=True):
        if ctx is not None:
            ctx.vec, ctx.left = vec, left
        if not left:
            return LinalgSolveEx.forward(None, self.swapaxes(-1, -2), other.swapaxes(-1, -2), False).swapaxes(-1, -2)
        b = other[..., None] if vec else other
        if self.shape[-1] != b.shape[-2]:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                               f"({self.shape[-2]}x{self.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
        try:
            batch = np.broadcast_shapes(self.shape[:-2], b.shape[:-2])
        except ValueError:
            from .arithmetic import _broadcast_error

            raise _broadcast_error(np.empty(b.shape[:-2]), np.empty(self.shape[:-2])) from None  # torch's order
        try:
            x = np.linalg.solve(np.broadcast_to(self, batch + self.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))
        except np.linalg.LinAlgError:
            raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
        return x[..., 0] if vec else x

    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        if not ctx.left:
            gb = LinalgSolveEx.apply(a.mT, grad, False, False)
            return (-(x.mT @ gb) if ctx.needs_input_grad[0] else None), gb
        gb = LinalgSolveEx.apply(a.mT, grad, ctx.vec, True)
        if not ctx.needs_input_grad[0]:
            return None, gb
        ga = -(gb.unsqueeze(-1) * x.unsqueeze(-2)) if ctx.vec else -(gb @ x.mT)
        return ga, gb


def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """The solution X of A X = B (X A = B with ``left=False``); B may be a (batch of) vector(s)."""
    _square_check(A._data, "linalg.solve")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_dt_title(A)} and B of type {_dt_title(B)} instead")
    if not left and B.ndim < 2:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    return LinalgSolveEx.apply(A, B, left and _is_vector_rhs(A, B), left)


# ------------------------------------------------------------------ cholesky
def _not_pd_error(a: np.ndarray, fname: str) -> _LinAlgError:
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                return _LinAlgError(f"{fname}: {_batch_prefix(a, i)}The factorization could not be completed because "
                                    f"the input is not positive-definite (the leading minor of order {k} is not "
                                    "positive-definite).")
    return _LinAlgError(f"{fname}: The factorization could not be completed because the input is not "
                        "positive-definite.")


class LinalgCholeskyEx(Op):
    """A = L L^T: dA = sym(L^-T Phi(L^T dL) L^-1), Phi = lower triangle with the diagonal halved"""

    __slots__ = ()
    save = ("result",)
    attrs = ("upper",)
    _fname = "linalg.cholesky"

    @staticmethod
    def forward(ctx, self, upper):
        _square_check(self, "linalg.cholesky")
        try:
            # as LAPACK's uplo: the lower factor reads the lower triangle, the upper one the upper triangle
            low = np.linalg.cholesky(self.swapaxes(-1, -2) if upper else self)
        except np.linalg.LinAlgError:
            raise _not_pd_error(self, "linalg.cholesky") from None
        return _B.ascontiguousarray(low.swapaxes(-1, -2)) if upper else low

    def backward(ctx, grad):
        low, = ctx.saved_tensors
        if ctx.upper:
            low, grad = low.mH, grad.mH
        n = low.shape[-1]
        dt = low._data.dtype
        phi = (low.mH @ grad) * _tril_mask(n, dt)  # (complex: conjugate transposes throughout, as torch's)
        phi = 0.5 * (phi + (phi * _tril_mask(n, dt, -1)).mH)
        linv = LinalgInvEx.apply(low)
        return linv.mH @ phi @ linv

    @staticmethod
    def jvp(args, out, tangents):  # dL = L Phi(L^-1 dA L^-H)
        low = out.mH if args[1] else out
        linv = LinalgInvEx.apply(low)
        x = (linv @ tangents[0] @ linv.mH) * _tril_mask(low.shape[-1], low._data.dtype)
        dl = low @ (x - 0.5 * _diag_embed(_diag(x)))
        return dl.mH if args[1] else dl


class Cholesky(LinalgCholeskyEx):
    __slots__ = ()
    _name = "CholeskyBackward0"
    jvp = unsupported("cholesky", " because it has not been implemented yet")


def _cholesky(input: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """The Cholesky factor L (A = L L^T; U = L^T with ``upper``) of symmetric positive-definite matrices A."""
    return LinalgCholeskyEx.apply(input, upper)


def cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.cholesky (deprecated spelling of linalg.cholesky)."""
    return Cholesky.apply(input, upper)


# ------------------------------------------------------------------ qr
def _copyltu(m: Tensor) -> Tensor:
    """The strict lower triangle copied (conjugated) above the diagonal, and the diagonal's real part."""
    n = m.shape[-1]
    low = m * _tril_mask(n, m._data.dtype, -1)
    d = _diag(m)
    return low + low.mH + _diag_embed(d.real if d._dtype.is_complex else d)


class LinalgQr(Op):
    """A = QR (Householder): gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q (wide A: split R = [X | Y])"""

    __slots__ = ("mode", "outs")
    save = ("self",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, mode):
        _matrix_check(self, "linalg.qr")
        if mode == "r":
            r = np.linalg.qr(self, mode="r")
            q = np.empty((0,), self.dtype)
        else:
            q, r = np.linalg.qr(self, mode=mode)
        if ctx is not None:
            ctx.mode, ctx.outs = mode, (q, r)
        return q, r

    def backward(ctx, gq, gr):
        a, = ctx.saved_tensors
        m, n = a.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        q, r = _outputs(ctx, LinalgQr, a, ctx.mode)
        gq = q * 0 if gq is None else gq
        gr = r * 0 if gr is None else gr
        if m >= n:  # (complex: conjugate transposes throughout, as torch's)
            mm = r @ gr.mH - gq.mH @ q
            b = gq + q @ _copyltu(mm)
            return b @ _inv_t(r).conj()
        x, gx, gy = r[..., :, :m], gr[..., :, :m], gr[..., :, m:]
        gq = gq + a[..., :, m:] @ gy.mH
        mm = x @ gx.mH - gq.mH @ q
        gu = (gq + q @ _copyltu(mm)) @ _inv_t(x).conj()
        return cat([gu, q @ gy], -1)


def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """Q, R with A = Q R (mode 'reduced', 'complete', or 'r': R only, Q empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    return _RT.linalg_qr(*LinalgQr.apply(A, mode))


# ------------------------------------------------------------------ eigh
def _inv_gaps(w: Tensor) -> Tensor:
    """F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    n = w.shape[-1]
    eye = _eye(n, w._data.dtype)
    return (1.0 - eye) / (w.unsqueeze(-2) - w.unsqueeze(-1) + eye)


def _gaps(w: Tensor) -> Tensor:
    """E[i, j] = w_j - w_i off the diagonal, 1 on it (torch's divisor: a skew-Hermitian matrix's diagonal, zero for
    real inputs, passes through unchanged, which matters to complex second derivatives)."""
    return w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(w.shape[-1], w._data.dtype)


class LinalgEigh(Op):
    """A = V diag(w) V^T: gA = V (diag(gw) + F o skew(V^T gV) / 2) V^T, F_ij = 1/(w_j - w_i)"""

    __slots__ = ("uplo", "outs")
    save = ("self",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, uplo):
        _square_check(self, "linalg.eigh")
        w, v = np.linalg.eigh(self, UPLO=uplo)
        if ctx is not None:
            ctx.uplo, ctx.outs = uplo, (w, v)
        return w, v

    def backward(ctx, gw, gv):
        a, = ctx.saved_tensors
        w, v = _outputs(ctx, LinalgEigh, a, ctx.uplo)
        inner = 0
        if gv is not None:  # (complex: conjugate transposes, as torch's)
            j = v.mH @ gv
            if j._dtype.is_complex:
                _phase_check(_diag(j).imag, None, "linalg_eigh_backward: The eigenvectors in the complex case are "
                             "specified up to multiplication by e^{i phi}. The specified loss function depends on this "
                             "quantity, so it is ill-defined.")
            inner = (0.5 * (j - j.mH)) / _gaps(w)
            if gw is not None:  # the diagonal becomes gw
                inner = inner - _diag_embed(_diag(inner))
        if gw is not None:
            d = _diag_embed(gw)
            inner = inner + (d.to(v._dtype) if v._dtype.is_complex else d)
        return v @ inner @ v.mH

    @staticmethod
    def jvp(args, out, tangents):  # dw = diag(V^H dA V), dV = V (F o V^H dA V)
        w, v = out
        j = v.mH @ tangents[0] @ v
        d = _diag(j)
        return (d.real if d._dtype.is_complex else d), v @ (_inv_gaps(w) * j)


def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def eigh(input: Tensor, UPLO: str = "L", *, out=None):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices (from the UPLO triangle)."""
    return _RT.linalg_eigh(*LinalgEigh.apply(input, _uplo(UPLO)))


def eigvalsh(input: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """Eigenvalues (ascending) of symmetric matrices."""
    return LinalgEigh.apply(input, _uplo(UPLO))[0]


# ------------------------------------------------------------------ eig
_EIG_PHASE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
              "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")


class LinalgEig(Op):
    """A = V diag(L) V^-1, L and V complex (V's columns of unit norm, LAPACK's):
    gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H, E_ij = L_j - L_i (real A: its real
    part)"""

    __slots__ = ("outs",)
    save = ("self",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, values_only):
        cd = np.result_type(self.dtype, np.complex64)  # (NumPy returns real arrays when every eigenvalue is real)
        finite = np.isfinite(self).all((-2, -1))
        if not finite.all():
            if not values_only:
                raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
            # NOTE [eigvals of non-finite matrices]: torch's eigvals (no gradient wanted) hands them to LAPACK, whose
            # results vary (NaNs, some finite values, or a crash); ember gives such a matrix NaN eigenvalues
            w = np.full(self.shape[:-1], np.nan + 1j * np.nan, cd)
            w[finite] = np.linalg.eigvals(self[finite]) if finite.any() else w[finite]
            return w, np.full(self.shape, np.nan, cd)
        w, v = np.linalg.eig(self)
        w, v = w.astype(cd, copy=False), v.astype(cd, copy=False)
        if ctx is not None:
            ctx.outs = (w, v)
        return w, v

    def backward(ctx, gl, gv):
        a, = ctx.saved_tensors
        w, v = _outputs(ctx, LinalgEig, a, False)
        vh = v.mH
        if gv is None:
            inner = _diag_embed(gl)
        else:
            j = vh @ gv
            _phase_check(_diag(j).imag, None, _EIG_PHASE)
            inner = (j - vh @ (v * _diag(j).real.unsqueeze(-2))) / _gaps(w).conj()
            if gl is not None:  # the diagonal becomes gL
                inner = inner - _diag_embed(_diag(inner)) + _diag_embed(gl)
        ga = solve(vh, inner @ vh)
        return ga if a._dtype.is_complex else ga.real

    @staticmethod
    def jvp(args, out, tangents):  # dL = diag(V^-1 dA V); dV = V X - V Re(diag(V^H V X)), X = (V^-1 dA V) / E
        w, v = out
        da = tangents[0]
        p = solve(v, (da if da._dtype.is_complex else da.to(v._dtype)) @ v)
        vx = v @ (p * _inv_gaps(w))
        return _diag(p), vx - v * (v.conj() * vx).sum(-2).real.unsqueeze(-2)


def _eig_check(A: Tensor, fname: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    dt = A._dtype
    if dt._reduced:
        raise NotImplementedError(f'"linalg_eig_out_cpu" not implemented for \'{dt._scalar_name}\'')
    dt.to_complex()  # integers: torch's "Unknown Complex ScalarType" error


def eig(input: Tensor, *, out=None):
    """Eigenvalues and eigenvectors (columns of unit norm) of square matrices, both complex, in LAPACK's order."""
    _eig_check(input, "linalg.eig")
    return _RT.linalg_eig(*LinalgEig.apply(input, False))


def eigvals(input: Tensor, *, out=None) -> Tensor:
    """Eigenvalues (complex, in LAPACK's order) of square matrices."""
    _eig_check(input, "linalg.eigvals")
    wanted = (input._requires_grad and _mode.grad_enabled) or (input._ext is not None and bool(input._ext.get("fw")))
    return LinalgEig.apply(input, not wanted)[0]  # (a derivative needs eig's eigenvectors, and finite values)


# ------------------------------------------------------------------ svd
class LinalgSvd(Op):
    """A = U diag(S) Vh: gA = U (F o (skew(U^T gU) S + S skew(V^T gV)) + diag(gS)) Vh plus the parts of gU, gV
    outside the spans of U, V (F_ij = 1/(s_j^2 - s_i^2))"""

    __slots__ = ("full", "outs")
    save = ("self",)
    nattrs = 1

    @staticmethod
    def forward(ctx, self, full_matrices):
        _matrix_check(self, "linalg.svd")
        u, s, vh = np.linalg.svd(self, full_matrices=full_matrices)
        s = s.astype(np.abs(self[..., :0, :0]).dtype, copy=False)  # real, also for complex input
        if ctx is not None:
            ctx.full, ctx.outs = full_matrices, (u, s, vh)
        return u, s, vh

    def backward(ctx, gu, gs, gvh):
        a, = ctx.saved_tensors
        m, n = a.shape[-2:]
        k = min(m, n)
        u, s, vh = _outputs(ctx, LinalgSvd, a, ctx.full)
        if ctx.full:  # the columns beyond min(m, n) do not enter A: their gradients are dropped
            u, vh = u[..., :, :k], vh[..., :k, :]
            gu = gu[..., :, :k] if gu is not None else None
            gvh = gvh[..., :k, :] if gvh is not None else None
        if gu is None and gvh is None:
            return (u * gs.unsqueeze(-2)) @ vh
        core = 0
        v = vh.mH  # (complex: conjugate transposes throughout, as torch's)
        sr, sc = s.unsqueeze(-2), s.unsqueeze(-1)
        e = _gaps(s * s)
        j = kk = None
        if gu is not None:
            j = u.mH @ gu
            j = j - j.mH
            core = (j * sr) / e
        if gvh is not None:
            gv = gvh.mH
            kk = v.mH @ gv
            kk = kk - kk.mH
            core = core + (sc * kk) / e
        if u._dtype.is_complex:
            _phase_check(None if j is None else _diag(j).imag, None if kk is None else -_diag(kk).imag,
                         "svd_backward: The singular vectors in the complex case are specified up to multiplication by "
                         "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.")
            if j is not None and kk is not None:
                core = core + _diag_embed(_diag(j) / (2 * s))
        if gs is not None:
            core = core + _diag_embed(gs)
        ga = u @ core @ vh
        if gu is not None and m > k:
            ga = ga + ((gu - u @ (u.mH @ gu)) / sr) @ vh
        if gvh is not None and n > k:
            ga = ga + u @ ((gv - v @ (v.mH @ gv)) / sr).mH
        return ga


def _no_driver(driver) -> None:
    """torch's ``driver=`` picks a cuSOLVER routine: on the CPU it is an error."""
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def _phase_check(a, b, message: str) -> None:
    """torch's refusal of losses that depend on the phases of complex singular vectors or eigenvectors: the
    imaginary parts ``a`` and ``b`` (None: zero) of the projected gradients' diagonals must agree (loose tolerances)."""
    x = np.zeros(()) if a is None else a._data
    y = np.zeros(()) if b is None else b._data
    if not np.allclose(x, y, rtol=1e-2, atol=1e-2):
        raise RuntimeError(message)


def _svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """U, S, Vh with A = U diag(S) Vh, singular values descending."""
    _no_driver(driver)
    return _RT.linalg_svd(*LinalgSvd.apply(A, full_matrices))


def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """Singular values, descending."""
    _no_driver(driver)
    return LinalgSvd.apply(A, False)[1]


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: U, S, V (not Vh) with A = U diag(S) V^H."""
    u, s, vh = LinalgSvd.apply(input, not some)
    if not compute_uv:
        return _RT.svd(u.detach() * 0, s, vh.mH.detach() * 0)
    return _RT.svd(u, s, vh.mH)


# ------------------------------------------------------------------ norms
def vector_norm(input: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """The vector ord-norm over ``dim`` (all elements when None)."""
    if isinstance(dim, int):
        dim = (dim,)
    return Norm.apply(input, float(ord), dim, keepdim, dtype)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf"))


def matrix_norm(input: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Matrix norms: 'fro', 'nuc', 1/-1 (max/min column sum), 2/-2 (largest/smallest singular value), inf/-inf
    (max/min row sum)."""
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if dtype is not None:
        input = input.to(dtype)
    _float_check(input._data, "linalg.matrix_norm")
    d0, d1 = (d % input.ndim for d in dim)
    if ord == "fro":
        return Norm.apply(input, 2.0, (d0, d1), keepdim, None)
    if ord in ("nuc", 2, -2):
        perm = [i for i in range(input.ndim) if i not in (d0, d1)] + [d0, d1]
        s = svdvals(input.permute(*perm))
        r = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    sum_dim, red_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = input.abs().sum(sum_dim, keepdim=keepdim)
    if not keepdim and red_dim > sum_dim:
        red_dim -= 1
    return sums.amax(red_dim, keepdim=keepdim) if ord > 0 else sums.amin(red_dim, keepdim=keepdim)


def norm(input: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Vector norm (1-d input or an int dim) or matrix norm (2-d input or a 2-tuple dim)."""
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
        if len(dim) == 1:
            dim = dim[0]
    if ord is None:
        if isinstance(dim, tuple):
            return matrix_norm(input, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(input, 2, dim, keepdim, dtype=dtype)
    if isinstance(dim, tuple) or (dim is None and input.ndim == 2) or isinstance(ord, str):
        return matrix_norm(input, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    if dim is None and input.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{input.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Expected a numeric ord, but got {ord}")
    return vector_norm(input, ord, dim, keepdim, dtype=dtype)


# ------------------------------------------------------------------ composites
def pinv(input: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """Moore-Penrose pseudo-inverse, dropping singular values below max(atol, rtol * s_max) (``rcond``: torch's
    older name of rtol); ``hermitian``: from the eigendecomposition of the lower triangle, as torch's."""
    _matrix_check(input._data, "linalg.pinv")
    if rcond is not None:
        rtol = rcond
    if hermitian:
        return LinalgPinvHermitian.apply(input, atol, rtol)
    u, s, vh = LinalgSvd.apply(input, False)
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    if rtol is None:
        rtol = 0.0 if (atol is not None and atol > 0) else np.finfo(input._data.dtype).eps * max(input.shape[-2:])
    cutoff = (smax.detach() * rtol).clamp(min=0.0 if atol is None else atol)
    keep = s.detach() > cutoff  # ember ops (no reads of values): vmap batches it
    sinv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    return (vh.mH * sinv.unsqueeze(-2)) @ u.mH


class LinalgPinvHermitian(Op):
    """pinv from the eigendecomposition of the lower triangle (eigenvalues below the cutoff dropped by modulus);
    d pinv: torch's pinv_backward (the general pseudo-inverse's derivative, at A and this result)"""

    __slots__ = ()
    _name = "LinalgPinvBackward0"
    save = ("self", "result")
    nattrs = 2

    @staticmethod
    def forward(ctx, self, atol, rtol):
        w, q = np.linalg.eigh(self, UPLO="L")
        s = np.abs(w)
        smax = s.max(-1, keepdims=True) if s.shape[-1] else s.sum(-1, keepdims=True)
        if rtol is None:
            rtol = 0.0 if (atol is not None and atol > 0) else np.finfo(self.dtype).eps * max(self.shape[-2:])
        keep = s > np.maximum(smax * rtol, 0.0 if atol is None else atol)
        winv = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
        return _B.asarray((q * winv[..., None, :]) @ np.conj(np.swapaxes(q, -1, -2)), self.dtype)

    def backward(ctx, grad):
        A, pinvA = ctx.saved_tensors
        pinvAh, gradh = pinvA.mH, grad.mH
        if A.shape[-2] <= A.shape[-1]:
            K = gradh @ pinvA
            KpinvAh = K @ pinvAh
            return -(pinvA @ K).mH + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gradh - K @ A)
        K = pinvA @ gradh
        pinvAhK = pinvAh @ K
        return -(K @ pinvA).mH + pinvAhK - pinvAhK @ pinvA @ A + (gradh - A @ K) @ pinvA @ pinvAh


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: linalg.pinv with relative tolerance ``rcond``."""
    return pinv(input, rtol=rcond)


_linalg_det.__name__ = "linalg_det"


def matrix_power(input: Tensor, n: int) -> Tensor:
    """A = input multiplied by itself n times (n < 0: powers of the inverse; n = 0: identities)."""
    _square_check(input._data, "linalg.matrix_power", float_only=n < 0)
    if n == 0:
        eye = made(np.broadcast_to(np.eye(input.shape[-1], dtype=input._data.dtype), input.shape))
        depends = input.requires_grad or _mode.interpose is not None  # in input's graph (or its tangent's)
        return input * 0 + _const(made(_B.ascontiguousarray(eye))) if depends else _const(made(eye.copy()))
    if n < 0:
        input, n = LinalgInvEx.apply(input), -n
    result, base = None, input
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)


def multi_dot(tensors) -> Tensor:
    """The chained product of matrices (the first and last may be vectors)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        want_vec = (i == 0 or i == len(tensors) - 1) and t.ndim == 1
        if t.ndim != 2 and not want_vec:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D" if 0 < i < len(tensors) - 1
                               else f"multi_dot(): the {'first' if i == 0 else 'last'} tensor must be 1D or 2D but "
                                    f"got {t.ndim}D")
    for i in range(len(tensors) - 1):
        a, b = tensors[i], tensors[i + 1]
        if a.shape[-1] != b.shape[0]:
            sa = list(a.shape) if a.ndim == 2 else [1, a.shape[0]]
            sb = list(b.shape) if b.ndim == 2 else [b.shape[0], 1]
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {sa} and {sb} cannot be multiplied")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result

# torch has no 16-bit kernels for these: their forwards see the stored arrays and raise its errors (_float_check)
for _cls in (LinalgInvEx, LinalgDet, LinalgSlogdet, LinalgCholeskyEx, LinalgQr, LinalgEigh, LinalgSvd, LinalgEig):
    _cls.reduced_native = True


# ------------------------------------------------------------------ Householder (LAPACK geqrf / orgqr)
class Geqrf(Op):
    """geqrf is not differentiable: backward raises torch's error"""

    differentiable_outputs = (0, 1)
    reduced_native = True  # (no 16-bit kernel in torch: the check below sees the stored array)

    @staticmethod
    def forward(ctx, self):
        h, tau = np.linalg.qr(self, mode="raw")  # h: the reflectors and R, transposed (LAPACK's column order)
        return _B.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(self.dtype, copy=False), tau.astype(self.dtype)

    def backward(ctx, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input: Tensor, *, out=None):
    """The QR decomposition in LAPACK's form: (a, tau) with R on and above a's diagonal and the Householder
    vectors below it."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _float_check(input._data, "geqrf")
    return _RT.geqrf(*Geqrf.apply(input))


def householder_product(input: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H with v_i the i-th column of A below the
    diagonal (1 on it). Composed of ember ops, so every order of derivative follows."""
    A = input
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1] if tau.dim() else 0
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(f"torch.linalg.householder_product: Expected tau to have one dimension less than input, "
                           f"but got tau.ndim equal to {tau.dim()} and input.ndim is equal to {A.dim()}")
    dt = A._data.dtype
    rows = np.arange(m)
    x = _const(np.broadcast_to(np.eye(m, n, dtype=dt), tuple(A.shape[:-2]) + (m, n)).copy())
    for i in range(k - 1, -1, -1):  # H_i applied to the columns built so far, last reflector first
        below = _const((rows > i).astype(dt)[:, None])
        v = A[..., :, i:i + 1] * below + _const((rows == i).astype(dt)[:, None])  # (*, m, 1)
        x = x - tau[..., i, None, None] * (v @ (v.mH @ x))  # (v^H: the conjugate transpose, for complex A)
    if k == 0:  # no reflector: the identity columns, still a function of A (zero gradient), as torch's
        x = x + A * 0
    return x


def orgqr(input: Tensor, input2: Tensor, *, out=None) -> Tensor:
    """torch.orgqr: householder_product under the names of LAPACK's routine."""
    return householder_product(input, input2)


_args.install(globals(), ("inverse", "det", "logdet", "slogdet", "cholesky", "svd", "matrix_power", "pinverse", "inv",
                          "_linalg_det", "_linalg_slogdet", "solve", "_cholesky", "qr", "eigh", "eigvalsh", "eig",
                          "eigvals", "_svd",
                          "svdvals", "vector_norm", "matrix_norm", "norm", "pinv", "multi_dot", "geqrf",
                          "householder_product", "orgqr"),
              out=("inverse", "slogdet", "matrix_power", "inv", "_linalg_det", "multi_dot"))
