"""grid_sample, affine_grid and interpolate's bicubic, trilinear, area, nearest-exact and antialiased modes against
torch: values, first and second gradients, node names, warnings and errors."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import torch, ember, same_error, check


def _f(lib):
    return lib.nn.functional


# ---------------------------------------------------------------- grid_sample
GRID = [(nd, mode, pad, align) for nd in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
        for pad in ("zeros", "border", "reflection") for align in (False, True) if not (nd == 3 and mode == "bicubic")]


@pytest.mark.parametrize("nd,mode,pad,align", GRID, ids=["-".join(map(str, g)) for g in GRID])
def test_grid_sample_matches_torch(nd, mode, pad, align):
    """Grids reaching past the borders (so padding and clipping matter): values, gradients of input and grid,
    second gradients (torch differentiates grid_sample twice), float64."""
    rng = np.random.default_rng(nd * 100 + len(mode) * 10 + len(pad) + align)
    x = rng.standard_normal((2, 3) + (4, 5, 3)[:nd])
    grid = rng.uniform(-1.4, 1.4, (2,) + (3, 4, 2)[:nd] + (nd,))
    eo, to = check(lambda lib, x, g: _f(lib).grid_sample(x, g, mode, pad, align), x, grid, gradgrad=True)
    assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__ == f"GridSampler{nd}DBackward0"


def test_grid_sample_float32_on_cell_centres_and_edges():
    """Grid points exactly on cell centres, borders and corners (ties of floor/round), float32."""
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    for align in (False, True):
        xs = np.linspace(-1, 1, 9, dtype=np.float32)
        grid = np.stack(np.meshgrid(xs, xs[::2]), -1)[None]  # (1, 5, 9, 2)
        for mode in ("bilinear", "nearest", "bicubic"):
            for pad in ("zeros", "border", "reflection"):
                check(lambda lib, x, g: _f(lib).grid_sample(x, g, mode, pad, align), x, grid.copy(),
                      requires_grad=[True, False])


@settings(max_examples=20, deadline=None)
@given(h=st.integers(1, 5), w=st.integers(1, 5), oh=st.integers(1, 4), ow=st.integers(1, 4),
       mode=st.sampled_from(["bilinear", "nearest", "bicubic"]), pad=st.sampled_from(["zeros", "border", "reflection"]),
       align=st.booleans(), seed=st.integers(0, 999))
def test_grid_sample_random_sizes(h, w, oh, ow, mode, pad, align, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 2, h, w))
    grid = rng.uniform(-2.5, 2.5, (2, oh, ow, 2))
    check(lambda lib, x, g: _f(lib).grid_sample(x, g, mode, pad, align), x, grid)


def test_grid_sample_unused_grid_gradient_and_no_grad():
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 4)).astype(np.float32)
    grid = np.random.default_rng(2).uniform(-1, 1, (1, 2, 3, 2)).astype(np.float32)
    check(lambda lib, x, g: _f(lib).grid_sample(x, g, align_corners=False), x, grid, requires_grad=[True, False])
    check(lambda lib, x, g: _f(lib).grid_sample(x, g, align_corners=True), x, grid, requires_grad=[False, True])
    with ember.no_grad():
        assert _f(ember).grid_sample(ember.tensor(x, requires_grad=True), ember.tensor(grid),
                                     align_corners=False).grad_fn is None


def test_grid_sample_and_affine_grid_warn_without_align_corners():
    x, theta = ember.zeros(1, 1, 3, 3), ember.zeros(1, 2, 3)
    for call in (lambda: _f(ember).affine_grid(theta, (1, 1, 3, 3)), lambda: _f(ember).grid_sample(x, ember.zeros(
            1, 2, 2, 2))):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed to "
                                             "align_corners=False since 1.3.0"):
            call()
    with pytest.warns(UserWarning, match="affine_grid behavior has changed for unit-size grids"):
        _f(ember).affine_grid(theta, (1, 1, 1, 3), align_corners=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _f(ember).grid_sample(x, ember.zeros(1, 2, 2, 2), align_corners=False)


GRID_ERRORS = [
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 2), mode="linear"),
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 2), padding_mode="circular"),
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 2, dtype=lib.float64),
                                    align_corners=False),
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2), align_corners=False),
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 3), lib.zeros(1, 2, 2), align_corners=False),
    lambda lib: _f(lib).grid_sample(lib.zeros(2, 1, 3, 3), lib.zeros(1, 2, 2, 2), align_corners=False),
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 3, 3), lib.zeros(1, 2, 2, 3), align_corners=False),
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 0, 3), lib.zeros(1, 2, 2, 2), align_corners=False),
    lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 3, 3, 3), lib.zeros(1, 2, 2, 2, 3), "bicubic",
                                    align_corners=False),
    lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3, dtype=lib.int64), (1, 1, 3, 3), False),
    lambda lib: _f(lib).affine_grid(lib.zeros(1, 3, 3), (1, 1, 3, 3), False),
    lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3), (1, 1, 3, 3, 3), False),
    lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3), (1, 3, 3), False),
    lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3), (1, 1, 0, 3), False),
]


@pytest.mark.parametrize("fn", GRID_ERRORS, ids=range(len(GRID_ERRORS)))
def test_grid_errors_match_torch(fn):
    e, t = same_error(fn)
    assert str(e) == str(t)


# ---------------------------------------------------------------- affine_grid
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 1, 4), (2, 3, 1, 1), (2, 3, 1, 4), (1, 2, 2, 3, 4)])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_matches_torch(size, align):
    theta = np.random.default_rng(len(size)).standard_normal((size[0],) + ((2, 3) if len(size) == 4 else (3, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's unit-size warning (tested above)
        eo, to = check(lambda lib, t: _f(lib).affine_grid(t, size, align), theta, gradgrad=True)
        check(lambda lib, t: _f(lib).affine_grid(t, size, align), theta.astype(np.float32))
    assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__ == "AffineGridGeneratorBackward0"


def test_spatial_transformer_step():
    """affine_grid feeding grid_sample, as a spatial transformer: gradients reach theta through the grid."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 6, 5))
    theta = np.array([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.0]], [[1.2, 0.0, -0.2], [0.3, 0.8, 0.1]]])
    check(lambda lib, x, t: _f(lib).grid_sample(x, _f(lib).affine_grid(t, (2, 3, 4, 4), False), align_corners=False),
          x, theta, gradgrad=True)
    check(lambda lib, t: lib.affine_grid_generator(t, (2, 3, 4, 4), True), theta)
    check(lambda lib, x, g: lib.grid_sampler(x, g, 2, 1, False), x, rng.uniform(-1, 1, (2, 3, 2, 2)))


