"""Fused formulas and fused nodes on the strict stand-in ``cuda`` (NOTE [fused formulas] in ember/_fuse.py): W6's
training step (small GPT, AdamW) on the stand-in equals the CPU step bit for bit and takes the fused paths a GPU
takes (one kernel each there); optimizer steps equal the CPU's on every variant of their formulas; a formula CuPy
refuses falls back to the plain one and is recorded, never raised."""
from __future__ import annotations

import itertools
import os
import sys
import types

import numpy as np
import pytest

import ember
from ember import _backend as B
from ember import _fuse
from ember.ops import nn_ops, norms

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench.workloads import WORKLOADS  # noqa: E402


def _counting(monkeypatch, module, name: str, seen: list):
    fn = getattr(module, name)

    def run(*args, **kwargs):
        seen.append(name)
        return fn(*args, **kwargs)
    monkeypatch.setattr(module, name, run)


def _w6(dev: str, steps: int = 3):
    """W6 (tiny sizes) made on ``dev``: each step's loss and gradients, as host arrays."""
    w = WORKLOADS["W6"]
    old = ember.get_default_device()
    ember.set_default_device(dev)  # (as tools/gpu_check.py runs the workloads)
    try:
        step, grads = w.build(ember, w.data(w.tiny), w.tiny)
        out = []
        for _ in range(steps):
            loss = step()
            assert str(loss.device) == ("cuda:0" if dev == "cuda" else "cpu")
            out.append((loss.detach().cpu().numpy().copy(), grads()))
        return out
    finally:
        ember.set_default_device(old)


def test_w6_step_equals_cpu_and_takes_the_fused_paths(stand_in, monkeypatch):
    want = _w6("cpu")
    seen = []
    _counting(monkeypatch, norms, "_raw_backward", seen)
    _counting(monkeypatch, nn_ops, "_ce_raw_backward", seen)
    before = dict(_fuse.runs)
    got = _w6("cuda")
    for (wl, wg), (gl, gg) in zip(want, got):  # the losses after 0, 1 and 2 AdamW steps, and every gradient
        assert gl.dtype == wl.dtype and np.array_equal(gl, wl)
        assert wg.keys() == gg.keys()
        for k in wg:
            assert gg[k].dtype == wg[k].dtype, k
            if k == "wte.weight":  # the embedding's index-add sums repeats as a float64 bincount on a device
                np.testing.assert_allclose(gg[k], wg[k], rtol=1e-5, atol=1e-8)  # (_backend.ufunc_at)
            else:
                assert np.array_equal(gg[k], wg[k]), k
    runs = {k: v - before.get(k, 0) for k, v in _fuse.runs.items()}
    n_params = len(want[0][1])
    assert runs.get("adam_step_110", 0) == 3 * n_params  # AdamW: one formula per parameter per step
    assert runs.get("tanh_backward", 0) == 3 * WORKLOADS["W6"].tiny["n_layer"]  # the MLP's tanh, per step
    assert seen.count("_ce_raw_backward") == 3  # the fused cross-entropy node, its backward on arrays
    n_norms = 2 * WORKLOADS["W6"].tiny["n_layer"] + 1
    assert seen.count("_raw_backward") == 3 * n_norms  # every LayerNorm's fused node, its backward on arrays
    assert runs.get("norm_backward_dx", 0) == 3 * n_norms
    assert not _fuse.fallbacks


def _train(cls, kw: dict, dev: str, dt) -> list:
    r = np.random.default_rng(0)
    ps = [ember.tensor(r.standard_normal(s).astype(dt), device=dev, requires_grad=True) for s in [(3, 4), (5,), ()]]
    opt = cls(ps, **kw)
    for _ in range(3):
        for p in ps:
            p.grad = ember.tensor((r.standard_normal(p.shape) * 10.0 ** r.integers(-4, 3)).astype(dt), device=dev)
        opt.step()
    return [p.detach().cpu().numpy() for p in ps] + [
        s.detach().cpu().numpy() for st in opt.state.values() for s in st.values() if isinstance(s, ember.Tensor)]


