"""Differentiable primitives of the nn layers: activations, softmax/log_softmax, embedding, nll_loss.

They are ops (not compositions) where a composition would be unstable (softmax of large inputs,
softplus/elu branches that overflow) or slow. Activations are one table fed to ``_activation``:
forward on arrays, backward in ember ops (so second derivatives come for free).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend as _B
from .. import _dtype as D
from .. import _kernels
from .._fuse import formula
from .._kernels import select as _select
from .._tensor import Tensor, _wrap, _wrap_dim
from ._op import Op, linear
from ._inplace import _title
from ..autograd._interpose import fused_ok, replayable
from ..autograd.grad_mode import _mode
from ._erf import normal_cdf as _normal_cdf
from .elementwise import erf
from .indexing import where
from .reduction import _PutAlong, Sum as _Sum
from .arithmetic import _mul, _sub
from .elementwise import _sigmoid, sigmoid, tanh

__all__ = ["softmax", "log_softmax"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _upcast(fwd):
    """Run ``fwd`` in float32 for float16 inputs (as torch's CPU kernels), under silenced NumPy warnings."""
    def run(x, *attrs):
        with np.errstate(all="ignore"):
            if x.dtype == np.float16:
                return fwd(x.astype(np.float32), *attrs).astype(np.float16)
            return _B.asarray(fwd(x, *attrs), x.dtype)
    return run


def _elu_fwd(x, alpha, scale, input_scale):
    return _select(x > 0, x * scale, np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale), x.dtype)


def _elu_bwd(g, x, alpha, scale, input_scale):
    neg = (x.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale)
    return where(x > 0, g * scale, g * neg)


def _softplus_fwd(x, beta, threshold):
    """torch's formula, log1p(exp(beta x)) / beta below the threshold (clipped there: no overflow), x above."""
    xb = x * beta
    soft = _B.asarray(np.minimum(xb, threshold))  # (0-d: an array, for out=)
    np.exp(soft, out=soft)
    np.log1p(soft, out=soft)
    soft /= beta
    return _select(xb > threshold, x, soft, x.dtype)


def _softplus_bwd(g, x, beta, threshold):
    return where(x * beta > threshold, g, g * sigmoid(x * beta))


@formula("gelu_tanh")
def _gelu_tanh(xp, x):
    return 0.5 * x * (1 + xp.tanh(_GELU_K * (x + _GELU_C * x * x * x)))


@formula("gelu_tanh_backward")
def _gelu_tanh_bwd(xp, g, x):
    """The formula of ``_gelu_bwd`` below on arrays, op for op (its raw path: NOTE [raw backward])."""
    t = xp.tanh(_GELU_K * (x + _GELU_C * x * x * x))
    dinner = _GELU_K * (1 + 3 * _GELU_C * x * x)
    return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner)


def _gelu_fwd(x, approximate):
    if approximate == "tanh":
        return _gelu_tanh(x)  # one kernel on a GPU (NOTE [fused formulas] in ember/_fuse.py)
    return x * _normal_cdf(x)


def _gelu_bwd(g, x, approximate):
    if approximate == "tanh":
        if not _mode.grad_enabled and _mode.interpose is None and _raw_ok(g, x):  # NOTE [raw backward]
            return _wrap(_gelu_tanh_bwd(g._data, x._data), g._dtype)
        t = tanh(_GELU_K * (x + _GELU_C * x * x * x))
        dinner = _GELU_K * (1 + 3 * _GELU_C * x * x)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner)
    cdf = 0.5 * (1 + erf(x * _INV_SQRT2))
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _silu_bwd(g, x):
    s = sigmoid(x)
    return g * (s * (1 + x * (1 - s)))


def _mish_fwd(x):
    return x * np.tanh(np.logaddexp(0, x))


def _mish_bwd(g, x):
    t = tanh(_ACT["Softplus"].apply(x, 1.0, 20.0))
    return g * (t + x * sigmoid(x) * (1 - t * t))


def _hardswish_bwd(g, x):
    return where(x < -3, 0.0, where(x <= 3, g * (x / 3 + 0.5), g))


def _softshrink_fwd(x, lambd):
    """x - lambd above lambd, x + lambd below -lambd, x * 0 between (torch's -0.0 for negative x): branch-free as
    x - clip(x, -lambd, lambd) with x's sign."""
    out = x - np.clip(x, -lambd, lambd)
    return np.copysign(out, x, out=out) if type(out) is np.ndarray else np.copysign(out, x)


def _shrink_bwd(g, x, lambd):
    return where((x >= -lambd) & (x <= lambd), 0.0, g)


def _rrelu_bwd(g, x, slope):
    """``slope``: one number (eval: the mean slope) or an array of per-element slopes drawn in training."""
    if _B.is_array(slope):
        slope = _wrap(slope.astype(x._data.dtype, copy=False), x._dtype)
    return where(x > 0, g, g * slope)


