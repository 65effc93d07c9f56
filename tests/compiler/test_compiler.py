"""torch.compiler, torch._dynamo and torch._inductor.config on ember (which runs everything eagerly): the
decorators give back functions that behave as the originals, the queries answer as torch's outside compiled
code, and the config modules keep torch's defaults, patches and errors."""
from __future__ import annotations

import importlib

import pytest

from oracle import ember, same_outcome


def double(x):
    return x * 2


def _inside(cm, read):
    with cm:
        return read()


CALLS = """
torch.compiler.is_compiling(), torch.compiler.is_dynamo_compiling(), torch.compiler.is_exporting()
torch.compiler.disable(double)(torch.ones(2)).tolist()
torch.compiler.disable()(double)(torch.ones(2)).tolist()
torch.compiler.disable(double, recursive=False)(torch.ones(2)).tolist()
torch.compiler.disable(double, reason="why")(torch.ones(2)).tolist()
torch.compiler.disable(double).__name__
torch.compiler.allow_in_graph(double) is double
torch.compiler.assume_constant_result(double) is double
torch.compiler.list_backends()
torch.compiler.reset()
torch.compiler.get_default_backend()
torch.compiler.wrap_numpy(lambda a: a + 1)(torch.ones(2)).tolist()
torch.compiler.wrap_numpy(lambda a, b: (a * b, a))(torch.ones(2), torch.full((2,), 3.0))[0].tolist()
torch.compiler.substitute_in_graph(double)(lambda x: x)(3)
torch.compiler.nested_compile_region(double)(torch.ones(1)).tolist()
torch.compiler.config.job_id, torch.compiler.config.force_disable_caches, torch.compiler.config.cache_key_tag
torch.compiler.config.nothing
torch._dynamo.is_compiling()
torch._dynamo.reset()
torch._dynamo.disable(double)(torch.ones(1)).tolist()
torch._dynamo.allow_in_graph(double) is double
torch._dynamo.graph_break()
torch._dynamo.mark_dynamic(torch.ones(2, 3), 0)
torch._dynamo.mark_dynamic(torch.ones(2, 3), [0, 1], min=1, max=8)
torch._dynamo.maybe_mark_dynamic(torch.ones(2), 0)
torch._dynamo.mark_static(torch.ones(2), 0)
torch._dynamo.mark_static_address(torch.ones(2))
torch._dynamo.run(double)(torch.ones(1)).tolist()
torch._dynamo.nonstrict_trace(double)(torch.ones(1)).tolist()
torch._dynamo.is_dynamo_supported()
torch._dynamo.list_backends()
"eager" in torch._dynamo.list_backends(exclude_tags=()), "eager" in torch._dynamo.list_backends()
torch._dynamo.config.suppress_errors, torch._dynamo.config.cache_size_limit, torch._dynamo.config.optimize_ddp
torch._dynamo.config.recompile_limit, torch._dynamo.config.capture_scalar_outputs, torch._dynamo.config.verbose
torch._dynamo.config.foo
_inside(torch._dynamo.config.patch(suppress_errors=True), lambda: torch._dynamo.config.suppress_errors)
torch._dynamo.config.patch(suppress_errors=True)(lambda: torch._dynamo.config.suppress_errors)()
torch._dynamo.config.patch("cache_size_limit", 3)(lambda: torch._dynamo.config.cache_size_limit)()
_inside(torch._dynamo.config.patch(zzz=True), lambda: 1)
torch._dynamo.config.suppress_errors
isinstance(torch.nn.Linear(1, 1), torch._dynamo.eval_frame.OptimizedModule)
torch._inductor.config.max_autotune, torch._inductor.config.coordinate_descent_tuning, torch._inductor.config.freezing
torch._inductor.config.triton.cudagraphs, torch._inductor.config.cpp.threads, torch._inductor.config.fx_graph_cache
torch._inductor.config.triton.nope
torch._inductor.config.nope
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_compiler_call(expr: str) -> None:
    same_outcome(lambda lib: eval(expr, {"__name__": __name__, "torch": lib, "double": double, "_inside": _inside}))


def _set_and_read(lib, module: str, name: str, value):
    config = importlib.import_module(f"{lib.__name__}.{module}")
    old = getattr(config, name)
    try:
        setattr(config, name, value)
        return getattr(config, name)
    finally:
        setattr(config, name, old)


@pytest.mark.parametrize("module,name,value", [("_dynamo.config", "cache_size_limit", 64),
                                               ("_dynamo.config", "suppress_errors", True),
                                               ("_inductor.config", "max_autotune", True),
                                               ("compiler.config", "job_id", "run-1")])
def test_config_settings_round_trip(module: str, name: str, value) -> None:
    same_outcome(lambda lib: _set_and_read(lib, module, name, value))


def test_nested_config_groups_are_settable() -> None:
    cfg = ember._inductor.config
    cfg.triton.cudagraphs = True
    try:
        assert cfg.triton.cudagraphs is True and cfg.get_config_copy()["triton.cudagraphs"] is True
    finally:
        cfg.triton.cudagraphs = False


def test_a_setting_torch_has_but_the_table_lacks_can_be_set() -> None:
    """NOTE [config modules]: assignment never fails, so code written for torch runs; the value reads back."""
    ember._dynamo.config.some_rarely_used_setting = 5
    try:
        assert ember._dynamo.config.some_rarely_used_setting == 5
    finally:
        del ember._dynamo.config.some_rarely_used_setting
    with pytest.raises(AttributeError, match="torch._dynamo.config.some_rarely_used_setting does not exist"):
        assert ember._dynamo.config.some_rarely_used_setting is None  # raises first


def test_config_modules_import_and_pickle_round_trip() -> None:
    import ember._dynamo.config as dynamo_config
    import ember._inductor.config as inductor_config

    assert dynamo_config is ember._dynamo.config and inductor_config is ember._inductor.config
    saved = dynamo_config.save_config()
    dynamo_config.cache_size_limit = 99
    dynamo_config.load_config(saved)
    assert dynamo_config.cache_size_limit == 8


def test_compile_is_ember_compile() -> None:
    """torch.compiler.compile is the same entry point as torch.compile: both wrap a module in an OptimizedModule."""
    model = ember.nn.Linear(2, 2)
    a, b = ember.compiler.compile(model), ember.compile(model)
    assert type(a) is type(b) is ember._dynamo.eval_frame.OptimizedModule
    assert a._orig_mod is b._orig_mod is model


def test_set_stance_is_a_context_manager_and_decorator() -> None:
    from ember._compile.api import stance

    with ember.compiler.set_stance("force_eager"):
        assert stance.name == "force_eager"
        assert double(ember.ones(1)).tolist() == [2.0]
    assert stance.name == "default"
    decorated = ember.compiler.set_stance("force_eager")(double)
    assert stance.name == "default"
    assert decorated(ember.ones(1)).tolist() == [2.0] and decorated.__name__ == "double"


def test_cudagraph_mark_step_begin_does_nothing() -> None:
    assert ember.compiler.cudagraph_mark_step_begin() is None
