"""ember.compile's contract (NOTE [compile]): every test runs the same code eagerly and compiled from the same
seeds and compares values, gradients, random streams and module state bit for bit, then checks that the compiled
program is really replayed (cache entry kinds) or, for graph breaks, that the call ran eagerly with a warning
naming the culprit's file:line."""
from __future__ import annotations

import inspect
import itertools
import random
import warnings

import numpy as np
import pytest

from _compile_compare import arrays_of, assert_same, grads_of, kinds, same_training
from oracle import ember, torch

nn = ember.nn
F = ember.nn.functional


def _batch(n: int, d: int, k: int):
    def make(rng):
        x = ember.tensor(rng.standard_normal((n, d)).astype(np.float32))
        return x, ember.tensor(rng.integers(0, k, n))
    return make


def _line_of(fn, text: str) -> int:
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, ln in enumerate(src) if text in ln)


def _calls(fn, args_list, compiled_kwargs=None):
    """Call ``fn`` eagerly and compiled on each argument tuple (inputs requiring grad get their gradients after a
    backward of the sum of the outputs); returns (eager arrays, compiled arrays, compiled fn, compile warnings)."""
    out = []
    c = ember.compile(fn, **(compiled_kwargs or {}))
    caught = []
    for f in (fn, c):
        got = []
        ember.manual_seed(3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for make in args_list:
                args = make()
                res = f(*args)
                got += arrays_of(res)
                outs = [t for t in (res if isinstance(res, tuple) else (res,))
                        if isinstance(t, ember.Tensor) and t.requires_grad]
                if outs:
                    sum(o.sum() for o in outs).backward()
                    got += [a.grad.numpy().copy() for a in args if isinstance(a, ember.Tensor) and a.grad is not None]
        if f is c:
            caught = [x for x in w if "ember.compile" in str(x.message)]
        out.append(got)
    return out[0], out[1], c, caught


def _leaf(*shape, seed=0, grad=True):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), requires_grad=grad)


# ----------------------------------------------------------------------------- same results as eager
def test_a_function_is_traced_twice_then_replayed_with_eager_values_and_gradients() -> None:
    def chain(x, y):
        h = x
        for _ in range(5):
            h = ember.tanh(h * y + 1).exp() - y
            h = h / 3.0
        return h.sum()

    args = [lambda: (_leaf(7), _leaf(7, seed=1))] * 5
    eager, comp, c, caught = _calls(chain, args)
    assert_same(eager, comp)
    assert kinds(c) == ["compiled"] and c._cache[0].hits == 3 and not caught
    x, y = _leaf(7), _leaf(7, seed=1)
    out = c(x, y)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward" and out.grad_fn.name() == "CompiledFunctionBackward"


def test_dropout_draws_the_eager_masks_under_manual_seed() -> None:
    make = lambda: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.4), nn.Linear(16, 16), nn.Dropout(0.2),
                                 nn.Linear(16, 4))
    m, caught = same_training(make, _batch(6, 8, 4), steps=6)
    assert kinds(m) == ["compiled"] and not caught
    assert "_dropout_mask" in m.code


def test_batchnorm_running_statistics_and_batch_counter_match_eager() -> None:
    make = lambda: nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3))
    m, caught = same_training(make, _batch(4, 5, 3), steps=6)
    assert kinds(m) == ["compiled"] and not caught
    bn = m._orig_mod[1]
    assert int(bn.num_batches_tracked) == 6
    m.eval()  # eval mode: the running statistics are used, a new program
    x = ember.randn(4, 5)
    with ember.no_grad():
        a = m._orig_mod(x)
        for _ in range(3):
            b = m(x)
    assert_same(arrays_of(a), arrays_of(b))
    assert int(bn.num_batches_tracked) == 6


def test_conv_batchnorm2d_pool_network_matches_eager() -> None:
    def make():
        return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(4 * 3 * 3, 5))

    def batch(rng):
        return ember.tensor(rng.standard_normal((3, 2, 6, 6)).astype(np.float32)), ember.tensor(rng.integers(0, 5, 3))

    m, caught = same_training(make, batch, steps=4, optimizer=lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9,
                                                                                           weight_decay=5e-4))
    assert kinds(m) == ["compiled"] and not caught


class _LSTMNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(11, 6)
        self.lstm = nn.LSTM(6, 7, num_layers=2, batch_first=True, dropout=0.3)
        self.fc = nn.Linear(7, 11)

    def forward(self, tokens):
        out, _ = self.lstm(self.emb(tokens))
        return self.fc(out).reshape(-1, 11)


def test_lstm_language_model_matches_eager() -> None:
    def batch(rng):
        return ember.tensor(rng.integers(0, 11, (3, 5))), ember.tensor(rng.integers(0, 11, 15))

    m, caught = same_training(_LSTMNet, batch, steps=4)
    assert kinds(m) == ["compiled"] and not caught


