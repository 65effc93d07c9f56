"""Batching rules and batchable compositions (issue 8) against torch.func.vmap: values, in_dims/out_dims variants,
nesting and per-example gradients, each also asserting that ember ran no per-example fallback."""
import warnings

import numpy as np
import pytest

from oracle import assert_close, check, ember, same_error, torch, compare
from func_util import rand


def _no_fallback(fn, *arrays, **kw):
    """compare() that also fails when ember fell back to a per-example loop."""
    ember.func.reset_vmap_fallback_counts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns of its own fallbacks (isclose ...)
        out = compare(fn, *arrays, **kw)
    assert ember.func.vmap_fallback_counts() == {}
    return out


def _with_nans(*shape, seed=0):
    a = rand(*shape, seed=seed)
    a[np.random.default_rng(seed).random(shape) < 0.3] = np.nan
    return a


X = rand(4, 3, 5)
N = _with_nans(4, 3, 5)


@pytest.mark.parametrize("in_dims,out_dims", [(0, 0), (1, 0), (2, -1)])
def test_isclose_both_batched(in_dims, out_dims):
    a = rand(4, 4, 4)
    b = a.copy()
    b[::2] += 1e-3
    b[1, 1, 1] = np.nan
    a[1, 1, 1] = np.nan
    for kw in ({}, {"equal_nan": True}, {"rtol": 1e-2, "atol": 0}):
        _no_fallback(lambda lib, x, y: lib.func.vmap(lambda p, q: lib.isclose(p, q, **kw), in_dims=in_dims,
                                                     out_dims=out_dims)(x, y), a, b)
        _no_fallback(lambda lib, x, y: lib.func.vmap(lambda p: p.isclose(y[0, 0], **kw), in_dims=in_dims)(x), a, b)


def test_isclose_errors_and_eager():
    compare(lambda lib: lib.isclose(lib.tensor([1, 2, 100]), lib.tensor([1, 3, 101]), rtol=0.01, atol=0))
    compare(lambda lib: lib.isclose(lib.tensor([True, False]), lib.tensor([True, True])))
    inf, nan = float("inf"), float("nan")
    compare(lambda lib: lib.isclose(lib.tensor([inf, -inf, nan, 1., inf, 3e38]),
                                    lib.tensor([inf, inf, nan, inf, 1e38, -3e38]), equal_nan=True))
    same_error(lambda lib: lib.isclose(lib.tensor([1, 2]), lib.tensor([1., 2.])))


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, True), ((0, -1), False), (-1, False)])
@pytest.mark.parametrize("in_dims", [0, 2])
def test_nanmean_and_isnan(dim, keepdim, in_dims):
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: (r.nanmean(dim, keepdim), r.isnan(), r.isfinite(),
                                                         r.isinf()), in_dims=in_dims)(x), N)


def test_nanmean_nested_and_per_example_grad():
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.vmap(lambda r: r.nanmean()), in_dims=1)(x), N)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: r.nanmean(0).sin().sum()))(x), N)


@pytest.mark.parametrize("in_dims", [0, 1, -1])
def test_inplace_view_metadata_ops(in_dims):
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: (r * 1).t_()[0] * 2, in_dims=in_dims)(x), rand(3, 4, 5))
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: (r * 1).transpose_(0, 1).unsqueeze_(0).squeeze_(0).cos(),
                                              in_dims=in_dims)(x), rand(3, 4, 5))
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: (r.exp()).swapdims_(0, 1) @ r, in_dims=in_dims)(x),
                 rand(3, 3, 3))
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: (r * r).t_()[0].sum()))(x), rand(3, 4, 5))


TIES = np.random.default_rng(3).integers(0, 3, (4, 3, 6)).astype(np.float64)


@pytest.mark.parametrize("in_dims", [0, 1, -1])
def test_mode_and_nanmedian(in_dims):
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: (tuple(r.mode(-1)), tuple(lib.mode(r, 0, True))),
                                              in_dims=in_dims)(x), TIES)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: (tuple(r.nanmedian(1)), r.nanmedian(),
                                                         tuple(r[0].nanmedian(0, True))), in_dims=in_dims)(x), N)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: tuple(r[0, 0].mode()), in_dims=in_dims)(x), TIES)  # 0-d


