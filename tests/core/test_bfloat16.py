"""torch.bfloat16 against torch 2.13: the dtype object, promotion, printed form, finfo, conversions (round to nearest
even, torch's double rounding through float32), kernels rounding as torch's CPU kernels (bit for bit where torch's
kernel is upcast-compute-round), autograd and optimizers in bfloat16, and the dtype without ml_dtypes installed."""
from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from oracle import BF16, ember, lib_tensor, same_error, torch

LIBS = (ember, torch)
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


def _bits(t) -> np.ndarray:
    """A tensor's values as bit patterns (16-bit floats) or values; nan compared as nan."""
    if isinstance(t, torch.Tensor):
        if t.dtype in (torch.bfloat16, torch.float16):
            b = t.detach().view(torch.int16).numpy().copy()
            b[t.detach().isnan().numpy()] = 0x7FC0
            return b
        return t.detach().numpy()
    if t.dtype in (ember.bfloat16, ember.float16):
        b = t.detach().numpy().view(np.int16).copy()
        b[ember.isnan(t).numpy()] = 0x7FC0
        return b
    return t.detach().numpy()


def test_dtype_object_and_finfo_match_torch() -> None:
    e, t = ember.bfloat16, torch.bfloat16
    assert repr(e) == repr(t) == "torch.bfloat16" and str(e) == str(t)
    for attr in ("is_floating_point", "is_signed", "itemsize", "is_complex"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert repr(ember.finfo(e)) == repr(torch.finfo(t))
    fe, ft = ember.finfo(e), torch.finfo(t)
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(fe, attr) == getattr(ft, attr), attr
    assert ember.BFloat16Tensor.dtype is e and ember.ones(2).bfloat16().type() == "torch.BFloat16Tensor"
    assert ember.ones(2).type(ember.BFloat16Tensor).dtype is e and ember.ones(2).type("torch.BFloat16Tensor").dtype is e
    assert ember.is_floating_point(ember.ones(1, dtype=e)) and ember.ones(3, dtype=e).element_size() == 2
    import pickle
    assert pickle.loads(pickle.dumps(e)) is e


def test_promotion_matches_torch() -> None:
    for a, b in itertools.product(DTYPES, DTYPES):
        if "bfloat16" not in (a, b):
            continue
        pe = ember.promote_types(getattr(ember, a), getattr(ember, b))
        pt = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert str(pe) == str(pt), (a, b)

    def operands(lib):
        bf = lib.ones(3, dtype=lib.bfloat16)
        return [bf, 2.5, 3, True, lib.tensor(1.5), lib.tensor(2, dtype=lib.int64), lib.ones(3, dtype=lib.float16),
                lib.tensor(1.0, dtype=lib.float64), lib.ones(3, dtype=lib.int32), lib.tensor(1.0, dtype=lib.bfloat16)]
    for i, j in itertools.product(range(10), range(10)):
        if 0 not in (i, j) and 9 not in (i, j):
            continue
        if isinstance(operands(ember)[i], (int, float)) and isinstance(operands(ember)[j], (int, float)):
            continue
        dt = torch.result_type(operands(torch)[i], operands(torch)[j])
        assert str(ember.result_type(operands(ember)[i], operands(ember)[j])) == str(dt), (i, j)
        oe, ot = operands(ember), operands(torch)
        if isinstance(oe[i], ember.Tensor) or isinstance(oe[j], ember.Tensor):
            assert str((oe[i] + oe[j]).dtype) == str((ot[i] + ot[j]).dtype), (i, j)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1.0, 2.5, 3.14159265, 1e-3, 100.123], dtype=lib.bfloat16),
    lambda lib: lib.tensor([[1e10, 1.0], [3, 4]], dtype=lib.bfloat16, requires_grad=True) * 2,
    lambda lib: lib.tensor(3.14159, dtype=lib.bfloat16),
    lambda lib: lib.tensor([], dtype=lib.bfloat16),
    lambda lib: lib.tensor([1.0, 2.0, 3.0], dtype=lib.bfloat16),
    lambda lib: lib.tensor([float("nan"), float("inf"), -0.0, 1e-40], dtype=lib.bfloat16),
    lambda lib: lib.arange(2000, dtype=lib.float32).bfloat16().reshape(40, 50),
    lambda lib: lib.ones(2, 3, dtype=lib.bfloat16).requires_grad_(),
])
def test_printed_form_matches_torch(make) -> None:
    assert repr(make(ember)) == repr(make(torch))