class _Block(nn.Module):
    """A causal self-attention block as nanoGPT writes it (a registered tril mask, masked_fill, softmax, dropout)."""

    def __init__(self) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(8), nn.LayerNorm(8)
        self.attn, self.proj = nn.Linear(8, 24), nn.Linear(8, 8)
        self.fc, self.out = nn.Linear(8, 32), nn.Linear(32, 8)
        self.drop = nn.Dropout(0.1)
        self.register_buffer("bias", ember.tril(ember.ones(6, 6)).view(1, 1, 6, 6))
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.attn(self.ln1(x)).split(8, dim=2)
        q, k, v = (t.view(B, T, 2, 4).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / 2.0)
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.drop(self.proj(y))
        h = self.fc(self.ln2(x))
        x = x + self.out(0.5 * h * (1.0 + ember.tanh(0.7978845608 * (h + 0.044715 * ember.pow(h, 3.0)))))
        return self.head(x).view(B * T, 5)


def test_attention_block_with_adamw_matches_eager() -> None:
    def batch(rng):
        return ember.tensor(rng.standard_normal((2, 6, 8)).astype(np.float32)), ember.tensor(rng.integers(0, 5, 12))

    m, caught = same_training(_Block, batch, steps=4,
                              optimizer=lambda ps: ember.optim.AdamW(ps, lr=1e-3, weight_decay=0.01))
    assert kinds(m) == ["compiled"] and not caught


def test_causal_attention_compiles_without_eager_fallback() -> None:
    """nanoGPT's attention: F.scaled_dot_product_attention(is_causal=True) builds its mask from the sizes only, a
    constant of the compiled program (every call ran eagerly before)."""
    def attend(q, k, v):
        return ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    make = [lambda s=s: (_leaf(2, 4, 5, seed=s), _leaf(2, 4, 5, seed=s + 1), _leaf(2, 4, 5, seed=s + 2))
            for s in range(3)]
    eager, compiled, c, caught = _calls(attend, make)
    assert not caught and kinds(c) == ["compiled"]
    for e, g in zip(eager, compiled):
        np.testing.assert_array_equal(e, g)


class _InPlace(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc, self.fc2 = nn.Linear(6, 6), nn.Linear(6, 3)

    def forward(self, x):
        h = self.fc(x)
        h[:, 0] = 0.0
        h.relu_()
        h = h * 1
        h.view(-1)[::2] *= 2
        h = h + 1
        h.add_(x)
        h[1] = x[0] * 3
        h.t_()
        rows = [r * 2 for r in h.detach()]  # iterating a tensor: views taken on its array
        return self.fc2(h.t() + ember.stack(rows).t())


def test_in_place_ops_and_views_inside_forward_match_eager() -> None:
    m, caught = same_training(_InPlace, _batch(4, 6, 3), steps=4)
    assert kinds(m) == ["compiled"] and not caught


def test_random_factories_and_samplers_inside_the_function_follow_the_stream() -> None:
    def noisy(x):
        a = x + ember.rand(3) + ember.randn(3) * 0.1
        b = ember.empty(3).normal_(0, 2) + ember.randint(0, 5, (3,)) + ember.bernoulli(ember.full((3,), 0.5))
        c = ember.rand_like(x) + ember.randperm(3).float() + ember.normal(0.0, 1.0, (3,))
        return (a * b + c).sum()

    args = [lambda: (_leaf(3),)] * 5
    eager, comp, c, caught = _calls(noisy, args)
    assert_same(eager, comp)
    assert kinds(c) == ["compiled"] and not caught
    state = ember.get_rng_state()
    c(_leaf(3))
    after_compiled = ember.get_rng_state()
    ember.set_rng_state(state)
    noisy(_leaf(3))
    assert_same([after_compiled.numpy()], [ember.get_rng_state().numpy()])


def test_parameters_updated_in_place_or_replaced_between_calls() -> None:
    torch_like = nn.Linear(4, 3)
    c = ember.compile(torch_like)
    x = ember.randn(2, 4)
    for _ in range(3):
        c(x)
    with ember.no_grad():
        torch_like.weight.mul_(2)  # in place: the replay reads the new values
    assert_same(arrays_of(c(x)), arrays_of(torch_like(x)))
    torch_like.weight = nn.Parameter(ember.randn(3, 4))  # replaced: found again by name
    out = c(x)
    assert_same(arrays_of(out), arrays_of(torch_like(x)))
    out.sum().backward()
    assert torch_like.weight.grad is not None and kinds(c) == ["compiled"]
    torch_like.weight = nn.Parameter(ember.randn(5, 4))  # other shapes: a guard miss, a new trace
    torch_like.bias = nn.Parameter(ember.randn(5))
    assert tuple(c(x).shape) == (2, 5)
    assert len(c.forward._cache) == 2


def test_grad_modes_each_get_their_program() -> None:
    lin = nn.Linear(3, 3)
    c = ember.compile(lin)
    x = ember.randn(2, 3)
    for mode in (ember.no_grad, ember.enable_grad, ember.inference_mode, lambda: ember.set_grad_enabled(False)):
        for _ in range(3):
            with mode():
                a, b = lin(x), c(x)
            assert_same(arrays_of(a), arrays_of(b))
            assert a.requires_grad == b.requires_grad and a.is_inference() == b.is_inference()
    with ember.no_grad():
        with ember.enable_grad():
            assert c(x).requires_grad
    assert sorted(kinds(c)) == ["compiled", "compiled", "compiled"]  # no_grad, grad, inference


def test_train_and_eval_switch_programs() -> None:
    make = lambda: nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.BatchNorm1d(8), nn.Linear(8, 2))
    ember.manual_seed(0)
    model = make()
    c = ember.compile(model)
    ember.manual_seed(0)
    twin = make()
    x = ember.randn(5, 4)
    for train_mode in (True, False, True, False, True):
        model.train(train_mode)
        twin.train(train_mode)
        for _ in range(3):
            ember.manual_seed(1)
            a = twin(x)
            ember.manual_seed(1)
            b = c(x)
            assert_same(arrays_of(a), arrays_of(b))
    assert len(c.forward._cache) == 2 and c.training is True