def test_mode_nanmedian_nested_grad_and_eager_edges():
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.vmap(lambda r: r.nanmedian(0).values), in_dims=2)(x), N)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: (r.mode(0).values * r[0]).sum()))(x), TIES)
    compare(lambda lib, x: (tuple(x.mode(1)), x.nanmedian(), x[:0].nanmedian()), N[0])
    compare(lambda lib, x: tuple(lib.nanmedian(x, 1)), np.full((2, 3), np.nan))
    same_error(lambda lib: lib.mode(lib.zeros(3, 0), 1))
    same_error(lambda lib: lib.nanmedian(lib.zeros(3, 0), 1))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_rules(fn, interpolation):
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    qs = np.stack([q, q[::-1], q * 0.5, q, 1 - q[::-1]])[:4]
    kw = {"interpolation": interpolation}
    for data in (X, N):
        _no_fallback(lambda lib, x: lib.func.vmap(lambda r: getattr(lib, fn)(r, 0.3, **kw))(x), data)
        _no_fallback(lambda lib, x, qq: lib.func.vmap(lambda r: getattr(r, fn)(qq, 1, True, **kw), in_dims=2)(x),
                     data, q)
        _no_fallback(lambda lib, x, qq: lib.func.vmap(lambda r, k: getattr(lib, fn)(r, k, -1, **kw))(x, qq), data, qs)
        _no_fallback(lambda lib, x, qq: lib.func.vmap(lambda k: getattr(lib, fn)(x[0], k, 0, **kw))(qq), data, qs)


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_quantile_grad_and_q_range_error():
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: lib.quantile(r, 0.4, 1).sum()))(x), X)
    same_error(lambda lib: lib.func.vmap(lambda k: lib.quantile(lib.ones(3), k))(lib.tensor([[0.5], [1.5]])))


SEQ = np.sort(rand(4, 6, seed=5), -1)
SEQ3 = np.sort(rand(4, 3, 6, seed=6), -1)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize(right):
    v = rand(4, 3, 5, seed=7)
    v[:, 0, :3] = SEQ[:, :3]  # hits on boundaries: left and right differ
    kw = {"right": right}
    _no_fallback(lambda lib, s, x: lib.func.vmap(lambda a, b: lib.searchsorted(a, b, **kw))(s, x), SEQ, v)
    _no_fallback(lambda lib, s, x: lib.func.vmap(lambda a: lib.searchsorted(a, x[0], out_int32=True, **kw))(s),
                 SEQ, v)
    _no_fallback(lambda lib, s, x: lib.func.vmap(lambda b: lib.searchsorted(s[0], b, **kw), in_dims=2)(x), SEQ, v)
    _no_fallback(lambda lib, s: lib.func.vmap(lambda a: lib.searchsorted(a, 0.1, **kw))(s), SEQ)
    _no_fallback(lambda lib, s, x: lib.func.vmap(lambda a, b: lib.bucketize(b, a, **kw), in_dims=(1, 0))(s.T, x),
                 SEQ, v)
    _no_fallback(lambda lib, s, x: lib.func.vmap(lambda a, b: lib.searchsorted(a, b, **kw))(s, x), SEQ3, v)
    _no_fallback(lambda lib, s, x: lib.func.vmap(lambda a: lib.searchsorted(a, x[0], **kw))(s), SEQ3, v)
    _no_fallback(lambda lib, s, x: lib.func.vmap(lambda b: lib.searchsorted(s[0], b, **kw))(x), SEQ3, v)
    _no_fallback(lambda lib, s, x: lib.func.vmap(lib.func.vmap(lambda a, b: lib.searchsorted(a, b, **kw)),
                                                 in_dims=(None, 1))(s, x), SEQ, v)


def test_searchsorted_sorter_batched():
    s = rand(4, 6, seed=8)
    order = np.argsort(s, -1)
    _no_fallback(lambda lib, a, o, x: lib.func.vmap(lambda p, q, r: lib.searchsorted(p, r, sorter=q))(a, o, x),
                 s, order, rand(4, 5, seed=9))
    _no_fallback(lambda lib, a, o, x: lib.func.vmap(lambda p, q: lib.searchsorted(p, x[0], side="right",
                                                                                 sorter=q))(a, o),
                 s, order, rand(4, 5, seed=9))


SPD = np.einsum("bij,bkj->bik", rand(4, 3, 3, seed=10), rand(4, 3, 3, seed=10)) + 3 * np.eye(3)


