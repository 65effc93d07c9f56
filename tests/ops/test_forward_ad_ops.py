"""Forward-mode AD of every op_db entry against torch.autograd.forward_ad.

Each entry runs once per library inside a dual level on its first sample, every float input a dual tensor with
the same random tangent; primal outputs and tangents must match. Where torch has no forward derivative for an
op (it raises), ember must raise the same kind of error: detected at run time, never from a hand list.
"""
from __future__ import annotations

import numpy as np
import pytest

import oracle
from oracle import BF16, assert_close, ember, lib_tensor, torch
from ops.op_db import OPS, OpInfo, call

import ember.autograd.forward_ad as efw
import torch.autograd.forward_ad as tfw

_FW = {ember: efw, torch: tfw}


def _first_sample(op: OpInfo):
    return next(iter(op.samples(np.random.default_rng(0))))


def _tangents(sample) -> list:
    """A random tangent for each floating input of ``sample`` (None for the others)."""
    rng = np.random.default_rng(1)
    return [oracle._random_like(rng, a) if a.dtype.kind in "fc" or a.dtype == BF16 else None for a in sample.arrays]


def _has_tangent(sample) -> bool:
    return any(a.dtype.kind in "fc" or a.dtype == BF16 for a in sample.arrays)


# entries without gradients too (errors, no tangents); not those whose first sample has no floating input
CASES = [pytest.param(op, id=op.name) for op in OPS if _has_tangent(_first_sample(op))]

# Entries where torch's forward AD is off and ember's is the Jacobian-vector product: compared with torch's
# reverse-mode jvp (torch.autograd.functional.jvp) instead.
TORCH_QUIRKS = {
    "norm dtype": "torch's tangent keeps the input's dtype (float32) under a float64 primal",
    "scatter_reduce prod include_self=True": "torch leaves the output without a tangent",
    "scatter_reduce prod include_self=False": "torch leaves the output without a tangent",
    "torch.triangular_solve": "torch's tangent uses the whole tangent of A, not its triangle",
    "Tensor.triangular_solve lower T unit": "torch's tangent uses the whole tangent of A, untransposed, diagonal kept",
    "torch.cholesky_inverse": "torch's forward formula disagrees with finite differences and its own reverse mode",
    "complex python scalar": "torch's tangent of `1j - x` keeps x's real dtype under a complex primal",
    "cholesky_solve/inverse complex": "torch's cholesky_inverse forward formula (as for real inputs, above)",
}


def _run(lib, op, sample, tangents):
    fw = _FW[lib]
    with fw.dual_level():
        ts = []
        for a, t in zip(sample.arrays, tangents):
            x = lib_tensor(lib, a)
            ts.append(fw.make_dual(x, lib_tensor(lib, t)) if t is not None else x)
        out = call(op, sample, lib, ts)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return [(o, *fw.unpack_dual(o)) for o in outs]


def _outcome(lib, op, sample, tangents):
    try:
        return _run(lib, op, sample, tangents), None
    except Exception as e:  # noqa: BLE001 - compared with the other library's outcome
        return None, e


# Families with hand-written forward formulas also run on every further sample of their entries (broadcasting,
# ranks, dtypes, non-contiguous inputs).
HAND_WRITTEN = ("add", "sub", "mul", "div", "pow", "neg", "matmul", "torch.matmul", "mm", "bmm", "addmm", "baddbmm",
                "einsum", "conv", "F.softmax", "F.log_softmax", "where", "cat", "stack", "sum", "mean", "expand",
                "permute", "transpose", "exp", "log", "tanh", "sigmoid", "relu", "abs")
MORE_CASES = [pytest.param(op, i, id=f"{op.name}-{i}-{smp.desc}") for op in OPS if op.grad
              and op.name.split(" ")[0] in HAND_WRITTEN
              for i, smp in enumerate(op.samples(np.random.default_rng(0))) if i > 0 and _has_tangent(smp)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op", CASES)
def test_forward_ad_matches_torch(op: OpInfo) -> None:
    _compare_entry(op, _first_sample(op))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op,index", MORE_CASES)
def test_hand_written_formulas_on_every_sample(op: OpInfo, index: int) -> None:
    _compare_entry(op, list(op.samples(np.random.default_rng(0)))[index])


def _compare_entry(op: OpInfo, sample) -> None:
    tangents = _tangents(sample)
    if op.name in TORCH_QUIRKS:
        _check_against_reverse_jvp(op, sample, tangents)
        return
    to, terr = _outcome(torch, op, sample, tangents)
    eo, eerr = _outcome(ember, op, sample, tangents)
    if terr is not None:
        assert eerr is not None, f"torch raised {type(terr).__name__}: {terr}; ember did not"
        assert type(eerr).__name__ == type(terr).__name__, f"ember {eerr!r} vs torch {terr!r}"
        gist = str(terr).split("\n")[0].split(" that ")[0].replace("aten::_", "aten::")[:40]
        if "forward AD" in gist:
            assert "Trying to use forward AD with" in str(eerr), f"ember: {eerr}"
        return
    assert eerr is None, f"ember raised {type(eerr).__name__}: {eerr}"
    assert len(eo) == len(to)
    for i, ((_, ep, et), (t, tp, tt)) in enumerate(zip(eo, to)):
        assert_close(ep, tp, op.rtol, op.atol, what=f"primal {i}")
        if tt is None or not (t.is_floating_point() or t.is_complex()):
            assert et is None or not np.any(oracle.to_np(et)), f"output {i}: torch has no tangent, ember {et}"
            continue
        assert et is not None, f"output {i}: ember has no tangent"
        assert_close(et, tt, op.rtol, op.atol, what=f"tangent {i}")


def _check_against_reverse_jvp(op: OpInfo, sample, tangents) -> None:
    eo = _run(ember, op, sample, tangents)
    fl = [i for i, t in enumerate(tangents) if t is not None]

    def f(*xs):
        ts = [lib_tensor(torch, a) for a in sample.arrays]
        for i, x in zip(fl, xs):
            ts[i] = x
        out = call(op, sample, torch, ts)
        return tuple(out) if isinstance(out, (tuple, list)) else out

    prim = tuple(lib_tensor(torch, sample.arrays[i]) for i in fl)
    tans = tuple(lib_tensor(torch, tangents[i]) for i in fl)
    outs, jv = torch.autograd.functional.jvp(f, prim, tans)
    outs, jv = (outs, jv) if isinstance(outs, tuple) else ((outs,), (jv,))
    for i, ((_, ep, et), o, t) in enumerate(zip(eo, outs, jv)):
        assert_close(ep, o, op.rtol, op.atol, what=f"primal {i}")
        if o.is_floating_point() or o.is_complex():
            assert_close(et, t, op.rtol, op.atol, what=f"tangent {i}")
