"""dtype conversions (Tensor.to / float() / long() ... / type_as / type), can_cast and promote_types, vs torch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import assert_close, check, ember, same_error, to_np, torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
METHODS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
           "bool": "bool", "short": "int16", "byte": "uint8", "char": "int8"}


def _values(dtype: str, rng, shape=(3, 4)) -> np.ndarray:
    """Values every dtype represents exactly enough for casts to agree (no negative -> unsigned, no overflow)."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == "uint8":
        return rng.integers(0, 100, shape).astype(np.uint8)
    if dtype.startswith("int"):
        return rng.integers(0, 100, shape).astype(dtype)
    v = rng.uniform(0, 100, shape).astype(dtype)
    if v.size:
        v.flat[0] = 0.0
        v.flat[-1] = 99.75  # truncation toward zero
    return v


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("src", DTYPES)
def test_conversion_methods_values_and_grads(method, src) -> None:
    rng = np.random.default_rng(0)
    for arr in (_values(src, rng), _values(src, rng, ()), _values(src, rng, (0, 2))):
        eo, to = check(lambda lib, x: getattr(x, method)(), arr, gradgrad=True)
        e, t = eo[0], to[0]
        assert e.requires_grad == t.requires_grad
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__


@pytest.mark.parametrize("method", list(METHODS))
def test_conversion_identity_and_history(method) -> None:
    for src in ("float32", "int64"):
        res = []
        for lib in (ember, torch):
            x = lib.ones(3, dtype=getattr(lib, src), requires_grad=src == "float32")
            y = getattr(x, method)()
            res.append((y is x, str(y.dtype), y.requires_grad, type(y.grad_fn).__name__, y.is_leaf))
        assert res[0] == res[1]


def test_gradient_dtype_follows_the_input() -> None:
    for src, dst in [("float32", "float64"), ("float64", "float16"), ("float16", "float32")]:
        def fn(lib, x):
            return (x.to(getattr(lib, dst)) * 3).exp()
        check(fn, np.linspace(-1, 1, 6, dtype=src), gradgrad=True)
        g = []
        for lib in (ember, torch):
            x = lib.ones(2, dtype=getattr(lib, src), requires_grad=True)
            x.to(getattr(lib, dst)).sum().backward()
            g.append(str(x.grad.dtype))
        assert g[0] == g[1] == "torch." + src


def test_non_contiguous_and_broadcast_inputs() -> None:
    a = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    check(lambda lib, x: x.t().double() * x.t().half().float(), a, gradgrad=True)
    check(lambda lib, x: x[:, ::2].to(lib.float64).sum(0), a, gradgrad=True)
    check(lambda lib, x: x[None].expand(2, 4, 3).double(), a, gradgrad=True)


TO_CALLS = {
    "to(other tensor)": lambda lib, x: x.to(lib.zeros(2, dtype=lib.float64)),
    "to(int tensor)": lambda lib, x: x.to(lib.zeros(2, dtype=lib.int32)),
    "to(dtype, copy=True)": lambda lib, x: x.to(lib.float32, copy=True),
    "to(other, copy=True)": lambda lib, x: x.to(x, copy=True),
    "to(dtype, False, True)": lambda lib, x: x.to(lib.float32, False, True),
    "to(device, dtype)": lambda lib, x: x.to("cpu", lib.float64),
    "to(device=, dtype=)": lambda lib, x: x.to(device="cpu", dtype=lib.float16),
    "to(dtype=)": lambda lib, x: x.to(dtype=lib.int16),
    "to(same dtype)": lambda lib, x: x.to(lib.float32),
    "to(device)": lambda lib, x: x.to("cpu"),
    "type_as float64": lambda lib, x: x.type_as(lib.zeros(1, dtype=lib.float64)),
    "type_as int": lambda lib, x: x.type_as(lib.zeros(1, dtype=lib.int32)),
    "type(dtype)": lambda lib, x: x.type(lib.float64),
    "type(str)": lambda lib, x: x.type("torch.DoubleTensor"),
    "type(legacy short)": lambda lib, x: x.type("torch.IntTensor"),
    "type(FloatTensor)": lambda lib, x: x.type(lib.FloatTensor),
    "type(DoubleTensor)": lambda lib, x: x.type(lib.DoubleTensor),
    "type(dtype=HalfTensor)": lambda lib, x: x.type(dtype=lib.HalfTensor, non_blocking=True),
    "type(Tensor)": lambda lib, x: x.type(lib.Tensor),
    "type('torch.Tensor')": lambda lib, x: x.type("torch.Tensor"),
    "type(double).type(Tensor)": lambda lib, x: x.double().type(lib.Tensor),
}


