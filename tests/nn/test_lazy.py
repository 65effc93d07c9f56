"""Lazy modules (LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*) and the uninitialized parameter and
buffer semantics, against torch: printed forms before and after, state_dict entries, inferred shapes, init, outputs
after loading torch's weights, load_state_dict materializing, and the refusals of uninitialized tensors."""
import copy
import warnings

import numpy as np
import pytest

from oracle import assert_close, ember, same_error, torch

LAZY = [  # (name, args, kwargs, input shape)
    ("LazyConv1d", (4, 3), {}, (2, 3, 9)),
    ("LazyConv1d", (4, 3), dict(bias=False, padding="same"), (3, 9)),  # unbatched
    ("LazyConv2d", (4, (3, 2)), dict(stride=2, groups=2), (2, 6, 7, 8)),
    ("LazyConv2d", (4, 3, 1, 1, 1, 1, False, "reflect"), {}, (2, 3, 5, 5)),  # positional arguments
    ("LazyConv3d", (2, 2), dict(padding=1), (1, 3, 4, 3, 5)),
    ("LazyConvTranspose1d", (4, 3), dict(stride=2, output_padding=1), (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), dict(groups=2, dilation=2), (2, 4, 4, 5)),
    ("LazyConvTranspose3d", (2, 2), dict(bias=False), (1, 3, 3, 2, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), dict(affine=False, momentum=None), (4, 3, 5)),
    ("LazyBatchNorm2d", (), dict(bias=False), (2, 3, 4, 5)),
    ("LazyBatchNorm3d", (), dict(track_running_stats=False), (2, 3, 2, 3, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), dict(affine=False), (2, 3, 4, 5)),
    ("LazyInstanceNorm3d", (), dict(track_running_stats=False), (2, 3, 2, 3, 4)),
]


def _state(m, lib):
    return {k: type(v).__name__ for k, v in m.state_dict().items()}


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAZY)])
def test_lazy_layer_matches_torch(name, args, kwargs, shape):
    em, tm = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    assert _state(em, ember) == _state(tm, torch)
    assert [repr(p) for p in em.parameters()] == [repr(p) for p in tm.parameters()]
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    ey = em(ember.tensor(x))
    tm(torch.tensor(x))
    # became the eager layer: its printed form, entries and shapes; weights initialized within torch's bounds
    assert type(em).__name__ == type(tm).__name__ == name[4:]
    assert repr(em) == repr(tm) and not em._forward_pre_hooks and not hasattr(em, "_initialize_hook")
    sd_e, sd_t = em.state_dict(), tm.state_dict()
    assert {k: tuple(v.shape) for k, v in sd_e.items()} == {k: tuple(v.shape) for k, v in sd_t.items()}
    for k in sd_t:  # deterministic entries equal; random weights within torch's bound 1/sqrt(fan_in)
        if "Conv" in name and k in ("weight", "bias"):
            w = sd_t["weight"]
            bound = 1 / np.sqrt(w.shape[1] * np.prod(w.shape[2:]))
            assert 0 < np.abs(sd_e[k].numpy()).max() <= bound
        else:
            assert_close(sd_e[k], sd_t[k], atol=1e-6)
    # with torch's weights the outputs and gradients agree
    em.load_state_dict({k: v.numpy() for k, v in sd_t.items()})
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ey, ty = em(xe), tm(xt)
    assert_close(ey, ty, atol=1e-5)
    ge = ember.autograd.grad(ey.sum(), [xe, *em.parameters()])
    gt = torch.autograd.grad(ty.sum(), [xt, *tm.parameters()])
    for a, b in zip(ge, gt):
        assert_close(a, b, atol=1e-4)


@pytest.mark.parametrize("name,args,kwargs,shape", [c for c in LAZY if c[2].get("track_running_stats", True)],
                         ids=lambda v: str(v))