_OPTIMIZERS = [
    (ember.optim.Adam, dict(betas=[(0.9, 0.999), (0.3, 0.9)], amsgrad=[False, True], weight_decay=[0, 0.1],
                            maximize=[False, True])),
    (ember.optim.AdamW, dict(betas=[(0.9, 0.999), (0.3, 0.9)], amsgrad=[False, True], weight_decay=[0, 0.1])),
    (ember.optim.SGD, dict(momentum=[0.9], nesterov=[False, True], dampening=[0, 0.1], weight_decay=[0, 0.1],
                           lr=[1, 0.1])),
]
_OPT_CASES = [(cls, dict(zip(kws, vals))) for cls, kws in _OPTIMIZERS for vals in itertools.product(*kws.values())]
_OPT_CASES = [(cls, kw) for cls, kw in _OPT_CASES if not (kw.get("nesterov") and kw.get("dampening"))]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("cls,kw", _OPT_CASES, ids=lambda v: getattr(v, "__name__", None) or
                         "-".join(f"{k}={v}" for k, v in v.items()))
def test_optimizer_step_on_stand_in_equals_cpu(stand_in, cls, kw, dt):
    """Every variant of the fused Adam/SGD formulas (NOTE [fused Adam step], NOTE [fused SGD step]): the stand-in
    run (the formula on device arrays) equals the CPU run to the bit, parameters and state."""
    before = sum(_fuse.runs.values())
    want, got = _train(cls, kw, "cpu", dt), _train(cls, kw, "cuda", dt)
    assert sum(_fuse.runs.values()) > before
    for w, g in zip(want, got, strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)


@pytest.mark.parametrize("fn", ["tanh", "sigmoid"])
def test_activation_backward_formula_on_stand_in(stand_in, fn):
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    grads = []
    for dev in ("cpu", "cuda"):
        t = ember.tensor(x, device=dev, requires_grad=True)
        getattr(ember, fn)(t).sum().backward()
        grads.append(t.grad.cpu().numpy())
    assert np.array_equal(grads[0], grads[1])
    t = ember.tensor(x, device="cuda", requires_grad=True)  # second derivatives: the formula's own backward
    (g,) = ember.autograd.grad(getattr(ember, fn)(t).sum(), t, create_graph=True)
    g.sum().backward()
    ref = ember.tensor(x, requires_grad=True)
    (gr,) = ember.autograd.grad(getattr(ember, fn)(ref).sum(), ref, create_graph=True)
    gr.sum().backward()
    assert np.array_equal(t.grad.cpu().numpy(), ref.grad.numpy())


