"""Every op_db entry under vmap against torch.func.vmap: the same values, batched over a leading dim.

Each entry's first sample is batched both ways: every input mapped along a new first dim (each example a
perturbed copy of the sample's floating inputs), and only the first input mapped, along a new last dim. Where
torch.func.vmap itself cannot (data-dependent shapes, .item() ...), ember either raises the same kind of error or
returns what torch eager gives example by example, stacked. The ops that run through the per-example fallback
are exactly the known ones (test_fallbacks_are_the_known_ones).
"""
import warnings

import numpy as np
import pytest

from oracle import BF16, assert_close, ember, lib_tensor, torch
from ops.op_db import OPS, call

B = 3

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


def _first_sample(op):
    return next(iter(op.samples(np.random.default_rng(0))))


# every entry with tensor inputs, in both modes (each maps at least the first input; the file runs in ~10 s)
CASES = [pytest.param(op, mode, id=f"{op.name}-{mode}")
         for op in OPS if not op.name.startswith(_RANDOM) and _first_sample(op).arrays
         for mode in sorted(MODES)]


@pytest.mark.parametrize("op,mode", CASES)
def test_op_under_vmap_matches_torch(op, mode, request):
    if (op.name, mode) in KNOWN or (op.name, "*") in KNOWN:
        reason = KNOWN.get((op.name, mode)) or KNOWN[(op.name, "*")]
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    sample = _first_sample(op)
    which, dim = MODES[mode]
    which = range(len(sample.arrays)) if which is None else which
    arrays, dims = _batched(sample.arrays, np.random.default_rng(1), which, dim)
    torch_error = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = _run(torch, op, sample, arrays, dims)
        except Exception as exc:  # noqa: BLE001 - torch's own vmap limits: the oracle becomes eager torch
            torch_error = exc
        try:
            e = _run(ember, op, sample, arrays, dims)
        except Exception as exc:  # noqa: BLE001
            if torch_error is None:
                raise
            assert isinstance(exc, type(torch_error)) or isinstance(torch_error, type(exc)), (exc, torch_error)
            return
        if torch_error is not None:
            t = _eager(op, sample, arrays, dims)
    fe, ft = _flat(e), _flat(t)
    assert len(fe) == len(ft)
    for a, b in zip(fe, ft):
        assert_close(a, b, rtol=op.rtol or 1e-4, atol=op.atol or 1e-5)


# The nodes vmap runs example by example (the per-example fallback, NOTE [vmap] in ember/func/_vmap.py) when every
# input of each entry's first sample is mapped. A new fallback (a slow path) or a fallback that got its rule fails
# test_fallbacks_are_the_known_ones until this table says so.
_SHAPE = "the result's size depends on each example's values"
_NO_RULE = "no batching rule"
KNOWN_FALLBACKS = {
    "ArgwhereBackward0": _SHAPE, "Unique2Backward0": _SHAPE, "IndexBackward0": _SHAPE + " (a batched boolean mask)",
    "IndexPutBackward0": _SHAPE + " (a batched boolean mask)", "MaskedSelectBackward0": _SHAPE + " (a batched mask)",
    "BinaryCrossEntropyBackward0": _NO_RULE, "BinaryCrossEntropyWithLogitsBackward0": _NO_RULE,
    "CtcLossBackward0": _NO_RULE, "HuberLossBackward0": _NO_RULE, "SmoothL1LossBackward0": _NO_RULE,
    "GeqrfBackward0": _NO_RULE, "AffineGridGeneratorBackward0": _NO_RULE,
    "FractionalMaxPool2DBackward0": _NO_RULE, "FractionalMaxPool3DBackward0": _NO_RULE,
    "CrossMapLRN2dBackward": _NO_RULE + " (a custom Function)", "EuclideanDistBackward0": _NO_RULE,
    "LinalgPinvBackward0": _NO_RULE + " (hermitian=True)",
    # torch.special's elementwise ops (ember/ops/special.py is not among the elementwise rule's modules)
    **{n: _NO_RULE for n in ("SpecialEntrBackward0", "SpecialErfcxBackward0", "SpecialI0EBackward0",
                             "SpecialI1EBackward0", "SpecialLogNdtrBackward0", "SpecialNdtrBackward0",
                             "SpecialNdtriBackward0", "SpecialXlog1PyBackward0", "SpecialXlog1PyBackward1",
                             "SpecialXlog1PyBackward2", "SpecialZetaBackward0", "SpecialZetaBackward1",
                             "SpecialZetaBackward2")},
}


def test_fallbacks_are_the_known_ones():
    """Which nodes vmap runs example by example over the whole table: exactly KNOWN_FALLBACKS."""
    seen: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for param in CASES:
            op, mode = param.values
            if mode != "all":
                continue
            sample = _first_sample(op)
            arrays, dims = _batched(sample.arrays, np.random.default_rng(1), range(len(sample.arrays)), 0)
            ember.func.reset_vmap_fallback_counts()
            try:
                _run(ember, op, sample, arrays, dims)
            except Exception:  # noqa: BLE001 - errors are test_op_under_vmap_matches_torch's to compare
                pass
            for name in ember.func.vmap_fallback_counts():
                seen.setdefault(name, []).append(op.name)
    new = {n: ops[:3] for n, ops in seen.items() if n not in KNOWN_FALLBACKS}
    assert not new, f"ops newly run example by example under vmap (entries): {new}"
    assert not set(KNOWN_FALLBACKS) - set(seen), f"fallbacks no longer taken: {sorted(set(KNOWN_FALLBACKS) - set(seen))}"
