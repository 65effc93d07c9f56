"""Tensor creation against torch: tensor/as_tensor/from_numpy, fills, ranges, random, *_like."""

import numpy as np
import pytest

from oracle import assert_close, compare, ember, same_error, torch

LIBS = (ember, torch)
NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]


def exact(fn):
    """``compare`` with no tolerance: a factory gives torch's dtype, shape and values to the bit."""
    return compare(fn, rtol=0, atol=0)


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
    exact(lambda lib: lib.tensor(data))


@pytest.mark.parametrize("dt", NP_DTYPES)
def test_tensor_from_numpy_arrays_and_scalars_keep_dtype(dt):
    a = (np.arange(6).reshape(2, 3) % 2).astype(dt)
    exact(lambda lib: lib.tensor(a))
    exact(lambda lib: lib.tensor(a[0, 1]))  # NumPy scalar
    exact(lambda lib: lib.tensor([a[0, 0], a[0, 1]]))  # list of NumPy scalars
    exact(lambda lib: lib.as_tensor(a))
    exact(lambda lib: lib.from_numpy(a))


@pytest.mark.parametrize("kw", [{"dtype": "float64"}, {"dtype": "int32"}, {"dtype": "bool"}, {"dtype": "float16"}])
def test_tensor_dtype_argument(kw):
    exact(lambda lib: lib.tensor([[0, 1.5], [2, -3]], dtype=getattr(lib, kw["dtype"])))


def test_tensor_copies_and_lists_of_0d_tensors():
    a = np.ones(3, np.float32)
    t = ember.tensor(a)
    a[0] = 5
    assert t[0].item() == 1
    exact(lambda lib: lib.tensor([lib.tensor(1.5), lib.tensor(2.0)]))
    exact(lambda lib: lib.tensor([lib.tensor(1), lib.tensor(2)]))
    exact(lambda lib: lib.tensor([lib.tensor(1, dtype=lib.int32), lib.tensor(2, dtype=lib.int32)]))
    exact(lambda lib: lib.tensor([lib.tensor(1.0, dtype=lib.float64), 2]))
    exact(lambda lib: lib.tensor([[lib.tensor(1, dtype=lib.float16)], [lib.tensor(2, dtype=lib.int32)]]))
    exact(lambda lib: lib.tensor([lib.tensor([1.5])]))
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
    exact(lambda lib: lib.tensor(make()))


def test_tensor_overflow_and_range_errors():
    same_error(lambda lib: lib.tensor([2**63]))
    same_error(lambda lib: lib.tensor(2**70))
    same_error(lambda lib: lib.tensor([-1, 300], dtype=lib.uint8))
    same_error(lambda lib: lib.tensor([None]))
    exact(lambda lib: lib.tensor([1.7, -2.7], dtype=lib.int64))


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("make", [lambda lib: lib.tensor([1e308, -1e308, 1.0], dtype=lib.float32),
                                  lambda lib: lib.tensor(np.array([1e6, 2.0]), dtype=lib.float16),
                                  lambda lib: lib.as_tensor([[1e300], [3.0]], dtype=lib.float32)])
def test_tensor_float_overflow_becomes_inf_silently(make):
    exact(make)


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
        exact(lambda lib: lib.tensor([1.5]))
        exact(lambda lib: lib.tensor(2.5))
        exact(lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]))
        exact(lambda lib: lib.zeros(2))
        exact(lambda lib: lib.arange(0.0, 1.0, 0.25))
        exact(lambda lib: lib.full((2,), 1.5))
        exact(lambda lib: lib.tensor(np.float32(1.5)))
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
    exact(lambda lib: lib.as_tensor([1, 2.5]))
    exact(lambda lib: lib.asarray([[1, 2], [3, 4]], dtype=lib.float64))
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
    exact(lambda lib: lib.full((2, 3), fill))
    exact(lambda lib: lib.full((2,), fill, dtype=lib.float64))
    exact(lambda lib: lib.full([], fill))


