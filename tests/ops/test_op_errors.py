"""Bad inputs raise what torch raises: same exception type and the gist of torch's message."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import same_error


def T(lib, *shape, dtype=None, rg=False):
    """A tensor of ``shape`` (float32 unless ``dtype``), the same values in both libraries."""
    arr = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = lib.tensor(arr) if dtype is None else lib.tensor(arr).to(getattr(lib, dtype))
    return t.requires_grad_() if rg else t


ERRORS = {
    # broadcasting
    "add broadcast": lambda lib: T(lib, 2, 3) + T(lib, 2, 4),
    "sub broadcast": lambda lib: T(lib, 3) - T(lib, 4),
    "mul broadcast grad": lambda lib: T(lib, 2, 3, rg=True) * T(lib, 5, 1, 4),
    "div broadcast": lambda lib: T(lib, 2, 3) / T(lib, 2, 4),
    "pow broadcast": lambda lib: T(lib, 2, 3) ** T(lib, 2, 4),
    "where broadcast": lambda lib: lib.where(T(lib, 2, 3) > 0, T(lib, 2, 3), T(lib, 4)),
    "eq broadcast": lambda lib: T(lib, 2, 3) == T(lib, 4),
    # matmul / mm
    "matmul 2d shapes": lambda lib: T(lib, 2, 3) @ T(lib, 4, 5),
    "matmul 1d sizes": lambda lib: T(lib, 3) @ T(lib, 4),
    "matmul 1d@2d": lambda lib: T(lib, 3) @ T(lib, 4, 5),
    "matmul 2d@1d": lambda lib: T(lib, 2, 3) @ T(lib, 4),
    "matmul 0-d": lambda lib: lib.matmul(T(lib), T(lib, 3)),
    "matmul batch": lambda lib: T(lib, 2, 3, 4) @ T(lib, 3, 4, 5),
    "matmul batched inner": lambda lib: T(lib, 2, 3, 4) @ T(lib, 2, 5, 5),
    "matmul dtypes": lambda lib: T(lib, 2, 3) @ T(lib, 3, 2, dtype="float64"),
    "mm 3d": lambda lib: lib.mm(T(lib, 2, 3, 4), T(lib, 4, 5)),
    "mm 1d other": lambda lib: lib.mm(T(lib, 2, 3), T(lib, 3)),
    "mm shapes": lambda lib: lib.mm(T(lib, 2, 3), T(lib, 4, 5)),
    "bmm batch": lambda lib: lib.bmm(T(lib, 2, 3, 4), T(lib, 3, 4, 5)),
    # dims out of range
    "sum dim": lambda lib: T(lib, 2, 3).sum(2),
    "sum dim negative": lambda lib: T(lib, 2, 3).sum(-3),
    "sum repeated dim": lambda lib: T(lib, 2, 3).sum((1, -1)),
    "mean dim": lambda lib: T(lib, 2, 3).mean(5),
    "transpose dim": lambda lib: T(lib, 2, 3).transpose(0, 2),
    "permute length": lambda lib: T(lib, 2, 3).permute(0, 1, 2),
    "permute repeated": lambda lib: T(lib, 2, 3).permute(1, 1),
    "squeeze dim": lambda lib: T(lib, 2, 3).squeeze(3),
    "unsqueeze dim": lambda lib: T(lib, 2, 3).unsqueeze(4),
    "flatten dim": lambda lib: T(lib, 2, 3).flatten(0, 4),
    "flatten order": lambda lib: T(lib, 2, 3, 4).flatten(2, 1),
    "select dim": lambda lib: T(lib, 2, 3).select(2, 0),
    "select index": lambda lib: T(lib, 2, 3).select(1, 3),
    "narrow dim": lambda lib: T(lib, 2, 3).narrow(2, 0, 1),
    "narrow length": lambda lib: T(lib, 2, 3).narrow(1, 2, 2),
    "unbind dim": lambda lib: T(lib, 2, 3).unbind(2),
    "split dim": lambda lib: T(lib, 2, 3).split(1, 2),
    "split sizes": lambda lib: T(lib, 2, 3).split([1, 1], 1),
    "cat dim": lambda lib: lib.cat([T(lib, 2, 3), T(lib, 2, 3)], 2),
    "stack dim": lambda lib: lib.stack([T(lib, 2, 3), T(lib, 2, 3)], 3),
    # views and reshapes
    "view non-contiguous": lambda lib: T(lib, 2, 3).t().view(6),
    "view wrong size": lambda lib: T(lib, 2, 3).view(4),
    "reshape wrong size": lambda lib: T(lib, 2, 3).reshape(5),
    "reshape -1 impossible": lambda lib: T(lib, 2, 3).reshape(4, -1),
    "reshape two -1": lambda lib: T(lib, 2, 3).reshape(-1, -1),
    "reshape negative": lambda lib: T(lib, 2, 3).reshape(-2, 3),
    "expand non-singleton": lambda lib: T(lib, 2, 3).expand(2, 4),
    "expand fewer dims": lambda lib: T(lib, 2, 3).expand(3),
    "expand fewer dims double": lambda lib: T(lib, 2, 3, dtype="float64").expand(3),
    "t of 3-d": lambda lib: T(lib, 2, 3, 4).t(),
    "mT of 1-d": lambda lib: T(lib, 3).mT,
    # cat / stack
    "cat sizes": lambda lib: lib.cat([T(lib, 2, 3), T(lib, 2, 4)]),
    "cat ndims": lambda lib: lib.cat([T(lib, 2, 3), T(lib, 2, 3, 1)]),
    "cat empty list": lambda lib: lib.cat([]),
    "cat 0-d": lambda lib: lib.cat([T(lib), T(lib)]),
    "cat tensor not list": lambda lib: lib.cat(T(lib, 2, 3)),
    "stack shapes": lambda lib: lib.stack([T(lib, 2, 3), T(lib, 3, 2)]),
    "stack empty list": lambda lib: lib.stack([]),
    # indexing
    "index out of bounds": lambda lib: T(lib, 4, 5)[4],
    "index out of bounds grad": lambda lib: T(lib, 4, 5, rg=True)[4],
    "index out of bounds dim 1": lambda lib: T(lib, 4, 5)[0, 7],
    "index negative out of bounds": lambda lib: T(lib, 4, 5, rg=True)[:, -6],
    "too many indices": lambda lib: T(lib, 4, 5)[0, 0, 0],
    "too many indices grad": lambda lib: T(lib, 4, 5, rg=True)[None, 1, 2, 3],
    "negative slice step": lambda lib: T(lib, 4, 5)[::-1],
    "negative slice step grad": lambda lib: T(lib, 4, 5, rg=True)[:, ::-2],
    "float index": lambda lib: T(lib, 4, 5)[T(lib, 2)],
    "index 0-d": lambda lib: T(lib)[0],
    "slice 0-d": lambda lib: T(lib)[1:],
    # dtypes
    "mean of int": lambda lib: T(lib, 2, 3, dtype="int64").mean(),
    "mean of int dim": lambda lib: T(lib, 2, 3, dtype="int64").mean(0),
    "bool subtraction": lambda lib: T(lib, 3, dtype="bool") - T(lib, 3, dtype="bool"),
    "bool minus python bool": lambda lib: T(lib, 3) - True,
    "python bool minus tensor": lambda lib: True - T(lib, 3),
    "bool negation": lambda lib: -T(lib, 3, dtype="bool"),
    "int to negative power": lambda lib: T(lib, 3, dtype="int64") ** -1,
    "where non-bool condition": lambda lib: lib.where(T(lib, 3), T(lib, 3), T(lib, 3)),
    "clamp without bounds": lambda lib: lib.clamp(T(lib, 3)),
    "requires_grad_ on int": lambda lib: T(lib, 3, dtype="int64").requires_grad_(),
    "tensor(requires_grad) on int": lambda lib: lib.tensor([1, 2], requires_grad=True),
    "relu of bool": lambda lib: T(lib, 3, dtype="bool").relu(),
    "invert float": lambda lib: ~T(lib, 3),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_torch(name: str) -> None:
    same_error(ERRORS[name])


def test_expand_message_is_torchs() -> None:
    e, t = same_error(lambda lib: T(lib, 2, 3, dtype="float64").expand(3))
    assert str(e) == str(t)


def test_broadcast_message_is_torchs() -> None:
    e, t = same_error(lambda lib: T(lib, 2, 3) + T(lib, 2, 4))
    assert str(e) == str(t) == ("The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                                "dimension 1")