def test_cholesky_upper_reads_the_upper_triangle():
    a = SPD.copy()
    a[:, 2, 0] += 0.3  # not symmetric: torch (LAPACK uplo) reads only the named triangle
    compare(lambda lib, x: (lib.linalg.cholesky(x, upper=True), lib.linalg.cholesky(x)), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: lib.linalg.cholesky(r, upper=True), in_dims=2)(x.permute(1, 2, 0)),
                 a)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: lib.linalg.cholesky(r, upper=True)
                                                             .sum()))(x), SPD)


@pytest.mark.parametrize("kw", [{}, {"rtol": 0.3}, {"atol": 0.5}, {"atol": 0.1, "rtol": 0.2}])
def test_pinv_batched(kw):
    a = rand(4, 3, 5, seed=11)
    a[1] = np.outer(a[1, :, 0], np.ones(5) * 0.5)  # rank one: small singular values cut
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: lib.linalg.pinv(r, **kw))(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: lib.linalg.pinv(r, **kw), in_dims=1)(x), a)
    if kw.get("rtol", 0) < 0.2:  # no singular value cut: where one is, torch's gradient is off (finite
        # differences of the truncated pinv agree with ember's, not torch's)
        _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: lib.linalg.pinv(r, **kw).sum()))(x),
                     a[[0, 2, 3]])


def test_matrix_exp_batched_norms():
    a = rand(4, 3, 3, seed=12) * np.array([0.1, 1.0, 5.0, 20.0])[:, None, None]
    _no_fallback(lambda lib, x: lib.func.vmap(lib.matrix_exp)(x), a, rtol=1e-9)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.matrix_exp, in_dims=2)(x.permute(1, 2, 0)), a, rtol=1e-9)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: lib.matrix_exp(r).sum()))(x), a[:3], rtol=1e-7)


@pytest.mark.filterwarnings("ignore:torch.lu")
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
@pytest.mark.parametrize("in_dims", [0, 2])
def test_lu_family_batched(shape, in_dims):
    a = rand(*((3,) + shape), seed=13)
    a = np.moveaxis(a, 0, in_dims)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: tuple(lib.lu(r, get_infos=True)), in_dims=in_dims)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: tuple(lib.lu_unpack(*lib.lu(r))), in_dims=in_dims)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: lib.lu(r)[0].sum(), in_dims=in_dims)(x), a)


@pytest.mark.filterwarnings("ignore:torch.lu")
def test_lu_solve_batched_and_per_example_grad():
    a, b = rand(3, 4, 4, seed=14), rand(3, 4, 2, seed=15)
    _no_fallback(lambda lib, x, y: lib.func.vmap(lambda p, q: lib.lu_solve(q, *lib.lu(p)))(x, y), a, b)
    _no_fallback(lambda lib, x, y: lib.func.vmap(lambda p: lib.lu_solve(y[0], *lib.lu(p)))(x), a, b)
    _no_fallback(lambda lib, x, y: lib.func.vmap(lambda q: lib.lu_solve(q, *lib.lu(x[0])))(y), a, b)
    _no_fallback(lambda lib, x, y: lib.func.vmap(lib.func.grad(lambda p, q: lib.lu_solve(q, *lib.lu(p)).sum()))(x, y),
                 a, b)


def _meta(lib, x):
    """An example's strides, storage offset and contiguity as a tensor (vmap must return tensors)."""
    return lib.tensor(list(x.stride()) + [x.storage_offset(), int(x.is_contiguous())]) + 0 * x.sum().long()


@pytest.mark.parametrize("in_dims", [0, 1, -1])
def test_as_strided_and_metadata(in_dims):
    a = np.ascontiguousarray(np.moveaxis(rand(3, 4, 6, seed=16), 0, in_dims))
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: _meta(lib, r), in_dims=in_dims)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: _meta(lib, r[1:, ::2]), in_dims=in_dims)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: r.as_strided((3, 2), (2, 1), 1), in_dims=in_dims)(x), a)
    if in_dims == 0:  # (an op's result keeps its input's memory order: batch dims not in front are layout-defined)
        _no_fallback(lambda lib, x: lib.func.vmap(lambda r: lib.as_strided(r.exp(), (3, 3), (1, 1)))(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: r[1:].as_strided((2, 2), (6, 1)), in_dims=in_dims)(x), a)