def test_autocast_region_matches_eager() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 2))
    c = ember.compile(model)
    x = ember.randn(4, 8)
    for _ in range(3):
        with ember.autocast("cpu", dtype=ember.bfloat16):
            a, b = model(x), c(x)
        assert a.dtype == b.dtype == ember.bfloat16
        assert_same(arrays_of(a), arrays_of(b))
        a.float().sum().backward()
        ga = [p.grad.numpy().copy() for p in model.parameters()]
        model.zero_grad()
        b.float().sum().backward()
        assert_same(ga, [p.grad.numpy().copy() for p in model.parameters()])
        model.zero_grad()
    assert_same(arrays_of(model(x)), arrays_of(c(x)))  # outside the region: another program
    assert len(c.forward._cache) == 2


def test_several_outputs_only_some_receive_gradients() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 3)

        def forward(self, x, t):
            h = self.a(x).relu()
            logits = self.b(h)
            return {"logits": logits, "hidden": h, "loss": F.cross_entropy(logits, t)}

    ember.manual_seed(0)
    net = Net()
    c = ember.compile(net)
    x, t = ember.randn(3, 4), ember.tensor([0, 2, 1])
    for which in ("loss", "loss", "loss", "hidden", "both", "loss"):
        outs = []
        for f in (net, c):
            net.zero_grad()
            r = f(x, t)
            loss = r["loss"] if which == "loss" else r["hidden"].sum() if which == "hidden" else \
                r["loss"] + r["logits"].sum()
            loss.backward()
            outs.append(arrays_of(r) + grads_of(net))
        assert_same(*outs)
    prog = c.forward._cache[0].program
    assert set(prog.patterns) == {(0, 1, 2), (0,), (1,), (2,)}


def test_outputs_that_are_inputs_views_of_inputs_or_repeated() -> None:
    def f(x, y):
        v = x.view(-1)
        return x, v, v, y * 2, x.detach()

    for _ in range(3):
        x, y = ember.randn(2, 3), _leaf(3)
        a = f(x, y)
        b = ember.compile(f)(x, y)
    c = ember.compile(f)
    for _ in range(3):
        x, y = ember.randn(2, 3), _leaf(3)
        r = c(x, y)
    assert r[0] is x and r[1] is r[2] and r[1]._base is x and r[4]._base is None
    assert_same(arrays_of(r), arrays_of(f(x, y)))
    r[1].add_(1)  # a view of the input: writes reach it, as eager's
    assert_same([x.numpy()], [(r[4] * 1).numpy()])
    assert kinds(c) == ["compiled"] and a[1]._base is a[0] and len(b) == 5


def test_writes_into_arguments_under_no_grad_bump_versions_as_eager() -> None:
    def update(buf, x):
        with ember.no_grad():
            buf.mul_(0.9).add_(x, alpha=0.1)
            buf[0] = x.sum()
        return buf * 2

    c = ember.compile(update)
    bufs = [ember.ones(4), ember.ones(4)]
    for i in range(5):
        x = ember.full((4,), float(i))
        a, b = update(bufs[0], x), c(bufs[1], x)
        assert_same(arrays_of((a, bufs[0])), arrays_of((b, bufs[1])))
        assert bufs[0]._version == bufs[1]._version
    assert kinds(c) == ["compiled"]


