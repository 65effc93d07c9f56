"""Numerics against torch: exp-based ops at large |x| and float16 computation."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import BF16 as oracle_bf16, check, ember, lib_tensor, torch
from ops.op_db import OPS, call

NO_EXTREMES: set[str] = set()

EXTREMES = [-1e4, -1000.0, -100.0, -88.0, -20.0, -1e-8, 0.0, 1e-8, 20.0, 88.0, 89.0, 100.0, 1000.0, 1e4]

EXP_BASED = {
    "sigmoid": lambda lib, x: x.sigmoid(),
    "tanh": lambda lib, x: x.tanh(),
    "exp": lambda lib, x: x.exp(),
    "sigmoid*x": lambda lib, x: x * x.sigmoid(),
    "log(sigmoid)": lambda lib, x: x.sigmoid().log(),
    "relu": lambda lib, x: x.relu(),
    "clamp exp": lambda lib, x: x.clamp(-50, 50).exp(),
}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(EXP_BASED))
def test_large_magnitudes_match_torch(name: str, dtype) -> None:
    """Same values (inf/nan where torch has them, finite where torch is) and grads at extreme inputs."""
    x = np.array(EXTREMES, dtype=np.float64).astype(dtype)
    eo, to = check(EXP_BASED[name], x, gradgrad=dtype != np.float16)
    e, t = eo[0].detach().numpy(), to[0].detach().numpy()
    assert np.array_equal(np.isfinite(e), np.isfinite(t))


def test_sigmoid_saturates_without_overflow() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow warning either
        y = ember.tensor([-1e4, 1e4]).sigmoid()
    assert y.tolist() == [0.0, 1.0]


F16 = {
    "add": (lambda lib, a, b: a + b, 2),
    "mul": (lambda lib, a, b: a * b, 2),
    "div": (lambda lib, a, b: a / (b.abs() + 1), 2),
    "matmul": (lambda lib, a, b: a @ b.t(), 2),
    "sum": (lambda lib, a: a.sum(), 1),
    "sum dim": (lambda lib, a: a.sum(1), 1),
    "mean": (lambda lib, a: a.mean(), 1),
    "mean dim": (lambda lib, a: a.mean(0), 1),
    "exp": (lambda lib, a: a.exp(), 1),
    "log": (lambda lib, a: (a.abs() + 0.1).log(), 1),
    "tanh": (lambda lib, a: a.tanh(), 1),
    "sigmoid": (lambda lib, a: a.sigmoid(), 1),
    "pow": (lambda lib, a: a.abs() ** 1.5, 1),
    "scalar ops": (lambda lib, a: 3.0 * a - 1 / (a * a + 2), 1),
}


@pytest.mark.parametrize("name", sorted(F16))
def test_float16_computes_as_torch(name: str) -> None:
    """float16 in, float16 out, values as torch's (which accumulates reductions in float32)."""
    fn, n = F16[name]
    rng = np.random.default_rng(1)
    arrays = [(rng.standard_normal((64, 64)) * 4).astype(np.float16) for _ in range(n)]
    check(fn, *arrays, rtol=2e-3, atol=2e-3)


# ------------------------------------------------------------------ no NumPy RuntimeWarnings
SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30, 1000.0, -1000.0, 0.5, 3.0])


def _extreme(a: np.ndarray, shift: int) -> np.ndarray:
    """``a``'s shape and dtype filled with special values (float arrays only)."""
    if a.dtype.kind != "f" and a.dtype != oracle_bf16:
        return a
    return np.resize(np.roll(SPECIALS, shift), a.shape).astype(a.dtype)


def _run(lib, op, sample, arrays):
    ts = [lib_tensor(lib, a) for a in arrays]
    for t in ts:
        if t.is_floating_point():
            t.requires_grad_(op.grad)
    outs = call(op, sample, lib, ts)
    outs = [o for o in (outs if isinstance(outs, (tuple, list)) else [outs]) if o.requires_grad]
    leaves = [t for t in ts if t.requires_grad]
    if not outs or not leaves:
        return
    grads = lib.autograd.grad([o.sum() for o in outs], leaves, create_graph=op.gradgrad, allow_unused=True)
    grads = [g for g in grads if g is not None and g.requires_grad]
    if op.gradgrad and grads:
        lib.autograd.grad(sum(g.sum() for g in grads), leaves, allow_unused=True)