def test_as_strided_nested_inplace_and_grad():
    a = rand(3, 2, 4, 6, seed=17)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.vmap(lambda r: r.as_strided((2, 5), (1, 1), 1)))(x), a)
    def f(r):
        return (r * 1).as_strided_((2, 2, 3), (1, 6, 2)) + 1

    # torch's vmap keeps the old shape after as_strided_ (unlike its eager mode): ember against eager per example
    _no_fallback(lambda lib, x: lib.func.vmap(f)(x) if lib is ember else lib.stack([f(r) for r in x]), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: r.as_strided((3, 3), (1, 1)).pow(2).sum()))(x),
                 a)


@pytest.mark.parametrize("dim,size,step", [(0, 2, 1), (1, 3, 2), (-1, 0, 1), (1, 3, 1)])
@pytest.mark.parametrize("in_dims", [0, 2])
def test_unfold(dim, size, step, in_dims):
    a = rand(4, 3, 6, seed=18)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: r.unfold(dim, size, step), in_dims=in_dims)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: lib.unfold_copy(r.cos(), dim, size, step) * 2,
                                              in_dims=in_dims)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: r.unfold(dim, size, step).pow(2).sum()))(x), a)


def test_unfold_zero_dim_and_nested():
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: r[0, 0].unfold(0, 1, 1))(x), rand(4, 3, 6, seed=19))
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.vmap(lambda r: r.unfold(0, 2, 2)), in_dims=2)(x),
                 rand(4, 3, 6, seed=19))


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_argwhere_falls_back_and_nonzero_raises_as_torch():
    same = np.stack([np.eye(3)] * 4)
    ember.func.reset_vmap_fallback_counts()
    compare(lambda lib, x: lib.func.vmap(lib.argwhere)(x), same)
    compare(lambda lib, x: lib.func.vmap(lambda r: lib.argwhere(r.T) * 2, in_dims=2)(x), same)
    assert ember.func.vmap_fallback_counts() == {"ArgwhereBackward0": 2}  # counted, as torch's fallback
    ragged = np.tril(np.ones((3, 3)))
    same_error(lambda lib: lib.func.vmap(lib.argwhere)(lib.tensor(ragged)))
    same_error(lambda lib: lib.func.vmap(lib.nonzero)(lib.tensor(same)))
    same_error(lambda lib: lib.func.vmap(lambda r: r.nonzero(as_tuple=True))(lib.tensor(same)))
    compare(lambda lib, x: (lib.argwhere(x), x.nonzero(), lib.nonzero(x, as_tuple=True)), ragged)


W = rand(3, 5, 4, seed=20)
IDX = np.random.default_rng(21).integers(0, 5, (3, 2, 6))
IDX[:, 0, :2] = 1  # the padding row is picked


@pytest.mark.parametrize("padding_idx", [None, 1, -4])
def test_embedding_batched_weight(padding_idx):
    def emb(lib):
        return lambda i, w: lib.nn.functional.embedding(i, w, padding_idx=padding_idx)

    _no_fallback(lambda lib, w, i: lib.func.vmap(emb(lib))(i, w), W, IDX)
    _no_fallback(lambda lib, w, i: lib.func.vmap(emb(lib), in_dims=(None, 0))(i[0], w), W, IDX)
    _no_fallback(lambda lib, w, i: lib.func.vmap(emb(lib), in_dims=(2, None))(i, w[0]), W, IDX)
    _no_fallback(lambda lib, w, i: lib.func.vmap(emb(lib), in_dims=(0, 2))(i, w.permute(1, 2, 0)), W, IDX)
    # per-example gradients of the weight (the padding row gets none)
    _no_fallback(lambda lib, w, i: lib.func.vmap(lib.func.grad(lambda ww, ii: emb(lib)(ii, ww).pow(2).sum()))(w, i),
                 W, IDX)
    _no_fallback(lambda lib, w, i: lib.func.vmap(lib.func.vmap(emb(lib)), in_dims=(1, None))(i, w), W, IDX)


def test_embedding_index_errors_under_vmap():
    bad = IDX.copy()
    bad[2, 1, 3] = 5
    same_error(lambda lib: lib.func.vmap(lambda i, w: lib.nn.functional.embedding(i, w))(lib.tensor(bad),
                                                                                        lib.tensor(W)))


def _set(x, key, v):
    x[key] = v
    return x


