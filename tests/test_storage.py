"""Tensor.untyped_storage() / Tensor.storage(): the memory behind a tensor and its views, as torch presents it."""
from __future__ import annotations

import pickle

import pytest

from oracle import ember, torch, same_outcome


def _fresh(lib):
    """Reset torch's once-per-process TypedStorage warning in both libraries, then a (2, 3) float32 tensor."""
    torch.storage._reset_warn_typed_storage_removal()
    ember.storage._reset_warn_typed_storage_removal()
    return lib.arange(6.0).reshape(2, 3)


CALLS = """
x[:, 1:].untyped_storage().size(), x[:, 1:].untyped_storage().nbytes(), len(x.untyped_storage())
x.untyped_storage().element_size(), str(x.untyped_storage().device), type(x.untyped_storage()).__name__
x.untyped_storage().tolist()
x.untyped_storage()[4], x.untyped_storage()[-1]
x.untyped_storage()[100]
x[:, 1:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
x[:, 1:].untyped_storage().data_ptr() == x.data_ptr(), x.clone().untyped_storage().data_ptr() == x.data_ptr()
repr(x.untyped_storage())
x.storage().size(), len(x[1:].storage()), str(x.storage().dtype), x.storage().tolist()
x.storage()[4], x.storage()[-1], x.storage().element_size(), x.storage().nbytes()
x.storage()[10]
x.storage()[1:3]
repr(x.storage())
x.storage().type(), type(x.storage().untyped()).__name__, type(x.storage()).__name__
(x.storage().__setitem__(0, 9.0), x[0, 0].item())
(x.untyped_storage().fill_(0), x.tolist())[1]
(x.storage().copy_(torch.ones(2, 3).storage()), x.tolist())[1]
x.storage().float().tolist(), x.storage().long().tolist()
x.untyped_storage().clone().data_ptr() == x.data_ptr()
torch.is_storage(x.storage()), torch.is_storage(x.untyped_storage()), torch.is_storage(x)
x.storage().is_shared(), x.untyped_storage().is_pinned()
pickle.loads(pickle.dumps(x.storage())).tolist()
torch.UntypedStorage(5).size(), torch.TypedStorage(3, dtype=torch.float64).size()
torch.ones(2, dtype=torch.int64).storage().tolist(), torch.ones(2, dtype=torch.bool).storage().tolist()
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_storage_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"torch": lib, "x": _fresh(lib), "pickle": pickle}))


def test_writes_through_storage_reach_every_view() -> None:
    x = ember.zeros(4)
    v = x[1:3]
    x.untyped_storage()[4:8].fill_(0)  # no-op on zeros
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        ember.storage._reset_warn_typed_storage_removal()
        s = v.storage()
    s[2] = 7.0
    assert x.tolist() == [0.0, 0.0, 7.0, 0.0] and v.tolist() == [0.0, 7.0]