@pytest.mark.parametrize("op", [op for op in OPS if op.name not in NO_EXTREMES], ids=lambda op: op.name)
def test_no_numpy_warnings(op) -> None:
    """Forward, backward and double backward of every op_db entry on inf/nan/0/huge/tiny values compute
    silently, as torch does (its samples run with warnings as errors in test_ops.py)."""
    sample = next(iter(op.samples(np.random.default_rng(0))))
    for shift in (0,):
        arrays = [_extreme(np.asarray(a), shift + i) for i, a in enumerate(sample.arrays)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _run(torch, op, sample, arrays)
            except RuntimeError:
                continue  # torch refuses these values too (e.g. a NaN where indices are needed)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            _run(ember, op, sample, arrays)


# Ops at their singular points: values and first gradients as torch's (a NaN gradient where torch's is finite,
# or a finite value where torch's is NaN, are both bugs). Found by a sweep of the ops with singular points; the
# ones that already matched stay here so they keep matching.
_INF = np.inf
SINGULAR = {
    "atan2 at the origin": (lambda lib, a, b: lib.atan2(a, b),
                            (np.array([0.0, 0.0, -0.0, 1.0, 0.0]), np.array([0.0, -0.0, 0.0, 0.0, 2.0]))),
    "softmax with +inf": (lambda lib, x: lib.softmax(x, 0), (np.array([_INF, 0.0, 1.0], np.float32),)),
    "softmax with -inf": (lambda lib, x: lib.softmax(x, -1), (np.array([[-_INF, 0.0, 1.0], [-_INF, -_INF, 0]]),)),
    "softmax all -inf": (lambda lib, x: lib.softmax(x, 0), (np.array([-_INF, -_INF]),)),
    "log_softmax with +inf": (lambda lib, x: lib.log_softmax(x, 0), (np.array([_INF, 0.0, 1.0], np.float32),)),
    "log_softmax with -inf": (lambda lib, x: lib.log_softmax(x, 1), (np.array([[-_INF, 0.0, 1.0]]),)),
    "log_softmax all -inf": (lambda lib, x: lib.log_softmax(x, 0), (np.array([-_INF, -_INF]),)),
    "softmin with -inf": (lambda lib, x: lib.nn.functional.softmin(x, 0), (np.array([-_INF, 0.0, 1.0]),)),
    "logsumexp with inf": (lambda lib, x: lib.logsumexp(x, 0), (np.array([_INF, 0.0]),)),
    "logsumexp all -inf": (lambda lib, x: lib.logsumexp(x, 0), (np.array([-_INF, -_INF]),)),
    "norm of zeros": (lambda lib, x: x.norm(), (np.zeros(3),)),
    "vector_norm of zeros": (lambda lib, x: lib.linalg.vector_norm(x), (np.zeros(3),)),
    "dist of equal points": (lambda lib, x: lib.dist(x, lib.zeros(3, dtype=lib.float64)), (np.zeros(3),)),
    "normalize zeros": (lambda lib, x: lib.nn.functional.normalize(x), (np.zeros((1, 3)),)),
    "cosine_similarity with zeros": (lambda lib, x: lib.nn.functional.cosine_similarity(
        x, lib.ones(1, 3, dtype=lib.float64)), (np.zeros((1, 3)),)),
    "pairwise_distance equal": (lambda lib, x: lib.nn.functional.pairwise_distance(
        x, lib.zeros(1, 3, dtype=lib.float64)), (np.zeros((1, 3)),)),
    "pdist equal rows": (lambda lib, x: lib.nn.functional.pdist(x), (np.zeros((2, 2)),)),
    "xlogy at 0": (lambda lib, a, b: lib.xlogy(a, b), (np.array([0.0, 1.0]), np.array([0.0, 0.0]))),
    "hypot at the origin": (lambda lib, a, b: lib.hypot(a, b), (np.array([0.0]), np.array([0.0]))),
    "pow 0 ** 0": (lambda lib, a, b: lib.pow(a, b), (np.array([0.0, 0.0]), np.array([0.0, 0.5]))),
    "prod with zeros": (lambda lib, x: x.prod(), (np.array([0.0, 0.0, 2.0]),)),
    "prod with one zero": (lambda lib, x: x.prod(), (np.array([0.0, 3.0, 2.0]),)),
    "cumprod with a zero": (lambda lib, x: x.cumprod(0), (np.array([2.0, 0.0, 3.0]),)),
    "max with tied infs": (lambda lib, x: x.max(), (np.array([_INF, _INF, 1.0]),)),
    "amax with tied infs": (lambda lib, x: x.amax(), (np.array([_INF, _INF, 1.0]),)),
    "maximum of equal infs": (lambda lib, a, b: lib.maximum(a, b), (np.array([_INF]), np.array([_INF]))),
    "sigmoid/tanh at +-inf": (lambda lib, x: x.sigmoid() + x.tanh(), (np.array([-_INF, _INF]),)),
    "softplus/logsigmoid at +-inf": (lambda lib, x: lib.nn.functional.softplus(x) + lib.nn.functional.logsigmoid(x),
                                     (np.array([-_INF, _INF]),)),
    "silu/gelu/elu at +-inf": (lambda lib, x: (lib.nn.functional.silu(x), lib.nn.functional.gelu(x),
                                               lib.nn.functional.elu(x)), (np.array([-_INF, _INF]),)),
    "layer_norm of a constant row": (lambda lib, x: lib.nn.functional.layer_norm(x, (3,)), (np.ones((2, 3)),)),
    "sinc at 0": (lambda lib, x: lib.sinc(x), (np.array([0.0, 1.0]),)),
    "nansum/nanmean": (lambda lib, x: (x.nansum(), x.nanmean()), (np.array([np.nan, 1.0]),)),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_singular_points_match_torch(name):
    f, arrays = SINGULAR[name]
    check(f, *arrays)
