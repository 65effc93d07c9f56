"""Elementwise math beyond + - * /: integer division, rounding, trigonometry, the erf family,
max/min, interpolation, predicates and bit shifts.

Each differentiable op is one table entry: its forward on arrays and its backward written with
ember ops (so it is itself differentiable); ``_unary`` / ``_binary`` / ``_ternary`` turn an entry
into an ``Op`` class (see NOTE [declaring an op] in _op.py). Which input dtypes an op accepts, and
whether integers compute in the default float dtype, is a per-entry policy (torch's rules).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend as _B

from .. import _args
from .._args import tensor_arg as _tensor_arg
from .. import _dtype as D
from .._tensor import Tensor, _wrap, _CPP_NAMES
from . import _fused_backward as _fb  # tanh/sigmoid backward as one op each (torch's names)
from . import _erf
from . import _special as _sp
from ..autograd._interpose import made, replayable
from ._op import NOT_YET, Op, silent, unsupported, wrap_raw
from ._inplace import _title
from . import arithmetic as _A
from .arithmetic import _rt, _prep, _broadcast_error, _out, div
from .indexing import where
from ._inplace import inplace as _inplace
from ._table import Binary, Names, Predicate, Ternary, Unary, export


_nd = np.ndarray
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_SQRT_PI = math.sqrt(math.pi)
_HALF_SQRT_PI = 0.5 * _SQRT_PI
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI


def _not_implemented(kernel: str, dt) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_title(D.from_numpy_dtype(np.dtype(dt)))}\'')


def _default_float():
    return D.get_default_dtype().np


def _zeros(grad: Tensor) -> Tensor:
    """A zero gradient with no history (torch's ``zeros_like(grad)``)."""
    return _wrap(made(np.zeros_like(grad._data, order="C")), grad._dtype)


def _saved(ctx) -> tuple:
    return ctx.saved_tensors if ctx.save else ()


def _in_float64(kernel):
    """Run a float64 kernel on any float array, returning the input's dtype."""
    def run(x):
        return kernel(x.astype(np.float64)).astype(x.dtype, copy=False)
    return run


# ------------------------------------------------------------------ unary ops
def _floating(x):
    return x.astype(_default_float()) if x.dtype.kind in "biu" else x


def _keep_ints(kernel: str, fn):
    """Rounding: integers come back unchanged (a copy); bool is rejected as torch does."""
    def run(x, *attrs):
        k = x.dtype.kind
        if k == "b":
            raise _not_implemented(kernel, x.dtype)
        return x.copy() if k in "iu" else fn(x, *attrs)
    return run


def _floats_only(kernel: str, fn):
    def run(x, *attrs):
        if x.dtype.kind in "biu":
            raise _not_implemented(kernel, x.dtype)
        return fn(x, *attrs)
    return run


def _to_float(fn):
    def run(x, *attrs):
        return fn(_floating(x), *attrs)
    return run


def _sigmoid(x):
    """1 / (1 + e**-x): e**-x overflowing to inf gives exactly 0, as torch; float16 computes in float32."""
    x32 = x.astype(np.float32) if x.dtype == np.float16 else x
    return (1 / (1 + np.exp(-x32))).astype(x.dtype, copy=False)


def _square(x):
    if x.dtype == np.bool_:
        x = x.astype(np.int64)
    return np.multiply(x, x)


def _logit(x, eps):
    if eps is not None:
        x = np.clip(x, x.dtype.type(eps), x.dtype.type(1.0 - eps))
    return np.log(x / (1 - x))


def _round(x, decimals):
    if not decimals:
        return np.rint(x)
    if decimals > 0:
        p = x.dtype.type(10.0 ** decimals)
        return np.rint(x * p) / p
    p = x.dtype.type(10.0 ** -decimals)
    return np.rint(x / p) * p


def _round_forward(x, decimals):
    if decimals is None:
        return _keep_ints("round_vml_cpu", np.rint)(x)
    return _floats_only("round_vml_cpu" if decimals == 0 else "round_cpu", _round)(x, decimals)


def _nan_to_num(x, nan, posinf, neginf):
    if x.dtype.kind not in "fc":
        return x.copy()
    return np.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


def _logit_backward(g, x, eps):
    d = g / (x * (1 - x))
    if eps is None:
        return where((x < 0) | (x > 1), math.nan, d)
    return where((x < eps) | (x > 1 - eps), 0.0, d)


def _polygamma_kernel(x, n):
    return _in_float64(lambda a: _sp.polygamma(n, a))(x)


def _sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (float16 computes in float32)."""
    x32 = x.astype(np.float32) if x.dtype == np.float16 else x
    px = x32 * x32.dtype.type(math.pi)
    out = np.where(x32 == 0, x32.dtype.type(1), np.sin(px) / np.where(x32 == 0, 1, px))
    return out.astype(x.dtype, copy=False)


def _safe(x):
    return where(x == 0, 1.0, x)


def _sinc_backward(g, x):
    """d sinc = (cos(pi x) - sinc(x)) / x, 0 at 0."""
    return g * where(x == 0, 0.0, ((x * math.pi).cos() - x.sinc()) / _safe(x))


def _i1_backward(g, x):
    """d I1 = I0(x) - I1(x) / x, 1/2 at 0."""
    return g * where(x == 0, 0.5, x.i0() - _UOPS["special_i1"].apply(x) / _safe(x))


def _angle(x):
    """The argument: of a complex number as atan2(imag, real); of a real one 0 for x >= 0, pi for x < 0, NaN kept."""
    if x.dtype.kind == "c":
        return np.angle(x)
    return np.where(x < 0, x.dtype.type(math.pi), np.where(np.isnan(x), x, x.dtype.type(0)))


def _angle_backward(g, x):
    """0 for real inputs; for complex ones grad * i z / |z|^2 (0 at 0), as torch's angle_backward."""
    if not x._dtype.is_complex:
        return _zeros(g)
    return where(x == 0, 0.0, g * x / x.abs().pow(2) * 1j)  # torch's formula (NaN second derivatives at 0)


_CANNOT_WARN = frozenset(("Tanh", "Floor", "Ceil", "Trunc"))  # no NumPy floating-point warning for any input


# complex inputs
# Op names of the rows that compute on complex inputs (their backward formulas serve complex gradients as they
# are: NOTE [holomorphic formulas] in _op.py); every other row refuses a complex input with torch's error.
_COMPLEX_ROWS = frozenset("Exp Log Tanh Sigmoid Sqrt Square Rsqrt Reciprocal Exp2 Expm1 Log2 Log10 Log1p Sin Cos Tan "
                          "Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Sinc NanToNum Angle".split())
# torch's kernel names in its "not implemented for 'ComplexFloat'" errors (default: the op's name + "_cpu")
_COMPLEX_KERNELS = {"Erf": "erf_vml_cpu", "Erfc": "erfc_vml_cpu", "Erfinv": "erfinv_vml_cpu", "Round": "round_vml_cpu",
                    "Lgamma": "lgamma_vml_cpu", "Digamma": "digamma", "I0": "i0_vml_cpu", "SpecialI1": "i1_cpu",
                    "SpecialNdtr": "erf_vml_cpu", "SpecialLogNdtr": "log_ndtr_cpu", "SpecialNdtri": "ndtri_cpu",
                    "SpecialErfcx": "erfcx_cpu", "SpecialEntr": "entr_cpu", "SpecialI0E": "i0e_cpu",
                    "SpecialI1E": "i1e_cpu"}
# rows whose complex error is a sentence of its own
_COMPLEX_ERRORS = {"Floor": NotImplementedError("floor is not supported for complex inputs"),
                   "Ceil": NotImplementedError("ceil is not supported for complex inputs"),
                   "Trunc": NotImplementedError("trunc is not supported for complex inputs"),
                   "Deg2rad": RuntimeError("deg2rad is not supported for complex tensors."),
                   "Rad2deg": RuntimeError("rad2deg is not supported for complex tensors.")}


def _complex_refused(name: str, fwd):
    """``fwd`` raising torch's error for a complex input."""
    err = _COMPLEX_ERRORS.get(name)

    def run(x, *attrs):
        if x.dtype.kind == "c":
            if err is not None:
                raise type(err)(*err.args)
            kernel = _COMPLEX_KERNELS.get(name, name.lower() + "_cpu")
            if name == "Polygamma":
                kernel = ("digamma", "trigamma")[attrs[0]] if attrs[0] < 2 else "polygamma"
            elif name == "Round" and attrs[0] is not None:
                kernel = "round_vml_cpu" if attrs[0] == 0 else "round_cpu"
            raise _not_implemented(kernel, x.dtype)
        return fwd(x, *attrs)
    return run


def _unary(name: str, fwd, bwd, save=("self",), nattrs: int = 0, torch_name: str = ""):
    """An Op for ``fwd(array, *attrs)`` whose backward is ``bwd(grad, *saved, *attrs)``."""
    if name not in _CANNOT_WARN:
        fwd = silent(fwd)
    if name not in _COMPLEX_ROWS:
        fwd = _complex_refused(name, fwd)
    if nattrs:
        def forward(ctx, self, *attrs):
            if ctx is not None:
                ctx.extra = attrs
            return fwd(self, *attrs)

        def backward(ctx, grad):
            return bwd(grad, *_saved(ctx), *ctx.extra)
    else:
        def forward(ctx, self):
            return fwd(self)

        def backward(ctx, grad):
            return bwd(grad, *_saved(ctx))

    def jvp(args, out, tangents):  # elementwise: the Jacobian is diagonal, so backward's formula serves
        return bwd(tangents[0], *[out if n == "result" else args[0] for n in save], *args[1:])

    ns = {"__slots__": ("extra",) if nattrs else (), "save": save, "nattrs": nattrs,
          "forward": staticmethod(forward), "backward": backward, "jvp": staticmethod(jvp), "__doc__": f"elementwise {name}",
          "__module__": __name__, "holomorphic": name in _COMPLEX_ROWS and name != "Angle",
          "no_complex_grad": "nan_to_num" if name == "NanToNum" else None}
    if torch_name:
        ns["_name"] = torch_name
    return type(name, (Op,), ns)


_X, _R, _NONE = ("self",), ("result",), ()
_erf_f, _erfc_f, _erfinv_f = _erf.erf, _erf.erfc, _erf.erfinv  # NOTE [erf kernels]

# public name: its row (NOTE [one row per op] in ops/_table.py). Formulas call Tensor methods (``x.cos()``), as
# torch's derivatives.yaml does: the functions are made from this table below.
_T = dict(torch_inplace=True)  # the rows torch also has as ``torch.<name>_(t)``
_UNARY = {
    "exp": Unary("Exp", _to_float(np.exp), lambda g, r: g * r, saved=_R, **_T),
    "log": Unary("Log", _to_float(np.log), lambda g, x: g / x, **_T),
    "tanh": Unary("Tanh", _to_float(np.tanh), lambda g, r: _fb.tanh_backward(g, r), saved=_R, **_T),
    "sigmoid": Unary("Sigmoid", _to_float(_sigmoid), lambda g, r: _fb.sigmoid_backward(g, r), saved=_R, **_T),
    "sqrt": Unary("Sqrt", _to_float(np.sqrt), lambda g, r: g / (2 * r), saved=_R, **_T),
    "square": Unary("Square", _square, lambda g, x: g * (2 * x), torch_node="PowBackward0", **_T),
    "rsqrt": Unary("Rsqrt", _to_float(lambda x: 1 / np.sqrt(x)), lambda g, r: -0.5 * g * (r * r * r), saved=_R, **_T),
    "reciprocal": Unary("Reciprocal", _to_float(lambda x: 1 / x), lambda g, r: -g * (r * r), saved=_R, **_T),
    "exp2": Unary("Exp2", _to_float(np.exp2), lambda g, r: g * r * _LN2, saved=_R, **_T),
    "expm1": Unary("Expm1", _to_float(np.expm1), lambda g, r: g * (r + 1), saved=_R, **_T),
    "log2": Unary("Log2", _to_float(np.log2), lambda g, x: g / (x * _LN2), **_T),
    "log10": Unary("Log10", _to_float(np.log10), lambda g, x: g / (x * _LN10), **_T),
    "log1p": Unary("Log1p", _to_float(np.log1p), lambda g, x: g / (x + 1), torch_node="Log1PBackward0", **_T),
    "sin": Unary("Sin", _to_float(np.sin), lambda g, x: g * x.cos(), **_T),
    "cos": Unary("Cos", _to_float(np.cos), lambda g, x: g * -x.sin(), **_T),
    "tan": Unary("Tan", _to_float(np.tan), lambda g, r: g * (1 + r * r), saved=_R, **_T),
    "asin": Unary("Asin", _to_float(np.arcsin), lambda g, x: g * (1 - x * x).rsqrt(), aliases=("arcsin",), **_T),
    "acos": Unary("Acos", _to_float(np.arccos), lambda g, x: g * -(1 - x * x).rsqrt(), aliases=("arccos",), **_T),
    "atan": Unary("Atan", _to_float(np.arctan), lambda g, x: g / (x * x + 1), aliases=("arctan",), **_T),
    "sinh": Unary("Sinh", _to_float(np.sinh), lambda g, x: g * x.cosh(), **_T),
    "cosh": Unary("Cosh", _to_float(np.cosh), lambda g, x: g * x.sinh(), **_T),
    "asinh": Unary("Asinh", _to_float(np.arcsinh), lambda g, x: g * (x * x + 1).rsqrt(), aliases=("arcsinh",), **_T),
    "acosh": Unary("Acosh", _to_float(np.arccosh), lambda g, x: g * (x * x - 1).rsqrt(), aliases=("arccosh",), **_T),
    "atanh": Unary("Atanh", _to_float(np.arctanh), lambda g, x: g / (1 - x * x), aliases=("arctanh",), **_T),
    "erf": Unary("Erf", _to_float(_erf_f), lambda g, x: g * (_TWO_OVER_SQRT_PI * (-(x * x)).exp()), **_T),
    "erfc": Unary("Erfc", _to_float(_erfc_f), lambda g, x: g * (-_TWO_OVER_SQRT_PI * (-(x * x)).exp()), **_T),
    "erfinv": Unary("Erfinv", _to_float(_erfinv_f), lambda g, r: g * (_HALF_SQRT_PI * (r * r).exp()), saved=_R),
    "logit": Unary("Logit", _to_float(_logit), _logit_backward, nattrs=1, function="written", **_T),
    # rounding: zero gradients; integers come back unchanged
    "floor": Unary("Floor", _keep_ints("floor_vml_cpu", np.floor), lambda g: _zeros(g), saved=_NONE, **_T),
    "ceil": Unary("Ceil", _keep_ints("ceil_vml_cpu", np.ceil), lambda g: _zeros(g), saved=_NONE, **_T),
    "trunc": Unary("Trunc", _keep_ints("trunc_vml_cpu", np.trunc), lambda g: _zeros(g), saved=_NONE, aliases=("fix",),
                   **_T),
    "round": Unary("Round", _round_forward, lambda g, decimals: _zeros(g), saved=_NONE, nattrs=1, function="written",
                   **_T),
    "frac": Unary("Frac", _floats_only("frac_cpu", lambda x: x - np.trunc(x)), lambda g: g, saved=_NONE, **_T),
    "nan_to_num": Unary("NanToNum", _nan_to_num, lambda g, x, *_: g * x.isfinite(), nattrs=3, function="written",
                        **_T),
    # special functions and conversions
    "angle": Unary("Angle", _to_float(_angle), _angle_backward, function="written", inplace=False),
    "lgamma": Unary("Lgamma", _to_float(_in_float64(_sp.lgamma)), lambda g, x: g * x.digamma()),
    "digamma": Unary("Digamma", _to_float(_in_float64(_sp.digamma)), lambda g, x: g * polygamma(1, x)),
    # (t.polygamma(n) takes the order first: its methods are written, ember/_methods.py's _WRITTEN)
    "polygamma": Unary("Polygamma", _to_float(_polygamma_kernel), lambda g, x, n: g * polygamma(n + 1, x), nattrs=1,
                       function="written", method=False, inplace=False),
    "i0": Unary("I0", _to_float(_in_float64(_sp.i0)), lambda g, x: g * _UOPS["special_i1"].apply(x), **_T),
    "special_i1": Unary("SpecialI1", _to_float(_in_float64(_sp.i1)), _i1_backward, function=""),  # special.i1
    "sinc": Unary("Sinc", _to_float(_sinc), _sinc_backward, **_T),
    "deg2rad": Unary("Deg2rad", _to_float(lambda x: x * x.dtype.type(math.pi / 180)), lambda g: g * (math.pi / 180),
                     saved=_NONE, torch_node="Deg2RadBackward0", **_T),
    "rad2deg": Unary("Rad2deg", _to_float(lambda x: x * x.dtype.type(180 / math.pi)), lambda g: g * (180 / math.pi),
                     saved=_NONE, torch_node="Rad2DegBackward0", **_T),
}
_UOPS = {pub: _unary(row.node, row.forward, row.backward, row.saved, row.nattrs, row.torch_node)
         for pub, row in _UNARY.items()}

# NOTE [raw backward] (ember/ops/_op.py): some formulas of _UNARY on arrays, each step the kernel its dispatch runs.
_RAW = {
    "exp": lambda g, r: _A._mul(g, r),
    "log": lambda g, x: _A.Div.forward(None, g, x),
    "tanh": lambda g, r: _fb.TanhBackward.forward(None, g, r),
    "sigmoid": lambda g, r: _fb.SigmoidBackward.forward(None, g, r),
    "sqrt": lambda g, r: _A.Div.forward(None, g, _A._mul(r, 2)),
    "reciprocal": lambda g, r: _A._mul(_A._neg(g), _A._mul(r, r)),
}


def _raw_method(formula):
    def raw(ctx, grad, saved):
        return wrap_raw(formula(grad._data, saved))
    return raw


for _pub, _formula in _RAW.items():
    _UOPS[_pub].raw = _raw_method(_formula)


def _angle_jvp(args, out, tangents):
    """d angle(z) = imag(conj(z) dz) / |z|^2 for complex z (0 for real inputs)."""
    x, t = args[0], tangents[0]
    if not x._dtype.is_complex:
        return None
    from .complex_numbers import Conj, imag, real

    r2 = real(x) * real(x) + imag(x) * imag(x)
    return where(r2 == 0, 0.0, imag(Conj.apply(x) * t) / where(r2 == 0, 1.0, r2))


_UOPS["angle"].jvp = staticmethod(_angle_jvp)


def _unary_function(pub: str, ops: dict | None = None, namespace: str = "torch"):
    """The public function of the unary op ``ops[pub]`` (default: this module's table). It takes torch's
    arguments itself (NOTE [torch's argument parser]): the hottest functions of the torch namespace (exp, tanh
    ...) then cost no wrapper call."""
    cls = (_UOPS if ops is None else ops)[pub]
    write_out, absent, alias = _args.write_out, _args.ABSENT, _args.INPUT

    def fn(input: Tensor = absent, *, out: Tensor | None = None, x=alias, a=alias, x1=alias) -> Tensor:
        if input is absent or x is not alias or a is not alias or x1 is not alias:
            input = _args.input_alias(pub, input, x, a, x1)
        return cls.apply(input) if out is None else write_out(out, cls.apply(input), pub)

    fn.__name__ = fn.__qualname__ = pub
    fn.__doc__ = f"Elementwise {pub} ({namespace}.{pub})."
    fn.__torch_args__ = True
    return fn


Angle = _UOPS["angle"]


class _RoundDecimals(_UOPS["round"]):
    __slots__ = ()
    _name = "RoundBackward1"


def round(input: Tensor, *, decimals: int = None, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """Round half to even, to ``decimals`` decimal places (negative: to tens, hundreds ...)."""
    cls = _UOPS["round"] if decimals is None else _RoundDecimals
    return _out(cls.apply(input, decimals), out)


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when ``eps`` is given."""
    return _out(_UOPS["logit"].apply(input, eps), out)


def nan_to_num(input: Tensor, nan: float | None = None, posinf: float | None = None, neginf: float | None = None, *,
               out: Tensor | None = None) -> Tensor:
    """Replace NaN, +inf and -inf (default: 0 and the dtype's largest / lowest finite values)."""
    return _out(_UOPS["nan_to_num"].apply(input, 0.0 if nan is None else nan, posinf, neginf), out)


# ------------------------------------------------------------------ predicates (no gradient)
def _predicate(pub: str, row: Predicate):
    """The function of a row of ``_PREDICATES``."""
    fn, on_complex = row.kernel, row.on_complex

    @replayable  # computed on arrays from the values: NOTE [replayable steps]
    def pred(input: Tensor) -> Tensor:
        x = input._data
        if type(x) not in _B.ARRAYS:  # a batched tensor under vmap: elementwise, so on its physical value
            return input._rewrap(pred(input._phys))
        if x.dtype == np.bool_:
            x = x.view(np.uint8)
        elif on_complex is not None and x.dtype.kind == "c":
            if isinstance(on_complex, Exception):
                raise type(on_complex)(*on_complex.args)
            return _wrap(_B.asarray(on_complex(x)), D.bool)
        return _wrap(_B.asarray(fn(x)), D.bool)

    pred.__name__ = pred.__qualname__ = pub
    pred.__doc__ = f"Elementwise {pub} as a bool tensor."
    return pred


_PREDICATES = {
    "isnan": Predicate(np.isnan),
    "isinf": Predicate(np.isinf),
    "isposinf": Predicate(np.isposinf, on_complex=RuntimeError("isposinf does not support complex inputs.")),
    "isneginf": Predicate(np.isneginf, on_complex=RuntimeError("isneginf does not support complex inputs.")),
    "isfinite": Predicate(np.isfinite),
    "isreal": Predicate(lambda x: np.ones(x.shape, np.bool_), on_complex=lambda x: x.imag == 0),
    "signbit": Predicate(np.signbit, on_complex=NotImplementedError("signbit is not implemented for complex tensors.")),
}


# ------------------------------------------------------------------ binary ops
def _binary_kernel(fn, allowed: str, to_float: bool, kernel: str):
    """forward(a, b): promote as torch, check the dtype is ``allowed`` (kinds of "biuf"), compute."""
    fn = silent(fn)

    def forward(ctx, self, other):
        dt = _rt(self, other)
        k = dt.kind
        if k not in allowed:
            if k == "c" and kernel in _COMPLEX_BINARY_ERRORS:
                raise RuntimeError(_COMPLEX_BINARY_ERRORS[kernel])
            raise _not_implemented(kernel, dt)
        if to_float and k not in "fc":
            dt = _default_float()
        a, b = _prep(self, other, dt)
        if type(a) not in _A._ARR:  # a Python number: a 0-d array on the other operand's device (CuPy refuses host)
            a = _B.like(b, _B.asarray(a).astype(dt))
        try:
            out = fn(a, b)
        except ValueError:
            raise _broadcast_error(a, b) from None
        return out if type(out) is _nd and out.dtype == dt else _A._B.asarray(out, dt)
    return forward


# kernels whose complex error is a sentence of its own
_COMPLEX_BINARY_ERRORS = {f"{n}_cpu": f"{n} not implemented for complex tensors." for n in ("maximum", "minimum", "fmax",
                                                                                           "fmin")}
_COMPLEX_BINARY_ERRORS["heaviside_cpu"] = "heaviside is not yet implemented for complex tensors."


def _logaddexp(a, b):
    """log(exp(a) + exp(b)); complex operands shift by the larger real part (the log's branch is not changed)."""
    if np.result_type(a, b).kind != "c":
        return np.logaddexp(a, b)
    m = np.maximum(np.real(a), np.real(b))
    m = np.where(np.isfinite(m), m, 0)
    return np.log(np.exp(a - m) + np.exp(b - m)) + m


def _logaddexp_grad(g, a, b):
    """d logaddexp(a, b) / da = 1 / (1 + exp(b - a)); for complex inputs exp(a - logaddexp(a, b)), which cannot
    overflow (exp of a complex number with a huge real part is inf or nan in both parts)."""
    if a._dtype.is_complex or b._dtype.is_complex:
        return g * (a - a.logaddexp(b)).exp()
    return g / (1 + (b - a).exp())


def _int_divisor_check(fn):
    def run(a, b):
        if a.dtype.kind in "iu" and np.any(_B.asarray(b) == 0):
            raise RuntimeError("ZeroDivisionError")
        return fn(a, b)
    return run


def _shift(left: bool):
    def run(a, b):
        bits = a.dtype.itemsize * 8
        b = b if type(b) in _B.ARRAYS else _B.like(a, b)
        ok = (b >= 0) & (b < bits)
        s = np.where(ok, b, 0).astype(a.dtype)
        if left:
            return np.where(ok, np.left_shift(a, s), 0)
        return np.where(ok, np.right_shift(a, s), np.where(a < 0, -1, 0))
    return run


def _xlogy(x, y):
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0, x * np.log(y)))


def _atan2_recip(a, b):
    """1 / (a^2 + b^2), 0 at the origin: atan2's gradient there is 0 (signed as the other operand), as torch's."""
    d = a * a + b * b
    return where(d == 0, 0.0, d.reciprocal())


def _ratio_or_zero(result, x):
    return where(x == 0, 0.0, result / x)


def _max_grads(g, a, b, sel):
    """torch's split for maximum/minimum: all of ``g`` to the selected side, half each on ties."""
    tie = where(a == b, g / 2, g)
    return (where(sel(b, a), 0.0, tie), where(sel(a, b), 0.0, tie))


def _fmax_grads(g, a, b, keep):
    m = keep(a, b) | b.isnan()
    return where(m, g, 0.0), where(m, 0.0, g)


def _no_derivative(name: str):
    def bwd(g, *saved):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    bwd.aten = name  # no forward derivative either (NOTE [forward formulas])
    return bwd


def _no_input_derivative(name: str):
    def bwd(g, *saved):
        raise RuntimeError(f"the derivative for '{name}: input' is not implemented.")
    bwd.jvp = unsupported(name, NOT_YET)  # torch has no forward derivative for either argument
    return bwd


def _gamma_density(a, x):
    """d P(a, x) / dx = x^(a-1) e^-x / Gamma(a)."""
    return ((a - 1) * x.log() - x - a.lgamma()).exp()


_lt = lambda a, b: a < b  # noqa: E731
_gt = lambda a, b: a > b  # noqa: E731
_ge = lambda a, b: a >= b  # noqa: E731
_le = lambda a, b: a <= b  # noqa: E731
_SO, _SOR = ("self", "other"), ("self", "other", "result")
_ANY, _FLT = "biuf", "f"

# public name: its row (NOTE [one row per op] in ops/_table.py); a backward is one callable giving both gradients
# or a pair, one per input. ``save_for``: the rows whose saved values only some inputs' gradients use, as torch saves
# them (NOTE [declaring an op]).
_BOTH_SAVE_OTHER = {"self": ("other",), "other": ("other",)}
_BINARY = {
    "floor_divide": Binary("FloorDivide", _int_divisor_check(np.floor_divide), _no_derivative("floor_divide"),
                           dtypes="iuf", kernel_name="div_floor_cpu", torch_node="torch::autograd::NotImplemented",
                           scalars="both"),
    "remainder": Binary("Remainder", _int_divisor_check(np.remainder),
                        (lambda g, a, b: g, lambda g, a, b: -g * div(a, b, rounding_mode="floor")), dtypes="iuf",
                        saved=_SO, save_for=_BOTH_SAVE_OTHER, torch_node="RemainderBackward1", scalars="both",
                        scalar_nodes=("RemainderBackward0", "")),
    "fmod": Binary("Fmod", _int_divisor_check(np.fmod),
                   (lambda g, a, b: g, lambda g, a, b: -g * div(a, b, rounding_mode="trunc")), dtypes="iuf",
                   saved=_SO, save_for=_BOTH_SAVE_OTHER, torch_node="FmodBackward1", scalars="other",
                   scalar_nodes=("FmodBackward0", "")),
    "atan2": Binary("Atan2", np.arctan2, (lambda g, a, b: g * b * _atan2_recip(a, b),
                                          lambda g, a, b: g * -a * _atan2_recip(a, b)),
                    to_float=True, saved=_SO, aliases=("arctan2",)),
    "hypot": Binary("Hypot", np.hypot, (lambda g, a, b, r: g * a / r, lambda g, a, b, r: g * b / r), dtypes=_FLT,
                    saved=_SOR, save_for={"self": ("self",), "other": ("other",)}),
    "maximum": Binary("Maximum", np.maximum, lambda g, a, b: _max_grads(g, a, b, _gt), saved=_SO, inplace=False),
    "minimum": Binary("Minimum", np.minimum, lambda g, a, b: _max_grads(g, a, b, _lt), saved=_SO, inplace=False),
    "fmax": Binary("Fmax", np.fmax, lambda g, a, b: _fmax_grads(g, a, b, _ge), saved=_SO, inplace=False),
    "fmin": Binary("Fmin", np.fmin, lambda g, a, b: _fmax_grads(g, a, b, _le), saved=_SO, inplace=False),
    "logaddexp": Binary("Logaddexp", _logaddexp, (lambda g, a, b: _logaddexp_grad(g, a, b),
                                                  lambda g, a, b: _logaddexp_grad(g, b, a)),
                        dtypes="fc", saved=_SO, inplace=False),
    "logaddexp2": Binary("Logaddexp2", np.logaddexp2, (lambda g, a, b: g / (1 + 2 ** (b - a)),
                                                       lambda g, a, b: g / (1 + 2 ** (a - b))),
                         dtypes=_FLT, saved=_SO, inplace=False),
    "xlogy": Binary("Xlogy", _xlogy, (lambda g, a, b: where((a == 0) & (b <= 0), 0.0, g.xlogy(b)),
                                      lambda g, a, b: g * a / b),
                    to_float=True, saved=_SO, torch_node="XlogyBackward0", scalars="both",
                    scalar_nodes=("XlogyBackward2", "XlogyBackward1"), torch_inplace=True),
    "copysign": Binary("Copysign", np.copysign, (lambda g, a, r: g * _ratio_or_zero(r, a), lambda g, a, r: _zeros(g)),
                       to_float=True, saved=("self", "result"), save_for={"self": ("self",)}, scalars="other",
                       scalar_nodes=("CopysignBackward1", "")),
    "bitwise_left_shift": Binary("BitwiseLeftShift", _shift(True), None, dtypes="iu", kernel_name="lshift_cpu",
                                 scalars="both"),
    "bitwise_right_shift": Binary("BitwiseRightShift", _shift(False), None, dtypes="iu", kernel_name="rshift_cpu",
                                  scalars="both"),
    "heaviside": Binary("Heaviside", np.heaviside, _no_derivative("heaviside"),
                        torch_node="torch::autograd::NotImplemented", function="written"),
    "gcd": Binary("Gcd", np.gcd, None, dtypes="iu", torch_inplace=True),
    "lcm": Binary("Lcm", np.lcm, None, dtypes="iu", torch_inplace=True),
    "nextafter": Binary("Nextafter", np.nextafter, lambda g: (g, _zeros(g)), dtypes="f"),
    "ldexp": Binary("Ldexp", lambda a, b: a * np.exp2(b), (lambda g, a, b: g * 2.0 ** b,
                                                           lambda g, a, b: g * a * 2.0 ** b * _LN2),
                    dtypes="biufc", to_float=True, saved=_SO, torch_inplace=True),
    "igamma": Binary("Igamma", lambda a, x: _sp.gammainc(a, x, False),
                     (_no_input_derivative("igamma"), lambda g, a, x: g * _gamma_density(a, x)), dtypes="f", saved=_SO),
    "igammac": Binary("Igammac", lambda a, x: _sp.gammainc(a, x, True),
                      (_no_input_derivative("igammac"), lambda g, a, x: -g * _gamma_density(a, x)), dtypes="f",
                      saved=_SO),
}


def _binary(name, kernel, allowed, to_float, kname, bwd, save, torch_name, save_for=None):
    """An Op for a binary kernel; ``bwd`` is one callable giving both grads, a pair of callables
    (one per input, called only for inputs that need a gradient) or None (not differentiable)."""
    if bwd is None:
        def backward(ctx, grad):
            return None, None
    elif type(bwd) is tuple:
        ga, gb = bwd

        def backward(ctx, grad):
            saved = _saved(ctx)
            need = ctx.needs_input_grad
            return ga(grad, *saved) if need[0] else None, gb(grad, *saved) if need[1] else None
    else:
        def backward(ctx, grad):
            return bwd(grad, *_saved(ctx))

    ns = {"__slots__": (), "save": save, "save_for": save_for,
          "forward": staticmethod(_binary_kernel(kernel, allowed, to_float, kname)),
          "backward": backward, "__doc__": f"elementwise {name}", "__module__": __name__,
          "holomorphic": "c" in allowed}  # rows computing on complex numbers: NOTE [holomorphic formulas]
    if hasattr(bwd, "aten"):
        ns["jvp"] = unsupported("aten::" + bwd.aten)
    elif type(bwd) is tuple and hasattr(bwd[0], "jvp"):
        ns["jvp"] = bwd[0].jvp
    if torch_name:
        ns["_name"] = torch_name
    return type(name, (Op,), ns)


_BOPS = {pub: _binary(row.node, row.kernel, row.dtypes, row.to_float, row.kernel_name or pub + "_cpu", row.backward,
                      row.saved, row.torch_node, row.save_for) for pub, row in _BINARY.items()}


def _type_error(fname: str, x, pos: int, arg: str) -> TypeError:
    return TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")




def _renamed(cls: type, node_name: str) -> type:
    """``cls`` recorded under another node name (same forward and backward)."""
    if not node_name:
        return cls
    return type(cls.__name__ + "Scalar", (cls,), {"__slots__": (), "_name": node_name, "__module__": cls.__module__})


_SCALAR_OPS = {pub: tuple(_renamed(_BOPS[pub], n) for n in row.scalar_nodes) for pub, row in _BINARY.items()}


def _binary_function(pub: str, alias: str = ""):
    """The public function of the row ``pub`` of ``_BINARY`` (named ``alias`` in its errors when given)."""
    cls, scalars = _BOPS[pub], _BINARY[pub].scalars
    with_scalar, scalar_with = _SCALAR_OPS[pub]
    pub = alias or pub

    def fn(input, other, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor):
            if scalars != "both":
                if scalars == "other":
                    raise TypeError(f"{pub}() received an invalid combination of arguments - got "
                                    f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
                                    f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                                    f" * (Tensor input, Number other, *, Tensor out = None)\n")
                raise _type_error(pub, input, 1, "input")
            return _out(scalar_with.apply(input, other), out)
        if not isinstance(other, Tensor):
            if not scalars:
                raise _type_error(pub, other, 2, "other")
            return _out(with_scalar.apply(input, other), out)
        return _out(cls.apply(input, other), out)

    fn.__name__ = fn.__qualname__ = pub
    fn.__doc__ = f"Elementwise {pub} with broadcasting and torch's type promotion (torch.{pub})."
    return fn


_heaviside = _binary_function("heaviside")


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """0 where input < 0, ``values`` where input == 0, 1 where input > 0 (same dtypes required)."""
    if isinstance(input, Tensor) and isinstance(values, Tensor) and input._dtype is not values._dtype:
        if input._dtype.is_complex or values._dtype.is_complex:
            raise RuntimeError(_COMPLEX_BINARY_ERRORS["heaviside_cpu"])
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _heaviside(input, values, out=out)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The n-th derivative of digamma."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _out(_UOPS["polygamma"].apply(input, int(n)), out)


def mvlgamma(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The multivariate log-gamma of dimension ``p``: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input._dtype.is_complex:  # torch fails building its shifts (arange) in the input's dtype
        raise _not_implemented("arange_cpu", input._data.dtype)
    if not input._dtype.is_floating_point:
        raise RuntimeError("mvlgamma is not implemented for " + _title(input._dtype) + " dtype")
    from .._tensor import _wrap as _w

    shifts = _w(made(-0.5 * np.arange(p, dtype=input._data.dtype, like=_B.ref(input._data))), input._dtype)
    res = (input.unsqueeze(-1) + shifts).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return _out(res, out)


def float_power(input, exponent, *, out: Tensor | None = None) -> Tensor:
    """input ** exponent computed in float64 (complex128 when either is complex; either may be a Python number)."""
    from .arithmetic import pow as _pow

    cplx = any((x._dtype.is_complex if isinstance(x, Tensor) else type(x) is complex) for x in (input, exponent))
    wide = D.complex128 if cplx else D.float64
    py = complex if cplx else float
    base = input.to(wide) if isinstance(input, Tensor) else py(input)
    exp_ = exponent.to(wide) if isinstance(exponent, Tensor) else py(exponent)
    return _out(_pow(base, exp_), out)


class Frexp(Op):
    """mantissa * 2**exponent = input, mantissa in [0.5, 1); d mantissa = grad / 2**exponent."""

    __slots__ = ("scale",)
    differentiable_outputs = (0,)

    @staticmethod
    def forward(ctx, self):
        m, e = np.frexp(self)
        if ctx is not None:
            with np.errstate(over="ignore"):  # 2**-exponent of a subnormal input overflows, as torch's
                ctx.scale = np.ldexp(np.ones_like(self), -e)
        return m, e.astype(np.int32)

    def backward(ctx, grad, grad_exponent=None):
        return grad * _wrap(ctx.scale, grad._dtype)


def frexp(input: Tensor, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2**exponent (torch.return_types.frexp)."""
    from .. import return_types

    if not input._dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = Frexp.apply(input)
    if out is not None:
        _out(m, out[0])
        _out(e, out[1])
        return return_types.frexp(out[0], out[1])
    return return_types.frexp(m, e)


# ------------------------------------------------------------------ division with a rounding mode
def _div_trunc(a, b):
    if a.dtype.kind == "f":
        return np.trunc(np.true_divide(a, b))
    # integer quotient rounded toward zero, exact for 64-bit values
    q = np.floor_divide(a, b)
    return q + ((np.remainder(a, b) != 0) & ((a < 0) != (_B.asarray(b) < 0))).astype(q.dtype)


_DIV_MODES = {mode: _binary(f"DivRounding{mode.capitalize()}", _int_divisor_check(kernel), "iuf", False,
                            f"div_{mode}_cpu", lambda g: (_zeros(g), _zeros(g)), _NONE, "DivBackward2")
              for mode, kernel in (("floor", np.floor_divide), ("trunc", _div_trunc))}


def div_rounding(input, other, rounding_mode: str) -> Tensor:
    """``input / other`` rounded by ``rounding_mode`` ('trunc' or 'floor'); zero gradients."""
    cls = _DIV_MODES.get(rounding_mode)
    if cls is None:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    return cls.apply(input, other)


# ------------------------------------------------------------------ ternary ops
def _lerp_kernel(a, b, w):
    d = b - a
    return np.where(np.abs(w) < 0.5, a + w * d, b - d * (1 - w)).astype(np.result_type(a, b), copy=False)


def _addc_kernel(mul: bool):
    def run(a, t1, t2, value):
        prod = np.multiply(t1, t2) if mul else np.true_divide(t1, t2)
        return a + value * prod
    return run


def _ternary(row: Ternary):
    """The Op of a row of ``_TERNARY``: three tensor slots named ``row.inputs``, then the attributes named
    ``row.attrs``; gradient i is ``row.backward[i](grad, *saved, *attrs)``."""
    name, kernel, bwds, attrs = row.node, row.kernel, row.backward, row.attrs
    kernel = silent(kernel)

    def forward(ctx, self, other, third, *values):
        if ctx is not None:
            for n, v in zip(attrs, values):
                setattr(ctx, n, v)
        dt = D.result_type(self, other, third).np
        arrs = [x.astype(dt, copy=False) if type(x) in _A._ARR else x for x in (self, other, third)]
        try:
            out = kernel(*arrs, *values)
        except ValueError:
            a, b, c = arrs
            if not _broadcastable((np.shape(a), np.shape(b))):
                raise _broadcast_error(a, b) from None
            raise _broadcast_error(np.broadcast_to(a, np.broadcast_shapes(np.shape(a), np.shape(b))), c) from None
        return _B.asarray(out, dt)

    def backward(ctx, grad):
        args = ctx.saved_tensors + tuple(getattr(ctx, n) for n in attrs)
        return tuple(f(grad, *args) if need else None for need, f in zip(ctx.needs_input_grad, bwds))

    ns = {"__slots__": attrs, "inputs": row.inputs, "save": row.saved, "save_for": row.save_for, "nattrs": len(attrs),
          "forward": staticmethod(forward), "backward": backward, "__doc__": f"elementwise {name}",
          "__module__": __name__, "_name": row.torch_node,
          "holomorphic": True}  # polynomial formulas: NOTE [holomorphic formulas]
    return type(name, (Op,), ns)


def _broadcastable(shapes) -> bool:
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


# public name: its row (NOTE [one row per op] in ops/_table.py); the functions are written below (number weights,
# value=, dtype checks). torch saves lerp's end points only for the weight's gradient, the weight always (a number
# for LerpBackward0).
_TERNARY = {
    "lerp": Ternary("Lerp", _lerp_kernel, (lambda g, a, b, w: g * (1 - w), lambda g, a, b, w: g * w,
                                           lambda g, a, b, w: g * (b - a)),
                    inputs=("self", "end", "weight"), saved=("self", "end", "weight"),
                    save_for={"self": ("weight",), "end": ("weight",)}, torch_node="LerpBackward1", function="written"),
    "addcmul": Ternary("Addcmul", _addc_kernel(True), (lambda g, t1, t2, v: g, lambda g, t1, t2, v: g * t2 * v,
                                                       lambda g, t1, t2, v: g * t1 * v),
                       inputs=("self", "tensor1", "tensor2"), saved=("tensor1", "tensor2"),
                       save_for={"tensor1": ("tensor2",), "tensor2": ("tensor1",)}, attrs=("value",),
                       torch_node="AddcmulBackward0", function="written"),
    "addcdiv": Ternary("Addcdiv", _addc_kernel(False), (lambda g, t1, t2, v: g, lambda g, t1, t2, v: g * v / t2,
                                                        lambda g, t1, t2, v: -g * v * t1 / (t2 * t2)),
                       inputs=("self", "tensor1", "tensor2"), saved=("tensor1", "tensor2"),
                       save_for={"tensor1": ("tensor2",)}, attrs=("value",), torch_node="AddcdivBackward0",
                       function="written"),
}
_Lerp, _Addcmul, _Addcdiv = (_ternary(row) for row in _TERNARY.values())
_Lerp.reduced_exact = (2,)  # torch's kernel takes the weight as given (NOTE [reduced precision] in ops/_op.py)


class _LerpScalar(_Lerp):
    __slots__ = ()
    _name = "LerpBackward0"


def _dtype_name(t: Tensor) -> str:
    return _CPP_NAMES[t._dtype.name][0]


def lerp(input: Tensor, end: Tensor, weight, *, out: Tensor | None = None) -> Tensor:
    """input + weight * (end - input); ``weight`` is a number or a tensor."""
    if not input._dtype._differentiable:
        raise _not_implemented("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar",
                               input._data.dtype)
    if end._dtype is not input._dtype:
        raise RuntimeError(f"expected dtype {_dtype_name(input)} for `end` but got dtype {_dtype_name(end)}")
    if isinstance(weight, Tensor) and weight._data.ndim and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected dtype {_dtype_name(input)} for `weight` but got dtype {_dtype_name(weight)}")
    if isinstance(weight, Tensor) and weight._dtype is not input._dtype:
        weight = weight.to(input._dtype)
    elif not isinstance(weight, Tensor):
        weight = D.scalar_into(weight, input._dtype)
    return _out((_Lerp if isinstance(weight, Tensor) else _LerpScalar).apply(input, end, weight), out)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out: Tensor | None = None) -> Tensor:
    """input + value * tensor1 * tensor2."""
    return _out(_Addcmul.apply(input, tensor1, tensor2, _value_for(input, tensor1, tensor2, value)), out)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out: Tensor | None = None) -> Tensor:
    """input + value * tensor1 / tensor2 (float tensors only for the division)."""
    if tensor1._dtype._kind < 2 and tensor2._dtype._kind < 2:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    return _out(_Addcdiv.apply(input, tensor1, tensor2, _value_for(input, tensor1, tensor2, value)), out)


def _value_for(*args):
    *tensors, value = args
    dt = D.result_type(*tensors)
    if dt._kind < 2 and isinstance(value, float):
        return int(value)  # torch casts the scalar to the integer result type
    return D.scalar_into(value, dt)


# ------------------------------------------------------------------ Tensor methods of their own (bound by ember/_methods.py)
# t.polygamma(n) is torch.polygamma(n, t): the order of the function's arguments is not the method's
def _polygamma_method(self, n: int) -> "Tensor":
    return polygamma(n, self)


def _polygamma_inplace(self, n: int) -> "Tensor":
    return _inplace(self, lambda t: polygamma(n, t))


def float_power_(self, exponent) -> "Tensor":
    cplx = self._dtype.is_complex or (exponent._dtype.is_complex if isinstance(exponent, Tensor)
                                      else type(exponent) is complex)
    want = D.complex128 if cplx else D.float64
    if self._dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {_title(self._dtype)} but the "
                           f"operation's result requires dtype {want._scalar_name}")
    return _inplace(self, float_power, exponent)


# ---------------------------------------------------------------- angle of a real tensor
def angle(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """0 for x >= 0, pi for x < 0 (NaN stays NaN); gradient zero, as torch's for real input."""
    _tensor_arg("angle", input)
    res = Angle.apply(input)
    return res if out is None else out.copy_(res)


# ------------------------------------------------------------------ the public names
# functions written by hand with no row of their own (NOTE [one row per op]: the names they declare)
_WRITTEN = {"mvlgamma": Names(function="written"), "frexp": Names(inplace=False, function="written"),
            "float_power": Names(inplace=False, function="written")}  # (float_power_ is written above)
EXPORTS = export(globals(), (_UNARY, _PREDICATES, _BINARY, _TERNARY, _WRITTEN), {
    Unary: lambda name, row, alias="": globals()[name] if alias else _unary_function(name),  # arcsin is asin
    Predicate: _predicate, Binary: lambda name, row, alias="": _binary_function(name, alias)})
__all__ = EXPORTS.public
_args.install(globals(), __all__, out=("isneginf", "isposinf", "signbit"))
