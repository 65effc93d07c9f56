"""The op table: one ``OpInfo`` per op (or op variant) of the core, driving tests/ops/test_ops.py.

Each entry names a callable ``fn(lib, *tensors)`` run once with ``lib=ember`` and once with
``lib=torch`` on tensors made from the same NumPy arrays, and a sample generator yielding those
arrays. Samples cover broadcasting, 0-d, empty and non-contiguous inputs and several dtypes; a
sample marked ``nc`` hands its 2-d+ inputs over transposed (non-contiguous, same values as the
shape the fn expects after ``.mT``), see ``call``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Iterator

import ml_dtypes
import numpy as np

F16, F32, F64 = np.float16, np.float32, np.float64
C64, C128 = np.complex64, np.complex128
BF16 = np.dtype(ml_dtypes.bfloat16)  # ember.bfloat16's storage (torch gets the same bits)


@dataclass(frozen=True)
class Sample:
    """Inputs of one call; ``nc``: pass 2-d+ inputs as non-contiguous transposed views."""

    arrays: tuple
    desc: str = ""
    nc: bool = False


@dataclass(frozen=True)
class OpInfo:
    """One op (variant): how to call it, on what, how closely, and what to check."""

    name: str
    fn: Callable
    samples: Callable[[np.random.Generator], Iterator[Sample]]
    gradgrad: bool = True  # twice differentiable: compare second derivatives too
    grad: bool = True  # compare first derivatives
    rtol: float | None = None
    atol: float | None = None
    check_grad_fn: bool = True  # grad_fn names of outputs equal torch's
    tags: tuple = field(default_factory=tuple)
    # complex variants of the samples (``complex_samples``) run in tests/ops/test_complex_ops.py: the op works
    # as torch's does on them or raises torch's error; False (with a reason in COMPLEX_EXEMPT) leaves them out
    complex: bool = True


def call(op: OpInfo, sample: Sample, lib, tensors):
    """Run ``op.fn`` on ``tensors``, transposing 2-d+ inputs first for non-contiguous samples."""
    if sample.nc:
        tensors = [t.transpose(-2, -1) if t.ndim >= 2 else t for t in tensors]
    return op.fn(lib, *tensors)


def nc_arrays(*arrays) -> tuple:
    """Store 2-d+ arrays transposed so that ``call`` hands the op non-contiguous tensors of the original shape."""
    return tuple(np.ascontiguousarray(np.swapaxes(a, -1, -2)) if a.ndim >= 2 else a for a in arrays)


# ---------------------------------------------------------------- sample helpers
def _r(rng, shape, dtype=F32, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _away(rng, shape, dtype=F32, gap=0.1):
    """Normal values at least ``gap`` away from 0 (off the kink of abs/relu/sign)."""
    x = rng.standard_normal(shape)
    x = np.where(np.abs(x) < gap, np.sign(x + 1e-12) * gap + x, x)
    return x.astype(dtype)


BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1, 4), (5, 1)), ((), (2, 3)), ((2, 3), ()), ((), ()),
                 ((0, 3), (1, 3)), ((4,), (3, 1)), ((2, 1, 3, 1), (4, 1, 5))]


def binary_samples(lo=None, hi=None, other_lo=None, other_hi=None, ints=True):
    """Broadcasting shape pairs, dtypes, mixed dtypes, non-contiguous, int operands."""
    olo = lo if other_lo is None else other_lo
    ohi = hi if other_hi is None else other_hi

    def gen(rng):
        for sa, sb in BINARY_SHAPES:
            yield Sample((_r(rng, sa, F32, lo, hi), _r(rng, sb, F32, olo, ohi)), f"{sa}x{sb}")
        yield Sample((_r(rng, (2, 3), F64, lo, hi), _r(rng, (2, 3), F64, olo, ohi)), "float64")
        yield Sample((_r(rng, (2, 3), F16, lo, hi), _r(rng, (3,), F16, olo, ohi)), "float16")
        yield Sample((_r(rng, (2, 3), F32, lo, hi), _r(rng, (2, 3), F64, olo, ohi)), "f32-f64")
        yield Sample((_r(rng, (4, 3), F64, lo, hi), _r(rng, (), F32, olo, ohi)), "f64-0d f32")
        yield Sample(nc_arrays(_r(rng, (3, 4), F32, lo, hi), _r(rng, (3, 4), F32, olo, ohi)), "non-contig", nc=True)
        if ints:
            a = rng.integers(1, 5, (2, 3))
            yield Sample((_r(rng, (2, 3), F32, lo, hi), a), "f32-int64")
            yield Sample((a, rng.integers(1, 4, (3,)).astype(np.int32)), "int64-int32")
            yield Sample((a.astype(np.int16), np.array(3, np.int64)), "int16-0d int64")
        # bfloat16 last, so that the samples above keep their values
        yield Sample((_r(rng, (2, 3), BF16, lo, hi), _r(rng, (3,), BF16, olo, ohi)), "bfloat16")
        yield Sample((_r(rng, (2, 3), BF16, lo, hi), _r(rng, (2, 3), F16, olo, ohi)), "bf16-f16")
        yield Sample((_r(rng, (2, 3), BF16, lo, hi), _r(rng, (), F32, olo, ohi)), "bf16-0d f32")
        if ints:
            yield Sample((_r(rng, (2, 3), BF16, lo, hi), rng.integers(1, 5, (2, 3))), "bf16-int64")
    return gen


def unary_samples(lo=None, hi=None, away=False, f16=True, ints=False, bf16=None):
    """Shapes 0-d .. 3-d, empty, float64/float16/bfloat16 (``bf16``: as ``f16`` unless given), non-contiguous."""
    bf16 = f16 if bf16 is None else bf16
    mk = (lambda rng, s, d: _away(rng, s, d)) if away else (lambda rng, s, d: _r(rng, s, d, lo, hi))

    def gen(rng):
        for s in [(), (5,), (3, 4), (2, 3, 4), (0, 3)]:
            yield Sample((mk(rng, s, F32),), str(s))
        yield Sample((mk(rng, (3, 2), F64),), "float64")
        if f16:
            yield Sample((mk(rng, (3, 2), F16),), "float16")
        yield Sample(nc_arrays(mk(rng, (4, 3), F32)), "non-contig", nc=True)
        if ints:
            yield Sample((rng.integers(-3, 4, (2, 3)),), "int64")
        if bf16:  # (last, so that the samples above keep their values)
            yield Sample((mk(rng, (3, 2), BF16),), "bfloat16")
    return gen


def fixed(*makers):
    """Samples from explicit makers ``rng -> Sample``."""
    def gen(rng):
        for m in makers:
            yield m(rng)
    return gen


def s(*shapes, dtype=F32, desc="", lo=None, hi=None):
    """A maker for a sample of random arrays of ``shapes``."""
    return lambda rng: Sample(tuple(_r(rng, sh, dtype, lo, hi) for sh in shapes), desc or "x".join(map(str, shapes)))


def snc(*shapes, dtype=F32):
    """Like ``s`` but non-contiguous (shapes are those the op sees)."""
    return lambda rng: Sample(nc_arrays(*(_r(rng, sh, dtype) for sh in shapes)), "nc " + "x".join(map(str, shapes)),
                              nc=True)


def matmul_samples(rng):
    """Every rank combination 1-d..4-d, with batch broadcasting."""
    batch = {1: None, 2: (), 3: (3,), 4: (2, 3)}
    bbatch = {1: None, 2: (), 3: (1,), 4: (2, 1)}
    n, k, m = 3, 4, 5
    for ra, rb in itertools.product(range(1, 5), repeat=2):
        a = (k,) if ra == 1 else batch[ra] + (n, k)
        b = (k,) if rb == 1 else bbatch[rb] + (k, m)
        yield Sample((_r(rng, a), _r(rng, b)), f"{ra}d@{rb}d")
    yield Sample((_r(rng, (4, 1, 3, 4)), _r(rng, (5, 4, 2))), "batch broadcast 4d@3d")
    yield Sample((_r(rng, (3, 4), F64), _r(rng, (4, 2), F64)), "float64")
    yield Sample((_r(rng, (0, 4)), _r(rng, (4, 2))), "empty rows")
    yield Sample((_r(rng, (3, 0)), _r(rng, (0, 2))), "empty inner")
    yield Sample(nc_arrays(_r(rng, (3, 4)), _r(rng, (4, 2))), "non-contig", nc=True)


def _c(rng, shape, dtype=C64, lo=None, hi=None):
    """Complex values: real parts as ``_r`` draws them, imaginary parts standard normal."""
    re = _r(rng, shape, F64, lo, hi)
    return (re + 1j * rng.standard_normal(shape)).astype(dtype)


def cs(*shapes, dtype=C64, desc="", lo=None, hi=None):
    """A maker for a sample of random complex arrays of ``shapes``."""
    return lambda rng: Sample(tuple(_c(rng, sh, dtype, lo, hi) for sh in shapes),
                              desc or "c " + "x".join(map(str, shapes)))


def csnc(*shapes, dtype=C64):
    """Like ``cs`` but non-contiguous."""
    return lambda rng: Sample(nc_arrays(*(_c(rng, sh, dtype) for sh in shapes)), "c nc " + "x".join(map(str, shapes)),
                              nc=True)


_COMPLEX_OF = {np.dtype(F32): C64, np.dtype(F64): C128}


def complexify(sample: Sample, rng) -> Sample | None:
    """``sample`` with every float32/float64 array made complex (imaginary parts drawn from N(0, 1/4)); None when
    it has no such array, or has float16 ones (torch's complex32 has no NumPy counterpart)."""
    arrays = [np.asarray(a) for a in sample.arrays]
    if any(a.dtype == F16 for a in arrays) or not any(a.dtype in _COMPLEX_OF for a in arrays):
        return None
    out = tuple((a + 0.5j * rng.standard_normal(a.shape)).astype(_COMPLEX_OF[a.dtype]) if a.dtype in _COMPLEX_OF
                else a for a in arrays)
    return Sample(out, "complex " + sample.desc, sample.nc)


def complex_samples(op: OpInfo, limit: int = 2) -> list:
    """Complex variants of ``op``'s samples: the first sample of each float dtype set, ``limit`` at most."""
    rng = np.random.default_rng(1)
    out, seen = [], set()
    for sample in op.samples(np.random.default_rng(0)):
        kinds = tuple(sorted({np.asarray(a).dtype.str for a in sample.arrays}))
        c = complexify(sample, rng)
        if c is None or kinds in seen:
            continue
        seen.add(kinds)
        out.append(c)
        if len(out) == limit:
            break
    return out


def _cond(rng, shape):
    return rng.random(shape) > 0.5


def _ints(rng, shape):
    return rng.integers(-3, 4, shape)


# ---------------------------------------------------------------- the table
BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "torch.add alpha": lambda lib, a, b: lib.add(a, b, alpha=2),
    "torch.sub alpha": lambda lib, a, b: lib.sub(a, b, alpha=3),
    "torch.mul": lambda lib, a, b: lib.mul(a, b),
    "torch.div": lambda lib, a, b: lib.div(a, b),
}

SCALAR = {  # scalar on either side: (fn, python scalars tried)
    "add scalar": lambda lib, x, c: x + c, "radd scalar": lambda lib, x, c: c + x,
    "sub scalar": lambda lib, x, c: x - c, "rsub scalar": lambda lib, x, c: c - x,
    "mul scalar": lambda lib, x, c: x * c, "rmul scalar": lambda lib, x, c: c * x,
    "div scalar": lambda lib, x, c: x / c, "rdiv scalar": lambda lib, x, c: c / x,
    "pow scalar": lambda lib, x, c: x ** c, "rpow scalar": lambda lib, x, c: c ** x,
    "torch.pow scalar exponent": lambda lib, x, c: lib.pow(x, c),
    "torch.pow scalar base": lambda lib, x, c: lib.pow(c, x),
    "Tensor.pow scalar": lambda lib, x, c: x.pow(c),
    "torch.rsub": lambda lib, x, c: lib.rsub(x, c),
}
_SCALARS = (2, 2.5, -1.5, 0, True)


def _scalar_entries():
    out = []
    for name, f in SCALAR.items():
        for c in _SCALARS:
            if c is True and ("pow" in name or "sub" in name):
                continue  # torch rejects these (bool subtraction; bool base/exponent): see test_op_errors
            positive = "pow" in name or name == "rdiv scalar"
            lo, hi = (0.5, 2.0) if positive else (None, None)
            out.append(OpInfo(f"{name} {c!r}", (lambda f, c: lambda lib, x: f(lib, x, c))(f, c),
                              unary_samples(lo, hi, f16=True, ints=not positive or "rpow" in name)))
    return out


def _matrix_transposes():
    return [
        OpInfo("t", lambda lib, x: x.t(), fixed(s((3, 4)), s((5,)), s(()), snc((3, 4)), s((0, 2)))),
        OpInfo("torch.t", lambda lib, x: lib.t(x), fixed(s((3, 4)), s((2,)))),
        OpInfo("T", lambda lib, x: x.T, fixed(s((3, 4)), s((5,)), s(()), snc((3, 4)))),
        OpInfo("mT", lambda lib, x: x.mT, fixed(s((3, 4)), s((2, 3, 4)), s((2, 1, 3, 4)), snc((2, 3)))),
    ]


GETITEM_KEYS = [
    0, -1, (1, 2), (-1, -2), slice(1, 3), slice(None, None, 2), slice(-3, None), slice(None, -1, 3),
    slice(5, 1), slice(None), (slice(None), slice(None)), (0, slice(1, 3)), (slice(1, 3), 0), None, (None, 0),
    (0, None), Ellipsis, (Ellipsis, 0), (0, Ellipsis), (Ellipsis, None), (None, Ellipsis, None),
    (-1, slice(None), None), (0, 1, 2), (slice(None, None, 2), None, slice(1, None, 2), -1), (slice(0, 4),),
    (slice(-100, 100),), (Ellipsis, slice(None, None, 3)), (1, Ellipsis, slice(None, 2)),
]


def _getitem_entries():
    out = []
    for k in GETITEM_KEYS:
        out.append(OpInfo(f"getitem {k!r}", (lambda k: lambda lib, x: x[k])(k),
                          fixed(s((4, 5, 6)), snc((4, 6, 5)), s((4, 5, 6), dtype=F64))))
    out.append(OpInfo("getitem on 0-d with None/Ellipsis", lambda lib, x: x[None, ...], fixed(s(()))))
    out.append(OpInfo("getitem chained", lambda lib, x: x[1:][0][::2], fixed(s((4, 5)))))
    # advanced indexing (IndexBackward0) and masks
    out.append(OpInfo("getitem int list", lambda lib, x: x[[0, 2, 2]], fixed(s((4, 3)))))
    out.append(OpInfo("getitem long tensor", lambda lib, x, i: x[i],
                      fixed(lambda rng: Sample((_r(rng, (4, 3)), np.array([[0, 3], [3, 3]])), "2-d index"))))
    out.append(OpInfo("getitem bool mask", lambda lib, x, m: x[m],
                      fixed(lambda rng: Sample((_r(rng, (4, 3)), _cond(rng, (4, 3))), "mask"),
                            lambda rng: Sample((_r(rng, (4, 3)), _cond(rng, (4,))), "row mask"))))
    out.append(OpInfo("getitem mixed advanced", lambda lib, x: x[1:, [0, 2]], fixed(s((3, 4)))))
    return out


def _reductions():
    red = []
    for name, lib_fn in (("sum", "sum"), ("mean", "mean")):
        variants = {
            "": lambda f: (lambda lib, x: getattr(x, f)()),
            " dim=1": lambda f: (lambda lib, x: getattr(x, f)(1)),
            " dim=-1": lambda f: (lambda lib, x: getattr(x, f)(dim=-1)),
            " dim=(0,2)": lambda f: (lambda lib, x: getattr(x, f)((0, 2))),
            " dim=(-1,0) keepdim": lambda f: (lambda lib, x: getattr(x, f)((-1, 0), keepdim=True)),
            " dim=1 keepdim": lambda f: (lambda lib, x: getattr(x, f)(1, True)),
            " dtype=float64": lambda f: (lambda lib, x: getattr(lib, f)(x, dtype=lib.float64)),
            " dim=0 dtype=float64": lambda f: (lambda lib, x: getattr(lib, f)(x, 0, dtype=lib.float64)),
        }
        for vname, mk in variants.items():
            three = "(0,2)" in vname or "(-1,0)" in vname
            shapes = [(2, 3, 4), (2, 0, 3)] if three else [(2, 3, 4), (3, 4), (2, 0, 3), (5, 0)]
            makers = [s(sh) for sh in shapes] + [s(shapes[0], dtype=F64), snc((2, 4, 3) if three else (3, 4))]
            if "dim" not in vname:
                makers += [s(()), s((5,))]
            if name == "sum" and "float64" not in vname:
                makers.append(lambda rng, sh=shapes[0]: Sample((_ints(rng, sh),), "int64"))
                makers.append(lambda rng, sh=shapes[0]: Sample((_cond(rng, sh),), "bool"))
                makers.append(s(shapes[0], dtype=F16))
            red.append(OpInfo(name + vname, mk(lib_fn), fixed(*makers)))
    red.append(OpInfo("sum 0-d dim=0", lambda lib, x: x.sum(0), fixed(s(()))))
    red.append(OpInfo("sum 0-d dim=-1 keepdim", lambda lib, x: x.sum(-1, keepdim=True), fixed(s(()))))
    red.append(OpInfo("mean 0-d dim=0", lambda lib, x: x.mean(0), fixed(s(()))))
    red.append(OpInfo("torch.sum dim list", lambda lib, x: lib.sum(x, [0, 1]), fixed(s((2, 3, 4)))))
    red.append(OpInfo("torch.mean", lambda lib, x: lib.mean(x), fixed(s((3, 4)), s(()))))
    return red


def _unary_entries():
    return [
        OpInfo("neg", lambda lib, x: -x, unary_samples(ints=True)),
        OpInfo("torch.neg", lambda lib, x: lib.neg(x), unary_samples()),
        OpInfo("abs", lambda lib, x: x.abs(), unary_samples(away=True, ints=True)),
        OpInfo("builtin abs", lambda lib, x: abs(x), unary_samples(away=True)),
        OpInfo("torch.abs", lambda lib, x: lib.abs(x), unary_samples(away=True)),
        OpInfo("exp", lambda lib, x: x.exp(), unary_samples(ints=True)),
        OpInfo("torch.exp", lambda lib, x: lib.exp(x), unary_samples()),
        OpInfo("log", lambda lib, x: x.log(), unary_samples(0.2, 3.0)),
        OpInfo("torch.log", lambda lib, x: lib.log(x), unary_samples(0.2, 3.0)),
        OpInfo("log int", lambda lib, x: lib.log(x), fixed(lambda rng: Sample((rng.integers(1, 5, (3,)),), "int"))),
        OpInfo("tanh", lambda lib, x: x.tanh(), unary_samples(ints=True)),
        OpInfo("torch.tanh", lambda lib, x: lib.tanh(x), unary_samples()),
        OpInfo("sigmoid", lambda lib, x: x.sigmoid(), unary_samples(ints=True)),
        OpInfo("torch.sigmoid", lambda lib, x: lib.sigmoid(x), unary_samples()),
        OpInfo("relu", lambda lib, x: x.relu(), unary_samples(away=True, ints=True)),
        OpInfo("torch.relu", lambda lib, x: lib.relu(x), unary_samples(away=True)),
        OpInfo("sqrt", lambda lib, x: x.sqrt(), unary_samples(0.2, 3.0)),
        OpInfo("sign", lambda lib, x: x.sign(), unary_samples(away=True, ints=True)),
        OpInfo("clamp min", lambda lib, x: x.clamp(min=-0.5), unary_samples(away=True, ints=True)),
        OpInfo("clamp max", lambda lib, x: x.clamp(max=0.5), unary_samples(away=True, ints=True)),
        OpInfo("clamp both", lambda lib, x: x.clamp(-0.5, 0.5), unary_samples(away=True, ints=True)),
        OpInfo("clamp int bounds", lambda lib, x: lib.clamp(x, -1, 1), unary_samples(away=True, ints=True)),
        OpInfo("clamp float bounds on int", lambda lib, x: lib.clamp(x, -0.5, 1.5),
               fixed(lambda rng: Sample((_ints(rng, (2, 3)),), "int64"))),
        OpInfo("clamp min > max", lambda lib, x: lib.clamp(x, 0.5, -0.5), unary_samples(away=True)),
        OpInfo("clip", lambda lib, x: lib.clip(x, max=0.3), unary_samples(away=True)),
        OpInfo("clamp_min", lambda lib, x: x.clamp_min(0.2), unary_samples(away=True)),
        OpInfo("clamp_max", lambda lib, x: x.clamp_max(0.2), unary_samples(away=True)),
        # tensor bounds: gradients reach the bounds (ties, min > max and broadcasting included)
        OpInfo("clamp tensor bounds", lambda lib, x, lo, hi: lib.clamp(x, lo, hi), _clamp_tensor_samples(3)),
        OpInfo("clamp tensor min", lambda lib, x, lo: x.clamp(min=lo), _clamp_tensor_samples(2)),
        OpInfo("clamp tensor max", lambda lib, x, hi: lib.clamp(x, max=hi), _clamp_tensor_samples(2)),
        OpInfo("clamp_min tensor", lambda lib, x, lo: lib.clamp_min(x, lo), _clamp_tensor_samples(2)),
        OpInfo("clamp_max tensor", lambda lib, x, hi: x.clamp_max(hi), _clamp_tensor_samples(2)),
        OpInfo("clamp tensor bounds on int", lambda lib, x, lo: lib.clamp(x, min=lo),
               fixed(lambda rng: Sample((_ints(rng, (2, 3)), _r(rng, (3,))), "int self, float min"),
                     lambda rng: Sample((_ints(rng, (2, 3)), _ints(rng, (3,))), "int64"))),
    ]


def _clamp_tensor_samples(n: int):
    """x with ties at the bounds, bounds crossing (min > max) and broadcast bound shapes."""
    x = np.array([-2, -1, 0, 0.5, 1, 2, 3, 0.2], F64)
    bounds = (np.array([-1, -1, 0, 1, 0, 2.5, 1, 0.5], F64), np.array([1, -2, 0, 2, 0.5, 2, 4, -1], F64))
    return fixed(lambda rng: Sample((x,) + bounds[:n - 1], "ties and crossing"),
                 lambda rng: Sample((_r(rng, (2, 3)), _r(rng, (3,)), _r(rng, (2, 1)))[:n], "broadcast"),
                 lambda rng: Sample((_r(rng, (2, 3)),) + tuple(_r(rng, ()) for _ in range(n - 1)), "0-d bounds"))