def test_full_with_tensor_fill_and_size_errors():
    exact(lambda lib: lib.full((2,), lib.tensor(3)))
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
    exact(lambda lib: lib.eye(*args))
    exact(lambda lib: lib.eye(*args, dtype=lib.int64))


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
    exact(lambda lib: lib.arange(5, dtype=lib.float64))
    exact(lambda lib: lib.arange(0, 3, 0.5, dtype=lib.float64))
    exact(lambda lib: lib.arange(lib.tensor(4)))
    for args in [(0.0, 5.5, 1.5), (0.5, 5.5, 1.5), (-2.5, 3.7, 1.2)]:  # integer dtypes truncate float bounds
        exact(lambda lib: lib.arange(*args, dtype=lib.int64))
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
    exact(lambda lib: lib.zeros_like(src[lib]))
    exact(lambda lib: lib.ones_like(src[lib], dtype=lib.float64))
    exact(lambda lib: lib.full_like(src[lib], 7))
    exact(lambda lib: lib.full_like(src[lib], 2.5, dtype=lib.float16))
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
    exact(lambda lib: lib.Tensor(2, 3).zero_())
    exact(lambda lib: lib.Tensor([1, 2]))
    exact(lambda lib: lib.Tensor([[1.5, 2], [3, 4]]))
    exact(lambda lib: lib.Tensor())
    exact(lambda lib: lib.FloatTensor([1, 2]))
    exact(lambda lib: lib.LongTensor([1, 2]))
    exact(lambda lib: lib.DoubleTensor([1, 2]))
    exact(lambda lib: lib.BoolTensor([1, 0]))
    exact(lambda lib: lib.IntTensor(2).zero_())
    for lib in LIBS:
        assert isinstance(lib.FloatTensor([1.0]), lib.Tensor)
        assert isinstance(lib.ones(2), lib.FloatTensor) and not isinstance(lib.ones(2), lib.LongTensor)
        assert isinstance(lib.arange(2), lib.LongTensor)
        assert lib.ones(2).type() == "torch.FloatTensor" and lib.arange(2).type() == "torch.LongTensor"
    exact(lambda lib: lib.ones(2).type("torch.LongTensor"))
    exact(lambda lib: lib.ones(2).type(lib.float64))
    exact(lambda lib: lib.Tensor(lib.Size([2, 1])).zero_())


@pytest.mark.parametrize("dtype", ["complex64", "float64", "int32", "float32"])
def test_legacy_constructor_of_a_tensor_is_an_alias(dtype):
    """torch.Tensor(t) keeps t's dtype (a complex t keeps its imaginary part) and memory, as an AliasBackward0
    view when t requires grad; a typed constructor takes only its own dtype."""
    for lib in LIBS:
        x = lib.ones(3, dtype=getattr(lib, dtype))
        y = lib.Tensor(x)
        assert y.dtype == x.dtype and y is not x and y.data_ptr() == x.data_ptr()
        if x.is_floating_point() or x.is_complex():
            z = lib.Tensor(x.requires_grad_())
            assert z.grad_fn.name().rsplit("::", 1)[-1] == "AliasBackward0" and z._base is x
    same_error(lambda lib: lib.FloatTensor(lib.ones(2, dtype=lib.complex64)))
    same_error(lambda lib: lib.LongTensor(lib.ones(2)))
    same_error(lambda lib: lib.ones(2).new(lib.ones(2, dtype=lib.complex64)))


# ----------------------------------------------------------------------------- a table of small cases
a = np.arange(12.0).reshape(3, 4)

