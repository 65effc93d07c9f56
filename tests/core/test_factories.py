"""Tensor creation against torch: tensor/as_tensor/from_numpy, fills, ranges, random, *_like."""

import numpy as np
import pytest

from oracle import assert_close, ember, same_error, torch

LIBS = (ember, torch)
NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]


def both(fn):
    """fn(lib) for ember and torch; asserts equal dtype, shape and values; returns the pair."""
    e, t = fn(ember), fn(torch)
    assert_close(e, t, rtol=0, atol=0)
    return e, t


# ----------------------------------------------------------------------------- tensor()
@pytest.mark.parametrize(
    "data",
    [
        1,
        1.5,
        True,
        -3,
        [],
        [[]],
        [1, 2, 3],
        [1.0, 2],
        [True, False],
        [True, 2],
        [True, 2.5],
        [1, 2.5],
        [[1, 2], [3, 4]],
        [[[1.5]], [[2.5]]],
        (1, 2),
        [(1, 2), (3, 4)],
        [[], []],
        2**40,
        [-0.0, float("inf")],
    ],
)
def test_tensor_python_data(data):
    both(lambda lib: lib.tensor(data))


@pytest.mark.parametrize("dt", NP_DTYPES)
def test_tensor_from_numpy_arrays_and_scalars_keep_dtype(dt):
    a = (np.arange(6).reshape(2, 3) % 2).astype(dt)
    both(lambda lib: lib.tensor(a))
    both(lambda lib: lib.tensor(a[0, 1]))  # NumPy scalar
    both(lambda lib: lib.tensor([a[0, 0], a[0, 1]]))  # list of NumPy scalars
    both(lambda lib: lib.as_tensor(a))
    both(lambda lib: lib.from_numpy(a))


@pytest.mark.parametrize("kw", [{"dtype": "float64"}, {"dtype": "int32"}, {"dtype": "bool"}, {"dtype": "float16"}])
def test_tensor_dtype_argument(kw):
    both(lambda lib: lib.tensor([[0, 1.5], [2, -3]], dtype=getattr(lib, kw["dtype"])))


def test_tensor_copies_and_lists_of_0d_tensors():
    a = np.ones(3, np.float32)
    t = ember.tensor(a)
    a[0] = 5
    assert t[0].item() == 1
    both(lambda lib: lib.tensor([lib.tensor(1.5), lib.tensor(2.0)]))
    both(lambda lib: lib.tensor([lib.tensor(1), lib.tensor(2)]))
    both(lambda lib: lib.tensor([lib.tensor(1, dtype=lib.int32), lib.tensor(2, dtype=lib.int32)]))
    both(lambda lib: lib.tensor([lib.tensor(1.0, dtype=lib.float64), 2]))
    both(lambda lib: lib.tensor([[lib.tensor(1, dtype=lib.float16)], [lib.tensor(2, dtype=lib.int32)]]))
    both(lambda lib: lib.tensor([lib.tensor([1.5])]))
    same_error(lambda lib: lib.tensor([lib.tensor([1, 2]), lib.tensor([3, 4])]))
    same_error(lambda lib: lib.tensor([lib.tensor([1.0, 2.0])]))


@pytest.mark.parametrize(
    "make",
    [
        lambda: [np.float32(1), 2.5],
        lambda: [np.int32(1), 2.5],
        lambda: [np.int32(1), 2],
        lambda: [1, np.float16(2)],
        lambda: [True, np.int8(2)],
        lambda: [[np.int16(1)], [2]],
        lambda: [np.bool_(True), False],
        lambda: [np.array([1, 2], np.int32), np.array([3, 4], np.int32)],
        lambda: [np.array([1, 2], np.int32), [3.5, 4]],
        lambda: [np.float32(1), np.float64(2.5)],
        lambda: [-(2**63)],
        lambda: np.array(2.5, np.float16),
    ],
)
def test_tensor_mixed_leaves_promote_like_torch(make):
    both(lambda lib: lib.tensor(make()))


def test_tensor_overflow_and_range_errors():
    same_error(lambda lib: lib.tensor([2**63]))
    same_error(lambda lib: lib.tensor(2**70))
    same_error(lambda lib: lib.tensor([-1, 300], dtype=lib.uint8))
    same_error(lambda lib: lib.tensor([None]))
    both(lambda lib: lib.tensor([1.7, -2.7], dtype=lib.int64))


