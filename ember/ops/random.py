"""Random sampling: normal, bernoulli, multinomial, poisson and the in-place samplers (uniform_ ...).

Every sample honours ``ember.manual_seed`` or an explicit ``Generator``. A sample does not depend on
the values it replaces nor (differentiably) on its parameters, so each sampler is an ``Op`` whose
gradient is zero for every tensor input, as in torch; the node names are torch's. Argument checks
run before sampling, with torch's messages. Sampling draws in float64 and casts to the result dtype.
"""
from __future__ import annotations

import numpy as np

from .. import _args
from .. import _backend as _B
from .. import _dtype as D
from . import _special as _sp
from .._random import _rng
from ..autograd._interpose import made, replayable as _replayable
from .._tensor import Tensor, _wrap, _CPP_NAMES
from ._op import NOT_YET, Op, unsupported
from ._inplace import _title
from .arithmetic import _out as _arith_out
from ._inplace import inplace as _inplace

__all__ = ["normal", "bernoulli", "multinomial", "poisson", "binomial", "_standard_gamma", "_standard_gamma_grad",
           "_sample_dirichlet"]


def _fmt(x) -> str:
    """A number as C++ streams print it in torch's messages (``2``, ``1.5``, ``1e+20``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _zero_grads(ctx, grad):
    """A draw ignores its tensor inputs' values: the gradient of each is zero."""
    z = _wrap(made(np.zeros_like(grad._data)), grad._dtype)  # no history, as torch's zeros
    return tuple(z if need else None for need in ctx.needs_input_grad)


def _as(arr, like) -> np.ndarray:
    """A host draw as ``like``'s dtype, on its device (NOTE [factories on cuda] in ember/_factories.py)."""
    return _B.like(like, np.asarray(arr).astype(like.dtype, copy=False))


def _parts(draw, shape, like) -> np.ndarray:
    """``draw(shape)`` as ``like``'s dtype; for a complex dtype the real and imaginary parts are drawn alike."""
    if like.dtype.kind != "c":
        return _as(draw(shape), like)
    pair = draw(tuple(shape) + (2,))
    return _as(pair[..., 0] + 1j * pair[..., 1], like)


def _part_std(std, like) -> float:
    """A complex normal sample of standard deviation ``std`` has parts of deviation std / sqrt(2), as torch's."""
    return std / np.sqrt(2.0) if like.dtype.kind == "c" else std


# ---------------------------------------------------------------- in-place samplers (the value left in self)
def _draw_uniform(self, lo, hi, rng):
    return _parts(lambda sh: lo + (hi - lo) * rng.random(sh), self.shape, self)


def _draw_normal(self, mean, std, rng):
    s = _part_std(std, self)
    return _parts(lambda sh: mean + s * rng.standard_normal(sh), self.shape, self)


def _draw_log_normal(self, mean, std, rng):
    return _as(np.exp(mean + std * rng.standard_normal(self.shape)), self)


def _draw_cauchy(self, median, sigma, rng):
    return _as(median + sigma * rng.standard_cauchy(self.shape), self)


def _draw_exponential(self, lambd, rng):
    return _as(rng.standard_exponential(self.shape) / lambd, self)


def _draw_geometric(self, p, rng):
    return _as(rng.geometric(p, self.shape), self)


def _draw_random(self, lo, hi, rng):  # integers in [lo, hi]
    return _as(rng.integers(lo, hi, self.shape, endpoint=True, dtype=np.int64), self)


def _draw_bernoulli(self, p, rng):
    return _as(_B.like(self, rng.random(self.shape)) < p, self)


def _zero_tangent(args, out, tangents):
    return None  # a zero tangent, without drawing again


def _make(name: str, draw, nattrs: int, node: str | None = None) -> type:
    """A sampler ``Op`` running ``draw(*arrays, *params, rng)``; the trailing ``nattrs`` arguments are plain values.
    Its node is named ``node`` (default: ``name + "Backward0"``)."""
    def forward(ctx, *args):
        with np.errstate(over="ignore"):  # torch saturates to inf silently (exp, casts to float16)
            return draw(*args)

    body = {"__slots__": (), "nattrs": nattrs, "forward": staticmethod(forward), "backward": _zero_grads,
            "jvp": staticmethod(_zero_tangent), "__doc__": f"{name}: a sample; zero gradient for every tensor input"}
    if node is not None:
        body["_name"] = node
    return type(name, (Op,), body)


