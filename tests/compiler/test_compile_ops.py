"""Every op of the op table (tests/ops/op_db.py) through ember.compile: each sample's function is compiled and called
twice on the sample's arrays, then on two other data sets of the same shapes (floats rescaled, integer and bool arrays
permuted), and every call's outputs and gradients must equal the eager ones. The first two calls are traced on the
same data, so the confirming trace cannot tell a value computed from the data outside the ops (it would be a
constant of the program) from a true constant: the replays on new data must still be exact. A helper that computes
on the data is a replayable step, a check of the values too (NOTE [replayable steps]); what cannot be replayed is
a graph break: never a wrong result."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from _compile_compare import assert_same
from ops.op_db import BF16, OPS, OpInfo, Sample, call
from oracle import ember


def _cases():
    for op in OPS:
        samples = list(op.samples(np.random.default_rng(0)))
        picked = [s for s in samples if all(np.asarray(a).dtype != BF16 for a in s.arrays)][:1]
        for i, sample in enumerate(picked):
            yield pytest.param(op, sample, id=f"{op.name}-{i}-{sample.desc}")


def _variant(arrays: tuple, rng: np.random.Generator) -> tuple:
    """The same shapes and kinds of values: floats scaled by factors in [0.5, 1.5], other arrays permuted."""
    out = []
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind == "f" and a.size:
            out.append((a * rng.uniform(0.5, 1.5, a.shape)).astype(a.dtype))
        elif a.size > 1:
            out.append(rng.permutation(a.reshape(-1)).reshape(a.shape))
        else:
            out.append(a.copy())
    return tuple(out)


def _tensors(arrays: tuple) -> list:
    return [ember.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in arrays]


def _outputs(res) -> list:
    out = res if isinstance(res, (tuple, list)) else (res,)
    return [t for t in out if isinstance(t, ember.Tensor)]


def _run(fn, arrays: tuple, seed: int) -> list:
    """Outputs, then the gradients of <outputs, fixed cotangents> w.r.t. the inputs."""
    ts = _tensors(arrays)
    ember.manual_seed(seed)
    res = fn(*ts)
    outs = _outputs(res)
    got = [o.detach().numpy().copy() for o in outs]
    diff = [o for o in outs if o.requires_grad]
    if diff:
        rng = np.random.default_rng(seed)
        total = sum((o * ember.tensor(rng.standard_normal(o.shape).astype(o.detach().numpy().dtype))).sum()
                    for o in diff)
        total.backward()
        got += [t.grad.numpy().copy() if t.grad is not None else np.zeros(0) for t in ts]
    return got


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("op,sample", list(_cases()))
def test_compiled_op_matches_eager(op: OpInfo, sample: Sample) -> None:
    def fn(*ts):
        return call(op, sample, ember, ts)

    compiled = ember.compile(fn)
    rng = np.random.default_rng(1)
    datasets = [sample.arrays, sample.arrays] + [_variant(sample.arrays, rng) for _ in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, arrays in enumerate(datasets):
            try:
                want = _run(fn, arrays, i)
            except Exception as e:  # noqa: BLE001 - the eager call refuses these values: so must the compiled one
                with pytest.raises(type(e)):
                    _run(compiled, arrays, i)
                continue
            assert_same(want, _run(compiled, arrays, i), f"call {i}")
