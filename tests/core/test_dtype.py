"""dtypes, default dtype, promote_types/result_type and the result dtype of binary ops, against torch."""

import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import assert_close, ember, same_error, torch

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
ALIASES = ["half", "float", "double", "short", "int", "long"]
SCALARS = [True, False, 0, 3, -2, 2**40, 2.5, -0.5, 1e30]
LIBS = (ember, torch)


def make(lib, name, ndim):
    return lib.ones((2,) * ndim, dtype=getattr(lib, name))


def outcome(fn, lib):
    """The dtype name of ``fn(lib)``'s result, or the name of the exception it raised."""
    try:
        return str(fn(lib).dtype)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__


@pytest.mark.parametrize("name", NAMES + ALIASES)
def test_dtype_objects(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert repr(e) == repr(t) and str(e) == str(t)
    assert e.is_floating_point == t.is_floating_point and e.is_signed == t.is_signed
    assert e.itemsize == t.itemsize and e.is_complex == t.is_complex
    assert pickle.loads(pickle.dumps(e)) is e
    assert isinstance(e, ember.dtype)


def test_aliases_are_the_same_objects():
    assert ember.half is ember.float16 and ember.float is ember.float32 and ember.double is ember.float64
    assert ember.short is ember.int16 and ember.int is ember.int32 and ember.long is ember.int64


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_all_pairs(a, b):
    assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))) == str(
        torch.promote_types(getattr(torch, a), getattr(torch, b))
    )


OPS = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "radd": lambda x, y: y + x,
    "rsub": lambda x, y: y - x,
    "rdiv": lambda x, y: y / x,
}


@pytest.mark.parametrize("a", NAMES)
def test_binary_op_dtypes_tensor_tensor(a):
    """Every dtype pair x every op x (dimensioned, 0-d) operand kinds."""
    bad = []
    for b, (na, nb), (op, f) in itertools.product(NAMES, [(1, 1), (1, 0), (0, 1), (0, 0), (2, 1)], OPS.items()):
        res = [outcome(lambda lib: f(make(lib, a, na), make(lib, b, nb)), lib) for lib in LIBS]
        if res[0] != res[1]:
            bad.append((a, b, na, nb, op, res))
    assert not bad, bad[:10]


@pytest.mark.parametrize("a", NAMES)
def test_binary_op_dtypes_tensor_scalar(a):
    """Python scalars are weak: they only lift the category (bool < int < float)."""
    bad = []
    for s, nd, (op, f) in itertools.product(SCALARS, (0, 1), OPS.items()):
        res = [outcome(lambda lib: f(make(lib, a, nd), s), lib) for lib in LIBS]
        if res[0] != res[1]:
            bad.append((a, s, nd, op, res))
    assert not bad, bad[:10]


@pytest.mark.parametrize("a", NAMES)
def test_result_type(a):
    for b in NAMES:
        for na, nb in [(1, 1), (1, 0), (0, 1), (0, 0)]:
            e = ember.result_type(make(ember, a, na), make(ember, b, nb))
            t = torch.result_type(make(torch, a, na), make(torch, b, nb))
            assert str(e) == str(t), (a, b, na, nb)
    for s in SCALARS:
        assert str(ember.result_type(make(ember, a, 1), s)) == str(torch.result_type(make(torch, a, 1), s))
        assert str(ember.result_type(s, make(ember, a, 0))) == str(torch.result_type(s, make(torch, a, 0)))


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_out_of_range_int_scalars_wrap_like_torch(name):
    vals = np.array([254, 1, 7])
    for s in (-2, 300, 2**40, -(2**63)):
        for f in (lambda x: x + s, lambda x: x * s, lambda x: x - s, lambda x: s - x, lambda x: x == s):
            assert_close(f(ember.tensor(vals).to(getattr(ember, name))), f(torch.tensor(vals).to(getattr(torch, name))))
    same_error(lambda lib: lib.tensor([1]) + 2**64)


def test_result_type_of_two_scalars():
    for s, u in itertools.product([True, 1, 1.5], repeat=2):
        assert str(ember.result_type(s, u)) == str(torch.result_type(s, u))


@settings(max_examples=40, deadline=None)
@given(
    a=st.sampled_from(NAMES),
    b=st.sampled_from(NAMES),
    sa=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    sb=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    op=st.sampled_from(["add", "mul", "div"]),
)
def test_binary_op_values_and_dtype_hypothesis(a, b, sa, sb, op):
    """Values too, not only dtypes, for random shapes (broadcast) and dtype pairs."""
    rng = np.random.default_rng(len(sa) * 7 + len(sb))
    va = rng.integers(1, 5, size=sa).astype(np.dtype(a if a != "bool" else "bool"))
    vb = rng.integers(1, 5, size=sb).astype(np.dtype(b if b != "bool" else "bool"))
    f = OPS[op]
    res = []
    for lib in LIBS:
        x, y = lib.tensor(va), lib.tensor(vb)
        try:
            res.append(f(x, y))
        except Exception as e:  # noqa: BLE001
            res.append(type(e).__name__)
    if isinstance(res[1], str):
        assert res[0] == res[1]
    else:
        assert_close(res[0], res[1], rtol=1e-3, atol=1e-3)