def test_tensor_requires_grad_argument():
    for lib in LIBS:
        t = lib.tensor([1.0, 2.0], requires_grad=True)
        assert t.requires_grad and t.is_leaf and t.grad_fn is None
    same_error(lambda lib: lib.tensor([1, 2], requires_grad=True))


def test_tensor_bad_data_errors():
    same_error(lambda lib: lib.tensor([[1, 2], [3]]))
    same_error(lambda lib: lib.tensor([[1, 2], [3, 4, 5]]))
    same_error(lambda lib: lib.tensor([[[1], [2]], [[3], [4, 5]]]))
    same_error(lambda lib: lib.tensor("abc"))
    same_error(lambda lib: lib.tensor(np.array(["a"])))


def test_default_dtype_changes_float_inference():
    try:
        for lib in LIBS:
            lib.set_default_dtype(lib.float64)
        both(lambda lib: lib.tensor([1.5]))
        both(lambda lib: lib.tensor(2.5))
        both(lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]))
        both(lambda lib: lib.zeros(2))
        both(lambda lib: lib.arange(0.0, 1.0, 0.25))
        both(lambda lib: lib.full((2,), 1.5))
        both(lambda lib: lib.tensor(np.float32(1.5)))
    finally:
        for lib in LIBS:
            lib.set_default_dtype(lib.float32)
    assert ember.get_default_dtype() is ember.float32


# ----------------------------------------------------------------------------- sharing memory
def test_from_numpy_shares_memory_both_ways():
    a = np.zeros((2, 3), np.float64)
    t = ember.from_numpy(a)
    assert t.dtype is ember.float64
    a[0, 0] = 7
    assert t[0, 0].item() == 7
    t[1, 2] = 3
    assert a[1, 2] == 3
    t.add_(1)
    assert a[0, 0] == 8
    n = t.numpy()
    n[0, 1] = -1
    assert a[0, 1] == -1


def test_from_numpy_errors():
    same_error(lambda lib: lib.from_numpy([1, 2]))
    same_error(lambda lib: lib.from_numpy(np.array(["x"])))


def test_as_tensor_shares_when_it_can():
    a = np.ones(3, np.float32)
    t = ember.as_tensor(a)
    a[0] = 4
    assert t[0].item() == 4
    t2 = ember.as_tensor(a, dtype=ember.float64)
    a[1] = 9
    assert t2[1].item() == 1 and t2.dtype is ember.float64
    x = ember.ones(2)
    assert ember.as_tensor(x) is x
    both(lambda lib: lib.as_tensor([1, 2.5]))
    both(lambda lib: lib.asarray([[1, 2], [3, 4]], dtype=lib.float64))
    y = ember.asarray(a, copy=True)
    a[2] = 11
    assert y[2].item() == 1


# ----------------------------------------------------------------------------- fills
@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("size", [((),), (0,), (3,), (2, 3), ((2, 3),), ([4],), (2, 0, 1)])
def test_fill_factories_shapes_and_dtypes(name, size):
    e, t = getattr(ember, name)(*size), getattr(torch, name)(*size)
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    if name != "empty":
        assert_close(e, t)
    for dn in ("int32", "bool", "float64"):
        e, t = (
            getattr(ember, name)(*size, dtype=getattr(ember, dn)),
            getattr(torch, name)(*size, dtype=getattr(torch, dn)),
        )
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)


@pytest.mark.parametrize("fill", [1, 2.5, True, -7, np.float64(1.5), np.int32(3), float("nan")])
def test_full_infers_dtype_from_fill_value(fill):
    both(lambda lib: lib.full((2, 3), fill))
    both(lambda lib: lib.full((2,), fill, dtype=lib.float64))
    both(lambda lib: lib.full([], fill))


def test_full_with_tensor_fill_and_size_errors():
    both(lambda lib: lib.full((2,), lib.tensor(3)))
    for name in ("zeros", "ones", "empty", "rand", "randn"):
        same_error(lambda lib: getattr(lib, name)(-1, 2))
        same_error(lambda lib: getattr(lib, name)(2.5))
        same_error(lambda lib: getattr(lib, name)((2, 2.5)))
        same_error(lambda lib: getattr(lib, name)(None))
    same_error(lambda lib: lib.zeros())
    same_error(lambda lib: lib.full((-1,), 2.0))
    same_error(lambda lib: lib.randperm(-1))


@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (0,), (1, 0)])
def test_eye(args):
    both(lambda lib: lib.eye(*args))
    both(lambda lib: lib.eye(*args, dtype=lib.int64))


