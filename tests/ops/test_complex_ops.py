"""Every op_db entry on complex inputs against torch.

Each entry runs on complex variants of its samples (``op_db.complex_samples``: its float32/float64 arrays made
complex64/complex128). torch decides, at run time, what is expected: where torch computes, ember's values, dtypes,
gradients and second gradients match (``oracle.check``, the gradient of real losses as torch defines it for
complex inputs); where torch raises (in the forward, the backward or the double backward), ember raises at the same
step the same kind of error with torch's message gist. There is no hand list of ops that support complex numbers.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import oracle
from oracle import check, ember, torch
from ops.op_db import OPS, OpInfo, Sample, call, complex_samples

CASES = [pytest.param(op, sample, id=f"{op.name}-{i}-{sample.desc}")
         for op in OPS if op.complex for i, sample in enumerate(complex_samples(op))]


class _Failed(Exception):
    def __init__(self, step: str, exc: BaseException) -> None:
        super().__init__(step)
        self.step, self.exc = step, exc


def _steps(lib, op: OpInfo, sample: Sample) -> None:
    """The forward, backward and double backward ``check`` runs, for one library; _Failed names the step that
    raised."""
    grad, gradgrad = op.grad, op.grad and op.gradgrad
    rng = np.random.default_rng(0)
    try:
        ts = [oracle._make(lib, np.asarray(a), grad) for a in sample.arrays]
        out = oracle._outputs(call(op, sample, lib, ts))
    except Exception as exc:  # noqa: BLE001 - what torch raises is the expectation
        raise _Failed("forward", exc) from exc
    diff = [t for t in ts if t.requires_grad]
    outs = [o for o in out if isinstance(o, lib.Tensor) and o.requires_grad]
    if not grad or not diff or not outs:
        return
    try:
        ups = [lib.tensor(oracle._random_like(rng, oracle.to_np(o))) for o in outs]
        gs = lib.autograd.grad(outs, diff, ups, create_graph=gradgrad, allow_unused=True)
    except Exception as exc:  # noqa: BLE001
        raise _Failed("backward", exc) from exc
    pairs = [g for g in gs if g is not None and g.requires_grad]
    if not gradgrad or not pairs:
        return
    try:
        total = sum(oracle._real((g * lib.tensor(oracle._random_like(rng, oracle.to_np(g)))).sum()) for g in pairs)
        lib.autograd.grad(total, diff, allow_unused=True)
    except Exception as exc:  # noqa: BLE001
        raise _Failed("double backward", exc) from exc


def _gist(exc: BaseException) -> str:
    return str(exc).split("\n")[0].split(". ")[0][:60]


@pytest.mark.filterwarnings("error::RuntimeWarning")  # NumPy's "divide by zero" etc.: torch is silent
@pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")  # an imaginary part silently dropped
@pytest.mark.parametrize("op,sample", CASES)
def test_op_on_complex_matches_torch(op: OpInfo, sample: Sample) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own warnings (e.g. casting complex values to real)
        try:
            _steps(torch, op, sample)
            expected = None
        except _Failed as failed:
            expected = failed
    if expected is None:
        single = any(np.asarray(a).dtype == np.complex64 for a in sample.arrays)  # complex64 precision, even in
        rtol = op.rtol if op.rtol is not None or not single else 1e-4              # complex128 results
        atol = op.atol if op.atol is not None or not single else 1e-5
        check(lambda lib, *ts: call(op, sample, lib, ts), *sample.arrays, grad=op.grad,
              gradgrad=op.grad and op.gradgrad, rtol=rtol, atol=atol)
        return
    try:
        _steps(ember, op, sample)
    except _Failed as got:
        e, t = got.exc, expected.exc
        assert got.step == expected.step, f"ember raised in the {got.step} ({type(e).__name__}: {e}); torch in the " \
                                          f"{expected.step} ({type(t).__name__}: {t})"
        assert isinstance(e, type(t)) or type(e).__name__ == type(t).__name__, \
            f"{got.step}: ember raised {type(e).__name__}: {e}; torch {type(t).__name__}: {t}"
        assert _gist(t) in str(e), f"{got.step}: torch's message gist {_gist(t)!r} not in ember's {str(e)!r}"
        return
    raise AssertionError(f"ember did not raise; torch raised in the {expected.step}: "
                         f"{type(expected.exc).__name__}: {expected.exc}")
