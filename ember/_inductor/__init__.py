"""ember._inductor: torch._inductor's settings namespace (``config``); ember generates no kernels, so settings
only keep torch's defaults and what was set (NOTE [config modules])."""
from __future__ import annotations

from ..utils._config_module import ConfigModule

__all__ = ["config"]

config = ConfigModule(__name__ + ".config", "torch._inductor.config", {
    "max_autotune": False, "max_autotune_gemm": False, "max_autotune_pointwise": False,
    "coordinate_descent_tuning": False, "freezing": False, "fx_graph_cache": True, "fx_graph_remote_cache": None,
    "autotune_local_cache": True, "cpp_wrapper": False, "epilogue_fusion": True, "aggressive_fusion": False,
    "conv_1x1_as_mm": False, "benchmark_kernel": False, "debug": False, "compile_threads": 2,
    "layout_optimization": True, "fallback_random": False, "split_reductions": True, "emulate_precision_casts": False,
    "shape_padding": True, "permute_fusion": False, "group_fusion": False, "reorder_for_compute_comm_overlap": False,
    "size_asserts": True, "realize_opcount_threshold": None, "unroll_reductions_threshold": 8, "dce": False,
    "implicit_fallbacks": True, "force_disable_caches": False, "freezing_discard_parameters": False,
    "search_autotune_cache": False, "autotune_in_subproc": False, "max_fusion_size": 64,
    "triton.cudagraphs": False, "triton.cudagraph_trees": True, "triton.unique_kernel_names": True,
    "triton.descriptive_names": "original_aten", "triton.autotune_pointwise": True,
    "triton.cooperative_reductions": False, "cpp.threads": -1, "cpp.simdlen": None,
    "cpp.enable_kernel_profile": False, "cpp.dynamic_threads": False, "cpp.max_horizontal_fusion_size": 16,
    "trace.enabled": False, "trace.debug_log": False, "aot_inductor.output_path": "",
})