Uniform = _make("Uniform", _draw_uniform, 3)
Normal = _make("Normal", _draw_normal, 3)
LogNormal = _make("LogNormal", _draw_log_normal, 3)
Cauchy = _make("Cauchy", _draw_cauchy, 3)
Exponential = _make("Exponential", _draw_exponential, 2)
Geometric = _make("Geometric", _draw_geometric, 2)
# random_(from, to), random_(to), random_(): one kernel, three torch node names
RandomFromTo = _make("RandomFromTo", _draw_random, 3, "RandomBackward0")
RandomTo = _make("RandomTo", _draw_random, 3, "RandomBackward1")
RandomAll = _make("RandomAll", _draw_random, 3, "RandomBackward2")
BernoulliTensor = _make("BernoulliTensor", _draw_bernoulli, 1, "BernoulliBackward1")
BernoulliScalar = _make("BernoulliScalar", _draw_bernoulli, 2, "BernoulliBackward2")


def _float_only(self: Tensor, kernel: str, complex_ok: bool = False) -> None:
    if not (self._dtype.is_floating_point or (complex_ok and self._dtype.is_complex)):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_title(self._dtype)}\'')


def _continuous_only(self: Tensor, what: str, cpp: bool) -> None:
    if not self._dtype.is_floating_point:
        names = _CPP_NAMES[self._dtype.name]
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {names[0] if cpp else names[1]}")


def _fmax(dt: D.dtype) -> float:
    return D.finfo(dt).max


def _nmant(dt: D.dtype) -> int:
    return 7 if dt is D.bfloat16 else int(np.finfo(dt.np).nmant)


def uniform_value(self: Tensor, from_: float = 0, to: float = 1, *, generator=None) -> Tensor:
    """The value ``self.uniform_(from, to)`` leaves: samples from [from, to)."""
    _float_only(self, "check_uniform_bounds", complex_ok=True)
    fmax = _fmax(self._dtype.to_real())  # complex: the bounds of each part
    cpp, title = _CPP_NAMES[self._dtype.to_real().name]
    for name, v in (("from", from_), ("to", to)):
        if not -fmax <= v <= fmax:
            raise RuntimeError(f"{name} is out of bounds for {cpp}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_fmt(from_)} > "
                           f"to={_fmt(to)}")
    if to - from_ > fmax:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{title}>::max(), but found "
                           f"to={_fmt(to)} and from={_fmt(from_)} which result in to-from to exceed the limit")
    return Uniform.apply(self, float(from_), float(to), _rng(generator))


def normal_value(self: Tensor, mean: float = 0, std: float = 1, *, generator=None) -> Tensor:
    """The value ``self.normal_(mean, std)`` leaves."""
    _float_only(self, "normal_kernel_cpu", complex_ok=True)
    _check_std(std)
    return Normal.apply(self, float(mean), float(std), _rng(generator))


