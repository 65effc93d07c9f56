"""ember.compile on cuda tensors (NOTE [compiled on devices] in ember/_compile/__init__.py), on the strict stand-in
device (NOTE [cuda stand-in] in ember/_backend.py: NumPy refuses host arrays beside stand-in ones, as CuPy does).
The stand-in's values are NumPy's, so a compiled cuda step must equal the eager cuda step bit for bit; the
benchmark's training steps (W2 MLP, W3 CNN, W6 small GPT) are traced, confirmed and replayed, with their results,
gradients and the program's constants on the device, no graph break and no host fallback."""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

import ember
from ember import _backend as B
from ember._compile import api as _api

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from bench.workloads import WORKLOADS  # noqa: E402

CUDA = ember.device("cuda", 0)
STEPS = 5


@pytest.fixture
def stand_in():
    B.enable_stand_in(True, strict=True)
    ember._dynamo.reset()
    yield
    ember.set_default_device("cpu")
    B.enable_stand_in(False)


def _run(name: str, compile: bool):
    """STEPS training steps of workload ``name`` (tiny sizes) on cuda: losses, last gradients, the compiled
    callables made, the ops that took the host fallback."""
    w = WORKLOADS[name]
    arrays = w.data(w.tiny)
    ember.manual_seed(0)
    before = set(_api._registry)
    ember.set_default_device("cuda")
    try:
        step, grads = w.build(ember, arrays, w.tiny, compile=compile)
        fallbacks = set(B.host_fallbacks)
        losses = [step() for _ in range(STEPS)]
        taken = set(B.host_fallbacks) - fallbacks
        params = next(c.cell_contents for c in grads.__closure__ if isinstance(c.cell_contents, dict))
        for p in params.values():  # parameters and their gradients stay on the device
            assert p.device == CUDA and p.grad.device == CUDA and type(p.grad._data) is B.StandInArray
        g = grads()
    finally:
        ember.set_default_device("cpu")
    return losses, g, [c for c in _api._registry if c not in before], taken


@pytest.mark.parametrize("name", ["W2", "W3", "W6"])
def test_compiled_training_step_on_cuda_equals_eager(stand_in, name) -> None:
    eager, eager_grads, _, _ = _run(name, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a graph break warns: none may happen
        compiled, grads, made, fallbacks = _run(name, True)
    assert not fallbacks, fallbacks
    for a, b in zip(eager, compiled):
        assert a.device == CUDA and b.device == CUDA and type(b._data) is B.StandInArray
        assert a._data.tobytes() == b._data.tobytes()
    assert grads.keys() == eager_grads.keys()
    for k in grads:
        assert grads[k].tobytes() == eager_grads[k].tobytes(), k
    (fn,) = made
    entries = [e for e in fn._cache if e.kind == "compiled"]
    assert len(entries) == 1 and entries[0].hits == STEPS - 2, fn.explain()  # traced, confirmed, then replayed
    assert not fn._breaks
    prog = entries[0].program
    arrays = [o for o in prog.consts.values() if B.is_array(o) and o.ndim]
    assert all(type(o) is B.StandInArray for o in arrays), [type(o) for o in arrays]
    assert "type(" in fn.code and "StandInArray" in fn.code  # the device guard


def test_gradients_of_a_compiled_function_on_cuda(stand_in) -> None:
    """Outputs and gradients on cuda, the same bits as eager, through a loss computed outside the compiled part."""
    def f(x, w, b):
        h = ember.tanh(x @ w + b)
        return ember.nn.functional.log_softmax(h, 1), h.sum()

    g = ember.compile(f)
    rng = np.random.default_rng(0)
    for _ in range(4):
        data = [rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (4, 3), (3,))]
        res = []
        for fn in (f, g):
            x, w, b = (ember.tensor(a, device="cuda", requires_grad=j > 0) for j, a in enumerate(data))
            out, s = fn(x, w, b)
            (out[:, 0].sum() * s).backward()
            res.append((out, s, w.grad, b.grad))
        for e, c in zip(*res):
            assert c.device == CUDA and type(c._data) is B.StandInArray
            assert e._data.tobytes() == c._data.tobytes()
    assert [e.kind for e in g._cache] == ["compiled"] and g._cache[0].hits == 2


def test_a_program_is_specialised_to_its_device(stand_in) -> None:
    """The same compiled function called with cpu tensors after cuda ones gets its own program (and back)."""
    @ember.compile
    def f(x, y):
        return (x * y + 1).relu().sum(0)

    rng = np.random.default_rng(1)

    def call(device: str):
        a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
        got = f(ember.tensor(a, device=device), ember.tensor(b, device=device))
        want = (ember.tensor(a, device=device) * ember.tensor(b, device=device) + 1).relu().sum(0)
        assert got.device == want.device and got.device.type == device
        assert type(got._data) is type(want._data)
        assert got._data.tobytes() == want._data.tobytes()

    for _ in range(3):
        call("cuda")
    assert [e.kind for e in f._cache] == ["compiled"]
    for _ in range(3):
        call("cpu")
    assert [e.kind for e in f._cache] == ["compiled", "compiled"]
    assert f._log[-1].endswith("type(x._data) is not _StandInArray"), f._log
    call("cuda")
    assert [e.hits for e in f._cache] == [1, 2]  # (the cpu program first: the newest)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        f(ember.ones(3, 4, device="cuda"), ember.ones(3, 4))  # mixed: eager's error, no program