def test_out_arguments_are_replayed_and_a_resize_breaks() -> None:
    def f(x, w, buf):
        h = ember.mm(x, w)
        ember.tanh(ember.mm(x, w.detach()), out=buf)  # into an argument
        tmp = ember.add(buf, x.sum(), out=ember.empty(3, 4))  # into a tensor made inside
        return ember.sum(tmp * h), tmp

    c = ember.compile(f)
    for i in range(5):
        x, w, w2 = _leaf(3, 2, seed=i, grad=False), _leaf(2, 4, seed=9), _leaf(2, 4, seed=9)
        bufs = [ember.zeros(3, 4), ember.zeros(3, 4)]
        a, b = f(x, w, bufs[0]), c(x, w2, bufs[1])
        a[0].backward()
        b[0].backward()
        assert_same(arrays_of((*a, bufs[0], w.grad)), arrays_of((*b, bufs[1], w2.grad)))
        assert bufs[0]._version == bufs[1]._version
    assert kinds(c) == ["compiled"] and "_copyto(buf" in c.code

    g = ember.compile(lambda x, out: ember.exp(x, out=out))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(4):  # the out= tensor of shape (2,) is resized to (3,): eager, and one entry for all calls
            outs = [ember.zeros(2), ember.zeros(2)]
            ember.exp(ember.full((3,), float(i)), out=outs[0])
            g(ember.full((3,), float(i)), outs[1])
            assert_same(arrays_of(outs[0]), arrays_of(outs[1]))
    assert kinds(g) == ["eager"] and "an out= tensor was resized" in g.explain()
    assert sum("ember.compile" in str(w.message) for w in caught) == 1


def test_retain_graph_and_the_freed_graph_error() -> None:
    c = ember.compile(lambda x: (x.exp() * x).sum())
    for _ in range(3):
        x = _leaf(4)
        out = c(x)
    out.backward(retain_graph=True)
    g1 = x.grad.clone()
    out.backward()
    assert_same([x.grad.numpy()], [(g1 * 2).numpy()])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.backward()


def test_double_backward_raises_torchs_error() -> None:
    def f(x):
        return (x ** 3).sum()

    c = ember.compile(f)
    tc = torch.compile(f, backend="aot_eager")
    for lib, fn in ((ember, c), (torch, tc)):
        for _ in range(3):
            x = lib.ones(3, requires_grad=True)
            (g,) = lib.autograd.grad(fn(x), x, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="does not currently support double backward"):
            g.sum().backward()


def test_in_place_change_of_a_saved_input_after_the_call_is_caught() -> None:
    c = ember.compile(lambda w, x: (w * x).sum())
    for _ in range(3):
        w, x = _leaf(3), ember.randn(3)
        out = c(w, x)
    with ember.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_closure_list_and_global_tensors_are_read_on_every_call() -> None:
    xs = [ember.randn(2, 3) for _ in range(4)]
    h0 = ember.zeros(2, 3)

    def rnn(w):
        h = h0
        for x in xs:
            h = ember.tanh(x + h @ w)
        return h.sum()

    c = ember.compile(rnn)
    w = _leaf(3, 3)
    for step in range(5):
        xs[step % 4] = ember.randn(2, 3)  # a new tensor in the list: found there again
        with ember.no_grad():
            h0.add_(0.1)  # in place: read again
        a = rnn(w)
        a.backward()
        ga = w.grad.clone()
        w.grad = None
        b = c(w)
        b.backward()
        assert_same(arrays_of((a, ga)), arrays_of((b, w.grad)))
        w.grad = None
    assert kinds(c) == ["compiled"]
    sources = {v.src.kind for v in c._cache[0].program.inputs}
    assert sources == {"arg", "closure"}


def test_python_number_arguments_are_specialised() -> None:
    c = ember.compile(lambda x, s: x * s + s)
    x = ember.randn(3)
    for s in (2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 2.0):
        assert_same(arrays_of(c(x, s)), arrays_of(x * s + s))
    assert kinds(c) == ["compiled", "compiled"]
    assert "s != 3.0" in c.code or "s != 2.0" in c.code or "args[1] != " in c.code


class _Recurrent(nn.Module):
    """A stateful language model trained with truncated backpropagation: the hidden state one call returns, detached,
    is the next call's input."""

    def __init__(self, cell: str) -> None:
        super().__init__()
        self.emb = nn.Embedding(9, 5)
        self.rnn = getattr(nn, cell)(5, 6, num_layers=2, dropout=0.25)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(6, 9)

    def forward(self, tokens, hidden):
        out, hidden = self.rnn(self.drop(self.emb(tokens)), hidden)
        return self.fc(self.drop(out)).view(-1, 9), hidden