# ---------------------------------------------------------------- interpolate
INTERP = [  # (shape, kwargs)
    ((2, 3, 4, 5), dict(scale_factor=2.3, mode="bicubic")),
    ((2, 3, 6, 5), dict(scale_factor=0.6, mode="bicubic")),
    ((2, 3, 4, 5), dict(size=(7, 3), mode="bicubic", align_corners=True)),
    ((1, 2, 5, 4), dict(scale_factor=(1.5, 0.8), mode="bicubic", recompute_scale_factor=True)),
    ((2, 3, 9, 7), dict(scale_factor=0.4, mode="bilinear", antialias=True)),
    ((2, 3, 9, 7), dict(scale_factor=0.45, mode="bicubic", antialias=True)),
    ((2, 3, 4, 5), dict(scale_factor=1.7, mode="bicubic", antialias=True)),
    ((2, 3, 8, 9), dict(size=(3, 4), mode="bilinear", antialias=True, align_corners=True)),
    ((2, 3, 8, 9), dict(size=(5, 2), mode="bicubic", antialias=True, align_corners=True)),
    ((2, 3, 4, 5), dict(scale_factor=1.6, mode="nearest-exact")),
    ((2, 3, 7), dict(size=4, mode="nearest-exact")),
    ((1, 2, 3, 4, 5), dict(scale_factor=(1.3, 0.7, 2), mode="nearest-exact")),
    ((2, 3, 6, 7), dict(size=(3, 4), mode="area")),
    ((2, 3, 6, 7), dict(scale_factor=0.6, mode="area")),
    ((2, 3, 8), dict(scale_factor=0.5, mode="area")),
    ((1, 2, 4, 6, 5), dict(size=(2, 3, 4), mode="area")),
    ((1, 2, 3, 4, 5), dict(scale_factor=(1.5, 0.7, 2), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(size=(4, 2, 6), mode="trilinear", align_corners=True)),
    ((1, 2, 3, 4, 2), dict(scale_factor=2.5, mode="trilinear", recompute_scale_factor=True)),
    ((1, 2, 3, 2, 4), dict(size=(5, 3, 2), mode="nearest")),
    ((1, 2, 3, 2, 4), dict(scale_factor=1.5, mode="nearest")),
]


@pytest.mark.parametrize("shape,kw", INTERP, ids=[f"{k['mode']}-{i}" for i, (_, k) in enumerate(INTERP)])
def test_interpolate_modes(shape, kw):
    x = np.random.default_rng(len(shape) + len(kw)).standard_normal(shape).astype(np.float32)
    eo, to = check(lambda lib, t: _f(lib).interpolate(t, **kw), x, gradgrad=True, atol=1e-5)
    assert type(eo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__
    check(lambda lib, t: _f(lib).interpolate(t, **kw), x.astype(np.float64))


@settings(max_examples=25, deadline=None)
@given(h=st.integers(1, 6), w=st.integers(1, 6), oh=st.integers(1, 12), ow=st.integers(1, 12),
       mode=st.sampled_from(["bicubic", "bilinear-aa", "bicubic-aa", "nearest-exact", "area"]), corners=st.booleans())
def test_interpolate_random_sizes_new_modes(h, w, oh, ow, mode, corners):
    x = np.random.default_rng(h * 10 + w).standard_normal((1, 2, h, w))
    kw = dict(mode=mode.split("-aa")[0], antialias=mode.endswith("-aa"))
    if kw["antialias"] and ow == 1:
        # torch's antialiased kernels are wrong for one output column: every output row repeats the first (e.g.
        # [[1], [2]] resized to (3, 1) gives [1, 1, 1]); ember gives the filter's values ([1, 1.5, 2])
        ow = 2
    if kw["mode"] in ("bicubic", "bilinear"):
        kw["align_corners"] = corners
    check(lambda lib, t: _f(lib).interpolate(t, (oh, ow), **kw), x)


def test_upsample_modules_with_new_modes():
    for kw in (dict(scale_factor=2, mode="bicubic"), dict(size=(3, 4, 5), mode="trilinear", align_corners=True)):
        em, tm = ember.nn.Upsample(**kw), torch.nn.Upsample(**kw)
        assert repr(em) == repr(tm)


INTERP_ERRORS = [
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), scale_factor=0.5, mode="nearest", antialias=True),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4, 4), scale_factor=0.5, mode="bilinear", antialias=True),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), size=3, recompute_scale_factor=True),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), size=(3, 2.5)),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), size=(3, 3, 3)),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), scale_factor=(2, 2, 2)),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), size=3, mode="trilinear"),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4, 4), size=3, mode="bicubic"),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4, 4), size=3, mode="linear"),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), size=3, mode="bad"),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 1, 4, 4), size=3, mode="area", align_corners=False),
    lambda lib: _f(lib).interpolate(lib.zeros(1, 4), size=3),
]