def test_zero_dim_cpu_tensors_and_host_constants_enter_cuda_programs(stand_in) -> None:
    """A 0-d CPU tensor enters a cuda op as a scalar (moved by Op.apply); the program records the move, and the
    host index arrays a max-pool's backward formula makes are moved to the gradient's device as the engine does."""
    @ember.compile
    def f(x, s):
        return ember.nn.functional.max_pool2d(x * s, 2).sum()

    rng = np.random.default_rng(2)
    for _ in range(4):
        a = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
        res = []
        for fn in (f.__wrapped__, f):
            x = ember.tensor(a, device="cuda", requires_grad=True)
            s = ember.tensor(1.5)
            out = fn(x, s)
            out.backward()
            res.append((out, x.grad))
        for e, c in zip(*res):
            assert c.device == CUDA and e._data.tobytes() == c._data.tobytes()
    assert [e.kind for e in f._cache] == ["compiled"] and f._cache[0].hits == 2
    assert "ToCopy(" in f.code


def test_batched_tensors_are_still_refused(stand_in) -> None:
    """A batched tensor (vmap's, whose array is no device's array) is refused by the tracer, as before; a
    compiled function called under vmap runs eagerly, on cuda as on the CPU."""
    from ember._compile.trace import Tracer
    from ember.func._vmap import _Placeholder

    tr = Tracer()
    tr.start()
    t = ember._tensor._wrap(_Placeholder((2,), np.float32, buffer=bytes(4), strides=(0,)), ember.float32)
    tr.value_of(t)
    assert tr.broken is not None and "batched tensor" in tr.broken.reason
    for arr in (np.ones(2, np.float32), np.ones(2, np.float32).view(B.StandInArray)):
        t = ember._tensor._wrap(arr, ember.float32)
        tr = Tracer()
        tr.start()
        assert tr.value_of(t).kind == "in" and tr.broken is None  # a host or device array: an input

    @ember.compile
    def f(r):
        return (r * r).sum()

    for device in ("cpu", "cuda"):
        x = ember.arange(6.0, device=device).reshape(2, 3)
        for _ in range(3):
            got = ember.func.vmap(f)(x)
            assert got.device == x.device and got.tolist() == [5.0, 50.0]
    assert not f._cache


def test_an_op_on_the_host_fallback_is_a_graph_break(stand_in) -> None:
    """A kernel that refuses device arrays runs on the host in eager code (NOTE [host fallback]); its program line
    would hand it device arrays, so such a call runs eagerly, with the same results and a warning saying why."""
    from ember.ops._op import Op

    class _HostOnly(Op):
        """d (x + ones) = grad"""

        _alias = True  # a test op: not in the registry

        @staticmethod
        def forward(ctx, self):
            return self + np.ones(self.shape, self.dtype)  # a NumPy buffer: the strict stand-in refuses it

        def backward(ctx, grad):
            return grad * 2

    @ember.compile
    def f(x):
        return _HostOnly.apply(x * 3).sum()

    for i in range(3):  # (the first call warns)
        x = ember.tensor([1.0, 2.0], device="cuda", requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = f(x)
        assert [str(w.message) for w in caught] == ([] if i else [
            "ember.compile: _HostOnly's kernel refuses device arrays (eager code runs it on the host: NOTE [host "
            "fallback]); this call runs eagerly (same results). See compiled.explain()."])
        y.backward()
        assert y.device == CUDA and y.item() == 11.0 and x.grad.tolist() == [6.0, 6.0]
    assert [e.kind for e in f._cache] == ["eager"]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_integer_inputs_are_guarded_by_value_only_beside_data_constants(stand_in, device) -> None:
    """Integer inputs that were equal in both traces are guarded by value (a host copy per call on a device) only
    while the program holds an array constant no factory made; constants from factories (``arange``: shapes and
    Python values) do not depend on the data, so new index values replay the same program."""
    table = np.arange(4.0)  # a host array as an op's argument: a constant the trace cannot vouch for

    def made(i, x):
        return x[i] * 2 + ember.arange(3.0, device=device)

    def loose(i, x):
        return x[i] + table[:3]

    for f, guarded in ((made, False),) if device == "cuda" else ((made, False), (loose, True)):
        g = ember.compile(f)
        x = ember.arange(12.0, device=device).reshape(4, 3)
        for v in ([0, 1], [0, 1], [0, 1], [2, 3], [2, 3], [1, 0]):
            i = ember.tensor(v, device=device)
            got, want = g(i, x), f(i, x)
            assert got.device == want.device and got.tolist() == want.tolist()
        assert all(("_same(i._data" in e.code) is guarded for e in g._cache if e.kind == "compiled"), g.code
        if guarded:
            assert g._log == ["guard failed: not _same(i._data, _value_i)"] * 2
        else:
            assert [(e.kind, e.hits) for e in g._cache] == [("compiled", 4)] and not g._log
