"""Every deterministic quantity of every distribution against torch on the same parameters: log_prob, cdf, icdf,
entropy, perplexity, the moments and mode, enumerate_support, with first and second gradients with respect to the
parameters and the value; shapes, printed forms, constraints and ``expand``."""
from __future__ import annotations

import numpy as np
import pytest

from _dist_cases import CASES
from oracle import check, ember, same_error, to_np, torch

VALUE_METHODS = ("log_prob", "cdf", "icdf")
METHODS = VALUE_METHODS + ("entropy", "perplexity", "mean", "variance", "stddev", "mode", "enumerate_support")


def _compute(dist, what, value=None):
    if what in VALUE_METHODS:
        return getattr(dist, what)(value)
    if what in ("entropy", "perplexity", "enumerate_support"):
        return getattr(dist, what)()
    return getattr(dist, what)


def _torch_dist(case, params):
    return case.make(torch, *(torch.tensor(p) for p in params))


def _value(case, tdist, what, rng) -> np.ndarray:
    shape = tuple(tdist._extended_shape((2,)))
    if what == "icdf":
        return rng.uniform(0.05, 0.95, shape).astype(case.dtype)
    torch.manual_seed(1)
    return to_np(tdist.sample((2,)))


@pytest.mark.parametrize("what", METHODS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_torch(case, what) -> None:
    rng = np.random.default_rng(0)
    params = case.params(rng)
    tdist = _torch_dist(case, params)
    arrays = list(params)
    if what in VALUE_METHODS:
        arrays.append(_value(case, tdist, what, rng))
    n = len(params)

    def fn(lib, *ts):
        dist = case.make(lib, *ts[:n])
        return _compute(dist, what, ts[n] if len(ts) > n else None)

    try:
        fn(torch, *(torch.tensor(a) for a in arrays))
    except (NotImplementedError, ValueError, RuntimeError, AttributeError):
        same_error(lambda lib: fn(lib, *(lib.tensor(a) for a in arrays)), match_words=[])
        return
    check(fn, *arrays, gradgrad=case.gradgrad, rtol=case.rtol, atol=case.atol,
          requires_grad=_differentiable(fn, arrays))


def _differentiable(fn, arrays) -> list:
    """Which inputs torch differentiates through ``fn``; where torch refuses (gammainc's first argument ...) ember
    must refuse with the same error."""
    flags = []
    for i, a in enumerate(arrays):
        if a.dtype.kind != "f":
            flags.append(False)
            continue

        def grad(lib, i=i):
            ts = [lib.tensor(b) for b in arrays]
            ts[i].requires_grad_(True)
            out = fn(lib, *ts)
            if out.requires_grad:
                lib.autograd.grad(out.sum(), ts[i], allow_unused=True)

        try:
            grad(torch)
        except RuntimeError:
            same_error(grad)
            flags.append(False)
        else:
            flags.append(True)
    return flags


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_shapes_printed_form_and_constraints(case) -> None:
    params = case.params(np.random.default_rng(0))
    e, t = case.make(ember, *(ember.tensor(p) for p in params)), _torch_dist(case, params)
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert repr(e) == repr(t)
    assert (e.has_rsample, e.has_enumerate_support) == (t.has_rsample, t.has_enumerate_support)
    assert repr(e.support) == repr(t.support)
    assert {k: repr(v) for k, v in e.arg_constraints.items()} == {k: repr(v) for k, v in t.arg_constraints.items()}
    assert e.support.event_dim == t.support.event_dim and e.support.is_discrete == t.support.is_discrete
    ember.manual_seed(0)
    torch.manual_seed(0)
    for s in ((), (3,), (2, 1)):
        es, ts = e.sample(s), t.sample(s)
        assert es.shape == ts.shape and str(es.dtype) == str(ts.dtype) and not es.requires_grad
        assert bool(e.support.check(es).all())
        if t.has_rsample:
            assert e.rsample(s).shape == t.rsample(s).shape


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_expand(case) -> None:
    """expand() views the parameters at a larger batch shape; log_prob and the moments follow."""
    rng = np.random.default_rng(2)
    params = case.params(rng)
    e, t = case.make(ember, *(ember.tensor(p) for p in params)), _torch_dist(case, params)
    shape = (2,) + tuple(t.batch_shape)
    te, ee = t.expand(shape), e.expand(shape)
    assert type(ee) is type(e) and ee.batch_shape == te.batch_shape and ee.event_shape == te.event_shape
    assert repr(ee) == repr(te) and ee._validate_args == te._validate_args
    torch.manual_seed(3)
    value = te.sample((3,))
    np.testing.assert_allclose(to_np(ee.log_prob(ember.tensor(to_np(value)))), to_np(te.log_prob(value)),
                               rtol=case.rtol or 1e-6, atol=case.atol or 1e-9)
    assert ee.sample((4,)).shape == te.sample((4,)).shape
    for what in ("mean", "variance"):
        try:
            tv = getattr(te, what)
        except NotImplementedError:
            continue
        np.testing.assert_allclose(to_np(getattr(ee, what)), to_np(tv), rtol=case.rtol or 1e-6, equal_nan=True)