def _raw_ok(grad: Tensor, r: Tensor) -> bool:
    """Whether a raw-array backward applies: non-0-d arrays of one floating dtype (else the ops' promotion)."""
    g, a = grad._data, r._data
    return (type(g) is type(a) and _B.is_array(g) and g.ndim > 0 and g.dtype == a.dtype and g.dtype.kind == "f"
            and g.dtype.itemsize > 2)  # 16-bit floats compute through the ops (NOTE [reduced precision])


def _in_graph_of(grad: Tensor, x: Tensor) -> Tensor:
    """Under create_graph, a gradient that does not depend on ``x`` (piecewise-linear ops) still joins x's graph
    with a zero derivative, as torch's double-backward formulas do."""
    if _mode.grad_enabled and x._requires_grad and not grad._requires_grad:
        return grad + x * 0
    return grad


def _activation(name: str, fwd, bwd, nattrs: int, torch_name: str = ""):
    """An Op for ``fwd(array, *attrs)`` whose backward is ``bwd(grad, input, *attrs)``."""
    def forward(ctx, self, *attrs):
        if ctx is not None:
            ctx.extra = attrs
        return fwd(self, *attrs)

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _in_graph_of(bwd(grad, x, *ctx.extra), x)

    def jvp(args, out, tangents):  # elementwise: the Jacobian is diagonal, so backward's formula serves
        return bwd(tangents[0], *args)

    ns = {"__slots__": ("extra",), "save": ("self",), "nattrs": nattrs, "forward": staticmethod(forward),
          "backward": backward, "jvp": staticmethod(jvp), "__doc__": f"activation {name}", "__module__": __name__}
    if torch_name:
        ns["_name"] = torch_name
    return type(name, (Op,), ns)


# Op name: (forward(x, *attrs) on arrays, backward(grad, x, *attrs) in ember ops, number of attrs, node name)
_ACTIVATIONS = {
    "Elu": (_elu_fwd, _elu_bwd, 3, ""),
    "Celu": (_elu_fwd, _elu_bwd, 3, ""),
    "LeakyRelu": (lambda x, s: _select(x > 0, x, x * s, x.dtype), lambda g, x, s: where(x > 0, g, g * s), 1, ""),
    "Hardtanh": (lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
                 lambda g, x, lo, hi: where((x > lo) & (x < hi), g, 0.0), 2, ""),
    "Hardsigmoid": (lambda x: np.clip(x / 6 + 0.5, 0, 1),
                    lambda g, x: where((x > -3) & (x < 3), g / 6, 0.0), 0, ""),
    "Hardswish": (lambda x: x * np.clip(x + 3, 0, 6) / 6, _hardswish_bwd, 0, ""),
    "Softplus": (_softplus_fwd, _softplus_bwd, 2, ""),
    "Gelu": (_gelu_fwd, _gelu_bwd, 1, ""),
    "Silu": (lambda x: x * _sigmoid(x), _silu_bwd, 0, ""),
    "Mish": (_mish_fwd, _mish_bwd, 0, ""),
    "Threshold": (lambda x, th, v: _select(x > th, x, v, x.dtype), lambda g, x, th, v: where(x > th, g, 0.0), 2, ""),
    "LogSigmoid": (lambda x: -np.logaddexp(0, -x), lambda g, x: g * sigmoid(-x), 0, ""),
    "Hardshrink": (lambda x, lambd: _select(np.abs(x) <= lambd, 0.0, x, x.dtype), _shrink_bwd, 1, ""),
    "Softshrink": (_softshrink_fwd, _shrink_bwd, 1, ""),
    "RreluWithNoise": (lambda x, slope: _select(x > 0, x, x * slope, x.dtype), _rrelu_bwd, 1, ""),
}
_ACT = {name: _activation(name, _upcast(fwd), bwd, n, tn) for name, (fwd, bwd, n, tn) in _ACTIVATIONS.items()}


# torch's kernel names in its "not implemented for 'Long'" errors; ops absent here accept integer inputs
_FLOAT_KERNELS = {"Elu": "elu_cpu", "Celu": "elu_cpu", "LeakyRelu": "leaky_relu_cpu", "Hardsigmoid": "hardsigmoid_cpu",
                  "Hardswish": "hardswish_cpu", "Softplus": "softplus_cpu", "Gelu": "GeluKernelImpl",
                  "Silu": "silu_cpu", "Mish": "mish_cpu", "LogSigmoid": "log_sigmoid_cpu", "Hardshrink": "hardshrink_cpu",
                  "Softshrink": "softshrink_check"}


# what torch raises for complex inputs (silu computes on them, without a derivative: NOTE [complex autograd])
_COMPLEX_KERNELS = {**_FLOAT_KERNELS, "Hardtanh": "!clamp is not supported for complex types",
                    "Threshold": "threshold_cpu", "RreluWithNoise": "leaky_relu_cpu"}
del _COMPLEX_KERNELS["Silu"]
_ACT["Silu"].no_complex_grad = "silu"