def test_int_division_follows_default_dtype():
    both = lambda fn: assert_close(fn(ember), fn(torch))  # noqa: E731
    both(lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]))
    both(lambda lib: lib.tensor([1, 2]) / 2)
    both(lambda lib: lib.tensor([1, 2]) * 1.5)
    try:
        for lib in LIBS:
            lib.set_default_dtype(lib.float64)
        both(lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]))
        both(lambda lib: lib.tensor([1, 2]) + 0.5)
        both(lambda lib: lib.tensor([True]) + 0.5)
        both(lambda lib: lib.ones(2, dtype=lib.float32) + 0.5)
        assert ember.get_default_dtype() is ember.float64
    finally:
        for lib in LIBS:
            lib.set_default_dtype(lib.float32)


def test_set_default_dtype_errors():
    same_error(lambda lib: lib.set_default_dtype(lib.int64))
    assert ember.get_default_dtype() is ember.float32


# ----------------------------------------------------------------------------- conversion
@pytest.mark.parametrize("src", NAMES)
def test_to_and_casting_methods(src):
    vals = np.array([[0, 1.7], [-2.5, 300]])
    for meth in ["float", "double", "half", "long", "int", "short", "char", "byte", "bool"]:

        def f(lib):
            x = lib.tensor(np.abs(vals) if src in ("uint8", "bool") else vals).to(getattr(lib, src))
            return getattr(x, meth)()

        assert_close(f(ember), f(torch), rtol=1e-3, atol=1e-3)
    for dst in NAMES:

        def g(lib):
            x = lib.tensor([1, 0, 3]).to(getattr(lib, src))
            return (
                x.to(getattr(lib, dst)),
                x.to(dtype=getattr(lib, dst)),
                x.type(getattr(lib, dst)),
                x.type_as(lib.ones(1, dtype=getattr(lib, dst))),
                x.to(lib.ones(1, dtype=getattr(lib, dst))),
            )

        for e, t in zip(g(ember), g(torch)):
            assert_close(e, t)


def test_to_same_dtype_returns_self_and_copy_flag():
    for lib in LIBS:
        x = lib.ones(2)
        assert x.to(lib.float32) is x and x.float() is x and x.to("cpu") is x
        y = x.to(lib.float32, copy=True)
        assert y is not x and y.data_ptr() != x.data_ptr()
        assert x.to("cpu", lib.float64).dtype is lib.float64
        assert x.to(device="cpu", dtype=lib.int32).dtype is lib.int32


def test_type_strings():
    for n in NAMES:
        assert make(ember, n, 1).type() == make(torch, n, 1).type()
    for lib in LIBS:
        assert lib.ones(2).type("torch.DoubleTensor").dtype is lib.float64
        assert lib.ones(2).type("torch.IntTensor").dtype is lib.int32


def test_conversion_keeps_graph():
    for lib in LIBS:
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        y = x.double()
        assert y.grad_fn is not None and y.grad_fn.name() == "ToCopyBackward0"
        y.sum().backward()
        assert x.grad.dtype is lib.float32


def test_is_floating_point_and_complex():
    for n in NAMES:
        assert make(ember, n, 1).is_floating_point() == make(torch, n, 1).is_floating_point()
        assert ember.is_floating_point(make(ember, n, 0)) == torch.is_floating_point(make(torch, n, 0))
        assert make(ember, n, 1).is_complex() is False


@pytest.mark.parametrize("name", NAMES)
def test_finfo_iinfo(name):
    e, t = getattr(ember, name), getattr(torch, name)
    for info in ("finfo", "iinfo"):
        try:
            ti = getattr(torch, info)(t)
        except TypeError:
            same_error(lambda lib: getattr(lib, info)(getattr(lib, name)))
            continue
        ei = getattr(ember, info)(e)
        assert repr(ei) == repr(ti)
        for attr in ("bits", "max", "min", "eps", "tiny", "smallest_normal", "resolution", "dtype"):
            if hasattr(ti, attr):
                assert getattr(ei, attr) == getattr(ti, attr) and type(getattr(ei, attr)) is type(getattr(ti, attr))
    assert repr(ember.finfo()) == repr(torch.finfo())


