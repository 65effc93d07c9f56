"""CPU autocast's op lists (torch's AutocastCPU registrations) and the wrappers that apply them.

# NOTE [autocast policies]
torch's CPU autocast sits in front of a fixed list of ATen ops: ``lower_precision_fp`` ops (matmul, linear, conv
...) get their floating inputs cast to the autocast dtype, ``fp32`` ops (losses, pooling/padding kernels without
16-bit versions, linear algebra ...) get them cast to float32, and ``promote`` ops (cat, stack, index_copy) cast to
the widest floating dtype among their inputs and the autocast dtype. float64 tensors are never cast. Inside a listed
op autocast is off (torch excludes its dispatch key there), so the op's own pieces run in the dtypes it was given;
an op not listed runs as called, and listed ops it reaches are cast as they are reached.

ember's public functions are those ops (a composite such as ``F.linear`` is one function, not its pieces), so the
lists name public functions and Tensor methods. ``install()`` runs the first time CPU autocast is switched on in the
process: it wraps each listed function that exists and rebinds every reference to it in ember's modules (the names
other modules imported) and on Tensor. Until then nothing is wrapped: a program that never autocasts pays nothing.
Afterwards a listed call costs one thread-local read while autocast is off; unlisted ops (the elementwise op hot
path) are never touched. Names imported by user code from ember before the first autocast keep the unwrapped function.
"""
from __future__ import annotations

import functools
import importlib
import sys
import threading

from .. import _dtype as D
from .._tensor import Tensor
from .. import _state as S

__all__ = ["install", "LOWER_PRECISION_FP", "FP32", "PROMOTE"]

# torch's CPU lists, by public name ("F." = torch.nn.functional, "linalg." / "fft.": those namespaces, "Tensor.":
# methods; a name ember lacks is skipped). The ATen op each name reaches is in the comments where it differs.
LOWER_PRECISION_FP = (
    "conv1d conv2d conv3d F.conv1d F.conv2d F.conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
    "F.conv_transpose1d F.conv_transpose2d F.conv_transpose3d conv_tbc F.conv_tbc "
    "bmm mm baddbmm addmm addbmm matmul linalg.vecdot F.linear prelu F.prelu F.scaled_dot_product_attention "
    "Tensor.bmm Tensor.mm Tensor.baddbmm Tensor.addmm Tensor.addbmm Tensor.matmul Tensor.__matmul__ "
    "Tensor.__rmatmul__ Tensor.prelu "
    # torch composites that always reach mm/bmm
    "chain_matmul linalg.multi_dot"
).split()
# composites that reach mm/bmm for some arguments only: name -> predicate on (args, kwargs)
FP32 = (
    "F.avg_pool3d F.binary_cross_entropy F.grid_sample polar prod Tensor.prod quantile nanquantile Tensor.quantile "
    "Tensor.nanquantile stft Tensor.stft cdist F.cdist trace Tensor.trace view_as_complex cholesky Tensor.cholesky "
    "cholesky_inverse Tensor.cholesky_inverse cholesky_solve Tensor.cholesky_solve inverse Tensor.inverse lu_solve "
    "Tensor.lu_solve orgqr ormqr pinverse Tensor.pinverse F.max_pool3d max_pool3d F.max_unpool2d F.max_unpool3d "
    "F.adaptive_avg_pool3d adaptive_avg_pool3d "
    # losses (cross_entropy is cross_entropy_loss; binary_cross_entropy is not banned on the CPU)
    "F.mse_loss F.cosine_embedding_loss cosine_embedding_loss F.nll_loss F.hinge_embedding_loss "
    "hinge_embedding_loss F.poisson_nll_loss poisson_nll_loss F.smooth_l1_loss F.cross_entropy F.l1_loss "
    "F.huber_loss F.margin_ranking_loss margin_ranking_loss F.soft_margin_loss F.triplet_margin_loss "
    "triplet_margin_loss F.multi_margin_loss F.ctc_loss ctc_loss F.kl_div kl_div F.multilabel_margin_loss "
    "F.binary_cross_entropy_with_logits binary_cross_entropy_with_logits "
    "fft.fft fft.ifft fft.fft2 fft.ifft2 fft.fftn fft.ifftn fft.rfft fft.irfft fft.rfft2 fft.irfft2 fft.rfftn "
    "fft.irfftn fft.hfft fft.ihfft "
    "linalg.cond linalg.matrix_rank linalg.solve linalg.cholesky linalg.svdvals linalg.eigvals linalg.eigvalsh "
    "linalg.inv linalg.householder_product linalg.tensorinv linalg.tensorsolve geqrf Tensor.geqrf lu qr Tensor.qr "
    "svd Tensor.svd triangular_solve Tensor.triangular_solve F.fractional_max_pool2d F.fractional_max_pool3d "
    "F.adaptive_max_pool3d linalg.qr linalg.cholesky_ex linalg.svd linalg.eig linalg.eigh linalg.lstsq "
    "linalg.inv_ex"
).split()
PROMOTE = "stack cat concat concatenate index_copy Tensor.index_copy".split()
def _einsum_contracts(args, kwargs) -> bool:
    """torch's einsum reaches bmm when an index left out of the output appears in two operands or more."""
    eq, ops = args[0], args[1:]
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = ops[0]
    if not isinstance(eq, str) or len(ops) < 2:
        return False
    lhs, _, out = eq.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if "->" not in eq:
        out = "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    return any(sum(c in t for t in terms) >= 2 for c in set(lhs) if c.isalpha() and c not in out)


