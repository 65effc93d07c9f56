"""torch.accelerator and torch.mps on a machine without accelerators: torch's CPU-build answers and errors."""
from __future__ import annotations

import pytest

from oracle import ember, torch, same_outcome


def _ctx(cm):
    with cm as value:
        return value


CALLS = """
torch.accelerator.is_available()
torch.accelerator.device_count()
torch.accelerator.current_accelerator()
torch.accelerator.current_accelerator(True)
torch.accelerator.current_device_index()
torch.accelerator.current_device_idx()
torch.accelerator.current_device_index(0)
torch.accelerator.set_device_index(0)
torch.accelerator.set_device_idx("cuda:0")
torch.accelerator.set_device_index()
torch.accelerator.get_device_capability()
torch.accelerator.current_stream()
torch.accelerator.set_stream(0)
torch.accelerator.synchronize()
torch.accelerator.synchronize(0)
torch.accelerator.empty_cache()
torch.accelerator.empty_host_cache()
torch.accelerator.get_memory_info()
torch.accelerator.memory_stats()
torch.accelerator.memory_allocated()
torch.accelerator.max_memory_allocated(0)
torch.accelerator.memory_reserved()
torch.accelerator.max_memory_reserved()
torch.accelerator.reset_accumulated_memory_stats()
torch.accelerator.reset_peak_memory_stats()
_ctx(torch.accelerator.device_index(None))
_ctx(torch.accelerator.device_index(0))
torch.accelerator.Graph()
torch.mps.is_available()
torch.mps.device_count()
torch.mps.synchronize()
torch.mps.get_rng_state()
torch.mps.set_rng_state(torch.zeros(2, dtype=torch.uint8))
torch.mps.manual_seed(1)
torch.mps.manual_seed("x")
torch.mps.seed()
torch.mps.empty_cache()
torch.mps.set_per_process_memory_fraction(0.5)
torch.mps.set_per_process_memory_fraction(1)
torch.mps.set_per_process_memory_fraction(3.0)
torch.mps.current_allocated_memory()
torch.mps.driver_allocated_memory()
torch.mps.recommended_max_memory()
torch.mps.compile_shader("kernel void f() {}")
torch.mps.load_metallib("x")
torch.mps.Event()
torch.mps.profiler.start()
torch.mps.profiler.stop()
torch.mps.profiler.is_metal_capture_enabled()
_ctx(torch.mps.profiler.profile())
""".strip().splitlines()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # torch.mps.Event's __del__
@pytest.mark.parametrize("expr", CALLS)
def test_accelerator_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"torch": lib, "_ctx": _ctx}))


@pytest.mark.parametrize("module", ["accelerator", "mps"])
def test_namespace_covers_torch(module: str) -> None:
    ours, theirs = getattr(ember, module), getattr(torch, module)
    missing = [n for n in getattr(theirs, "__all__", []) if not hasattr(ours, n)]
    assert not missing, missing


DEVICE_ARGS = ["0", "'cuda:0'", "'cpu'", "torch.device('cuda', 1)", "None", "'xyz'", "1.5"]


@pytest.mark.parametrize("fn", ["set_device_index", "get_device_capability", "memory_allocated", "synchronize",
                                "current_stream", "get_memory_info", "reset_peak_memory_stats"])
@pytest.mark.parametrize("arg", DEVICE_ARGS)
def test_accelerator_device_arguments(fn: str, arg: str) -> None:
    same_outcome(lambda lib: eval(f"torch.accelerator.{fn}({arg})", {"torch": lib}))


@pytest.mark.parametrize("arg", DEVICE_ARGS)
def test_accelerator_device_index_context(arg: str) -> None:
    same_outcome(lambda lib: _ctx(eval(f"torch.accelerator.device_index({arg})", {"torch": lib})))
