"""Every op_db entry under vmap against torch.func.vmap: the same values, batched over a leading dim.

Each entry's first sample is batched both ways: every input mapped along a new first dim (each example a
perturbed copy of the sample's floating inputs), and only the first input mapped, along a new last dim. Entries that torch itself cannot vmap (data-dependent shapes, .item() ...) are skipped. The ops that
run through the per-example fallback are collected (see test_report_fallbacks).
"""
import warnings

import numpy as np
import pytest

from oracle import assert_close, ember, torch
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
        if i not in which or a.ndim < (1 if dim else 0):
            out.append(a)
            dims.append(None)
            continue
        if a.dtype.kind == "f":
            stack = np.stack([a] + [(a + rng.standard_normal(a.shape) * 0.01).astype(a.dtype) for _ in range(B - 1)])
        else:
            stack = np.stack([a] * B)
        out.append(np.ascontiguousarray(np.moveaxis(stack, 0, dim)))
        dims.append(dim)
    return out, tuple(dims)


def _run(lib, op, sample, arrays, dims):
    tensors = [lib.tensor(a) for a in arrays]
    return lib.func.vmap(lambda *ts: call(op, sample, lib, ts), in_dims=dims)(*tensors)


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
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = _run(torch, op, sample, arrays, dims)
    except Exception as e:  # noqa: BLE001 - torch's own vmap limits
        pytest.skip(f"torch.func.vmap cannot: {type(e).__name__}: {str(e)[:80]}")
    ember.func.reset_vmap_fallback_counts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = _run(ember, op, sample, arrays, dims)
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
