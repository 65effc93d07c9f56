"""Complex tensors against torch beyond the op table (tests/ops/test_complex_ops.py runs every op on complex
inputs): dtypes and promotion, printing, the conjugate bit, real/imag/view_as_real/view_as_complex sharing memory
(also under in-place changes with autograd), scalars, factories, autograd's rules for complex outputs."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, check, ember, same_error, torch

RNG = np.random.default_rng(0)
Z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4)))
Z64 = Z.astype(np.complex64)


# ---------------------------------------------------------------- dtypes and promotion
DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex32",
               "complex64", "complex128"]


@pytest.mark.parametrize("a", DTYPE_NAMES)
@pytest.mark.parametrize("b", ["complex32", "complex64", "complex128"])
def test_promote_types(a, b):
    assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_attributes(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert (e.is_complex, e.is_floating_point, e.is_signed, e.itemsize) == \
        (t.is_complex, t.is_floating_point, t.is_signed, t.itemsize)
    assert str(e.to_real()) == str(t.to_real())
    for lib, d in ((ember, e), (torch, t)):
        try:
            r = str(d.to_complex())
        except RuntimeError as err:
            r = str(err)
        if lib is ember:
            got = r
    assert got == r


def test_aliases_and_finfo():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128 and ember.chalf is ember.complex32
    for name in ("complex64", "complex128"):
        assert repr(ember.finfo(getattr(ember, name))) == repr(torch.finfo(getattr(torch, name)))


OPERANDS = {
    "f32 tensor": lambda lib: lib.ones(2), "f64 tensor": lambda lib: lib.ones(2, dtype=lib.float64),
    "i64 tensor": lambda lib: lib.ones(2, dtype=lib.int64), "bool tensor": lambda lib: lib.ones(2, dtype=lib.bool),
    "c64 tensor": lambda lib: lib.ones(2, dtype=lib.complex64),
    "c128 tensor": lambda lib: lib.ones(2, dtype=lib.complex128),
    "c64 0-d": lambda lib: lib.tensor(1j, dtype=lib.complex64),
    "c128 0-d": lambda lib: lib.tensor(1j, dtype=lib.complex128),
    "f64 0-d": lambda lib: lib.tensor(1.0, dtype=lib.float64), "complex": lambda lib: 2 - 1j, "float": lambda lib: 0.5,
    "int": lambda lib: 3,
}


def _complex_operand(name: str) -> bool:
    return name.startswith("c")


PAIRS = [(a, b) for a in OPERANDS if "tensor" in a or "0-d" in a for b in OPERANDS
         if _complex_operand(a) or _complex_operand(b)]  # (pairs without a complex operand: the real dtype tests)


@pytest.mark.parametrize("a,b", PAIRS)
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_result_type_and_arithmetic(a, b, default):
    """torch's categories: a complex operand of lower priority keeps a floating operand's precision; Python complex
    numbers take the complex form of the default dtype."""
    out = []
    for lib in (ember, torch):
        lib.set_default_dtype(getattr(lib, default))
        try:
            x, y = OPERANDS[a](lib), OPERANDS[b](lib)
            out.append((str(lib.result_type(x, y)), str((x * y).dtype), str((x + y).dtype)))
        finally:
            lib.set_default_dtype(lib.float32)
    assert out[0] == out[1]


def test_float16_with_complex_is_complex32_which_ember_cannot_hold():
    assert str(ember.result_type(ember.ones(2, dtype=ember.float16), 1j)) == "torch.complex32"
    with pytest.raises(TypeError, match="complex32"):
        ember.ones(2, dtype=ember.float16) * 1j
    with pytest.raises(TypeError, match="complex32"):
        ember.zeros(2, dtype=ember.complex32)


# ---------------------------------------------------------------- printing
PRINTED = [
    lambda lib: lib.tensor([1 + 2j, -3.5 - 0.25j, 0j]),
    lambda lib: lib.tensor([[1 + 2j, 3], [1e-5j, 100]]),
    lambda lib: lib.tensor(1 + 1j),
    lambda lib: lib.zeros(0, dtype=lib.complex128),
    lambda lib: lib.tensor([1j, 2], dtype=lib.complex128),
    lambda lib: lib.tensor([float("nan") + 1j, complex(float("inf"), -float("inf"))]),
    lambda lib: lib.tensor([1e10 + 1j, 2]),
    lambda lib: lib.tensor([[1.5 + 2j] * 3] * 2),
    lambda lib: lib.tensor(-0.0 - 0.0j),
    lambda lib: lib.arange(2000, dtype=lib.float32).reshape(40, 50).to(lib.complex64) * (1 + 1j),
    lambda lib: lib.tensor([1 + 2j, 3 - 1j], requires_grad=True).conj(),
    lambda lib: lib.tensor([1 + 2j, 3 - 1j], requires_grad=True) * 2,
]


@pytest.mark.parametrize("make", PRINTED)
def test_printed_form(make):
    assert repr(make(ember)) == repr(make(torch))


def test_printed_form_default_float64():
    for lib in (ember, torch):
        lib.set_default_dtype(lib.float64)
    try:
        assert repr(ember.tensor([1j])) == repr(torch.tensor([1j]))
        assert repr(ember.tensor([1j], dtype=ember.complex64)) == repr(torch.tensor([1j], dtype=torch.complex64))
    finally:
        for lib in (ember, torch):
            lib.set_default_dtype(lib.float32)


# ---------------------------------------------------------------- scalars and factories
def test_python_numbers():
    for lib in (ember, torch):
        z = lib.tensor(1 + 2j)
        assert z.item() == 1 + 2j and complex(z) == 1 + 2j and bool(z) and not bool(z * 0)
        assert float(lib.tensor(3 + 0j)) == 3.0
    same_error(lambda lib: float(lib.tensor(1 + 2j)))
    same_error(lambda lib: int(lib.tensor(1 + 2j)))


FACTORIES = [
    lambda lib: lib.zeros(2, 3, dtype=lib.complex64), lambda lib: lib.ones(3, dtype=lib.cdouble),
    lambda lib: lib.full((2,), 1 + 1j), lambda lib: lib.full((2,), 1j, dtype=lib.complex128),
    lambda lib: lib.eye(2, dtype=lib.complex64), lambda lib: lib.linspace(0, 1, 3, dtype=lib.complex64),
    lambda lib: lib.tensor([1, 2]).to(lib.complex64), lambda lib: lib.zeros_like(lib.ones(2), dtype=lib.complex64),
    lambda lib: lib.tensor(np.array([1j], np.complex64)), lambda lib: lib.as_tensor([1, 2j]),
    lambda lib: lib.ones(2).cfloat(), lambda lib: lib.ones(2).cdouble(),
]

# complex end points infer a complex dtype (NumPy's spacing: last bits may differ from torch's kernel)
SPACED = [
    lambda lib: lib.linspace(1j, 3 + 2j, 5), lambda lib: lib.linspace(0, 1 + 1j, 3, dtype=lib.complex128),
    lambda lib: lib.linspace(lib.tensor(1j, dtype=lib.complex128), 2, 4), lambda lib: lib.logspace(0, 1j, 3),
    lambda lib: lib.logspace(0, 1 + 1j, 3, base=2, dtype=lib.complex128),
]


@pytest.mark.parametrize("make", FACTORIES)
def test_factories(make):
    assert_close(make(ember), make(torch), 0, 0)


@pytest.mark.parametrize("make", SPACED)
def test_spaced_factories_infer_complex(make):
    assert_close(make(ember), make(torch))


@pytest.mark.parametrize("call", [
    lambda lib: lib.linspace(0, 1 + 1j, 3, dtype=lib.float32),
    lambda lib: lib.linspace(lib.tensor(1j), 2, 3, dtype=lib.float64),
    lambda lib: lib.logspace(0, 1j, 3, dtype=lib.int64),
])
def test_spaced_factories_refuse_a_real_dtype_for_complex_ends(call):
    same_error(call)


@pytest.mark.parametrize("make", [
    lambda lib: lib.randn(20000, dtype=lib.complex64), lambda lib: lib.rand(20000, dtype=lib.complex128),
    lambda lib: lib.randn_like(lib.ones(20000, dtype=lib.complex64)), lambda lib: lib.ones(20000, dtype=lib.cfloat).normal_(),
    lambda lib: lib.ones(20000, dtype=lib.cfloat).uniform_(-1, 1), lambda lib: lib.normal(0.0, 1.0, (20000,), dtype=lib.complex64),
])
def test_random_complex_samples_have_torchs_moments(make):
    e, t = make(ember), make(torch)
    assert str(e.dtype) == str(t.dtype)
    for part in ("real", "imag"):
        a, b = getattr(e, part).numpy(), getattr(t, part).numpy()
        assert abs(a.mean() - b.mean()) < 0.05 and abs(a.std() - b.std()) < 0.05


@pytest.mark.parametrize("call", [
    lambda lib: lib.arange(3, dtype=lib.complex64),
    lambda lib: lib.randint(0, 3, (2,), dtype=lib.complex64),
    lambda lib: lib.randperm(3, dtype=lib.complex64),
    lambda lib: lib.ones(2, dtype=lib.complex64).exponential_(),
    lambda lib: lib.ones(2, dtype=lib.complex64).random_(),
    lambda lib: lib.ones(2, dtype=lib.complex64).bernoulli_(0.5),
    lambda lib: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.polar(lib.ones(2, dtype=lib.complex64), lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.view_as_real(lib.ones(2)),
    lambda lib: lib.view_as_complex(lib.ones(3)),
    lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.view_as_complex(lib.ones(3, 3)[:, 1:]),
    lambda lib: lib.view_as_complex(lib.ones(6)[1:5].view(2, 2)),
    lambda lib: lib.ones(2).imag,
    lambda lib: lib.ones(2, dtype=lib.complex64).sign(),
    lambda lib: lib.ones(2, dtype=lib.complex64) < 1,
    lambda lib: lib.ones(2, dtype=lib.complex64).max(),
    lambda lib: lib.ones(2, dtype=lib.complex64).clamp(0, 1),
    lambda lib: lib.ones(2, dtype=lib.complex64).sort(),
    lambda lib: lib.ones(2, dtype=lib.complex64).isposinf(),
    lambda lib: lib.isneginf(lib.ones(2, dtype=lib.complex128)),
    lambda lib: lib.ones(2, dtype=lib.complex64).signbit(),
    lambda lib: lib.ones(2, dtype=lib.complex64).abs_(),
    lambda lib: lib.ones(2, dtype=lib.complex64).absolute_(),
    lambda lib: lib.abs_(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.bitwise_not(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.ones(2, dtype=lib.complex128).bitwise_not_(),
    lambda lib: ~lib.ones(2, dtype=lib.complex64),
    lambda lib: ~lib.ones(2),
    lambda lib: lib.ones(2).bitwise_not(),
    lambda lib: lib.histc(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.histc(lib.ones(2, dtype=lib.complex64), 4, 0, 1),
    lambda lib: lib.histc(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.histogram(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.histogram(lib.ones(2, dtype=lib.complex64), 3, range=(0.0, 1.0)),
    lambda lib: lib.histogram(lib.ones(2, dtype=lib.complex64), lib.tensor([0.0, 1.0])),
    lambda lib: lib.histogram(lib.ones(2), lib.tensor([0.0, 1.0], dtype=lib.complex64)),
    lambda lib: lib.histogram(lib.ones(2, dtype=lib.complex64), lib.tensor([0.0, 1.0], dtype=lib.complex64)),
    lambda lib: lib.histogram(lib.ones(2), weight=lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.histogram(lib.ones(2, dtype=lib.int64), lib.tensor([0.0, 1.0])),
    lambda lib: lib.histogram(lib.ones(2, dtype=lib.float16)),
    lambda lib: lib.special.bessel_j0(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.special.airy_ai(lib.ones(2, dtype=lib.complex128)),
    lambda lib: lib.special.modified_bessel_k1(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.special.spherical_bessel_j0(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.special.chebyshev_polynomial_t(lib.ones(2, dtype=lib.complex64), 2),
    lambda lib: lib.special.hermite_polynomial_h(lib.ones(2), lib.ones(2, dtype=lib.complex64)),
    # a complex operand of a real in-place target fails on the cast before the kernel's complex error
    lambda lib: lib.ones(2).clamp_(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.ones(2, dtype=lib.float64).xlogy_(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.ones(2).fmod_(1j),
    lambda lib: lib.ones(4)[::2].atan2_(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.ones(2, requires_grad=True).clone().clamp_(max=lib.ones(2, dtype=lib.complex64)),
    # dtypes that differ: torch does not promote
    lambda lib: lib.allclose(lib.ones(2, dtype=lib.complex64), lib.ones(2)),
    lambda lib: lib.ones(2).allclose(lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.cross(lib.ones(2, 3, dtype=lib.complex64), lib.ones(2, 3), dim=1),
    lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.linalg.cross(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    lambda lib: lib.heaviside(lib.ones(2, dtype=lib.complex64), lib.ones(2)),
    lambda lib: lib.heaviside(lib.ones(2), lib.ones(2, dtype=lib.complex128)),
    lambda lib: lib.bitwise_and(lib.ones(2, dtype=lib.complex64), lib.ones(2)),
    lambda lib: lib.bitwise_or(lib.ones(2), lib.tensor([1])),
    lambda lib: lib.ones(2) ^ True,
    lambda lib: lib.bitwise_xor(lib.tensor([1]), 1j),
    lambda lib: lib.bincount(lib.ones(2)),
    lambda lib: lib.bincount(lib.ones(2, 2)),
    lambda lib: lib.bincount(lib.tensor([True])),
    lambda lib: lib.bincount(lib.ones(2, dtype=lib.complex64)),
    # a complex number into a real tensor: torch's Scalar conversion (its imaginary part must be 0)
    lambda lib: lib.zeros(2).fill_(1j),
    lambda lib: lib.zeros(2, requires_grad=True).clone().fill_(1j),
    lambda lib: lib.zeros(2, dtype=lib.int64).fill_(2j),
    lambda lib: lib.zeros(2).masked_fill(lib.tensor([True, False]), 1j),
    lambda lib: lib.full((2,), 1j, dtype=lib.float16),
    lambda lib: lib.full((2,), 1j, dtype=lib.uint8),
    lambda lib: lib.full_like(lib.zeros(2), 1j),
    lambda lib: lib.zeros(2, dtype=lib.float64).new_full((2,), 1j),
    lambda lib: lib.scalar_tensor(1j),
    lambda lib: lib.zeros(2).__setitem__(0, 1j),
    lambda lib: lib.zeros(2, dtype=lib.int64).__setitem__(0, 1j),
    lambda lib: lib.zeros(2, 2).scatter(0, lib.tensor([[1, 0]]), 1j),
    lambda lib: lib.zeros(2, 2).scatter(0, lib.tensor([[1, 0]]), 1j, reduce="add"),
    lambda lib: lib.zeros(2).index_fill(0, lib.tensor([0]), 1 + 0j),
    lambda lib: lib.lerp(lib.zeros(2), lib.ones(2), 1j),
    lambda lib: lib.addcmul(lib.zeros(2), lib.ones(2), lib.ones(2), value=1j),
    lambda lib: lib.addcdiv(lib.zeros(2), lib.ones(2), lib.ones(2), value=2j),
    lambda lib: lib.add(lib.zeros(2), lib.ones(2), alpha=1 + 0j),
    lambda lib: lib.zeros(2).sub_(lib.ones(2), alpha=1j),
    lambda lib: lib.add(lib.zeros(2, dtype=lib.int64), 2, alpha=1.5),
    lambda lib: lib.zeros(2).clamp(1j),
    lambda lib: lib.zeros(2, dtype=lib.float64).clamp(max=2j),
    lambda lib: lib.zeros(2).clamp_min(1j),
    lambda lib: lib.zeros(2, dtype=lib.int64).clamp(1j),
    lambda lib: lib.tensor([1.5, 2j], dtype=lib.float32),
    lambda lib: lib.tensor([[1, 2j]], dtype=lib.int32),
    lambda lib: lib.zeros(2).index_put((lib.tensor([0]),), lib.tensor(5j)),
    lambda lib: lib.zeros(2).masked_scatter(lib.tensor([True, False]), lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.nn.functional.pad(lib.ones(2, dtype=lib.complex64), (1, 1), value=1j),
    lambda lib: lib.nn.functional.glu(lib.ones(4, dtype=lib.complex64)),
], ids=lambda f: "")
def test_errors_match_torch(call):
    same_error(call)


# ---------------------------------------------------------------- the conjugate bit and views of the parts
def test_conjugate_bit():
    for lib in (ember, torch):
        z = lib.tensor(Z, requires_grad=True)
        c = z.conj()
        assert c.is_conj() and lib.is_conj(c) and not z.is_conj()
        assert type(c.grad_fn).__name__ == "ConjBackward0"
        assert c[1:].is_conj() and c.reshape(-1).is_conj() and c.detach().is_conj()
        assert not (c * 2).is_conj() and not c.clone().is_conj() and not c.conj().is_conj()
        assert not c.resolve_conj().is_conj() and not lib.conj_physical(z).is_conj()
        r = lib.ones(3)
        assert r.conj() is r and r.resolve_conj() is r and not r.is_conj()
    same_error(lambda lib: lib.tensor(Z).conj().numpy())
    same_error(lambda lib: lib.view_as_real(lib.tensor(Z).conj()))
    check(lambda lib, z: (z.conj().real, z.conj().imag, z.conj().resolve_conj()), Z)


def test_parts_share_memory_and_are_writable():
    for lib in (ember, torch):
        z = lib.tensor(Z64.copy())
        z.real[0, 0] = 7.0
        z.imag.mul_(2)
        lib.view_as_real(z)[1, 1, 0] = -1.0
        zc = lib.view_as_complex(lib.view_as_real(z))
        zc[2, 2] = 5j
        if lib is ember:
            got = z.numpy().copy()
    want = z.numpy()
    np.testing.assert_array_equal(got, want)


def test_view_geometry_matches_torch():
    for make in (lambda lib, z: z[:, 1:].real, lambda lib, z: z.t().imag, lambda lib, z: lib.view_as_real(z[::2]),
                 lambda lib, z: lib.view_as_complex(lib.view_as_real(z)[1:])):
        e, t = make(ember, ember.tensor(Z)), make(torch, torch.tensor(Z))
        assert (e.stride(), e.storage_offset(), tuple(e.shape)) == (t.stride(), t.storage_offset(), tuple(t.shape))


def _scale_real(lib, a):
    b = a * 1
    b.real.mul_(2)
    return b


def _set_imag(lib, a):
    b = a * 1
    b.imag[0] = 5
    return b


def _scale_pairs(lib, a):
    b = a * 1
    r = lib.view_as_real(b)
    r[..., 0] *= 3
    return b, r


def _root_changed_under_view(lib, a):
    b = a * 1
    im = b.imag
    b.mul_(2j)
    return b, im * 1


def _assign_real(lib, a):
    b = a * 1
    b.real = a.imag.detach() * 0 + 1.5
    return b


def _complex_view_of_real(lib, x):
    y = x * 1
    c = lib.view_as_complex(y)
    c.mul_(1j)
    c[0] = 2 - 1j
    return y


@pytest.mark.parametrize("fn", [_scale_real, _set_imag, _scale_pairs, _root_changed_under_view, _assign_real])
def test_in_place_changes_through_views_of_the_parts(fn):
    check(fn, Z, gradgrad=True)


def test_in_place_changes_through_a_complex_view_of_real_memory():
    check(_complex_view_of_real, RNG.standard_normal((3, 2)), gradgrad=True)


# ---------------------------------------------------------------- autograd's rules for complex values
def test_backward_needs_a_real_scalar():
    same_error(lambda lib: (lib.tensor(Z, requires_grad=True) * 2).sum().backward())
    same_error(lambda lib: (lib.tensor(Z, requires_grad=True) * 2).backward(lib.ones(3, 4)))
    same_error(lambda lib: (lib.ones(3, requires_grad=True) * 2).backward(lib.ones(3, dtype=lib.complex64)))


def test_real_leaf_receives_the_real_part():
    """x real, y = x * c (complex): x.grad is the real part of the complex gradient, as torch's."""
    check(lambda lib, x, c: (x * c).abs().sum(), RNG.standard_normal(4), Z[0], gradgrad=True)