def _shape_entries():
    cat_samples = fixed(
        lambda rng: Sample((_r(rng, (2, 3)), _r(rng, (4, 3)), _r(rng, (1, 3))), "dim0"),
        lambda rng: Sample((_r(rng, (2, 3)), _r(rng, (0, 3))), "with empty"),
        lambda rng: Sample((_r(rng, (2, 3)), _r(rng, (1, 3), F64)), "mixed dtypes"),
        lambda rng: Sample((_r(rng, (2, 3)), _ints(rng, (2, 3))), "float+int"),
        lambda rng: Sample(nc_arrays(_r(rng, (2, 3)), _r(rng, (2, 3))), "non-contig", nc=True),
    )
    stack_samples = fixed(
        lambda rng: Sample((_r(rng, (2, 3)), _r(rng, (2, 3)), _r(rng, (2, 3))), "3 tensors"),
        lambda rng: Sample((_r(rng, ()), _r(rng, ())), "0-d"),
        lambda rng: Sample((_r(rng, (0, 3)), _r(rng, (0, 3))), "empty"),
        lambda rng: Sample((_r(rng, (2, 3)), _r(rng, (2, 3), F64)), "mixed dtypes"),
        lambda rng: Sample(nc_arrays(_r(rng, (2, 3)), _r(rng, (2, 3))), "non-contig", nc=True),
    )
    where_samples = fixed(
        lambda rng: Sample((_cond(rng, (3, 4)), _r(rng, (3, 4)), _r(rng, (3, 4))), "same shapes"),
        lambda rng: Sample((_cond(rng, (3, 1)), _r(rng, (4,)), _r(rng, (2, 1, 1))), "broadcast"),
        lambda rng: Sample((_cond(rng, ()), _r(rng, (2,)), _r(rng, ())), "0-d"),
        lambda rng: Sample((_cond(rng, (2, 3)), _r(rng, (2, 3)), _r(rng, (2, 3), F64)), "mixed dtypes"),
        lambda rng: Sample((_cond(rng, (2, 3)), _r(rng, (2, 3)), _ints(rng, (2, 3))), "float+int"),
        lambda rng: Sample((_cond(rng, (0, 3)), _r(rng, (0, 3)), _r(rng, (1, 3))), "empty"),
    )
    return [
        OpInfo("reshape", lambda lib, x: x.reshape(4, 3),
               fixed(s((3, 4)), s((12,)), snc((3, 4)), s((2, 6), dtype=F64))),
        OpInfo("reshape -1", lambda lib, x: x.reshape(-1), fixed(s((3, 4)), s(()), s((0, 3)), snc((3, 4)))),
        OpInfo("reshape (2,-1)", lambda lib, x: x.reshape((2, -1)), fixed(s((3, 4)), snc((4, 3)), s((2, 0)))),
        OpInfo("reshape to 0-d", lambda lib, x: x.reshape(()), fixed(s((1, 1)), s(()))),
        OpInfo("reshape non-contig split dim", lambda lib, x: x.reshape(2, 2, 3), fixed(snc((4, 3)))),
        OpInfo("torch.reshape", lambda lib, x: lib.reshape(x, (6, -1)), fixed(s((3, 4)))),
        OpInfo("view", lambda lib, x: x.view(2, 6), fixed(s((3, 4)), s((12,)), s((2, 6), dtype=F64))),
        OpInfo("view -1", lambda lib, x: x.view(-1, 2), fixed(s((3, 4)), s((0, 2)))),
        OpInfo("view tuple", lambda lib, x: x.view((4, 3)), fixed(s((3, 4)))),
        OpInfo("view of transposed (merging nothing)", lambda lib, x: x.view(4, 1, 3), fixed(snc((4, 3)))),
        OpInfo("view_as", lambda lib, x, y: x.view_as(y), fixed(s((3, 4), (2, 6))), grad=False),
        OpInfo("transpose", lambda lib, x: x.transpose(0, 1), fixed(s((3, 4)), s((2, 3, 4)), snc((3, 4)))),
        OpInfo("transpose 1-d", lambda lib, x: x.transpose(0, -1), fixed(s((5,)))),
        OpInfo("transpose neg dims", lambda lib, x: lib.transpose(x, -1, -3), fixed(s((2, 3, 4)))),
        OpInfo("transpose 0-d", lambda lib, x: x.transpose(0, -1), fixed(s(()))),
        OpInfo("swapaxes", lambda lib, x: x.swapaxes(0, 2), fixed(s((2, 3, 4)))),
        OpInfo("permute", lambda lib, x: x.permute(2, 0, 1), fixed(s((2, 3, 4)), s((2, 0, 4)), snc((2, 4, 3)))),
        OpInfo("permute tuple neg", lambda lib, x: lib.permute(x, (-1, 0)), fixed(s((3, 4)))),
        OpInfo("permute 0-d", lambda lib, x: x.permute(()), fixed(s(()))),
        OpInfo("expand", lambda lib, x: x.expand(2, 3, 4), fixed(s((3, 1)), s((1,)), s(()), s((2, 3, 4)))),
        OpInfo("expand -1", lambda lib, x: x.expand(5, -1, 4), fixed(s((3, 1)), s((3, 4)))),
        OpInfo("expand non-contig", lambda lib, x: x.expand(2, 4, 3), fixed(snc((4, 3)))),
        OpInfo("expand_as", lambda lib, x, y: x.expand_as(y), fixed(s((3, 1), (2, 3, 4))), grad=False),
        OpInfo("squeeze", lambda lib, x: x.squeeze(), fixed(s((1, 3, 1, 4)), s((1,)), s(()), s((2, 3)))),
        OpInfo("squeeze dim", lambda lib, x: x.squeeze(-2), fixed(s((1, 3, 1, 4)), s((3, 4)))),
        OpInfo("squeeze dims", lambda lib, x: lib.squeeze(x, (0, 2)), fixed(s((1, 3, 1, 4)), s((1, 3, 2, 4)))),
        OpInfo("squeeze 0-d dim", lambda lib, x: x.squeeze(0), fixed(s(()))),
        OpInfo("unsqueeze", lambda lib, x: x.unsqueeze(1), fixed(s((3, 4)), s((3,)), snc((3, 4)))),
        OpInfo("unsqueeze -1", lambda lib, x: lib.unsqueeze(x, -1), fixed(s((3, 4)), s(()))),
        OpInfo("flatten", lambda lib, x: x.flatten(), fixed(s((2, 3, 4)), s(()), s((5,)), snc((3, 4)))),
        OpInfo("flatten 1", lambda lib, x: lib.flatten(x, 1), fixed(s((2, 3, 4)), snc((3, 4)), s((2, 0, 3)))),
        OpInfo("flatten 0..1", lambda lib, x: x.flatten(0, 1), fixed(s((2, 3, 4)))),
        OpInfo("flatten single dim", lambda lib, x: x.flatten(1, 1), fixed(s((2, 3, 4)))),
        OpInfo("cat", lambda lib, *xs: lib.cat(xs), cat_samples),
        OpInfo("cat dim=1", lambda lib, *xs: lib.cat(list(xs), dim=1),
               fixed(s((2, 3), (2, 1), (2, 4)), s((2, 3, 4), (2, 1, 4)), snc((3, 2), (3, 2)))),
        OpInfo("cat dim=-1", lambda lib, *xs: lib.cat(xs, -1), fixed(s((2, 3), (2, 5)))),
        OpInfo("cat legacy empty", lambda lib, *xs: lib.cat(xs, 1), fixed(s((2, 3), (0,)))),
        OpInfo("concat", lambda lib, *xs: lib.concat(xs), fixed(s((2, 3), (1, 3)))),
        OpInfo("stack", lambda lib, *xs: lib.stack(xs), stack_samples),
        OpInfo("stack dim=1", lambda lib, *xs: lib.stack(xs, 1), fixed(s((2, 3), (2, 3)), snc((2, 3), (2, 3)))),
        OpInfo("stack dim=-1", lambda lib, *xs: lib.stack(list(xs), dim=-1), fixed(s((2, 3), (2, 3)))),
        OpInfo("where", lambda lib, c, x, y: lib.where(c, x, y), where_samples),
        OpInfo("where method", lambda lib, c, x, y: x.where(c, y), where_samples),
        OpInfo("where scalar other", lambda lib, c, x: lib.where(c, x, 0.0),
               fixed(lambda rng: Sample((_cond(rng, (3, 4)), _r(rng, (3, 4))), "3x4"),
                     lambda rng: Sample((_cond(rng, (3, 4)), _r(rng, (4,), F64)), "f64"))),
        OpInfo("where scalar input", lambda lib, c, y: lib.where(c, 2, y),
               fixed(lambda rng: Sample((_cond(rng, (3, 4)), _r(rng, (3, 4))), "3x4"),
                     lambda rng: Sample((_cond(rng, (3, 4)), _ints(rng, (3, 4))), "int"))),
        OpInfo("clone", lambda lib, x: x.clone(), fixed(s((3, 4)), s(()), snc((3, 4)), s((0,)))),
        OpInfo("torch.clone", lambda lib, x: lib.clone(x), fixed(s((3, 4), dtype=F64))),
        OpInfo("contiguous of non-contig", lambda lib, x: x.contiguous(), fixed(snc((3, 4)))),
        OpInfo("narrow", lambda lib, x: x.narrow(1, 1, 2), fixed(s((3, 4)), snc((3, 4)), s((2, 4, 2)))),
        OpInfo("narrow neg start", lambda lib, x: lib.narrow(x, 0, -2, 2), fixed(s((3, 4)))),
        OpInfo("narrow empty", lambda lib, x: x.narrow(0, 1, 0), fixed(s((3, 4)))),
        OpInfo("split int", lambda lib, x: x.split(2), fixed(s((5, 3)), s((4, 3)), s((0, 3)), snc((5, 3)))),
        OpInfo("split sections", lambda lib, x: lib.split(x, [1, 3], dim=1), fixed(s((2, 4)), snc((2, 4)))),
        OpInfo("split dim -1", lambda lib, x: x.split(3, -1), fixed(s((2, 7)))),
        OpInfo("unbind", lambda lib, x: x.unbind(), fixed(s((3, 4)), s((2,)), snc((3, 4)))),
        OpInfo("unbind dim", lambda lib, x: lib.unbind(x, -1), fixed(s((3, 4)), s((2, 3, 2)))),
        OpInfo("select", lambda lib, x: x.select(1, -1), fixed(s((3, 4)), snc((3, 4)), s((2, 3, 4)))),
        OpInfo("to float64", lambda lib, x: x.to(lib.float64), fixed(s((3, 4)), s(()))),
        OpInfo("double", lambda lib, x: x.double() * 2, fixed(s((3, 4)))),
        OpInfo("to float16", lambda lib, x: x.half(), fixed(s((3, 4)))),
    ]


def _linalg_entries():
    return [
        OpInfo("matmul @", lambda lib, a, b: a @ b, matmul_samples),
        OpInfo("torch.matmul", lambda lib, a, b: lib.matmul(a, b), matmul_samples),
        OpInfo("Tensor.matmul", lambda lib, a, b: a.matmul(b), fixed(s((3, 4), (4,)), s((2, 3, 4), (2, 4, 5)))),
        OpInfo("mm", lambda lib, a, b: lib.mm(a, b),
               fixed(s((3, 4), (4, 5)), s((1, 1), (1, 1)), s((3, 4), (4, 5), dtype=F64), snc((3, 4), (4, 2)),
                     s((0, 4), (4, 2)), s((3, 4), (4, 5), dtype=F16))),
        OpInfo("Tensor.mm", lambda lib, a, b: a.mm(b), fixed(s((3, 4), (4, 5)))),
        OpInfo("bmm", lambda lib, a, b: lib.bmm(a, b),
               fixed(s((2, 3, 4), (2, 4, 5)), s((2, 3, 4), (2, 4, 5), dtype=F64), snc((2, 3, 4), (2, 4, 2)))),
        OpInfo("matmul float16", lambda lib, a, b: a @ b,
               fixed(s((3, 4), (4, 5), dtype=F16), s((4,), (4,), dtype=F16))),
        OpInfo("matmul int", lambda lib, a, b: a @ b,
               fixed(lambda rng: Sample((_ints(rng, (2, 3)), _ints(rng, (3, 2))), "int64"))),
        OpInfo("linear-style X@w.t()+b", lambda lib, x, w, b: x @ w.t() + b, fixed(s((10, 2), (1, 2), (1, 1)))),
        # 3-d+ input: one GEMM over all rows (NOTE [folded matmul]); torch's graph (addmm between views) when
        # the input is contiguous and has a bias, else matmul (+ add)
        OpInfo("F.linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
               fixed(s((4, 3), (5, 3), (5,)), s((2, 4, 3), (5, 3), (5,)), s((2, 3, 4, 3), (5, 3), (5,)),
                     s((2, 4, 3), (5, 3), (5,), dtype=F64), s((0, 4, 3), (5, 3), (5,)))),
        OpInfo("F.linear no bias", lambda lib, x, w: lib.nn.functional.linear(x, w),
               fixed(s((2, 4, 3), (5, 3)), s((2, 3, 4, 3), (5, 3)))),
        OpInfo("F.linear non-contiguous 3-d", lambda lib, x, w, b: lib.nn.functional.linear(x.transpose(0, 1), w, b),
               fixed(s((4, 2, 3), (5, 3), (5,)))),
    ]


# ---------------------------------------------------------------- linear algebra family (ops/linalg.py,
# ops/decompositions.py, ember.linalg)
def _wellcond(rng, shape, dtype=F32):
    """Random square matrices with a dominant diagonal (invertible, moderate condition number)."""
    n = shape[-1]
    return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)


def _spd(rng, shape, dtype=F32):
    """Symmetric positive-definite matrices."""
    x = rng.standard_normal(shape)
    return (x @ np.swapaxes(x, -1, -2) / shape[-1] + np.eye(shape[-1])).astype(dtype)


def _sym(rng, shape, dtype=F32):
    x = rng.standard_normal(shape)
    return ((x + np.swapaxes(x, -1, -2)) / 2).astype(dtype)


def _mk(gen, *shapes, dtype=F32, nc=False):
    """A maker of a sample: a ``gen``-made first operand, plain random others (optionally non-contiguous)."""
    def make(rng):
        arrays = (gen(rng, shapes[0], dtype),) + tuple(_r(rng, sh, dtype) for sh in shapes[1:])
        desc = ("nc " if nc else "") + gen.__name__ + " " + "x".join(map(str, shapes)) + f" {np.dtype(dtype).name}"
        return Sample(nc_arrays(*arrays) if nc else arrays, desc, nc=nc)
    return make


_LA_TOL = dict(rtol=2e-3, atol=1e-4)  # float32 decompositions: LAPACK paths differ in rounding


def _einsum_entries():
    cases = {  # equation: operand shapes
        "ij,jk->ik": [(3, 4), (4, 5)], "ij,jk": [(3, 4), (4, 2)], "ii->i": [(4, 4)], "ii": [(3, 3)],
        "i,i": [(5,), (5,)], "i,j->ij": [(3,), (4,)], "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)],
        "...ij,...jk": [(2, 1, 3, 4), (5, 4, 2)], "ij->": [(3, 4)], "iji->j": [(3, 4, 3)], "ij->ji": [(3, 4)],
        "ij,jk,kl->il": [(2, 3), (3, 4), (4, 2)], "...i,...i->...": [(2, 1, 3), (4, 3)], "bii->bi": [(2, 3, 3)],
        "ij,ij->ij": [(3, 1), (3, 4)], "i...->...": [(3, 2, 2)], "ab,cd->": [(2, 3), (4, 1)],
        " i j , j k -> i k ": [(2, 3), (3, 2)], "ijk,kji->ik": [(2, 3, 4), (4, 3, 2)],
    }
    out = [OpInfo(f"einsum {eq!r}", (lambda e: lambda lib, *xs: lib.einsum(e, *xs))(eq), fixed(s(*shapes)),
                  check_grad_fn=False) for eq, shapes in cases.items()]
    out.append(OpInfo("einsum list operands f64", lambda lib, a, b: lib.einsum("ij,jk", [a, b]),
                      fixed(s((3, 4), (4, 2), dtype=F64), snc((3, 4), (4, 2))), check_grad_fn=False))
    out.append(OpInfo("einsum one-sided grad", lambda lib, a, b: lib.einsum("ij,j->i", a, b.detach()),
                      fixed(s((3, 4), (4,))), check_grad_fn=False))
    return out