def activation(name: str, input: Tensor, *attrs) -> Tensor:
    """Apply the activation op ``name`` (a key of the table) with its attributes."""
    if input._dtype.is_complex and name in _COMPLEX_KERNELS:
        spec = _COMPLEX_KERNELS[name]
        if spec.startswith("!"):
            raise NotImplementedError(spec[1:])
        raise NotImplementedError(f'"{spec}" not implemented for \'{_title(input._dtype)}\'')
    if not input._dtype._differentiable and name in _FLOAT_KERNELS:
        raise NotImplementedError(f'"{_FLOAT_KERNELS[name]}" not implemented for \'{_title(input._dtype)}\'')
    return _ACT[name].apply(input, *attrs)


# ---------------------------------------------------------------------------------------------- softmax family
def _row_max(x, dim):
    """max along ``dim`` (keepdims), the shift of the softmax family: a +inf maximum makes the whole slice nan, as
    torch's kernel. NumPy's max along
    a short last axis runs a scalar loop per row (220 µs for (2048, 16) float32, attention's shape); halving the
    rows with np.maximum first keeps it vectorised."""
    n = x.shape[dim]
    if dim == x.ndim - 1 and 2 <= n <= 64 and n & (n - 1) == 0 and x.ndim > 1:
        while n > 1:
            n //= 2
            x = np.maximum(x[..., :n], x[..., n:])  # (a new array each time)
        m = x
    else:
        m = np.max(x, axis=dim, keepdims=True)
    return m


def _softmax_arr(x, dim):
    if x.size == 0:
        return x.copy()
    if x.ndim == 0:
        return _softmax_arr(x.reshape(1), 0).reshape(())
    with np.errstate(invalid="ignore", over="ignore"):
        e = x - _row_max(x, dim)
        np.exp(e, out=e)
        e /= _kernels.fsum(e, (dim,), True)
        return e


def _log_softmax_arr(x, dim):
    if x.size == 0:
        return x.copy()
    if x.ndim == 0:
        return _log_softmax_arr(x.reshape(1), 0).reshape(())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        s = x - _row_max(x, dim)
        lse = _kernels.fsum(np.exp(s), (dim,), True)
        np.log(lse, out=lse)
        s -= lse
        return s


class Softmax(Op):
    """d softmax = r * (grad - sum(grad * r, dim))"""

    __slots__ = ()
    save = ("result",)
    attrs = ("dim",)

    @staticmethod
    def forward(ctx, self, dim):
        return _B.asarray(_upcast(_softmax_arr)(self, dim), self.dtype)

    def backward(ctx, grad):
        (r,) = ctx.saved_tensors
        if not _mode.grad_enabled and _mode.interpose is None and _raw_ok(grad, r):  # NOTE [raw backward]
            # the formula below on arrays, kernel for kernel (tests/ops/test_raw_backward.py)
            g, ra = grad._data, r._data
            t = _mul(g, ra)
            return _wrap(_mul(ra, _sub(g, _Sum.forward(None, t, ctx.dim, True, None))), grad._dtype)
        return r * (grad - (grad * r).sum(ctx.dim, keepdim=True))

    @staticmethod
    def jvp(args, out, tangents):  # the Jacobian diag(r) - r r^T is symmetric: backward's formula serves
        t = tangents[0]
        return out * (t - (t * out).sum(args[1], keepdim=True))


class LogSoftmax(Op):
    """d log_softmax = grad - exp(r) * sum(grad, dim)"""

    __slots__ = ()
    save = ("result",)
    attrs = ("dim",)

    @staticmethod
    def forward(ctx, self, dim):
        return _B.asarray(_upcast(_log_softmax_arr)(self, dim), self.dtype)

    def backward(ctx, grad):
        (r,) = ctx.saved_tensors
        if not _mode.grad_enabled and _mode.interpose is None and _raw_ok(grad, r):  # NOTE [raw backward]
            # create_graph=False: the same kernels as the ops below, on arrays (tests/ops/test_raw_backward.py)
            g = grad._data
            return _wrap(_sub(g, _mul(np.exp(r._data), _Sum.forward(None, g, ctx.dim, True, None))), grad._dtype)
        return grad - r.exp() * grad.sum(ctx.dim, keepdim=True)

    @staticmethod
    def jvp(args, out, tangents):  # t - <softmax, t>
        t = tangents[0]
        return t - (out.exp() * t).sum(args[1], keepdim=True)


def _softmax_dim(input: Tensor, dim, dtype, kernel: str):
    if dtype is not None:
        input = input.to(dtype)
    elif not input._dtype._differentiable:
        raise NotImplementedError(f'"{kernel}_lastdim_kernel_impl" not implemented for \'{_title(input._dtype)}\'')
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1  # torch's legacy implicit dim
    d = _wrap_dim(dim, max(input.ndim, 1)) if input.ndim else 0
    if input._dtype.is_complex:  # torch's kernel names: the last dim or any other
        last = "_lastdim" if d == max(input.ndim, 1) - 1 else ""
        raise NotImplementedError(f'"{kernel}{last}_kernel_impl" not implemented for \'{_title(input._dtype)}\'')
    return input, d