@pytest.mark.parametrize("in_dims", [0, -1])
def test_setitem_index_tensors_on_batched(in_dims):
    x, v = rand(3, 4, 5, seed=22), rand(3, 5, seed=23)
    x = np.ascontiguousarray(np.moveaxis(x, 0, in_dims))
    mask = rand(4, 5, seed=24) > 0

    def both_dims(lib, f):
        return lib.func.vmap(f, in_dims=(in_dims, 0))

    _no_fallback(lambda lib, a, b: both_dims(lib, lambda r, s: _set(r * 1, [0, 2, 3], s))(a, b), x, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda r: _set(r * 1, [0, 2], b[0]), in_dims=in_dims)(a), x, v)
    _no_fallback(lambda lib, a, b: both_dims(lib, lambda r, s: _set(r * 1, (slice(1, None), [0, 3]), s[:2]))(a, b),
                 x, v)
    _no_fallback(lambda lib, a, m: lib.func.vmap(lambda r: _set(r.exp(), m, 0.5), in_dims=in_dims)(a), x, mask)
    _no_fallback(lambda lib, a, m, b: both_dims(lib, lambda r, s: _set(r * 1, (m,), s.sum()))(a, b), x, mask, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lib.func.grad(lambda r, s: _set(r * 2, lib.tensor([1, 3]), s[:1]
                                                                                 * 3).pow(2).sum(), argnums=(0, 1)))(
        a, b), rand(3, 4, 5, seed=22), v)


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # the raising nested case reads r[k] first
def test_setitem_batched_index_tensors():
    x, v = rand(3, 4, 5, seed=25), rand(3, 2, 5, seed=26)
    idx = np.array([[0, 3], [2, 2], [1, 0]])
    _no_fallback(lambda lib, a, i, b: lib.func.vmap(lambda r, k, s: _set(r * 1, k, s))(a, i, b), x, idx, v)
    _no_fallback(lambda lib, a, i: lib.func.vmap(lambda r, k: _set(r * 1, (k, lib.tensor([1, 4])), -1.0))(a, i),
                 x, idx)
    same_error(lambda lib: lib.func.vmap(lambda k: _set(lib.zeros(4, 5), k, 7.0))(lib.tensor(idx)),
               match_words=["vmap", "index_put_"])  # writing batched values into an unbatched tensor
    same_error(lambda lib: lib.func.vmap(lib.func.vmap(lambda r, k: _set(r * 1, k, 0.0), in_dims=(0, None)),
                                         in_dims=(None, 0))(lib.tensor(x), lib.tensor(idx)),
               match_words=["vmap", "index_put_"])  # r is not batched over k's level
    _no_fallback(lambda lib, a: lib.func.vmap(lib.func.vmap(lambda r: _set(r * 1, [0, 2], r[1] * 2)), in_dims=1)(a),
                 rand(3, 2, 4, 5, seed=27))


def test_writes_of_batched_values_into_unbatched_tensors_raise_as_torch():
    def add_(lib, r):
        z = lib.zeros(4)
        z.copy_(r)
        return z

    same_error(lambda lib: lib.func.vmap(lambda r: add_(lib, r))(lib.ones(3, 4)))
    same_error(lambda lib: lib.func.vmap(lambda r: _set(lib.zeros(4), 0, r[0]))(lib.ones(3, 4)))


@pytest.mark.parametrize("in_dims", [0, 1, -1])
@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 0, 1), (-1, 1, 0), (2, 1, 0)])
def test_inplace_through_diagonal_of_batched(in_dims, offset, d1, d2):
    def f(r):
        t = r * 1
        t.diagonal(offset, d1, d2).mul_(3).add_(r[0, :1])
        return t

    a = np.ascontiguousarray(np.moveaxis(rand(3, 4, 4, seed=28), 0, in_dims))
    _no_fallback(lambda lib, x: lib.func.vmap(f, in_dims=in_dims)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: f(r).pow(2).sum()), in_dims=in_dims)(x), a)


def test_inplace_through_diagonal_of_permuted_tensor():

    def fn(lib, x):
        y = x.permute(2, 0, 1) * 1
        y.diagonal(1, 1, 2).mul_(2)
        y.diagonal(-1, 0, 2).zero_()
        return y

    check(fn, rand(3, 4, 5, seed=29))