# ----------------------------------------------------------------------------- a table of small cases
CASES = {
    "type_cls": lambda L: L.ones(2).type(L.LongTensor).dtype,
    "to_str_dtype": lambda L: L.ones(2).to("float64"),
    "to_torch_str": lambda L: L.ones(2).to("torch.float64"),
    "to_np_dtype": lambda L: L.ones(2).to(np.float64),
    "to_py_float": lambda L: L.ones(2, dtype=L.int64).to(float).dtype,
    "to_py_int": lambda L: L.ones(2).to(int).dtype,
    "to_py_bool": lambda L: L.ones(2).to(bool).dtype,
    "to_none": lambda L: L.ones(2).to(None).dtype,
    "to_kw_copy": lambda L: (lambda x: x.to(copy=True) is x)(L.ones(2)),
    "to_nb": lambda L: L.ones(2).to(L.float64, True).dtype,
    "to_nb_copy": lambda L: (lambda x: x.to(L.float32, False, True) is x)(L.ones(2)),
    "to_bad_kw": lambda L: L.ones(2).to(foo=1),
    "to_3": lambda L: L.ones(2).to("cpu", L.float64, False).dtype,
    "to_dev_obj_dtype": lambda L: L.ones(2).to(L.device("cpu"), dtype=L.int32).dtype,
    "to_rg": lambda L: (
        lambda x: (x.to(L.float64).requires_grad, x.to(L.float64).is_leaf, x.to(L.float64).grad_fn.name())
    )(L.ones(2, requires_grad=True)),
    "to_int_rg": lambda L: (lambda x: (x.long().requires_grad, x.long().grad_fn))(L.ones(2, requires_grad=True)),
    "float_nan_to_int": lambda L: L.tensor([1.9, -1.9]).long().tolist(),
    "f_to_bool": lambda L: L.tensor([0.1, 0.0, -0.0, float('nan')]).bool().tolist(),
    "f_to_u8_neg": lambda L: L.tensor([-1.0, 300.0]).byte().tolist(),
    "i_to_u8": lambda L: L.tensor([-1, 300]).byte().tolist(),
    "f16_round": lambda L: L.tensor([1 / 3]).half().tolist(),
    "type_as_int": lambda L: L.ones(2).type_as(L.tensor([1])).dtype,
    "dtype_eq": lambda L: (L.float32 == L.float, L.float32 != L.float64),
    "dtype_hashable": lambda L: len({L.float32, L.float, L.int64}),
    "get_default": lambda L: L.get_default_dtype(),
    "set_default_half": lambda L: (
        L.set_default_dtype(L.float16),
        L.tensor([1.5]).dtype,
        L.set_default_dtype(L.float32),
    )[1],
    "float16_default_arange": lambda L: (
        L.set_default_dtype(L.float16),
        L.arange(0.0, 1.0, 0.25).dtype,
        L.set_default_dtype(L.float32),
    )[1],
    "is_signed": lambda L: [getattr(L, n).is_signed for n in ["bool", "uint8", "int8", "float16"]],
    "to_real": lambda L: L.float32.to_real(),
    "promote_err": lambda L: L.promote_types(L.float32, 1),
    "result_type_np": lambda L: L.result_type(L.ones(2, dtype=L.int32), np.float64(1.0)),
    "can_cast_f_i": lambda L: L.can_cast(L.float32, L.int32),
    "item_dtype_f16": lambda L: type(L.tensor(1.5, dtype=L.float16).item()).__name__,
    "item_u8": lambda L: type(L.tensor(1, dtype=L.uint8).item()).__name__,
    "tolist_bool": lambda L: type(L.tensor([True]).tolist()[0]).__name__,
}


def _outcome(f, lib):
    try:
        return repr(f(lib)).replace("torch", "LIB").replace("ember", "LIB")
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return f"{type(e).__name__}: {str(e).split(chr(10))[0].split('. ')[0]}"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CASES))
def test_cases_same_as_torch(name):
    try:
        assert _outcome(CASES[name], ember) == _outcome(CASES[name], torch)
    finally:
        for lib in LIBS:
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("s", [np.bool_(True), np.int8(1), np.uint8(1), np.int32(1), np.float16(1), np.float64(1)])
def test_numpy_scalars_are_weak_like_python_numbers(s):
    for name in ("bool", "int32", "float16", "int64"):
        for f in (lambda x: x * s, lambda x: s * x, lambda x: x + s):
            assert str(f(make(ember, name, 1)).dtype) == str(f(make(torch, name, 1)).dtype)
        assert str(ember.result_type(make(ember, name, 1), s)) == str(torch.result_type(make(torch, name, 1), s))


OPERAND_CASES = {
    "add_str": lambda L: L.ones(2) + "a",
    "radd_str": lambda L: "a" + L.ones(2),
    "add_none": lambda L: L.ones(2) + None,
    "add_list": lambda L: L.ones(2) + [1, 2],
    "add_tuple": lambda L: L.ones(2) + (1, 2),
    "div_str": lambda L: L.ones(2) / "a",
    "rdiv_none": lambda L: None / L.ones(2),
    "pow_str": lambda L: L.ones(2) ** "a",
    "eq_str": lambda L: L.ones(2) == "a",
    "ne_none": lambda L: L.ones(2) != None,  # noqa: E711
    "lt_str": lambda L: L.ones(2) < "a",
    "and_str": lambda L: L.ones(2, dtype=L.bool) & "a",
    "add_np_arr": lambda L: L.ones(2) + np.ones(2),
    "add_big_int": lambda L: L.ones(2) + 2**70,
    "sub_bool_scalar": lambda L: L.ones(2) - True,
    "rsub_bool": lambda L: True - L.ones(2),
}


@pytest.mark.parametrize("name", sorted(OPERAND_CASES))
def test_operands_that_are_not_numbers(name):
    """Not-a-number operands give Python's TypeError (operators answer NotImplemented), as torch."""
    assert _outcome(OPERAND_CASES[name], ember) == _outcome(OPERAND_CASES[name], torch)