def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, finite for any finite input."""
    input, d = _softmax_dim(input, dim, dtype, "softmax")
    return Softmax.apply(input, d)


def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """x - logsumexp(x) along ``dim``, finite for any finite input."""
    input, d = _softmax_dim(input, dim, dtype, "log_softmax")
    return LogSoftmax.apply(input, d)


# ---------------------------------------------------------------------------------------------- embedding
class Embedding(Op):
    """rows of weight at indices; d weight = grad rows summed into their index (padding row excluded)"""

    __slots__ = ("idx", "num", "pad", "freq")
    nattrs = 4
    no_complex_grad = "embedding"

    @staticmethod
    def forward(ctx, self, idx, padding_idx, mask_padding, scale_by_freq=False):
        if not _B.is_cpu_array(idx):  # embedding's range check waits on a device (NOTE [device-side asserts]): no
            idx = np.clip(idx, 0, self.shape[0] - 1)  # read out of bounds meanwhile
        if ctx is not None:
            ctx.idx, ctx.num, ctx.pad, ctx.freq = idx, self.shape[0], padding_idx, scale_by_freq
        out = self[idx]
        if mask_padding and padding_idx is not None:
            out[idx == padding_idx] = 0
        return out

    def backward(ctx, grad):
        return EmbeddingDenseBackward.apply(grad, ctx.idx, ctx.num, ctx.pad, ctx.freq)


class EmbeddingDenseBackward(Op):
    """d (grad rows summed by index) = the rows of grad-grad at the indices (zero at the padding index)"""

    __slots__ = ("idx", "pad")
    _name = "EmbeddingDenseBackwardBackward0"
    nattrs = 4

    @staticmethod
    def forward(ctx, self, idx, num, padding_idx, scale_by_freq):
        # scale_by_freq divides each row by its index's count; torch's derivative of this ignores the scaling
        if ctx is not None:
            ctx.idx, ctx.pad = idx, padding_idx
        out = np.zeros((num,) + self.shape[idx.ndim:], self.dtype, like=self)
        flat = idx.reshape(-1)
        rows = self.reshape((-1,) + self.shape[idx.ndim:])
        if scale_by_freq:
            rows = rows / np.bincount(flat, minlength=num)[flat].astype(self.dtype)[:, None]
        if padding_idx is not None:
            keep = flat != padding_idx
            flat, rows = flat[keep], rows[keep]
        _kernels.scatter_add(out, flat, rows)  # NOTE [flat scatter-add]
        return out

    def backward(ctx, grad):
        return Embedding.apply(grad, ctx.idx, ctx.pad, True, False)


# ---------------------------------------------------------------------------------------------- nll_loss
class NllLoss(Op):
    """-coef * x[..., t, ...] along the class dim (summed unless reduction='none'); d x = -coef * grad put at the
    targets. The class dim is 1 (0 for a 1-d input)."""

    __slots__ = ("idx", "coef", "shape")
    save = ("self",)
    nattrs = 3
    jvp = linear  # (the forward kernel on the tangent: 'mean' over only ignored targets is nan, as torch's tangent)

    @staticmethod
    def forward(ctx, self, idx, coef, reduction):
        # idx: targets with a size-1 class dim; coef: per-target weight, 0 where ignored, over the total for 'mean'
        if self.dtype.kind == "c":
            raise NotImplementedError(f'"nll_loss_out_frame" not implemented for \'{_title(_dt(self))}\'')
        if ctx is not None:
            ctx.idx, ctx.coef, ctx.shape = idx, coef, self.shape
        c = 1 if self.ndim > 1 else 0
        picked = np.take_along_axis(self, idx, c).squeeze(c)
        with np.errstate(invalid="ignore"):
            losses = np.where(coef != 0, -(picked * coef), 0).astype(self.dtype)
        if reduction == "none":
            return losses
        if reduction == "mean":
            if not _B.is_cpu_array(coef):  # (a device reads no value: NOTE [device-side asserts])
                return _B.asarray(np.where(coef.any(), losses.sum(), np.nan), self.dtype)
            if not coef.any():  # nothing counted (empty, or every target ignored): 0/0
                return _B.asarray(np.nan, self.dtype)
        return _B.asarray(losses.sum(), self.dtype)

    def backward(ctx, grad):
        c = 1 if len(ctx.shape) > 1 else 0
        if not _mode.grad_enabled and _mode.interpose is None and type(grad._data) is np.ndarray and not grad._dtype._reduced:
            # create_graph=False: the same kernels as the ops below, on arrays (tests/ops/test_raw_backward.py)
            g = np.expand_dims(_mul(grad._data, -ctx.coef.astype(grad._data.dtype)), c)
            return _wrap(_PutAlong.forward(None, g, ctx.idx, c, ctx.shape, True), grad._dtype)
        coef = _wrap(ctx.coef, D.from_numpy_dtype(ctx.coef.dtype)).to(grad._dtype)  # (ops: ember.compile replays)
        g = (grad * -coef).unsqueeze(c)
        return _in_graph_of(_PutAlong.apply(g, ctx.idx, c, ctx.shape, True), ctx.saved_tensors[0])


class NllLoss2D(NllLoss):
    """nll_loss of inputs with extra dims (N, C, d1, ...)"""

    __slots__ = ()
    _name = "NllLoss2DBackward0"


# ---------------------------------------------------------------------------------------------- cross_entropy
# NOTE [fused cross-entropy]: every form of cross_entropy is, per element i (a sample and its extra dims),
# L_i = -sum_c Q_ic * log_softmax(x)_ic with target weights Q: class targets t give Q_ic = (1 - eps) * w[t_i] [c == t_i]
# + eps / C * w[c] (eps: label smoothing, w: class weights or ones, both zero where t_i == ignore_index);
# probability targets q give Q = (q * (1 - eps) + eps / C) * w. 'mean' divides by D (the summed w[t_i] of counted
# targets, or the number of elements for probabilities). Its gradient is d x_ic = g_i * (S_i * softmax(x)_ic - Q_ic)
# with S_i = sum_c Q_ic: one node, one pass forward (log_softmax, the picked and smoothed terms) and one backward
# (exp of the saved log-probabilities, one put at the targets), where torch records log_softmax, nll_loss and, for
# smoothing or probabilities, the arithmetic between them. The node shows the name torch's graph has on the loss
# (NllLossBackward0, NllLoss2DBackward0, AddBackward0 for label smoothing, DivBackward1 or NegBackward0 for
# probabilities). When every target is ignored, 'mean' gives nan and zero gradients, as torch. Without a graph the
# backward runs on arrays (NOTE [raw backward]); with create_graph it is the same formula in ember ops over
# softmax(x), so second derivatives are exact. Targets and weights never require grad here (functional.py keeps
# the composition otherwise).
class CrossEntropy(Op):
    """d cross_entropy(x) = grad * (S * softmax(x) - Q): see NOTE [fused cross-entropy]"""

    __slots__ = ("cdim", "logp", "idx", "pick", "smooth", "w", "q", "s")
    nattrs = 1
    save = ("self",)
    _alias = True  # (a node class of its own under the names of other ops: not in the registry)

    @staticmethod
    def forward(ctx, self, spec):
        # spec: (cdim, idx or None, pick, smooth, w, q, s, scale, reduction), per NOTE [fused cross-entropy]:
        # idx (targets with a size-1 class dim) and pick (their coefficient (1 - eps) * w[t] per element), smooth
        # (eps / C per element, zero where ignored) with w (class weights or None), q (dense Q for probability
        # targets), s = S per element; scale multiplies the reduced loss (1 / D for 'mean', nan when D == 0)
        cdim, idx, pick, smooth, w, q, s, scale, reduction = spec
        x = self.astype(np.float32) if self.dtype == np.float16 else self
        logp = _log_softmax_arr(x, cdim)
        loss = None
        if idx is not None:
            picked = np.take_along_axis(logp, idx, cdim).squeeze(cdim)
            loss = np.where(pick != 0, picked * -pick, 0)
        if smooth is not None:
            rows = np.einsum(logp, list(range(logp.ndim)), w, [cdim], [i for i in range(logp.ndim) if i != cdim]) \
                if w is not None else _kernels.fsum(logp, (cdim,))
            term = np.where(smooth != 0, rows * -smooth, 0)
            loss = term if loss is None else loss + term
        if q is not None:
            loss = -_kernels.rowdot(logp, q, (cdim,))
        if ctx is not None:  # (log-probabilities as LogSoftmax gives them: in the input's dtype)
            ctx.cdim, ctx.idx, ctx.pick, ctx.smooth, ctx.w, ctx.q = cdim, idx, pick, smooth, w, q
            ctx.logp = logp.astype(self.dtype, copy=False)
            ctx.s = s
            if reduction != "none":  # D == 0 (scale nan): zero gradients
                f = (scale if scale == scale else 0.0) if type(scale) is float else np.nan_to_num(scale, nan=0.0)
                ctx.s = s * f if type(f) is not float or f != 0.0 else np.zeros_like(s)
                ctx.pick = None if pick is None else pick * f
                ctx.smooth = None if smooth is None else smooth * f
                ctx.q = None if q is None else q * f
        if reduction != "none":
            loss = _B.asarray(_kernels.fsum(loss, tuple(range(loss.ndim))) * scale, self.dtype)
        return loss.astype(self.dtype, copy=False)

    def backward(ctx, grad):
        cdim = ctx.cdim
        dt = grad._dtype
        if (not _mode.grad_enabled and fused_ok() and _B.is_array(grad._data)
                and not grad._dtype._reduced):  # NOTE [raw backward] (16-bit floats: the ops; any device)
            return _ce_raw_backward(ctx, grad)
        (x,) = ctx.saved_tensors
        c = lambda a: _wrap(a.astype(dt.np, copy=False), dt)  # noqa: E731 - constants of the formula
        ge = grad.unsqueeze(cdim) if grad.ndim else grad
        out = LogSoftmax.apply(x, cdim).exp() * (c(np.expand_dims(ctx.s, cdim)) * ge)
        if ctx.idx is not None:
            out = out - _PutAlong.apply(c(np.expand_dims(ctx.pick, cdim)) * ge, ctx.idx, cdim, tuple(x.shape), True)
        if ctx.smooth is not None:
            sm = c(np.expand_dims(ctx.smooth, cdim)) * ge
            out = out - (sm * c(_class_row(ctx.w, cdim, x.ndim)) if ctx.w is not None else sm)
        if ctx.q is not None:
            out = out - c(ctx.q) * ge
        return out


@replayable  # on arrays: one step of compiled programs (NOTE [fused nodes under levels])
def _ce_raw_backward(ctx, grad: Tensor) -> Tensor:
    """CrossEntropy's backward formula on arrays, kernel for kernel (tests/ops/test_raw_backward.py)."""
    cdim = ctx.cdim
    dt = grad._dtype
    c = lambda a: a.astype(dt.np, copy=False)  # noqa: E731
    g = grad._data
    ge = np.expand_dims(g, cdim) if g.ndim else g
    out = np.exp(ctx.logp)
    np.multiply(out, c(np.expand_dims(ctx.s, cdim)) * ge, out=out)
    if ctx.idx is not None:
        at = np.take_along_axis(out, ctx.idx, cdim)
        np.put_along_axis(out, ctx.idx, at - c(np.expand_dims(ctx.pick, cdim)) * ge, cdim)
    if ctx.smooth is not None:
        sm = c(np.expand_dims(ctx.smooth, cdim)) * ge
        np.subtract(out, sm * c(_class_row(ctx.w, cdim, out.ndim)) if ctx.w is not None else sm, out=out)
    if ctx.q is not None:
        np.subtract(out, c(ctx.q) * ge, out=out)
    return _wrap(out, dt)


