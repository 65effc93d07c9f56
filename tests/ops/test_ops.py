"""Every op of the table in op_db.py against torch: values, dtypes, shapes, grads, second grads, grad_fn names."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from oracle import check, ember, torch
from ops.op_db import BF16, OPS, BROADCAST_BINARY, OpInfo, Sample, call

from ember.ops import _op


def _cases():
    for op in OPS:
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{op.name}-{i}-{sample.desc}")


CASES = list(_cases())


def _grad_fn_name(t, lib) -> str | None:
    fn = t.grad_fn
    if fn is None:
        return None
    if lib is torch:
        return type(fn).__name__
    assert fn.name().rsplit("::", 1)[-1] == type(fn).__name__, "ember's node class reads as its name()"
    return type(fn).__name__


@pytest.mark.filterwarnings("error::RuntimeWarning")  # NumPy's "divide by zero" etc.: torch is silent
@pytest.mark.parametrize("op,sample", CASES)
def test_op_matches_torch(op: OpInfo, sample: Sample) -> None:
    # a bfloat16 input makes every gradient a composition of ops rounded to 8 bits (oracle.assert_close), float32
    # ones (of a float32 operand mixed in) included
    grad_tol = (max(op.rtol or 0, 4e-2), max(op.atol or 0, 1e-2)) if any(
        np.asarray(a).dtype == BF16 for a in sample.arrays) else None
    eo, to = check(lambda lib, *ts: call(op, sample, lib, ts), *sample.arrays, grad=op.grad,
                   gradgrad=op.grad and op.gradgrad, rtol=op.rtol, atol=op.atol, grad_tol=grad_tol)
    for i, (e, t) in enumerate(zip(eo, to)):
        assert e.requires_grad == t.requires_grad, f"output {i}: requires_grad {e.requires_grad} vs {t.requires_grad}"
        if op.check_grad_fn:
            assert _grad_fn_name(e, ember) == _grad_fn_name(t, torch), f"output {i}: grad_fn"
        if t.requires_grad or not t.is_contiguous():
            continue
        assert e.is_contiguous() == t.is_contiguous() or t.numel() <= 1, f"output {i}: contiguity"


@pytest.mark.parametrize("name", sorted(BROADCAST_BINARY))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_binary_broadcasting(name: str, data) -> None:
    fn, (lo, hi) = BROADCAST_BINARY[name]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3))
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    seed = data.draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    arrays = [(rng.uniform(lo, hi, s) if lo is not None else rng.standard_normal(s)).astype(dtype)
              for s in shapes.input_shapes]
    check(fn, *arrays, gradgrad=True)


# Internal nodes reached only through backward formulas (their forward runs while
# differentiating another op); the walk below still runs them, so this list stays empty unless
# a node can be neither called by users nor reached by the table's first/second gradients.
EXEMPT: set[str] = set()


def _all_op_classes():
    # op modules that `import ember` loads lazily (convolution, pooling, special ...) register their classes on
    # first use: load them all first, or which classes exist would depend on the tests run before this one
    for mod in pkgutil.iter_modules(ember.ops.__path__):
        importlib.import_module(f"ember.ops.{mod.name}")
    seen, todo = [], [_op.Op]
    while todo:
        c = todo.pop()
        for sub in c.__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def test_every_registered_op_is_covered(monkeypatch) -> None:
    """Each node name in ember.ops._op._registry has its forward run by some table entry (or its grads)."""
    ran: set[str] = set()
    classes = _all_op_classes()
    # each class's own forward (static or class method), bound for it, taken before any is replaced
    forwards = {cls: inspect.getattr_static(cls, "forward").__get__(None, cls) for cls in classes}
    for cls in classes:
        def spy(*args, _inner=forwards[cls], _name=cls.__name__):
            ran.add(_name)
            return _inner(*args)

        monkeypatch.setattr(cls, "forward", staticmethod(spy))
    assert "SliceBackward0" in _op._registry and "CopySlices" in _op._registry
    for param in CASES:
        op, sample = param.values
        try:
            check(lambda lib, *ts: call(op, sample, lib, ts), *sample.arrays, grad=op.grad,
                  gradgrad=op.grad and op.gradgrad, rtol=op.rtol, atol=op.atol)
        except AssertionError:
            pass  # mismatches are reported by test_op_matches_torch
    missing = sorted(set(_op._registry) - ran - EXEMPT)
    assert not missing, f"registered ops with no op_db entry: {missing}"


def _tensors_in(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors_in(o)]
    return [out] if isinstance(out, ember.Tensor) else []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_every_output_holds_an_array() -> None:
    """NOTE [0-d results are arrays]: every op's outputs, with and without a graph (two paths through Op.apply),
    hold an ndarray, never a NumPy scalar (check() asserts the same of outputs and gradients with a graph)."""
    wrong = []
    for param in CASES:
        op, sample = param.values
        for grad in (False, True):
            ts = [ember.tensor(a.copy()) for a in sample.arrays]
            if grad:
                ts = [t.requires_grad_() if t.is_floating_point() else t for t in ts]
            try:
                out = call(op, sample, ember, ts)
            except Exception:  # noqa: BLE001 - errors are test_op_matches_torch's to report
                continue
            wrong += [f"{param.id} (grad={grad})" for t in _tensors_in(out) if not isinstance(t._data, np.ndarray)]
    assert not wrong, f"outputs holding NumPy scalars: {wrong[:20]}"