def _products():
    ba = dict(beta=0.5, alpha=-2.0)
    return [
        OpInfo("mv", lambda lib, a, v: lib.mv(a, v), fixed(s((3, 4), (4,)), s((3, 4), (4,), dtype=F64),
                                                          snc((3, 4), (4,)), s((0, 4), (4,)))),
        OpInfo("Tensor.mv", lambda lib, a, v: a.mv(v), fixed(s((2, 3), (3,)))),
        OpInfo("dot", lambda lib, a, b: lib.dot(a, b), fixed(s((5,), (5,)), s((5,), (5,), dtype=F64), s((0,), (0,)))),
        OpInfo("Tensor.dot", lambda lib, a, b: a.dot(b), fixed(s((3,), (3,)))),
        OpInfo("vdot", lambda lib, a, b: lib.vdot(a, b), fixed(s((5,), (5,)), s((4,), (4,), dtype=F64))),
        OpInfo("outer", lambda lib, a, b: lib.outer(a, b), fixed(s((3,), (4,)), s((3,), (2,), dtype=F64))),
        OpInfo("ger", lambda lib, a, b: lib.ger(a, b), fixed(s((3,), (4,)))),
        OpInfo("inner", lambda lib, a, b: lib.inner(a, b), fixed(s((2, 3), (4, 3)), s((3,), (3,)), s((), (2, 3))),
               check_grad_fn=False),
        OpInfo("addmm", lambda lib, c, a, b: lib.addmm(c, a, b),
               fixed(s((3, 5), (3, 4), (4, 5)), s((5,), (3, 4), (4, 5)), s((3, 1), (3, 4), (4, 5), dtype=F64),
                     snc((3, 5), (3, 4), (4, 5)), s((), (2, 4), (4, 3)))),
        OpInfo("addmm beta alpha", lambda lib, c, a, b: lib.addmm(c, a, b, **ba), fixed(s((3, 5), (3, 4), (4, 5)))),
        OpInfo("addmm beta=0", lambda lib, c, a, b: lib.addmm(c * float("nan"), a, b, beta=0),
               fixed(s((3, 5), (3, 4), (4, 5)))),
        OpInfo("Tensor.addmm", lambda lib, c, a, b: c.addmm(a, b, alpha=3), fixed(s((2, 2), (2, 3), (3, 2)))),
        OpInfo("addmv", lambda lib, c, a, v: lib.addmv(c, a, v, **ba),
               fixed(s((3,), (3, 4), (4,)), s((), (3, 4), (4,), dtype=F64), snc((3,), (3, 4), (4,)))),
        OpInfo("addr", lambda lib, c, u, v: lib.addr(c, u, v, **ba), fixed(s((3, 4), (3,), (4,)), s((4,), (3,), (4,)))),
        OpInfo("baddbmm", lambda lib, c, a, b: lib.baddbmm(c, a, b, **ba),
               fixed(s((2, 3, 5), (2, 3, 4), (2, 4, 5)), s((3, 5), (2, 3, 4), (2, 4, 5), dtype=F64),
                     snc((2, 3, 5), (2, 3, 4), (2, 4, 5)))),
        OpInfo("addbmm", lambda lib, c, a, b: lib.addbmm(c, a, b, **ba),
               fixed(s((3, 5), (2, 3, 4), (2, 4, 5)), s((5,), (2, 3, 4), (2, 4, 5), dtype=F64))),
        OpInfo("tensordot 2", lambda lib, a, b: lib.tensordot(a, b), fixed(s((2, 3, 4), (3, 4, 5))),
               check_grad_fn=False),
        OpInfo("tensordot 1", lambda lib, a, b: lib.tensordot(a, b, 1), fixed(s((2, 3), (3, 4))), check_grad_fn=False),
        OpInfo("tensordot 0", lambda lib, a, b: lib.tensordot(a, b, 0), fixed(s((2,), (3,))), check_grad_fn=False),
        OpInfo("tensordot lists", lambda lib, a, b: lib.tensordot(a, b, dims=([1, 0], [0, 2])),
               fixed(s((3, 4, 5), (4, 2, 3)), s((3, 4, 2), (4, 5, 3), dtype=F64)), check_grad_fn=False),
        OpInfo("kron", lambda lib, a, b: lib.kron(a, b),
               fixed(s((2, 3), (3, 2)), s((2,), (3, 2, 2)), s((2, 2), (2, 2), dtype=F64)), check_grad_fn=False),
        OpInfo("linalg.cross", lambda lib, a, b: lib.linalg.cross(a, b),
               fixed(s((4, 3), (4, 3)), s((1, 3), (4, 3)), s((2, 3), (2, 3), dtype=F64))),
        OpInfo("cross dim", lambda lib, a, b: lib.cross(a, b, dim=0), fixed(s((3, 4), (3, 4)))),
        OpInfo("linalg.vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b), fixed(s((2, 3), (3,))), check_grad_fn=False),
    ]


def _decomposition_entries():
    W, P, S = _wellcond, _spd, _sym
    T = _LA_TOL
    sq = fixed(_mk(W, (3, 3)), _mk(W, (2, 4, 4)), _mk(W, (3, 3), dtype=F64), _mk(W, (2, 1, 3, 3), dtype=F64),
               _mk(W, (3, 3), nc=True), _mk(W, (1, 1)))
    spd = fixed(_mk(P, (3, 3)), _mk(P, (2, 4, 4)), _mk(P, (3, 3), dtype=F64), _mk(P, (2, 3, 3), dtype=F64, nc=True))
    sym = fixed(_mk(S, (3, 3), dtype=F64), _mk(S, (2, 4, 4), dtype=F64), _mk(S, (3, 3)))
    tall = (_mk(_r, (4, 3)), _mk(_r, (3, 3), dtype=F64), _mk(_r, (2, 5, 3), dtype=F64), _mk(_r, (4, 3), nc=True))
    wide = (_mk(_r, (3, 5), dtype=F64), _mk(_r, (2, 2, 4), dtype=F64), _mk(_r, (3, 4)))
    out = [
        OpInfo("linalg.inv", lambda lib, a: lib.linalg.inv(a), sq, **T),
        OpInfo("inverse", lambda lib, a: lib.inverse(a), fixed(_mk(W, (3, 3)))),
        OpInfo("Tensor.inverse", lambda lib, a: a.inverse(), fixed(_mk(W, (3, 3), dtype=F64))),
        OpInfo("linalg.det", lambda lib, a: lib.linalg.det(a), sq, **T),
        OpInfo("det", lambda lib, a: lib.det(a), fixed(_mk(_r, (3, 3), dtype=F64))),
        OpInfo("Tensor.det", lambda lib, a: a.det(), fixed(_mk(_r, (2, 2, 2), dtype=F64))),
        OpInfo("linalg.slogdet", lambda lib, a: tuple(lib.linalg.slogdet(a)), sq, **T),
        OpInfo("slogdet negative det", lambda lib, a: lib.slogdet(-a), fixed(_mk(W, (3, 3), dtype=F64))),
        OpInfo("logdet", lambda lib, a: lib.logdet(a), spd, check_grad_fn=False, **T),
        OpInfo("Tensor.logdet", lambda lib, a: a.logdet(), fixed(_mk(P, (3, 3), dtype=F64))),
        OpInfo("linalg.solve matrix B", lambda lib, a, b: lib.linalg.solve(a, b),
               fixed(_mk(W, (3, 3), (3, 2)), _mk(W, (2, 3, 3), (3, 4), dtype=F64), _mk(W, (3, 3), (2, 3, 2)),
                     _mk(W, (2, 1, 3, 3), (4, 3, 1), dtype=F64), _mk(W, (3, 3), (3, 2), nc=True)), **T),
        OpInfo("linalg.solve vector B", lambda lib, a, b: lib.linalg.solve(a, b),
               fixed(_mk(W, (3, 3), (3,)), _mk(W, (2, 3, 3), (3,), dtype=F64),
                     _mk(W, (2, 3, 3), (2, 3), dtype=F64)), **T),
        OpInfo("linalg.solve left=False", lambda lib, a, b: lib.linalg.solve(a, b, left=False),
               fixed(_mk(W, (3, 3), (2, 3), dtype=F64))),
        OpInfo("linalg.cholesky", lambda lib, a: lib.linalg.cholesky(a), spd, **T),
        OpInfo("linalg.cholesky upper", lambda lib, a: lib.linalg.cholesky(a, upper=True),
               fixed(_mk(P, (3, 3), dtype=F64), _mk(P, (2, 3, 3)))),
        OpInfo("cholesky (deprecated)", lambda lib, a: _quiet(lambda: lib.cholesky(a)), fixed(_mk(P, (3, 3), dtype=F64))),
        OpInfo("linalg.qr reduced", lambda lib, a: tuple(lib.linalg.qr(a)), fixed(*tall, *wide),
               **T),
        OpInfo("linalg.qr complete square/wide", lambda lib, a: tuple(lib.linalg.qr(a, mode="complete")),
               fixed(_mk(_r, (3, 3), dtype=F64), _mk(_r, (2, 3, 4), dtype=F64))),
        OpInfo("linalg.qr complete tall values", lambda lib, a: tuple(lib.linalg.qr(a, mode="complete")),
               fixed(_mk(_r, (4, 2), dtype=F64)), grad=False),
        OpInfo("linalg.qr r", lambda lib, a: tuple(lib.linalg.qr(a, mode="r")), fixed(_mk(_r, (4, 3), dtype=F64)),
               grad=False),
        # torch cannot differentiate geqrf: values (LAPACK's reflectors and tau) and node name only
        OpInfo("geqrf", lambda lib, a: tuple(lib.geqrf(a)), fixed(*tall, *wide), grad=False),
        # a composition of ember ops (torch's node is LinalgHouseholderProductBackward0)
        OpInfo("linalg.householder_product", lambda lib, a, t: lib.linalg.householder_product(a, t),
               fixed(_mk(_r, (4, 3), (3,), dtype=F64), _mk(_r, (2, 3, 3), (2, 2), dtype=F64), _mk(_r, (5, 3), (1,))),
               check_grad_fn=False),
        # eigenvectors and singular vectors are fixed only up to sign: compare |V| (a sign-invariant loss)
        OpInfo("linalg.eigh", lambda lib, a: _eigh_inv(lib.linalg.eigh(a)), sym, check_grad_fn=False, **T),
        OpInfo("linalg.eigh UPLO=U", lambda lib, a: _eigh_inv(lib.linalg.eigh(a, UPLO="U")),
               fixed(_mk(S, (3, 3), dtype=F64)), check_grad_fn=False),
        OpInfo("linalg.eigh grad_fn", lambda lib, a: lib.linalg.eigh(a)[0], fixed(_mk(S, (3, 3), dtype=F64))),
        OpInfo("linalg.eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a), sym, **T),
        OpInfo("linalg.eigvalsh UPLO=U", lambda lib, a: lib.linalg.eigvalsh(a, UPLO="U"),
               fixed(_mk(_r, (3, 3), dtype=F64)), grad=False),
        # eig: eigenvalues in LAPACK's order (torch's for double and complex input; its float32 runs can order and
        # sign differently, so those samples see order- and gauge-invariant functions), eigenvectors up to a phase
        OpInfo("linalg.eig", lambda lib, a: _eig_inv(lib.linalg.eig(a)),
               fixed(_mk(_r, (3, 3), dtype=F64), _mk(_r, (2, 4, 4), dtype=F64), _mk(_r, (1, 1), dtype=F64),
                     _mk(_r, (3, 3), dtype=F64, nc=True)), check_grad_fn=False, **T),
        OpInfo("linalg.eig grad_fn", lambda lib, a: lib.linalg.eig(a)[0], fixed(_mk(_r, (3, 3), dtype=F64))),
        OpInfo("linalg.eigvals", lambda lib, a: lib.linalg.eigvals(a),
               fixed(_mk(_r, (3, 3), dtype=F64), _mk(_r, (2, 3, 3), dtype=F64)), **T),
        OpInfo("linalg.eig float32 invariants", lambda lib, a: _eig_symmetric(lib.linalg.eig(a)),
               fixed(_mk(W, (3, 3)), _mk(_r, (2, 4, 4))), check_grad_fn=False, **T),
        OpInfo("linalg.svd", lambda lib, a: _svd_inv(lib.linalg.svd(a, full_matrices=False)),
               fixed(*tall, *wide), check_grad_fn=False, **T),
        OpInfo("linalg.svd full_matrices", lambda lib, a: _svd_inv(lib.linalg.svd(a), k=True),
               fixed(_mk(_r, (4, 3), dtype=F64), _mk(_r, (3, 3), dtype=F64), _mk(_r, (2, 5), dtype=F64)),
               check_grad_fn=False),
        OpInfo("linalg.svd grad_fn", lambda lib, a: lib.linalg.svd(a)[1], fixed(_mk(_r, (3, 3), dtype=F64))),
        OpInfo("linalg.svdvals", lambda lib, a: lib.linalg.svdvals(a), fixed(*tall), **T),
        OpInfo("svd (torch.svd)", lambda lib, a: _svd_inv(_u_s_vh(lib.svd(a)), k=True),
               fixed(_mk(_r, (4, 3), dtype=F64)), check_grad_fn=False),
        OpInfo("linalg.pinv", lambda lib, a: lib.linalg.pinv(a),
               fixed(_mk(_r, (4, 3), dtype=F64), _mk(_r, (2, 3, 5), dtype=F64), _mk(W, (3, 3))), check_grad_fn=False,
               **T),
        OpInfo("linalg.pinv hermitian", lambda lib, a: lib.linalg.pinv(a, hermitian=True),
               fixed(_mk(_r, (4, 4), dtype=F64), _mk(_r, (2, 3, 3), dtype=F64)), **T),
        OpInfo("pinverse", lambda lib, a: (lib.pinverse(a), a.pinverse()), fixed(_mk(_r, (4, 3), dtype=F64)),
               check_grad_fn=False),
        OpInfo("linalg.matrix_power", lambda lib, a: lib.linalg.matrix_power(a, 3),
               fixed(_mk(W, (3, 3)), _mk(_r, (2, 3, 3), dtype=F64)), **T),
        OpInfo("matrix_power 1/2/-2", lambda lib, a: (lib.matrix_power(a, 1) * 1, a.matrix_power(2),
                                                     lib.linalg.matrix_power(a, -2)),
               fixed(_mk(W, (3, 3), dtype=F64)), check_grad_fn=False),
        OpInfo("matrix_power 0", lambda lib, a: lib.linalg.matrix_power(a, 0), fixed(_mk(W, (2, 3, 3), dtype=F64)),
               check_grad_fn=False),
        OpInfo("linalg.multi_dot", lambda lib, *ms: lib.linalg.multi_dot(ms),
               fixed(s((2, 3), (3, 4), (4, 5)), s((3,), (3, 4), (4,), dtype=F64), s((3, 4), (4,)),
                     s((2, 3), (3, 4), (4, 2), (2, 5), dtype=F64)), check_grad_fn=False),
    ]
    for ord_ in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        out.append(OpInfo(f"linalg.matrix_norm {ord_}", (lambda o: lambda lib, a: lib.linalg.matrix_norm(a, o))(ord_),
                          fixed(_mk(_r, (3, 4), dtype=F64), _mk(_r, (2, 3, 3)), _mk(_r, (4, 3), nc=True)), **T))
    out += [
        OpInfo("linalg.matrix_norm dim keepdim", lambda lib, a: (lib.linalg.matrix_norm(a, 2, dim=(0, 2), keepdim=True),
                                                                 lib.linalg.matrix_norm(a, 1, dim=(2, 0))),
               fixed(_mk(_r, (3, 2, 4), dtype=F64)), check_grad_fn=False),
        OpInfo("linalg.norm default", lambda lib, a: lib.linalg.norm(a), fixed(s((3, 4)), s((2, 3, 4), dtype=F64))),
        OpInfo("linalg.norm ord", lambda lib, a, v: (lib.linalg.norm(a, 2), lib.linalg.norm(v, 3),
                                                     lib.linalg.norm(a, "fro"), lib.linalg.norm(a, float("inf"))),
               fixed(s((3, 4), (5,), dtype=F64)), check_grad_fn=False),
        OpInfo("linalg.norm dim", lambda lib, a: (lib.linalg.norm(a, dim=1), lib.linalg.norm(a, 1, dim=(0, 1)),
                                                  lib.linalg.norm(a, dim=(1, 2), keepdim=True)),
               fixed(s((2, 3, 4), dtype=F64)), check_grad_fn=False),
        OpInfo("linalg.vector_norm", lambda lib, a: (lib.linalg.vector_norm(a), lib.linalg.vector_norm(a, 1, dim=-1),
                                                     lib.linalg.vector_norm(a, float("inf"), dim=(0, 1), keepdim=True),
                                                     lib.linalg.vector_norm(a, 3.5)),
               fixed(s((2, 3, 4), dtype=F64), s((2, 3)))),
    ]
    return out


def _quiet(fn):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _eigh_inv(res):
    w, v = res
    return w, v.abs(), (v * w.unsqueeze(-2)) @ v.mT


def _eig_inv(res):
    w, v = res
    return w, v.abs(), (v * w.unsqueeze(-2)) @ v.inverse()


def _eig_symmetric(res):
    """Functions of eig's results that depend on neither the eigenvalues' order nor the eigenvectors' phases."""
    w, v = res
    return w.sum(-1), (w * w).sum(-1), (v.abs() ** 2 * w.unsqueeze(-2)).sum(-1), (v * w.unsqueeze(-2)) @ v.inverse()


def _u_s_vh(res):
    u, s_, v = res
    return u, s_, v.mT


def _svd_inv(res, k=False):
    u, s_, vh = res
    n = s_.shape[-1]
    if k:
        u, vh = u[..., :n], vh[..., :n, :]
    return s_, u.abs(), vh.abs(), (u * s_.unsqueeze(-2)) @ vh


def _linalg_family_entries():
    return [*_products(), *_einsum_entries(), *_decomposition_entries()]



def _nn_entries():
    """The primitives of ember/ops/nn_ops.py, through torch.nn.functional."""
    def fn(name, *args, **kwargs):
        return lambda lib, x: getattr(lib.nn.functional, name)(x, *args, **kwargs)

    away = unary_samples(away=True)
    acts = {
        "F.elu": fn("elu", 0.8), "F.selu": fn("selu"), "F.celu": fn("celu", 1.3), "F.leaky_relu": fn("leaky_relu", 0.2),
        "F.hardtanh": fn("hardtanh", -0.7, 0.9), "F.relu6": lambda lib, x: lib.nn.functional.relu6(x * 4),
        "F.hardswish": lambda lib, x: lib.nn.functional.hardswish(x * 2), "F.softplus": fn("softplus"),
        "F.softplus beta": fn("softplus", 2.0, 1.0), "F.gelu": fn("gelu"),
        "F.gelu tanh": fn("gelu", approximate="tanh"),
        "F.silu": fn("silu"), "F.mish": fn("mish"), "F.threshold": fn("threshold", 0.3, -1.5),
        "F.softmax": fn("softmax", -1), "F.softmax dim0": fn("softmax", 0), "F.log_softmax": fn("log_softmax", -1),
        "F.softmin": fn("softmin", -1),
    }
    out = [OpInfo(n, f, away, atol=1e-4 if "soft" in n else None) for n, f in acts.items()]
    out.append(OpInfo("F.hardsigmoid", lambda lib, x: lib.nn.functional.hardsigmoid(x * 2), away, gradgrad=False))

    def emb(rng):
        yield Sample((_r(rng, (5, 3)), rng.integers(0, 5, (4,))), "1-d idx")
        yield Sample((_r(rng, (6, 2), F64), rng.integers(0, 6, (2, 3))), "2-d idx float64")
        yield Sample((_r(rng, (4, 3)), np.array([1, 1, 2, 1])), "repeated")

    out.append(OpInfo("F.embedding", lambda lib, w, i: lib.nn.functional.embedding(i, w), emb))
    out.append(OpInfo("F.embedding padding_idx", lambda lib, w, i: lib.nn.functional.embedding(i, w, padding_idx=1),
                      emb))

    def nll(rng):
        yield Sample((_r(rng, (4, 3)), rng.integers(0, 3, (4,))), "N,C")
        yield Sample((_r(rng, (3,), F64), np.array(2)), "C")
        yield Sample((_r(rng, (2, 3, 4, 2)), rng.integers(0, 3, (2, 4, 2))), "N,C,d1,d2")

    for red in ("mean", "sum", "none"):
        out.append(OpInfo(f"F.mse_loss {red}", lambda lib, x, t, r=red: lib.nn.functional.mse_loss(x, t, reduction=r),
                          fixed(s((3, 4), (3, 4)), s((5,), (5,), dtype=F64), s((), ()), s((0, 2), (0, 2)),
                                snc((3, 4), (3, 4)))))
        out.append(OpInfo(f"F.nll_loss {red}", lambda lib, x, t, r=red: lib.nn.functional.nll_loss(x, t, reduction=r),
                          nll))
        pairs = fixed(s((3, 4), (3, 4)), s((5,), (5,), dtype=F64), s((), ()), snc((3, 4), (3, 4)))
        # probabilities strictly inside (0, 1); weight and pos_weight cannot require grad (torch's error)
        out.append(OpInfo(f"F.binary_cross_entropy {red}", lambda lib, x, t, r=red: lib.nn.functional
                          .binary_cross_entropy(x.sigmoid(), t.sigmoid(), reduction=r), pairs))
        out.append(OpInfo(f"F.binary_cross_entropy weight {red}", lambda lib, x, t, w, r=red: lib.nn.functional
                          .binary_cross_entropy(x.sigmoid(), t.sigmoid(), w.detach().abs(), reduction=r),
                          fixed(s((3, 4), (3, 4), (4,)), s((5,), (5,), (5,), dtype=F64))))
        out.append(OpInfo(f"F.binary_cross_entropy_with_logits {red}", lambda lib, x, t, r=red: lib.nn.functional
                          .binary_cross_entropy_with_logits(x * 3, t.sigmoid(), reduction=r), pairs))
        out.append(OpInfo(f"F.binary_cross_entropy_with_logits weights {red}", lambda lib, x, t, w, p, r=red:
                          lib.nn.functional.binary_cross_entropy_with_logits(
                              x * 3, t.sigmoid(), w.detach().abs(), pos_weight=p.detach().abs() + 0.5, reduction=r),
                          fixed(s((3, 4), (3, 4), (3, 4), (4,)), s((5,), (5,), (), (5,), dtype=F64))))
        for beta in (1.0, 0.5):
            out.append(OpInfo(f"F.smooth_l1_loss beta={beta} {red}", lambda lib, x, t, r=red, b=beta: lib.nn.functional
                              .smooth_l1_loss(x * 2, t, reduction=r, beta=b), pairs))
            out.append(OpInfo(f"F.huber_loss delta={beta / 2} {red}", lambda lib, x, t, r=red, b=beta / 2:
                              lib.nn.functional.huber_loss(x * 2, t, reduction=r, delta=b), pairs))

    def lrn(rng):
        yield Sample((_r(rng, (2, 5, 3, 2)),), "N,C,H,W")
        yield Sample((_r(rng, (1, 3, 2, 2), F64),), "float64")
        yield Sample(nc_arrays(_r(rng, (2, 4, 3, 2))), "non-contiguous", nc=True)

    # torch's legacy Function: its backward is not differentiable (nor the forward's derivative)
    for size in (3, 4):
        out.append(OpInfo(f"nn.CrossMapLRN2d size={size}", lambda lib, x, n=size: lib.nn.CrossMapLRN2d(n, 0.5, 0.75,
                                                                                                     1.5)(x),
                          lrn, gradgrad=False))
    return out

def _comparison_entries():
    out = []
    cmps = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}
    for name, dunder in cmps.items():
        out.append(OpInfo(f"{name} tensor", (lambda d: lambda lib, a, b: getattr(a, d)(b))(dunder),
                          binary_samples(), grad=False))
        out.append(OpInfo(f"torch.{name} scalar", (lambda n: lambda lib, a: getattr(lib, n)(a, 0.5))(name),
                          unary_samples(ints=True), grad=False))
    out.append(OpInfo("eq int with int", lambda lib, a: a == 1, fixed(lambda rng: Sample((_ints(rng, (5,)),), "int"))))
    bools = fixed(lambda rng: Sample((_cond(rng, (3, 4)), _cond(rng, (4,))), "bool"),
                  lambda rng: Sample((_ints(rng, (3, 4)), _ints(rng, (4,))), "int"))
    for name in ("logical_and", "logical_or", "logical_xor"):
        out.append(OpInfo(name, (lambda n: lambda lib, a, b: getattr(lib, n)(a, b))(name), bools, grad=False))
    out.append(OpInfo("logical_not", lambda lib, a: lib.logical_not(a), unary_samples(ints=True), grad=False))
    out.append(OpInfo("&", lambda lib, a, b: a & b, bools, grad=False))
    out.append(OpInfo("|", lambda lib, a, b: a | b, bools, grad=False))
    out.append(OpInfo("^", lambda lib, a, b: a ^ b, bools, grad=False))
    out.append(OpInfo("~", lambda lib, a: ~a, fixed(lambda rng: Sample((_cond(rng, (3,)),), "bool"),
                                                     lambda rng: Sample((_ints(rng, (3,)),), "int")), grad=False))
    return out


def _inplace_entries():
    """Graph nodes that in-place writes create (CopySlices, AsStrided): exercised, not declared here."""
    return [
        OpInfo("setitem slice", lambda lib, x, v: _set(x.clone(), (slice(1, 3),), v), fixed(s((4, 3), (2, 3)))),
        OpInfo("setitem scalar", lambda lib, x: _set(x * 1, (0, 1), 5.0), fixed(s((4, 3)))),
        OpInfo("inplace on view", lambda lib, x: _mul_view(x.clone()), fixed(s((4, 3))), check_grad_fn=False),
        OpInfo("copy_", lambda lib, x, v: (x * 1).copy_(v), fixed(s((4, 3), (3,)))),
        OpInfo("fill_ scalar", lambda lib, x: (x * 1).fill_(2.5), fixed(s((4, 3)))),
        OpInfo("fill_ tensor", lambda lib, x, v: (x * 1).fill_(v), fixed(s((4, 3), ()))),
        OpInfo("zero_", lambda lib, x: (x * 1).zero_(), fixed(s((4, 3)))),
        OpInfo("setitem on view", lambda lib, x, v: _set_view(x * 1, v), fixed(s((4, 3), (3,)))),
    ]


def _random_entries():
    """Random samplers with degenerate parameters (deterministic values) so values and zero grads compare."""
    def zeros(*shapes, dtype=F32):
        return lambda rng: Sample(tuple(np.zeros(sh, dtype) for sh in shapes), "zeros " + "x".join(map(str, shapes)))

    def probs(shape, dtype=F32):
        return lambda rng: Sample((rng.integers(0, 2, shape).astype(dtype),), f"0/1 {shape}")

    shapes = fixed(s((3, 4)), s(()), s((0, 3)), s((2, 3), dtype=F64), snc((4, 3)))
    return [
        OpInfo("normal(Tensor mean, std=0)", lambda lib, m: lib.normal(m, 0.0), shapes, gradgrad=False),
        OpInfo("normal(mean, Tensor std=0)", lambda lib, sd: lib.normal(1.5, sd),
               fixed(zeros((3, 4)), zeros(()), zeros((2,), dtype=F64)), gradgrad=False),
        OpInfo("normal(Tensor, Tensor) broadcast", lambda lib, m, sd: lib.normal(m, sd),
               fixed(lambda rng: Sample((_r(rng, (2, 3)), np.zeros(3, F32)), "2x3, 3"),
                     lambda rng: Sample((_r(rng, (3,), F64), np.zeros((2, 1), F32)), "f64 mean, f32 std")),
               gradgrad=False),
        OpInfo("bernoulli(p in {0, 1})", lambda lib, p: lib.bernoulli(p), fixed(probs((3, 4)), probs((), F64)),
               gradgrad=False),
        OpInfo("Tensor.bernoulli(p=1)", lambda lib, x: x.bernoulli(1.0), fixed(s((3, 4))), grad=False),
        OpInfo("poisson(rate 0)", lambda lib, r: lib.poisson(r), fixed(zeros((3, 4)), zeros((2,), dtype=F64)),
               gradgrad=False),
        OpInfo("uniform_(a, a)", lambda lib, x: (x * 1).uniform_(0.5, 0.5), shapes, gradgrad=False),
        OpInfo("normal_(mean, 0)", lambda lib, x: (x * 1).normal_(-2.0, 0.0), shapes, gradgrad=False),
        OpInfo("log_normal_(0, tiny std)", lambda lib, x: (x * 1).log_normal_(0.0, 1e-30), shapes, gradgrad=False),
        OpInfo("cauchy_(median, tiny sigma)", lambda lib, x: (x * 1).cauchy_(3.0, 1e-30), shapes, gradgrad=False),
        OpInfo("exponential_(inf)", lambda lib, x: (x * 1).exponential_(float("inf")), shapes, gradgrad=False),
        OpInfo("geometric_(p ~ 1)", lambda lib, x: (x * 1).geometric_(1 - 1e-12), shapes, gradgrad=False),
        OpInfo("random_(from, to)", lambda lib, x: (x * 1).random_(4, 5), shapes, gradgrad=False),
        OpInfo("random_(to)", lambda lib, x: (x * 1).random_(1), shapes, gradgrad=False),
        OpInfo("random_() times 0", lambda lib, x: (x * 1).random_() * 0, shapes, gradgrad=False),
        OpInfo("bernoulli_(p=1)", lambda lib, x: (x * 1).bernoulli_(1.0), shapes, gradgrad=False),
        OpInfo("bernoulli_(Tensor p in {0, 1})", lambda lib, x, p: (x * 1).bernoulli_(p),
               fixed(lambda rng: Sample((_r(rng, (3, 4)), rng.integers(0, 2, (4,)).astype(F32)), "p broadcast")),
               gradgrad=False),
        # Gamma-family samplers: the samples are random, their gradient rule and the degenerate cases are not
        OpInfo("_standard_gamma times 0", lambda lib, a: lib._standard_gamma(a) * 0,
               fixed(s((3, 4), lo=0.1, hi=5.0), s((5,), dtype=F64, lo=0.01, hi=50.0)), gradgrad=False),
        OpInfo("_standard_gamma_grad", lambda lib, a, x: lib._standard_gamma_grad(a, x),
               fixed(s((3, 4), (3, 4), lo=0.2, hi=6.0), s((6,), (6,), dtype=F64, lo=0.5, hi=30.0)), grad=False,
               rtol=2e-3, atol=1e-6),
        OpInfo("_sample_dirichlet(one category)", lambda lib, a: lib._sample_dirichlet(a),
               fixed(s((3, 1), lo=0.1, hi=5.0), s((1,), dtype=F64, lo=0.1, hi=5.0)), grad=False),
        OpInfo("binomial(count, p in {0, 1})", lambda lib, n, p: lib.binomial(n.round(), p.round()),
               fixed(s((3, 4), (3, 4), lo=0.0, hi=20.0), s((2, 3), (3,), dtype=F64, lo=0.0, hi=1.0)), grad=False),
        OpInfo("Dirichlet(one category).rsample",
               lambda lib, a: lib.distributions.Dirichlet(a, validate_args=False).rsample((2,)),
               fixed(s((3, 1), lo=0.1, hi=5.0), s((1,), dtype=F64, lo=0.1, hi=5.0)), gradgrad=False,
               check_grad_fn=False),  # torch's node is its Python _DirichletBackward; ember's a softmax
    ]


def _shape_index_entries():
    """Shape ops beyond views (flip, roll, repeat, diagonals, stacking) and index ops (gather/scatter, index_*,
    masked_*, take, advanced getitem/setitem)."""
    T = lambda lib, v, on=None: lib.tensor(v, device=on.device if on is not None else None)  # noqa: E731 - index
    # constants built per library, on the device of the input ``on`` (the default device may be the CPU)
    I2 = [[0, 2, 1, 0], [2, 2, 0, 1]]  # index into a (3, 4) tensor along dim 0
    m34 = fixed(lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (3, 4))), "mask 3x4"),
                lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (4,))), "mask broadcast (4,)"),
                lambda rng: Sample((_r(rng, (3, 4), F64), _cond(rng, (3, 1))), "f64 mask (3,1)"))
    x34 = fixed(s((3, 4)), snc((3, 4)), s((3, 4), dtype=F64))
    return [
        OpInfo("unflatten", lambda lib, x: x.unflatten(1, (2, -1)), fixed(s((3, 4)), snc((3, 4)))),
        OpInfo("torch.unflatten", lambda lib, x: lib.unflatten(x, 0, (1, 3)), fixed(s((3, 4)))),
        OpInfo("movedim", lambda lib, x: x.movedim(0, -1), fixed(s((2, 3, 4)))),
        OpInfo("movedim tuple", lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), fixed(s((2, 3, 4)))),
        OpInfo("moveaxis", lambda lib, x: lib.moveaxis(x, -1, 0), fixed(s((2, 3, 4)))),
        OpInfo("broadcast_to", lambda lib, x: x.broadcast_to((2, 3, 4)), fixed(s((3, 1)), s(()), s((4,)))),
        OpInfo("torch.broadcast_to", lambda lib, x: lib.broadcast_to(x, (3, 4)), fixed(s((4,)))),
        OpInfo("broadcast_tensors", lambda lib, *xs: lib.broadcast_tensors(*xs),
               fixed(s((3, 1), (4,)), s((), (2, 3)), s((2, 3), (2, 3)))),
        OpInfo("repeat", lambda lib, x: x.repeat(2, 1, 3), fixed(s((3, 4)), s(()), s((4,)), snc((3, 4)))),
        OpInfo("repeat zero", lambda lib, x: x.repeat(0, 2), fixed(s((3, 4)))),
        OpInfo("tile", lambda lib, x: lib.tile(x, (2,)), fixed(s((3, 4)), s((4,)))),
        OpInfo("Tensor.tile more dims", lambda lib, x: x.tile((2, 1, 2)), fixed(s((3, 4)))),
        OpInfo("repeat_interleave int", lambda lib, x: x.repeat_interleave(2, dim=0), x34),
        OpInfo("repeat_interleave flat", lambda lib, x: lib.repeat_interleave(x, 3), fixed(s((3, 4)), s(()))),
        OpInfo("repeat_interleave tensor", lambda lib, x: x.repeat_interleave(T(lib, [1, 0, 2], x), dim=0), x34),
        OpInfo("repeat_interleave tensor dim -1",
               lambda lib, x: lib.repeat_interleave(x, T(lib, [1, 2, 0, 3], x), dim=-1), fixed(s((3, 4)))),
        OpInfo("repeat_interleave repeats only", lambda lib: lib.repeat_interleave(T(lib, [2, 0, 3])), fixed(s())),
        OpInfo("flip", lambda lib, x: x.flip(0), fixed(s((3, 4)), s((5,)), snc((3, 4)), s(()))),
        OpInfo("flip dims", lambda lib, x: lib.flip(x, (0, -1)), fixed(s((2, 3, 4)), s((0, 2)))),
        OpInfo("fliplr", lambda lib, x: x.fliplr(), fixed(s((3, 4)))),
        OpInfo("flipud", lambda lib, x: lib.flipud(x), fixed(s((3, 4)), s((5,)))),
        OpInfo("roll", lambda lib, x: x.roll(1, 0), x34),
        OpInfo("roll flat", lambda lib, x: lib.roll(x, -5), fixed(s((3, 4)), s((5,)))),
        OpInfo("roll dims", lambda lib, x: x.roll((1, -2), (0, 1)), fixed(s((3, 4)), s((2, 3, 4)))),
        *(OpInfo(f"rot90 k={k}", (lambda k: lambda lib, x: x.rot90(k))(k), fixed(s((3, 4)), snc((3, 4))))
          for k in (0, 1, 2, 3, -1, 5)),
        OpInfo("rot90 dims", lambda lib, x: lib.rot90(x, 1, (2, 0)), fixed(s((2, 3, 4)))),
        OpInfo("hstack", lambda lib, *xs: lib.hstack(xs), fixed(s((3, 4), (3, 2)), s((3,), (2,)), s((), (2,)))),
        OpInfo("vstack", lambda lib, *xs: lib.vstack(xs), fixed(s((3, 4), (4,)), s((3,), (3,)))),
        OpInfo("dstack", lambda lib, *xs: lib.dstack(xs), fixed(s((3, 4), (3, 4)), s((3,), (3,)),
                                                              s((2, 3, 1), (2, 3)))),
        OpInfo("column_stack", lambda lib, *xs: lib.column_stack(xs), fixed(s((3,), (3,)), s((3, 2), (3,)))),
        OpInfo("chunk", lambda lib, x: x.chunk(2, 1), fixed(s((3, 4)), s((3, 5)), snc((3, 4)))),
        OpInfo("chunk uneven", lambda lib, x: lib.chunk(x, 3, 0), fixed(s((4, 2)), s((2, 2)), s((7, 2)))),
        OpInfo("tensor_split sections", lambda lib, x: x.tensor_split(3, 1), fixed(s((2, 7)), s((2, 2)))),
        OpInfo("tensor_split indices", lambda lib, x: lib.tensor_split(x, [1, 4, 2, 9], dim=1), fixed(s((2, 7)))),
        OpInfo("hsplit", lambda lib, x: lib.hsplit(x, 2), fixed(s((3, 4)), s((6,)))),
        OpInfo("vsplit", lambda lib, x: x.vsplit([1]), fixed(s((3, 4)))),
        *(OpInfo(f"{f} k={k}", (lambda f, k: lambda lib, x: getattr(x, f)(k))(f, k),
                 fixed(s((3, 4)), s((2, 4, 3)), snc((3, 4)), s((0, 3))))
          for f in ("tril", "triu") for k in (0, 1, -2)),
        OpInfo("torch.tril diagonal=", lambda lib, x: lib.tril(x, diagonal=-1), fixed(s((4, 4)))),
        OpInfo("tril_", lambda lib, x: (x * 1).tril_(), fixed(s((3, 4)))),
        OpInfo("triu_", lambda lib, x: (x * 1).triu_(1), fixed(s((3, 4)))),
        *(OpInfo(f"diagonal {args}", (lambda a: lambda lib, x: x.diagonal(*a))(args),
                 fixed(s((3, 4)), s((2, 3, 4)), snc((4, 3)), s((3, 4), dtype=F64)))
          for args in ((), (1,), (-1,), (5,), (0, 1, 0), (1, -1, 0))),
        OpInfo("diagonal 3-d dims", lambda lib, x: lib.diagonal(x, 1, 0, 2), fixed(s((3, 2, 4)))),
        OpInfo("diagonal then inplace", lambda lib, x: _diag_write(x * 1), fixed(s((3, 3)))),
        OpInfo("diag_embed", lambda lib, x: x.diag_embed(), fixed(s((3,)), s((2, 3)))),
        OpInfo("diag_embed offset dims", lambda lib, x: lib.diag_embed(x, -1, 0, 2), fixed(s((2, 3)))),
        *(OpInfo(f"diag k={k}", (lambda k: lambda lib, x: x.diag(k))(k), fixed(s((4,)), s((3, 4)), snc((3, 4))))
          for k in (0, 1, -2)),
        OpInfo("diagflat", lambda lib, x: lib.diagflat(x), fixed(s((2, 2)), s((3,)), s(()))),
        OpInfo("diagflat offset", lambda lib, x: x.diagflat(-1), fixed(s((3,)))),
        OpInfo("trace", lambda lib, x: x.trace(), fixed(s((3, 4)), s((4, 3)), snc((3, 3)), s((0, 2)),
                                                      lambda rng: Sample((_ints(rng, (3, 3)),), "int64"))),
        OpInfo("meshgrid ij", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij"), fixed(s((3,), (4,)))),
        OpInfo("meshgrid xy", lambda lib, a, b, c: lib.meshgrid([a, b, c], indexing="xy"),
               fixed(s((3,), (4,), (2,)), s((), (2,), (1,)))),
        # gather / scatter
        OpInfo("gather", lambda lib, x: x.gather(0, T(lib, I2)), x34),
        OpInfo("gather dim 1 smaller index", lambda lib, x: lib.gather(x, 1, T(lib, [[3, 3], [0, 1]])), x34),
        OpInfo("gather 0-d", lambda lib, x: x.gather(0, T(lib, 0)), fixed(s(()))),
        OpInfo("gather empty index", lambda lib, x: x.gather(1, T(lib, [[]]).long()), fixed(s((3, 4)))),
        OpInfo("scatter src", lambda lib, x, v: x.scatter(0, T(lib, [[0, 1, 2, 0], [2, 0, 1, 1]]), v),
               fixed(s((3, 4), (2, 4)), snc((3, 4), (2, 4)))),
        OpInfo("scatter src larger than index", lambda lib, x, v: x.scatter(1, T(lib, [[0], [3]]), v),
               fixed(s((3, 4), (3, 5))), grad=False),
        OpInfo("scatter value", lambda lib, x: lib.scatter(x, 1, T(lib, [[0], [3], [1]]), 2.5), x34),
        OpInfo("scatter value reduce", lambda lib, x: x.scatter(1, T(lib, [[0, 0], [3, 1]]), 2.0, reduce="multiply"),
               x34, grad=False),
        OpInfo("scatter src reduce", lambda lib, x, v: x.scatter(0, T(lib, I2), v, reduce="add"),
               fixed(s((3, 4), (2, 4))), grad=False),
        OpInfo("scatter_", lambda lib, x, v: (x * 1).scatter_(1, T(lib, [[1, 0], [2, 3], [0, 0]]), v),
               fixed(s((3, 4), (3, 2)))),
        OpInfo("scatter_add", lambda lib, x, v: x.scatter_add(0, T(lib, I2), v),
               fixed(s((3, 4), (2, 4)), s((3, 4), (2, 4), dtype=F64))),
        OpInfo("scatter_add_", lambda lib, x, v: (x * 1).scatter_add_(1, T(lib, [[1, 1], [2, 2], [0, 3]]), v),
               fixed(s((3, 4), (3, 2)))),
        *(OpInfo(f"scatter_reduce {r} include_self={inc}",
                 (lambda r, inc: lambda lib, x, v: x.scatter_reduce(0, T(lib, I2, x), v, r, include_self=inc))(r, inc),
                 fixed(s((3, 4), (2, 4), lo=0.5, hi=2.0), s((3, 4), (2, 4), dtype=F64, lo=-2.0, hi=-0.5)))
          for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)),
        OpInfo("scatter_reduce amax ties", lambda lib, x, v: lib.scatter_reduce(x, 0, T(lib, I2), v, "amax"),
               fixed(lambda rng: Sample((np.ones((3, 4), F32), np.ones((2, 4), F32)), "all equal"))),
        OpInfo("scatter_reduce_", lambda lib, x, v: (x * 1).scatter_reduce_(1, T(lib, [[0, 0], [1, 3], [2, 2]]), v,
                                                                           "sum"), fixed(s((3, 4), (3, 2)))),
        # index_*
        OpInfo("index_select", lambda lib, x: x.index_select(0, T(lib, [2, 0, 2])), x34),
        OpInfo("torch.index_select dim -1 int32",
               lambda lib, x: lib.index_select(x, -1, T(lib, [3, 1]).int()), fixed(s((3, 4)), s((2, 3, 4)))),
        OpInfo("index_select 0-d index", lambda lib, x: x.index_select(1, T(lib, 1)), fixed(s((3, 4)))),
        OpInfo("index_add", lambda lib, x, v: x.index_add(0, T(lib, [2, 0, 2]), v),
               fixed(s((3, 4), (3, 4)), snc((3, 4), (3, 4)))),
        OpInfo("index_add alpha", lambda lib, x, v: lib.index_add(x, 1, T(lib, [3, 3]), v, alpha=-2),
               fixed(s((3, 4), (3, 2)))),
        OpInfo("index_add_", lambda lib, x, v: (x * 1).index_add_(0, T(lib, [1]), v), fixed(s((3, 4), (1, 4)))),
        OpInfo("index_copy", lambda lib, x, v: x.index_copy(1, T(lib, [3, 0]), v), fixed(s((3, 4), (3, 2)))),
        OpInfo("index_copy_", lambda lib, x, v: (x * 1).index_copy_(0, T(lib, [2]), v), fixed(s((3, 4), (1, 4)))),
        OpInfo("index_fill", lambda lib, x: x.index_fill(1, T(lib, [0, 2]), -1.0), x34),
        OpInfo("index_fill tensor", lambda lib, x, v: lib.index_fill(x, 0, T(lib, [2, 0]), v), fixed(s((3, 4), ()))),
        OpInfo("index_fill_", lambda lib, x: (x * 1).index_fill_(0, T(lib, [1]), 3.0), fixed(s((3, 4)))),
        OpInfo("index_put", lambda lib, x, v: x.index_put((T(lib, [0, 2]), T(lib, [1, 3])), v),
               fixed(s((3, 4), (2,)), s((3, 4), ()))),
        OpInfo("index_put accumulate", lambda lib, x, v: lib.index_put(x, (T(lib, [0, 2, 0]),), v, accumulate=True),
               fixed(s((3, 4), (3, 4)), s((3, 4), (4,)))),
        OpInfo("index_put_ accumulate", lambda lib, x, v: (x * 1).index_put_((T(lib, [1, 1]), T(lib, [2, 2])), v,
                                                                           accumulate=True), fixed(s((3, 4), ()))),
        OpInfo("index_put_ bool", lambda lib, x, m, v: (x * 1).index_put_((m,), v),
               fixed(lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (3, 4)), _r(rng, ())), "mask"))),
        # masked_*
        OpInfo("masked_fill", lambda lib, x, m: x.masked_fill(m, -1.5), m34),
        OpInfo("masked_fill tensor value", lambda lib, x, m, v: lib.masked_fill(x, m, v),
               fixed(lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (3, 4)), _r(rng, ())), "0-d value"),
                     lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (4,)), _r(rng, (), F64)), "f64 value"))),
        OpInfo("masked_fill broadcast self", lambda lib, x, m: x.masked_fill(m, 0.5),
               fixed(lambda rng: Sample((_r(rng, (4,)), _cond(rng, (3, 4))), "self (4,)"))),
        OpInfo("masked_fill_", lambda lib, x, m: (x * 1).masked_fill_(m, 2.0), m34),
        OpInfo("masked_select", lambda lib, x, m: x.masked_select(m), m34),
        OpInfo("masked_select broadcast self", lambda lib, x, m: lib.masked_select(x, m),
               fixed(lambda rng: Sample((_r(rng, (4,)), _cond(rng, (3, 4))), "self (4,)"))),
        OpInfo("masked_scatter", lambda lib, x, m, v: x.masked_scatter(m, v),
               fixed(lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (3, 4)), _r(rng, (3, 5))), "src larger"),
                     lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (4,)), _r(rng, (12,))), "mask (4,)"))),
        OpInfo("masked_scatter_", lambda lib, x, m, v: (x * 1).masked_scatter_(m, v),
               fixed(lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (3, 4)), _r(rng, (12,))), "3x4"))),
        OpInfo("take", lambda lib, x: x.take(T(lib, [[0, 11], [-1, 5]])), x34),
        OpInfo("torch.take 0-d", lambda lib, x: lib.take(x, T(lib, 0)), fixed(s(()), s((2,)))),
        OpInfo("take_along_dim", lambda lib, x: lib.take_along_dim(x, T(lib, [[0], [3], [1]]), 1), x34),
        OpInfo("take_along_dim broadcast", lambda lib, x: x.take_along_dim(T(lib, [[0, 2]]), dim=0),
               fixed(s((3, 1)), s((3, 2)))),
        OpInfo("take_along_dim flat", lambda lib, x: lib.take_along_dim(x, T(lib, [5, 0, 5])), fixed(s((3, 4)))),
        OpInfo("take_along_dim permutation", lambda lib, x: lib.take_along_dim(x, T(lib, [[3, 1, 0, 2]]), 1), x34),
        # no-grad index ops
        OpInfo("nonzero", lambda lib, x: lib.nonzero(x > 0), fixed(s((3, 4)), s(()), s((0, 2)), s((2, 3, 2)))),
        OpInfo("nonzero as_tuple", lambda lib, x: (x > 0).nonzero(as_tuple=True), fixed(s((3, 4)), s(()))),
        OpInfo("argwhere", lambda lib, x: lib.argwhere(x), fixed(lambda rng: Sample((_ints(rng, (3, 4)),), "int"))),
        OpInfo("where one-arg", lambda lib, x: lib.where(x > 0), fixed(s((3, 4)))),
        OpInfo("searchsorted", lambda lib, x: lib.searchsorted(T(lib, [-1.0, 0.0, 0.0, 1.0], x), x), x34),
        OpInfo("searchsorted right", lambda lib, x: lib.searchsorted(T(lib, [-1.0, 0.0, 1.0], x), x, right=True),
               fixed(s((5,)))),
        OpInfo("searchsorted side sorter", lambda lib, x: lib.searchsorted(
            T(lib, [1.0, -1.0, 0.0], x), x, side="right", sorter=T(lib, [1, 2, 0], x)), fixed(s((5,)))),
        OpInfo("searchsorted n-d int32", lambda lib, b, x: lib.searchsorted(b, x, out_int32=True),
               fixed(lambda rng: Sample((np.sort(_r(rng, (2, 5)), -1), _r(rng, (2, 3))), "2 rows"))),
        OpInfo("searchsorted scalar", lambda lib: lib.searchsorted(T(lib, [1, 3, 5]), 3), fixed(s())),
        OpInfo("bucketize", lambda lib, x: lib.bucketize(x, T(lib, [-1.0, 0.0, 1.0], x)), x34),
        OpInfo("bucketize right", lambda lib, x: lib.bucketize(x, T(lib, [-0.5, 0.5], x), right=True,
                                                                 out_int32=True), fixed(s((5,)))),
        # advanced indexing beyond the basic table
        *(OpInfo(f"getitem adv {name}", (lambda f: lambda lib, x: f(lib, x))(f), fixed(s((4, 5, 6)), snc((4, 5, 6))))
          for name, f in ADV_KEYS.items()),
        OpInfo("setitem adv non-leaf", lambda lib, x, v: _set(x * 1, ([0, 2, 0],), v), fixed(s((3, 4), (4,)))),
        OpInfo("setitem mask non-leaf", lambda lib, x, m, v: _set(x * 1, (m,), v),
               fixed(lambda rng: Sample((_r(rng, (3, 4)), _cond(rng, (3, 4)), _r(rng, ())), "0-d value"))),
        OpInfo("setitem mixed non-leaf", lambda lib, x, v: _set(x * 1, (slice(1, None), [0, 3]), v),
               fixed(s((3, 4), (2, 2)), s((3, 4), (2,)))),
    ]


