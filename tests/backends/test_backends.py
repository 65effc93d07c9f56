"""torch.backends: flags keep torch's defaults, checks, messages and context managers; availability queries
answer for ember (no cuDNN/MPS/oneDNN/MKL kernels)."""
from __future__ import annotations

import pytest

from oracle import ember, torch, same_outcome


def _ctx(cm):
    with cm as value:
        return value


def _set(obj, name, value):
    """Set a flag, read it back, restore it (so one test's setting cannot leak into another)."""
    old = getattr(obj, name)
    try:
        setattr(obj, name, value)
        return getattr(obj, name)
    finally:
        setattr(obj, name, old)


def _inside(cm, read):
    with cm:
        return read()


CALLS = """
torch.backends.cudnn.is_available()
torch.backends.cudnn.version()
torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic
torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark_limit, torch.backends.cudnn.depthwise_kernel
torch.backends.cudnn.fp32_precision, torch.backends.cudnn.conv.fp32_precision, torch.backends.cudnn.rnn.fp32_precision
_set(torch.backends.cudnn, "benchmark", True)
_set(torch.backends.cudnn, "deterministic", True)
_set(torch.backends.cudnn, "enabled", False)
_set(torch.backends.cudnn, "allow_tf32", False)
_set(torch.backends.cudnn, "enabled", 1)
_set(torch.backends.cudnn, "benchmark", "x")
_set(torch.backends.cudnn, "deterministic", None)
torch.backends.cudnn.is_acceptable(torch.ones(2))
torch.backends.cudnn.foo
_inside(torch.backends.cudnn.flags(enabled=False, benchmark=True), lambda: (torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark))
(_ctx(torch.backends.cudnn.flags(enabled=False)), torch.backends.cudnn.enabled)[1]
torch.backends.cuda.is_built()
torch.backends.cuda.matmul.allow_tf32
torch.backends.cuda.matmul.fp32_precision
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction
torch.backends.cuda.matmul.allow_fp16_accumulation
torch.backends.cuda.matmul.foo
_set(torch.backends.cuda.matmul, "foo", 1)
_set(torch.backends.cuda.matmul, "allow_tf32", "x")
_set(torch.backends.cuda.matmul, "fp32_precision", "x")
_set(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", False)
(_set(torch.backends.cuda.matmul, "allow_tf32", True), torch.get_float32_matmul_precision())
torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.mem_efficient_sdp_enabled()
torch.backends.cuda.math_sdp_enabled(), torch.backends.cuda.cudnn_sdp_enabled()
torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
torch.backends.cuda.is_flash_attention_available(), torch.backends.cuda.is_ck_sdpa_available()
(torch.backends.cuda.enable_flash_sdp(False), torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.enable_flash_sdp(True))
torch.backends.cuda.enable_math_sdp(1)
torch.backends.cuda.enable_mem_efficient_sdp("x")
torch.backends.cuda.enable_cudnn_sdp(0)
_inside(torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=False), lambda: (torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled(), torch.backends.cuda.mem_efficient_sdp_enabled()))
(_ctx(torch.backends.cuda.sdp_kernel(enable_flash=False)), torch.backends.cuda.flash_sdp_enabled())[1]
{k: int(v) for k, v in torch.backends.cuda.SDPBackend.__members__.items()}
str(torch.backends.cuda.SDPBackend.MATH)
str(torch.backends.cuda.preferred_linalg_library())
str(torch.backends.cuda.preferred_linalg_library("default"))
torch.backends.cuda.preferred_linalg_library("cusolver")
torch.backends.cuda.preferred_linalg_library("magma")
torch.backends.cuda.preferred_linalg_library("x")
str(torch.backends.cuda.preferred_blas_library())
torch.backends.mps.is_available(), torch.backends.mps.is_built()
torch.backends.mps.get_name()
torch.backends.mps.get_core_count()
torch.backends.mps.is_macos_or_newer(13, 0)
torch.backends.mps.is_macos13_or_newer()
torch.backends.mkldnn.enabled, torch.backends.mkldnn.deterministic, torch.backends.mkldnn.allow_tf32
torch.backends.mkldnn.fp32_precision, torch.backends.mkldnn.matmul.fp32_precision, torch.backends.mkldnn.conv.fp32_precision
_set(torch.backends.mkldnn, "enabled", 1)
_set(torch.backends.mkldnn, "deterministic", True)
_inside(torch.backends.mkldnn.flags(enabled=False), lambda: torch.backends.mkldnn.enabled)
torch.backends.mkldnn.VERBOSE_OFF, torch.backends.mkldnn.VERBOSE_ON, torch.backends.mkldnn.VERBOSE_ON_CREATION
_ctx(torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON)) is not None
_ctx(torch.backends.mkldnn.verbose(5))
torch.backends.mkl.VERBOSE_OFF, torch.backends.mkl.VERBOSE_ON
torch.backends.mha.get_fastpath_enabled()
(torch.backends.mha.set_fastpath_enabled(False), torch.backends.mha.get_fastpath_enabled(), torch.backends.mha.set_fastpath_enabled(True))
torch.backends.opt_einsum.is_available(), torch.backends.opt_einsum.enabled, torch.backends.opt_einsum.strategy
torch.backends.opt_einsum.get_opt_einsum()
torch.backends.cusparselt.is_available(), torch.backends.cusparselt.version(), torch.backends.cusparselt.get_max_alg_id()
torch.backends.flags_frozen()
torch.backends.fp32_precision
_inside(torch.backends.flags(fp32_precision="tf32"), lambda: torch.backends.fp32_precision)
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_backends_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"torch": lib, "_ctx": _ctx, "_set": _set, "_inside": _inside}))


@pytest.mark.parametrize("name", ["mkldnn", "mkl", "openmp"])
def test_cpu_libraries_answer_for_ember(name: str) -> None:
    """torch's CPU wheel has oneDNN, MKL and OpenMP kernels; ember's kernels are NumPy's, so it says no."""
    assert torch.backends.__getattr__(name).is_available() is True
    assert getattr(ember.backends, name).is_available() is False


def test_cpu_capability_is_one_of_torchs_names() -> None:
    assert ember.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")


def test_mkldnn_allow_tf32_warns_as_torch() -> None:
    same_outcome(lambda lib: _set(lib.backends.mkldnn, "allow_tf32", False), message=False)


def test_flags_frozen_after_disable_global_flags(monkeypatch) -> None:
    """After disable_global_flags a bare assignment raises torch's error; flags() blocks still work."""
    monkeypatch.setattr(ember.backends, "_frozen", [False])
    ember.backends.disable_global_flags()
    assert ember.backends.flags_frozen()
    with pytest.raises(RuntimeError, match="not allowed to set ember.backends.cudnn flags after "
                                           "disable_global_flags; please use flags"):
        ember.backends.cudnn.benchmark = True
    with ember.backends.cudnn.flags(enabled=True, benchmark=True):
        assert ember.backends.cudnn.benchmark is True
    assert ember.backends.cudnn.benchmark is False


def test_submodules_import() -> None:
    import importlib

    for name in ("cudnn", "cuda", "mps", "mkldnn", "opt_einsum"):
        assert importlib.import_module(f"ember.backends.{name}") is getattr(ember.backends, name)
