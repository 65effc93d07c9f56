"""Each benchmark workload, at tiny sizes, gives ember (and the NumPy floor) torch's gradients.

The peers (HIPS autograd, mygrad) come with the bench's peers extra, not the test extra; `make bench`'s correctness
guard compares them (and ember, and the floor) with torch before any timing, so they are checked wherever they run."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench.floor import BUILDERS  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402


def _one_step(build, *args):
    step, grads = build(*args)
    loss = step()
    return float(loss if isinstance(loss, (float, np.floating)) else loss.item()), grads()


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_matches_torch(name):
    w = WORKLOADS[name]
    arrays = w.data(w.tiny)
    t_loss, t_grads = _one_step(w.build, torch, arrays, w.tiny)
    results = [_one_step(w.build, ember, arrays, w.tiny)]
    if "floor" in w.libraries:
        results.append(_one_step(BUILDERS[name], arrays, w.tiny))
    else:  # the model workloads: ember and torch only
        assert w.libraries == ("ember", "torch") and name not in BUILDERS
    for got_loss, got in results:
        assert set(got) == set(t_grads)
        np.testing.assert_allclose(got_loss, t_loss, rtol=1e-5, atol=1e-6)
        for k, ref in t_grads.items():
            assert got[k].dtype == np.float32 and got[k].shape == ref.shape, k
            np.testing.assert_allclose(got[k], ref, rtol=1e-4, atol=1e-5, err_msg=f"{name} grad of {k}")
    for k, v in t_grads.items():  # the workload really reaches every input
        assert np.any(v != 0), f"{name}: zero gradient for {k}"


TRAINING = ("W2", "W3", "W4")


@pytest.mark.parametrize("name", TRAINING)
def test_inputs_are_untouched_and_float32(name):
    """Builders copy their inputs: a training step in one library cannot change another's start."""
    w = WORKLOADS[name]
    arrays = w.data(w.tiny)
    before = {k: v.copy() for k, v in arrays.items()}
    for build, args in ((w.build, (ember, arrays, w.tiny)), (BUILDERS[name], (arrays, w.tiny))):
        build(*args)[0]()
    for k, v in arrays.items():
        assert v.dtype == (np.int64 if k == "labels" else np.float32), k
        np.testing.assert_array_equal(v, before[k])


@pytest.mark.parametrize("name", TRAINING)
def test_sgd_step_moves_params_like_torch(name):
    w = WORKLOADS[name]
    arrays = w.data(w.tiny)
    losses = {}
    for lib in (torch, ember):
        step, _ = w.build(lib, arrays, w.tiny)
        losses[lib.__name__] = [step().item() for _ in range(3)]
    losses["floor"] = [float(BUILDERS[name](arrays, w.tiny)[0]())]
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-5)
    np.testing.assert_allclose(losses["floor"], losses["torch"][:1], rtol=1e-5)
    assert losses["torch"][2] < losses["torch"][0]


def test_floor_pool_routes_ties_to_the_first_cell_like_torch():
    """W3's floor pools by hand: a window of equal positive values sends its gradient where torch does."""
    from bench.floor import _relu_pool, _relu_pool_backward

    y = np.array([[[[2, 2, 0, -1], [2, 1, -1, -3], [0, 5, 4, 4], [5, 5, 4, 4]]]], dtype=np.float32)
    out, saved = _relu_pool(y)
    g = np.arange(1, 5, dtype=np.float32).reshape(out.shape)
    yt = torch.tensor(y, requires_grad=True)
    ref = torch.nn.functional.max_pool2d(torch.relu(yt), 2)
    ref.backward(torch.tensor(g))
    np.testing.assert_array_equal(out, ref.detach().numpy())
    np.testing.assert_array_equal(_relu_pool_backward(g, saved), yt.grad.numpy())


MODELS = ("W6", "W7", "W8")


@pytest.mark.parametrize("name", MODELS)
def test_model_training_follows_torch(name):
    """Five steps of each model workload (its optimizer, clipping, BatchNorm running statistics) give torch's losses,
    and the model learns."""
    w = WORKLOADS[name]
    arrays = w.data(w.tiny)
    losses = {}
    for lib in (torch, ember):
        step, _ = w.build(lib, arrays, w.tiny)
        losses[lib.__name__] = [step().item() for _ in range(5)]
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-5)
    assert losses["torch"][4] < losses["torch"][0]


@pytest.mark.parametrize("name", MODELS)
def test_model_data_names_every_parameter(name):
    """The workload's arrays are exactly the model's parameters (and its batch), in float32."""
    w = WORKLOADS[name]
    arrays = w.data(w.tiny)
    step, grads = w.build(ember, arrays, w.tiny)
    step()
    assert set(grads()) == set(arrays) - {"x", "idx", "targets", "labels"}
    assert all(v.dtype in (np.float32, np.int64) for v in arrays.values())


def _compiled_node_in(fn, depth: int = 8) -> bool:
    """Whether the graph below node ``fn`` holds a compiled call's node within ``depth`` edges."""
    if fn is None or depth < 0:
        return False
    if type(fn).__name__ == "CompiledFunctionBackward":
        return True
    return any(_compiled_node_in(nxt, depth - 1) for nxt, _ in fn.next_functions)


@pytest.mark.parametrize("name", ("W1", "W2", "W3", "W4", "W5") + MODELS)
def test_compiled_workload_replays_eagers_steps(name):
    """``build(..., compile=True)`` (the bench's compiled rows): from the third step on the program is replayed (the
    loss's graph holds the compiled call's node), and every loss and gradient equals eager ember's bit for bit."""
    w = WORKLOADS[name]
    arrays = w.data(w.tiny)
    runs = []
    for compiled in (False, True):
        step, grads = w.build(ember, arrays, w.tiny, compile=compiled)
        got = []
        for _ in range(4):
            loss = step()
            got.append([loss.detach().numpy().copy()] + [grads()[k] for k in sorted(grads())])
        runs.append(got)
    assert _compiled_node_in(loss.grad_fn)
    for i, (a, b) in enumerate(zip(*runs)):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f"{name} step {i}"
