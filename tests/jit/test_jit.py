"""torch.jit without TorchScript: scripted and traced callables behave as the originals (values, gradients,
state_dict, printed form), torch's refusals and deprecation warnings; archives are refused with a clear error."""
from __future__ import annotations

import typing
import warnings

import numpy as np
import pytest

from oracle import assert_close, ember, torch, plain_outcome, same_outcome


def _distinct_warnings(fn, lib):
    """The outcome with each distinct warning once (torch repeats its deprecation warning through wrappers)."""
    out = plain_outcome(fn, lib)
    seen = []
    for w in out[-1]:
        if w not in seen:
            seen.append(w)
    return (*out[:-1], seen)


def same(fn) -> None:
    """Same outcome; for errors the first line of the message (torch's compile errors then quote the source)."""
    e, t = _distinct_warnings(fn, ember), _distinct_warnings(fn, torch)
    if e[0] == t[0] == "raise":
        e, t = (*e[:2], e[2].split("\n")[0], e[3]), (*t[:2], t[2].split("\n")[0], t[3])
    assert e == t, f"ember {e!r}\ntorch {t!r}"


def scale_add(x, y):
    return x * y + 1


a_lambda = lambda x: x  # noqa: E731 - what torch.jit.script refuses


def with_varargs(x, *rest):
    return x


def with_kwonly_default(x, *, k=1):
    return x


def make_model(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 4)
            self.register_buffer("shift", lib.arange(4.0))

        def forward(self, x):
            return lib.tanh(self.lin(x)) + self.shift

        def helper(self, x):
            return x * 2

    lib.manual_seed(0)
    m = Block()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(p.shape)))
    return m


X = np.random.default_rng(0).standard_normal((2, 3))


@pytest.mark.parametrize("how", ["script", "trace"])
def test_scripted_module_matches_original(how: str) -> None:
    """Outputs, gradients (shared parameters), state_dict keys and values, printed form, types."""
    results = {}
    for lib in (ember, torch):
        m = make_model(lib)
        x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            s = lib.jit.script(m) if how == "script" else lib.jit.trace(m, lib.tensor(X, dtype=lib.float32))
        out = s(x)
        out.sum().backward()
        results[lib] = (s, out, x.grad, m.lin.weight.grad)
        assert s.lin.weight is m.lin.weight and s.shift is m.shift
        assert isinstance(s, lib.jit.ScriptModule) and isinstance(s, lib.nn.Module)
        assert isinstance(s.lin, lib.jit.ScriptModule)
        assert type(s).__name__ == ("RecursiveScriptModule" if how == "script" else "TopLevelTracedModule")
        assert s.original_name == "Block"
        assert s.lin.original_name == "Linear"
        s.eval()
        assert not s.training and m.training  # the copy's mode is its own
    (se, oe, gxe, gwe), (st, ot, gxt, gwt) = results[ember], results[torch]
    assert_close(oe, ot)
    assert_close(gxe, gxt)
    assert_close(gwe, gwt)
    assert list(se.state_dict()) == list(st.state_dict())
    for k in st.state_dict():
        assert_close(se.state_dict()[k], st.state_dict()[k])
    assert repr(se) == repr(st)


def test_scripted_function_matches_original() -> None:
    for lib in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            f = lib.jit.script(scale_add)
            g = lib.jit.trace(scale_add, (lib.ones(2), lib.ones(2)))
        assert type(f).__name__ == "ScriptFunction" and f.name == "scale_add"
        assert f.qualified_name == f"__torch__.{__name__}.scale_add" and type(g).__name__ == "ScriptFunction"
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = f(x, lib.tensor([3.0, 4.0])) + g(x, x)
        y.sum().backward()
        assert x.grad.tolist() == [3.0 + 2.0, 4.0 + 4.0]


def test_code_and_graph_are_absent_with_a_reason() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f = ember.jit.script(scale_add)
        m = ember.jit.script(make_model(ember))
    for obj, attr in ((f, "code"), (f, "graph"), (m, "code"), (m, "graph"), (m.lin, "inlined_graph")):
        with pytest.raises(AttributeError, match="compiles no TorchScript"):
            getattr(obj, attr)
    assert not hasattr(f, "code")


