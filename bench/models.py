"""The model workloads W6-W8, each written once with ``lib.nn`` modules and ``lib.optim`` (torch style).

Same contract as ``workloads.py``: ``data(sizes)`` makes every parameter (named as in the model's
``named_parameters()``) and the batch from NumPy seed 0; ``build(lib, arrays, sizes, compile=False)`` builds the
model, copies the parameters in, and returns ``(step, grads)``: ``step()`` is one training step (zero_grad,
forward, backward, optimizer step) returning the loss, ``grads()`` the last step's gradients by name. With
``compile=True`` the model is called through ``lib.compile(model)`` (the rest of the step unchanged).
Only ember and torch run these (no hand-written floor or peers).

This module imports only NumPy, so a runner can fix thread counts before anything loads a BLAS.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["MODEL_BUILDERS", "MODEL_DATA"]

_DATA_KEYS = frozenset({"idx", "targets", "x", "labels"})


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _uniform(r, fan_in: int, shape) -> np.ndarray:
    bound = 1.0 / math.sqrt(fan_in)
    return r.uniform(-bound, bound, shape).astype(np.float32)


def _linear(r, out: dict, name: str, fan_in: int, fan_out: int, bias: bool = True) -> None:
    out[f"{name}.weight"] = _uniform(r, fan_in, (fan_out, fan_in))
    if bias:
        out[f"{name}.bias"] = _uniform(r, fan_in, fan_out)


def _norm(r, out: dict, name: str, n: int) -> None:
    """Norm affine parameters near their defaults (ones, zeros), perturbed so every gradient path counts."""
    out[f"{name}.weight"] = (1 + 0.1 * r.standard_normal(n)).astype(np.float32)
    out[f"{name}.bias"] = (0.1 * r.standard_normal(n)).astype(np.float32)


def _load(lib, model, arrays: dict) -> dict:
    """Copy the workload's parameters into ``model``; returns its named parameters."""
    params = dict(model.named_parameters())
    given = {k for k in arrays if k not in _DATA_KEYS}
    if set(params) != given:
        raise KeyError(f"parameters {sorted(set(params) ^ given)} differ between the model and the data")
    with lib.no_grad():
        for k, p in params.items():
            p.copy_(lib.tensor(arrays[k]))
    return params


def _trainer(lib, model, opt, forward, clip: float | None = None):
    params = dict(model.named_parameters())

    def step():
        opt.zero_grad(set_to_none=True)
        loss = forward()
        loss.backward()
        if clip is not None:
            lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss

    return step, lambda: {k: p.grad.detach().cpu().numpy().copy() for k, p in params.items()}


# ----------------------------------------------------------------------------- W6: small GPT
def _gpt_data(sizes: dict) -> dict:
    r = _rng()
    v, t, b, c, n_layer = (sizes[k] for k in ("vocab", "block", "batch", "n_embd", "n_layer"))
    out = {"idx": r.integers(0, v, (b, t)).astype(np.int64), "targets": r.integers(0, v, (b, t)).astype(np.int64),
           "wte.weight": r.standard_normal((v, c)).astype(np.float32),
           "wpe.weight": r.standard_normal((t, c)).astype(np.float32)}
    for i in range(n_layer):
        h = f"h.{i}"
        _norm(r, out, f"{h}.ln_1", c)
        _linear(r, out, f"{h}.attn.c_attn", c, 3 * c)
        _linear(r, out, f"{h}.attn.c_proj", c, c)
        _norm(r, out, f"{h}.ln_2", c)
        _linear(r, out, f"{h}.mlp.c_fc", c, 4 * c)
        _linear(r, out, f"{h}.mlp.c_proj", 4 * c, c)
    _norm(r, out, "ln_f", c)
    _linear(r, out, "lm_head", c, v, bias=False)
    return out


