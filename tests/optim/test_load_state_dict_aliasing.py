"""Optimizer.load_state_dict keeps the loaded dict's tensors as torch does (``value.to(...)`` returns the same tensor
when nothing changes): the new optimizer's steps update them in place; a dtype cast or a torch tensor is a copy."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from oracle import assert_close, ember, torch


def _stepped(lib, opt_name, dtype):
    w = lib.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=dtype, requires_grad=True)
    opt = getattr(lib.optim, opt_name)([w], lr=0.1, **({"momentum": 0.9} if opt_name == "SGD" else {}))
    for _ in range(3):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    return w, opt


def _run(lib, opt_name, param_dtype):
    w, opt = _stepped(lib, opt_name, lib.float64)
    saved = copy.deepcopy(opt.state_dict())
    before = copy.deepcopy(saved)
    w2 = w.detach().clone().to(param_dtype).requires_grad_()
    opt2 = getattr(lib.optim, opt_name)([w2], lr=0.1)
    opt2.load_state_dict(saved)
    opt2.zero_grad()
    (w2 ** 2).sum().backward()
    opt2.step()
    state, old = saved["state"][0], before["state"][0]
    return {k: (state[k], old[k], opt2.state[w2][k] is state[k]) for k in state}


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("param_dtype", ["float64", "float32"])
def test_loaded_state_is_kept_as_torch_keeps_it(opt_name, param_dtype):
    e = _run(ember, opt_name, getattr(ember, param_dtype))
    t = _run(torch, opt_name, getattr(torch, param_dtype))
    assert e.keys() == t.keys()
    for k in t:
        (es, eold, ealias), (ts, told, talias) = e[k], t[k]
        assert ealias == talias, f"{k}: ember {'keeps' if ealias else 'copies'} the loaded tensor, torch not"
        changed_e = not np.array_equal(np.asarray(es.tolist()), np.asarray(eold.tolist()))
        changed_t = not np.array_equal(np.asarray(ts.tolist()), np.asarray(told.tolist()))
        assert changed_e == changed_t, f"{k}: the loaded dict's tensor changed on one side only"
        assert_close(es, ts)