def test_lazy_layer_materialized_by_load_state_dict(name, args, kwargs, shape):
    """Loading an eager layer's state_dict materializes the lazy entries with the loaded shapes (the module stays
    lazy until its first forward)."""
    tm = getattr(torch.nn, name)(*args, **kwargs)
    x = torch.tensor(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    tm(x)
    sd = tm.state_dict()
    for lib in (ember, torch):
        m = getattr(lib.nn, name)(*args, **kwargs)
        res = m.load_state_dict({k: (v.numpy() if lib is ember else v) for k, v in sd.items()})
        assert not res.missing_keys and not res.unexpected_keys
        assert type(m).__name__ == name and not m.has_uninitialized_params()
        assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {k: tuple(v.shape) for k, v in sd.items()}


def test_uninitialized_parameter_refusals_match_torch():
    cases = [
        lambda lib, w: w.shape,
        lambda lib, w: w.numel(),
        lambda lib, w: w.dim(),
        lambda lib, w: w.requires_grad_(False),
        lambda lib, w: w + 1,
        lambda lib, w: 2 * w,
        lambda lib, w: w @ w,
        lambda lib, w: -w,
        lambda lib, w: w[0],
        lambda lib, w: w.sum(),
        lambda lib, w: lib.nn.functional.linear(lib.ones(2, 3), w),
        lambda lib, w: lib.nn.init.zeros_(w),
        lambda lib, w: lib.nn.init.ones_(w),
        lambda lib, w: lib.nn.init.uniform_(w),
        lambda lib, w: lib.nn.init.normal_(w),
        lambda lib, w: lib.nn.init.constant_(w, 1.0),
        lambda lib, w: lib.nn.init.kaiming_uniform_(w),
        lambda lib, w: lib.nn.init.kaiming_normal_(w),
        lambda lib, w: lib.nn.init.xavier_uniform_(w),
        lambda lib, w: lib.nn.init.orthogonal_(w),
        lambda lib, w: lib.nn.init.trunc_normal_(w),
        lambda lib, w: w.share_memory_(),
        lambda lib, w: lib.nn.Linear(3, 2).load_state_dict({"weight": w, "bias": lib.zeros(2)}),
    ]
    for case in cases:
        same_error(lambda lib, case=case: case(lib, lib.nn.UninitializedParameter()))
        same_error(lambda lib, case=case: case(lib, lib.nn.UninitializedBuffer()))


def test_uninitialized_parameter_allowed_uses():
    for lib in (ember, torch):
        w = lib.nn.UninitializedParameter(dtype=lib.float64)
        assert repr(w) == "<UninitializedParameter>" and tuple(w.size()) == (0,) and w.dtype == lib.float64
        assert w.requires_grad and w.is_leaf and w.grad is None and w.is_floating_point()
        assert type(copy.deepcopy(w)).__name__ == "UninitializedParameter"
        assert type(w.float()).__name__ in ("UninitializedParameter", "Tensor", "Parameter")
        b = lib.nn.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
        w.materialize((2, 3))
        assert type(w) is lib.nn.Parameter and tuple(w.shape) == (2, 3) and w.dtype == lib.float64
        b.materialize(4)
        assert type(b) is lib.Tensor and tuple(b.shape) == (4,)
        assert lib.nn.parameter.is_lazy(lib.nn.UninitializedBuffer()) and not lib.nn.parameter.is_lazy(w)


def test_lazy_module_conversions_and_errors_like_torch():
    for lib in (ember, torch):
        m = lib.nn.LazyConv2d(4, 3).double()  # a dtype conversion carries over to the materialized weight
        assert type(m.weight).__name__ == "UninitializedParameter" and m.weight.dtype == lib.float64
        m(lib.ones(1, 2, 5, 5, dtype=lib.float64))
        assert m.weight.dtype == lib.float64 and tuple(m.weight.shape) == (4, 2, 3, 3)
        seq = lib.nn.Sequential(lib.nn.LazyConv2d(4, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.LazyLinear(2))
        assert seq(lib.ones(2, 3, 6, 6)).shape == (2, 2)
        assert [type(c).__name__ for c in seq] == ["Conv2d", "ReLU", "Flatten", "Linear"]
    same_error(lambda lib: lib.nn.LazyConv2d(4, 3)(lib.ones(1, 2, 5)))
    same_error(lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5)))
    same_error(lambda lib: sum(p.numel() for p in lib.nn.LazyBatchNorm2d().parameters()))
    same_error(lambda lib: lib.nn.LazyBatchNorm2d()(lib.ones(2, 3)))


def test_deprecated_init_names_warn_and_initialize():
    for old in ("uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                "kaiming_normal", "orthogonal", "sparse"):
        shape = (4, 3, 3) if old == "dirac" else (4, 3)
        args = (0.5,) if old in ("constant", "sparse") else ()
        for lib in (ember, torch):
            t = lib.empty(shape)
            with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of "
                                                   f"`nn.init.{old}_`."):
                out = getattr(lib.nn.init, old)(t, *args)
            assert out is t and getattr(lib.nn.init, old).__name__ == old
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = getattr(ember.nn.init, old)(ember.empty(shape), *args)
            r = getattr(torch.nn.init, old)(torch.empty(shape), *args)
        if old in ("constant", "eye", "dirac"):
            assert_close(e, r)


def test_sparse_init():
    ember.manual_seed(0)
    t = ember.nn.init.sparse_(ember.empty(10, 6), 0.3, std=0.5)
    zeros = (t.numpy() == 0).sum(0)
    assert (zeros == 3).all() and np.abs(t.numpy()).max() < 5
    same_error(lambda lib: lib.nn.init.sparse_(lib.empty(2, 3, 4), 0.1))