CASES = {
    "tensor_of_rg": lambda L: (
        lambda x: (L.tensor(x).requires_grad, L.tensor(x).is_leaf, L.tensor(x).data_ptr() != x.data_ptr())
    )(L.ones(2, requires_grad=True)),
    "tensor_of_t_dtype": lambda L: L.tensor(L.ones(2), dtype=L.int32).tolist(),
    "as_tensor_rg": lambda L: (lambda x: (L.as_tensor(x) is x, L.as_tensor(x, dtype=L.float64).grad_fn is not None))(
        L.ones(2, requires_grad=True)
    ),
    "asarray_t": lambda L: (lambda x: L.asarray(x).data_ptr() == x.data_ptr())(L.ones(2)),
    "asarray_np": lambda L: (lambda n: L.asarray(n).data_ptr() == n.ctypes.data)(a),
    "asarray_copy_false": lambda L: L.asarray(a, dtype=L.float32, copy=False),
    "asarray_list": lambda L: L.asarray([1, 2.5]).dtype,
    "asarray_rg": lambda L: L.asarray([1.0, 2.0], requires_grad=True).requires_grad,
    "asarray_scalar": lambda L: L.asarray(3).dtype,
    "asarray_np_scalar": lambda L: L.asarray(np.float64(3)).dtype,
    "from_np_strided": lambda L: (lambda t: (t.stride(), t.is_contiguous(), t.tolist()))(L.from_numpy(a[:, ::2])),
    "from_np_neg": lambda L: L.from_numpy(a[::-1]),
    "from_np_0d": lambda L: L.from_numpy(np.array(2.5)),
    "from_np_be": lambda L: L.from_numpy(np.array([1, 2], dtype=">i4")).tolist(),
    "tensor_np_neg": lambda L: L.tensor(a[::-1]).tolist(),
    "tensor_np_be": lambda L: L.tensor(np.array([1, 2], dtype=">i4")).dtype,
    "linspace_t": lambda L: L.linspace(L.tensor(0.0), L.tensor(1.0), 3).tolist(),
    "linspace_int": lambda L: L.linspace(0, 10, 4, dtype=L.int64).tolist(),
    "linspace1": lambda L: L.linspace(3, 7, 1).tolist(),
    "logspace_int": lambda L: L.logspace(0, 3, 4, dtype=L.int64).tolist(),
    "eye_neg": lambda L: L.eye(-1),
    "eye_m_neg": lambda L: L.eye(2, -1),
    "eye_bool": lambda L: L.eye(2, dtype=L.bool).tolist(),
    "scalar_tensor": lambda L: (
        L.scalar_tensor(3).dtype,
        L.scalar_tensor(True).dtype,
        L.scalar_tensor(2, dtype=L.int64).dtype,
    ),
    "full_bool": lambda L: L.full((2,), True).dtype,
    "full_list_size": lambda L: L.full([2, 1], 3).shape,
    "full_int_size": lambda L: L.full(3, 1.0),
    "zeros_size_obj": lambda L: L.zeros(L.Size([2, 3])).shape,
    "zeros_np_int": lambda L: L.zeros(np.int64(2)).shape,
    "zeros_tuple_tensor": lambda L: L.zeros((L.tensor(2), 3)).shape,
    "ones_bool_size": lambda L: L.ones(True),
    "arange_len": lambda L: [len(L.arange(0, 1, s)) for s in (0.1, 0.01, 0.3, 1 / 7, 0.05)],
    "arange_neg_float": lambda L: L.arange(1.0, -1.0, -0.3).tolist(),
    "arange_f64": lambda L: L.arange(0, 1, 0.1, dtype=L.float64).tolist(),
    "arange_big": lambda L: L.arange(0, 2**40, 2**38).tolist(),
    "arange_half": lambda L: L.arange(0, 4, 0.5, dtype=L.float16).tolist(),
    "arange_f_i": lambda L: L.arange(5.0).dtype,
    "arange_np_float": lambda L: L.arange(np.float64(3)).dtype,
    "arange_t_float": lambda L: L.arange(L.tensor(3.0)).dtype,
    "range": lambda L: L.range(0, 3).tolist(),
    "range_dt": lambda L: (L.range(0, 3).dtype, L.range(0, 1, 0.25).tolist()),
    "range_int": lambda L: L.range(1, 4, dtype=L.int64).tolist(),
    "randint_size_kw": lambda L: L.randint(3, 5, size=(2,)).shape,
    "randint_size_kw2": lambda L: L.randint(5, size=(2,)).shape,
    "randint_high_kw": lambda L: L.randint(low=0, high=5, size=(2,)).shape,
    "randint_float": lambda L: L.randint(0.5, 5.5, (100,)).dtype,
    "randperm_kwarg": lambda L: L.randperm(n=3).shape,
    "rand_tuple_list": lambda L: L.rand([2, 3]).shape,
    "rand_gen_pos": lambda L: L.rand(2, generator=L.Generator()).shape,
    "gen_seed_type": lambda L: type(L.Generator().manual_seed(3)).__name__,
    "gen_device": lambda L: str(L.Generator().device),
    "get_rng_state": lambda L: (L.get_rng_state().dtype, L.get_rng_state().dim()),
    "manual_seed_neg": lambda L: L.manual_seed(-1).initial_seed(),
    "manual_seed_big": lambda L: L.manual_seed(2**64),
    "empty_like_stride": lambda L: L.empty_like(L.ones(2, 3).t()).stride(),
    "zeros_like_stride": lambda L: L.zeros_like(L.ones(2, 3).t()).stride(),
    "zeros_like_contig": lambda L: L.zeros_like(L.ones(2, 3).t(), memory_format=L.contiguous_format).stride(),
    "ones_like_0d": lambda L: L.ones_like(L.tensor(2)).tolist(),
    "full_like_float_into_int": lambda L: L.full_like(L.ones(2, dtype=L.int64), 2.7).tolist(),
    "new_tensor": lambda L: (lambda x: (x.new_tensor([1, 2]).dtype, x.new_tensor([1, 2], dtype=L.int64).dtype))(
        L.ones(2, dtype=L.float64)
    ),
    "new_tensor_t": lambda L: L.ones(2).new_tensor(L.ones(2, requires_grad=True)).requires_grad,
    "new_zeros_tuple": lambda L: L.ones(2).new_zeros((2, 3)).shape,
    "new_ones": lambda L: L.ones(2, dtype=L.int32).new_ones(3).dtype,
    "new_empty": lambda L: L.ones(2).new_empty(0, 2).shape,
    "new_full": lambda L: L.ones(2, dtype=L.int32).new_full((2,), 3.5).tolist(),
    "new_full_rg": lambda L: L.ones(2).new_full((2,), 3.5, requires_grad=True).requires_grad,
    "tensor_pinned": lambda L: L.tensor([1.0], pin_memory=False).tolist(),
    "tensor_bad_kw": lambda L: L.tensor([1.0], foo=1),
    "tensor_set": lambda L: L.tensor({1, 2}),
    "tensor_dict": lambda L: L.tensor({1: 2}),
    "tensor_gen": lambda L: L.tensor(x for x in range(3)),
    "tensor_range": lambda L: L.tensor(range(3)).tolist(),
    "tensor_nested_empty": lambda L: L.tensor([[], []]).shape,
    "tensor_nested_empty_dt": lambda L: L.tensor([[[]]]).dtype,
    "tensor_bytes": lambda L: L.tensor(b"ab"),
    "tensor_f16_from_py": lambda L: L.tensor([65536.0], dtype=L.float16).tolist(),
    "tensor_bool_from_float": lambda L: L.tensor([0.5, 0.0], dtype=L.bool).tolist(),
    "tensor_inf_int": lambda L: L.tensor([float("inf")], dtype=L.int64),
    "tensor_nan_int": lambda L: L.tensor(float("nan"), dtype=L.int32),
    "tensor_np_f_int": lambda L: L.tensor(np.array([1.7, -1.7]), dtype=L.int64).tolist(),
}