def _detach(h):
    return tuple(x.detach() for x in h) if isinstance(h, tuple) else h.detach()


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_recurrent_hidden_state_carried_from_call_to_call(cell) -> None:
    runs = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = _Recurrent(cell)
        m = ember.compile(model) if compiled else model
        opt = ember.optim.SGD(model.parameters(), lr=0.5)
        rng = np.random.default_rng(1)
        hidden = None
        got = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(6):
                tokens = ember.tensor(rng.integers(0, 9, (4, 3)))
                targets = ember.tensor(rng.integers(0, 9, 12))
                opt.zero_grad()
                out, hidden = m(tokens, hidden)
                loss = F.cross_entropy(out, targets)
                loss.backward()
                ember.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
                opt.step()
                hidden = _detach(hidden)
                got.append(arrays_of((loss, out, hidden)) + grads_of(model))
        runs.append((got, [x for x in caught if "ember.compile" in str(x.message)], m))
    (eager, _, _), (comp, caught, m) = runs
    for i, (a, b) in enumerate(zip(eager, comp)):
        assert_same(a, b, f"step {i}")
    # the calls with a hidden state argument replay their program; the first call (hidden None) traced once only
    assert kinds(m) == ["compiled", "pending"] and not caught


def test_gradients_accumulated_over_several_compiled_calls() -> None:
    make = lambda: nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 2))
    runs = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = make()
        m = ember.compile(model) if compiled else model
        opt = ember.optim.Adam(model.parameters(), lr=0.01)
        rng = np.random.default_rng(2)
        got = []
        for _ in range(4):
            opt.zero_grad()
            for _ in range(3):  # three micro-batches, one optimizer step
                x = ember.tensor(rng.standard_normal((3, 4)).astype(np.float32))
                a, b = m(x), m(x * 2)  # two calls in one graph
                ((a - b) ** 2).mean().backward()
                got.append(arrays_of((a, b)) + grads_of(model))
            opt.step()
        runs.append((got, state_of_params(model), m))
    (eager, pe, _), (comp, pc, m) = runs
    for i, (a, b) in enumerate(zip(eager, comp)):
        assert_same(a, b, f"micro-batch {i}")
    assert_same(pe, pc, "parameters")
    assert kinds(m) == ["compiled"]


def state_of_params(model) -> list:
    return [p.detach().numpy().copy() for p in model.parameters()]


def test_evaluation_under_no_grad_between_training_steps() -> None:
    """train() steps interleaved with eval() + no_grad validation: BatchNorm's statistics, dropout's stream and the
    outputs of both modes as eager's; one program per mode."""
    make = lambda: nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 3))
    runs = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = make()
        m = ember.compile(model) if compiled else model
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        rng = np.random.default_rng(3)
        got = []
        for _ in range(5):
            model.train()
            x = ember.tensor(rng.standard_normal((6, 5)).astype(np.float32))
            opt.zero_grad()
            loss = F.cross_entropy(m(x), ember.tensor(rng.integers(0, 3, 6)))
            loss.backward()
            opt.step()
            model.eval()
            with ember.no_grad():
                val = m(ember.tensor(rng.standard_normal((4, 5)).astype(np.float32)))
            assert not val.requires_grad
            got.append(arrays_of((loss, val)) + grads_of(model) + [v.numpy().copy() for v in model.state_dict().values()])
        runs.append((got, m))
    (eager, _), (comp, m) = runs
    for i, (a, b) in enumerate(zip(eager, comp)):
        assert_same(a, b, f"step {i}")
    assert sorted(kinds(m)) == ["compiled", "compiled"]