def test_conversions_round_as_torch() -> None:
    rng = np.random.default_rng(0)
    # float32 values around bfloat16's ties (round half to even), specials, overflow and subnormals
    base = rng.standard_normal(4000).astype(np.float32)
    ties = (base.view(np.uint32) & np.uint32(0xFFFF0000) | np.uint32(0x8000)).view(np.float32)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4e38, 3.39e38, -3.4e38, 1e-40, -1e-45, 65504.0],
                       np.float32)
    for arr in (base, ties, special):
        for src in ("float32", "float64", "float16"):
            a = arr.astype(src)
            np.testing.assert_array_equal(_bits(ember.tensor(a).bfloat16()), _bits(torch.tensor(a).bfloat16()))
            np.testing.assert_array_equal(_bits(ember.tensor(a).to(ember.bfloat16)), _bits(torch.tensor(a).to(torch.bfloat16)))
    # float64 -> bfloat16 rounds through float32 in torch (twice): 1 + 2**-8 + 2**-40 becomes 1.0
    for lib in LIBS:
        assert lib.tensor([1 + 2 ** -8 + 2 ** -40], dtype=lib.float64).bfloat16().item() == 1.0
        assert lib.tensor(1 + 2 ** -8 + 2 ** -40, dtype=lib.bfloat16).item() == 1.0
        assert lib.tensor([1 + 2 ** -11 + 2 ** -40], dtype=lib.float64).half().item() == 1.0
    ints = np.array([0, 1, -7, 255, 257, 2 ** 24 + 1, 2 ** 40 + 2 ** 32 + 1, -(2 ** 62)], np.int64)
    np.testing.assert_array_equal(_bits(ember.tensor(ints).bfloat16()), _bits(torch.tensor(ints).bfloat16()))
    b = rng.uniform(-300, 300, 100).astype(np.float32)
    for dt in ("int64", "int32", "int16", "uint8", "bool", "float16", "float64", "float32"):
        e = ember.tensor(b).bfloat16().to(getattr(ember, dt))
        t = torch.tensor(b).bfloat16().to(getattr(torch, dt))
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(_bits(e), _bits(t), err_msg=dt)
    for lib in LIBS:
        x = lib.tensor([1.5, -2.25], dtype=lib.bfloat16)
        assert x.tolist() == [1.5, -2.25] and x[0].item() == 1.5 and float(x[1]) == -2.25
        assert lib.full((2,), 1.00390625, dtype=lib.bfloat16).tolist() == [1.0, 1.0]


def test_from_numpy_shares_ml_dtypes_arrays() -> None:
    a = np.array([1.0, 2.0, 3.0], BF16)
    t = ember.from_numpy(a)
    assert t.dtype is ember.bfloat16
    t[0] = 5.0
    assert float(a[0]) == 5.0 and ember.tensor(a).dtype is ember.bfloat16
    assert t.numpy().dtype == BF16  # (torch's .numpy() refuses bfloat16; ember gives ml_dtypes' array)


def test_set_default_dtype_bfloat16() -> None:
    for lib in LIBS:
        lib.set_default_dtype(lib.bfloat16)
        try:
            x = lib.tensor([1.5, 2.0])
            assert x.dtype is lib.bfloat16 and lib.get_default_dtype() is lib.bfloat16
            assert (lib.arange(3) * 0.5).dtype is lib.bfloat16 and lib.zeros(2).dtype is lib.bfloat16
            r = repr(x) + repr(lib.tensor(1.5) * 3)
        finally:
            lib.set_default_dtype(lib.float32)
        if lib is ember:
            want = r
    assert want == r


# ops whose CPU kernel in torch loads float32, computes and rounds once: ember's results are the same bits
EXACT_UNARY = ("abs neg sin cos tanh sigmoid atan sinh cosh asinh erfc expm1 exp2 floor ceil round trunc frac sign "
               "square relu log log2 log1p sqrt rsqrt reciprocal lgamma acosh asin acos atanh erfinv tan").split()