@pytest.mark.parametrize("call", ["save", "load", "module_save", "function_save"])
def test_archives_are_refused_clearly(call: str, tmp_path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        m = ember.jit.script(make_model(ember))
        with pytest.raises(RuntimeError, match="TorchScript archives are not supported"):
            {"save": lambda: ember.jit.save(m, tmp_path / "m.pt"),
             "load": lambda: ember.jit.load(tmp_path / "m.pt"),
             "module_save": lambda: m.save(str(tmp_path / "m.pt")),
             "function_save": lambda: ember.jit.script(scale_add).save(str(tmp_path / "f.pt"))}[call]()


def test_trace_runs_example_once_and_is_tracing_inside() -> None:
    seen = []

    def f(x):
        seen.append(ember.jit.is_tracing())
        return x + 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        traced = ember.jit.trace(f, ember.ones(2))
    assert seen == [True]
    traced(ember.ones(2))
    assert seen == [True, False] and not ember.jit.is_tracing() and not ember.jit.is_scripting()


def _frozen(lib, kind):
    m = make_model(lib)
    s = lib.jit.script(m)
    if kind == "training":
        return lib.jit.freeze(s)
    if kind == "plain":
        return lib.jit.freeze(m)
    f = lib.jit.freeze(s.eval()) if kind == "freeze" else lib.jit.optimize_for_inference(s)
    out = f(lib.tensor(X, dtype=lib.float32))
    return list(f.state_dict()), out.requires_grad, [round(v, 5) for v in out.flatten().tolist()]


@pytest.mark.parametrize("kind", ["freeze", "optimize", "training", "plain"])
def test_freeze(kind: str) -> None:
    same(lambda lib: _frozen(lib, kind))


def _nested(lib):
    return lib.jit.wait(lib.jit.fork(scale_add, lib.ones(2), 3.0)).tolist()


CALLS = """
torch.jit.script(scale_add)(torch.ones(2), torch.ones(2)).tolist()
type(torch.jit.script(scale_add)).__name__
torch.jit.script(a_lambda)
torch.jit.script(with_varargs)
torch.jit.script(with_kwonly_default)
torch.jit.script(3)
torch.jit.script(int)
torch.jit.trace(scale_add)
torch.jit.trace(scale_add, 3)
torch.jit.trace(3, torch.ones(1))
torch.jit.trace(lambda x: x.foo(), torch.ones(1))
torch.jit.trace(lambda x: 3, torch.ones(1))
torch.jit.trace(lambda x: {"a": x}, torch.ones(1))
torch.jit.trace(lambda x: [x], torch.ones(1))
torch.jit.trace(lambda x: [x], torch.ones(1), strict=False)(torch.ones(1))[0].tolist()
torch.jit.trace(lambda x: x * 2, example_kwarg_inputs={"x": torch.ones(1)})(torch.ones(1)).tolist()
torch.jit.trace(lambda x: x[0], ([torch.ones(1)],))([torch.ones(1)]).tolist()
torch.jit.trace_module(torch.nn.Linear(2, 2), {"forward": torch.ones(1, 2)}).original_name
torch.jit.trace_module(torch.nn.Linear(2, 2), [torch.ones(1, 2)])
_nested(torch)
torch.jit.annotate(list, [1])
torch.jit.annotate(typing.List[int], [])
torch.jit.Final
torch.jit.Attribute(1, int)
torch.jit.isinstance([1], typing.List[int]), torch.jit.isinstance([1], typing.List[str])
torch.jit.isinstance({"a": torch.ones(1)}, typing.Dict[str, torch.Tensor]), torch.jit.isinstance((1, "a"), typing.Tuple[int, str])
torch.jit.isinstance(None, typing.Optional[int]), torch.jit.isinstance(1, typing.Optional[int]), torch.jit.isinstance(1, typing.Union[int, str])
torch.jit.isinstance([], typing.List[int]), torch.jit.isinstance(1, float), torch.jit.isinstance(torch.ones(1), torch.Tensor)
torch.jit.isinstance([1], list)
torch.jit.isinstance({}, dict)
torch.jit.isinstance((1,), tuple)
torch.jit.ignore(scale_add) is scale_add
torch.jit.ignore(drop=True)(scale_add) is scale_add
torch.jit.ignore()(scale_add) is scale_add
torch.jit.unused(scale_add) is scale_add
torch.jit.export(scale_add) is scale_add
torch.jit.script_if_tracing(scale_add)(torch.ones(1), 2).tolist()
(torch.jit.enable_onednn_fusion(True), torch.jit.onednn_fusion_enabled(), torch.jit.enable_onednn_fusion(False), torch.jit.onednn_fusion_enabled())
torch.jit.set_fusion_strategy(torch.jit.set_fusion_strategy([("STATIC", 3)]))
torch.jit.set_fusion_strategy([("X", 2)])
torch.jit.strict_fusion().__enter__()
torch.jit.optimized_execution(False).__enter__()
torch.jit.fuser("fuser1").__enter__()
torch.jit.fuser("x").__enter__()
torch.jit.is_scripting(), torch.jit.is_tracing()
issubclass(torch.jit.TracerWarning, Warning), issubclass(torch.jit.Error, Exception)
torch.jit.script_method(scale_add) and None
isinstance(torch.jit.ScriptModule(), torch.nn.Module)
""".strip().splitlines()


@pytest.mark.parametrize("expr", CALLS)
def test_jit_call(expr: str) -> None:
    same(lambda lib: eval(expr, {"__name__": __name__, "torch": lib, "scale_add": scale_add, "a_lambda": a_lambda, "with_varargs": with_varargs,
                                 "with_kwonly_default": with_kwonly_default, "typing": typing, "_nested": _nested}))


def test_jit_namespace_covers_torch() -> None:
    absent = {"export_opnames", "interface"} - {"interface"}
    missing = [n for n in torch.jit.__all__ if n not in absent and not hasattr(ember.jit, n)]
    assert not missing, missing


def test_script_module_subclass_with_script_method() -> None:
    """The pre-recursive-scripting style (a ScriptModule subclass) runs as Python."""
    with pytest.warns(DeprecationWarning, match="script_method` is deprecated"):
        class Scaled(ember.jit.ScriptModule):
            def __init__(self):
                super().__init__()
                self.w = ember.nn.Parameter(ember.tensor([2.0, 3.0]))

            @ember.jit.script_method
            def forward(self, x):
                return x * self.w

    m = Scaled()
    assert m(ember.ones(2)).tolist() == [2.0, 3.0] and list(m.state_dict()) == ["w"]


def test_futures() -> None:
    for lib in (ember, torch):
        f = lib.futures.Future()
        assert not f.done()
        chained = f.then(lambda fut: fut.wait() + 1)
        f.set_result(5)
        assert f.done() and f.wait() == 5 and chained.wait() == 6
        assert [x.wait() for x in lib.futures.collect_all([f]).wait()] == [5]
        assert lib.futures.wait_all([f, chained]) == [5, 6]
    same_outcome(lambda lib: lib.futures.Future().set_exception(3))
    same_outcome(lambda lib: (lambda f: (f.set_result(1), f.set_result(2)))(lib.futures.Future()))
    same_outcome(lambda lib: (lambda f: (f.set_exception(ValueError("x")), f.wait()))(lib.futures.Future()))
    same_outcome(lambda lib: (lambda f: (f.set_result(1), f.then(lambda _: 1 / 0).wait()))(lib.futures.Future()),
                 message=False)


def test_private_script_if_tracing_returns_a_callable_with_the_same_results():
    def f(x):
        return x * 2 + 1

    for lib in (ember, torch):
        g = lib.jit._script_if_tracing(f)
        assert_close(g(ember.ones(3)) if lib is ember else g(torch.ones(3)), torch.full((3,), 3.0))