class _EMA(nn.Module):
    """A module that keeps its own statistics in a buffer, written in place through views during forward."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("stats", ember.zeros(2, 4))
        self.register_buffer("steps", ember.zeros((), dtype=ember.int64))

    def forward(self, x):
        h = self.fc(x)
        with ember.no_grad():
            self.stats[0].mul_(0.9).add_(h.mean(0), alpha=0.1)   # a row view of the buffer
            self.stats[1, ::2] += h[:, ::2].var(0)               # a strided view
            self.steps += 1
        return (h - self.stats[0]) * self.stats[1].add(1).rsqrt()


def test_buffers_written_in_place_through_views_during_forward() -> None:
    m, caught = same_training(_EMA, _batch(5, 4, 4), steps=6)
    assert kinds(m) == ["compiled"] and not caught
    assert int(m._orig_mod.steps) == 6


# ----------------------------------------------------------------------------- guards and the cache
def test_a_shape_change_retraces_and_explain_names_the_failed_guard() -> None:
    lin = nn.Linear(4, 2)
    c = ember.compile(lin)
    for n in (3, 3, 3, 5, 5, 5, 3):
        x = ember.randn(n, 4)
        assert_same(arrays_of(c(x)), arrays_of(lin(x)))
    assert kinds(c) == ["compiled", "compiled"]
    text = c.explain()
    assert "guard failed" in text and "(5, 4)" not in text.split("recompiles:")[0].split("guard")[0]
    assert "shape != (3, 4)" in text


def test_dtype_and_requires_grad_changes_retrace() -> None:
    c = ember.compile(lambda x: (x * x).sum())
    for x in (ember.ones(3), ember.ones(3, dtype=ember.float64), ember.ones(3, requires_grad=True)):
        for _ in range(3):
            assert c(x).item() == 3.0
    assert len(c._cache) == 3


def test_the_cache_limit_falls_back_to_eager_with_a_warning() -> None:
    c = ember.compile(lambda x: x + 1, recompile_limit=2)
    with pytest.warns(UserWarning, match="cache of compiled programs is full"):
        for n in range(1, 6):
            assert_same(arrays_of(c(ember.ones(n))), [np.full(n, 2, np.float32)])
    assert len(c._cache) == 2


def test_module_attributes_and_submodules_are_guarded() -> None:
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    c = ember.compile(model)
    x = ember.randn(4, 3)
    for p in (0.5, 0.5, 0.5, 0.0, 0.0, 0.0):
        model[1].p = p
        ember.manual_seed(2)
        a = model(x)
        ember.manual_seed(2)
        assert_same(arrays_of(a), arrays_of(c(x)))
    model[0] = nn.Linear(3, 3)  # a swapped submodule
    for _ in range(3):
        assert_same(arrays_of(c(x)), arrays_of(model(x)))
    assert len(c.forward._cache) == 3


def test_batch_size_changes_in_training_each_get_a_program() -> None:
    """A smaller last batch (and back): a guard miss traces the new shape; values, statistics and streams as eager."""
    sizes = itertools.cycle([8, 8, 8, 5, 8, 5, 5, 8, 3])  # nine steps per run

    def batch(rng):
        n = next(sizes)
        return ember.tensor(rng.standard_normal((n, 6)).astype(np.float32)), ember.tensor(rng.integers(0, 4, n))

    make = lambda: nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 4))
    m, caught = same_training(make, batch, steps=9)
    assert sorted(kinds(m)) == ["compiled", "compiled", "pending"] and not caught  # 3 was seen once only


def test_python_branches_on_shapes_flags_and_attributes_are_specialised() -> None:
    """Branches on what the guards check (shapes, the training flag, module attributes) are no graph break: each
    outcome is its own program."""
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.skip = True

        def forward(self, x):
            h = self.fc(x)
            if x.shape[0] > 3:
                h = h.relu()
            if self.training:
                h = h * 2
            if self.skip:
                h = h + x
            return h.sum(1) if x.dim() == 2 else h.sum((1, 2))

    net = Net()
    c = ember.compile(net)
    settings = [(2, True, True), (5, True, True), (5, False, True), (5, False, False), (2, True, False)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph break warnings
        for n, training, skip in settings:
            net.train(training)
            net.skip = skip
            for _ in range(3):
                x = _leaf(n, 4)
                a = net(x)
                a.sum().backward()
                ga = x.grad.clone()
                x.grad = None
                b = c(x)
                b.sum().backward()
                assert_same(arrays_of((a, ga)), arrays_of((b, x.grad)))
    assert kinds(c) == ["compiled"] * len(settings)


def test_freezing_a_layer_mid_training_retraces() -> None:
    """requires_grad_(False) on some parameters between steps: a new program whose backward skips them."""
    runs = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
        m = ember.compile(model) if compiled else model
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        rng = np.random.default_rng(4)
        got = []
        for step in range(8):
            if step == 4:
                model[0].requires_grad_(False)
            opt.zero_grad()
            x = ember.tensor(rng.standard_normal((4, 3)).astype(np.float32))
            out = m(x)
            out.pow(2).mean().backward()
            opt.step()
            got.append(arrays_of(out) + grads_of(model) + state_of_params(model))
        runs.append((got, m))
    (eager, _), (comp, m) = runs
    for i, (a, b) in enumerate(zip(eager, comp)):
        assert_same(a, b, f"step {i}")
    assert model[0].weight.grad is None and kinds(m) == ["compiled", "compiled"]


# ----------------------------------------------------------------------------- graph breaks
def test_a_data_dependent_branch_breaks_with_the_culprits_file_and_line() -> None:
    def f(x):
        y = x * 2
        if y.sum() > 0:  # culprit
            return y + 1
        return y - 1

    c = ember.compile(f)
    with pytest.warns(UserWarning, match="ember.compile: a tensor's value was read into Python") as rec:
        for sign in (1, -1, 1, -1):
            x = ember.ones(3) * sign
            assert_same(arrays_of(c(x)), arrays_of(f(x)))
    w = next(r for r in rec if "ember.compile" in str(r.message))
    assert w.filename == __file__ and w.lineno == _line_of(f, "# culprit")
    text = c.explain()
    assert f"{__file__}:{_line_of(f, '# culprit')}" in text and "bool()" in text and kinds(c) == ["eager"]


def test_fullgraph_raises_at_the_first_break() -> None:
    def f(x):
        return x * x.sum().item()

    with pytest.raises(ember._dynamo.exc.Unsupported, match=r"item\(\)") as info:
        ember.compile(f, fullgraph=True)(ember.ones(2))
    assert isinstance(info.value, RuntimeError)
    assert issubclass(ember._dynamo.exc.Unsupported, ember._dynamo.exc.TorchDynamoException)
    c = ember.compile(lambda x: x * 2, fullgraph=True)
    for _ in range(3):
        c(ember.ones(2))
    assert kinds(c) == ["compiled"]


@pytest.mark.parametrize("body,why", [
    (lambda x: x[x > 0].sum(), "output shape depends on the data"),
    (lambda x: x.nonzero().float().sum(), "output shape depends on the data"),
    (lambda x: x.masked_select(x > 0).sum(), "output shape depends on the data"),
    (lambda x: x * float(x[0]), "float()"),
    (lambda x: x * x.tolist()[0], "tolist"),
    (lambda x: x[ember.tensor(1)] * x, "an index"),
    (lambda x: x * (1 if random.random() < 2 else 0), "Python's random"),
    (lambda x: x * np.random.rand(), "random state"),
])
def test_breaks_run_eagerly_with_the_same_results(body, why) -> None:
    c = ember.compile(body)
    with pytest.warns(UserWarning, match="ember.compile"):
        for seed in range(4):
            x = _leaf(5, seed=seed, grad=False)
            random.seed(seed)
            np.random.seed(seed)
            a = body(x)
            random.seed(seed)
            np.random.seed(seed)
            assert_same(arrays_of(a), arrays_of(c(x)))
    assert why in c.explain() and kinds(c) == ["eager"]


class _Double(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_functions_hooks_and_python_side_effects_break() -> None:
    class Counting(nn.Linear):
        calls = 0

        def forward(self, x):
            self.calls += 1  # a Python attribute changed by the call
            return super().forward(x)

    counting = Counting(2, 2)
    hooked = nn.Linear(2, 2)
    seen = []
    hooked.register_forward_hook(lambda m, i, o: seen.append(o))
    cases = [(lambda x: _Double.apply(x).sum(), "custom autograd.Function"),
             (counting, "was changed during the call"),
             (hooked, "module hooks")]
    for fn, why in cases:
        c = ember.compile(fn)
        with pytest.warns(UserWarning, match="ember.compile"):
            for _ in range(4):
                x = _leaf(3, 2)
                c(x).sum().backward()
        assert why in c.explain()
    assert counting.calls == 4 and len(seen) == 4


def test_graph_break_and_disable_are_breaks() -> None:
    @ember._dynamo.disable
    def helper(x):
        return x + 1

    def f(x):
        ember._dynamo.graph_break()
        return x * 2

    for fn, why in ((lambda x: helper(x) * 2, "disable'd function"), (f, "graph_break()")):
        c = ember.compile(fn)
        with pytest.warns(UserWarning, match=why.split("'")[0]):
            for _ in range(3):
                assert_same(arrays_of(c(ember.ones(2))), arrays_of(fn(ember.ones(2))))
        assert kinds(c) == ["eager"]
        with pytest.raises(ember._dynamo.exc.Unsupported):
            ember.compile(fn, fullgraph=True)(ember.ones(2))


def test_a_first_call_that_initialises_state_is_retried() -> None:
    class Lazy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cache = None

        def forward(self, x):
            if self.cache is None:
                self.cache = ember.ones(3) * 2  # first call only
            return x * self.cache

    m = Lazy()
    c = ember.compile(m)
    with pytest.warns(UserWarning, match="was changed during the call"):
        for _ in range(5):
            assert_same(arrays_of(c(ember.ones(3))), [np.full(3, 2, np.float32)])
    assert kinds(c) == ["compiled"]


def test_a_data_dependent_branch_in_a_training_loop_runs_eagerly_with_eager_results() -> None:
    class Gated(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(4, 3), nn.Linear(4, 3)
            self.drop = nn.Dropout(0.25)

        def forward(self, x):
            if x.mean() > 0:  # gate
                return self.drop(self.a(x))
            return self.b(x)

    m, caught = same_training(Gated, _batch(3, 4, 3), steps=6)
    assert kinds(m) == ["eager"] and len(caught) == 1
    assert caught[0].filename == __file__ and caught[0].lineno == _line_of(Gated.forward, "# gate")


# ----------------------------------------------------------------------------- the surface
def test_code_is_readable_python_with_guard_forward_and_backward() -> None:
    c = ember.compile(lambda x, w: ember.tanh(x @ w).sum())
    for _ in range(3):
        c(ember.randn(2, 3), _leaf(3, 4))
    code = c.code
    assert code.startswith("def guard(args, kwargs):")
    assert "def forward(x, w, _tensors):" in code and "def backward0(saved, grads):" in code
    assert "np.tanh(" in code and "# TanhBackward0" in code and "np.matmul(x, w)" in code and "# MmBackward0" in code
    compile(code, "<code>", "exec")  # valid Python
    assert ember.compile(lambda x: x).code == ""


def test_name_titles_the_compiled_region() -> None:
    c = ember.compile(lambda x: x * 2, name="scale region")
    for _ in range(3):
        assert c(ember.ones(2)).tolist() == [2, 2]
    assert "# ember.compile: scale region" in c.code and c.explain().startswith("ember.compile of scale region:")


def test_decorator_forms_and_methods() -> None:
    @ember.compile
    def a(x):
        return x + 1

    @ember.compile()
    def b(x):
        return x + 2

    @ember.compile(fullgraph=True, dynamic=True, mode="max-autotune", backend="eager")
    def c(x):
        return x + 3

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(ember.ones(2))

        @ember.compile
        def forward(self, x):
            return x * self.w

    net = Net()
    for _ in range(3):
        assert a(ember.zeros(2)).tolist() == [1, 1] and b(ember.zeros(2)).tolist() == [2, 2]
        assert c(ember.zeros(2)).tolist() == [3, 3] and net(ember.full((2,), 2.0)).tolist() == [2, 2]
    assert a.__name__ == "a" and kinds(a) == kinds(b) == kinds(c) == ["compiled"]
    assert kinds(Net.__dict__["forward"]) == ["compiled"]
    net.compile()  # Module.compile: in place, the forward compiled
    for _ in range(3):
        assert net(ember.full((2,), 3.0)).tolist() == [3, 3]


def test_optimized_module_mirrors_torchs() -> None:
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        opt = lib.compile(model)
        keys = list(opt.state_dict())
        assert keys == ["_orig_mod." + k for k in model.state_dict()]
        assert type(opt).__name__ == "OptimizedModule" and opt._orig_mod is model
        assert [n for n, _ in opt.named_parameters()] == ["_orig_mod." + n for n, _ in model.named_parameters()]
        opt.eval()
        assert model.training is False and opt.training is False
        opt.extra = 5  # written through to the original
        assert model.extra == 5 and len(opt) == 2
        assert isinstance(opt, lib._dynamo.eval_frame.OptimizedModule)


@pytest.mark.parametrize("kwargs", [dict(mode="fast"), dict(mode="default", options={"a": 1}),
                                    dict(backend="nope"), dict(mode="reduce-overhead"), dict(backend="eager"),
                                    dict(dynamic=False), dict(options={"max_autotune": True})])
def test_compile_arguments_are_checked_as_torchs(kwargs) -> None:
    def outcome(lib):
        try:
            lib.compile(lambda x: x, **kwargs)
            return "ok"
        except Exception as e:  # noqa: BLE001 - comparing torch's refusal
            return type(e).__name__, str(e).split(",")[0]
    assert outcome(ember) == outcome(torch)


def test_disable_returns_the_model_itself_and_none_is_refused() -> None:
    model = nn.Linear(2, 2)
    for lib in (ember, torch):
        assert lib.compile(model, disable=True) is model or lib is torch
        with pytest.raises(RuntimeError, match="Model can't be None"):
            lib.compile()(None)


def test_dynamo_helpers_act_on_compiled_callables() -> None:
    def f(x):
        return x * (2 if ember.compiler.is_compiling() else 3)  # the traced path is the compiled one, as torch's

    c = ember.compile(f)
    assert [c(ember.ones(1)).item() for _ in range(3)] == [2, 2, 2] and f(ember.ones(1)).item() == 3
    assert not ember.compiler.is_compiling() and not ember._dynamo.is_compiling()
    ember._dynamo.reset()
    assert c._cache == []
    with ember.compiler.set_stance("force_eager"):
        assert c(ember.ones(1)).item() == 3
    assert c._cache == []
    for _ in range(3):
        c(ember.ones(2))
    with ember.compiler.set_stance("fail_on_recompile"):
        c(ember.ones(2))
        with pytest.raises(RuntimeError, match="fail_on_recompile"):
            c(ember.ones(3))
    with ember.compiler.set_stance("eager_on_recompile"):
        assert c(ember.ones(4)).tolist() == [3] * 4  # run eagerly: not compiling
    assert len(c._cache) == 1
    out = ember._dynamo.explain(lambda x: (x * 2).sum().item())(ember.ones(2))
    assert out.graph_break_count == 1 and "item()" in out.break_reasons[0] and "Graph Break Count: 1" in str(out)
