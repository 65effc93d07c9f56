"""DLPack interchange (ember/utils/dlpack.py, Tensor.__dlpack__): memory sharing with NumPy and real torch."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import ember, same_error, to_np, torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _arr(dtype: str, shape=(2, 3)) -> np.ndarray:
    return (np.arange(int(np.prod(shape))).reshape(shape) % 2 if dtype == "bool"
            else np.arange(int(np.prod(shape))).reshape(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3)])
def test_torch_reads_ember_and_ember_reads_torch(dtype, shape) -> None:
    a = _arr(dtype, shape)
    t = torch.from_dlpack(ember.tensor(a))
    assert str(t.dtype) == str(ember.tensor(a).dtype) and tuple(t.shape) == shape
    np.testing.assert_array_equal(t.numpy(), a)
    e = ember.from_dlpack(torch.tensor(a))
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == shape
    np.testing.assert_array_equal(to_np(e), a)


def test_memory_is_shared_both_ways() -> None:
    e = ember.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(e)
    t[0, 0] = 9
    assert e[0, 0].item() == 9
    e[1, 2] = -1
    assert t[1, 2].item() == -1
    src = torch.arange(4.0)
    e2 = ember.from_dlpack(src)
    e2[1] = 5
    assert src[1].item() == 5
    a = np.zeros(3)
    ember.from_dlpack(a)[0] = 7
    assert a[0] == 7
    b = np.from_dlpack(e)
    b[0, 1] = 42
    assert e[0, 1].item() == 42


def test_strides_survive() -> None:
    e = ember.arange(6).reshape(2, 3).t()
    t = torch.from_dlpack(e)
    assert t.stride() == torch.arange(6).reshape(2, 3).t().stride()
    back = ember.from_dlpack(torch.arange(12).reshape(3, 4)[:, ::2])
    np.testing.assert_array_equal(to_np(back), np.arange(12).reshape(3, 4)[:, ::2])
    # an expanded (read-only in NumPy) tensor exports too
    x = ember.tensor([1.0, 2.0, 3.0]).expand(2, 3)
    np.testing.assert_array_equal(torch.from_dlpack(x).numpy(), np.tile([1.0, 2.0, 3.0], (2, 1)))
    np.testing.assert_array_equal(torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(x)).numpy(),
                                  np.tile([1.0, 2.0, 3.0], (2, 1)))


def test_capsule_api_round_trips_with_torch() -> None:
    t = torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(ember.tensor([1, 2, 3])))
    assert t.tolist() == [1, 2, 3] and t.dtype == torch.int64
    src = torch.tensor([True, False])
    e = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(src))
    assert e.tolist() == [True, False] and e.dtype == ember.bool
    shared = torch.arange(6.0).reshape(2, 3).t()
    e = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(shared))  # writable, as in torch
    e[2, 1] = -7.0
    assert shared[2, 1].item() == -7.0 and tuple(e.shape) == (3, 2)
    ours = ember.tensor([1.5, 2.5])
    back = ember.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(ours))
    back[0] = 0.0
    assert ours[0].item() == 0.0
    assert ember.utils.dlpack.from_dlpack is ember.from_dlpack


def test_capsule_consumed_once() -> None:
    def run(lib):
        c = lib.utils.dlpack.to_dlpack(lib.arange(3))
        lib.utils.dlpack.from_dlpack(c)
        lib.utils.dlpack.from_dlpack(c)
    same_error(run)


def test_errors_match_torch() -> None:
    same_error(lambda lib: lib.from_dlpack([1, 2]))
    same_error(lambda lib: lib.ones(2, requires_grad=True).__dlpack__())
    same_error(lambda lib: lib.from_dlpack(lib.ones(2, requires_grad=True)))
    same_error(lambda lib: torch.from_dlpack(lib.ones(2, requires_grad=True)))
    # torch's capsule API does not refuse tensors requiring grad
    for lib in (ember, torch):
        c = lib.utils.dlpack.to_dlpack(lib.ones(2, requires_grad=True))
        assert type(c).__name__ == "PyCapsule"


def test_device_and_results() -> None:
    e, t = ember.ones(2).__dlpack_device__(), torch.ones(2).__dlpack_device__()
    assert tuple(int(v) for v in e) == tuple(int(v) for v in t)
    assert repr(e[0]) == repr(t[0]).replace("torch.utils.dlpack", "ember.utils.dlpack") or int(e[0]) == 1
    y = ember.from_dlpack(np.arange(3.0))
    assert y.requires_grad is False and y.is_leaf and y.dtype == ember.float64