EXACT_F = "softplus mish elu selu hardswish hardsigmoid leaky_relu hardtanh relu6 logsigmoid softsign celu".split()
EXACT_BINARY = "add sub mul div maximum minimum atan2 hypot copysign logaddexp".split()


def _inputs(rng, dtype):
    x = (rng.standard_normal(4096) * 3).astype(dtype)
    pos = rng.uniform(0.05, 4, 4096).astype(dtype)
    unit = rng.uniform(-0.95, 0.95, 4096).astype(dtype)
    return x, pos, unit


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_kernels_round_once_as_torch(dtype) -> None:
    npd = BF16 if dtype == "bfloat16" else np.dtype(np.float16)
    rng = np.random.default_rng(0)
    x, pos, unit = _inputs(rng, npd)
    y = (rng.standard_normal(4096)).astype(npd)
    ins = {"log": pos, "log2": pos, "log1p": pos, "sqrt": pos, "rsqrt": pos, "reciprocal": pos, "lgamma": pos,
           "acosh": pos, "asin": unit, "acos": unit, "atanh": unit, "erfinv": unit, "tan": unit}
    cases = [(n, lambda lib, a, n=n: getattr(lib, n)(a), (ins.get(n, x),)) for n in EXACT_UNARY]
    cases += [(n, lambda lib, a, n=n: getattr(lib.nn.functional, n)(a), (x,)) for n in EXACT_F]
    cases += [(n, lambda lib, a, b, n=n: getattr(lib, n)(a, b), (x, y)) for n in EXACT_BINARY]
    cases += [("add alpha", lambda lib, a, b: lib.add(a, b, alpha=0.3), (x, y)),
              ("sub alpha", lambda lib, a, b: lib.sub(a, b, alpha=0.3), (x, y)),
              ("add_ alpha", lambda lib, a, b: a.clone().add_(b, alpha=0.3), (x, y)),
              ("scalar +", lambda lib, a: a + 1.37, (x,)), ("scalar *", lambda lib, a: a * 1.37, (x,)),
              ("scalar /", lambda lib, a: a / 3.0, (x,)), ("1 - x", lambda lib, a: 1 - a, (x,)),
              ("x ** 2", lambda lib, a: a ** 2, (x,)), ("x ** 0.5", lambda lib, a: a ** 0.5, (pos,)),
              ("0-d float32 *", lambda lib, a: a * lib.tensor(0.7312345), (x,)),
              ("0-d float32 +", lambda lib, a: a + lib.tensor(0.7312345), (x,)),
              ("addcmul", lambda lib, a, b: lib.addcmul(a, a, b, value=0.5), (x, y)),
              ("where", lambda lib, a, b: lib.where(a > 0, a, b), (x, y)), ("clamp", lambda lib, a: a.clamp(-1, 1), (x,)),
              ("sum", lambda lib, a: a.reshape(64, 64).sum(-1), (x,)), ("mean", lambda lib, a: a.reshape(64, 64).mean(0), (x,)),
              ("softmax", lambda lib, a: lib.softmax(a.reshape(64, 64), -1), (x,)),
              ("cumsum", lambda lib, a: a.reshape(64, 64).cumsum(-1), (x,)), ("max", lambda lib, a: a.reshape(64, 64).amax(-1), (x,)),
              ("matmul", lambda lib, a: a.reshape(64, 64) @ a.reshape(64, 64), (x,)),
              ("var", lambda lib, a: a.reshape(64, 64).var(-1), (x,))]
    bad = []
    for name, f, arrays in cases:
        e = f(ember, *[lib_tensor(ember, a) for a in arrays])
        t = f(torch, *[lib_tensor(torch, a) for a in arrays])
        assert str(e.dtype) == str(t.dtype) == "torch." + dtype, name
        n = int((_bits(e) != _bits(t)).sum())
        if n:
            bad.append((name, n))
    assert not bad, bad