@pytest.mark.parametrize("fn", list(TO_CALLS.values()), ids=list(TO_CALLS))
def test_to_overloads(fn) -> None:
    arr = np.array([[1.5, -2.25, 3.0], [0.0, 7.5, -1.0]], np.float32)
    eo, to = check(fn, arr, gradgrad=True)
    res = []
    for lib in (ember, torch):
        x = lib.tensor(arr, requires_grad=True)
        y = fn(lib, x)
        y2 = fn(lib, x.detach())
        res.append((y is x, type(y.grad_fn).__name__, y.requires_grad, y2 is x, np.shares_memory(to_np(y2), to_np(x))
                    if y2 is not x else None))
    assert res[0][:3] == res[1][:3]
    # to(copy=True) never shares memory; a no-op to() returns the tensor itself
    e, t = res
    assert e[4] == t[4]


def test_copy_true_does_not_alias() -> None:
    for lib in (ember, torch):
        x = lib.arange(3)
        y = x.to(lib.int64, copy=True)
        y[0] = 9
        assert x[0].item() == 0 and x.long() is x


def test_type_without_argument() -> None:
    for d in DTYPES:
        assert ember.zeros(1, dtype=getattr(ember, d)).type() == torch.zeros(1, dtype=getattr(torch, d)).type()


def test_type_tensor_is_the_default_type() -> None:
    """``type(Tensor)`` converts to the default dtype, which set_default_dtype changes."""
    got = []
    for lib in (ember, torch):
        old = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            x = lib.ones(2, dtype=lib.float32)
            got.append((str(x.type(lib.Tensor).dtype), str(x.type("torch.Tensor").dtype), x.type(lib.FloatTensor) is x))
        finally:
            lib.set_default_dtype(old)
    assert got[0] == got[1] == ("torch.float64", "torch.float64", True)


ERRORS = {
    "type('Tensor')": lambda lib: lib.ones(2).type("Tensor"),
    "type('torch.float64')": lambda lib: lib.ones(2).type("torch.float64"),
    "type('torch.sparse.Tensor')": lambda lib: lib.ones(2).type("torch.sparse.Tensor"),
    "type('torch.cuda.Tensor')": lambda lib: lib.ones(2).type("torch.cuda.Tensor"),
    "type(cuda.DoubleTensor)": lambda lib: lib.ones(2).type(lib.cuda.DoubleTensor),
    "type(3)": lambda lib: lib.ones(2).type(3),
    "type(float)": lambda lib: lib.ones(2).type(float),
    "type(object)": lambda lib: lib.ones(2).type(object),
    "type(Size)": lambda lib: lib.ones(2).type(lib.Size),
    "type(dtype class)": lambda lib: lib.ones(2).type(lib.dtype),
    "type(tensortype)": lambda lib: lib.ones(2).type(type(lib.FloatTensor)),
    "type(Parameter)": lambda lib: lib.ones(2).type(lib.nn.Parameter),
    "type(Tensor subclass)": lambda lib: lib.ones(2).type(type("T", (lib.Tensor,), {})),
    "type(foo=)": lambda lib: lib.ones(2).type(lib.float64, foo=1),

    "can_cast from int": lambda lib: lib.can_cast(1, lib.int8),
    "can_cast to int": lambda lib: lib.can_cast(lib.int8, 1),
    "promote_types int": lambda lib: lib.promote_types(1, lib.int8),
    "promote_types second": lambda lib: lib.promote_types(lib.int8, "x"),
    "type_as number": lambda lib: lib.ones(2).type_as(3),
    "to bad kwarg": lambda lib: lib.ones(2).to(lib.float64, copy=True, foo=1),
    "to cuda": lambda lib: lib.ones(2).to("cuda"),
    "int requires grad": lambda lib: lib.ones(2).long().requires_grad_(),
}


@pytest.mark.parametrize("fn", list(ERRORS.values()), ids=list(ERRORS))
def test_errors(fn) -> None:
    same_error(fn)


def test_can_cast_and_promote_types_tables() -> None:
    for a in DTYPES:
        for b in DTYPES:
            ea, eb, ta, tb = getattr(ember, a), getattr(ember, b), getattr(torch, a), getattr(torch, b)
            assert ember.can_cast(ea, eb) == torch.can_cast(ta, tb), (a, b)
            assert str(ember.promote_types(ea, eb)) == str(torch.promote_types(ta, tb)), (a, b)


@settings(max_examples=40, deadline=None)
@given(src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES),
       shape=st.sampled_from([(), (0,), (5,), (2, 3)]), seed=st.integers(0, 2 ** 16))
def test_to_any_pair_matches_torch(src, dst, shape, seed) -> None:
    arr = _values(src, np.random.default_rng(seed), shape)
    e = ember.tensor(arr).to(getattr(ember, dst))
    t = torch.tensor(arr).to(getattr(torch, dst))
    assert_close(e, t)