def _inner_is_mm(args, kwargs) -> bool:
    a, b = args[0], args[1] if len(args) > 1 else kwargs.get("other")
    return isinstance(a, Tensor) and isinstance(b, Tensor) and a.ndim > 0 and b.ndim > 0 and (a.ndim, b.ndim) != (1, 1)


def _tensordot_is_mm(args, kwargs) -> bool:
    a, b = args[0], args[1] if len(args) > 1 else kwargs.get("b")
    dims = args[2] if len(args) > 2 else kwargs.get("dims", 2)
    n = dims if isinstance(dims, int) else len(dims[0])
    return isinstance(a, Tensor) and isinstance(b, Tensor) and not (n == a.ndim and n == b.ndim)


LOWER_PRECISION_FP_IF = {"einsum": _einsum_contracts, "inner": _inner_is_mm, "Tensor.inner": _inner_is_mm,
                         "tensordot": _tensordot_is_mm}
# F.pad reaches reflection_pad1d/2d and replication_pad1d/2d/3d (fp32) for these modes and padded dimensions
_PAD_FP32 = {"reflect": (1, 2), "replicate": (1, 2, 3)}

_NAMESPACES = {"": "ember", "F.": "ember.nn.functional", "linalg.": "ember.linalg", "fft.": "ember.fft"}
_lock = threading.Lock()
_installed = False


def _eligible(t) -> bool:
    """torch's rule: a floating tensor other than float64."""
    return isinstance(t, Tensor) and t._dtype.is_floating_point and t._dtype is not D.float64


def _cast_tree(value, dtype: D.dtype, cache: bool):
    if isinstance(value, Tensor):
        return _cast(value, dtype, cache) if _eligible(value) and value._dtype is not dtype else value
    if type(value) in (list, tuple):
        return type(value)(_cast_tree(v, dtype, cache) for v in value)
    return value


def _cast(t: Tensor, dtype: D.dtype, cache: bool) -> Tensor:
    """``t.to(dtype)``, reusing the cast of a float32 leaf weight within the autocast region (torch's cache)."""
    if cache and t._dtype is D.float32 and t._requires_grad and t._grad_fn is None and t._base is None \
            and S._tls.cache_enabled:
        with S._cache_lock:
            hit = S._cache.get(id(t))
            if hit is not None and hit[0] is t:
                return hit[1]
            out = t.to(dtype)
            S._cache[id(t)] = (t, out)  # the weight is kept alive until the cache is cleared, as torch's weakref does
            return out
    return t.to(dtype)


def _lower(args, kwargs, lowp):
    return _cast_tree(args, lowp, True), {k: _cast_tree(v, lowp, True) for k, v in kwargs.items()}


