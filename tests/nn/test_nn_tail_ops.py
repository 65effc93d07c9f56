"""The nn tail's computing names against torch: conv_tbc, nn.grad's convolution gradients, CrossMapLRN2d,
linear_cross_entropy / LinearCrossEntropyLoss / LinearCrossEntropyOptions (values, gradients, errors, warnings)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_close, check, ember, same_error, torch


# ---------------------------------------------------------------------------------------------- conv_tbc
@pytest.mark.parametrize("t,b,cin,cout,k,pad", [(7, 2, 3, 4, 3, 0), (5, 1, 2, 3, 3, 1), (6, 3, 4, 2, 1, 0),
                                                 (5, 2, 3, 4, 3, -1), (4, 2, 2, 2, 5, 2), (2, 2, 3, 4, 3, 0),
                                                 (5, 2, 3, 4, 2, 3)])
def test_conv_tbc_matches_torch(t, b, cin, cout, k, pad):
    rng = np.random.default_rng(t * 7 + k)
    x = rng.standard_normal((t, b, cin))
    w = rng.standard_normal((k, cin, cout))
    bias = rng.standard_normal(cout)
    check(lambda lib, x, w, bias: lib.conv_tbc(x, w, bias, pad), x, w, bias, gradgrad=True)
    check(lambda lib, x, w, bias: lib.nn.functional.conv_tbc(x, w, bias, pad=pad), x.astype(np.float32),
          w.astype(np.float32), bias.astype(np.float32))


CONV_TBC_ERRORS = {
    "bias size": lambda lib, x, w, b: lib.conv_tbc(x, w, b[:2]),
    "2-d input": lambda lib, x, w, b: lib.conv_tbc(x[0], w, b),
    "channels": lambda lib, x, w, b: lib.conv_tbc(x, w[:, :2], b),
    "2-d weight": lambda lib, x, w, b: lib.conv_tbc(x, w[0], b),
    "2-d bias": lambda lib, x, w, b: lib.conv_tbc(x, w, b[None]),
    "negative length": lambda lib, x, w, b: lib.conv_tbc(x, w, b, -3),
    "dtype": lambda lib, x, w, b: lib.conv_tbc(x.double(), w, b),
    "no bias": lambda lib, x, w, b: lib.conv_tbc(x, w, None),
    "float pad": lambda lib, x, w, b: lib.conv_tbc(x, w, b, 1.5),
}


@pytest.mark.parametrize("fn", list(CONV_TBC_ERRORS.values()), ids=list(CONV_TBC_ERRORS))
def test_conv_tbc_errors(fn):
    same_error(lambda lib: fn(lib, lib.ones(5, 2, 3), lib.ones(3, 3, 4), lib.ones(4)))


# ---------------------------------------------------------------------------------------------- nn.grad
GEOMETRIES = [dict(), dict(stride=2, padding=1), dict(dilation=2, groups=2), dict(stride=(2, 1), padding=(0, 2)),
              dict(stride=3, padding=1, dilation=1, groups=1)]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("geo", range(len(GEOMETRIES)))
def test_conv_input_and_weight_gradients(nd, geo):
    g = dict(GEOMETRIES[geo])
    if nd != 2 and isinstance(g.get("stride"), tuple):
        g["stride"], g["padding"] = g["stride"][0], g["padding"][0]
    groups = g.get("groups", 1)
    rng = np.random.default_rng(nd * 10 + geo)
    x = rng.standard_normal((2, 4) + (7, 6, 5)[:nd])
    w = rng.standard_normal((6, 4 // groups) + (3, 2, 3)[:nd])
    conv = getattr(torch.nn.functional, f"conv{nd}d")
    go = rng.standard_normal(tuple(conv(torch.tensor(x), torch.tensor(w), **g).shape))
    check(lambda lib, w, go: getattr(lib.nn.grad, f"conv{nd}d_input")(x.shape, w, go, **g), w, go, gradgrad=True)
    check(lambda lib, x, go: getattr(lib.nn.grad, f"conv{nd}d_weight")(x, w.shape, go, **g), x, go, gradgrad=True)


def test_conv_gradients_under_no_grad_and_bad_shapes():
    for lib in (ember, torch):
        w = lib.ones(3, 2, 2, 2, requires_grad=True)
        with lib.no_grad():
            r = lib.nn.grad.conv2d_input((1, 2, 4, 4), w, lib.ones(1, 3, 3, 3))
        assert not r.requires_grad
    same_error(lambda lib: lib.nn.grad.conv2d_input((1, 2, 4, 4), lib.ones(3, 2, 2, 2), lib.ones(1, 3, 2, 2)),
               match_words=[])


# ---------------------------------------------------------------------------------------------- CrossMapLRN2d
@pytest.mark.parametrize("size", [2, 3, 4, 5, 7])
@pytest.mark.parametrize("c", [1, 3, 8])
def test_cross_map_lrn2d_matches_torch_quirks_included(size, c):
    x = np.random.default_rng(size * 10 + c).standard_normal((2, c, 3, 2))
    check(lambda lib, x: lib.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.75, k=1.5)(x), x)
    check(lambda lib, x: lib.nn.CrossMapLRN2d(size)(x), x.astype(np.float32))


def test_cross_map_lrn2d_errors_and_repr():
    same_error(lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)))
    same_error(lambda lib: lib.nn.CrossMapLRN2d(1)(lib.ones(1, 3, 2, 2, requires_grad=True)).sum().backward())
    assert repr(ember.nn.CrossMapLRN2d(5, 1e-3)) == repr(torch.nn.CrossMapLRN2d(5, 1e-3))
    y = ember.nn.CrossMapLRN2d(3)(ember.ones(1, 2, 2, 2, requires_grad=True))
    assert type(y.grad_fn).__name__ == "CrossMapLRN2dBackward"


# ---------------------------------------------------------------------------------------------- linear_cross_entropy
def _targets(rng, lib_shape, c, kind, ignore=-100):
    if kind == "index":
        t = rng.integers(0, c, lib_shape)
        if t.size > 2:
            t.flat[1] = ignore
        return t
    p = rng.random((lib_shape[0], c) + lib_shape[1:]) if lib_shape else rng.random(c)
    return (p / p.sum(axis=1 if lib_shape else 0, keepdims=True))


LCE_CASES = [  # (batch, out_features, bias, kind, kwargs)
    ((5,), (), False, "index", {}),
    ((5,), (), True, "index", {"reduction": "sum"}),
    ((4,), (), True, "index", {"reduction": "none", "ignore_index": 1}),
    ((), (), False, "index", {}),
    ((3,), (2, 3), True, "index", {"label_smoothing": 0.2}),
    ((4,), (), False, "prob", {}),
    ((3,), (2,), True, "prob", {"reduction": "none"}),
    ((6,), (), True, "index", {"weight": True, "label_smoothing": 0.1}),
]


@pytest.mark.parametrize("case", range(len(LCE_CASES)))
def test_linear_cross_entropy_matches_torch(case):
    batch, out_features, has_bias, kind, kw = LCE_CASES[case]
    rng = np.random.default_rng(case)
    c, fin = 5, 4
    x = rng.standard_normal(batch + (fin,))
    w = rng.standard_normal((c, *out_features, fin))
    bias = rng.standard_normal((c, *out_features))
    tshape = batch + out_features
    target = _targets(rng, tshape, c, kind, kw.get("ignore_index", -100))
    cw = rng.random(c) + 0.5

    def run(lib, x, w, bias):
        tgt = lib.tensor(target)
        extra = dict(kw)
        if extra.pop("weight", False):
            extra["weight"] = lib.tensor(cw)
        return lib.nn.functional.linear_cross_entropy(x, w, tgt, linear_bias=bias if has_bias else None, **extra)
    check(run, x, w, bias, gradgrad=True)


def test_linear_cross_entropy_module():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    target = rng.integers(0, 10, (2, 4, 3))
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        m = lib.nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3), bias=True, label_smoothing=0.1)
        with lib.no_grad():
            m.linear.weight.copy_(lib.tensor(np.linspace(-1, 1, 600).reshape(120, 5).astype(np.float32)))
            m.linear.bias.copy_(lib.tensor(np.linspace(0, 1, 120).astype(np.float32)))
        loss = m(lib.tensor(x), lib.tensor(target))
        loss.backward()
        out.append((loss, m.linear.weight.grad, m.linear.bias.grad, repr(m), list(m.state_dict())))
    for a, b in zip(out[0][:3], out[1][:3]):
        assert_close(a, b)
    assert out[0][3:] == out[1][3:]


LCE_ERRORS = {
    "3-d input": lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 2, 3), lib.ones(4, 3),
                                                                     lib.zeros(2, dtype=lib.long)),
    "1-d weight": lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(3),
                                                                      lib.zeros(2, dtype=lib.long)),
    "in_features": lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(4, 2),
                                                                       lib.zeros(2, dtype=lib.long)),
    "bias shape": lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(4, 3),
                                                                      lib.zeros(2, dtype=lib.long),
                                                                      linear_bias=lib.ones(3)),
    "K-dim unbatched": lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(3), lib.ones(4, 2, 3),
                                                                           lib.zeros(2, dtype=lib.long)),
    "probabilities + ignore_index": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.ones(2, 3), lib.ones(4, 3), lib.ones(2, 4) / 4, ignore_index=0),
    "module weight shape": lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, weight=lib.ones(3)),
    "module smoothing": lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5),
    "acc_policy": lambda lib: lib.nn.LinearCrossEntropyOptions(acc_policy="fast"),
    "chunking_method": lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
    "batch_chunk_size": lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
    "acc_dtype": lambda lib: lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.int32),
    "acc_dtype vs input": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.ones(8, 4), lib.ones(100, 4), lib.zeros(8, dtype=lib.long),
        options=lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.float64)),
    "chunk size conflict": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.ones(8, 4), lib.ones(100, 4), lib.zeros(8, dtype=lib.long),
        options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")),
}


@pytest.mark.parametrize("fn", list(LCE_ERRORS.values()), ids=list(LCE_ERRORS))
def test_linear_cross_entropy_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("opts", [dict(), dict(batch_chunk_size=2, chunking_method=None),
                                  dict(chunking_method="aspect_ratio:2", acc_policy="accurate"),
                                  dict(allow_retain_graph=True, acc_dtype="float32")], ids=str)
@pytest.mark.parametrize("call", ["chunked", "label_smoothing", "float target"])
def test_linear_cross_entropy_options(opts, call):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((9, 4)).astype(np.float32)
    tgt = rng.integers(0, 9, 6)
    got = []
    for lib in (ember, torch):
        kw = {k: getattr(lib, v) if k == "acc_dtype" else v for k, v in opts.items()}
        options = lib.nn.LinearCrossEntropyOptions(**kw)
        args = dict(linear_bias=None, options=options)
        t = lib.tensor(tgt)
        if call == "label_smoothing":
            args["label_smoothing"] = 0.1
        elif call == "float target":
            t = lib.nn.functional.one_hot(t, 9).float()
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = lib.nn.functional.linear_cross_entropy(xt, wt, t, **args)
        loss.backward()
        got.append((loss, xt.grad, wt.grad, [str(c.message) for c in caught], repr(options),
                    repr(options._adjust(6, 4, 9, lib.float32, lib.device("cpu")))))
    (e, t) = got
    for a, b in zip(e[:3], t[:3]):
        assert_close(a, b)
    assert e[3:] == t[3:]
