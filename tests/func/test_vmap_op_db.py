"""Every op_db entry under vmap against torch.func.vmap: the same values, batched over a leading dim.

Each entry's first sample is batched both ways: every input mapped along a new first dim (each example a
perturbed copy of the sample's floating inputs), and only the first input mapped, along a new last dim. Where
torch.func.vmap itself cannot (data-dependent shapes, .item() ...), ember either raises the same kind of error or
returns what torch eager gives example by example, stacked. The ops that run through the per-example fallback
are collected (see test_report_fallbacks).
"""
import warnings

import numpy as np
import pytest

from oracle import BF16, assert_close, ember, lib_tensor, torch
from ops.op_db import OPS, call

B = 3
FALLBACKS: dict = {}

# op_db entries where ember.func.vmap and torch.func.vmap differ, with the reason (each checked by hand)
KNOWN = {
    # torch.func.vmap itself disagrees with torch eager here (checked with torch 2.13): ember gives eager's result
    ("Tensor.aminmax all keepdim", "*"): "torch's vmap drops a keepdim dim of aminmax(dim=None): (B, 1) for a "
                                          "(1, 1) eager result",
    ("index_select 0-d index", "*"): "torch's vmap of index_select with a 0-d index returns the whole dim (B, 3, 4) "
                                     "where eager selects one column (3, 1)",
    ("addmm beta=0", "*"): "torch's vmap rule propagates NaN from self when beta=0; ember keeps addmm's meaning",
}


def _batched(arrays, rng, which, dim):
    out, dims = [], []
    for i, a in enumerate(arrays):
        if i not in which:
            out.append(a)
            dims.append(None)
            continue
        if a.dtype.kind == "f" or a.dtype == BF16:
            stack = np.stack([a] + [(a.astype(np.float64) + rng.standard_normal(a.shape) * 0.01).astype(a.dtype)
                                    for _ in range(B - 1)])
        else:
            stack = np.stack([a] * B)
        out.append(np.ascontiguousarray(np.moveaxis(stack, 0, dim)))
        dims.append(dim)
    return out, tuple(dims)


def _run(lib, op, sample, arrays, dims):
    tensors = [lib_tensor(lib, a) for a in arrays]
    return lib.func.vmap(lambda *ts: call(op, sample, lib, ts), in_dims=dims)(*tensors)


def _eager(op, sample, arrays, dims):
    """torch eager, one example at a time, the results stacked on a new first dim (vmap's meaning)."""
    per = []
    for i in range(B):
        ex = [a if d is None else np.take(a, i, axis=d) for a, d in zip(arrays, dims)]
        per.append(_flat(call(op, sample, torch, [lib_tensor(torch, a) for a in ex])))
    return [torch.stack([p[k] for p in per]) for k in range(len(per[0]))]


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _flat(v)]
    return [x]


MODES = {"all": (None, 0), "first-last": ((0,), -1)}
_RANDOM = ("rand", "normal", "bernoulli", "poisson", "multinomial", "uniform_", "exponential_", "geometric_",
           "cauchy_", "log_normal_", "random_")
# every entry in both modes (the file runs in ~10 s)
CASES = [pytest.param(op, mode, id=f"{op.name}-{mode}")
         for op in OPS if not op.name.startswith(_RANDOM)
         for mode in sorted(MODES)]


@pytest.mark.parametrize("op,mode", CASES)
def test_op_under_vmap_matches_torch(op, mode, request):
    if (op.name, mode) in KNOWN or (op.name, "*") in KNOWN:
        reason = KNOWN.get((op.name, mode)) or KNOWN[(op.name, "*")]
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    rng = np.random.default_rng(0)
    sample = next(iter(op.samples(rng)))
    if not sample.arrays:
        pytest.skip("no tensor inputs")
    which, dim = MODES[mode]
    which = range(len(sample.arrays)) if which is None else which
    arrays, dims = _batched(sample.arrays, np.random.default_rng(1), which, dim)
    if all(d is None for d in dims):
        pytest.skip("no input to map over")
    torch_error = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = _run(torch, op, sample, arrays, dims)
        except Exception as exc:  # noqa: BLE001 - torch's own vmap limits: the oracle becomes eager torch
            torch_error = exc
        ember.func.reset_vmap_fallback_counts()
        try:
            e = _run(ember, op, sample, arrays, dims)
        except Exception as exc:  # noqa: BLE001
            if torch_error is None:
                raise
            assert isinstance(exc, type(torch_error)) or isinstance(torch_error, type(exc)), (exc, torch_error)
            return
        if torch_error is not None:
            t = _eager(op, sample, arrays, dims)
    for name in ember.func.vmap_fallback_counts():
        FALLBACKS.setdefault(name, set()).add(op.name)
    fe, ft = _flat(e), _flat(t)
    assert len(fe) == len(ft)
    for a, b in zip(fe, ft):
        assert_close(a, b, rtol=op.rtol or 1e-4, atol=op.atol or 1e-5)


def test_report_fallbacks():
    """Not an assertion on the count: the list of ops that fell back, printed for the report (-s)."""
    for name in sorted(FALLBACKS):
        print(f"vmap fallback: {name} (in {', '.join(sorted(FALLBACKS[name])[:3])})")