def test_gelu_tanh_formulas_on_stand_in(stand_in):
    """F.gelu(approximate='tanh'): forward and (create_graph=False) backward are fused formulas; the stand-in's
    values equal the CPU's, and second derivatives (the differentiable formula) too."""
    r = np.random.default_rng(2)
    x, g = r.standard_normal((4, 6)).astype(np.float32), r.standard_normal((4, 6)).astype(np.float32)
    before = dict(_fuse.runs)
    out = {}
    for dev in ("cpu", "cuda"):
        t = ember.tensor(x, device=dev, requires_grad=True)
        y = ember.nn.functional.gelu(t, approximate="tanh")
        (d,) = ember.autograd.grad(y, t, ember.tensor(g, device=dev), create_graph=True)
        d.sum().backward()
        y2 = ember.nn.functional.gelu(t, approximate="tanh")
        y2.backward(ember.tensor(g, device=dev))
        out[dev] = [y.detach().cpu().numpy(), d.detach().cpu().numpy(), t.grad.cpu().numpy()]
    for a, b in zip(out["cpu"], out["cuda"]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert _fuse.runs["gelu_tanh"] - before.get("gelu_tanh", 0) == 2
    assert _fuse.runs["gelu_tanh_backward"] - before.get("gelu_tanh_backward", 0) == 1  # (no graph: y2's)


# ------------------------------------------------------------------ the CuPy path, with a stand-in CuPy module
class _FakeCupyArray(np.ndarray):
    """An array whose type looks like CuPy's to ember._fuse (its module name)."""


_FakeCupyArray.__module__ = "cupy._core.core"


@_fuse.formula("test_axpy")
def _axpy(xp, y, x, a):
    y += a * xp.sqrt(x)
    return y * 2


def _fake_cupy(make):
    """A CuPy module whose ``fuse`` is called as CuPy's is: ``fuse(fn)``, or ``fuse(kernel_name=...)`` giving a
    decorator; ``make(fn, kernel_name)`` builds the kernel."""
    def fuse(*args, **kwargs):
        if kwargs:
            return lambda fn: make(fn, **kwargs)
        return make(args[0], kernel_name=None)
    return types.SimpleNamespace(fuse=fuse, sqrt=np.sqrt)


def _fresh(f):
    f.kernel = None
    _fuse.fallbacks.pop(f.name, None)


def test_formula_on_host_arrays_is_the_plain_formula():
    y, x = np.ones(3, np.float32), np.arange(3, dtype=np.float32)
    before = _fuse.runs["test_axpy"]
    out = _axpy(y, x, np.float32(0.5))
    assert np.array_equal(out, 2 * (1 + 0.5 * np.sqrt(np.arange(3, dtype=np.float32))))
    assert _fuse.runs["test_axpy"] == before  # host calls are not counted


def test_formula_counts_one_kernel_on_stand_in(stand_in):
    """``_backend.counting()`` counts a formula on the stand-in as the one kernel it is on a GPU."""
    y = np.ones(3, np.float32).view(B.StandInArray)
    x = np.arange(3, dtype=np.float32).view(B.StandInArray)
    with B.counting() as c:
        out = _axpy(y, x, np.float32(0.5))
        out * 2
    assert type(out) is B.StandInArray
    assert c.kernels == 2 and c.by_kernel == {"fused test_axpy": 1, "multiply": 1}, c.by_kernel


def test_formula_runs_the_fused_kernel_on_cupy_arrays(monkeypatch):
    made = []

    def fuse(fn, kernel_name):
        made.append(kernel_name)
        return lambda *args: ("kernel", fn(*args))
    monkeypatch.setattr(B, "cupy", lambda: _fake_cupy(fuse))
    _fresh(_axpy)
    y, x = np.ones(3, np.float32).view(_FakeCupyArray), np.arange(3, dtype=np.float32).view(_FakeCupyArray)
    tag, out = _axpy(y, x, np.float32(0.5))
    tag2, _ = _axpy(y, x, np.float32(0.5))
    assert tag == tag2 == "kernel" and made == ["test_axpy"]  # traced once, then reused
    assert "test_axpy" not in _fuse.fallbacks
    _fresh(_axpy)


@pytest.mark.parametrize("where", ["decorate", "call"])
def test_formula_cupy_refuses_falls_back_and_records(monkeypatch, where):
    def fuse(fn, kernel_name):
        if where == "decorate":
            raise TypeError("fuse: unsupported")

        def kernel(*args):
            raise NotImplementedError("fusion: not supported in a fused kernel")
        return kernel
    monkeypatch.setattr(B, "cupy", lambda: _fake_cupy(fuse))
    _fresh(_axpy)
    y = np.ones(3, np.float32).view(_FakeCupyArray)
    x = np.arange(3, dtype=np.float32).view(_FakeCupyArray)
    out = _axpy(y, x, np.float32(0.5))  # the plain formula, with the CuPy module as xp: no error
    assert np.array_equal(np.asarray(out), 2 * (1 + 0.5 * np.sqrt(np.arange(3, dtype=np.float32))))
    assert "not supported" in _fuse.fallbacks["test_axpy"] or "unsupported" in _fuse.fallbacks["test_axpy"]
    assert _axpy.kernel is False  # not tried again
    _fresh(_axpy)