def _class_row(w: np.ndarray, cdim: int, ndim: int) -> np.ndarray:
    """Class weights shaped to broadcast along the class dim."""
    return w.reshape((-1,) + (1,) * (ndim - cdim - 1))


_CE_NODES = {name: type(name.replace("Backward0", "").replace("Backward1", "") + "CE", (CrossEntropy,),
                        {"__slots__": (), "_name": name, "_alias": True, "__module__": __name__})
             for name in ("NllLossBackward0", "NllLoss2DBackward0", "AddBackward0", "DivBackward1", "NegBackward0")}


def cross_entropy_node(name: str):
    """The fused cross-entropy node class that shows torch's node ``name`` (NOTE [fused cross-entropy])."""
    return _CE_NODES[name]


# ---------------------------------------------------------------------------------------------- mse_loss
class MseLoss(Op):
    """(x - t)**2 reduced; d x = grad * 2 (x - t) (/ n for 'mean'), d t = -d x"""

    __slots__ = ("scale",)
    inputs = save = ("self", "target")
    nattrs = 1

    @staticmethod
    def forward(ctx, self, other, reduction):
        _real_kernel("mse_cpu", self, other)
        d = self - other
        sq = d * d
        if ctx is not None:
            ctx.scale = 2.0 / sq.size if reduction == "mean" and sq.size else 2.0
        if reduction == "none":
            return sq
        with np.errstate(invalid="ignore"):
            return _B.asarray(sq.sum() / sq.size if reduction == "mean" else sq.sum(), sq.dtype)

    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        gx = grad * ((x - t) * ctx.scale)
        return gx, -gx