@pytest.mark.parametrize("fn", INTERP_ERRORS, ids=range(len(INTERP_ERRORS)))
def test_interpolate_errors_match_torch(fn):
    same_error(fn)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [(2, 3, 12, 28), (1, 2, 7, 33), (1, 2, 3, 7, 9)])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_identity_grid_one_sided_gradients(dtype, size, align):
    """An identity affine grid puts every point on a cell centre (or border), where the bilinear gradient is
    one-sided: the grid (bit for bit) and the source coordinates round as torch's, so the side agrees. This is the
    spatial transformer's first step."""
    nd = len(size) - 2
    theta = np.eye(nd, nd + 1, dtype=dtype)[None].repeat(size[0], 0)
    x = np.random.default_rng(sum(size)).standard_normal(size).astype(dtype)

    def fn(lib, x, t):
        grid = _f(lib).affine_grid(t, size, align_corners=align)
        return _f(lib).grid_sample(x, grid, align_corners=align), grid

    eo, to = check(fn, x, theta)
    assert np.array_equal(eo[1].detach().numpy(), to[1].detach().numpy())


@pytest.mark.parametrize("x_dtype,grid_dtype,grid_shape", [
    ("complex64", "float32", (1, 3, 3, 2)),  # the kernel's dtype dispatch comes before its read of the grid
    ("complex64", "float64", (1, 3, 3, 2)),
    ("float32", "complex64", (1, 3, 3, 2)),
    ("float32", "float64", (1, 3, 3, 2)),
    ("float32", "float64", (1, 3, 3, 3)),  # the shape checks come before both
    ("complex64", "float32", (2, 3, 3, 2)),
    ("int64", "float64", (1, 3, 3, 2)),
])
def test_grid_sample_dtype_errors_in_torchs_order(x_dtype, grid_dtype, grid_shape):
    def run(lib):
        x = lib.ones(1, 2, 4, 4, dtype=getattr(lib, x_dtype))
        return lib.nn.functional.grid_sample(x, lib.zeros(grid_shape, dtype=getattr(lib, grid_dtype)),
                                             align_corners=False)
    same_error(run)
