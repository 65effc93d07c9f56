"""Devices on a CPU-only machine, against torch's CPU build: parsing, equality, and the errors for accelerators."""

import pytest

from oracle import ember, same_error, torch

LIBS = (ember, torch)


@pytest.mark.parametrize(
    "args", [("cpu",), ("cpu:0",), ("cuda",), ("cuda:1",), ("cuda", 2), ("meta",), ("mps",), ("cpu", 0), ("xpu:3",)]
)
def test_device_parse_repr_str(args):
    e, t = ember.device(*args), torch.device(*args)
    assert repr(e) == repr(t) and str(e) == str(t) and e.type == t.type and e.index == t.index
    assert ember.device(e) == e and str(ember.device(e)) == str(t)


def test_device_equality_and_hash():
    for lib in LIBS:
        d = lib.device("cpu")
        assert d == lib.device("cpu") and hash(d) == hash(lib.device("cpu"))
        assert d != lib.device("cpu:0") and d != lib.device("cuda")
        assert (d == "cpu") is False  # torch never equates a device with a string
        assert lib.ones(2).device == d and str(lib.ones(2).device) == "cpu"
        assert len({lib.device("cpu"), lib.device("cpu")}) == 1


@pytest.mark.parametrize("spec", ["gpu", "cpu:x", "cuda:-1", "cuda:01", "cuda:"])
def test_device_parse_errors(spec):
    same_error(lambda lib: lib.device(spec))


def test_device_int_without_accelerator():
    same_error(lambda lib: lib.device(0))


def test_tensor_device_queries():
    for lib in LIBS:
        x = lib.ones(2)
        assert x.is_cpu and not x.is_cuda and x.get_device() == -1
        assert x.cpu() is x and x.to("cpu") is x and x.to(lib.device("cpu")) is x
        assert x.to("cpu:0").device == lib.device("cpu")
        assert lib.zeros(2, device="cpu").device == lib.device("cpu")
        assert lib.tensor([1], device=lib.device("cpu")).device.type == "cpu"


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.ones(2).cuda(),
        lambda lib: lib.ones(2).to("cuda"),
        lambda lib: lib.ones(2).to(lib.device("cuda:0")),
        lambda lib: lib.ones(2).to(device="cuda"),
        lambda lib: lib.zeros(2, device="cuda"),
        lambda lib: lib.tensor([1.0], device="cuda"),
        lambda lib: lib.arange(3, device="cuda"),
        lambda lib: lib.randn(2, device="cuda"),
        lambda lib: lib.zeros_like(lib.ones(2), device="cuda"),
        lambda lib: lib.ones(2).new_zeros(2, device="cuda"),
        lambda lib: lib.ones(2).to("xpu"),
        lambda lib: lib.ones(2).to("mps"),
        lambda lib: lib.cuda.current_device(),
        lambda lib: lib.cuda.synchronize(),
    ],
)
def test_accelerators_raise_torchs_error(make):
    same_error(make)


def test_cuda_module_queries():
    for lib in LIBS:
        assert lib.cuda.is_available() is False
        assert lib.cuda.device_count() == 0
        lib.cuda.manual_seed(0)
        lib.cuda.manual_seed_all(0)
        lib.cuda.empty_cache()
        assert lib.cuda.is_initialized() is False


def test_set_default_device():
    try:
        xs = {}
        for lib in LIBS:
            lib.set_default_device("cpu")
            assert lib.get_default_device() == lib.device("cpu")
            assert lib.ones(2).device == lib.device("cpu")
            xs[lib] = lib.ones(2)
            lib.set_default_device("cuda")  # accepted; creating a tensor then fails
        same_error(lambda lib: lib.ones(2))
        same_error(lambda lib: lib.arange(2))
        for lib in LIBS:  # explicit cpu and *_like / new_* of cpu tensors still work
            x = xs[lib]
            for t in (lib.zeros_like(x), x.new_zeros(2), x.new_tensor([1.0]), lib.tensor([1.0], device="cpu"), x + 1):
                assert t.device.type == "cpu"
    finally:
        for lib in LIBS:
            lib.set_default_device(None)
    assert str(ember.get_default_device()) == "cpu"
    assert ember.ones(2).device == ember.device("cpu")


@pytest.mark.parametrize("name", ["get_device_name", "get_device_properties", "get_device_capability", "get_rng_state",
                                  "current_stream", "mem_get_info", "ipc_collect", "initial_seed", "synchronize"])
def test_cuda_functions_that_need_a_gpu(name):
    same_error(lambda lib: getattr(lib.cuda, name)())


@pytest.mark.parametrize("name", ["memory_allocated", "max_memory_allocated", "memory_reserved", "is_bf16_supported",
                                  "get_arch_list", "get_rng_state_all", "seed", "seed_all", "empty_cache"])
def test_cuda_functions_that_answer(name):
    assert getattr(ember.cuda, name)() == getattr(torch.cuda, name)()


def test_backends_flags():
    for lib in LIBS:
        assert lib.backends.mps.is_available() is False and lib.backends.mps.is_built() is False
        assert lib.backends.cudnn.is_available() is False and lib.backends.cuda.is_built() is False
        assert lib.backends.cudnn.enabled is True and lib.backends.cudnn.benchmark is False
    ember.backends.cudnn.deterministic = True  # settable, as in torch
    ember.backends.cudnn.deterministic = False