@pytest.mark.parametrize("kind,kw", [
    ("conv2d", {}), ("conv2d", {"stride": 2, "padding": 1, "dilation": 2}), ("conv2d", {"groups": 2}),
    ("conv1d", {"padding": 1}), ("conv_transpose2d", {"stride": 2, "output_padding": 1}),
    ("conv_transpose1d", {"groups": 2}),
])
def test_conv_batched_weight_and_bias(kind, kw):
    one_d = kind.endswith("1d")
    sp = (7,) if one_d else (6, 7)
    x = rand(3, 2, 4, *sp, seed=30)
    w_shape = (4, 4 // kw.get("groups", 1)) if "transpose" in kind else (6, 4 // kw.get("groups", 1))
    w = rand(3, *w_shape, *((3,) if one_d else (3, 2)), seed=31)
    b = rand(3, w_shape[1] * kw.get("groups", 1) if "transpose" in kind else w_shape[0], seed=32)

    def f(lib):
        return lambda xx, ww, bb: getattr(lib.nn.functional, kind)(xx, ww, bb, **kw)

    _no_fallback(lambda lib, xx, ww, bb: lib.func.vmap(f(lib))(xx, ww, bb), x, w, b)
    _no_fallback(lambda lib, xx, ww, bb: lib.func.vmap(f(lib), in_dims=(None, 0, None))(xx[0], ww, bb[0]), x, w, b)
    _no_fallback(lambda lib, xx, ww, bb: lib.func.vmap(f(lib), in_dims=(None, None, 0))(xx[0], ww[0], bb), x, w, b)
    _no_fallback(lambda lib, xx, ww, bb: lib.func.vmap(lib.func.grad(lambda a, c, d: f(lib)(a, c, d).tanh().sum(),
                                                                     argnums=(0, 1, 2)))(xx, ww, bb), x, w, b)


def test_per_sample_grads_of_a_small_cnn():
    def run(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(1, 3, 3), lib.nn.ReLU(), lib.nn.Conv2d(3, 2, 2, stride=2),
                                lib.nn.Flatten(0), lib.nn.Linear(8, 2)).double()
        params = {k: lib.tensor(np.random.default_rng(i).standard_normal(tuple(v.shape)))
                  for i, (k, v) in enumerate(net.named_parameters())}

        def loss(p, xx, yy):
            return lib.nn.functional.cross_entropy(lib.func.functional_call(net, p, (xx.unsqueeze(0),))
                                                   .unsqueeze(0), yy.unsqueeze(0))

        xs = lib.tensor(rand(5, 1, 7, 7, seed=33))
        ys = lib.tensor(np.array([0, 1, 1, 0, 1]))
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, xs, ys)

    ember.func.reset_vmap_fallback_counts()
    e, t = run(ember), run(torch)
    assert ember.func.vmap_fallback_counts() == {}
    for k in t:
        assert_close(e[k], t[k], rtol=1e-8, atol=1e-10)


def test_median_all_ties_nan_and_grad():
    a = np.round(rand(4, 3, 5, seed=34))  # many ties
    a[3, 1, 2] = np.nan
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: r.median())(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: lib.median(r.T), in_dims=2)(x), a)
    _no_fallback(lambda lib, x: lib.func.vmap(lib.func.grad(lambda r: r.median() * 3))(x), a)  # shares among ties
    _no_fallback(lambda lib, x: lib.func.vmap(lambda r: r.median())(x), np.nan_to_num(a).astype(np.int64))


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_take_rules():
    x = rand(4, 3, 5, seed=35)
    idx = np.random.default_rng(36).integers(-15, 15, (4, 2, 3))
    _no_fallback(lambda lib, a, i: lib.func.vmap(lib.take)(a, i), x, idx)
    _no_fallback(lambda lib, a, i: lib.func.vmap(lambda r: lib.take(r, i[0]), in_dims=2)(a[..., :3]), x, idx)
    _no_fallback(lambda lib, a, i: lib.func.vmap(lambda k: lib.take(a[0], k))(i), x, idx)
    _no_fallback(lambda lib, a, i: lib.func.vmap(lib.func.grad(lambda r, k: lib.take(r, k).pow(2).sum()),
                                                 in_dims=(0, 0))(a, i), x, idx)
    same_error(lambda lib: lib.func.vmap(lambda k: lib.take(lib.zeros(3, 5), k))(lib.tensor(idx + 20)))