def _dt(a):
    from .. import _dtype as D

    return D.from_numpy_dtype(np.dtype(getattr(a, "dtype", a)))


def _real_kernel(kernel: str, self: np.ndarray, target: np.ndarray, cast_first: bool = False) -> None:
    """torch's error for a loss kernel without complex support, given complex values among its inputs;
    ``cast_first``: a real input with a complex target fails first on the output cast (huber's out= kernel)."""
    if self.dtype.kind != "c" and _B.asarray(target).dtype.kind != "c":
        return
    result = np.result_type(self, target)
    if cast_first and self.dtype.kind != "c":
        raise _cast_error(result, self.dtype)
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_title(_dt(result))}\'')


def _cast_error(result, out) -> RuntimeError:
    """torch's error for an in-place (out=) result that cannot hold the computed dtype."""
    return RuntimeError(f"result type {_title(_dt(result))} can't be cast to the desired output type {_title(_dt(out))}")



# ---------------------------------------------------------------------------------------------- pointwise losses
# One node each, as torch's (BinaryCrossEntropyBackward0 ...), with torch's backward formulas: the composition of
# logs and branches gives 0 * inf = nan gradients at the points torch's kernels handle (p = 0 or 1, an infinite
# difference). Backward formulas are ember ops, so second derivatives come from the engine.
def _reduced(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return loss
    total = loss.sum()
    return _B.asarray(total / loss.size if reduction == "mean" else total, loss.dtype)


def _loss_scale(ctx, grad: Tensor) -> Tensor:
    """The upstream gradient of each element: divided by the count for 'mean'."""
    return grad / ctx.numel if ctx.reduction == "mean" else grad


_BCE_EPS = 1e-12  # torch's EPSILON in binary_cross_entropy_backward


class BinaryCrossEntropy(Op):
    """-w (t log x + (1 - t) log(1 - x)), logs clamped at -100; d x = w (x - t) / max(x (1 - x), 1e-12),
    d t = -w logit(x)"""

    __slots__ = ("reduction", "numel")
    inputs = save = ("self", "target", "weight")
    nattrs = 1

    @staticmethod
    def forward(ctx, self, target, weight, reduction):
        _real_kernel("binary_cross_entropy", self, target)
        if weight is not None and weight.dtype.kind == "c":  # the kernel's loss *= weight
            raise _cast_error(np.result_type(self, weight), self.dtype)
        if ctx is not None:
            ctx.reduction, ctx.numel = reduction, self.size
        loss = (target - 1) * np.maximum(np.log1p(-self), -100) - target * np.maximum(np.log(self), -100)
        if weight is not None:
            loss = loss * weight
        return _reduced(_B.asarray(loss, self.dtype), reduction)

    def backward(ctx, grad):
        x, t, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        g = _loss_scale(ctx, grad)
        if w is not None:
            g = g * w
        gx = g * (x - t) / ((1 - x) * x).clamp_min(_BCE_EPS) if need[0] else None
        gt = g * -x.logit() if need[1] else None
        return gx, gt, None


def _logits_loss_dtype(x: np.ndarray, target, weight, pos_weight) -> np.dtype:
    """The dtype of binary_cross_entropy_with_logits (real logits; the input's complex error comes first), as
    torch's composite: a complex target makes the loss complex, in the target's dtype (the rest is multiplied into
    it in place), which the in-place products by pos_weight's term (always) and by a complex weight (with a real
    target) cannot hold."""
    cplx = [a is not None and _B.asarray(a).dtype.kind == "c" for a in (target, weight, pos_weight)]
    if not any(cplx):
        return x.dtype
    if pos_weight is not None or (cplx[1] and not cplx[0]):
        raise _cast_error(np.result_type(*(a for a in (x, target, weight, pos_weight) if a is not None)), x.dtype)
    return _B.asarray(target).dtype


class BinaryCrossEntropyWithLogits(Op):
    """(1 - t) x + (1 + (p - 1) t) softplus(-x), times w; d x = w ((p t + 1 - t) sigmoid(x) - p t),
    d t = w (logsigmoid(-x) - p logsigmoid(x)) (p = 1 without pos_weight: d x = sigmoid(x) - t, d t = -x)"""

    __slots__ = ("reduction", "numel")
    inputs = save = ("self", "target", "weight", "pos_weight")
    nattrs = 1

    no_complex_grad = "binary_cross_entropy_with_logits"

    @staticmethod
    def forward(ctx, self, target, weight, pos_weight, reduction):
        if ctx is not None:
            ctx.reduction, ctx.numel = reduction, self.size
        dtype = _logits_loss_dtype(self, target, weight, pos_weight)
        sp = np.logaddexp(0, -self)
        if pos_weight is None:
            loss = (1 - target) * self + sp
        else:
            loss = (1 - target) * self + ((pos_weight - 1) * target + 1) * sp
        if weight is not None:
            loss = loss * weight
        return _reduced(_B.asarray(loss, dtype), reduction)

    def backward(ctx, grad):
        x, t, w, p = ctx.saved_tensors
        need = ctx.needs_input_grad
        g = _loss_scale(ctx, grad)
        if w is not None:
            g = g * w
        gx = gt = None
        if need[0]:
            if p is None:
                gx = g * (sigmoid(x) - t)
            else:
                pt = p * t
                gx = g * ((pt + 1 - t) * sigmoid(x) - pt)
        if need[1]:
            if p is None:
                gt = g * -x
            else:
                gt = g * (activation("LogSigmoid", -x) - p * activation("LogSigmoid", x))
        return gx, gt, None, None


def _slope(d: Tensor, bound: float, inside: Tensor, outside: float) -> Tensor:
    """``inside`` where |d| < bound, else sign(d) * outside (nan stays nan, an infinite d gives +-outside): the
    derivative of smooth L1 / Huber, as torch's kernels (0 second derivative outside, also at |d| == bound)."""
    return where(d.abs() < bound, inside, d.sign() * outside)


class SmoothL1Loss(Op):
    """0.5 d^2 / beta where |d| < beta, else |d| - beta / 2 (d = x - t); d x = clamp(d / beta, -1, 1) = -d t"""

    __slots__ = ("beta", "reduction", "numel")
    inputs = save = ("self", "target")
    nattrs = 2

    @staticmethod
    def forward(ctx, self, target, beta, reduction):
        _real_kernel("smooth_l1_cpu", self, target)
        d = self - target
        if ctx is not None:
            ctx.beta, ctx.reduction, ctx.numel = beta, reduction, d.size
        ad = np.abs(d)
        return _reduced(_B.asarray(np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta), d.dtype), reduction)

    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        d = x - t
        g = _loss_scale(ctx, grad) * _slope(d, ctx.beta, d / ctx.beta, 1.0)
        return g, -g


