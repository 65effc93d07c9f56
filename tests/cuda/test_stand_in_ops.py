"""The op table on the stand-in cuda device (NOTE [cuda stand-in] in ember/_backend.py): every op of op_db.py,
on each of its samples, gives on ``cuda`` what it gives on the CPU (values, dtypes, gradients, errors), with its
results and gradients on ``cuda``. The CPU results are checked against torch by tests/ops/test_ops.py; real CuPy
kernels are checked against torch's CUDA by tools/gpu_check.py on a GPU."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import ember
from ember import _backend as B

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops"))
sys.path.insert(0, os.path.dirname(__file__))
from op_db import BF16, OPS, call  # noqa: E402
from oracle import _random_like, lib_tensor  # noqa: E402

from stand_in_known import HOST_FALLBACKS, KNOWN  # noqa: E402

CUDA = ember.device("cuda", 0)
_HINT = (" (a kernel or backward formula making a host array from a device input: route it through ember/_backend.py, "
         "or list the op in tests/cuda/stand_in_known.py)")


def _samples():
    """Every sample of every op (tools/gpu_check.py runs them on a GPU)."""
    for op in OPS:
        marks = [pytest.mark.xfail(strict=True, reason="host arrays on the device path (stand_in_known.py)")] \
            if op.name in KNOWN else []
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{op.name}-{i}", marks=marks)


def _flat(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _host(t) -> np.ndarray:
    return t.detach().cpu().resolve_conj().numpy()


def _run(op, sample, device):
    """(outputs or the error, gradients or None) of ``op`` on ``sample`` with inputs on ``device``."""
    ember.manual_seed(0)
    ins = []
    for a in sample.arrays:
        a = np.asarray(a)
        t = lib_tensor(ember, a).to(device)
        if op.grad and (a.dtype.kind in "fc" or a.dtype == BF16):
            t.requires_grad_(True)
        ins.append(t)
    try:
        outs = _flat(_call(op, sample, ins, device))
    except Exception as e:  # noqa: BLE001 - compared with the CPU's error
        return e, None
    diff = [t for t in ins if t.requires_grad]
    with_grad = [o for o in outs if isinstance(o, ember.Tensor) and o.requires_grad]
    if not diff or not with_grad:
        return outs, None
    rng = np.random.default_rng(1)
    ups = [lib_tensor(ember, _random_like(rng, _host(o))).to(device) for o in with_grad]
    try:
        return outs, ember.autograd.grad(with_grad, diff, ups, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - compared with the CPU's error
        return outs, e


def _call(op, sample, ins, device):
    """The op on ``ins`` with the default device left on the CPU, as users run it (they move inputs with ``.to``):
    a kernel making an array without ``like=`` / ``device=`` then lands on the host and fails here, which a
    default device of cuda would hide. The op table's lambdas make their index tensors and weights on their
    inputs' device; an op with no inputs (``repeat_interleave(repeats)``) makes everything on the default device."""
    if ins:
        return call(op, sample, ember, ins)
    old = ember.get_default_device()
    ember.set_default_device(device)
    try:
        return call(op, sample, ember, ins)
    finally:
        ember.set_default_device(old)


# Ops whose device kernels are the CPU's (their host fallbacks removed for issue 22): their values and gradients on
# the stand-in equal the CPU's bit for bit. (Others may take another kernel on a device, the fused CPU-only ones
# included, and agree to rounding.)
EXACT = frozenset({
    "affine_grid", "affine_grid 3d corners", "avg_pool1d", "avg_pool2d", "avg_pool2d divisor",
    "avg_pool2d pad ceil exclude", "avg_pool3d", "avg_pool3d pad ceil exclude divisor", "bernoulli(p in {0, 1})",
    "bernoulli_(Tensor p in {0, 1})", "<< >> scalar", "nn.CrossMapLRN2d size=3", "nn.CrossMapLRN2d size=4",
    "grid_sample bicubic reflection", "grid_sample bilinear", "grid_sample nearest border", "grid_sample 3d",
    "Dirichlet(one category).rsample", "Tensor.mode keepdim", "torch.mode", "normal(mean, Tensor std=0)",
    "_sample_dirichlet(one category)", "_standard_gamma times 0", "_standard_gamma_grad",
    "binomial(count, p in {0, 1})", "special.xlog1py scalars", "special.zeta scalars", "torch.cdist matrix-product form",
    "xlogy scalar self", "masked_fill", "masked_fill broadcast self", "masked_fill tensor value", "where",
    "where scalar other", "where scalar input", "F.ctc_loss mean", "F.ctc_loss none", "F.ctc_loss sum"})