@pytest.mark.parametrize("offset,d1,d2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0)])
def test_diag_embed_and_cross(offset, d1, d2):
    x = rand(4, 3, 5, seed=37)
    _no_fallback(lambda lib, a: lib.func.vmap(lambda r: lib.diag_embed(r, offset, d1, d2))(a), x)
    _no_fallback(lambda lib, a: lib.func.vmap(lib.func.grad(lambda r: lib.diag_embed(r, offset, d1, d2).exp().sum()),
                                              in_dims=1)(a), x)
    same_error(lambda lib: lib.func.vmap(lambda r: r[0, 0].diag_embed())(lib.tensor(x)))  # 0-d example
    u, v = rand(4, 2, 3, seed=38), rand(4, 2, 3, seed=39)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda p, q: lib.linalg.cross(p, q))(a, b), u, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda p: lib.cross(p, b[0], dim=-1), in_dims=1)(a.permute(1, 0, 2)),
                 u, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lib.func.grad(lambda p, q: lib.linalg.cross(p, q).sum(),
                                                               argnums=(0, 1)))(a, b), u, v)


def test_masked_fill_batched_tensor_value():
    x, m, v = rand(4, 3, 5, seed=40), rand(4, 3, 5, seed=41) > 0, rand(4, seed=42)
    _no_fallback(lambda lib, a, mm, vv: lib.func.vmap(lambda r, k, s: r.masked_fill(k, s))(a, mm, vv), x, m, v)
    _no_fallback(lambda lib, a, mm, vv: lib.func.vmap(lambda s: a[0].masked_fill(mm[0], s))(vv), x, m, v)
    _no_fallback(lambda lib, a, mm, vv: lib.func.vmap(lib.func.grad(lambda r, s: r.masked_fill(mm[0], s).exp().sum(),
                                                                    argnums=(0, 1)))(a, vv), x, m, v)


@pytest.mark.parametrize("left", [True, False])
def test_linalg_solve_rules(left):
    a = rand(4, 3, 3, seed=43) + 3 * np.eye(3)
    bm, bv, b2 = rand(4, 3, 2, seed=44), rand(4, 3, seed=45), rand(4, 2, 3, 3, seed=46)
    if not left:
        bm = bm.transpose(0, 2, 1).copy()

    def solve(lib):
        return lambda p, q: lib.linalg.solve(p, q, left=left)

    _no_fallback(lambda lib, x, y: lib.func.vmap(solve(lib))(x, y), a, bm)
    _no_fallback(lambda lib, x, y: lib.func.vmap(solve(lib), in_dims=(0, None))(x, y[0]), a, bm)
    _no_fallback(lambda lib, x, y: lib.func.vmap(solve(lib), in_dims=(None, 0))(x[0], y), a, bm)
    _no_fallback(lambda lib, x, y: lib.func.vmap(solve(lib), in_dims=(None, 0))(x[:2], y), a, b2)  # batch ranks
    _no_fallback(lambda lib, x, y: lib.func.vmap(solve(lib), in_dims=(0, None))(x, y), a, b2)
    if left:
        _no_fallback(lambda lib, x, y: lib.func.vmap(solve(lib))(x, y), a, bv)  # vector right-hand sides
        _no_fallback(lambda lib, x, y: lib.func.vmap(solve(lib), in_dims=(None, 0))(x[:1], y), a, bv)
    _no_fallback(lambda lib, x, y: lib.func.vmap(lib.func.grad(lambda p, q: solve(lib)(p, q).sum(), argnums=(0, 1)))(
        x, y), a, bm)


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # torch's own fallback in the error case
def test_masked_scatter_rules():
    x, m, src = rand(4, 3, 5, seed=47), rand(4, 3, 5, seed=48) > 0, rand(4, 20, seed=49)
    _no_fallback(lambda lib, a, mm, s: lib.func.vmap(lambda r, k, q: r.masked_scatter(k, q))(a, mm, s), x, m, src)
    _no_fallback(lambda lib, a, mm, s: lib.func.vmap(lambda r: r.masked_scatter(mm[0, 0], s[0]))(a), x, m, src)
    _no_fallback(lambda lib, a, mm, s: lib.func.vmap(lambda k: a[0].masked_scatter(k, s[0, :15]))(mm), x, m, src)
    _no_fallback(lambda lib, a, mm, s: lib.func.vmap(lambda r, q: (r * 1).masked_scatter_(mm[0], q))(a, s), x, m, src)
    _no_fallback(lambda lib, a, mm, s: lib.func.vmap(lib.func.grad(lambda r, q: r.masked_scatter(mm[1], q).exp().sum(),
                                                                   argnums=(0, 1)))(a, s), x, m, src)
    same_error(lambda lib: lib.func.vmap(lambda k: lib.zeros(3, 5).masked_scatter(k, lib.ones(4)))(lib.tensor(m)))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_rules(accumulate):
    x, v, v0 = rand(4, 3, 5, seed=50), rand(4, 3, seed=51), rand(4, seed=52)
    m = rand(3, 5, seed=53) > 0
    kw = {"accumulate": accumulate}

    def key(lib):
        return (lib.tensor([0, 2, 0]), lib.tensor([1, 4, 1]))

    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda r, s: r.index_put(key(lib), s, **kw))(a, b), x, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda s: a[0].index_put(key(lib), s, **kw))(b), x, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda r: lib.index_put(r, key(lib)[:1], b[0], **kw),
                                                 in_dims=1)(a.permute(1, 0, 2).contiguous()), x, v0)
    _no_fallback(lambda lib, a, b, mm: lib.func.vmap(lambda r, s: (r * 1).index_put_((mm,), s, **kw))(a, b), x, v0, m)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda r, s: (r * 1).put_(lib.tensor([[1, 1], [2, 11]]),
                                                                          s[:2].reshape(2, 1).expand(2, 2), **kw))(
        a, b), x, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lib.func.grad(lambda r, s: r.index_put(key(lib), s, **kw).exp().sum(),
                                                               argnums=(0, 1)))(a, b), x, v)