ADV_KEYS = {
    "list": lambda lib, x: x[[0, 2, 2]],
    "two lists": lambda lib, x: x[[0, 1], [4, 2]],
    "lists broadcast": lambda lib, x: x[[[0], [3]], [1, 2]],
    "list then slice": lambda lib, x: x[[1, 0], 1:4],
    "slice between": lambda lib, x: x[[1, 0], :, [2, 3]],
    "separated by int": lambda lib, x: x[[1, 0], 1, [2, 3]],
    "slice then lists": lambda lib, x: x[:, [1, 0], [2, 3]],
    "None and list": lambda lib, x: x[None, [1, 3]],
    "Ellipsis list": lambda lib, x: x[..., [0, 5]],
    "list Ellipsis None": lambda lib, x: x[[3], ..., None],
    "tensor neg": lambda lib, x: x[lib.tensor([-1, 0, -4])],
    "0-d tensor and list": lambda lib, x: x[lib.tensor(1), [0, 2]],
    "mask 2 leading dims": lambda lib, x: x[(x.detach() > 0).all(-1)],
    "mask full": lambda lib, x: x[x.detach() > 0.5],
    "mask then list": lambda lib, x: x[lib.tensor([True, False, True, True]), :, [1, 2, 0]],
    "mask middle": lambda lib, x: x[:, lib.tensor([True, False, True, False, True])],
    "0-d bool True": lambda lib, x: x[lib.tensor(True)],
    "0-d bool False": lambda lib, x: x[lib.tensor(False)],
    "python bool": lambda lib, x: x[True, 1],
    "empty list": lambda lib, x: x[[]],
    "step slice and list": lambda lib, x: x[::2, [0, 0, 1]],
}


def _diag_write(t):
    t.diagonal().mul_(2)
    return t


def _set_view(t, v):
    row = t[1]
    row[:] = v
    return t


def _set(t, key, v):
    t[key] = v
    return t


def _mul_view(t):
    v = t[1:]
    v.mul_(2)
    return t, v


# ---------------------------------------------------------------- convolution, pooling, padding, resampling
def _F(lib):
    return lib.nn.functional


