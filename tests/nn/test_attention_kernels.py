"""torch.nn.attention against torch: sdpa_kernel and SDPBackend (the switches, their restoration, priorities, the
refusal when no CPU kernel is left) and attention.bias (CausalBias / causal_upper_left / causal_lower_right through
scaled_dot_product_attention: values, gradients, printed form, warnings and errors)."""
import importlib
import warnings

import numpy as np
import pytest

from oracle import check, ember, same_error, torch


def _attn(lib):
    return importlib.import_module(lib.__name__ + ".nn.attention")


def _bias(lib):
    return importlib.import_module(lib.__name__ + ".nn.attention.bias")


def _switches(lib):
    c = lib.backends.cuda
    return (c.flash_sdp_enabled(), c.math_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.cudnn_sdp_enabled())


@pytest.mark.parametrize("names", [["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION"],
                                   ["EFFICIENT_ATTENTION", "MATH"], ["OVERRIDEABLE"], ["MATH", "MATH"]])
def test_sdpa_kernel_switches_and_refusals(names):
    q = np.random.default_rng(0).standard_normal((2, 3, 4, 8)).astype(np.float32)
    k = np.random.default_rng(1).standard_normal((2, 3, 6, 8)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        A = _attn(lib)
        backends = [getattr(A.SDPBackend, n) for n in names]
        before = (_switches(lib), A._cur_sdpa_kernel_backends())
        with A.sdpa_kernel(backends if len(backends) > 1 else backends[0]) as ctx:
            assert ctx == {}
            inside = (_switches(lib), A._cur_sdpa_kernel_backends())
            try:
                out = lib.nn.functional.scaled_dot_product_attention(lib.tensor(q), lib.tensor(k), lib.tensor(k))
                err = None
            except RuntimeError as e:
                out, err = None, str(e)
        assert (_switches(lib), A._cur_sdpa_kernel_backends()) == before  # restored
        results.append((str(inside), err, None if out is None else out.numpy()))
    (ei, ee, eo), (ti, te, to) = results
    assert ei == ti and ee == te
    if to is not None:
        np.testing.assert_allclose(eo, to, atol=1e-5)


def test_sdpa_kernel_priority_and_argument_check():
    for lib in (ember, torch):
        A = _attn(lib)
        with A.sdpa_kernel([A.SDPBackend.MATH, A.SDPBackend.FLASH_ATTENTION], set_priority=True):
            inner = [int(b) for b in A._cur_sdpa_kernel_backends(with_priority=True)]
        assert inner == [0, 1]
        assert [int(b) for b in A._cur_sdpa_kernel_backends(with_priority=True)] == [1, 2, 0, 3, 4]
        assert A.WARN_FOR_UNFUSED_KERNELS is False
        assert A.SDPBackend.__module__ == f"{lib.__name__}.nn.attention" and str(A.SDPBackend.MATH) == "SDPBackend.MATH"
        assert [int(getattr(A.SDPBackend, n)) for n in ("ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION",
                                                         "CUDNN_ATTENTION", "OVERRIDEABLE")] == [-1, 0, 1, 2, 3, 4]

    def bad(lib):
        with _attn(lib).sdpa_kernel("math"):
            pass

    same_error(bad)


@pytest.mark.parametrize("variant,lq,lkv", [("upper_left", 4, 6), ("lower_right", 4, 6), ("lower_right", 5, 5),
                                            ("upper_left", 6, 4)])
def test_causal_bias_attention(variant, lq, lkv):
    rng = np.random.default_rng(lq * 10 + lkv)
    q, k, v = rng.standard_normal((2, 3, lq, 8)), rng.standard_normal((2, 3, lkv, 8)), rng.standard_normal((2, 3, lkv, 8))

    def fn(lib, q, k, v):
        bias = getattr(_bias(lib), "causal_" + variant)(lq, lkv)
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)

    def math_fn(lib, q, k, v):  # torch's default CPU kernel has no second derivative; its math kernel has
        with _attn(lib).sdpa_kernel(_attn(lib).SDPBackend.MATH):
            return fn(lib, q, k, v)

    check(fn, q, k, v)
    check(math_fn, q, k, v, gradgrad=True)
    for lib in (ember, torch):
        b = getattr(_bias(lib), "causal_" + variant)(lq, lkv)
        assert isinstance(b, lib.Tensor) and tuple(b.shape) == (int(b.variant), lq, lkv)
        assert b.seq_len_q == lq and b.seq_len_kv == lkv
    eb, tb = (getattr(_bias(lib), "causal_" + variant)(lq, lkv) for lib in (ember, torch))
    assert repr(eb) == repr(tb)
    np.testing.assert_array_equal(eb._materialize().numpy(), tb._materialize().numpy())


def test_causal_bias_warnings_and_errors():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs in the output when "
                                             "seq_len_q > seq_len_kv!"):
            _bias(lib).causal_lower_right(5, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _bias(lib).causal_upper_left(5, 3)
        assert int(_bias(lib).CausalVariant.UPPER_LEFT) == 1 and int(_bias(lib).CausalVariant.LOWER_RIGHT) == 2
    same_error(lambda lib: _bias(lib).causal_upper_left(3))
    same_error(lambda lib: _bias(lib).causal_lower_right(3, 4, 5))
    same_error(lambda lib: _bias(lib).CausalBias(1, 3, 4))
    same_error(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.ones(1, 3, 4), lib.ones(1, 3, 4), lib.ones(1, 3, 4), attn_mask=_bias(lib).causal_upper_left(3, 3),
        is_causal=True))