def test_losses_of_complex_graphs():
    """Real-valued losses built from complex intermediate values (a small unitary rotation and a phase loss)."""
    def f(lib, x, w):
        z = lib.complex(x, x.flip(-1))
        y = (z @ w) * lib.polar(lib.ones_like(x[0]), x[0])
        return (y.abs() ** 2).mean() + y.angle().sum() + (y.conj() * y).real.sum()
    check(f, RNG.standard_normal((3, 4)), Z[:, :4].T.copy() if False else RNG.standard_normal((4, 4)) +
          1j * RNG.standard_normal((4, 4)), gradgrad=True)


def test_requires_grad_and_grad_dtype():
    for lib in (ember, torch):
        z = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        (z.abs() + 1).sum().backward()
        assert z.grad.dtype == lib.complex64
    same_error(lambda lib: lib.zeros(2, dtype=lib.complex64).requires_grad_().__setattr__(
        "grad", lib.zeros(2)))


def test_isreal_is_a_zero_imaginary_part():
    z = np.array([1 + 0j, 2 + 1e-30j, np.nan + 0j, complex(np.inf, 0), complex(0, -0.0), 1j], np.complex64)
    check(lambda lib, a: (lib.isreal(a), a.isreal()), z, grad=False)
    check(lambda lib, a: lib.isreal(a), np.array([1.0, np.nan]), grad=False)