def _conv_pool_entries():
    """Every conv/pool/pad/resample node; second derivatives reach the backward-of-backward nodes."""
    conv = [
        ("conv2d", lambda lib, x, w, b: _F(lib).conv2d(x, w, b, padding=1), ((2, 3, 6, 5), (4, 3, 3, 3), (4,))),
        ("conv2d stride dilation groups", lambda lib, x, w, b: _F(lib).conv2d(x, w, b, (2, 1), (1, 2), (2, 1), 2),
         ((2, 4, 7, 6), (6, 2, 3, 2), (6,))),
        ("conv2d same", lambda lib, x, w: _F(lib).conv2d(x, w, padding="same", dilation=(1, 2)),
         ((1, 2, 5, 6), (3, 2, 2, 3))),
        ("conv2d unbatched", lambda lib, x, w: _F(lib).conv2d(x, w), ((3, 5, 5), (2, 3, 2, 2))),
        ("conv1d", lambda lib, x, w, b: _F(lib).conv1d(x, w, b, 2, 1, 2), ((2, 3, 9), (4, 3, 3), (4,))),
        ("conv1d groups valid", lambda lib, x, w: _F(lib).conv1d(x, w, padding="valid", groups=3),
         ((2, 3, 6), (6, 1, 2))),
        ("conv_transpose2d", lambda lib, x, w, b: _F(lib).conv_transpose2d(x, w, b, 2, 1, 1),
         ((2, 3, 4, 3), (3, 2, 3, 3), (2,))),
        ("conv_transpose2d groups dilation", lambda lib, x, w: _F(lib).conv_transpose2d(
            x, w, None, (2, 3), (1, 0), (1, 2), 2, (2, 1)), ((2, 4, 3, 4), (4, 3, 2, 3))),
        ("conv_transpose1d", lambda lib, x, w, b: _F(lib).conv_transpose1d(x, w, b, 3, 1, 2, 1, 2),
         ((2, 3, 5), (3, 2, 3), (2,))),
        ("conv2d float64", lambda lib, x, w: _F(lib).conv2d(x, w, stride=2), ((2, 2, 5, 5), (3, 2, 3, 3))),
        ("conv3d", lambda lib, x, w, b: _F(lib).conv3d(x, w, b, padding=1), ((2, 2, 3, 4, 3), (3, 2, 2, 3, 2), (3,))),
        ("conv3d stride dilation groups", lambda lib, x, w: _F(lib).conv3d(x, w, None, (2, 1, 1), (0, 1, 0),
                                                                           (1, 1, 2), 2), ((1, 4, 4, 3, 5),
                                                                                           (2, 2, 2, 2, 2))),
        ("conv_transpose3d", lambda lib, x, w, b: _F(lib).conv_transpose3d(x, w, b, 2, 1, (1, 0, 1)),
         ((1, 2, 2, 3, 2), (2, 3, 2, 2, 3), (3,))),
    ]
    out = [OpInfo(n, f, fixed(s(*shapes, dtype=F64 if "float64" in n else F32)), atol=1e-4) for n, f, shapes in conv]
    out.append(OpInfo("conv2d non-contig", lambda lib, x, w: _F(lib).conv2d(x, w), fixed(snc((2, 2, 5, 4), (3, 2, 2, 3))),
                      atol=1e-4))
    x4, x3, x5 = (2, 3, 7, 6), (2, 3, 9), (2, 2, 4, 5, 4)
    pools = [
        ("max_pool2d", lambda lib, x: _F(lib).max_pool2d(x, 2), x4),
        ("max_pool2d pad ceil dilation", lambda lib, x: _F(lib).max_pool2d(x, 3, 2, 1, 2, ceil_mode=True), x4),
        ("max_pool2d overlap indices", lambda lib, x: _F(lib).max_pool2d(x, (3, 2), 1, return_indices=True), x4),
        ("max_pool1d", lambda lib, x: _F(lib).max_pool1d(x, 3, 2, 1, ceil_mode=True), x3),
        ("avg_pool2d", lambda lib, x: _F(lib).avg_pool2d(x, 2), x4),
        ("avg_pool2d pad ceil exclude", lambda lib, x: _F(lib).avg_pool2d(x, 3, 2, 1, True, False), x4),
        ("avg_pool2d divisor", lambda lib, x: _F(lib).avg_pool2d(x, (2, 3), 1, (1, 0), divisor_override=4), x4),
        ("avg_pool1d", lambda lib, x: _F(lib).avg_pool1d(x, 3, 2, 1, True), x3),
        ("adaptive_avg_pool2d", lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (3, 4)), x4),
        ("adaptive_avg_pool1d", lambda lib, x: _F(lib).adaptive_avg_pool1d(x, 4), x3),
        ("adaptive_max_pool2d", lambda lib, x: _F(lib).adaptive_max_pool2d(x, (4, 5), True), x4),
        ("adaptive_max_pool1d", lambda lib, x: _F(lib).adaptive_max_pool1d(x, 5), x3),
        ("pad constant", lambda lib, x: _F(lib).pad(x, (1, 2, 0, 1), value=1.5), x4),
        ("pad negative", lambda lib, x: _F(lib).pad(x, (-1, 2, 1, -2, 1, 0)), x4),
        ("pad reflect 1d", lambda lib, x: _F(lib).pad(x, (2, 3), "reflect"), x3),
        ("pad reflect 2d", lambda lib, x: _F(lib).pad(x, (2, 1, 1, 3), "reflect"), x4),
        ("pad reflect 3d", lambda lib, x: _F(lib).pad(x, (1, 1, 2, 0, 1, 2), "reflect"), x4),
        ("pad replicate 1d", lambda lib, x: _F(lib).pad(x, (3, 1), "replicate"), x3),
        ("pad replicate 2d", lambda lib, x: _F(lib).pad(x, (2, 1, 1, 3), "replicate"), x4),
        ("pad replicate 3d", lambda lib, x: _F(lib).pad(x, (1, 1, 2, 0, 1, 2), "replicate"), x4),
        ("interpolate nearest scale", lambda lib, x: _F(lib).interpolate(x, scale_factor=2), x4),
        ("interpolate nearest size", lambda lib, x: _F(lib).interpolate(x, size=(5, 11)), x4),
        ("interpolate nearest 1d", lambda lib, x: _F(lib).interpolate(x, scale_factor=1.5), x3),
        ("interpolate bilinear", lambda lib, x: _F(lib).interpolate(x, scale_factor=1.7, mode="bilinear"), x4),
        ("interpolate bilinear corners", lambda lib, x: _F(lib).interpolate(x, (5, 11), mode="bilinear",
                                                                              align_corners=True), x4),
        ("interpolate linear", lambda lib, x: _F(lib).interpolate(x, scale_factor=2.5, mode="linear"), x3),
        ("interpolate bilinear antialias down", lambda lib, x: _F(lib).interpolate(x, (3, 4), mode="bilinear",
                                                                                    antialias=True), x4),
        ("interpolate bilinear antialias up", lambda lib, x: _F(lib).interpolate(x, scale_factor=1.6,
                                                                                  mode="bilinear", antialias=True), x4),
        ("pixel_shuffle", lambda lib, x: _F(lib).pixel_shuffle(x, 2), (2, 8, 3, 4)),
        ("pixel_unshuffle", lambda lib, x: _F(lib).pixel_unshuffle(x, 2), (2, 2, 4, 6)),
        ("unfold", lambda lib, x: _F(lib).unfold(x, (2, 3), (1, 2), 1, 2), x4),
        ("fold", lambda lib, x: _F(lib).fold(x, (5, 6), (2, 3), (1, 2), 1, 2), (2, 12, 6)),
        ("max_pool3d", lambda lib, x: _F(lib).max_pool3d(x, 2), x5),
        ("max_pool3d pad ceil dilation indices", lambda lib, x: _F(lib).max_pool3d(x, 2, (2, 1, 2), 1, (1, 2, 1),
                                                                                   True, True), x5),
        ("avg_pool3d", lambda lib, x: _F(lib).avg_pool3d(x, 2), x5),
        ("avg_pool3d pad ceil exclude divisor", lambda lib, x: _F(lib).avg_pool3d(x, (2, 3, 2), 2, 1, True, False,
                                                                                  None), x5),
        ("adaptive_avg_pool3d", lambda lib, x: _F(lib).adaptive_avg_pool3d(x, (2, 3, 2)), x5),
        ("adaptive_max_pool3d", lambda lib, x: _F(lib).adaptive_max_pool3d(x, (2, 3, 2), True), x5),
        ("max_unpool2d", lambda lib, x: _F(lib).max_unpool2d(*_F(lib).max_pool2d(x, 2, return_indices=True), 2), x4),
        ("max_unpool3d", lambda lib, x: _F(lib).max_unpool3d(*_F(lib).max_pool3d(x, 2, return_indices=True), 2,
                                                             output_size=x.shape[2:]), x5),
        ("fractional_max_pool2d", lambda lib, x: _F(lib).fractional_max_pool2d(
            x, 2, (3, 2), return_indices=True, _random_samples=lib.tensor(_FRACTIONAL_SAMPLES[:, :1, :2], device=x.device)),
         (2, 1, 7, 6)),
        ("fractional_max_pool3d", lambda lib, x: _F(lib).fractional_max_pool3d(
            x, (2, 2, 1), (2, 3, 3), return_indices=True, _random_samples=lib.tensor(_FRACTIONAL_SAMPLES, device=x.device)), x5),
        ("interpolate bicubic", lambda lib, x: _F(lib).interpolate(x, scale_factor=1.7, mode="bicubic"), x4),
        ("interpolate bicubic corners", lambda lib, x: _F(lib).interpolate(x, (4, 9), mode="bicubic",
                                                                             align_corners=True), x4),
        ("interpolate bilinear antialias", lambda lib, x: _F(lib).interpolate(x, scale_factor=0.6, mode="bilinear",
                                                                                antialias=True), x4),
        ("interpolate bicubic antialias", lambda lib, x: _F(lib).interpolate(x, (3, 4), mode="bicubic",
                                                                               antialias=True), x4),
        ("interpolate trilinear", lambda lib, x: _F(lib).interpolate(x, scale_factor=(1.5, 0.7, 2), mode="trilinear"),
         x5),
        ("interpolate nearest 3d", lambda lib, x: _F(lib).interpolate(x, (2, 5, 3)), x5),
        ("interpolate nearest-exact", lambda lib, x: _F(lib).interpolate(x, scale_factor=1.6, mode="nearest-exact"),
         x4),
        ("interpolate nearest-exact 1d", lambda lib, x: _F(lib).interpolate(x, 4, mode="nearest-exact"), x3),
        ("interpolate nearest-exact 3d", lambda lib, x: _F(lib).interpolate(x, (4, 2, 3), mode="nearest-exact"), x5),
        ("interpolate area", lambda lib, x: _F(lib).interpolate(x, scale_factor=0.6, mode="area"), x4),
    ]
    out += [OpInfo(n, f, fixed(s(shape)), atol=1e-5) for n, f, shape in pools]
    out += [OpInfo("pad circular 2d", lambda lib, x: _F(lib).pad(x, (2, 1, 1, 3), "circular"), fixed(s(x4)),
                   check_grad_fn=False),  # torch's node is a CopySlices
            OpInfo("max_pool2d float64 non-contig", lambda lib, x: _F(lib).max_pool2d(x, 2, 1),
                   fixed(snc((2, 2, 5, 4)), s((2, 2, 5, 4), dtype=F64)))]
    grid = [  # (name, fn, input shape, grid shape)
        ("grid_sample bilinear", lambda lib, x, g: _F(lib).grid_sample(x, g, align_corners=False), (2, 2, 4, 5),
         (2, 3, 2, 2)),
        ("grid_sample nearest border", lambda lib, x, g: _F(lib).grid_sample(x, g, "nearest", "border", True),
         (2, 2, 4, 5), (2, 3, 2, 2)),
        ("grid_sample bicubic reflection", lambda lib, x, g: _F(lib).grid_sample(x, g, "bicubic", "reflection",
                                                                                  False), (2, 2, 4, 5), (2, 3, 2, 2)),
        ("grid_sample 3d", lambda lib, x, g: _F(lib).grid_sample(x, g, "bilinear", "border", False), (1, 2, 3, 4, 3),
         (1, 2, 2, 2, 3)),
    ]
    out += [OpInfo(n, f, fixed(s(xs, gs, lo=-1.3, hi=1.3), s(xs, gs, lo=-1.3, hi=1.3, dtype=F64)), atol=1e-5)
            for n, f, xs, gs in grid]
    out += [OpInfo("affine_grid", lambda lib, t: _F(lib).affine_grid(t, (2, 3, 4, 5), False), fixed(s((2, 2, 3)))),
            OpInfo("affine_grid 3d corners", lambda lib, t: _F(lib).affine_grid(t, (2, 3, 2, 4, 3), True),
                   fixed(s((2, 3, 4), dtype=F64)))]
    return out


_FRACTIONAL_SAMPLES = np.random.default_rng(19).uniform(size=(2, 2, 3)).astype(np.float32)


# ---------------------------------------------------------------- elementwise / reduction / sorting families
def _rg(t):
    """``t`` made to require grad inside the fn (for ops whose node name is compared but that torch cannot
    differentiate, run with ``grad=False``)."""
    return t.requires_grad_() if t.is_floating_point() else t


def _special(*values, dtype=F64):
    return lambda rng: Sample((np.array(values, dtype),), "special values")


# public name: (value range or None for normal, integer inputs accepted, float16 sample)
ELEMENTWISE_UNARY = {
    "square": (None, True), "rsqrt": ((0.2, 3.0), True), "reciprocal": ((0.2, 3.0), True), "exp2": (None, True),
    "expm1": (None, True), "log2": ((0.2, 3.0), True), "log10": ((0.2, 3.0), True), "log1p": ((0.2, 3.0), True),
    "sin": (None, True), "cos": (None, True), "tan": ((-1.0, 1.0), True), "asin": ((-0.9, 0.9), False),
    "acos": ((-0.9, 0.9), False), "atan": (None, True), "sinh": (None, True), "cosh": (None, True),
    "asinh": (None, True), "acosh": ((1.1, 3.0), False), "atanh": ((-0.9, 0.9), False), "erf": (None, True),
    "erfc": (None, True), "erfinv": ((-0.9, 0.9), False), "logit": ((0.05, 0.95), False), "floor": (None, True),
    "ceil": (None, True), "trunc": (None, True), "round": (None, True), "frac": (None, False),
    "nan_to_num": (None, True),
}
ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
           "arctanh": "atanh", "fix": "trunc"}
# public name: (value ranges of input and other, integer operands accepted)
ELEMENTWISE_BINARY = {
    "atan2": ((None, None, None, None), True), "hypot": ((None, None, None, None), False),
    "maximum": ((None, None, None, None), True), "minimum": ((None, None, None, None), True),
    "fmax": ((None, None, None, None), True), "fmin": ((None, None, None, None), True),
    "logaddexp": ((None, None, None, None), False), "logaddexp2": ((None, None, None, None), False),
    "xlogy": ((None, None, 0.5, 2.0), True), "copysign": ((None, None, None, None), True),
    "remainder": ((None, None, 0.5, 2.0), True), "fmod": ((None, None, 0.5, 2.0), True),
}