def log_normal_value(self: Tensor, mean: float = 1, std: float = 2, *, generator=None) -> Tensor:
    """The value ``self.log_normal_(mean, std)`` leaves: exp of normal samples."""
    _float_only(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    return LogNormal.apply(self, float(mean), float(std), _rng(generator))


def cauchy_value(self: Tensor, median: float = 0, sigma: float = 1, *, generator=None) -> Tensor:
    """The value ``self.cauchy_(median, sigma)`` leaves."""
    _continuous_only(self, "Cauchy", cpp=True)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    return Cauchy.apply(self, float(median), float(sigma), _rng(generator))


def exponential_value(self: Tensor, lambd: float = 1, *, generator=None) -> Tensor:
    """The value ``self.exponential_(lambd)`` leaves."""
    _continuous_only(self, "Exponential", cpp=False)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    return Exponential.apply(self, float(lambd), _rng(generator))


def geometric_value(self: Tensor, p: float, *, generator=None) -> Tensor:
    """The value ``self.geometric_(p)`` leaves: the number of Bernoulli(p) trials up to the first success."""
    if self._dtype is D.bool or self._dtype.is_complex:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{_title(self._dtype)}'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    return Geometric.apply(self, float(p), _rng(generator))


def _random_error(args, kwargs) -> TypeError:
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    return TypeError(f"random_() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     " * (*, torch.Generator generator = None)\n"
                     " * (int from, int to, *, torch.Generator generator = None)\n"
                     " * (int to, *, torch.Generator generator = None)\n")


def _int_arg(v) -> bool:
    return isinstance(v, (int, np.integer)) or (isinstance(v, Tensor) and not v._dtype.is_floating_point)


def _random_top(dt: D.dtype) -> int:
    """The largest value ``random_()`` draws for ``dt`` (2**mantissa digits for floats)."""
    if dt.is_floating_point:
        return 2 ** (_nmant(dt) + 1)
    if dt is D.bool:
        return 1
    return int(np.iinfo(dt.np).max)


def _check_random_bound(name: str, v: int, dt: D.dtype) -> None:
    if dt.is_floating_point:
        top, bits = _random_top(dt), _nmant(dt) + 1
        if not -_fmax(dt) <= v <= _fmax(dt):
            raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[dt.name][0]}")
        if not -top <= v <= top:
            import warnings

            warnings.warn(f"{name} is out of bounds [-(2^{bits}), 2^{bits}]. Due to precision "
                          f"limitations {_CPP_NAMES[dt.name][0]} can support discrete uniform distribution only "
                          "within this range. This warning will become an error in version 1.7 release, please "
                          "fix the code in advance", UserWarning, stacklevel=4)
        return
    lo, hi = (0, 1) if dt is D.bool else (int(np.iinfo(dt.np).min), int(np.iinfo(dt.np).max))
    if not lo <= v <= hi:
        raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[dt.name][0]}")


