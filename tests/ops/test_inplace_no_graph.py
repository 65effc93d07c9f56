"""In-place add/sub/mul without a graph compute straight into the tensor (NOTE [in-place without a
graph]): torch's values, dtypes, versions and aliasing, on broadcasting operands, scalars, views and
every float dtype; operands the fast path leaves to the general one still behave as torch."""
from __future__ import annotations

import operator

import numpy as np
import pytest

from oracle import assert_close, ember, torch

OPS = {"iadd": operator.iadd, "isub": operator.isub, "imul": operator.imul,
       "add_": lambda a, b: a.add_(b), "sub_": lambda a, b: a.sub_(b), "mul_": lambda a, b: a.mul_(b)}
R = np.random.default_rng(0)
BASE = R.uniform(-2, 2, (3, 4))
OTHERS = {
    "same": lambda lib, dt: lib.tensor(R.uniform(-2, 2, (3, 4)).astype(dt)),
    "row": lambda lib, dt: lib.tensor(R.uniform(-2, 2, (4,)).astype(dt)),
    "col": lambda lib, dt: lib.tensor(R.uniform(-2, 2, (3, 1)).astype(dt)),
    "float": lambda lib, dt: 0.37,
    "int": lambda lib, dt: 3,
    "zero_dim_f64": lambda lib, dt: lib.tensor(1.5, dtype=lib.float64),
    "int_tensor": lambda lib, dt: lib.tensor(np.arange(4)),
}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("other", sorted(OTHERS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("view", [False, True])
def test_in_place_without_graph_matches_torch(op, other, dtype, view) -> None:
    got = {}
    for lib in (ember, torch):
        rng_state = R.bit_generator.state
        base = lib.tensor(BASE.astype(dtype), requires_grad=True)
        o = OTHERS[other](lib, dtype)
        R.bit_generator.state = rng_state  # the same operand values for both libraries
        with lib.no_grad():
            target = base.t().t()[:, :] if view else base
            v0 = base._version
            res = OPS[op](target, o)
            got[lib] = (res is target, base.detach().clone(), target.detach().clone(), base._version - v0)
    e, t = got[ember], got[torch]
    assert e[0] and t[0]
    assert_close(e[1], t[1])
    assert_close(e[2], t[2])
    assert e[3] == t[3] == 1


def test_operand_that_does_not_broadcast_raises_as_torch() -> None:
    msgs = {}
    for lib in (ember, torch):
        x = lib.ones(2, 3)
        with pytest.raises(RuntimeError) as info:
            x += lib.ones(2, 1, 3)
        msgs[lib] = str(info.value)
        assert (x.numpy() == 1).all()  # unchanged
    assert msgs[ember] == msgs[torch]