def _on_cuda_noting_fallbacks(op, sample):
    """``_run`` on cuda, and the ops of it that took the host fallback (NOTE [host fallback] in ember/ops/_op.py)."""
    seen = set(B.host_fallbacks)
    B.host_fallbacks.clear()
    try:
        return _run(op, sample, CUDA), set(B.host_fallbacks)
    finally:
        B.host_fallbacks.update(seen)


def _close(d, c, what: str, op, exact: bool = False) -> None:
    assert isinstance(d, ember.Tensor), f"{what}: {type(d).__name__} on cuda, a tensor on the cpu"
    assert d.device == CUDA, f"{what}: on {d.device}"
    assert d.dtype == c.dtype and d.shape == c.shape, f"{what}: {d.dtype}{tuple(d.shape)} vs {c.dtype}{tuple(c.shape)}"
    hd, hc = _host(d), _host(c)
    if exact:  # the same NumPy kernels on both devices: the same numbers
        np.testing.assert_array_equal(hd, hc, err_msg=what)
    elif hc.dtype.kind in "fc" or hc.dtype == BF16:
        rtol = max(op.rtol or 0, 1e-5 if hc.dtype.itemsize >= 4 else 1e-2)
        np.testing.assert_allclose(hd.astype(np.complex128 if hc.dtype.kind == "c" else np.float64),
                                   hc.astype(np.complex128 if hc.dtype.kind == "c" else np.float64),
                                   rtol=rtol, atol=max(op.atol or 0, 1e-6), equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(hd, hc, err_msg=what)


@pytest.mark.filterwarnings("ignore")  # the CPU run (tests/ops/test_ops.py) checks warnings against torch
@pytest.mark.parametrize("op,sample", list(_samples()))
def test_op_on_cuda_matches_cpu(stand_in, op, sample) -> None:
    cpu, cpu_grads = _run(op, sample, "cpu")
    (dev, dev_grads), fallbacks = _on_cuda_noting_fallbacks(op, sample)
    unexplained = fallbacks - HOST_FALLBACKS.keys()
    assert not unexplained, (f"ran on the host (NOTE [host fallback]): {sorted(unexplained)}: route the kernel "
                             "through ember/_backend.py's helpers, or list the op with its reason in "
                             "tests/cuda/stand_in_known.py")
    exact = op.name in EXACT and not fallbacks
    if isinstance(cpu, Exception):
        assert type(dev) is type(cpu) and str(dev) == str(cpu), f"cuda: {dev!r}; cpu: {cpu!r}"
        return
    assert not isinstance(dev, Exception), f"cuda raised {dev!r}{_HINT}"
    assert len(dev) == len(cpu)
    for i, (d, c) in enumerate(zip(dev, cpu)):
        if isinstance(c, ember.Tensor):
            _close(d, c, f"output {i}", op, exact)
        else:
            assert d == c, f"output {i}"
    if cpu_grads is None:
        assert dev_grads is None
        return
    if isinstance(cpu_grads, Exception):
        assert type(dev_grads) is type(cpu_grads) and str(dev_grads) == str(cpu_grads), \
            f"backward on cuda: {dev_grads!r}; cpu: {cpu_grads!r}"
        return
    assert not isinstance(dev_grads, Exception), f"backward on cuda raised {dev_grads!r}{_HINT}"
    for i, (d, c) in enumerate(zip(dev_grads, cpu_grads)):
        if c is None:
            assert d is None or not np.any(_host(d)), f"grad {i}"
        else:
            _close(d, c, f"grad {i}", op, exact)
