"""Running the same code eagerly and through ember.compile from the same seeds, and comparing everything."""
from __future__ import annotations

import warnings

import numpy as np

from oracle import ember


def arrays_of(obj) -> list:
    """Every tensor in ``obj`` (nested tuples/lists/dicts) as a NumPy copy, in order."""
    out = []
    if isinstance(obj, ember.Tensor):
        out.append(obj.detach().numpy().copy())
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            out.extend(arrays_of(x))
    elif isinstance(obj, dict):
        for k in obj:
            out.extend(arrays_of(obj[k]))
    return out


def assert_same(a: list, b: list, what: str = "") -> None:
    """Bit-for-bit equality of two lists of arrays (shapes, dtypes, values, NaNs included)."""
    assert len(a) == len(b), f"{what}: {len(a)} != {len(b)} arrays"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape and x.dtype == y.dtype, f"{what}[{i}]: {x.shape}/{x.dtype} != {y.shape}/{y.dtype}"
        assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes(), \
            f"{what}[{i}] differs:\n{x}\n{y}"


def state_of(model) -> list:
    return [v.detach().numpy().copy() for v in model.state_dict().values()]


def grads_of(model) -> list:
    return [p.grad.numpy().copy() if p.grad is not None else np.zeros(0) for p in model.parameters()]


def train(make_model, make_batch, steps: int, compiled: bool, seed: int = 0, optimizer=None, loss_fn=None,
          train_mode: bool = True, **compile_kwargs):
    """``steps`` training steps; returns (per-step [loss, output, grads], final state and generator state, the module
    called, warnings)."""
    ember.manual_seed(seed)
    model = make_model()
    model.train(train_mode)
    m = ember.compile(model, **compile_kwargs) if compiled else model
    opt = (optimizer or (lambda ps: ember.optim.SGD(ps, lr=0.05)))(list(model.parameters()))
    rng = np.random.default_rng(seed + 1)
    ember.manual_seed(seed + 2)
    record = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(steps):
            x, target = make_batch(rng)
            opt.zero_grad()
            out = m(x)
            loss = (loss_fn or (lambda o, t: ember.nn.functional.cross_entropy(o, t)))(out, target)
            loss.backward()
            record.append(arrays_of(loss) + arrays_of(out) + grads_of(model))
            opt.step()
    final = state_of(model) + [ember.get_rng_state().numpy().copy()]
    return record, final, m, [w for w in caught if "ember.compile" in str(w.message)]


def same_training(make_model, make_batch, steps: int = 5, **kw):
    """Train eagerly and compiled from the same seeds: every loss, output, gradient and the final state (parameters
    and buffers) and the generator's state bit for bit; returns the compiled module and the compile warnings."""
    eager, s_eager, _, _ = train(make_model, make_batch, steps, False, **kw)
    comp, s_comp, m, caught = train(make_model, make_batch, steps, True, **kw)
    for i, (a, b) in enumerate(zip(eager, comp)):
        assert_same(a, b, f"step {i}")
    assert_same(s_eager, s_comp, "final state")
    return m, caught


def kinds(compiled) -> list:
    """The kinds of a compiled callable's cache entries (compiled, pending, eager)."""
    fn = compiled.forward if isinstance(compiled, ember._dynamo.eval_frame.OptimizedModule) else compiled
    return [e.kind for e in fn._cache]