def _outcome(f, lib):
    try:
        return repr(f(lib)).replace("torch", "LIB").replace("ember", "LIB")
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return f"{type(e).__name__}: {str(e).split(chr(10))[0].split('. ')[0]}"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CASES))
def test_cases_same_as_torch(name):
    assert _outcome(CASES[name], ember) == _outcome(CASES[name], torch)


def test_fork_rng_restores_the_default_stream():
    for lib in LIBS:
        lib.manual_seed(0)
        with lib.random.fork_rng():
            lib.rand(3)
        a = lib.rand(3)
        lib.manual_seed(0)
        b = lib.rand(3)
        assert a.tolist() == b.tolist()
        lib.random.manual_seed(5)
        assert lib.random.initial_seed() == 5


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "make",
    [
        lambda lib, o: lib.zeros(3, out=o),
        lambda lib, o: lib.ones(2, 2, out=o),
        lambda lib, o: lib.full((2,), 7, out=o),
        lambda lib, o: lib.arange(5, out=o),
        lambda lib, o: lib.linspace(0, 4, 5, out=o),
        lambda lib, o: lib.zeros(3, dtype=lib.float64, out=o),
        lambda lib, o: lib.randint(0, 1, (3,), out=o),
        lambda lib, o: lib.empty(0, out=o).shape,
    ],
)
@pytest.mark.parametrize("dt", ["float32", "int32"])
def test_out_argument(make, dt):
    res = []
    for lib in LIBS:
        o = lib.ones(2, dtype=getattr(lib, dt))
        try:
            r = make(lib, o)
            res.append(
                repr(r if not isinstance(r, lib.Tensor) else (r is o, o)).replace("torch", "X").replace("ember", "X")
            )
        except Exception as e:  # noqa: BLE001
            res.append(type(e).__name__ + str(e).split(".")[0])
    assert res[0] == res[1]


def test_size_argument_bool_positions():
    same_error(lambda lib: lib.zeros(True, 2), match_words=[])  # TypeError; torch words it oddly
    same_error(lambda lib: lib.ones(True))