def _fp32(args, kwargs, lowp):
    return _cast_tree(args, D.float32, False), {k: _cast_tree(v, D.float32, False) for k, v in kwargs.items()}


def _widest(value, dtype: D.dtype, lowp: D.dtype) -> D.dtype:
    """torch's ``prioritize``: float32 if any eligible input is, the autocast dtype if all are, else an error."""
    if isinstance(value, Tensor):
        if not _eligible(value):
            return dtype
        if dtype is D.float32 or value._dtype is D.float32:
            return D.float32
        if dtype is lowp and value._dtype is lowp:
            return lowp
        raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    if type(value) in (list, tuple):
        for v in value:
            dtype = _widest(v, dtype, lowp)
    return dtype


def _promote(args, kwargs, lowp):
    to = _widest(list(kwargs.values()), _widest(args, lowp, lowp), lowp)
    return _cast_tree(args, to, False), {k: _cast_tree(v, to, False) for k, v in kwargs.items()}


def _pad(args, kwargs, lowp):
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    pad = kwargs.get("pad", args[1] if len(args) > 1 else ())
    if len(pad) // 2 in _PAD_FP32.get(mode, ()):
        return _fp32(args, kwargs, lowp)
    return args, kwargs


def _lower_if(test):
    def cast(args, kwargs, lowp):
        return _lower(args, kwargs, lowp) if test(args, kwargs) else (args, kwargs)
    return cast


def _wrap(fn, cast):
    """``fn`` applying ``cast`` to its arguments while CPU autocast is on, and running with autocast off inside."""
    tls = S._tls

    @functools.wraps(fn)
    def autocast_op(*args, **kwargs):
        if not tls.cpu:
            return fn(*args, **kwargs)
        args, kwargs = cast(args, kwargs, tls.cpu_dtype)
        tls.cpu = False
        try:
            return fn(*args, **kwargs)
        finally:
            tls.cpu = True
    autocast_op._autocast_original = fn
    return autocast_op


def _resolve(name: str):
    """(owner, attribute, function) of a listed public name, or None where ember has no such name."""
    if name.startswith("Tensor."):
        attr = name[7:]
        fn = Tensor.__dict__.get(attr)
        return (Tensor, attr, fn) if fn is not None else None
    prefix, _, attr = name.rpartition(".")
    try:
        owner = importlib.import_module(_NAMESPACES[prefix + "." if prefix else ""])
        fn = getattr(owner, attr)
    except (ImportError, AttributeError):
        return None
    return owner, attr, fn


def install() -> None:
    """Wrap every listed function ember has, once per process (NOTE [autocast policies])."""
    global _installed
    if _installed:
        return
    with _lock:
        if _installed:
            return
        wrappers = {}  # id(original) -> wrapper
        table = [(n, _lower) for n in LOWER_PRECISION_FP] + [(n, _fp32) for n in FP32] + \
                [(n, _promote) for n in PROMOTE] + [("F.pad", _pad)] + \
                [(n, _lower_if(test)) for n, test in LOWER_PRECISION_FP_IF.items()]
        for name, cast in table:
            found = _resolve(name)
            if found is None:
                continue
            owner, attr, fn = found
            if getattr(fn, "_autocast_original", None) is not None:
                continue
            w = wrappers.get(id(fn))
            if w is None:
                w = wrappers[id(fn)] = (fn, _wrap(fn, cast))
            setattr(owner, attr, w[1])
        originals = {i: w for i, w in wrappers.items()}
        for mod_name, mod in list(sys.modules.items()):  # every other name bound to a listed function
            if mod is None or not (mod_name == "ember" or mod_name.startswith("ember.")):
                continue
            for k, v in list(vars(mod).items()):
                w = originals.get(id(v))
                if w is not None and w[0] is v:
                    setattr(mod, k, w[1])
        for k, v in list(Tensor.__dict__.items()):
            w = originals.get(id(v))
            if w is not None and w[0] is v:
                setattr(Tensor, k, w[1])
        _installed = True
