"""torch.cuda on a machine without CUDA: every call answers as torch's CPU-only build does (values, errors and
their messages, warnings)."""
from __future__ import annotations

import pytest

from oracle import ember, torch, same_outcome


def _ctx(cm):
    with cm as value:
        return value


CALLS = """
torch.cuda.is_available()
torch.cuda.device_count()
torch.cuda.is_initialized()
torch.cuda.init()
torch.cuda.current_device()
torch.cuda.current_device(0)
torch.cuda.set_device(0)
torch.cuda.set_device(-1)
torch.cuda.set_device("cuda:1")
torch.cuda.set_device("cuda")
torch.cuda.set_device(torch.device("cuda", 0))
torch.cuda.set_device("cpu")
torch.cuda.set_device(None)
torch.cuda.set_device(1.5)
torch.cuda.set_device("xyz")
torch.cuda.synchronize()
torch.cuda.synchronize("cpu")
torch.cuda.ipc_collect()
torch.cuda.empty_cache()
torch.cuda.manual_seed(0)
torch.cuda.manual_seed(1.5)
torch.cuda.manual_seed("x")
torch.cuda.manual_seed_all(3)
torch.cuda.seed()
torch.cuda.seed_all()
torch.cuda.initial_seed()
torch.cuda.get_rng_state()
torch.cuda.get_rng_state_all()
torch.cuda.set_rng_state(torch.zeros(3, dtype=torch.uint8))
torch.cuda.set_rng_state(0)
torch.cuda.set_rng_state_all([])
torch.cuda.set_rng_state_all(0)
torch.cuda.random.manual_seed(1)
torch.cuda.memory_allocated()
torch.cuda.memory_allocated(0)
torch.cuda.memory_allocated("cpu")
torch.cuda.max_memory_allocated()
torch.cuda.memory_reserved(0)
torch.cuda.max_memory_reserved()
torch.cuda.memory_cached()
torch.cuda.max_memory_cached()
torch.cuda.memory_stats()
torch.cuda.memory_stats_as_nested_dict()
torch.cuda.host_memory_stats()
torch.cuda.host_memory_stats_as_nested_dict()
torch.cuda.memory_summary()
torch.cuda.memory_snapshot()
torch.cuda.reset_peak_memory_stats()
torch.cuda.reset_peak_memory_stats(0)
torch.cuda.reset_peak_memory_stats("cpu")
torch.cuda.reset_accumulated_memory_stats()
torch.cuda.reset_max_memory_allocated()
torch.cuda.reset_max_memory_cached()
torch.cuda.reset_accumulated_host_memory_stats()
torch.cuda.reset_peak_host_memory_stats()
torch.cuda.list_gpu_processes()
torch.cuda.mem_get_info()
torch.cuda.caching_allocator_alloc(10)
torch.cuda.caching_allocator_delete(0)
torch.cuda.caching_allocator_enable(False)
_ctx(torch.cuda.caching_allocator_disabled())
torch.cuda.set_per_process_memory_fraction(0.5)
torch.cuda.get_per_process_memory_fraction()
torch.cuda.get_allocator_backend()
torch.cuda.change_current_allocator(0)
torch.cuda.MemPool()
_ctx(torch.cuda.use_mem_pool(0))
torch.cuda.get_device_name()
torch.cuda.get_device_name(0)
torch.cuda.get_device_name("cpu")
torch.cuda.get_device_properties(0)
torch.cuda.get_device_capability()
torch.cuda.can_device_access_peer(0, 1)
torch.cuda.is_bf16_supported()
torch.cuda.is_bf16_supported(False)
torch.cuda.is_tf32_supported()
torch.cuda.get_arch_list()
torch.cuda.get_gencode_flags()
torch.cuda.cudart()
torch.cuda.current_blas_handle()
torch.cuda.current_solver_handle()
torch.cuda.set_sync_debug_mode("warn")
torch.cuda.get_sync_debug_mode()
torch.cuda.check_error(0)
torch.cuda.CudaError(1)
torch.cuda.cudaStatus.SUCCESS, torch.cuda.cudaStatus.ERROR_NOT_READY
torch.cuda.has_half, torch.cuda.has_magma, torch.cuda.default_generators
torch.cuda.utilization()
torch.cuda.memory_usage(0)
torch.cuda.temperature()
torch.cuda.power_draw()
torch.cuda.clock_rate()
torch.cuda.device_memory_used()
_ctx(torch.cuda.device(0))
_ctx(torch.cuda.device(-1))
_ctx(torch.cuda.device(None))
_ctx(torch.cuda.device("cuda"))
_ctx(torch.cuda.device("cuda:1"))
torch.cuda.device("cpu")
torch.cuda.device("mps")
torch.cuda.device(torch.device("cuda", 2)).idx
torch.cuda.device(1.5).idx
torch.cuda.device_of(torch.ones(2)).idx
_ctx(torch.cuda.device_of(torch.ones(2)))
torch.cuda.Stream()
torch.cuda.Stream(priority=-1)
torch.cuda.ExternalStream(1)
torch.cuda.Event()
torch.cuda.Event(enable_timing=True)
torch.cuda.current_stream()
torch.cuda.default_stream(0)
torch.cuda.get_stream_from_external(0)
_ctx(torch.cuda.stream(None))
_ctx(torch.cuda.stream(object()))
_ctx(torch.cuda.StreamContext(None))
torch.cuda.set_stream(None)
torch.cuda.set_stream(0)
isinstance(object(), torch.cuda.Stream)
torch.cuda.CUDAGraph()
torch.cuda.graph(None)
torch.cuda.graph_pool_handle()
torch.cuda.is_current_stream_capturing()
torch.cuda.make_graphed_callables(torch.nn.Linear(2, 2), (torch.ones(1, 2),))
torch.cuda.nvtx.range_push("a")
torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.mark("a")
torch.cuda.nvtx.range_start("a")
_ctx(torch.cuda.nvtx.range("a {}", 1))
torch.cuda.profiler.start()
torch.cuda.profiler.stop()
_ctx(torch.cuda.profiler.profile())
torch.cuda.nccl.is_available([torch.ones(2)])
torch.cuda.nccl.version()
torch.cuda.FloatTensor(2)
torch.cuda.LongTensor([1, 2])
torch.cuda.HalfTensor()
torch.cuda.BoolTensor()
torch.cuda.ByteTensor()
isinstance(torch.ones(2), torch.cuda.FloatTensor)
repr(torch.cuda.DoubleTensor), torch.cuda.IntTensor.__name__
torch.cuda.ShortTensor.is_cuda, str(torch.cuda.FloatTensor.dtype)
repr(torch.cuda.LongStorage)
torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
issubclass(torch.cuda.OutOfMemoryError, RuntimeError), issubclass(torch.cuda.CudaError, RuntimeError)
issubclass(torch.cuda.DeferredCudaCallError, Exception)
torch.cuda.memory.memory_allocated is torch.cuda.memory_allocated
torch.cuda.random.get_rng_state_all is torch.cuda.get_rng_state_all
torch.cuda.streams.Stream is torch.cuda.Stream
torch.ones(2).cuda()
torch.ones(2).is_cuda
torch.ones(2, device="cuda")
torch.nn.Linear(2, 2).cuda()
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_cuda_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"torch": lib, "_ctx": _ctx}))


def test_cuda_namespace_covers_torch() -> None:
    """Every public torch.cuda name exists in ember.cuda, except the ones docs/compat.md lists as absent."""
    absent = {"amp", "jiterator", "tunable", "sparse", "comm", "gds", "green_contexts", "GreenContext",
              "CUDAPluggableAllocator"}
    missing = sorted(n for n in torch.cuda.__all__ if n not in absent and not hasattr(ember.cuda, n))
    assert not missing, missing


def test_seed_is_queued_until_cuda_initialises(monkeypatch) -> None:
    """Seeds set before CUDA starts run when it initialises (as torch's queue), through the runtime seam."""
    from ember.cuda import _runtime

    calls = []

    class FakeRuntime:
        compiled = True

        def init(self):
            calls.append("init")

        def manual_seed(self, seed, all_devices):
            calls.append(("seed", seed, all_devices))

    monkeypatch.setattr(ember.cuda, "runtime", FakeRuntime())
    monkeypatch.setattr(ember.cuda.random, "runtime", ember.cuda.runtime)
    monkeypatch.setattr(ember.cuda, "_initialized", False)
    monkeypatch.setattr(ember.cuda, "_queued_calls", [])
    ember.cuda.manual_seed_all(7)
    assert calls == []
    ember.cuda.init()
    assert calls == ["init", ("seed", 7, True)] and ember.cuda.is_initialized()
    assert isinstance(_runtime.runtime, _runtime.NotCompiled)


@pytest.mark.parametrize("name", ["FloatStorage", "ComplexDoubleStorage", "BoolStorage"])
def test_cuda_legacy_storages(name: str) -> None:
    """Constructing one warns that TypedStorage is deprecated (once per process), then needs CUDA."""
    torch.storage._reset_warn_typed_storage_removal()
    ember.storage._reset_warn_typed_storage_removal()
    same_outcome(lambda lib: getattr(lib.cuda, name)())
    same_outcome(lambda lib: getattr(lib.cuda, name)())  # no second warning


@pytest.mark.parametrize("arg", ['"torch.FloatTensor"', '"FloatTensor"', '"torch.cuda.FloatTensor"',
                                 "torch.cuda.FloatTensor", '"torch.float32"', '"torch.Foo"', '"torch.cuda.Foo"',
                                 "torch.float32", "torch.DoubleTensor", "3"])
def test_tensor_type_to_cuda_types(arg: str) -> None:
    """Tensor.type with a CUDA type fails as torch's CPU build does; CPU types convert."""
    def run(lib):
        out = lib.ones(2, dtype=lib.int64).type(eval(arg, {"torch": lib}))
        return str(out.dtype), out.tolist()
    same_outcome(run)