def _gpt_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    nn, F = lib.nn, lib.nn.functional
    v, block, c, n_head, n_layer = (sizes[k] for k in ("vocab", "block", "n_embd", "n_head", "n_layer"))

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(c, 3 * c)
            self.c_proj = nn.Linear(c, c)
            self.register_buffer("bias", lib.tril(lib.ones(block, block)).view(1, 1, block, block),
                                 persistent=False)

        def forward(self, x):
            b, t, ch = x.size()
            q, k, val = self.c_attn(x).split(c, dim=2)
            k = k.view(b, t, n_head, ch // n_head).transpose(1, 2)
            q = q.view(b, t, n_head, ch // n_head).transpose(1, 2)
            val = val.view(b, t, n_head, ch // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ val
            y = y.transpose(1, 2).contiguous().view(b, t, ch)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(c, 4 * c)
            self.c_proj = nn.Linear(4 * c, c)

        def forward(self, x):
            x = self.c_fc(x)
            x = 0.5 * x * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * lib.pow(x, 3.0))))
            return self.c_proj(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(c)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(c)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(v, c)
            self.wpe = nn.Embedding(block, c)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(c)
            self.lm_head = nn.Linear(c, v, bias=False)

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    model = GPT()
    _load(lib, model, arrays)
    opt = lib.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    idx, targets = lib.tensor(arrays["idx"]), lib.tensor(arrays["targets"])
    m = lib.compile(model) if compile else model
    return _trainer(lib, model, opt, lambda: m(idx, targets))


# ----------------------------------------------------------------------------- W7: LSTM language model
def _lstm_data(sizes: dict) -> dict:
    r = _rng()
    v, e, h, n_layers, b, t = (sizes[k] for k in ("vocab", "emb", "hidden", "layers", "batch", "seq"))
    out = {"idx": r.integers(0, v, (b, t)).astype(np.int64), "targets": r.integers(0, v, (b, t)).astype(np.int64),
           "encoder.weight": r.uniform(-0.1, 0.1, (v, e)).astype(np.float32)}
    for layer in range(n_layers):
        fan = e if layer == 0 else h
        out[f"rnn.weight_ih_l{layer}"] = _uniform(r, h, (4 * h, fan))
        out[f"rnn.weight_hh_l{layer}"] = _uniform(r, h, (4 * h, h))
        out[f"rnn.bias_ih_l{layer}"] = _uniform(r, h, 4 * h)
        out[f"rnn.bias_hh_l{layer}"] = _uniform(r, h, 4 * h)
    _linear(r, out, "decoder", h, v)
    return out


def _lstm_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    nn, F = lib.nn, lib.nn.functional
    v, e, h, n_layers = (sizes[k] for k in ("vocab", "emb", "hidden", "layers"))

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(v, e)
            self.rnn = nn.LSTM(e, h, num_layers=n_layers, batch_first=True)
            self.decoder = nn.Linear(h, v)

        def forward(self, idx, targets):
            out, _ = self.rnn(self.encoder(idx))
            logits = self.decoder(out)
            return F.cross_entropy(logits.reshape(-1, v), targets.reshape(-1))

    model = LanguageModel()
    _load(lib, model, arrays)
    opt = lib.optim.SGD(model.parameters(), lr=1.0)
    idx, targets = lib.tensor(arrays["idx"]), lib.tensor(arrays["targets"])
    m = lib.compile(model) if compile else model
    return _trainer(lib, model, opt, lambda: m(idx, targets), clip=0.25)


# ----------------------------------------------------------------------------- W8: residual CNN with BatchNorm
def _resnet_data(sizes: dict) -> dict:
    r = _rng()
    n, c_in, hw, c, k, n_blocks = (sizes[s] for s in ("batch", "in_ch", "hw", "channels", "classes", "blocks"))
    out = {"x": r.standard_normal((n, c_in, hw, hw)).astype(np.float32),
           "labels": r.integers(0, k, n).astype(np.int64),
           "conv1.weight": _uniform(r, c_in * 9, (c, c_in, 3, 3))}
    _norm(r, out, "bn1", c)
    for i in range(n_blocks):
        for j in (1, 2):
            out[f"layer.{i}.conv{j}.weight"] = _uniform(r, c * 9, (c, c, 3, 3))
            _norm(r, out, f"layer.{i}.bn{j}", c)
    _linear(r, out, "fc", c, k)
    return out


def _resnet_build(lib, arrays: dict, sizes: dict, compile: bool = False):
    nn, F = lib.nn, lib.nn.functional
    c_in, c, k, n_blocks = (sizes[s] for s in ("in_ch", "channels", "classes", "blocks"))

    class BasicBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + x)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.layer = nn.Sequential(*[BasicBlock() for _ in range(n_blocks)])
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(c, k)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            x = self.pool(self.layer(x))
            return self.fc(lib.flatten(x, 1))

    model = ResNet()
    model.train()
    _load(lib, model, arrays)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x, labels = lib.tensor(arrays["x"]), lib.tensor(arrays["labels"])
    m = lib.compile(model) if compile else model
    return _trainer(lib, model, opt, lambda: F.cross_entropy(m(x), labels))


MODEL_DATA = {"W6": _gpt_data, "W7": _lstm_data, "W8": _resnet_data}
MODEL_BUILDERS = {"W6": _gpt_build, "W7": _lstm_build, "W8": _resnet_build}