def random_value(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """The value ``self.random_([from,] to)`` leaves: integers from [from, to) (``to=None``: up to the dtype's
    limit), or from [0, 2**mantissa digits] / [0, max] by default."""
    pos = list(args)
    if "from" in kwargs:
        pos.insert(0, kwargs.pop("from"))
    if "to" in kwargs:
        pos.append(kwargs.pop("to"))
        op = RandomFromTo if len(pos) == 2 else RandomTo
    else:
        op = (RandomAll, RandomTo, RandomFromTo)[min(len(pos), 2)]
    if kwargs or len(pos) > 2 or not all(_int_arg(a) or (a is None and i == 1) for i, a in enumerate(pos)):
        raise _random_error(args, kwargs)
    dt = self._dtype
    if dt.is_complex:
        if not pos:
            raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{_title(dt)}'")
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if not pos:
        return op.apply(self, 0, _random_top(dt), _rng(generator))
    lo, hi = (0, pos[0]) if len(pos) == 1 else (int(pos[0]), pos[1])
    if hi is None:
        _check_random_bound("from", lo, dt)
        return op.apply(self, lo, _random_top(dt), _rng(generator))
    hi = int(hi)
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    _check_random_bound("from", lo, dt)
    _check_random_bound("to - 1", hi - 1, dt)
    return op.apply(self, lo, hi - 1, _rng(generator))


def bernoulli_value(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """The value ``self.bernoulli_(p)`` leaves: ones with probability ``p`` (a number or a tensor)."""
    if self._dtype.is_complex:
        kernel = "bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else "bernoulli_scalar_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_title(self._dtype)}'")
    if isinstance(p, Tensor):
        _float_only(p, "bernoulli_tensor_cpu_p_")
        if p._data.shape != self._data.shape:
            _check_expand(p._data.shape, self._data.shape)
        _check_probabilities(p._data)
        return BernoulliTensor.apply(self, p, _rng(generator))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    return BernoulliScalar.apply(self, float(p), _rng(generator))


@_replayable  # a check of the values: compiled programs run it on every call (NOTE [replayable steps])
def _check_probabilities(p: np.ndarray) -> None:
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_expand(shape: tuple, target: tuple) -> None:
    """torch's error when ``shape`` cannot be expanded to ``target``."""
    if len(shape) <= len(target):
        for i in range(1, len(shape) + 1):
            if shape[-i] != target[-i] and shape[-i] != 1:
                break
        else:
            return
        dim = len(target) - i
    else:
        raise RuntimeError(f"expand: the requested shape has too few dimensions: target {list(target)}, "
                           f"tensor {list(shape)}")
    raise RuntimeError(f"The expanded size of the tensor ({target[dim]}) must match the existing size "
                       f"({shape[-i]}) at non-singleton dimension {dim}.  Target sizes: {list(target)}.  "
                       f"Tensor sizes: {list(shape)}")


# ---------------------------------------------------------------- out-of-place samplers
def _draw_normal_tt(mean, std, rng):
    shape = np.broadcast_shapes(mean.shape, std.shape)
    return _as(mean + _part_std(std, mean) * _parts(rng.standard_normal, shape, mean), mean)


def _draw_normal_ts(mean, std, rng):
    return _as(mean + _part_std(std, mean) * _parts(rng.standard_normal, mean.shape, mean), mean)


def _draw_normal_st(std, mean, rng):
    return _as(mean + std * _B.like(std, rng.standard_normal(std.shape)), std)


def _draw_bernoulli_p(p, rng):
    return _draw_bernoulli(p, p, rng)


def _draw_poisson(rate, rng):
    return _as(rng.poisson(_B.to_host(rate).astype(np.float64, copy=False)), rate)  # NumPy's generator: on the host


NormalTensorScalar = _make("NormalTensorScalar", _draw_normal_ts, 2, "NormalBackward1")
NormalScalarTensor = _make("NormalScalarTensor", _draw_normal_st, 2, "NormalBackward2")
NormalTensorTensor = _make("NormalTensorTensor", _draw_normal_tt, 1, "NormalBackward3")
for _cls in (NormalTensorScalar, NormalTensorTensor):
    _cls.no_complex_grad = "normal"
Bernoulli = _make("Bernoulli", _draw_bernoulli_p, 1, "BernoulliBackward0")
Poisson = _make("Poisson", _draw_poisson, 1, "PoissonBackward0")


class BernoulliP(Op):
    """bernoulli(input, p): torch records no derivative for it (backward raises)."""

    __slots__ = ()
    nattrs = 2
    _name = "NotImplemented"
    jvp = unsupported("aten::bernoulli")

    @staticmethod
    def forward(ctx, self, p, rng):
        return _draw_bernoulli(self, p, rng)

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::bernoulli is not implemented")


@_replayable  # a check of the values: compiled programs run it on every call (NOTE [replayable steps])
def _check_stds(std: np.ndarray) -> None:
    if std.size and not (std >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _check_std(std) -> None:
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def _normal_error(args, kwargs) -> TypeError:
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    return TypeError(f"normal() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
                     " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
                     " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
                     " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
                     "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
                     "Union[torch.device, str, None] device = None, bool pin_memory = False, "
                     "bool requires_grad = False)\n")


def _out(out, result: Tensor) -> Tensor:
    return result if out is None else _arith_out(result, out)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Normal samples: tensor mean and/or std (broadcast), or numbers with ``size``."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    rng = _rng(generator)
    if size is not None:
        if (mt and mean._data.ndim) or (st and std._data.ndim) or not all(
                isinstance(v, (Tensor, int, float, np.integer, np.floating)) for v in (mean, std)):
            raise _normal_error((mean, std, size), {})
        from .._factories import _size, _finish, _float_dtype

        mean = mean.item() if mt else mean
        std = std.item() if st else std
        d = _float_dtype(dtype)
        if not d._differentiable:
            raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{_title(d)}\'')
        _check_std(std)
        shape = _size((size,), "normal")
        return _out(out, _finish(_normal_sample(mean, std, shape, d, generator), d, requires_grad, device))
    if st and std._dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if mt and st:
        _float_only(mean, "normal_kernel_cpu", complex_ok=True)
        _check_stds(std._data)
        try:
            np.broadcast_shapes(mean._data.shape, std._data.shape)
        except ValueError:
            from .arithmetic import _broadcast_error

            raise _broadcast_error(mean._data, std._data) from None
        return _out(out, NormalTensorTensor.apply(mean, std, rng))
    if mt:
        _float_only(mean, "normal_kernel_cpu", complex_ok=True)
        _check_std(std)
        return _out(out, NormalTensorScalar.apply(mean, float(std), rng))
    if st:
        _float_only(std, "normal_kernel_cpu")
        _check_stds(std._data)
        return _out(out, NormalScalarTensor.apply(std, float(mean), rng))
    raise _normal_error((mean, std), {})


@_replayable  # draws random numbers at array level: NOTE [replayable steps]
def _normal_sample(mean: float, std: float, shape: tuple, d: D.dtype, generator) -> np.ndarray:
    like = np.empty(0, d.np)
    return _as(mean + _part_std(std, like) * _parts(_rng(generator).standard_normal, shape, like), like)


def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """Zeros and ones: each element 1 with probability ``input`` (or with probability ``p``)."""
    rng = _rng(generator)
    if p is not None:
        if input._dtype.is_complex:
            raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for '{_title(input._dtype)}'")
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
        return _out(out, BernoulliP.apply(input, float(p), rng))
    if input._dtype.is_complex:
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_self_\" not implemented for '{_title(input._dtype)}'")
    _float_only(input, "bernoulli_tensor_cpu_p_")
    _check_probabilities(input._data)
    return _out(out, Bernoulli.apply(input, rng))


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with rates ``input``."""
    _float_only(input, "poisson_cpu")
    if input._data.size and not (input._data >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Poisson.apply(input, _rng(generator))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None,
                out=None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (weights, not necessarily normalised)."""
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    p = input._data
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_title(input._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = p.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = _B.to_host(p).reshape(-1, n).astype(np.float64)  # (host draws; the indices go to p's device)
    if rows.size:
        if not (np.isfinite(rows) & (rows >= 0)).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if not (rows.sum(axis=1) > 0).all():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(generator)
    m = rows.shape[0]
    if m == 0:
        idx = np.zeros((0, num_samples), np.int64)
    elif replacement:
        # Inverse CDF for all rows in one search: row i's CDF and uniforms are shifted into [i, i + 1].
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        shift = np.arange(m, dtype=np.float64)[:, None]
        u = rng.random((m, num_samples)) + shift
        idx = np.searchsorted((cdf + shift).ravel(), u.ravel(), side="right").reshape(m, num_samples)
        idx -= (n * np.arange(m))[:, None]
        last = n - 1 - np.argmax(rows[:, ::-1] > 0, axis=1)  # rounding must not pick a trailing zero
        idx = np.minimum(idx, last[:, None])
    else:
        # Exponential race: the k smallest E_i / p_i are a weighted sample without replacement.
        with np.errstate(divide="ignore"):
            keys = rng.standard_exponential((m, n)) / rows
        idx = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    idx = idx.astype(np.int64).reshape(p.shape[:-1] + (num_samples,))
    return _out(out, _wrap(_B.like(p, idx), D.int64))


# ---------------------------------------------------------------- Gamma, Dirichlet and binomial samplers
# NOTE [reparameterised Gamma samples]
# A Gamma(a, 1) sample x = F^-1(u; a) is a differentiable function of a at a fixed CDF level u (implicit
# reparameterisation): dx/da = -(dF/da) / pdf(x), computed by ``_special.gamma_sample_dlog`` from a and x alone, so
# the backward needs only the saved sample. ``StandardGamma`` (torch._standard_gamma) is that op; torch records no
# second derivative for it, and neither does ember (``StandardGammaGrad`` refuses its backward, as torch's).
# Dirichlet and Beta samples are normalised Gamma samples. For small concentrations the Gamma samples fall below
# the float range (a = 0.01 gives samples like 1e-40 and smaller), so those are drawn in log space: ``LogStandardGamma``
# returns log x (log G(a+1) + log(U) / a below a = 1) with gradient d log x / da, and a Dirichlet sample is the
# softmax of those logs; its gradient is the chain rule through the softmax.
def _log_gamma_draw(alpha: np.ndarray, rng) -> np.ndarray:
    """log of Gamma(alpha, 1) draws in float64. As torch's kernel: alpha = inf gives inf; alpha <= 0 or NaN gives the
    smallest normal number of ``alpha``'s dtype (a degenerate Gamma at 0, kept positive)."""
    a = alpha.astype(np.float64, copy=False)
    valid = (a > 0) & np.isfinite(a)
    a = np.where(valid, a, 1.0)
    small = a < 1.0
    boosted = np.where(small, a + 1.0, a)
    with np.errstate(divide="ignore"):
        logs = _B.like(a, np.log(rng.standard_gamma(_B.to_host(boosted))))  # NumPy's generator draws on the host
        if small.any():  # G(a) = G(a + 1) U^(1/a); 1 - U lies in (0, 1]
            logs = logs + np.where(small, np.log1p(-_B.like(a, rng.random(a.shape))) / np.where(small, a, 1.0), 0.0)
    if not valid.all():
        floor = np.log(np.finfo(alpha.dtype).tiny)
        logs = np.where(valid, logs, np.where(alpha == np.inf, np.inf, floor))
    return logs


class StandardGamma(Op):
    """x ~ Gamma(alpha, 1); dx/dalpha by implicit reparameterisation (NOTE [reparameterised Gamma samples])."""

    __slots__ = ()
    nattrs = 1
    save = ("self", "result")
    jvp = unsupported("_standard_gamma", NOT_YET)
    _grad: type  # the op of the sample's derivative, from alpha and the saved sample (set below)

    @staticmethod
    def forward(ctx, alpha, rng):
        tiny = np.finfo(alpha.dtype).tiny
        with np.errstate(over="ignore"):
            x = np.exp(_log_gamma_draw(alpha, rng)).astype(alpha.dtype)
        return np.maximum(x, tiny)

    def backward(ctx, grad):
        alpha, sample = ctx.saved_tensors
        return (grad * type(ctx)._grad.apply(alpha, sample),)


class StandardGammaGrad(Op):
    """dx/dalpha of a Gamma(alpha, 1) sample x; torch records no derivative for it."""

    __slots__ = ()
    _name = "NotImplemented"
    jvp = unsupported("aten::_standard_gamma_grad")

    @staticmethod
    def forward(ctx, alpha, x):
        a64, x64 = alpha.astype(np.float64), x.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = x64 * _sp.gamma_sample_dlog(a64, np.log(x64))
        d = np.where(x64 == 0, 0.0, d)
        return d.astype(np.result_type(alpha, x))

    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::_standard_gamma_grad is not implemented")


class LogStandardGamma(StandardGamma):
    """log x for x ~ Gamma(alpha, 1), with d log x / dalpha (NOTE [reparameterised Gamma samples])."""

    __slots__ = ()

    @staticmethod
    def forward(ctx, alpha, rng):
        return _log_gamma_draw(alpha, rng).astype(alpha.dtype)


class LogStandardGammaGrad(StandardGammaGrad):
    """d log x / dalpha of a Gamma(alpha, 1) sample given log x; not differentiable itself (the same torch op)."""

    __slots__ = ()
    _name = "NotImplemented"

    @staticmethod
    def forward(ctx, alpha, log_x):
        with np.errstate(invalid="ignore"):
            d = _sp.gamma_sample_dlog(alpha.astype(np.float64), log_x.astype(np.float64))
        return d.astype(alpha.dtype)


StandardGamma._grad, LogStandardGamma._grad = StandardGammaGrad, LogStandardGammaGrad


def _draw_dirichlet(alpha, rng):
    logs = _log_gamma_draw(alpha, rng)
    with np.errstate(invalid="ignore"):
        logs = logs - logs.max(axis=-1, keepdims=True)
        x = np.exp(logs)
        x /= x.sum(axis=-1, keepdims=True)
    return x.astype(alpha.dtype)


def _draw_binomial(count, prob, rng):
    """Binomial draws; a count that is negative, NaN or infinite, or a NaN probability, gives NaN (torch's kernel
    may not return for some of these)."""
    shape = np.broadcast_shapes(count.shape, prob.shape)
    n, p = np.broadcast_to(count, shape).astype(np.float64), np.broadcast_to(prob, shape).astype(np.float64)
    valid = (n >= 0) & np.isfinite(n) & (n < 2.0 ** 62) & ~np.isnan(p)
    draws = _B.like(n, rng.binomial(_B.to_host(np.where(valid, n, 0).astype(np.int64)),  # NumPy's generator: on the host
                                    _B.to_host(np.clip(np.where(valid, p, 0.5), 0.0, 1.0))))
    return np.where(valid, draws, np.nan).astype(count.dtype)


SampleDirichlet = _make("SampleDirichlet", _draw_dirichlet, 1, "NotImplemented")
SampleBinomial = _make("SampleBinomial", _draw_binomial, 1, "NotImplemented")


def _no_derivative(kernel: str):
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{kernel} is not implemented")
    return backward


SampleDirichlet.backward = _no_derivative("_sample_dirichlet")
SampleBinomial.backward = _no_derivative("binomial")
SampleDirichlet.jvp = unsupported("aten::_sample_dirichlet")
SampleBinomial.jvp = unsupported("aten::binomial")


def _standard_gamma(input: Tensor, generator=None) -> Tensor:
    """Gamma(input, 1) samples, differentiable in ``input`` (NOTE [reparameterised Gamma samples])."""
    _float_only(input, "gamma_cpu")
    return StandardGamma.apply(input, _rng(generator))


def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """d output / d input for Gamma(input, 1) samples ``output`` (the implicit reparameterisation gradient)."""
    _float_only(input, "_standard_gamma_grad_cpu")
    return StandardGammaGrad.apply(input, output)


def _log_standard_gamma(input: Tensor, generator=None) -> Tensor:
    """log of Gamma(input, 1) samples, drawn in log space and differentiable in ``input``."""
    _float_only(input, "dirichlet")  # its one caller is Dirichlet.rsample, torch's _sample_dirichlet there
    return LogStandardGamma.apply(input, _rng(generator))


def _sample_dirichlet(input: Tensor, generator=None) -> Tensor:
    """Dirichlet samples with concentrations along the last dim of ``input`` (no gradient, as torch's)."""
    _float_only(input, "dirichlet")
    return SampleDirichlet.apply(input, _rng(generator))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial(count, prob) samples, elementwise and broadcast (no gradient, as torch's)."""
    if not count._dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_title(count._dtype)}")
    if prob._dtype != count._dtype:
        raise RuntimeError(f"Found dtype {_title(prob._dtype)} but expected {_title(count._dtype)}")
    try:
        np.broadcast_shapes(count._data.shape, prob._data.shape)
    except ValueError:
        from .arithmetic import _broadcast_error

        raise _broadcast_error(count._data, prob._data) from None
    return SampleBinomial.apply(count, prob, _rng(generator))


_args.install(globals(), __all__)


# ------------------------------------------------------------------ the in-place samplers, as Tensor methods
# (bound by ember/_methods.py: NOTE [Tensor methods from functions])
def uniform_(self, from_: float = 0, to: float = 1, *, generator=None, **kwargs):
    """Fill with uniform samples from [from, to)."""
    return _inplace(self, uniform_value, kwargs.pop("from", from_), to, generator=generator, **kwargs)


def normal_(self, mean: float = 0, std: float = 1, *, generator=None):
    return _inplace(self, normal_value, mean, std, generator=generator)


def log_normal_(self, mean: float = 1, std: float = 2, *, generator=None):
    return _inplace(self, log_normal_value, mean, std, generator=generator)


def cauchy_(self, median: float = 0, sigma: float = 1, *, generator=None):
    return _inplace(self, cauchy_value, median, sigma, generator=generator)


def exponential_(self, lambd: float = 1, *, generator=None):
    return _inplace(self, exponential_value, lambd, generator=generator)


def geometric_(self, p: float, *, generator=None):
    return _inplace(self, geometric_value, p, generator=generator)


def random_(self, *args, generator=None, **kwargs):
    """Fill with integers from [from, to) (default: [0, 2**mantissa digits or the dtype's max])."""
    return _inplace(self, random_value, *args, generator=generator, **kwargs)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with ones with probability ``p`` (a number or a tensor broadcast to this shape), else zeros."""
    return _inplace(self, bernoulli_value, p, generator=generator)