# ----------------------------------------------------------------------------- ranges
@pytest.mark.parametrize(
    "args",
    [
        (5,),
        (0,),
        (2, 7),
        (7, 2, -1),
        (10, 0, -3),
        (0, 10, 3),
        (1.0, 2.0, 0.1),
        (0, 1, 0.1),
        (0.5,),
        (-2.5, 2.5),
        (0, 1, 1 / 3),
        (1, -1, -0.25),
        (np.int64(3),),
        (0, 5, 0.5),
        (0.1, 0.7, 0.2),
        (-1, 1, 0.2),
        (0, 10),
    ],
)
def test_arange_matches_torch(args):
    e, t = ember.arange(*args), torch.arange(*args)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    assert_close(e, t, rtol=1e-6, atol=1e-6)


def test_arange_dtypes_and_errors():
    both(lambda lib: lib.arange(5, dtype=lib.float64))
    both(lambda lib: lib.arange(0, 3, 0.5, dtype=lib.float64))
    both(lambda lib: lib.arange(lib.tensor(4)))
    for args in [(0.0, 5.5, 1.5), (0.5, 5.5, 1.5), (-2.5, 3.7, 1.2)]:  # integer dtypes truncate float bounds
        both(lambda lib: lib.arange(*args, dtype=lib.int64))
    same_error(lambda lib: lib.arange(0.0, 1.0, 0.3, dtype=lib.int64))
    same_error(lambda lib: lib.arange(0, 5, 0))
    same_error(lambda lib: lib.arange(5, 0, 1))
    same_error(lambda lib: lib.arange(0, 5, -1))


@pytest.mark.parametrize("args", [(0, 1, 5), (-2, 3, 1), (3, -1, 7), (0, 1, 0), (1, 10, 10), (0, 1, 2)])
def test_linspace_logspace(args):
    for name in ("linspace", "logspace"):
        e, t = getattr(ember, name)(*args), getattr(torch, name)(*args)
        assert_close(e, t, rtol=1e-5, atol=1e-6)
    e, t = ember.linspace(*args, dtype=ember.float64), torch.linspace(*args, dtype=torch.float64)
    assert_close(e, t)
    assert_close(ember.logspace(*args, base=2), torch.logspace(*args, base=2), rtol=1e-5)
    same_error(lambda lib: lib.linspace(0, 1, -1))


# ----------------------------------------------------------------------------- random
@pytest.mark.parametrize("name", ["rand", "randn"])
def test_rand_randn_shape_dtype_determinism(name):
    f = getattr(ember, name)
    for size in [((),), (3,), (2, 3), ((4, 1),)]:
        e, t = f(*size), getattr(torch, name)(*size)
        assert tuple(e.shape) == tuple(t.shape) and e.dtype is ember.float32
    assert f(2, dtype=ember.float64).dtype is ember.float64
    ember.manual_seed(3)
    a = f(50)
    ember.manual_seed(3)
    b = f(50)
    assert np.array_equal(a.numpy(), b.numpy())
    g1, g2 = ember.Generator().manual_seed(5), ember.Generator().manual_seed(5)
    assert np.array_equal(f(10, generator=g1).numpy(), f(10, generator=g2).numpy())
    assert not np.array_equal(f(10, generator=g1).numpy(), f(10, generator=g1).numpy())
    same_error(lambda lib: getattr(lib, name)(2, dtype=lib.int64))


def test_rand_ranges_and_moments():
    ember.manual_seed(0)
    u = ember.rand(20000).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    n = ember.randn(20000).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05


def test_randint():
    for args in [(10, (5,)), (3, 7, (2, 3)), (-5, 5, (100,))]:
        e, t = ember.randint(*args), torch.randint(*args)
        assert e.dtype is ember.int64 and tuple(e.shape) == tuple(t.shape)
        lo, hi = (0, args[0]) if len(args) == 2 else args[:2]
        assert e.numpy().min() >= lo and e.numpy().max() < hi
    assert ember.randint(0, 3, (4,), dtype=ember.float32).dtype is ember.float32
    g1, g2 = ember.Generator().manual_seed(1), ember.Generator().manual_seed(1)
    assert ember.randint(100, (8,), generator=g1).tolist() == ember.randint(100, (8,), generator=g2).tolist()
    same_error(lambda lib: lib.randint(5, 5, (2,)))
    same_error(lambda lib: lib.randint(5))
    for lo, hi, dn in [
        (0, 300, "uint8"),
        (-1, 5, "uint8"),
        (0, 300, "bool"),
        (-1, 5, "bool"),
        (0, 3, "bool"),
        (0, 300, "int8"),
    ]:
        same_error(lambda lib: lib.randint(lo, hi, (2,), dtype=getattr(lib, dn)))


