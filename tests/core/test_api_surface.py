"""torch's API surface in ember: a curated list of names that must exist, and the behaviour of the thin forms
(queries, process-wide switches, in-place view changes, legacy constructors) against real torch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_close, check, ember, same_error, torch

# Names torch has and ember implements (regression guard: none may disappear). Exotic families (quantized, sparse,
# cuda/jit internals, complex dtypes, storages) are left out on purpose; see the report of h-surface.
TENSOR_NAMES = """
abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ addbmm addbmm_ addcdiv addcdiv_ addcmul addcmul_ addmm
addmm_ addmv addmv_ addr addr_ adjoint all allclose amax amin aminmax angle any apply_ arccos arccos_ arccosh
arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 arctan2_ arctan_ arctanh arctanh_ argmax argmin argsort
argwhere as_strided as_strided_ as_strided_scatter asin asin_ asinh asinh_ atan atan2 atan2_ atan_ atanh atanh_
backward baddbmm baddbmm_ bernoulli bernoulli_ bincount bitwise_and bitwise_and_ bitwise_left_shift
bitwise_left_shift_ bitwise_not bitwise_not_ bitwise_or bitwise_or_ bitwise_right_shift bitwise_right_shift_
bitwise_xor bitwise_xor_ bmm bool broadcast_to byte cauchy_ ceil ceil_ char cholesky cholesky_inverse cholesky_solve
chunk clamp clamp_ clamp_max clamp_max_ clamp_min clamp_min_ clip clip_ clone conj conj_physical conj_physical_
const_data_ptr contiguous copy_ copysign copysign_ corrcoef cos cos_ cosh cosh_ count_nonzero cov cpu cross cummax
cummin cumprod cumprod_ cumsum cumsum_ data data_ptr deg2rad deg2rad_ det detach detach_ device diag diag_embed
diagflat diagonal diagonal_scatter diff digamma digamma_ dim dim_order dist div div_ divide divide_ dot double
dsplit dtype element_size eq equal erf erf_ erfc erfc_ erfinv erfinv_ exp exp2 exp2_ exp_ expand expand_as expm1
expm1_ exponential_ fill_ fill_diagonal_ fix fix_ flatten flip fliplr float float_power float_power_ floor floor_
floor_divide floor_divide_ fmax fmin fmod fmod_ frac frac_ frexp gather gcd gcd_ ge ge_ geometric_ ger get_device
grad grad_fn greater greater_ greater_equal greater_equal_ gt gt_ half hardshrink heaviside heaviside_ histc
histogram hsplit hypot hypot_ i0 i0_ igamma igamma_ igammac igammac_ imag index_add index_add_ index_copy
index_copy_ index_fill index_fill_ index_put index_put_ index_reduce index_reduce_ index_select inner int inverse
is_conj is_contiguous is_cpu is_distributed is_floating_point is_inference is_leaf is_meta is_neg is_nonzero
is_pinned is_same_size is_shared is_signed isclose isfinite isinf isnan isneginf isposinf isreal item itemsize kron
kthvalue layout lcm lcm_ ldexp ldexp_ le le_ lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_ log log10
log10_ log1p log1p_ log2 log2_ log_ log_normal_ log_softmax logaddexp logaddexp2 logcumsumexp logdet logical_and
logical_and_ logical_not logical_not_ logical_or logical_or_ logical_xor logical_xor_ logit logit_ logsumexp long lt
lt_ lu lu_solve mH mT map2_ map_ masked_fill masked_fill_ masked_scatter masked_scatter_ masked_select matmul
matrix_exp matrix_power max maximum mean median min minimum mm mode moveaxis movedim msort mul mul_ multinomial
multiply multiply_ mv mvlgamma mvlgamma_ nan_to_num nan_to_num_ nanmean nanmedian nanquantile nansum narrow
narrow_copy nbytes ndim ndimension ne ne_ neg neg_ negative negative_ nelement new new_empty new_empty_strided
new_full new_ones new_tensor new_zeros nextafter nextafter_ nonzero nonzero_static norm normal_ not_equal not_equal_
numel numpy outer output_nr permute pin_memory pinverse polygamma polygamma_ positive pow pow_ prelu prod put put_
qr quantile rad2deg rad2deg_ random_ ravel real reciprocal reciprocal_ register_hook
register_post_accumulate_grad_hook relu relu_ remainder remainder_ renorm renorm_ repeat repeat_interleave
requires_grad requires_grad_ reshape reshape_as resize resize_ resize_as resize_as_ resolve_conj resolve_neg
retain_grad retains_grad roll rot90 round round_ rsqrt rsqrt_ scatter scatter_ scatter_add scatter_add_
scatter_reduce scatter_reduce_ select select_scatter sgn sgn_ shape share_memory_ short sigmoid sigmoid_ sign sign_
signbit sin sin_ sinc sinc_ sinh sinh_ size slice_scatter slogdet softmax sort split split_with_sizes sqrt sqrt_
square square_ squeeze squeeze_ std stride sub sub_ subtract subtract_ sum sum_to_size svd swapaxes swapaxes_
swapdims swapdims_ t t_ take tan tan_ tanh tanh_ tensor_split tile to to_dense tolist topk trace transpose
transpose_ triangular_solve tril tril_ triu triu_ true_divide true_divide_ trunc trunc_ type type_as unbind
unflatten unfold uniform_ unique unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes unsqueeze
unsqueeze_ var vdot view view_as vsplit where xlogy xlogy_ zero_
""".split()

TORCH_NAMES = """
abs abs_ absolute acos acos_ acosh acosh_ adaptive_avg_pool1d adaptive_max_pool1d add addbmm addcdiv addcmul addmm
addmv addmv_ addr adjoint alias_copy all allclose alpha_dropout alpha_dropout_ amax amin aminmax angle any arange
arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 arctan_ arctanh arctanh_
are_deterministic_algorithms_enabled argmax argmin argsort argwhere as_strided as_strided_ as_strided_copy
as_strided_scatter as_tensor asarray asin asin_ asinh asinh_ atan atan2 atan_ atanh atanh_ atleast_1d atleast_2d
atleast_3d autocast autocast_decrement_nesting autocast_increment_nesting avg_pool1d baddbmm bartlett_window
batch_norm bernoulli bilinear binary_cross_entropy_with_logits bincount bitwise_and bitwise_left_shift bitwise_not
bitwise_or bitwise_right_shift bitwise_xor blackman_window block_diag bmm broadcast_shapes broadcast_tensors
broadcast_to bucketize can_cast cartesian_prod cat cdist ceil ceil_ celu celu_ chain_matmul channel_shuffle cholesky
cholesky_inverse cholesky_solve chunk clamp clamp_ clamp_max clamp_max_ clamp_min clamp_min_ clear_autocast_cache
clip clip_ clone column_stack combinations compile compiled_with_cxx11_abi concat concatenate cond conj
conj_physical conj_physical_ constant_pad_nd conv1d conv2d conv_transpose1d conv_transpose2d convolution copysign
corrcoef cos cos_ cosh cosh_ cosine_embedding_loss cosine_similarity count_nonzero cov cross cummax cummin cumprod
cumsum cumulative_trapezoid deg2rad deg2rad_ det detach detach_ detach_copy device diag diag_embed diagflat diagonal
diagonal_copy diagonal_scatter diff digamma dist div divide dot dropout dropout_ dsplit dstack dtype einsum
embedding embedding_renorm_ empty empty_like empty_permuted empty_strided enable_grad eq equal erf erf_ erfc erfc_
erfinv exp exp2 exp2_ exp_ expand_copy expm1 expm1_ eye feature_alpha_dropout feature_alpha_dropout_ feature_dropout
feature_dropout_ fill fill_ finfo fix fix_ flatten flip fliplr float_power floor floor_ floor_divide fmax fmin fmod
frac frac_ frexp frobenius_norm from_dlpack from_numpy frombuffer full full_like gather gcd gcd_ ge ger
get_autocast_cpu_dtype get_autocast_dtype get_autocast_gpu_dtype get_default_device get_default_dtype
get_deterministic_debug_mode get_device get_float32_matmul_precision get_num_interop_threads get_num_threads
get_rng_state gradient greater greater_equal group_norm gt hamming_window hann_window hardshrink heaviside
hinge_embedding_loss histc histogram hsplit hstack hypot i0 i0_ igamma igammac iinfo imag index_add index_copy
index_fill index_put index_put_ index_reduce index_select inference_mode init_num_threads initial_seed inner
instance_norm inverse is_anomaly_check_nan_enabled is_anomaly_enabled is_autocast_cache_enabled
is_autocast_cpu_enabled is_autocast_enabled is_conj is_deterministic_algorithms_warn_only_enabled is_distributed
is_floating_point is_grad_enabled is_inference is_inference_mode_enabled is_neg is_nonzero is_same_size is_signed
is_tensor is_warn_always_enabled isclose isfinite isin isinf isnan isneginf isposinf isreal kaiser_window kl_div
kron kthvalue layer_norm layout lcm lcm_ ldexp ldexp_ le lerp less less_equal lgamma linspace load log log10 log10_
log1p log1p_ log2 log2_ log_ log_softmax logaddexp logaddexp2 logcumsumexp logdet logical_and logical_not logical_or
logical_xor logit logit_ logspace logsumexp lt lu lu_solve lu_unpack manual_seed margin_ranking_loss masked_fill
masked_scatter masked_select matmul matrix_exp matrix_power max max_pool1d max_pool2d maximum mean median
memory_format meshgrid min minimum mm mode moveaxis movedim msort mul multinomial multiply mv mvlgamma nan_to_num
nan_to_num_ nanmean nanmedian nanquantile nansum narrow narrow_copy ne neg neg_ negative negative_ nextafter no_grad
nonzero nonzero_static norm normal not_equal nuclear_norm numel ones ones_like outer pairwise_distance pdist permute
permute_copy pinverse pixel_shuffle pixel_unshuffle poisson poisson_nll_loss polygamma positive pow prelu prod
promote_types put qr quantile rad2deg rad2deg_ rand rand_like randint randint_like randn randn_like randperm range
ravel real reciprocal reciprocal_ relu relu_ remainder renorm repeat_interleave reshape resize_as_ resolve_conj
resolve_neg result_type rms_norm roll rot90 round round_ row_stack rrelu rrelu_ rsqrt rsqrt_ rsub save scalar_tensor
scatter scatter_add scatter_reduce searchsorted seed select select_copy select_scatter selu selu_
set_anomaly_enabled set_autocast_cache_enabled set_autocast_cpu_dtype set_autocast_cpu_enabled set_autocast_dtype
set_autocast_enabled set_autocast_gpu_dtype set_default_device set_default_dtype set_default_tensor_type
set_deterministic_debug_mode set_float32_matmul_precision set_flush_denormal set_grad_enabled
set_num_interop_threads set_num_threads set_printoptions set_rng_state set_warn_always sgn sigmoid sigmoid_ sign
signbit sin sin_ sinc sinc_ sinh sinh_ slice_copy slice_scatter slogdet softmax sort split split_copy
split_with_sizes split_with_sizes_copy sqrt sqrt_ square square_ squeeze squeeze_copy stack std std_mean sub
subtract sum svd swapaxes swapdims sym_float sym_int sym_ite sym_max sym_min sym_not sym_sqrt sym_sum t t_copy take
tan tan_ tanh tanh_ tensor tensor_split tensordot threshold threshold_ tile to_dlpack topk trace transpose
transpose_copy trapezoid trapz triangular_solve tril triplet_margin_loss triu true_divide trunc trunc_ typename
unbind unbind_copy unflatten unfold_copy unique unique_consecutive unravel_index unsafe_chunk unsafe_split
unsafe_split_with_sizes unsqueeze unsqueeze_copy use_deterministic_algorithms vander var var_mean vdot view_copy
vsplit vstack where while_loop xlogy xlogy_ zero_ zeros zeros_like
""".split()


def test_curated_names_exist() -> None:
    assert not [n for n in TENSOR_NAMES if not hasattr(torch.Tensor, n)], "the list holds only torch names"
    assert not [n for n in TORCH_NAMES if not hasattr(torch, n)], "the list holds only torch names"
    missing = [n for n in TENSOR_NAMES if not hasattr(ember.Tensor, n)]
    assert not missing, f"Tensor methods missing in ember: {missing}"
    missing = [n for n in TORCH_NAMES if not callable(getattr(ember, n, None))]
    assert not missing, f"torch.* callables missing in ember: {missing}"


# ---------------------------------------------------------------- top-level in-place forms
_INPLACE_INPUTS = {"acosh_": (1.1, 3.0), "arccosh_": (1.1, 3.0), "acos_": (-0.9, 0.9), "asin_": (-0.9, 0.9),
                   "arccos_": (-0.9, 0.9), "arcsin_": (-0.9, 0.9), "atanh_": (-0.9, 0.9), "arctanh_": (-0.9, 0.9),
                   "log_": (0.2, 3.0), "log2_": (0.2, 3.0), "log10_": (0.2, 3.0), "log1p_": (0.2, 3.0),
                   "sqrt_": (0.2, 3.0), "rsqrt_": (0.2, 3.0), "reciprocal_": (0.2, 3.0), "logit_": (0.1, 0.9)}
_INPLACE_ARGS = {"clamp_": (-0.5, 0.5), "clip_": (-0.5, 0.5), "clamp_max_": (0.3,), "clamp_min_": (0.3,),
                 "xlogy_": (2.0,), "ldexp_": "tensor", "gcd_": "int", "lcm_": "int", "resize_as_": "tensor",
                 "addmv_": "addmv"}


# (the forms whose Tensor method exists: the names a Tensor method of torch's must have are TENSOR_NAMES' test)
@pytest.mark.parametrize("name", [n for n in ember._aten.INPLACE_FORMS
                                  if n not in ("gcd_", "lcm_") and hasattr(ember.Tensor, n)])
def test_top_level_inplace_forms(name: str) -> None:
    lo, hi = _INPLACE_INPUTS.get(name, (-2.0, 2.0))
    x = np.random.default_rng(0).uniform(lo, hi, (3, 4))
    args = _INPLACE_ARGS.get(name, ())

    def run(lib):
        t = lib.tensor(x)
        if args == "tensor":
            extra = (lib.tensor(x[:2]),) if name == "resize_as_" else (lib.tensor([[1, 2, 0, -1]]),)
        elif args == "addmv":
            t = lib.tensor(x[0, :3])
            extra = (lib.tensor(x[:, :3].T), lib.tensor(x[:, 0]))
        else:
            extra = args
        out = getattr(lib, name)(t, *extra)
        assert out is t
        return t

    assert_close(run(ember), run(torch), what=name)


def test_int_inplace_forms() -> None:
    for name in ("gcd_", "lcm_"):
        if hasattr(ember.Tensor, name):
            a, b = np.array([12, -18, 0, 7]), np.array([8, 12, 5, 0])
            assert_close(getattr(ember, name)(ember.tensor(a), ember.tensor(b)),
                         getattr(torch, name)(torch.tensor(a), torch.tensor(b)))


# ---------------------------------------------------------------- queries on real dtypes
def test_real_dtype_queries() -> None:
    for lib in (ember, torch):
        x = lib.randn(2, 3)
        assert not lib.is_complex(x) and not lib.is_conj(x) and not lib.is_neg(x)
        assert not x.is_conj() and not x.is_neg() and lib.is_signed(x) and not lib.is_signed(x.to(lib.uint8))
        assert x.real is x and lib.conj(x) is x and x.resolve_conj() is x and lib.resolve_neg(x) is x
        assert lib.positive(x) is x and x.is_same_size(lib.zeros(2, 3)) and not lib.is_same_size(x, lib.zeros(3))
        assert lib.get_device(x) == -1 and not x.is_meta and not x.is_sparse and not x.is_quantized
        assert lib.tensor([2.0]).is_nonzero() and not lib.tensor(0.0).is_nonzero() and lib.is_nonzero(lib.ones(1))
        assert x.dim_order() == (0, 1) and x.t().dim_order() == (1, 0)
        assert x.to_dense() is x and x.is_set_to(x) and not x.is_set_to(x.clone())
        assert not lib.is_storage(x) and not lib.is_distributed(x)
    assert ember.typename(ember.zeros(2)) == torch.typename(torch.zeros(2)) == "torch.FloatTensor"
    assert ember.typename(3) == torch.typename(3) and ember.typename(np.zeros(1)) == torch.typename(np.zeros(1))
    same_error(lambda lib: lib.zeros(2).imag)
    same_error(lambda lib: lib.imag(lib.zeros(2)))
    same_error(lambda lib: lib.positive(lib.tensor([True])))
    same_error(lambda lib: lib.tensor([1.0, 2.0]).is_nonzero())
    same_error(lambda lib: lib.adjoint(lib.zeros(3)), match_words=["adjoint", "matrices"])
    same_error(lambda lib: lib.ravel([1, 2]))


# ---------------------------------------------------------------- in-place view-metadata changes
@pytest.mark.parametrize("op", ["t_", "transpose_", "swapdims_", "swapaxes_", "unsqueeze_", "squeeze_"])
def test_inplace_view_changes(op: str) -> None:
    args = {"t_": (), "transpose_": (0, 1), "swapdims_": (1, 0), "swapaxes_": (0, 1), "unsqueeze_": (1,),
            "squeeze_": ()}[op]

    def fn(lib, x):
        y = x * 2
        out = getattr(y, op)(*args)
        assert out is y and y._version == 1
        return y * y

    check(fn, np.random.default_rng(1).standard_normal((3, 1) if op == "squeeze_" else (3, 4)), gradgrad=True)
    same_error(lambda lib: getattr(lib.zeros(3, 4, requires_grad=True), op)(*args))


def test_as_strided_and_unfold_share_memory_and_check_arguments() -> None:
    for lib in (ember, torch):
        x = lib.arange(10.0)
        v = lib.as_strided(x, (2, 3), (3, 1), 1)
        x[1] = 100.0
        assert v[0, 0].item() == 100.0 and v.stride() == (3, 1) and v.storage_offset() == 1
        w = x.unfold(0, 4, 3)
        assert w.shape == (3, 4) and w.stride() == (3, 1)
        y = lib.arange(6.0)
        assert y.as_strided_((2, 2), (1, 2)) is y and y.shape == (2, 2) and y.stride() == (1, 2)
    same_error(lambda lib: lib.zeros(3, 4).unfold(1, 5, 1))
    same_error(lambda lib: lib.zeros(3, 4).unfold(1, 2, 0))
    same_error(lambda lib: lib.zeros(3, 4).unfold(2, 1, 1))
    same_error(lambda lib: lib.zeros(4).as_strided((3, 3), (2, 1)), match_words=["out of bounds for storage"])
    same_error(lambda lib: lib.split_with_sizes(lib.zeros(4), [1, 2]), match_words=["split_with_sizes expects"])


def test_strided_views_of_a_permuted_ufunc_result() -> None:
    # an elementwise result keeps a permuted input's memory order (neither C nor F contiguous): strided views must
    # read that memory, not a C-order copy of it
    a = np.random.default_rng(0).standard_normal((4, 3, 6))
    check(lambda lib, x: x.permute(2, 0, 1).cos().unfold(1, 2, 1), a)
    check(lambda lib, x: x.permute(2, 0, 1).cos().as_strided((3, 5), (6, 1), 2), a)


def test_unfold_view_write_reaches_base_with_autograd() -> None:
    def fn(lib, x):
        y = x * 1
        w = y.unfold(0, 2, 2)
        w.mul_(3)
        return y

    check(fn, np.arange(6.0), gradgrad=True)


# ---------------------------------------------------------------- legacy constructors and element-wise Python maps
def test_new_resize_apply_map() -> None:
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        assert x.new(3, 2).shape == (3, 2) and x.new(3).dtype == lib.float64
        assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new().shape == (0,)
        y = x.clone()
        assert y.resize_(3).tolist() == [1.0, 2.0, 3.0] and y.resize_as_(lib.zeros(1, 2)).shape == (1, 2)
        z = lib.arange(4.0).resize_(2, 2)
        assert z.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        assert x.clone().apply_(lambda v: v * 10).tolist() == [[10.0, 20.0], [30.0, 40.0]]
        assert x.clone().map_(lib.tensor([1.0, -1.0], dtype=lib.float64), lambda a, b: a * b).tolist() == \
            [[1.0, -2.0], [3.0, -4.0]]
        e = lib.empty_strided((2, 3), (1, 2))
        assert e.shape == (2, 3) and e.stride() == (1, 2)
        p = lib.empty_permuted((2, 3, 4), (0, 2, 1))
        assert p.shape == (2, 3, 4) and p.stride() == (12, 1, 3)
        f = lib.frombuffer(bytearray(np.arange(3, dtype=np.float32).tobytes()), dtype=lib.float32)
        assert f.tolist() == [0.0, 1.0, 2.0]
    same_error(lambda lib: lib.zeros(2, requires_grad=True).resize_(3))
    same_error(lambda lib: lib.zeros(2, requires_grad=True).apply_(lambda v: v))


def test_nonzero_static_and_copies() -> None:
    a = np.array([[0.0, 1.5], [2.0, 0.0]])
    for kw in ({"size": 4}, {"size": 1, "fill_value": 7}):
        assert_close(ember.nonzero_static(ember.tensor(a), **kw), torch.nonzero_static(torch.tensor(a), **kw))
    for lib in (ember, torch):
        x = lib.arange(6.0).view(2, 3)
        c = lib.permute_copy(x, (1, 0))
        x[0, 0] = 9
        assert c[0, 0].item() == 0 and c.is_contiguous()
        assert [t.shape for t in lib.split_copy(x, 2, 1)] == [(2, 2), (2, 1)]


# ---------------------------------------------------------------- process-wide switches
@pytest.fixture
def restore_state():
    saved = [(lib, lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
              lib.get_float32_matmul_precision(), lib.is_warn_always_enabled(), lib.get_default_dtype())
             for lib in (ember, torch)]
    yield
    for lib, det, warn_only, prec, always, dt in saved:
        lib.use_deterministic_algorithms(det, warn_only=warn_only)
        lib.set_float32_matmul_precision(prec)
        lib.set_warn_always(always)
        lib.set_default_dtype(dt)


def test_switches_keep_state_as_torch(restore_state) -> None:
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.are_deterministic_algorithms_enabled() and lib.is_deterministic_algorithms_warn_only_enabled()
        assert lib.get_deterministic_debug_mode() == 1
        lib.set_deterministic_debug_mode("error")
        assert lib.get_deterministic_debug_mode() == 2 and not lib.is_deterministic_algorithms_warn_only_enabled()
        lib.set_deterministic_debug_mode(0)
        assert not lib.are_deterministic_algorithms_enabled()
        lib.set_float32_matmul_precision("medium")
        assert lib.get_float32_matmul_precision() == "medium"
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled()
        assert lib.get_num_interop_threads() >= 1
        with pytest.warns(UserWarning, match="set_default_tensor_type"):
            lib.set_default_tensor_type(lib.DoubleTensor)
        assert lib.get_default_dtype() == lib.float64 and lib.zeros(1).dtype == lib.float64
        with pytest.warns(UserWarning, match="set_default_tensor_type"):
            lib.set_default_tensor_type("torch.FloatTensor")
        assert lib.get_default_dtype() == lib.float32
    same_error(lambda lib: lib.use_deterministic_algorithms(1))
    same_error(lambda lib: lib.set_deterministic_debug_mode("x"))
    same_error(lambda lib: lib.set_deterministic_debug_mode(5))
    same_error(lambda lib: lib.set_num_interop_threads(0))
    same_error(lambda lib: lib.set_warn_always(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda lib: lib.set_default_tensor_type(lib.IntTensor))
        same_error(lambda lib: lib.set_default_tensor_type("foo"))
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="setFloat32MatmulPrecision call has no effect"):
            lib.set_float32_matmul_precision("x")
    assert isinstance(ember.set_flush_denormal(True), bool)


def test_autocast() -> None:
    for lib in (ember, torch):
        with lib.autocast("cpu", enabled=False):
            assert not lib.is_autocast_enabled("cpu")
        with pytest.warns(UserWarning, match="Disabling autocast"):
            with lib.autocast("cpu", dtype=lib.float32):
                assert not lib.is_autocast_enabled("cpu")
        assert lib.get_autocast_dtype("cuda") == lib.float16

        @lib.autocast("cpu", enabled=False)
        def f(x):
            return x * 2

        assert f(lib.ones(1)).item() == 2.0
    assert not ember.is_autocast_enabled("cpu")  # (what autocast casts: tests/amp/test_autocast.py)


def test_eager_control_flow_and_compile() -> None:
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0])
        assert lib.cond(x.sum() > 0, lambda a: a * 2, lambda a: a * 0, (x,)).tolist() == [2.0, 4.0]
    for lib in (ember, torch):  # (what compiling does: tests/compiler)
        model = lib.nn.Linear(2, 2)
        compiled = lib.compile(model)
        assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is model
        assert lib.compile()(len)([1, 2]) == 2
    out = ember.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (ember.tensor(0), ember.tensor(1.0)))
    assert out[0].item() == 3 and out[1].item() == 8.0
    assert ember.sym_int(2.7) == torch.sym_int(2.7) and ember.sym_max(2, 5) == torch.sym_max(2, 5)
    assert ember.sym_float(2) == torch.sym_float(2) and ember.sym_not(True) == torch.sym_not(True)


def test_aten_reduction_codes_and_functional_forms() -> None:
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    for code in (0, 1, 2):
        check(lambda lib, a, b: lib.binary_cross_entropy_with_logits(a, b.sigmoid().detach(), None, None, code), x, t,
              gradgrad=True)
        check(lambda lib, a, b: lib.kl_div(a.log_softmax(-1), b.softmax(-1), code), x, t, gradgrad=True)
    same_error(lambda lib: lib.softmax([1.0], 0))
    same_error(lambda lib: lib.layer_norm(1.5, (2,)))
    same_error(lambda lib: lib.channel_shuffle(lib.zeros(1, 3, 2), 2), match_words=["divisible by groups"])
    for lib in (ember, torch):
        w = lib.eye(3)
        assert lib.embedding(w, lib.tensor([2, 0])).tolist() == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
        y = lib.tensor([-1.0, 2.0])
        assert lib.relu_(y) is y and y.tolist() == [0.0, 2.0]
        assert lib.dropout(y, 0.5, False) is y or lib.dropout(y, 0.5, False).tolist() == [0.0, 2.0]
        z = lib.ones(2, 3, 4)
        assert lib.feature_dropout(z, 0.0, True).tolist() == z.tolist()
    w = ember.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    tw = torch.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    ember.embedding_renorm_(w, ember.tensor([0, 1]), 1.0, 2.0)
    torch.embedding_renorm_(tw, torch.tensor([0, 1]), 1.0, 2.0)
    assert_close(w, tw)


def test_feature_alpha_dropout_values_and_gradient() -> None:
    for lib in (ember, torch):
        lib.manual_seed(0)
        x = lib.ones(300, 3, 2, 2, requires_grad=True)
        y = lib.feature_alpha_dropout(x, 0.3, True)
        vals = sorted({round(v, 4) for v in y.detach().flatten().tolist()})
        assert vals == [-1.0595, 1.315], vals  # SELU's dropped value and the kept one, affinely corrected
        assert bool((y == y[:, :, :1, :1]).all())  # one draw per feature map
        kept = (y > 0).float()
        (g,) = lib.autograd.grad(y.sum(), x)
        assert lib.allclose(g, kept * 0.8608, atol=1e-3)
        assert lib.feature_alpha_dropout(x, 0.3, False) is x
