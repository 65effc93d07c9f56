"""torch.autocast on the CPU against torch 2.13: each op's output dtype, values and gradients inside an autocast
region (bfloat16 and float16), nesting, the decorator form, the state queries, warnings and custom_fwd/custom_bwd."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from oracle import BF16, check, ember, lib_tensor, same_error, torch


def _r(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _pos(rng, *shape):
    return rng.uniform(0.5, 2.0, shape).astype(np.float32)


def _spd(rng, n=3):
    a = rng.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


def _F(lib):
    return lib.nn.functional


# name: (fn(lib, *tensors), arrays maker, compare gradients)
AUTOCAST_OPS = {
    # lower_precision_fp
    "mm": (lambda lib, a, b: lib.mm(a, b), lambda r: (_r(r, 3, 4), _r(r, 4, 5)), True),
    "matmul @": (lambda lib, a, b: a @ b, lambda r: (_r(r, 2, 3, 4), _r(r, 4, 5)), True),
    "matmul 1-d": (lambda lib, a, b: lib.matmul(a, b), lambda r: (_r(r, 4), _r(r, 4, 3)), True),
    "Tensor.matmul": (lambda lib, a, b: a.matmul(b), lambda r: (_r(r, 3, 4), _r(r, 4)), True),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), lambda r: (_r(r, 2, 3, 4), _r(r, 2, 4, 5)), True),
    "Tensor.bmm": (lambda lib, a, b: a.bmm(b), lambda r: (_r(r, 2, 3, 4), _r(r, 2, 4, 5)), True),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b), lambda r: (_r(r, 3, 5), _r(r, 3, 4), _r(r, 4, 5)), True),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.5),
                lambda r: (_r(r, 2, 3, 5), _r(r, 2, 3, 4), _r(r, 2, 4, 5)), True),
    "addbmm": (lambda lib, c, a, b: lib.addbmm(c, a, b), lambda r: (_r(r, 3, 5), _r(r, 2, 3, 4), _r(r, 2, 4, 5)),
               True),
    "linear": (lambda lib, x, w, b: _F(lib).linear(x, w, b), lambda r: (_r(r, 4, 3), _r(r, 5, 3), _r(r, 5)), True),
    "linear 3-d": (lambda lib, x, w, b: _F(lib).linear(x, w, b), lambda r: (_r(r, 2, 4, 3), _r(r, 5, 3), _r(r, 5)),
                   True),
    "linear no bias": (lambda lib, x, w: _F(lib).linear(x, w), lambda r: (_r(r, 4, 3), _r(r, 5, 3)), True),
    "conv1d": (lambda lib, x, w, b: _F(lib).conv1d(x, w, b, padding=1),
               lambda r: (_r(r, 2, 3, 7), _r(r, 4, 3, 3), _r(r, 4)), True),
    "conv2d": (lambda lib, x, w, b: _F(lib).conv2d(x, w, b, stride=2),
               lambda r: (_r(r, 1, 2, 6, 6), _r(r, 3, 2, 3, 3), _r(r, 3)), True),
    "torch.conv2d": (lambda lib, x, w: lib.conv2d(x, w), lambda r: (_r(r, 1, 2, 5, 5), _r(r, 3, 2, 3, 3)), True),
    "conv_transpose2d": (lambda lib, x, w: _F(lib).conv_transpose2d(x, w),
                         lambda r: (_r(r, 1, 2, 4, 4), _r(r, 2, 3, 3, 3)), True),
    "conv_transpose1d": (lambda lib, x, w: _F(lib).conv_transpose1d(x, w),
                         lambda r: (_r(r, 1, 2, 5), _r(r, 2, 3, 3)), True),
    "prelu": (lambda lib, x, w: _F(lib).prelu(x, w), lambda r: (_r(r, 2, 3, 4), _pos(r, 3)), True),
    "sdpa": (lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v),
             lambda r: (_r(r, 2, 3, 4), _r(r, 2, 5, 4), _r(r, 2, 5, 4)), True),
    "linalg.vecdot": (lambda lib, a, b: lib.linalg.vecdot(a, b), lambda r: (_r(r, 3, 4), _r(r, 3, 4)), True),
    "nn.Linear": (lambda lib, x: _module(lib, "Linear", 3, 4)(x), lambda r: (_r(r, 2, 3),), True),
    # fp32 (bfloat16 inputs come up to float32 too)
    "prod": (lambda lib, x: lib.prod(x), lambda r: (_pos(r, 5),), True),
    "prod bf16": (lambda lib, x: x.prod(1), lambda r: (_pos(r, 2, 4).astype(BF16),), True),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), lambda r: (_r(r, 3, 4), _r(r, 2, 4)), True),
    "trace": (lambda lib, x: lib.trace(x), lambda r: (_r(r, 3, 3),), True),
    "cross_entropy": (lambda lib, x: _F(lib).cross_entropy(x, lib.tensor([1, 0, 2])), lambda r: (_r(r, 3, 4),), True),
    "cross_entropy bf16": (lambda lib, x: _F(lib).cross_entropy(x, lib.tensor([1, 0])),
                           lambda r: (_r(r, 2, 3).astype(BF16),), True),
    "nll_loss": (lambda lib, x: _F(lib).nll_loss(x, lib.tensor([1, 0, 2])), lambda r: (_r(r, 3, 4),), True),
    "mse_loss": (lambda lib, a, b: _F(lib).mse_loss(a, b), lambda r: (_r(r, 3, 4), _r(r, 3, 4)), True),
    "mse_loss bf16": (lambda lib, a, b: _F(lib).mse_loss(a, b),
                      lambda r: (_r(r, 3, 4).astype(BF16), _r(r, 3, 4)), True),
    "l1_loss": (lambda lib, a, b: _F(lib).l1_loss(a, b), lambda r: (_r(r, 3, 4), _r(r, 3, 4)), True),
    "smooth_l1_loss": (lambda lib, a, b: _F(lib).smooth_l1_loss(a, b), lambda r: (_r(r, 5), _r(r, 5)), True),
    "huber_loss": (lambda lib, a, b: _F(lib).huber_loss(a, b), lambda r: (_r(r, 5), _r(r, 5)), True),
    "kl_div": (lambda lib, a, b: _F(lib).kl_div(a, b, reduction="batchmean"), lambda r: (_r(r, 3, 4), _pos(r, 3, 4)),
               True),
    "bce_with_logits": (lambda lib, a, b: _F(lib).binary_cross_entropy_with_logits(a, b),
                        lambda r: (_r(r, 4), _pos(r, 4) / 2), True),
    "binary_cross_entropy": (lambda lib, a, b: _F(lib).binary_cross_entropy(lib.sigmoid(a), b),
                             lambda r: (_r(r, 4), _pos(r, 4) / 2), True),
    "margin_ranking_loss": (lambda lib, a, b: _F(lib).margin_ranking_loss(a, b, lib.tensor([1.0, -1.0, 1.0])),
                            lambda r: (_r(r, 3), _r(r, 3)), True),
    "soft_margin_loss": (lambda lib, a: _F(lib).soft_margin_loss(a, lib.tensor([1.0, -1.0, 1.0])),
                         lambda r: (_r(r, 3),), True),
    "hinge_embedding_loss": (lambda lib, a: _F(lib).hinge_embedding_loss(a, lib.tensor([1.0, -1.0, 1.0])),
                             lambda r: (_r(r, 3),), True),
    "poisson_nll_loss": (lambda lib, a, b: _F(lib).poisson_nll_loss(a, b), lambda r: (_r(r, 4), _pos(r, 4)), True),
    "cosine_embedding_loss": (lambda lib, a, b: _F(lib).cosine_embedding_loss(a, b, lib.tensor([1.0, -1.0])),
                              lambda r: (_r(r, 2, 3), _r(r, 2, 3)), True),
    "triplet_margin_loss": (lambda lib, a, b, c: _F(lib).triplet_margin_loss(a, b, c),
                            lambda r: (_r(r, 2, 3), _r(r, 2, 3), _r(r, 2, 3)), True),
    "multi_margin_loss": (lambda lib, a: _F(lib).multi_margin_loss(a, lib.tensor([1, 0])), lambda r: (_r(r, 2, 3),),
                          True),
    "multilabel_margin_loss": (lambda lib, a: _F(lib).multilabel_margin_loss(a, lib.tensor([[1, -1, 0]])),
                               lambda r: (_r(r, 1, 3),), True),
    "quantile": (lambda lib, x: lib.quantile(x, 0.3), lambda r: (_r(r, 7),), True),
    "inverse": (lambda lib, x: lib.inverse(x), lambda r: (_spd(r),), True),
    "linalg.inv": (lambda lib, x: lib.linalg.inv(x), lambda r: (_spd(r),), True),
    "linalg.solve": (lambda lib, a, b: lib.linalg.solve(a, b), lambda r: (_spd(r), _r(r, 3, 2)), True),
    "linalg.cholesky": (lambda lib, x: lib.linalg.cholesky(x), lambda r: (_spd(r),), True),
    "cholesky_solve": (lambda lib, b, x: lib.cholesky_solve(b, lib.linalg.cholesky(x)),
                       lambda r: (_r(r, 3, 2), _spd(r)), True),
    "pinverse": (lambda lib, x: lib.pinverse(x), lambda r: (_spd(r),), True),
    "linalg.eigvalsh": (lambda lib, x: lib.linalg.eigvalsh(x), lambda r: (_spd(r),), True),
    "pad reflect": (lambda lib, x: _F(lib).pad(x, (1, 2), mode="reflect"), lambda r: (_r(r, 1, 2, 5),), True),
    "pad replicate 2-d": (lambda lib, x: _F(lib).pad(x, (1, 1, 2, 0), mode="replicate"),
                          lambda r: (_r(r, 1, 2, 3, 4),), True),
    "pad constant bf16": (lambda lib, x: _F(lib).pad(x, (1, 2)), lambda r: (_r(r, 2, 3).astype(BF16),), True),
    # promote
    "cat": (lambda lib, a, b: lib.cat([a, b]), lambda r: (_r(r, 2, 3), _r(r, 1, 3).astype(BF16)), True),
    "cat bf16": (lambda lib, a, b: lib.cat([a, b], 1), lambda r: (_r(r, 2, 3).astype(BF16), _r(r, 2, 1).astype(BF16)),
                 True),
    "cat f64": (lambda lib, a, b: lib.cat([a, b]), lambda r: (_r(r, 2, 3, dtype=np.float64), _r(r, 1, 3)), True),
    "stack": (lambda lib, a, b: lib.stack([a, b]), lambda r: (_r(r, 3).astype(BF16), _r(r, 3)), True),
    "index_copy": (lambda lib, a, b: a.index_copy(0, lib.tensor([2, 0]), b),
                   lambda r: (_r(r, 3, 2).astype(BF16), _r(r, 2, 2)), True),
    # not listed: as called (float32 in, float32 out; bfloat16 in, bfloat16 out; mixes promote)
    "softmax": (lambda lib, x: lib.softmax(x, -1), lambda r: (_r(r, 3, 4),), True),
    "softmax bf16": (lambda lib, x: lib.softmax(x, -1), lambda r: (_r(r, 3, 4).astype(BF16),), True),
    "gelu of linear": (lambda lib, x, w: _F(lib).gelu(_F(lib).linear(x, w)), lambda r: (_r(r, 2, 3), _r(r, 4, 3)),
                       True),
    "add mixed": (lambda lib, x, w, b: (x @ w) + b, lambda r: (_r(r, 2, 3), _r(r, 3, 4), _r(r, 4)), True),
    "sum of mm": (lambda lib, a, b: (a @ b).sum(), lambda r: (_r(r, 3, 4), _r(r, 4, 2)), True),
    "einsum": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), lambda r: (_r(r, 3, 4), _r(r, 4, 2)), True),
    "einsum i,i->": (lambda lib, a, b: lib.einsum("i,i->", a, b), lambda r: (_r(r, 4), _r(r, 4)), True),
    "einsum i,i->i": (lambda lib, a, b: lib.einsum("i,i->i", a, b), lambda r: (_r(r, 4), _r(r, 4)), True),
    "einsum ij,kj->ikj": (lambda lib, a, b: lib.einsum("ij,kj->ikj", a, b), lambda r: (_r(r, 2, 4), _r(r, 3, 4)), True),
    "einsum 3 operands": (lambda lib, a, b, c: lib.einsum("ij,ij,ij->i", a, b, c),
                          lambda r: (_r(r, 2, 3), _r(r, 2, 3), _r(r, 2, 3)), True),
    "einsum implicit": (lambda lib, a, b: lib.einsum("ij,jk", a, b), lambda r: (_r(r, 3, 4), _r(r, 4, 2)), True),
    "einsum one operand": (lambda lib, a: lib.einsum("ii->i", a), lambda r: (_r(r, 3, 3),), True),
    "inner 2-d": (lambda lib, a, b: lib.inner(a, b), lambda r: (_r(r, 3, 4), _r(r, 2, 4)), True),
    "inner 1-d": (lambda lib, a, b: lib.inner(a, b), lambda r: (_r(r, 4), _r(r, 4)), True),
    "tensordot": (lambda lib, a, b: lib.tensordot(a, b, 1), lambda r: (_r(r, 3, 4), _r(r, 4, 2)), True),
    "tensordot outer": (lambda lib, a, b: lib.tensordot(a, b, 0), lambda r: (_r(r, 3), _r(r, 2)), True),
    "tensordot full": (lambda lib, a, b: lib.tensordot(a, b, 1), lambda r: (_r(r, 4), _r(r, 4)), True),
    "multi_dot": (lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
                  lambda r: (_r(r, 3, 4), _r(r, 4, 2), _r(r, 2, 5)), True),
    "outer": (lambda lib, a, b: lib.outer(a, b), lambda r: (_r(r, 3), _r(r, 2)), True),
    "dot": (lambda lib, a, b: lib.dot(a, b), lambda r: (_r(r, 3), _r(r, 3)), True),
    "cosine_similarity": (lambda lib, a, b: lib.cosine_similarity(a, b), lambda r: (_r(r, 2, 3), _r(r, 2, 3)), True),
    "mv": (lambda lib, a, b: lib.mv(a, b), lambda r: (_r(r, 3, 4), _r(r, 4)), True),
    # torch's mixed-dtype norm kernels (a 16-bit activation, float32 parameters: the input's dtype out)
    "layer_norm of linear": (lambda lib, x, w, g, b: _F(lib).layer_norm(x @ w, (4,), g, b),
                             lambda r: (_r(r, 3, 5), _r(r, 5, 4), _pos(r, 4), _r(r, 4)), True),
    "nn.LayerNorm": (lambda lib, x, w: _module(lib, "LayerNorm", 4)(x @ w), lambda r: (_r(r, 3, 5), _r(r, 5, 4)),
                     True),
    "nn.BatchNorm1d": (lambda lib, x, w: _module(lib, "BatchNorm1d", 4)(x @ w), lambda r: (_r(r, 6, 5), _r(r, 5, 4)),
                       True),
    "nn.GroupNorm": (lambda lib, x, w: _module(lib, "GroupNorm", 2, 4)(x @ w), lambda r: (_r(r, 3, 5), _r(r, 5, 4)),
                     True),
    "nn.RMSNorm": (lambda lib, x, w: _module(lib, "RMSNorm", 4)(x @ w), lambda r: (_r(r, 3, 5), _r(r, 5, 4)), True),
    # recurrent layers: torch's LSTM and RNN run in the autocast dtype, its GRU casts a 16-bit input only, and its
    # LSTM/GRU cells are not autocast
    "nn.LSTM": (lambda lib, x: _module(lib, "LSTM", 3, 4, batch_first=True)(x)[0], lambda r: (_r(r, 2, 5, 3),), True),
    "nn.LSTM bf16": (lambda lib, x: _module(lib, "LSTM", 3, 4)(x)[1][1], lambda r: (_r(r, 5, 2, 3).astype(BF16),),
                     True),
    "nn.GRU": (lambda lib, x: _module(lib, "GRU", 3, 4)(x)[0], lambda r: (_r(r, 5, 2, 3),), True),
    "nn.GRU bf16": (lambda lib, x: _module(lib, "GRU", 3, 4)(x)[0], lambda r: (_r(r, 5, 2, 3).astype(BF16),), True),
    "nn.RNN": (lambda lib, x: _module(lib, "RNN", 3, 4)(x)[0], lambda r: (_r(r, 5, 2, 3),), True),
    "nn.LSTMCell": (lambda lib, x: _module(lib, "LSTMCell", 3, 4)(x)[0], lambda r: (_r(r, 2, 3),), True),
    "nn.GRUCell": (lambda lib, x: _module(lib, "GRUCell", 3, 4)(x), lambda r: (_r(r, 2, 3),), True),
    "nn.RNNCell": (lambda lib, x: _module(lib, "RNNCell", 3, 4)(x), lambda r: (_r(r, 2, 3),), True),
    "nn.MultiheadAttention": (lambda lib, x: _module(lib, "MultiheadAttention", 4, 2, batch_first=True)(x, x, x)[0],
                              lambda r: (_r(r, 2, 3, 4),), True),
    "nn.TransformerEncoderLayer": (lambda lib, x: _module(lib, "TransformerEncoderLayer", 4, 2, 8, dropout=0.0,
                                                          batch_first=True)(x), lambda r: (_r(r, 2, 3, 4),), True),
    "mm f64": (lambda lib, a, b: lib.mm(a, b), lambda r: (_r(r, 3, 4, dtype=np.float64), _r(r, 4, 2, dtype=np.float64)),
               True),
}


def _module(lib, name, *args, **kwargs):
    lib.manual_seed(0)
    m = getattr(lib.nn, name)(*args, **kwargs)
    # the same parameters in both libraries
    rng = np.random.default_rng(5)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def _in_autocast(fn, dtype_name):
    def run(lib, *ts):
        with lib.autocast("cpu", dtype=getattr(lib, dtype_name)):
            return fn(lib, *ts)
    return run


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(AUTOCAST_OPS))
def test_op_under_cpu_autocast_matches_torch(name, dtype_name) -> None:
    fn, make, grad = AUTOCAST_OPS[name]
    arrays = make(np.random.default_rng(0))
    if name in ("nn.LSTM", "nn.LSTM bf16") and dtype_name == "float16":
        pytest.skip("torch's oneDNN LSTM has no float16 kernel on this CPU (torch raises 'could not create a "
                    "primitive descriptor'), a property of the machine, not of autocast")
    try:
        _in_autocast(fn, dtype_name)(torch, *[lib_tensor(torch, a) for a in arrays])
    except RuntimeError:  # torch's promote rule refuses bfloat16 inputs in a float16 region
        same_error(lambda lib: _in_autocast(fn, dtype_name)(lib, *[lib_tensor(lib, a) for a in arrays]))
        return
    tol = dict(rtol=3e-2, atol=3e-2) if dtype_name == "bfloat16" else dict(rtol=5e-3, atol=5e-3)
    if name == "nn.MultiheadAttention":
        # torch projects q, k, v in one packed GEMM, ember in three: the input's gradient sums three 16-bit
        # products where torch rounds one
        tol = dict(rtol=0.15, atol=0.1) if dtype_name == "bfloat16" else dict(rtol=3e-2, atol=3e-2)
    check(_in_autocast(fn, dtype_name), *arrays, grad=grad, **tol)


def test_regions_nest_and_restore() -> None:
    for lib in (ember, torch):
        a, b = lib.ones(2, 3), lib.ones(3, 2)
        assert not lib.is_autocast_enabled("cpu")
        with lib.autocast("cpu"):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled()  # no argument: cuda's
            assert lib.get_autocast_dtype("cpu") is lib.bfloat16
            assert (a @ b).dtype is lib.bfloat16
            with lib.autocast("cpu", enabled=False):
                assert (a @ b).dtype is lib.float32 and not lib.is_autocast_enabled("cpu")
            with lib.autocast("cpu", dtype=lib.float16):
                assert (a @ b).dtype is lib.float16 and lib.get_autocast_dtype("cpu") is lib.float16
            assert (a @ b).dtype is lib.bfloat16
        assert (a @ b).dtype is lib.float32 and not lib.is_autocast_enabled("cpu")

        @lib.autocast("cpu")
        def f(x, y):
            return x @ y
        assert f(a, b).dtype is lib.bfloat16 and (a @ b).dtype is lib.float32
        with pytest.raises(TypeError, match="requires a callable"):
            lib.autocast("cpu")(3)


def test_state_is_thread_local() -> None:
    seen = {}
    for lib in (ember, torch):
        def other():
            seen[lib] = (lib.is_autocast_enabled("cpu"), (lib.ones(2, 2) @ lib.ones(2, 2)).dtype)
        with lib.autocast("cpu"):
            t = threading.Thread(target=other)
            t.start()
            t.join()
    assert seen[ember] == (False, ember.float32) and seen[torch] == (False, torch.float32)


def test_set_autocast_enabled_and_dtype_functions() -> None:
    for lib in (ember, torch):
        a = lib.ones(2, 2)
        lib.set_autocast_enabled("cpu", True)
        lib.set_autocast_dtype("cpu", lib.float16)
        try:
            assert (a @ a).dtype is lib.float16
        finally:
            lib.set_autocast_enabled("cpu", False)
            lib.set_autocast_dtype("cpu", lib.bfloat16)
        assert (a @ a).dtype is lib.float32
        assert lib.get_autocast_dtype("cuda") is lib.float16
        for old in ("get_autocast_cpu_dtype", "is_autocast_cpu_enabled", "get_autocast_gpu_dtype"):
            with pytest.warns(DeprecationWarning, match=f"torch.{old}\\(\\) is deprecated"):
                getattr(lib, old)()
        assert lib.amp.is_autocast_available("cpu") and lib.amp.is_autocast_available("cuda")


def test_warnings_and_errors_match_torch() -> None:
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
            with lib.autocast("cuda"):
                assert not lib.is_autocast_enabled("cuda")
                assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.float32
        for bad in (lib.float32, lib.float64):
            with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported. Disabling "
                                                 "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                                                 "torch.float16 currently."):
                with lib.autocast("cpu", dtype=bad):
                    assert not lib.is_autocast_enabled("cpu")
        with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.autocast\(args...\)` is deprecated"):
            with pytest.warns(UserWarning, match="Disabling autocast"):
                with lib.cuda.amp.autocast():
                    pass
        with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated. Please use "
                                               r"`torch.amp.autocast\('cpu', args...\)` instead."):
            with lib.cpu.amp.autocast():
                assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.bfloat16
    same_error(lambda lib: lib.autocast("xyz"))
    same_error(lambda lib: lib.autocast(3))
    same_error(lambda lib: lib.amp.is_autocast_available("xyz"))


def test_amp_modules_import_as_torch() -> None:
    import importlib

    for name in ("amp", "amp.autocast_mode", "amp.grad_scaler", "cpu.amp", "cuda.amp"):
        importlib.import_module("ember." + name)
    assert ember.autocast is ember.amp.autocast is ember.amp.autocast_mode.autocast
    assert ember.GradScaler is ember.amp.GradScaler
    assert issubclass(ember.cuda.amp.autocast, ember.amp.autocast)
    assert ember.cuda.amp.amp_definitely_not_available() == torch.cuda.amp.amp_definitely_not_available()


def test_weight_casts_are_cached_within_a_region() -> None:
    """One cast of a float32 leaf weight per region (torch's cache): both uses share one ToCopy node."""
    for lib in (ember, torch):
        w = lib.ones(3, 3, requires_grad=True)
        x = lib.ones(2, 3)
        with lib.autocast("cpu"):
            y1, y2 = x @ w, x @ w
            n1, n2 = y1.grad_fn.next_functions[1][0], y2.grad_fn.next_functions[1][0]
            assert n1 is n2, lib
        with lib.autocast("cpu", cache_enabled=False):
            y1, y2 = x @ w, x @ w
            assert y1.grad_fn.next_functions[1][0] is not y2.grad_fn.next_functions[1][0]
        with lib.autocast("cpu"):
            y3 = x @ w
        assert y3.grad_fn.next_functions[1][0] is not n1  # cleared on leaving the outermost region
        (y1.sum() + y3.sum()).backward()
        assert w.grad.dtype is lib.float32


class _Mul:
    """A custom Function whose forward runs in float32 under autocast (custom_fwd(cast_inputs=float32))."""

    @staticmethod
    def make(lib, cast):
        class Mul(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                ctx.inner = (a @ b.t()).dtype  # what a listed op gives inside
                return a * b

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                ctx.bwd_autocast = lib.is_autocast_enabled("cpu")
                return g * b, g * a
        return Mul


@pytest.mark.parametrize("cast", [None, "float32"])
def test_custom_fwd_and_bwd(cast) -> None:
    got = {}
    for lib in (ember, torch):
        Mul = _Mul.make(lib, getattr(lib, cast) if cast else None)
        a = lib.ones(2, 2, requires_grad=True)
        b = lib.full((2, 2), 3.0).bfloat16().requires_grad_()
        with lib.autocast("cpu"):
            out = Mul.apply(a, b)
        out.sum().backward()
        got[lib] = (str(out.dtype), str(out.grad_fn._forward_cls.__name__ if hasattr(out.grad_fn, "_forward_cls")
                                         else ""), str(a.grad.dtype), str(b.grad.dtype))
        ctx = out.grad_fn
        got[lib] += (str(ctx.inner), ctx.bwd_autocast)
    assert got[ember][0] == got[torch][0] and got[ember][2:] == got[torch][2:]
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember.amp.custom_fwd(device_type=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for lib in (ember, torch):
            with pytest.raises(FutureWarning, match=r"torch.cuda.amp.custom_fwd\(args...\)` is deprecated"):
                lib.cuda.amp.custom_fwd(lambda ctx, x: x)


def test_backward_of_an_autocast_region() -> None:
    """A small training step: forward in the region, backward outside; parameters and grads stay float32."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    res = {}
    for lib in (ember, torch):
        m = lib.nn.Sequential(_module(lib, "Linear", 3, 5), lib.nn.ReLU(), _module(lib, "Linear", 5, 2))
        with lib.autocast("cpu"):
            out = m(lib.tensor(x))
            loss = _F(lib).cross_entropy(out, lib.tensor([0, 1, 1, 0]))
        loss.backward()
        res[lib] = (out, loss, [p.grad for p in m.parameters()])
    (eo, el, eg), (to, tl, tg) = res[ember], res[torch]
    assert eo.dtype is ember.bfloat16 and el.dtype is ember.float32 and str(to.dtype) == "torch.bfloat16"
    np.testing.assert_allclose(el.item(), tl.item(), rtol=2e-2)
    for a, b in zip(eg, tg):
        assert a.dtype is ember.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=5e-2, atol=2e-2)


def test_bfloat16_in_torch_module_and_lib_tensor_roundtrip() -> None:
    t = lib_tensor(torch, np.array([1.5, -2.25], BF16))
    assert t.dtype == torch.bfloat16 and t.tolist() == [1.5, -2.25]


def test_cnn_training_with_autocast_and_grad_scaler_matches_torch() -> None:
    """Conv, BatchNorm, pooling, Linear, LayerNorm, GELU under bfloat16 autocast with AdamW, GradScaler, unscale_ and
    clipping, backward inside the region: the same losses as torch step after step."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3, 8, 8)).astype(np.float32)
    y = rng.integers(0, 4, 8)
    res = {}
    for lib in (ember, torch):
        nn = lib.nn
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(36, 16), nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 4))
        init = np.random.default_rng(7)
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(init.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
        opt = lib.optim.AdamW(m.parameters(), lr=1e-2)
        scaler = lib.amp.GradScaler("cpu")
        losses = []
        for _ in range(6):
            opt.zero_grad()
            with lib.autocast("cpu", dtype=lib.bfloat16):
                out = m(lib.tensor(x))
                loss = _F(lib).cross_entropy(out, lib.tensor(y))
                scaler.scale(loss).backward()
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        assert out.dtype is lib.bfloat16 and all(p.grad.dtype is lib.float32 for p in m.parameters())
        res[lib] = losses
    np.testing.assert_allclose(res[ember], res[torch], rtol=2e-3)