def test_autograd_in_bfloat16() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    res = {}
    for lib in LIBS:
        xt = lib.tensor(x).bfloat16().requires_grad_()
        wt = lib.tensor(w).bfloat16().requires_grad_()
        out = lib.nn.functional.linear(xt, wt).tanh()
        loss = (out * out).mean()
        loss.backward()
        assert xt.grad.dtype is lib.bfloat16 and wt.grad.dtype is lib.bfloat16 and loss.dtype is lib.bfloat16
        res[lib] = (loss, xt.grad, wt.grad)
    for a, b in zip(res[ember], res[torch]):
        np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(), rtol=3e-2, atol=1e-2)


@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW"])
def test_bfloat16_model_trains_as_torch(opt) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    hist = {}
    for lib in LIBS:
        m = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3))
        with lib.no_grad():
            for k, p in enumerate(m.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(k).standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
        m = m.bfloat16()
        o = getattr(lib.optim, opt)(m.parameters(), lr=0.05)
        losses = []
        for _ in range(5):
            o.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x).bfloat16()), lib.tensor(y))
            loss.backward()
            o.step()
            losses.append(loss.float().item())
        assert all(p.dtype is lib.bfloat16 for p in m.parameters())
        hist[lib] = losses
    np.testing.assert_allclose(hist[ember], hist[torch], rtol=5e-2, atol=5e-2)


def test_low_precision_errors_match_torch() -> None:
    a = np.eye(3, dtype=np.float32) * 2
    for name in ("inv", "det", "slogdet", "svd", "qr", "cholesky", "eigh"):
        same_error(lambda lib, name=name: getattr(lib.linalg, name)(lib.tensor(a).bfloat16()))
    same_error(lambda lib: lib.special.zeta(lib.ones(2).bfloat16(), lib.ones(2).bfloat16()))
    same_error(lambda lib: lib.special.ndtri(lib.ones(2).bfloat16() * 0.5))


def test_bfloat16_without_ml_dtypes() -> None:
    """Without the optional package: the dtype exists and everything about the type works; making a bfloat16 tensor
    raises ModuleNotFoundError with the install hint."""
    code = textwrap.dedent("""
        import sys
        sys.modules["ml_dtypes"] = None  # as if not installed
        import ember
        b = ember.bfloat16
        assert repr(b) == "torch.bfloat16" and b.is_floating_point and b.itemsize == 2
        assert ember.promote_types(b, ember.float16) is ember.float32
        assert ember.finfo(b).eps == 2 ** -7
        ember.set_default_dtype(b); ember.set_default_dtype(ember.float32)
        for make in (lambda: ember.zeros(2, dtype=b), lambda: ember.ones(2).bfloat16(), lambda: ember.ones(2).to(b)):
            try:
                make()
            except ModuleNotFoundError as e:
                assert "pip install 'ember[bf16]'" in str(e) and e.name == "ml_dtypes", e
            else:
                raise AssertionError("no error")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": ":".join(sys.path)})
    assert out.stdout.strip() == "ok", out.stderr


def test_view_dtype_reinterprets_bits_as_torch() -> None:
    x = np.array([[1.0, -2.5, 3.0, 1e-3], [0.5, 7.0, -0.0, 2.0]], np.float32)
    for make in (lambda lib, t: t.view(lib.int32), lambda lib, t: t.bfloat16().view(lib.int16),
                 lambda lib, t: t.half().view(lib.bfloat16), lambda lib, t: t.view(lib.float64),
                 lambda lib, t: t.view(lib.int16), lambda lib, t: t.t().view(lib.int32), lambda lib, t: t.view(lib.uint8)):
        e, t = make(ember, ember.tensor(x)), make(torch, torch.tensor(x))
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
        np.testing.assert_array_equal(_bits(e), _bits(t))
    for lib in LIBS:
        z = lib.zeros(4, requires_grad=True)
        w = z.detach().view(lib.int32)
        w[0] = 1065353216  # the bits of 1.0: the view shares storage
        assert z[0].item() == 1.0 and not z.view(lib.int32).requires_grad
    same_error(lambda lib: lib.ones(3, 5)[:, :3].view(lib.float64))
    same_error(lambda lib: lib.ones(()).view(lib.int16))
    same_error(lambda lib: lib.ones(2, 3).t().view(lib.float64))
    same_error(lambda lib: lib.ones(2, 4)[:, 1:3].view(lib.float64))