class HuberLoss(Op):
    """0.5 d^2 where |d| < delta, else delta (|d| - delta / 2) (d = x - t); d x = clamp(d, -delta, delta) = -d t"""

    __slots__ = ("delta", "reduction", "numel")
    inputs = save = ("self", "target")
    nattrs = 2

    @staticmethod
    def forward(ctx, self, target, delta, reduction):
        _real_kernel("huber_cpu", self, target, cast_first=True)
        d = self - target
        if ctx is not None:
            ctx.delta, ctx.reduction, ctx.numel = delta, reduction, d.size
        ad = np.abs(d)
        return _reduced(_B.asarray(np.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta)), d.dtype), reduction)

    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        d = x - t
        g = _loss_scale(ctx, grad) * _slope(d, ctx.delta, d, ctx.delta)
        return g, -g


__all__ += ["activation", "Embedding", "NllLoss", "NllLoss2D", "MseLoss", "CrossEntropy", "cross_entropy_node",
            "BinaryCrossEntropy", "BinaryCrossEntropyWithLogits", "SmoothL1Loss", "HuberLoss"]


# ---------------------------------------------------------------------------------------------- CrossMapLRN2d
# NOTE [CrossMapLRN2d's windows]: torch's legacy CrossMapLRN2d (a Python autograd Function) sums squares over
# a running window that never drops channel 0 (it subtracts channel c - pre_pad only for c > pre_pad), and its
# hand-written backward sums over a window shifted against the forward one; the backward is therefore not the
# derivative of the forward (gradcheck fails in torch). The oracle is torch: both windows are reproduced as 0/1
# channel matrices (forward: row c sums {0} and [c - p + 1, c + p - 1] with p = (size - 1) // 2 + 1; backward:
# [c - q, c + size - 1 - q] with q = size - (size - 1) / 2 truncated), so values and gradients are torch's.
def _lrn_windows(c: int, size: int, dtype) -> tuple:
    pre = int((size - 1) / 2 + 1)
    q = int(size - (size - 1) / 2)
    idx = np.arange(c)
    rows, cols = idx[:, None], idx[None, :]
    fwd = ((cols >= rows - pre + 1) & (cols <= rows + pre - 1)) | (cols == 0)
    bwd = (cols >= rows - q) & (cols <= rows + size - 1 - q)
    return fwd.astype(dtype), bwd.astype(dtype), q