def test_randperm():
    for n in (0, 1, 10):
        e, t = ember.randperm(n), torch.randperm(n)
        assert e.dtype is ember.int64 and tuple(e.shape) == tuple(t.shape)
        assert sorted(e.tolist()) == list(range(n))
    assert ember.randperm(4, dtype=ember.float32).dtype is ember.float32
    g = ember.Generator().manual_seed(9)
    a = ember.randperm(20, generator=g).tolist()
    assert a == ember.randperm(20, generator=ember.Generator().manual_seed(9)).tolist()


def test_rng_state_roundtrip():
    s = ember.get_rng_state()
    a = ember.rand(5)
    ember.set_rng_state(s)
    assert np.array_equal(a.numpy(), ember.rand(5).numpy())
    assert ember.manual_seed(11).initial_seed() == 11 == ember.initial_seed()


# ----------------------------------------------------------------------------- *_like and requires_grad=
@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "bool"])
def test_like_factories(dt):
    src = {lib: lib.zeros(2, 3, dtype=getattr(lib, dt)).t() for lib in LIBS}
    for name in ("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"):
        res = []
        for lib in LIBS:
            try:
                r = getattr(lib, name)(src[lib])
                res.append((tuple(r.shape), str(r.dtype)))
            except Exception as e:  # noqa: BLE001
                res.append(type(e).__name__)
        assert res[0] == res[1], (name, res)
    both(lambda lib: lib.zeros_like(src[lib]))
    both(lambda lib: lib.ones_like(src[lib], dtype=lib.float64))
    both(lambda lib: lib.full_like(src[lib], 7))
    both(lambda lib: lib.full_like(src[lib], 2.5, dtype=lib.float16))
    if dt == "bool":
        same_error(lambda lib: lib.randint_like(src[lib], 3, 9))
        return
    e, t = ember.randint_like(src[ember], 3, 9), torch.randint_like(src[torch], 3, 9)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    assert 3 <= e.numpy().min() and e.numpy().max() < 9


def test_requires_grad_argument_everywhere():
    for lib in LIBS:
        for t in (
            lib.zeros(2, requires_grad=True),
            lib.ones(2, requires_grad=True),
            lib.empty(2, requires_grad=True),
            lib.full((2,), 1.0, requires_grad=True),
            lib.eye(2, requires_grad=True),
            lib.arange(0.0, 2.0, requires_grad=True),
            lib.linspace(0, 1, 3, requires_grad=True),
            lib.rand(2, requires_grad=True),
            lib.randn(2, requires_grad=True),
            lib.zeros_like(lib.ones(2), requires_grad=True),
            lib.as_tensor([1.0]).requires_grad_(),
        ):
            assert t.requires_grad and t.is_leaf
    same_error(lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True))
    same_error(lambda lib: lib.arange(3, requires_grad=True))


# ----------------------------------------------------------------------------- legacy constructors
def test_legacy_tensor_constructor():
    both(lambda lib: lib.Tensor(2, 3).zero_())
    both(lambda lib: lib.Tensor([1, 2]))
    both(lambda lib: lib.Tensor([[1.5, 2], [3, 4]]))
    both(lambda lib: lib.Tensor())
    both(lambda lib: lib.FloatTensor([1, 2]))
    both(lambda lib: lib.LongTensor([1, 2]))
    both(lambda lib: lib.DoubleTensor([1, 2]))
    both(lambda lib: lib.BoolTensor([1, 0]))
    both(lambda lib: lib.IntTensor(2).zero_())
    for lib in LIBS:
        assert isinstance(lib.FloatTensor([1.0]), lib.Tensor)
        assert isinstance(lib.ones(2), lib.FloatTensor) and not isinstance(lib.ones(2), lib.LongTensor)
        assert isinstance(lib.arange(2), lib.LongTensor)
        assert lib.ones(2).type() == "torch.FloatTensor" and lib.arange(2).type() == "torch.LongTensor"
    both(lambda lib: lib.ones(2).type("torch.LongTensor"))
    both(lambda lib: lib.ones(2).type(lib.float64))
    both(lambda lib: lib.Tensor(lib.Size([2, 1])).zero_())