def test_lu_pivots_of_complex_matrices_are_lapacks():
    """LAPACK picks the pivot of largest |re| + |im| (not the modulus): the pivots and factors are torch's."""
    rng = np.random.default_rng(3)
    for dtype in (np.complex64, np.complex128):
        a = (rng.standard_normal((20, 4, 4)) + 1j * rng.standard_normal((20, 4, 4))).astype(dtype)
        check(lambda lib, x: tuple(lib.lu(x)), a, grad=False)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_histograms_of_half_precision_values(dtype):
    x = np.array([0.1, 0.5, 0.7, 2.0, 0.3], np.float32)
    check(lambda lib, a: lib.histc(a.to(getattr(lib, dtype)), 3), x, grad=False)
    check(lambda lib, a: lib.histc(a.to(getattr(lib, dtype)), 3, 0, 1), x, grad=False)


@pytest.mark.parametrize("make", [
    lambda lib: lib.full((2,), 1 + 0j, dtype=lib.float32), lambda lib: lib.full((2,), 2j, dtype=lib.bool),
    lambda lib: lib.zeros(2).fill_(3 + 0j), lambda lib: lib.zeros(2).clamp(1 + 0j),
    lambda lib: lib.lerp(lib.zeros(2), lib.ones(2), 0.5 + 0j), lambda lib: lib.addcmul(lib.zeros(2), lib.ones(2),
                                                                                        lib.ones(2), value=2 + 0j),
    lambda lib: lib.zeros(2, 2).scatter(0, lib.tensor([[1, 0]]), 1 + 0j),
    lambda lib: lib.add(lib.zeros(2, dtype=lib.complex64), lib.ones(2), alpha=1j),
    lambda lib: lib.ones(2, dtype=lib.complex64).masked_fill(lib.tensor([True, False]), 2j),
    lambda lib: lib.ones(2, dtype=lib.complex64).index_fill(0, lib.tensor([1]), 1j),
])
def test_complex_numbers_with_a_zero_imaginary_part_convert(make):
    assert_close(make(ember), make(torch), 0, 0)