class CrossMapLrn2d(Op):
    """out = x * (k + alpha / size * window sum of x**2) ** -beta; backward: torch's formula (NOTE
    [CrossMapLRN2d's windows])"""

    __slots__ = ("size", "alpha", "beta", "k")
    _name = "CrossMapLRN2dBackward"
    inputs = save = ("self", "result")
    nattrs = 4

    @staticmethod
    def jvp(args, out, tangents):  # torch's is a Python autograd.Function without a jvp
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @staticmethod
    def forward(ctx, self, size, alpha, beta, k):
        if ctx is not None:
            ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        fwd = _B.like(self, _lrn_windows(self.shape[1], size, self.dtype)[0])  # a constant, on self's device
        n, c = self.shape[:2]
        sums = np.matmul(fwd, (self * self).reshape(n, c, -1)).reshape(self.shape)
        return self * (k + (alpha / size) * sums) ** -beta

    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        size, alpha, beta, k = ctx.size, ctx.alpha, ctx.beta, ctx.k
        n, c = x.shape[:2]
        fwd, bwd, q = _lrn_windows(c, size, x._data.dtype)
        fwd, bwd = _B.like(x._data, fwd), _B.like(x._data, bwd)
        if q > size - 1:  # torch's padded buffer is too short for its own offset (size 1)
            raise RuntimeError(f"start ({q}) + length ({c}) exceeds dimension size ({c + size - 1}).")
        scale = (_wrap(fwd, x._dtype) @ (x * x).reshape(n, c, -1)).reshape(x.shape) * (alpha / size) + k
        ratio = (grad * out / scale).reshape(n, c, -1)
        acc = (_wrap(bwd, x._dtype) @ ratio).reshape(x.shape)
        return scale.pow(-beta) * grad - x * acc * (2 * alpha * beta / size)