def _elementwise_entries():
    out = []
    for n, (rng_, ints) in ELEMENTWISE_UNARY.items():
        lo, hi = rng_ or (None, None)
        f = (lambda n: lambda lib, x: getattr(lib, n)(x))(n)
        out.append(OpInfo(f"torch.{n}", f, unary_samples(lo, hi, ints=ints)))
        out.append(OpInfo(f"Tensor.{n}", (lambda n: lambda lib, x: getattr(x, n)())(n),
                          fixed(s((3, 4), dtype=F64, lo=lo, hi=hi))))
    for a, n in ALIASES.items():
        lo, hi = ELEMENTWISE_UNARY[n][0] or (None, None)
        out.append(OpInfo(f"torch.{a}", (lambda a: lambda lib, x: getattr(lib, a)(x))(a), fixed(s((3, 4), lo=lo, hi=hi))))
        out.append(OpInfo(f"Tensor.{a}", (lambda a: lambda lib, x: getattr(x, a)())(a), fixed(s((3,), lo=lo, hi=hi))))
    out += [
        OpInfo("round decimals=2", lambda lib, x: lib.round(x * 100, decimals=2), unary_samples(f16=False)),
        OpInfo("round decimals=-1", lambda lib, x: x.round(decimals=-1) * x, fixed(s((3, 4), dtype=F64))),
        OpInfo("logit eps", lambda lib, x: lib.logit(x, eps=0.2), unary_samples(0.05, 0.95, f16=False)),
        OpInfo("nan_to_num specials", lambda lib, x: lib.nan_to_num(x, nan=1.5, posinf=2.0) * x,
               fixed(_special(0.5, np.nan, np.inf, -np.inf, -2.0), _special(np.nan, np.inf, 1.0, dtype=F32))),
    ]
    for n, ((lo, hi, olo, ohi), ints) in ELEMENTWISE_BINARY.items():
        out.append(OpInfo(f"torch.{n}", (lambda n: lambda lib, a, b: getattr(lib, n)(a, b))(n),
                          binary_samples(lo, hi, olo, ohi, ints=ints)))
        out.append(OpInfo(f"Tensor.{n}", (lambda n: lambda lib, a, b: getattr(a, n)(b))(n),
                          fixed(s((3, 4), (4,), dtype=F64, lo=olo, hi=ohi))))
    out.append(OpInfo("arctan2", lambda lib, a, b: lib.arctan2(a, b), fixed(s((3, 1), (4,)))))
    scalar_ops = {  # Python-number operands (torch records other node names for them)
        "remainder scalar": lambda lib, x: lib.remainder(x, 1.5), "% scalar": lambda lib, x: x % -1.5,
        "fmod scalar": lambda lib, x: lib.fmod(x, -1.5), "Tensor.fmod scalar": lambda lib, x: x.fmod(0.7),
        "xlogy scalar other": lambda lib, x: lib.xlogy(x, 2.5), "xlogy scalar self": lambda lib, x: lib.xlogy(2, x),
        "copysign scalar": lambda lib, x: lib.copysign(x, -1.0), "lerp scalar weight": lambda lib, x: x.lerp(x * x, 0.3),
        "rdiv scalar -> reciprocal": lambda lib, x: 2 / x,
    }
    for n, f in scalar_ops.items():
        out.append(OpInfo(n, f, unary_samples(0.5, 2.0, f16=False) if "xlogy scalar self" in n or "rdiv" in n
                          else unary_samples(f16=False)))
    ints = fixed(lambda rng: Sample((_ints(rng, (3, 4)), rng.integers(1, 4, (4,))), "int64"),
                 lambda rng: Sample((_ints(rng, (3,)).astype(np.int32), np.array(2)), "int32-0d"))
    out += [
        OpInfo("floor_divide", lambda lib, a, b: lib.floor_divide(_rg(a), b), binary_samples(other_lo=0.5, other_hi=2.0),
               grad=False),
        OpInfo("// scalar", lambda lib, a: _rg(a) // 0.7, unary_samples(ints=True), grad=False),
        OpInfo("div floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
               binary_samples(other_lo=0.5, other_hi=2.0)),
        OpInfo("div trunc scalar", lambda lib, a: a.div(0.7, rounding_mode="trunc"), unary_samples(ints=True)),
        OpInfo("bitwise_left_shift", lambda lib, a, b: lib.bitwise_left_shift(a, b), ints),
        OpInfo("bitwise_right_shift", lambda lib, a, b: a.bitwise_right_shift(b), ints),
        OpInfo("<< >> scalar", lambda lib, a: (a << 2, a >> 1), fixed(lambda rng: Sample((_ints(rng, (5,)),), "int"))),
    ]
    ternary = fixed(s((3, 4), (3, 4), (3, 4)), s((3, 1, 4), (5, 1), (4,)), s((), (2, 3), ()), s((), (), ()),
                    s((0, 3), (1, 3), (3,)), s((2, 3), (2, 3), (2, 3), dtype=F64), snc((3, 4), (3, 4), (3, 4)),
                    s((2, 3), (3,), (2, 1), dtype=F16))
    pos = fixed(s((3, 4), (3, 4), (3, 4), lo=0.5, hi=2.0), s((3, 1, 4), (5, 1), (4,), lo=0.5, hi=2.0),
                s((), (2, 3), (), lo=0.5, hi=2.0), s((0, 3), (1, 3), (3,), lo=0.5, hi=2.0),
                s((2, 3), (2, 3), (2, 3), dtype=F64, lo=0.5, hi=2.0), snc((3, 4), (3, 4), (3, 4)))
    out += [
        OpInfo("lerp", lambda lib, a, b, w: lib.lerp(a, b, w), ternary),
        OpInfo("lerp scalar", lambda lib, a, b, w: lib.lerp(a, b, -0.5) + w, ternary),
        OpInfo("addcmul", lambda lib, a, b, c: lib.addcmul(a, b, c, value=-0.5), ternary),
        OpInfo("Tensor.addcmul", lambda lib, a, b, c: a.addcmul(b, c), ternary),
        OpInfo("addcdiv", lambda lib, a, b, c: lib.addcdiv(a, b, c, value=2), pos),
        OpInfo("Tensor.addcdiv", lambda lib, a, b, c: a.addcdiv(b, c), pos),
    ]
    return out


def _red(*extra, f16=True, empty=(0, 3), zero_d=True, one_d=True, ints=False, lo=None, hi=None):
    """Samples for reductions: 1-d..3-d, 0-d, empty, float64/float16, non-contiguous, integer."""
    makers = [s((3, 4), lo=lo, hi=hi), s((2, 3, 4), lo=lo, hi=hi), s((3, 4), dtype=F64, lo=lo, hi=hi), snc((3, 4))]
    if one_d:
        makers.append(s((5,), lo=lo, hi=hi))
    if zero_d:
        makers.append(s((), lo=lo, hi=hi))
    if empty:
        makers.append(s(empty))
    if f16:
        makers.append(s((3, 4), dtype=F16, lo=lo, hi=hi))
    if ints:
        makers.append(lambda rng: Sample((_ints(rng, (3, 4)),), "int64"))
    if f16:  # (last, so that the samples above keep their values)
        extra = (*extra, s((3, 4), dtype=BF16, lo=lo, hi=hi, desc="bfloat16"))
    return fixed(*makers, *extra)


def _zeros_in(shape, where, dtype=F64):
    def mk(rng):
        x = rng.standard_normal(shape).astype(dtype)
        x.reshape(-1)[list(where)] = 0
        return Sample((x,), f"zeros at {where}")
    return mk


def _ties(rng):
    return Sample((np.array([[1.0, 3, 3, 0, 3], [2, 2, 1, 1, 0], [5, 5, 5, 5, 5]]),), "ties")


def _reduction_family_entries():
    out = []
    dims = {"": lambda f: lambda lib, x: f(lib, x), " dim=-1": lambda f: lambda lib, x: f(lib, x, -1),
            " dim=0 keepdim": lambda f: lambda lib, x: f(lib, x, 0, keepdim=True)}
    multi = {" dim=(0,-1)": lambda f: lambda lib, x: f(lib, x, (0, -1)),
             " dim=(-1,0) keepdim": lambda f: lambda lib, x: f(lib, x, (-1, 0), keepdim=True)}
    # name: (call, empty dims allowed over the whole tensor, float16, ints, multi-dim, ties)
    ops = {
        "amax": (lambda lib, x, *a, **k: lib.amax(x, *a, **k), False, True, True, True, True),
        "amin": (lambda lib, x, *a, **k: x.amin(*a, **k), False, True, True, True, True),
        "max": (lambda lib, x, *a, **k: lib.max(x, *a, **k), False, True, True, False, True),
        "min": (lambda lib, x, *a, **k: x.min(*a, **k), False, True, True, False, True),
        "median": (lambda lib, x, *a, **k: lib.median(x, *a, **k), True, True, True, False, True),
        "var": (lambda lib, x, *a, **k: lib.var(x, *a, **k), True, True, False, True, False),
        "std": (lambda lib, x, *a, **k: x.std(*a, **k), True, True, False, True, False),
        "var_mean": (lambda lib, x, *a, **k: lib.var_mean(x, *a, **k), True, True, False, True, False),
        "std_mean": (lambda lib, x, *a, **k: lib.std_mean(x, *a, **k), True, True, False, True, False),
        "norm": (lambda lib, x, *a, **k: x.norm(2, *a, **k), True, True, False, True, False),
        "logsumexp": (lambda lib, x, *a, **k: lib.logsumexp(x, *(a or (tuple(range(x.ndim)),)), **k),
                      True, True, True, True, False),
        "nansum": (lambda lib, x, *a, **k: lib.nansum(x, *a, **k), True, True, True, True, False),
        "nanmean": (lambda lib, x, *a, **k: x.nanmean(*a, **k), True, True, False, True, False),
        "prod": (lambda lib, x, *a, **k: lib.prod(x, *a, **k), True, True, True, False, False),
    }
    for name, (f, empty_all, f16, ints, md, ties) in ops.items():
        for vname, mk in {**dims, **(multi if md else {})}.items():
            extra = [_ties] if ties and "dim" in vname else []
            if name in ("nansum", "nanmean") and "(" not in vname:
                extra.append(_special(1.0, np.nan, 2.0, np.nan))
            empty = (0, 3) if (vname and "(" not in vname and "dim=0" not in vname) or (not vname and empty_all) \
                else None
            if name in ("var", "std", "var_mean", "std_mean") and not vname:
                empty = None  # dof <= 0: a UserWarning (test_reductions)
            out.append(OpInfo(name + vname, mk(f), _red(*extra, f16=f16, ints=ints and "mean" not in name,
                                                          empty=empty, one_d="(" not in vname,
                                                          zero_d="(" not in vname and
                                                          name not in ("var", "std", "var_mean", "std_mean")),
                              rtol=1e-3 if name == "median" else None))
    out += [
        OpInfo("max all ties", lambda lib, x: x.max(), fixed(_ties)),
        OpInfo("median all ties", lambda lib, x: x.median(), fixed(_ties)),
        OpInfo("var unbiased=False", lambda lib, x: x.var(0, unbiased=False), _red(zero_d=False, empty=None)),
        OpInfo("std correction=2", lambda lib, x: lib.std(x, -1, correction=2, keepdim=True),
               fixed(s((5,)), s((3, 4)), snc((3, 4)))),
        OpInfo("var_mean correction=0", lambda lib, x: lib.var_mean(x, 0, correction=0), fixed(s((1, 3)), s((3, 4)))),
        OpInfo("std of constant", lambda lib, x: (x * 0 + 1).std(-1), fixed(s((3, 4)))),
        OpInfo("prod zeros", lambda lib, x: (x.prod(), x.prod(1)),
               fixed(_zeros_in((3, 4), (1,)), _zeros_in((3, 4), (1, 6, 11)), _zeros_in((3, 4), (0, 1, 8)))),
        OpInfo("prod dtype", lambda lib, x: lib.prod(x, 0, dtype=lib.float64), fixed(s((3, 4)))),
        OpInfo("logsumexp large", lambda lib, x: lib.logsumexp(x * 1e4, 1), fixed(s((3, 4), dtype=F64)), rtol=1e-6),
    ]
    for p in (1, 3, 0.5, 0, float("inf"), float("-inf"), "fro"):
        out.append(OpInfo(f"norm p={p}", (lambda p: lambda lib, x: (x.norm(p), lib.norm(x, p, dim=-1, keepdim=True)))(p),
                          fixed(s((3, 4)), s((5,), dtype=F64), snc((3, 4)))))
        out.append(OpInfo(f"norm p={p} at zero", (lambda p: lambda lib, x: lib.norm(x, p, dim=1))(p),
                          fixed(_zeros_in((2, 3), (0, 1, 2))), gradgrad=False))  # torch: NaN second derivative
    out.append(OpInfo("norm dtype", lambda lib, x: x.norm(dtype=lib.float64), fixed(s((4,)))))
    for name in ("cumsum", "cumprod", "cummax", "cummin"):
        f = (lambda n: lambda lib, x, d: getattr(lib, n)(x, d))(name)
        for d in (0, -1):
            out.append(OpInfo(f"{name} dim={d}", (lambda f, d: lambda lib, x: f(lib, x, d))(f, d),
                              _red(_ties, f16=name in ("cumsum", "cumprod"), ints=True, empty=None)))
        out.append(OpInfo(f"{name} empty", (lambda f: lambda lib, x: f(lib, x, 0))(f), fixed(s((3, 0)), s((0,))),
                          gradgrad=False))  # torch's zero-size grad requires grad without a graph
        out.append(OpInfo(f"Tensor.{name}", (lambda n: lambda lib, x: getattr(x, n)(dim=1))(name), fixed(s((2, 3, 4)))))
    out += [
        OpInfo("cumprod zeros", lambda lib, x: (x.cumprod(0), x.cumprod(1)),
               fixed(_zeros_in((3, 5), (0,)), _zeros_in((3, 5), (2, 7, 13)), _zeros_in((3, 5), (5, 6, 14)))),
        OpInfo("cumsum dtype", lambda lib, x: x.cumsum(0, dtype=lib.float64), fixed(s((3, 4)))),
        OpInfo("argmax", lambda lib, x: (lib.argmax(x), x.argmax(-1), x.argmax(0, keepdim=True)),
               _red(_ties, ints=True, empty=None), grad=False),
        OpInfo("argmin", lambda lib, x: (x.argmin(), lib.argmin(x, -1, True)), _red(_ties, ints=True, empty=None),
               grad=False),
    ]
    return out


def _sorting_entries():
    out = []
    for desc in (False, True):
        out.append(OpInfo(f"sort desc={desc}", (lambda dsc: lambda lib, x: lib.sort(x, descending=dsc))(desc),
                          _red(_ties, ints=True, empty=(3, 0))))
        out.append(OpInfo(f"sort dim=0 desc={desc}",
                          (lambda dsc: lambda lib, x: x.sort(dim=0, descending=dsc, stable=True))(desc),
                          _red(_ties, empty=(0, 3))))
        out.append(OpInfo(f"argsort desc={desc}", (lambda dsc: lambda lib, x: x.argsort(0, descending=dsc))(desc),
                          _red(_ties, ints=True), grad=False))
    for largest in (True, False):
        out.append(OpInfo(f"topk largest={largest}",
                          (lambda lg: lambda lib, x: lib.topk(x, 1 if x.ndim == 0 else min(2, x.shape[-1]),
                                                              largest=lg))(largest),
                          _red(empty=(2, 0) if not largest else (0, 3))))  # ties: test_sorting
    out += [
        OpInfo("topk dim=0 k=all", lambda lib, x: x.topk(x.shape[0] if x.ndim else 1, 0), _red(empty=None)),
        OpInfo("topk k=0", lambda lib, x: x.topk(0), fixed(s((3, 4)))),
        # a first gradient that depends on x: its second derivative runs the scatter's own backward
        OpInfo("sort values squared", lambda lib, x: lib.sort(x).values ** 2, fixed(s((3, 4)), s((5,), dtype=F64))),
        OpInfo("max dim values squared", lambda lib, x: x.max(0).values ** 2, fixed(s((3, 4)))),
        OpInfo("kthvalue", lambda lib, x: lib.kthvalue(x, 1), _red(ints=True, empty=(0, 3))),
        OpInfo("kthvalue k=2 dim=0 keepdim", lambda lib, x: x.kthvalue(2, 0, True),
               fixed(s((3, 4)), s((2, 3, 4)), snc((3, 4)), s((3,), dtype=F64))),
        OpInfo("unique", lambda lib, x: lib.unique(_rg(x), return_inverse=True, return_counts=True),
               fixed(lambda rng: Sample((rng.integers(0, 4, (3, 5)).astype(F32),), "repeats"), s((0,)), s(()),
                     lambda rng: Sample((rng.integers(0, 4, (6,)),), "int64")), grad=False),
        OpInfo("unique dim=0", lambda lib, x: x.unique(dim=0, return_inverse=True),
               fixed(lambda rng: Sample((rng.integers(0, 2, (5, 2)).astype(F64),), "repeated rows")), grad=False),
    ]
    return out


def _family_entries():
    return [*_elementwise_entries(), *_reduction_family_entries(), *_sorting_entries()]


# ---------------------------------------------------------------- h-surface: torch names bound to what ember has
def _red_code(lib, name):
    return {"none": 0, "mean": 1, "sum": 2}[name]


def _surface_binding_entries():
    """torch.* / Tensor.* spellings over existing ops: values, grads and second grads against torch."""
    x34, x234 = fixed(s((3, 4)), s((2, 3, 4), dtype=F64), snc((3, 4))), fixed(s((2, 3, 4)), s((2, 3, 4), dtype=F64))
    pair = fixed(s((3, 4), (3, 4)), s((2, 5), (2, 5), dtype=F64))
    signs = lambda rng: Sample((_r(rng, (4,)), _r(rng, (4,)), np.sign(_r(rng, (4,))).astype(F32)), "+-1")  # noqa
    out = [
        OpInfo("torch.softmax", lambda lib, x: lib.softmax(x, 1), x34, atol=1e-4),
        OpInfo("Tensor.softmax dtype", lambda lib, x: x.softmax(-1, dtype=lib.float64), x34, atol=1e-4),
        OpInfo("torch.log_softmax", lambda lib, x: lib.log_softmax(x, 0), x34, atol=1e-4),
        OpInfo("Tensor.log_softmax", lambda lib, x: x.log_softmax(-1), x34, atol=1e-4),
        OpInfo("torch.dropout eval", lambda lib, x: lib.dropout(x, 0.3, False), x34),
        OpInfo("torch.layer_norm", lambda lib, x, w, b: lib.layer_norm(x, (4,), w, b, 1e-5, True),
               fixed(s((2, 3, 4), (4,), (4,)), s((3, 4), (4,), (4,), dtype=F64)), atol=1e-4, check_grad_fn=False),
        OpInfo("torch.group_norm", lambda lib, x, w, b: lib.group_norm(x, 2, w, b, 1e-5, True),
               fixed(s((2, 4, 3), (4,), (4,)), s((3, 4, 2, 2), (4,), (4,), dtype=F64)), atol=1e-4, check_grad_fn=False),
        OpInfo("torch.batch_norm", lambda lib, x, w, b: lib.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
               fixed(s((5, 3), (3,), (3,), dtype=F64), s((4, 3, 2), (3,), (3,), dtype=F64)), atol=1e-6,
                      check_grad_fn=False),
        OpInfo("torch.instance_norm", lambda lib, x: lib.instance_norm(x, None, None, None, None, True, 0.1, 1e-5,
                                                                       True), fixed(s((2, 3, 5), dtype=F64)),
               atol=1e-6, check_grad_fn=False),
        OpInfo("torch.rms_norm", lambda lib, x, w: lib.rms_norm(x, (4,), w, 1e-6), fixed(s((3, 4), (4,), dtype=F64)),
               check_grad_fn=False),
        OpInfo("torch.cosine_similarity", lambda lib, a, b: lib.cosine_similarity(a, b, 1, 1e-8), pair,
               check_grad_fn=False),
        OpInfo("torch.pairwise_distance", lambda lib, a, b: lib.pairwise_distance(a, b, 2.0, 1e-6, True), pair,
               check_grad_fn=False),
        OpInfo("torch.kl_div", lambda lib, a, b: lib.kl_div(a, b.softmax(-1), 2, log_target=False), pair,
               check_grad_fn=False),
        OpInfo("torch.kl_div log_target", lambda lib, a, b: lib.kl_div(a, b, 0, log_target=True), pair,
               check_grad_fn=False),
        OpInfo("torch.prelu", lambda lib, x, w: lib.prelu(x, w), fixed(s((2, 3, 4), (3,), dtype=F64)),
               check_grad_fn=False),
        OpInfo("Tensor.prelu", lambda lib, x, w: x.prelu(w), fixed(s((2, 3), (1,), dtype=F64)), check_grad_fn=False),
        OpInfo("torch.selu", lambda lib, x: lib.selu(x), unary_samples(away=True)),
        OpInfo("torch.celu", lambda lib, x: lib.celu(x, 0.7), unary_samples(away=True)),
        OpInfo("torch.threshold", lambda lib, x: lib.threshold(x, 0.2, -1.0), unary_samples(away=True)),
        OpInfo("torch.hardshrink", lambda lib, x: lib.hardshrink(x, 0.3) * 1,
               fixed(lambda rng: Sample((np.array([-1.2, -0.5, -0.1, 0.2, 0.31, 2.0], F64),), "around lambd"))),
        OpInfo("Tensor.hardshrink", lambda lib, x: x.hardshrink(), unary_samples(away=True)),
        OpInfo("torch.rrelu eval", lambda lib, x: lib.rrelu(x, 0.1, 0.3, False), unary_samples(away=True)),
        OpInfo("torch.bilinear", lambda lib, a, b, w, c: lib.bilinear(a, b, w, c),
               fixed(s((4, 3), (4, 2), (5, 3, 2), (5,), dtype=F64)), check_grad_fn=False),
        OpInfo("torch.binary_cross_entropy_with_logits", lambda lib, x, t: lib.binary_cross_entropy_with_logits(
            x, t.sigmoid().detach(), None, None, 1), pair, check_grad_fn=False),
        OpInfo("torch.margin_ranking_loss", lambda lib, a, b, t: lib.margin_ranking_loss(a, b, t.detach(), 0.1, 2),
               fixed(signs), check_grad_fn=False),
        OpInfo("torch.hinge_embedding_loss", lambda lib, a, b, t: lib.hinge_embedding_loss(a * 2, t.detach(), 1.0, 1)
               + b.sum() * 0, fixed(signs), check_grad_fn=False),
        OpInfo("torch.hinge_embedding_loss none", lambda lib, a, b, t: lib.hinge_embedding_loss(
            a * 2, t.detach(), 0.5, 0), fixed(signs), check_grad_fn=False),
        OpInfo("torch.cosine_embedding_loss", lambda lib, a, b: lib.cosine_embedding_loss(
            a, b, lib.tensor([1.0, -1.0, 1.0], device=a.device), 0.0, 1), fixed(s((3, 4), (3, 4), dtype=F64)), check_grad_fn=False),
        OpInfo("torch.triplet_margin_loss", lambda lib, a, p, n: lib.triplet_margin_loss(a, p, n, 1.0, 2, 1e-6,
                                                                                         False, 1),
               fixed(s((3, 4), (3, 4), (3, 4), dtype=F64)), check_grad_fn=False),
        OpInfo("torch.poisson_nll_loss", lambda lib, x, t: lib.poisson_nll_loss(x, t.abs().detach(), True, False,
                                                                                1e-8, 1),
               pair, check_grad_fn=False),
        OpInfo("torch.convolution 2-d", lambda lib, x, w, b: lib.convolution(x, w, b, [2, 1], [1, 0], [1, 1], False,
                                                                              [0, 0], 1),
               fixed(s((2, 3, 5, 4), (4, 3, 3, 2), (4,), dtype=F64)), check_grad_fn=False),
        OpInfo("torch.convolution transposed 1-d", lambda lib, x, w: lib.convolution(x, w, None, [2], [1], [1], True,
                                                                                     [1], 1),
               fixed(s((2, 3, 5), (3, 2, 3), dtype=F64)), check_grad_fn=False),
        OpInfo("torch.max_pool1d_with_indices", lambda lib, x: lib.max_pool1d_with_indices(x, 2),
               fixed(s((2, 3, 6), dtype=F64))),
        OpInfo("torch.ravel", lambda lib, x: lib.ravel(x), x34, check_grad_fn=False),
        OpInfo("Tensor.ravel", lambda lib, x: x.ravel(), x34, check_grad_fn=False),
        OpInfo("torch.positive", lambda lib, x: lib.positive(x) * 2, x34),
        OpInfo("torch.sgn", lambda lib, x: lib.sgn(x) * x, unary_samples(away=True), check_grad_fn=False),
        OpInfo("Tensor.sgn_", lambda lib, x: (x * 1).sgn_() * x, fixed(s((3, 4))), check_grad_fn=False),
        OpInfo("torch.fill", lambda lib, x: lib.fill(x, 2.5) + x, x34),
        # (complex=False: torch adds a real nan/inf tensor to a complex one through a complex product, whose imaginary
        # part 0 * inf is nan; ember's sum keeps the imaginary part)
        OpInfo("torch.angle", lambda lib, x: lib.angle(x) + x, fixed(_special(-1.0, 0.0, 2.0, np.nan, -np.inf)),
               complex=False),
        OpInfo("Tensor.angle", lambda lib, x: x.angle(), unary_samples(away=True, ints=True)),
        OpInfo("torch.conj/resolve_*", lambda lib, x: lib.conj(x) * lib.resolve_conj(x) * lib.resolve_neg(x), x34),
        OpInfo("torch.conj_physical", lambda lib, x: lib.conj_physical(x) * 2, x34, check_grad_fn=False),
        OpInfo("Tensor.real", lambda lib, x: x.real * lib.real(x), x34),
        OpInfo("torch.adjoint", lambda lib, x: lib.adjoint(x) * 1, x234),
        OpInfo("torch.dist", lambda lib, a, b: lib.dist(a, b), pair, check_grad_fn=False),
        OpInfo("Tensor.dist p=3", lambda lib, a, b: a.dist(b, 3), pair, check_grad_fn=False),
        OpInfo("torch.frobenius_norm", lambda lib, x: _quiet(lambda: lib.frobenius_norm(x, (0, 1))), x34,
               check_grad_fn=False),
        OpInfo("torch.chain_matmul", lambda lib, a, b, c: _quiet(lambda: lib.chain_matmul(a, b, c)),
               fixed(s((2, 3), (3, 4), (4, 2), dtype=F64)), check_grad_fn=False),
        OpInfo("torch.channel_shuffle", lambda lib, x: lib.channel_shuffle(x, 2) * 1, fixed(s((2, 4, 3), dtype=F64)),
               check_grad_fn=False),
        OpInfo("torch.split_with_sizes", lambda lib, x: lib.split_with_sizes(x, [1, 3], -1), x34),
        OpInfo("Tensor.unsafe_split", lambda lib, x: x.unsafe_split(2, 1), x34, check_grad_fn=False),
        OpInfo("torch.unsafe_chunk", lambda lib, x: lib.unsafe_chunk(x, 2, 0), x234, check_grad_fn=False),
        OpInfo("torch.narrow_copy", lambda lib, x: lib.narrow_copy(x, 1, 1, 2), x34, check_grad_fn=False),
        OpInfo("torch.permute_copy", lambda lib, x: lib.permute_copy(x, (2, 0, 1)), x234, check_grad_fn=False),
        OpInfo("torch.view_copy", lambda lib, x: lib.view_copy(x, (6, 4)), x234, check_grad_fn=False),
        OpInfo("torch.transpose_copy", lambda lib, x: lib.transpose_copy(x, 0, 2), x234, check_grad_fn=False),
        OpInfo("torch.diagonal_copy", lambda lib, x: lib.diagonal_copy(x, 1), x34, check_grad_fn=False),
        OpInfo("torch.slice_copy", lambda lib, x: lib.slice_copy(x, 1, 1, 4, 2), x34, check_grad_fn=False),
        OpInfo("torch.unbind_copy", lambda lib, x: lib.unbind_copy(x, 1), x34, check_grad_fn=False),
        OpInfo("torch.expand_copy", lambda lib, x: lib.expand_copy(x, (2, 3, 4)), fixed(s((3, 1))),
               check_grad_fn=False),
        OpInfo("Tensor.isclose", lambda lib, a, b: a.isclose(b), pair, grad=False),
        OpInfo("Tensor.bmm", lambda lib, a, b: a.bmm(b), fixed(s((2, 3, 4), (2, 4, 5), dtype=F64))),
        OpInfo("Tensor.cumsum_", lambda lib, x: (x * 1).cumsum_(1), x34),
        OpInfo("Tensor.cumprod_", lambda lib, x: (x * 1).cumprod_(0), fixed(s((3, 4), dtype=F64))),
        OpInfo("Tensor.addmm_", lambda lib, x, a, b: (x * 1).addmm_(a, b, beta=0.5),
               fixed(s((3, 2), (3, 4), (4, 2), dtype=F64))),
        OpInfo("Tensor.eq_ lt_ logical_and_", lambda lib, a, b: ((a * 1).eq_(b), (a * 1).lt_(b),
                                                                (a * 1).logical_and_(b > 0)), pair, grad=False),
        OpInfo("Tensor.bitwise_or_", lambda lib, a, b: a.clone().bitwise_or_(b),
               fixed(lambda rng: Sample((_ints(rng, (3, 4)), _ints(rng, (4,))), "int")), grad=False),
        OpInfo("Tensor.t_", lambda lib, x: (x * 1).t_() * 2, fixed(s((3, 4)), s((5,))), check_grad_fn=False),
        OpInfo("Tensor.transpose_ unsqueeze_ squeeze_", lambda lib, x: (x * 1).transpose_(0, 1).unsqueeze_(1)
               .squeeze_(1) * 2, x234, check_grad_fn=False),
        OpInfo("Tensor.swapdims_", lambda lib, x: (x * 1).swapdims_(0, 2), x234, check_grad_fn=False),
        OpInfo("torch.as_strided", lambda lib, x: lib.as_strided(x, (3, 2), (2, 1), 1),
               fixed(s((8,)), s((8,), dtype=F64))),
        OpInfo("as_strided overlapping", lambda lib, x: x.as_strided((3, 3), (1, 1)) * 1, fixed(s((5,)))),
        OpInfo("as_strided 2-d", lambda lib, x: lib.as_strided(x, (2, 2), (4, 1), 1), fixed(s((3, 4)))),
        OpInfo("torch.as_strided_copy", lambda lib, x: lib.as_strided_copy(x, (2, 3), (1, 2)), fixed(s((6,))),
               check_grad_fn=False),
        OpInfo("Tensor.unfold", lambda lib, x: x.unfold(1, 2, 1), fixed(s((3, 4)), s((2, 5), dtype=F64))),
        OpInfo("Tensor.unfold step", lambda lib, x: x.unfold(0, 3, 2) * 1, fixed(s((7, 2)), snc((7, 2)))),
        OpInfo("Tensor.unfold 0-d", lambda lib, x: x.unfold(0, 1, 1), fixed(s(()))),
        OpInfo("Tensor.unfold empty windows", lambda lib, x: x.unfold(-1, 0, 1), fixed(s((3, 4)))),
        OpInfo("torch.unfold_copy", lambda lib, x: lib.unfold_copy(x, 0, 2, 1), fixed(s((5,))), check_grad_fn=False),
    ]
    return out


def _int_pair(rng):
    return Sample((rng.integers(-30, 30, (3, 4)), rng.integers(-12, 12, (4,))), "int64")


def _surface_op_entries():
    """New elementwise ops (ops/elementwise.py h-surface rows; special kernels in ops/_special.py)."""
    f64 = lambda *v: _special(*v)  # noqa: E731
    f64lohi = dict(dtype=F64, lo=0.2, hi=4.0)
    gamma_pts = f64(-3.7, -2.5, -1.25, -0.3, 0.01, 0.5, 1.0, 1.5, 2.0, 3.3, 10.5, 14.9, 15.2, 30.7, 170.2, 1e4)
    out = [
        OpInfo("torch.lgamma", lambda lib, x: lib.lgamma(x), unary_samples(0.2, 6.0, ints=True)),
        OpInfo("lgamma wide", lambda lib, x: lib.lgamma(x), fixed(gamma_pts), rtol=1e-6),
        OpInfo("torch.digamma", lambda lib, x: lib.digamma(x), unary_samples(0.2, 6.0, ints=True), rtol=1e-3),
        OpInfo("digamma wide", lambda lib, x: x.digamma(), fixed(gamma_pts), rtol=1e-6),
        OpInfo("torch.polygamma 1", lambda lib, x: lib.polygamma(1, x), unary_samples(0.3, 6.0, f16=False),
               rtol=1e-3),
        OpInfo("polygamma 2 wide", lambda lib, x: lib.polygamma(2, x), fixed(gamma_pts), rtol=1e-6),
        OpInfo("Tensor.polygamma 3", lambda lib, x: x.polygamma(3), fixed(gamma_pts), rtol=1e-6),
        OpInfo("Tensor.polygamma_", lambda lib, x: (x * 1).polygamma_(1), fixed(s((3, 4), dtype=F64, lo=0.5, hi=3)),
               check_grad_fn=False),
        OpInfo("torch.mvlgamma", lambda lib, x: lib.mvlgamma(x, 3), unary_samples(1.5, 5.0, f16=False),
               check_grad_fn=False),
        OpInfo("Tensor.mvlgamma_", lambda lib, x: (x * 1).mvlgamma_(1), fixed(s((3, 4), dtype=F64, lo=0.5, hi=3)),
               check_grad_fn=False),
        OpInfo("torch.i0", lambda lib, x: lib.i0(x), unary_samples(-4.0, 4.0, ints=True, f16=False)),
        OpInfo("i0 float16", lambda lib, x: lib.i0(x), fixed(s((3, 4), dtype=F16)), grad=False),
        OpInfo("i0 wide", lambda lib, x: x.i0(), fixed(f64(-45.0, -30.5, -29.5, -3.0, -1e-3, 0.0, 2.5, 29.9, 30.1, 80.0,
                                                          700.0))),
        OpInfo("torch.sinc", lambda lib, x: lib.sinc(x), unary_samples(-3.0, 3.0, ints=True, bf16=False), atol=1e-4),
        # (in bfloat16 near 0 both libraries' second derivatives are rounding noise: compared away from it)
        OpInfo("torch.sinc bfloat16", lambda lib, x: lib.sinc(x), fixed(s((3, 4), dtype=BF16, lo=0.5, hi=3.0))),
        OpInfo("sinc at integers", lambda lib, x: x.sinc(), fixed(f64(1e-2, 0.5, -1.0, 2.0, 7.25))),
        # torch's second derivative at 0 is NaN (its formula divides by x): compare values and first grads there
        OpInfo("sinc at 0", lambda lib, x: x.sinc(), fixed(f64(0.0, -0.0, 1.5)), gradgrad=False),
        OpInfo("torch.deg2rad", lambda lib, x: lib.deg2rad(x), unary_samples(ints=True)),
        OpInfo("torch.rad2deg", lambda lib, x: lib.rad2deg(x), unary_samples(ints=True)),
        OpInfo("Tensor.deg2rad_ rad2deg_", lambda lib, x: (x * 1).deg2rad_().rad2deg_().sinc_().lgamma_() + x,
               fixed(s((3, 4), dtype=F64, lo=0.5, hi=2))),
        OpInfo("Tensor.digamma_ i0_", lambda lib, x: (x * 1).digamma_().i0_(), fixed(s((3, 4), dtype=F64, lo=1, hi=3))),
        OpInfo("torch.heaviside", lambda lib, x, v: lib.heaviside(_rg(x), v),
               fixed(lambda rng: Sample((np.array([-1.5, 0.0, 2.0, 0.0], F32), np.array([0.5, 0.5, 0.5, 3.0], F32)),
                                        "zeros"),
                     lambda rng: Sample((np.array([[-1, 0, 2]]), np.array([[7], [-1]])), "int broadcast")),
               grad=False),
        OpInfo("Tensor.heaviside_", lambda lib, x, v: x.clone().heaviside_(v), fixed(s((3, 4), (4,))), grad=False),
        OpInfo("torch.gcd", lambda lib, a, b: lib.gcd(a, b), fixed(_int_pair), grad=False),
        OpInfo("Tensor.lcm", lambda lib, a, b: a.lcm(b), fixed(_int_pair), grad=False),
        OpInfo("Tensor.gcd_ lcm_", lambda lib, a, b: (a.clone().gcd_(b), a.clone().lcm_(b)), fixed(_int_pair),
               grad=False),
        OpInfo("torch.nextafter", lambda lib, a, b: lib.nextafter(a, b),
               fixed(s((3, 4), (4,)), s((2,), (2,), dtype=F64))),
        OpInfo("torch.ldexp", lambda lib, x, e: lib.ldexp(x, e),
               # torch's gradient for negative integer exponents is 0 (it computes 2**other in integers): not copied
               fixed(lambda rng: Sample((_r(rng, (3, 4)), rng.integers(0, 4, (4,))), "f32-int"),
                     lambda rng: Sample((_r(rng, (2, 3), F64), _r(rng, (3,), F64)), "f64-f64"),
                     lambda rng: Sample((rng.integers(-3, 4, (3,)), rng.integers(0, 4, (3,))), "int-int"))),
        OpInfo("Tensor.ldexp_", lambda lib, x, e: (x * 1).ldexp_(e), fixed(s((3, 4), (4,), dtype=F64))),
        OpInfo("torch.float_power", lambda lib, a, b: lib.float_power(a, b), binary_samples(0.5, 2.0, -2.0, 2.0)),
        OpInfo("float_power scalar", lambda lib, a: lib.float_power(a, 2.5) + lib.float_power(2, a),
               unary_samples(0.5, 2.0, ints=True)),
        OpInfo("Tensor.float_power_", lambda lib, a, b: (a * 1).float_power_(b), fixed(s((3, 4), (4,), dtype=F64,
                                                                                        lo=0.5, hi=2))),
        # igamma/igammac: torch has no derivative for the first argument (a); gradients for x
        OpInfo("torch.igamma", lambda lib, a, x: lib.igamma(a.detach().abs() + 0.1, x),
               binary_samples(0.1, 3.0, 0.1, 6.0, ints=False)),
        OpInfo("torch.igammac", lambda lib, a, x: lib.igammac(a.detach().abs() + 0.1, x),
               binary_samples(0.1, 3.0, 0.1, 6.0, ints=False)),
        OpInfo("igamma large", lambda lib, a, x: (lib.igamma(a.detach(), x), a.detach().igammac(x)),
               fixed(lambda rng: Sample((np.array([0.5, 30.0, 135.5, 1e3, 2.0]), np.array([0.01, 45.0, 141.2, 990.0,
                                                                                         0.0])), "wide")),
               rtol=1e-9),
        OpInfo("Tensor.igamma_", lambda lib, a, x: (a.detach() * 1).igamma_(x), fixed(s((3, 4), (4,), **f64lohi))),
        OpInfo("torch.frexp", lambda lib, x: lib.frexp(x), unary_samples()),
        OpInfo("Tensor.frexp specials", lambda lib, x: x.frexp(), fixed(f64(0.0, -0.0, 1.0, -3.5, 1e-30, 1e30))),
    ]
    return out


def _spd_sample(rng):
    a = rng.standard_normal((3, 3))
    return a @ a.T + 3 * np.eye(3)


def _surface_composite_entries():
    """torch functions composed from ember ops (ops/composites.py, statistics.py, solve.py ...): values, grads and second grads vs torch."""
    x34 = fixed(s((3, 4)), s((2, 3, 4), dtype=F64), snc((3, 4)))
    f64 = dict(dtype=F64)
    ties = lambda rng: Sample((np.array([[1.0, 2, 2, 3, 3], [5, 5, 4, 4, 1]]),), "ties")  # noqa: E731
    nans = lambda rng: Sample((np.array([[1.0, np.nan, 3, 2], [0.5, 4, np.nan, np.nan]]),), "nan")  # noqa: E731
    chol = lambda rng: Sample((_r(rng, (3, 2), F64), np.linalg.cholesky(_spd_sample(rng))), "B, L")  # noqa: E731
    out = [
        OpInfo("torch.aminmax", lambda lib, x: tuple(lib.aminmax(x, dim=1)), x34, check_grad_fn=False),
        OpInfo("Tensor.aminmax all keepdim", lambda lib, x: tuple(x.aminmax(keepdim=True)), x34, check_grad_fn=False),
        OpInfo("torch.mode", lambda lib, x: tuple(lib.mode(x, 1)), fixed(ties), check_grad_fn=False),
        OpInfo("Tensor.mode keepdim", lambda lib, x: tuple(x.mode(0, True)), fixed(ties), check_grad_fn=False),
        OpInfo("torch.nanmedian dim", lambda lib, x: tuple(lib.nanmedian(x, 1)), fixed(nans, s((3, 5), **f64)),
               check_grad_fn=False),
        OpInfo("Tensor.nanmedian", lambda lib, x: x.nanmedian(), fixed(nans, s((4, 3), **f64)), check_grad_fn=False),
        OpInfo("torch.quantile", lambda lib, x: lib.quantile(x, 0.3), fixed(s((3, 5), **f64), s((7,), **f64)),
               check_grad_fn=False),
        OpInfo("torch.quantile q tensor dim", lambda lib, x: lib.quantile(x, lib.tensor([0.1, 0.5, 1.0], device=x.device,
                                                                                         dtype=lib.float64), 1,
                                                                          True), fixed(s((3, 5), **f64)),
               check_grad_fn=False),
        *(OpInfo(f"quantile {m}", (lambda m: lambda lib, x: x.quantile(0.37, 0, interpolation=m))(m),
                 fixed(s((6, 2), **f64)), check_grad_fn=False)
          for m in ("lower", "higher", "midpoint", "nearest")),
        OpInfo("quantile nan", lambda lib, x: lib.quantile(x, 0.5, dim=1), fixed(nans), check_grad_fn=False),
        OpInfo("torch.nanquantile", lambda lib, x: lib.nanquantile(x, lib.tensor([0.25, 0.75], dtype=lib.float64, device=x.device),
                                                                   dim=1), fixed(nans), check_grad_fn=False),
        OpInfo("torch.msort", lambda lib, x: lib.msort(x), x34, check_grad_fn=False),
        OpInfo("torch.logcumsumexp", lambda lib, x: lib.logcumsumexp(x, 1), fixed(s((3, 5)), s((2, 7, 2), **f64),
                                                                                  s((3, 1)), s((2, 0))),
               check_grad_fn=False),
        OpInfo("Tensor.logcumsumexp 1-d", lambda lib, x: x.logcumsumexp(-1), fixed(s((4,), **f64), s(())),
               check_grad_fn=False),
        OpInfo("logcumsumexp large", lambda lib, x: x.logcumsumexp(0) * 1,
               # second derivative: ember's log-add scan meets exp(2000) * 0 in logaddexp's own backward
               fixed(_special(1000.0, -1000.0, 3.0, 1000.0, -5.0)), check_grad_fn=False, gradgrad=False),
        OpInfo("torch.diff", lambda lib, x: lib.diff(x), x34, check_grad_fn=False),
        OpInfo("torch.diff n=2 dim0 prepend", lambda lib, x, p: lib.diff(x, 2, 0, prepend=p),
               fixed(s((3, 4), (2, 4), **f64)), check_grad_fn=False),
        OpInfo("torch.gradient", lambda lib, x: lib.gradient(x), fixed(s((4, 5), **f64)), check_grad_fn=False),
        OpInfo("torch.gradient spacing edge2", lambda lib, x: lib.gradient(x, spacing=0.5, dim=1, edge_order=2),
               fixed(s((3, 5), **f64)), check_grad_fn=False),
        OpInfo("torch.trapezoid", lambda lib, y: lib.trapezoid(y), x34, check_grad_fn=False),
        OpInfo("torch.trapezoid x", lambda lib, y, x: lib.trapezoid(y, x, dim=0), fixed(s((4, 3), (4,), **f64)),
               check_grad_fn=False),
        OpInfo("torch.trapz dx", lambda lib, y: lib.trapz(y, dx=0.5), x34, check_grad_fn=False),
        OpInfo("torch.cumulative_trapezoid", lambda lib, y: lib.cumulative_trapezoid(y, dx=2.0), x34,
               check_grad_fn=False),
        OpInfo("torch.cartesian_prod", lambda lib, a, b: lib.cartesian_prod(a, b), fixed(s((3,), (2,), **f64)),
               check_grad_fn=False),
        OpInfo("torch.combinations", lambda lib, a: lib.combinations(a, 2), fixed(s((4,), **f64)),
               check_grad_fn=False),
        OpInfo("torch.combinations r=3 replacement", lambda lib, a: lib.combinations(a, 3, True), fixed(s((3,), **f64)),
               check_grad_fn=False),
        OpInfo("torch.block_diag", lambda lib, a, b, c: lib.block_diag(a, b, c), fixed(s((2, 3), (4,), (), **f64)),
               check_grad_fn=False),
        # torch's vander cannot be differentiated (its cumprod runs in place on a view): values against
        # torch.vander, gradients against torch's cumprod of the same columns
        OpInfo("torch.vander", lambda lib, x: lib.vander(x), fixed(s((4,), **f64), _special(0.0, 1.5, -2.0)),
               check_grad_fn=False, grad=False),
        OpInfo("torch.vander N increasing", lambda lib, x: lib.vander(x, 3, True), fixed(s((4,), **f64)),
               check_grad_fn=False, grad=False),
        OpInfo("vander gradients", lambda lib, x: lib.vander(x) if lib.__name__ == "ember" else
               lib.cat([lib.ones(4, 1, dtype=x.dtype), x.unsqueeze(1).expand(4, 3)], 1).cumprod(1).flip(1),
               fixed(s((4,), **f64), _special(0.0, 1.5, -2.0, 0.0)), check_grad_fn=False),
        OpInfo("torch.cov", lambda lib, x: lib.cov(x), fixed(s((3, 6), **f64), s((5,), **f64)), check_grad_fn=False),
        OpInfo("torch.cov weights", lambda lib, x, aw: lib.cov(x, correction=0, fweights=lib.tensor([1, 2, 1, 3], device=x.device),
                                                             aweights=aw.abs() + 0.1),
               fixed(s((2, 4), (4,), **f64)), check_grad_fn=False),
        OpInfo("torch.corrcoef", lambda lib, x: lib.corrcoef(x), fixed(s((3, 6), **f64)), check_grad_fn=False),
        # torch's cdist/pdist have no second derivative ("_cdist_backward" is not differentiable)
        OpInfo("torch.cdist", lambda lib, a, b: lib.cdist(a, b), fixed(s((3, 4), (5, 4), **f64),
                                                                      s((2, 3, 2), (2, 4, 2), **f64)),
               check_grad_fn=False, gradgrad=False),
        OpInfo("torch.cdist p=1", lambda lib, a, b: lib.cdist(a, b, 1.0), fixed(s((3, 4), (5, 4), **f64)),
               check_grad_fn=False, gradgrad=False),
        # more than 25 rows: torch's matrix-product form (EuclideanDistBackward0 under a view), twice differentiable
        OpInfo("torch.cdist matrix-product form", lambda lib, a, b: lib.cdist(a, b),
               fixed(s((30, 4), (27, 4), **f64), s((2, 26, 3), (2, 31, 3), **f64), s((3, 40, 5), (1, 28, 5)))),
        OpInfo("torch.cdist use_mm_for_euclid_dist", lambda lib, a, b: lib.cdist(
            a, b, compute_mode="use_mm_for_euclid_dist"), fixed(s((3, 4), (5, 4), **f64))),
        OpInfo("torch.pdist", lambda lib, a: lib.pdist(a), fixed(s((4, 3), **f64)), check_grad_fn=False,
               gradgrad=False),
        OpInfo("torch.renorm", lambda lib, x: lib.renorm(x, 2, 0, 1.0), fixed(s((4, 3), **f64)), check_grad_fn=False),
        OpInfo("Tensor.renorm_ p=1 dim1", lambda lib, x: (x * 1).renorm_(1, 1, 1.5), fixed(s((4, 3), **f64)),
               check_grad_fn=False),
        OpInfo("torch.matrix_exp", lambda lib, a: lib.matrix_exp(a), fixed(s((3, 3), **f64), s((2, 4, 4), **f64),
                                                                        s((3, 3)), lambda rng: Sample((
                                                                            5 * _r(rng, (3, 3), F64),), "norm 15")),
               check_grad_fn=False, rtol=1e-6),
        OpInfo("torch.select_scatter", lambda lib, x, v: lib.select_scatter(x, v, 0, 1), fixed(s((3, 4), (4,))),
               check_grad_fn=False),
        OpInfo("torch.slice_scatter", lambda lib, x, v: lib.slice_scatter(x, v, 1, 0, 4, 2), fixed(s((3, 4), (3, 2))),
               check_grad_fn=False),
        OpInfo("torch.diagonal_scatter", lambda lib, x, v: lib.diagonal_scatter(x, v, 1), fixed(s((3, 4), (3,))),
               check_grad_fn=False),
        # values only: torch's gradient for ``input`` is the complement of the right mask (ember's: the
        # positions not overwritten, see tests/core/test_api_surface.py)
        OpInfo("torch.as_strided_scatter", lambda lib, x, v: lib.as_strided_scatter(x, v, (2, 2), (1, 2), 1),
               fixed(s((3, 3), (2, 2))), check_grad_fn=False, grad=False),
        OpInfo("Tensor.index_reduce", lambda lib, x, v: x.index_reduce(0, lib.tensor([0, 2, 0], device=x.device), v, "prod"),
               fixed(s((3, 4), (3, 4), **f64)), check_grad_fn=False),
        OpInfo("torch.index_reduce mean", lambda lib, x, v: lib.index_reduce(x, 1, lib.tensor([1, 1]), v, "mean",
                                                                             include_self=False),
               fixed(s((3, 4), (3, 2), **f64)), check_grad_fn=False),
        OpInfo("Tensor.index_reduce_ amax", lambda lib, x, v: (x * 1).index_reduce_(0, lib.tensor([2, 0]), v, "amax"),
               fixed(s((3, 4), (2, 4), **f64)), check_grad_fn=False),
        OpInfo("torch.put", lambda lib, x, v: lib.put(x, lib.tensor([0, -1, 5]), v), fixed(s((3, 4), (3,))),
               check_grad_fn=False),
        OpInfo("Tensor.put_ accumulate", lambda lib, x, v: (x * 1).put_(lib.tensor([[1, 1], [2, 11]]), v, True),
               fixed(s((3, 4), (2, 2))), check_grad_fn=False),
        OpInfo("Tensor.fill_diagonal_", lambda lib, x: (x * 1).fill_diagonal_(2.5), fixed(s((3, 4)), s((5, 2), **f64)),
               check_grad_fn=False),
        OpInfo("Tensor.fill_diagonal_ wrap 3-d", lambda lib, x, y: ((x * 1).fill_diagonal_(-1.0, wrap=True),
                                                                   (y * 1).fill_diagonal_(3.0)),
               fixed(s((7, 3), (2, 2, 2))), check_grad_fn=False),
        OpInfo("torch.triangular_solve", lambda lib, b, a: tuple(lib.triangular_solve(b, a + 4 * lib.eye(3, device=a.device))),
               fixed(s((3, 2), (3, 3), **f64)), check_grad_fn=False),
        OpInfo("Tensor.triangular_solve lower T unit", lambda lib, b, a: tuple(b.triangular_solve(
            a, upper=False, transpose=True, unitriangular=True)), fixed(s((3, 2), (3, 3), **f64)),
               check_grad_fn=False),
        # (complex=False: a complexified factor has a complex diagonal, which no Cholesky factor has; LAPACK reads
        # only its real part: _complex_entries has complex factors)
        OpInfo("torch.cholesky_solve", lambda lib, b, l: lib.cholesky_solve(b, l), fixed(chol), check_grad_fn=False,
               complex=False),
        OpInfo("Tensor.cholesky_solve upper", lambda lib, b, l: b.cholesky_solve(l.mT, upper=True), fixed(chol),
               check_grad_fn=False, complex=False),
        OpInfo("torch.cholesky_inverse", lambda lib, b, l: lib.cholesky_inverse(l) + b.sum(), fixed(chol),
               check_grad_fn=False, complex=False),
        OpInfo("torch.lu", lambda lib, a: _quiet(lambda: lib.lu(a)[0]),
               fixed(s((4, 4), **f64), s((2, 3, 3), **f64), s((5, 3), **f64), s((3, 5), **f64)), check_grad_fn=False),
        OpInfo("Tensor.lu get_infos", lambda lib, a: _quiet(lambda: tuple(a.lu(get_infos=True))),
               fixed(s((3, 3), **f64)), check_grad_fn=False),
        OpInfo("torch.lu_unpack", lambda lib, a: _quiet(lambda: tuple(lib.lu_unpack(*lib.lu(a)))),
               fixed(s((4, 4), **f64), s((2, 4, 3), **f64)), check_grad_fn=False),
        OpInfo("torch.lu_solve", lambda lib, b, a: _quiet(lambda: lib.lu_solve(b, *lib.lu(a))),
               fixed(s((3, 2), (3, 3), **f64), s((2, 4, 1), (4, 4), **f64)), check_grad_fn=False),
        OpInfo("Tensor.lu_solve", lambda lib, b, a: _quiet(lambda: b.lu_solve(*a.lu())),
               fixed(s((3, 2), (3, 3), **f64)), check_grad_fn=False),
        OpInfo("Tensor.qr", lambda lib, a: tuple(a.qr()), fixed(s((4, 3), **f64)), check_grad_fn=False),
        OpInfo("torch.qr complete", lambda lib, a: tuple(lib.qr(a, some=False))[1], fixed(s((3, 3), **f64)),
               check_grad_fn=False),
    ]
    return out


def _surface_entries():
    return [*_surface_binding_entries(), *_surface_op_entries(), *_surface_composite_entries()]


# ---------------------------------------------------------------- complex numbers (ops/complex_numbers.py)
def _fft_entries():
    """torch.fft (ops/fft.py): each transform on real and complex inputs of both precisions, non-contiguous ones,
    every norm, n / s padding and cropping, chosen dims."""
    real = fixed(s((8,)), s((3, 6)), s((2, 5), dtype=F64), snc((4, 6)), s((1, 3)))
    both = fixed(s((3, 6)), cs((3, 6)), cs((2, 5), dtype=C128), s((4,), dtype=F64), csnc((4, 6)))
    half = fixed(cs((3, 4)), cs((2, 5), dtype=C128), cs((4,)), csnc((4, 5)))  # half spectra (any values)
    out = []
    for norm in (None, "ortho", "forward"):
        nk = f" norm={norm}" if norm else ""
        out += [
            OpInfo("fft.fft" + nk, lambda lib, x, nm=norm: lib.fft.fft(x, norm=nm), both),
            OpInfo("fft.ifft" + nk, lambda lib, x, nm=norm: lib.fft.ifft(x, norm=nm), both),
            OpInfo("fft.rfft" + nk, lambda lib, x, nm=norm: lib.fft.rfft(x, norm=nm), real),
            OpInfo("fft.irfft" + nk, lambda lib, x, nm=norm: lib.fft.irfft(x, norm=nm), half),
            OpInfo("fft.hfft" + nk, lambda lib, x, nm=norm: lib.fft.hfft(x, norm=nm), half),
            OpInfo("fft.ihfft" + nk, lambda lib, x, nm=norm: lib.fft.ihfft(x, norm=nm), real),
            OpInfo("fft.fftn" + nk, lambda lib, x, nm=norm: lib.fft.fftn(x, norm=nm), both),
            OpInfo("fft.rfftn" + nk, lambda lib, x, nm=norm: lib.fft.rfftn(x, norm=nm), real),
            OpInfo("fft.irfftn" + nk, lambda lib, x, nm=norm: lib.fft.irfftn(x, norm=nm), half),
            OpInfo("fft.hfftn" + nk, lambda lib, x, nm=norm: lib.fft.hfftn(x, norm=nm), half),
            OpInfo("fft.ihfftn" + nk, lambda lib, x, nm=norm: lib.fft.ihfftn(x, norm=nm), real),
        ]
    out += [
        OpInfo("fft.fft n pad dim 0", lambda lib, x: lib.fft.fft(x, n=5, dim=0), fixed(cs((3, 4)), s((3, 4)))),
        OpInfo("fft.ifft n crop", lambda lib, x: lib.fft.ifft(x, n=3), fixed(cs((3, 4)), s((2, 6), dtype=F64))),
        OpInfo("fft.rfft n odd", lambda lib, x: lib.fft.rfft(x, n=7), fixed(s((3, 4)), s((9,), dtype=F64))),
        OpInfo("fft.irfft n", lambda lib, x: (lib.fft.irfft(x, n=7), lib.fft.irfft(x, n=4), lib.fft.irfft(x, n=1)),
               fixed(cs((3, 4)), cs((5,), dtype=C128))),
        OpInfo("fft.hfft n", lambda lib, x: lib.fft.hfft(x, n=9, dim=0), fixed(cs((3, 4)))),
        OpInfo("fft.ihfft n", lambda lib, x: lib.fft.ihfft(x, n=5, dim=0), fixed(s((3, 4)))),
        OpInfo("fft.fft2", lambda lib, x: lib.fft.fft2(x), fixed(cs((3, 4)), s((2, 3, 4)), csnc((4, 5)))),
        OpInfo("fft.ifft2 s", lambda lib, x: lib.fft.ifft2(x, s=(2, 6)), fixed(cs((3, 4)), s((2, 3, 4), dtype=F64))),
        OpInfo("fft.rfft2", lambda lib, x: lib.fft.rfft2(x, dim=(0, 2)), fixed(s((3, 4, 5)))),
        OpInfo("fft.irfft2 s", lambda lib, x: lib.fft.irfft2(x, s=(4, 5)), fixed(cs((3, 4)), cs((2, 3, 4), dtype=C128))),
        OpInfo("fft.hfft2", lambda lib, x: lib.fft.hfft2(x), fixed(cs((3, 4)))),
        OpInfo("fft.ihfft2", lambda lib, x: lib.fft.ihfft2(x), fixed(s((3, 4)), s((2, 3, 4), dtype=F64))),
        OpInfo("fft.fftn s dim", lambda lib, x: lib.fft.fftn(x, s=(3, -1), dim=(2, 0)), fixed(cs((2, 3, 4)), s((2, 3, 4)))),
        OpInfo("fft.rfftn s", lambda lib, x: lib.fft.rfftn(x, s=(4, 6)), fixed(s((2, 3, 4)))),
        OpInfo("fft.irfftn s dim", lambda lib, x: lib.fft.irfftn(x, s=(5, 6), dim=(0, 1)), fixed(cs((3, 4, 2)))),
        OpInfo("fft.hfftn s", lambda lib, x: lib.fft.hfftn(x, s=(2, 7)), fixed(cs((3, 4)))),
        OpInfo("fft.ihfftn dim", lambda lib, x: lib.fft.ihfftn(x, dim=(0, 2)), fixed(s((3, 2, 4)))),
        OpInfo("fft.fftshift", lambda lib, x: (lib.fft.fftshift(x), lib.fft.fftshift(x, dim=-1)),
               fixed(s((4, 5)), cs((3, 4)))),
        OpInfo("fft.ifftshift", lambda lib, x: (lib.fft.ifftshift(x), lib.fft.ifftshift(x, dim=(0,))),
               fixed(s((4, 5)), cs((3, 4)))),
        OpInfo("fft.fft of ints", lambda lib, x: lib.fft.fft(x), fixed(lambda rng: Sample((_ints(rng, (5,)),), "int64")),
               grad=False),
        OpInfo("fft.rfft round trip", lambda lib, x: lib.fft.irfft(lib.fft.rfft(x), n=x.shape[-1]) * x,
               fixed(s((3, 7)), s((6,), dtype=F64))),
    ]
    return out


def _stft_entries():
    """torch.stft / istft (ops/stft.py; tests/ops/test_stft.py has the rest of their arguments)."""
    hann = lambda lib, n, x: lib.hann_window(n, dtype=x.dtype, device=x.device)  # noqa: E731
    return [
        OpInfo("stft", lambda lib, x: lib.stft(x, 8, 2, window=hann(lib, 8, x), return_complex=True),
               fixed(s((2, 20)), s((17,)), s((3, 16), dtype=F64))),
        OpInfo("stft win_length center=False", lambda lib, x: lib.stft(x, 8, 3, 6, hann(lib, 6, x), center=False,
                                                                       return_complex=True), fixed(s((2, 20)))),
        OpInfo("istft", lambda lib, x: lib.istft(lib.stft(x, 8, 2, window=hann(lib, 8, x), return_complex=True), 8, 2,
                                                 window=hann(lib, 8, x)), fixed(s((2, 20)), s((17,), dtype=F64))),
    ]


def _hpd(rng, n):
    """A Hermitian positive-definite complex128 matrix."""
    m = _c(rng, (n, n), C128)
    return m @ m.conj().T + n * np.eye(n)


def _complex_entries():
    cun = fixed(cs((3, 4)), cs(()), cs((2, 3), dtype=C128), csnc((3, 4)))
    parts = fixed(s((3, 4), (3, 4)), s((3, 1), (4,)), s((), (2,)), s((2, 3), (2, 3), dtype=F64), snc((3, 4), (3, 4)))
    away = fixed(cs((3, 4)), cs((2, 3), dtype=C128), csnc((3, 4)),
                 lambda rng: Sample((np.array([0, 1 + 1j, -2j, 3], C64),), "with 0"))
    return [
        OpInfo("view_as_real", lambda lib, z: lib.view_as_real(z), cun),
        # torch's ViewAsRealBackward0 fails on empty tensors ("must have a last dimension with stride 1")
        OpInfo("view_as_real empty", lambda lib, z: lib.view_as_real(z), fixed(cs((2, 0))), grad=False),
        OpInfo("view_as_real then op", lambda lib, z: lib.view_as_real(z * 2).sum(-1), cun),
        OpInfo("view_as_complex", lambda lib, x: lib.view_as_complex(x),
               fixed(s((3, 2)), s((2,)), s((2, 3, 2), dtype=F64))),
        # (made by zeros: torch gives a tensor made from an empty NumPy array strides (0, 0))
        OpInfo("view_as_complex empty", lambda lib, x: lib.view_as_complex(lib.zeros(0, 2, dtype=x.dtype, device=x.device)),
               fixed(s((0, 2))), grad=False),
        OpInfo("view_as_complex of a strided view", lambda lib, x: lib.view_as_complex(x[::2]), fixed(s((6, 2)))),
        OpInfo("real", lambda lib, z: z.real, cun),
        OpInfo("imag", lambda lib, z: z.imag, cun),
        OpInfo("torch.real/imag", lambda lib, z: (lib.real(z), lib.imag(z)), cun),
        OpInfo("real of real", lambda lib, x: lib.real(x) * 2, fixed(s((3,)))),
        OpInfo("conj", lambda lib, z: z.conj(), cun),
        OpInfo("conj then op", lambda lib, z: z.conj() * z, cun),
        OpInfo("conj of conj", lambda lib, z: lib.conj(z.conj()) + 1, cun),
        OpInfo("conj_physical", lambda lib, z: lib.conj_physical(z), cun),
        OpInfo("resolve_conj", lambda lib, z: z.conj().resolve_conj(), cun),
        OpInfo("mH", lambda lib, z: z.mH, fixed(cs((3, 4)), cs((2, 3, 4)))),
        OpInfo("adjoint", lambda lib, z: z.adjoint() @ z, fixed(cs((3, 4)), csnc((3, 4)))),
        OpInfo("complex", lambda lib, a, b: lib.complex(a, b), parts),
        OpInfo("polar", lambda lib, a, b: lib.polar(a.abs() + 0.1, b), parts),
        OpInfo("sgn", lambda lib, z: z.sgn(), away),
        OpInfo("torch.sgn real", lambda lib, x: lib.sgn(x), unary_samples(away=True, ints=True)),
        OpInfo("abs complex", lambda lib, z: z.abs(), away),
        OpInfo("angle complex", lambda lib, z: lib.angle(z), away),
        OpInfo("complex * real", lambda lib, z, x: z * x, fixed(lambda rng: Sample((_c(rng, (3, 4)), _r(rng, (4,))), "c64*f32"),
                                                                   lambda rng: Sample((_c(rng, (3,)), _r(rng, (3,), F64)), "c64*f64"))),
        OpInfo("complex python scalar", lambda lib, x: (x * (2 - 1j), (1 + 2j) / x, x + 1j, 1j - x),
               unary_samples(0.5, 2.0, f16=False, ints=True)),
        OpInfo("to complex", lambda lib, x: x.to(lib.complex64) * (1 + 1j), fixed(s((3,)), s((2, 3), dtype=F64))),
        OpInfo("complex to real", lambda lib, z: z.real.to(lib.float64) + z.imag, cun),
        OpInfo("vdot complex", lambda lib, a, b: lib.vdot(a, b), fixed(cs((4,), (4,)), cs((3,), (3,), dtype=C128))),
        OpInfo("linalg.vecdot complex", lambda lib, a, b: lib.linalg.vecdot(a, b), fixed(cs((3, 4), (3, 4)))),
        OpInfo("norm complex", lambda lib, z: (z.norm(), lib.linalg.vector_norm(z, 1, dim=0), z.norm(p=3)), away),
        OpInfo("cholesky_solve/inverse complex", lambda lib, b, l: (lib.cholesky_solve(b, l), lib.cholesky_inverse(l),
                                                                    b.cholesky_solve(l.mH, upper=True)),
               fixed(lambda rng: Sample((_c(rng, (3, 2), C128), np.linalg.cholesky(_hpd(rng, 3))), "B, L")),
               check_grad_fn=False),
        OpInfo("linalg.cholesky complex", lambda lib, a: lib.linalg.cholesky(a), fixed(lambda rng: Sample(
            (_hpd(rng, 3),), "hermitian pd"), lambda rng: Sample((_hpd(rng, 3).astype(C64),), "c64")),
               check_grad_fn=False),
        OpInfo("linalg.eigh complex", lambda lib, a: (lambda r: (r[0], r[1].abs()))(lib.linalg.eigh(a)),
               fixed(lambda rng: Sample((_hpd(rng, 3),), "hermitian")), check_grad_fn=False),
        OpInfo("var/std complex", lambda lib, z: (z.var(0), z.std(), *lib.var_mean(z, 1)), fixed(cs((3, 4)), cs((2, 3), dtype=C128))),
    ]


def _ctc_entries():
    """F.ctc_loss (not twice differentiable in torch either)."""
    def samples(rng):
        yield Sample((_r(rng, (6, 3, 5), F64), np.array([[1, 1, 2], [3, 4, 0], [2, 3, 4]]), np.array([6, 4, 5]),
                      np.array([3, 1, 3])), "T,N,C padded")
        yield Sample((_r(rng, (5, 4)), np.array([2, 3]), np.array(5), np.array(2)), "T,C unbatched")
    return [OpInfo(f"F.ctc_loss {red}", lambda lib, x, tg, il, tl, r=red: lib.nn.functional.ctc_loss(
        x.log_softmax(-1), tg, il, tl, reduction=r), samples, gradgrad=False) for red in ("mean", "sum", "none")]


def _nn_more_entries():
    """log-sigmoid, the shrinks and rrelu (eval; training draws random slopes: tests/nn/test_activation_more.py)."""
    def fn(name, *args, **kwargs):
        return lambda lib, x: getattr(lib.nn.functional, name)(x, *args, **kwargs)

    away = unary_samples(away=True)
    big = fixed(lambda rng: Sample((np.array([-100.0, -30.0, -1.0, 0.0, 2.0, 40.0, 800.0], F32),), "large |x|"))
    return [OpInfo("F.logsigmoid", fn("logsigmoid"), unary_samples()),
            OpInfo("F.logsigmoid large", fn("logsigmoid"), big),
            OpInfo("F.hardshrink", fn("hardshrink", 0.3), away),
            OpInfo("F.hardshrink default", fn("hardshrink"), away),
            OpInfo("F.softshrink", fn("softshrink", 0.3), away),
            OpInfo("F.softshrink zero", fn("softshrink", 0.0), away),
            OpInfo("F.rrelu eval", fn("rrelu", 0.1, 0.3), away),
            OpInfo("F.rrelu eval default", fn("rrelu"), away)]


def _cross_entropy_entries():
    """cross_entropy as one fused node (NOTE [fused cross-entropy]): class indices (with weights, ignore_index,
    label smoothing) and probabilities, every reduction, 1-d to 5-d inputs; torch's node name on the loss."""
    def ce(**kw):
        def fn(lib, x, t, *w):
            if w:
                kw["weight"] = w[0].detach()
            if t.dtype.is_floating_point:  # probabilities (no gradient: the fused node's case)
                t = lib.softmax(t.detach(), 1 if t.ndim > 1 else 0)
            return lib.nn.functional.cross_entropy(x, t, **kw)
        return fn

    def classes(*shapes_c):
        def gen(rng):
            for shape in shapes_c:
                c = shape[1] if len(shape) > 1 else shape[0]
                t = rng.integers(0, c, (shape[0],) + shape[2:] if len(shape) > 1 else ())
                if t.ndim:
                    t[..., ::3] = 1  # some targets on class 1 (the ignored class of some entries)
                yield Sample((_r(rng, shape), t, _r(rng, (c,), lo=0.2, hi=2.0)), f"{shape}")
            yield Sample((_r(rng, (4, 5), F64), rng.integers(0, 5, (4,)), _r(rng, (5,), F64, lo=0.2, hi=2.0)), "f64")
        return gen

    def probs(rng):
        for shape in ((4, 5), (5,), (2, 4, 3, 2), (2, 4, 3)):
            c = shape[1] if len(shape) > 1 else shape[0]
            yield Sample((_r(rng, shape), _r(rng, shape), _r(rng, (c,), lo=0.2, hi=2.0)), f"{shape}")

    shapes = ((6, 5), (5,), (3, 4, 2), (2, 4, 3, 2), (2, 3, 2, 2, 2))
    out = []
    for red in ("mean", "sum", "none"):
        out += [
            OpInfo(f"F.cross_entropy {red}", lambda lib, x, t, w, r=red: ce(reduction=r)(lib, x, t), classes(*shapes)),
            OpInfo(f"F.cross_entropy weight ignore_index {red}",
                   lambda lib, x, t, w, r=red: ce(reduction=r, ignore_index=1)(lib, x, t, w), classes(*shapes)),
            OpInfo(f"F.cross_entropy label_smoothing {red}",
                   lambda lib, x, t, w, r=red: ce(reduction=r, label_smoothing=0.2, ignore_index=1)(lib, x, t),
                   classes(*shapes)),
            OpInfo(f"F.cross_entropy weight label_smoothing {red}",
                   lambda lib, x, t, w, r=red: ce(reduction=r, label_smoothing=0.3)(lib, x, t, w), classes(*shapes)),
            OpInfo(f"F.cross_entropy probabilities {red}", lambda lib, x, t, w, r=red: ce(reduction=r)(lib, x, t), probs),
            OpInfo(f"F.cross_entropy probabilities weight smoothing {red}",
                   lambda lib, x, t, w, r=red: ce(reduction=r, label_smoothing=0.1)(lib, x, t, w), probs),
        ]
    every_ignored = fixed(lambda rng: Sample((_r(rng, (4, 5)), np.full(4, 1), _r(rng, (5,), lo=0.2, hi=2.0)), "all 1"))
    out += [OpInfo("F.cross_entropy every target ignored", lambda lib, x, t, w: ce(ignore_index=1)(lib, x, t, w),
                   every_ignored),
            OpInfo("F.cross_entropy every target ignored smoothing",
                   lambda lib, x, t, w: ce(ignore_index=1, label_smoothing=0.2)(lib, x, t), every_ignored)]
    return out


def _lstm_entries():
    """nn.LSTM's layers as one fused node each (NOTE [fused LSTM layer]): the sequence, the initial state and every
    weight are inputs (functional_call), one and two layers, bidirectional."""
    def lstm(layers, bidir):
        names = [f"{k}_l{i}{'_reverse' * r}" for i in range(layers) for r in range(1 + bidir)
                 for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]

        def fn(lib, x, h0, c0, *ws):
            m = lib.nn.LSTM(3, 4, num_layers=layers, bidirectional=bidir, batch_first=True, dtype=x.dtype)
            out, (h, c) = lib.func.functional_call(m, dict(zip(names, ws)), (x, (h0, c0)))
            return out, h, c

        def gen(rng):
            d = layers * (1 + bidir)
            shapes = []
            for i in range(layers):
                for _ in range(1 + bidir):
                    shapes += [(16, 3 if i == 0 else 4 * (1 + bidir)), (16, 4), (16,), (16,)]
            yield Sample((_r(rng, (2, 5, 3), F64), _r(rng, (d, 2, 4), F64), _r(rng, (d, 2, 4), F64),
                          *(_r(rng, sh, F64) * 0.5 for sh in shapes)), f"{layers} layers{' bidirectional' * bidir}")
        return fn, gen

    return [OpInfo(f"nn.LSTM {layers} layers{' bidirectional' * bidir}", *lstm(layers, bidir))
            for layers, bidir in ((1, False), (2, True))]


def _special_entries():
    """ember.special (the torch.special namespace): aliases of core ops, then its own ops."""
    sp = lambda name, *a, **k: (lambda lib, x: getattr(lib.special, name)(x, *a, **k))  # noqa: E731
    pos = dict(ints=True)
    out = [OpInfo(f"special.{n}", sp(n), unary_samples(*rng, **kw)) for n, rng, kw in (
        ("expit", (), pos), ("erf", (), pos), ("erfc", (), pos), ("erfinv", (-0.9, 0.9), {}), ("exp2", (), pos),
        ("expm1", (), pos), ("log1p", (0.2, 3.0), pos), ("gammaln", (0.2, 6.0), pos), ("digamma", (0.5, 6.0), pos),
        ("psi", (0.5, 6.0), {}), ("i0", (-4.0, 4.0), dict(f16=False)), ("i1", (-4.0, 4.0), dict(f16=False)),
        ("sinc", (0.1, 3.0), pos), ("round", (), {}))]
    out += [
        OpInfo("special.logit eps", sp("logit", 0.1), unary_samples(0.02, 0.98)),
        OpInfo("special.polygamma", lambda lib, x: lib.special.polygamma(2, x), unary_samples(0.5, 4.0, f16=False),
               rtol=1e-3),
        OpInfo("special.multigammaln", sp("multigammaln", 2), unary_samples(1.5, 5.0, f16=False),
               check_grad_fn=False),
        OpInfo("special.softmax", lambda lib, x: lib.special.softmax(x, 1), fixed(s((3, 4)), s((2, 3), dtype=F64))),
        OpInfo("special.log_softmax dtype", lambda lib, x: lib.special.log_softmax(x, 0, dtype=lib.float64),
               fixed(s((3, 4)))),
        OpInfo("special.logsumexp", lambda lib, x: lib.special.logsumexp(x, (0, 1), keepdim=True),
               fixed(s((3, 4)), s((2, 3, 2), dtype=F64))),
        OpInfo("special.xlogy", lambda lib, a, b: lib.special.xlogy(a, b), binary_samples(0.2, 2.0, ints=False)),
        OpInfo("special.gammainc gammaincc", lambda lib, a, x: (lib.special.gammainc(a.detach(), x),
                                                                lib.special.gammaincc(a.detach(), x)),
               fixed(s((3, 4), (4,), dtype=F64, lo=0.2, hi=4.0))),
        # ops of ember/ops/special.py
        # torch's ndtr is a composite recorded as MulBackward1 (mul by a Scalar overload Python cannot spell)
        OpInfo("special.ndtr", sp("ndtr"), unary_samples(-3.0, 3.0, **pos), check_grad_fn=False),
        OpInfo("special.log_ndtr", sp("log_ndtr"), unary_samples(-6.0, 3.0, ints=True, f16=False), rtol=1e-3),
        OpInfo("log_ndtr tails", sp("log_ndtr"), fixed(_special(-40.0, -12.5, -1.0, 0.0, 6.0, 12.0))),
        OpInfo("special.ndtri", sp("ndtri"), unary_samples(0.05, 0.95, f16=False)),
        OpInfo("ndtri tails", sp("ndtri"), fixed(_special(1e-200, 1e-12, 0.3, 0.5, 0.9, 1 - 1e-12)), rtol=1e-6),
        OpInfo("special.erfcx", sp("erfcx"), unary_samples(-2.0, 3.0, ints=True, f16=False)),
        OpInfo("erfcx wide", sp("erfcx"), fixed(_special(-5.0, -0.5, 0.0, 1.4, 1.6, 30.0, 1e4))),
        OpInfo("special.entr", sp("entr"), unary_samples(0.1, 3.0)),
        OpInfo("special.i0e", sp("i0e"), unary_samples(-4.0, 4.0, ints=True, f16=False)),
        OpInfo("special.i0e float16", sp("i0e"), fixed(s((3, 4), dtype=F16, lo=-5.0, hi=5.0)), atol=1e-3,
               gradgrad=False),  # its second derivative needs i1e_backward (no float16 kernel in torch)
        # torch has no float16 backward for i1e (ember raises its error, tests/ops/test_special.py): values only
        OpInfo("special.i1e float16", sp("i1e"), fixed(s((3, 4), dtype=F16, lo=-5.0, hi=5.0)), grad=False, atol=1e-3),
        OpInfo("i0e wide", sp("i0e"), fixed(_special(-45.0, -30.5, -29.5, -1e-3, 2.5, 29.9, 30.1, 800.0))),
        OpInfo("special.i1e", sp("i1e"), unary_samples(-4.0, 4.0, ints=True, f16=False)),
        OpInfo("i1e wide", sp("i1e"), fixed(_special(-45.0, -30.5, -29.5, -1e-3, 2.5, 29.9, 30.1, 800.0))),
        OpInfo("special.xlog1py", lambda lib, a, b: lib.special.xlog1py(a, b), binary_samples(-0.5, 2.0)),
        OpInfo("special.xlog1py zeros", lambda lib, a, b: lib.special.xlog1py(a, b),
               fixed(lambda rng: Sample((np.array([0.0, 0.0, 2.0, 0.0]), np.array([-1.0, 3.0, 0.5, -2.0])), "0*"))),
        OpInfo("special.xlog1py scalars", lambda lib, a, b: (lib.special.xlog1py(a, 0.5), lib.special.xlog1py(2.0, b)),
               fixed(s((3, 4), (4,), lo=0.1, hi=2.0), s((2,), (2,), dtype=F64, lo=0.1, hi=2.0))),
        # zeta: torch has no derivative for its first argument (x)
        OpInfo("special.zeta", lambda lib, x, q: lib.special.zeta(x.detach() * 0 + x.detach().abs() + 1.5, q),
               fixed(s((3, 4), (3, 4), lo=0.2, hi=4.0), s((3, 1, 4), (5, 1), lo=0.2, hi=4.0), s((), (2, 3), lo=0.2, hi=4.0),
                     s((2, 3), (3,), dtype=F64, lo=0.2, hi=4.0), snc((3, 4), (3, 4)))),
        OpInfo("special.zeta scalars", lambda lib, x, q: (lib.special.zeta(2.5, q), lib.special.zeta(x.detach() + 1.5, 3.0)),
               fixed(s((3, 4), (4,), dtype=F64, lo=0.2, hi=4.0))),
        OpInfo("special.zeta ints", lambda lib, x, q: lib.special.zeta(x, q),
               fixed(lambda rng: Sample((rng.integers(2, 6, (3,)), rng.integers(1, 4, (3,))), "int64")), grad=False),
    ]
    return out


OPS: list[OpInfo] = [
    *(OpInfo(n, f, binary_samples(0.5, 2.0) if "div" in n else binary_samples()) for n, f in BINARY.items()),
    OpInfo("pow tensor", lambda lib, a, b: a ** b, binary_samples(0.5, 2.0, -2.0, 2.0, ints=False)),
    OpInfo("torch.pow tensor", lambda lib, a, b: lib.pow(a, b), binary_samples(0.5, 2.0, -2.0, 2.0, ints=False)),
    OpInfo("pow int tensors", lambda lib, a, b: a ** b,
           fixed(lambda rng: Sample((rng.integers(0, 4, (3, 2)), rng.integers(0, 3, (2,))), "int"))),
    OpInfo("pow zero base", lambda lib, a, b: a ** b,
           fixed(lambda rng: Sample((np.array([0.0, 0.0, 2.0], F32), np.array([2.0, 0.0, 0.0], F32)), "0**e"))),
    OpInfo("add int scalar to int", lambda lib, a: a + 3, fixed(lambda rng: Sample((_ints(rng, (3,)),), "int"))),
    OpInfo("div int by int", lambda lib, a: a / 2, fixed(lambda rng: Sample((_ints(rng, (3,)),), "int"))),
    OpInfo("mul bool by float", lambda lib, a: a * 1.5, fixed(lambda rng: Sample((_cond(rng, (3,)),), "bool"))),
    OpInfo("add bool tensors", lambda lib, a, b: a + b,
           fixed(lambda rng: Sample((_cond(rng, (3,)), _cond(rng, (3,))), "bool"))),
    *_scalar_entries(),
    *_unary_entries(),
    *_reductions(),
    *_linalg_entries(),
    *_linalg_family_entries(),
    *_matrix_transposes(),
    *_shape_entries(),
    *_getitem_entries(),
    *_comparison_entries(),
    *_inplace_entries(),
    *_random_entries(),
    *_conv_pool_entries(),
    *_shape_index_entries(),
    *_nn_entries(),
    *_family_entries(),
    *_surface_entries(),
    *_ctc_entries(),
    *_nn_more_entries(),
    *_cross_entropy_entries(),
    *_lstm_entries(),
    *_special_entries(),
    *_complex_entries(),
    *_fft_entries(),
    *_stft_entries(),
]

# Binary ops whose broadcasting hypothesis explores: (fn, value range of both operands).
BROADCAST_BINARY = {n: (f, (0.5, 2.0) if n in ("div", "torch.div") else (None, None)) for n, f in BINARY.items()}
BROADCAST_BINARY["pow tensor"] = (lambda lib, a, b: a ** b, (0.5, 2.0))
BROADCAST_BINARY["where"] = (lambda lib, a, b: lib.where(a > 0, a, b), (None, None))

assert len({op.name for op in OPS}) == len(OPS), "op names must be unique"