@pytest.mark.parametrize("in_dims", [0, 2])
def test_getitem_separated_index_arrays(in_dims):
    x = rand(4, 3, 5, 4, seed=54)
    i, j = np.array([[0, 2], [1, 1]]), np.array([3, 0])

    def keys(lib):
        return [(lib.tensor(i), slice(None), lib.tensor(j)), (lib.tensor(i), slice(1, 3), lib.tensor(j)),
                (lib.tensor([2]), slice(None), lib.tensor([True, False, True, True]))]

    for k in range(3):
        _no_fallback(lambda lib, a: lib.func.vmap(lambda r: r[keys(lib)[k]], in_dims=in_dims)(a),
                     x if in_dims == 0 else x.transpose(1, 2, 0, 3).copy())
    _no_fallback(lambda lib, a: lib.func.vmap(lib.func.grad(lambda r: r[keys(lib)[0]].pow(2).sum()))(a), x)


def test_masked_select_unbatched_mask():
    x, m = rand(4, 3, 5, seed=55), rand(3, 5, seed=56) > 0
    _no_fallback(lambda lib, a, mm: lib.func.vmap(lambda r: r.masked_select(mm))(a), x, m)
    _no_fallback(lambda lib, a, mm: lib.func.vmap(lambda r: lib.masked_select(r[0], mm), in_dims=1)(a), x, m)
    _no_fallback(lambda lib, a, mm: lib.func.vmap(lambda r: r[:, :1].masked_select(mm))(a), x, m)  # broadcast
    _no_fallback(lambda lib, a, mm: lib.func.vmap(lib.func.grad(lambda r: r.masked_select(mm).exp().sum()))(a), x, m)


def test_index_fill_batched_value():
    x, v = rand(4, 3, 5, seed=57), rand(4, seed=58)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lambda r, s: r.index_fill(1, lib.tensor([0, 3]), s))(a, b), x, v)
    # torch's vmap fills every example with the last example's value here: ember against eager per example
    _no_fallback(lambda lib, a, b: (lib.func.vmap if lib is ember else lambda f: lambda t: lib.stack([f(s) for s in t]))(
        lambda s: a[0].index_fill(-2, lib.tensor([2]), s))(b), x, v)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lib.func.grad(lambda r, s: r.index_fill(1, lib.tensor([4, 0]), s)
                                                               .exp().sum(), argnums=(0, 1)))(a, b), x, v)
    # a repeated index fills its slice once: the value's gradient counts it once (eager too)
    _no_fallback(lambda lib, a, b: lib.func.vmap(lib.func.grad(lambda r, s: r.index_fill(1, lib.tensor([1, 1]), s)
                                                               .exp().sum(), argnums=(0, 1)))(a, b), x, v)
    check(lambda lib, a, b: a.index_fill(1, lib.tensor([1, 3, 1]), b), x[0], np.array(v[0]))
