"""ember.jit: torch.jit's API without a TorchScript compiler.

# NOTE [jit without TorchScript]
ember runs Python eagerly and has no TorchScript runtime, so ``script`` and ``trace`` return objects with the
types, names and behaviour torch's give (``ScriptFunction``; a ``RecursiveScriptModule`` sharing the original's
parameters and buffers, ``original_name``, torch's printed form), whose calls run the original Python: outputs,
gradients and ``state_dict`` are the original's. What needs compiled TorchScript does not exist: ``.code``,
``.graph`` and ``.inlined_graph`` raise AttributeError, and ``save``/``load`` (archives) raise RuntimeError saying
so. A traced callable re-runs Python on every call, so data-dependent branches follow each call's inputs (torch's
trace freezes the branch taken on the example input, warning with a TracerWarning). The checks torch makes
before compiling are kept where they are about the call itself (functions with ``*args``/keyword-only defaults,
lambdas, freezing a module that is not a ScriptModule or is training), with torch's messages and its
DeprecationWarnings.
"""
from __future__ import annotations

import copy
import inspect
import threading
import types
import typing
import warnings
from collections import namedtuple
from contextlib import contextmanager

from .. import nn
from .._tensor import Tensor
from ..futures import Future

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule", "annotate",
           "enable_onednn_fusion", "export", "fork", "freeze", "interface", "ignore", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "save", "script", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait", "Final",
           "RecursiveScriptModule", "TracedModule", "TopLevelTracedModule", "TracerWarning", "ScriptWarning",
           "TracingCheckError", "is_scripting", "is_tracing", "script_method", "optimized_execution", "fuser",
           "last_executed_optimized_graph"]

_builtin_isinstance = isinstance
Final = typing.Final
Attribute = namedtuple("Attribute", ["value", "type"])
_NO_ARCHIVES = ("ember has no TorchScript runtime, so TorchScript archives are not supported ({}): save the "
                "state_dict with ember.save and rebuild the module in Python instead")
_NO_CODE = "ember runs Python eagerly and compiles no TorchScript: '{}' has no {}"


class Error(Exception):
    """An error raised inside TorchScript code (torch.jit.Error)."""


class TracerWarning(Warning):
    """A trace may not generalise to other inputs."""


class ScriptWarning(Warning):
    pass


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None) -> None:
        super().__init__(extra_msg or "Tracing failed sanity checks!")
        self.graph_diff_error, self.tensor_compare_error = graph_diff_error, tensor_compare_error


def _deprecated(name: str, instead: str = "Please switch to `torch.compile` or `torch.export`.") -> None:
    warnings.warn(f"`torch.jit.{name}` is deprecated. {instead}", DeprecationWarning, stacklevel=3)


# ---------------------------------------------------------------- scripting / tracing state
_tracing = threading.local()


def is_scripting() -> bool:
    """True inside TorchScript-compiled code: never here (ember runs Python)."""
    return False


def is_tracing() -> bool:
    """True while ``trace`` runs the function on its example inputs."""
    return getattr(_tracing, "depth", 0) > 0


@contextmanager
def _trace_scope():
    _tracing.depth = getattr(_tracing, "depth", 0) + 1
    try:
        yield
    finally:
        _tracing.depth -= 1


# ---------------------------------------------------------------- ScriptFunction / ScriptModule
class ScriptFunction:
    """A scripted or traced function: calls run the original Python function."""

    def __init__(self, fn) -> None:
        self._fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        module = getattr(fn, "__module__", None)
        self.qualified_name = "__torch__." + ("" if module in (None, "__main__") else module + ".") + self.name

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, name: str):
        if name in ("code", "graph", "inlined_graph", "schema", "code_with_constants"):
            raise AttributeError(_NO_CODE.format(self.name, name))
        raise AttributeError(f"'ScriptFunction' object has no attribute '{name}'")

    def save(self, f, **kwargs) -> None:
        raise RuntimeError(_NO_ARCHIVES.format("ScriptFunction.save"))

    def __repr__(self) -> str:
        return f"<torch.jit.ScriptFunction object at {id(self):#x}>"


class ScriptModule(nn.Module):
    """Base class of scripted and traced modules (their calls run the original Python forward)."""

    def __init__(self) -> None:
        super().__init__()

    def __getattr__(self, name: str):
        if name in ("code", "graph", "inlined_graph", "code_with_constants"):
            raise AttributeError(_NO_CODE.format(type(self).__name__, name))
        return super().__getattr__(name)

    def save(self, f, **kwargs) -> None:
        raise RuntimeError(_NO_ARCHIVES.format("ScriptModule.save"))


class RecursiveScriptModule(ScriptModule):
    """The module ``script``/``trace`` return: a copy sharing the original's parameters, buffers and submodule
    structure, printed as torch prints scripted modules."""

    original_name: str

    def __init__(self, cpp_module) -> None:
        raise RuntimeError(_MADE_BY.format("RecursiveScriptModule", "torch.jit.script"))

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"


class TracedModule(ScriptModule):
    """A submodule of a traced module (printed under its original class name)."""

    original_name: str

    def __init__(self, orig, id_set=None, _compilation_unit=None) -> None:
        raise RuntimeError(_MADE_BY.format(type(self).__name__, "torch.jit.trace"))

    def _get_name(self) -> str:
        return self.original_name

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"


class TopLevelTracedModule(TracedModule):
    """The module ``trace`` returns."""


# (their instances are copies made without calling __init__: there is no TorchScript module to wrap)
_MADE_BY = "ember: a {} is made by {}, which runs the module eagerly (no TorchScript module to wrap)"
_COPY_CLASSES: dict = {}


def _copy_class(cls: type, base: type) -> type:
    """The class of ``cls``'s scripted or traced copies: ``base`` in front of the user's class, so forward, helper
    methods and ``super()`` calls resolve as in the original."""
    key = (cls, base)
    if key not in _COPY_CLASSES:
        _COPY_CLASSES[key] = type(base.__name__, (base, cls), {"__module__": __name__, "__qualname__": base.__name__})
    return _COPY_CLASSES[key]


def _copy_module(module: nn.Module, base: type = RecursiveScriptModule, child_base: type | None = None):
    """A ``base`` copy of ``module`` sharing its parameters and buffers (new registries), children copied too."""
    if _builtin_isinstance(module, ScriptModule):
        return module
    child_base = child_base or base
    out = object.__new__(_copy_class(type(module), base))
    state = dict(module.__dict__)
    for key, value in state.items():  # the registries are new dicts holding the same tensors
        if _builtin_isinstance(value, (dict, set)):
            state[key] = copy.copy(value)
    state["_modules"] = type(state["_modules"])(
        (name, None if child is None else _copy_module(child, child_base))
        for name, child in module._modules.items())
    out.__dict__.update(state)
    object.__setattr__(out, "original_name", type(module).__name__)
    return out


# ---------------------------------------------------------------- script
def _check_scriptable(fn) -> None:
    """torch's refusals that are about the function's form, not its body."""
    if getattr(fn, "__name__", "") == "<lambda>":
        code = fn.__code__
        raise RuntimeError(f"Expected a single top-level function: {code.co_filename}:{code.co_firstlineno}")
    sig = inspect.signature(fn)
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (p.kind is p.KEYWORD_ONLY and p.default is not p.empty):
            code = fn.__code__
            try:
                line = inspect.getsourcelines(fn)[0][0].rstrip("\n")
            except OSError:
                line = ""
            raise NotSupportedError(f"Compiled functions can't take variable number of arguments or use keyword-only "
                                    f"arguments with defaults:\n  File \"{code.co_filename}\", line "
                                    f"{code.co_firstlineno}\n{line}")


class NotSupportedError(Exception):
    """A Python construct TorchScript does not compile (torch.jit.frontend.NotSupportedError)."""


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """A ScriptModule / ScriptFunction that behaves as ``obj`` (NOTE [jit without TorchScript])."""
    _deprecated("script")
    if _builtin_isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if _builtin_isinstance(obj, nn.Module):
        return _copy_module(obj)
    if inspect.isclass(obj):
        if obj.__module__ == "builtins":
            raise RuntimeError("TorchScript classes must be new-style classes. Please inherit from 'object'.")
        return obj  # a TorchScript class: ember's classes are Python classes already
    if _builtin_isinstance(obj, (types.FunctionType, types.MethodType)):
        _check_scriptable(obj)
        return ScriptFunction(obj)
    if callable(obj):
        return ScriptFunction(obj)
    raise TypeError(f"{type(obj)} is a built-in class")


def script_method(fn):
    """Marks a ScriptModule method for compilation (it runs as Python here)."""
    _deprecated("script_method")
    return fn


# ---------------------------------------------------------------- trace
def _example_args(example_inputs) -> tuple:
    if _builtin_isinstance(example_inputs, Tensor):
        return (example_inputs,)
    return tuple(example_inputs)  # torch's TypeError for None or a number ("... is not iterable")


def _check_traced_output(out, strict: bool) -> None:
    if _builtin_isinstance(out, Tensor):
        return
    if _builtin_isinstance(out, (tuple, list)):
        if _builtin_isinstance(out, list) and strict:
            warnings.warn("Encountering a list at the output of the tracer might cause the trace to be "
                               "incorrect, this is only valid if the container structure does not change based on "
                               "the module's inputs. Consider using a constant container instead (e.g. for `list`, "
                               "use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you absolutely "
                               "need this and know the side effects, pass strict=False to trace() to allow this "
                               "behavior.", TracerWarning, stacklevel=4)
        for o in out:
            _check_traced_output(o, strict)
        return
    if _builtin_isinstance(out, dict):
        if strict:
            raise RuntimeError("Encountering a dict at the output of the tracer might cause the trace to be "
                               "incorrect, this is only valid if the container structure does not change based on "
                               "the module's inputs. Consider using a constant container instead (e.g. for `list`, "
                               "use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you absolutely "
                               "need this and know the side effects, pass strict=False to trace() to allow this "
                               "behavior.")
        for o in out.values():
            _check_traced_output(o, strict)
        return
    raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced "
                       "functions")


def _run_example(fn, example_inputs, example_kwarg_inputs, strict: bool) -> None:
    """Run ``fn`` once on the example inputs, as torch's tracer does (errors and bad outputs surface here)."""
    with _trace_scope():
        if example_kwarg_inputs is not None:
            out = fn(**example_kwarg_inputs)
        else:
            out = fn(*_example_args(example_inputs))
    _check_traced_output(out, strict)


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None, _store_inputs: bool = True):
    """Run ``func`` on the example inputs and return a callable that behaves as ``func``."""
    _deprecated("trace")
    if _builtin_isinstance(func, ScriptModule):
        return func
    if _builtin_isinstance(func, nn.Module):
        inputs = example_kwarg_inputs if example_inputs is None else example_inputs
        return trace_module(func, {"forward": inputs}, check_trace=check_trace, strict=strict,
                            example_inputs_is_kwarg=example_inputs is None and example_kwarg_inputs is not None)
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    _run_example(func, example_inputs, example_kwarg_inputs, strict)
    return ScriptFunction(func)


def trace_module(mod, inputs: dict, optimize=None, check_trace: bool = True, check_inputs=None,
                 check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
                 _module_class=None, _compilation_unit=None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True):
    """Run the named methods of ``mod`` on their example inputs; a module that behaves as ``mod``."""
    _deprecated("trace_method")
    if not _builtin_isinstance(mod, nn.Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not _builtin_isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            _run_example(method, None, example, strict)
        else:
            _run_example(method, example, None, strict)
    return _copy_module(mod, TopLevelTracedModule, TracedModule)


# ---------------------------------------------------------------- freezing
def _frozen_copy(module: ScriptModule) -> ScriptModule:
    """A copy whose parameters and buffers are constants (plain detached attributes): empty state_dict."""
    out = copy.copy(module)
    object.__setattr__(out, "_modules", type(module._modules)(
        (k, None if c is None else _frozen_copy(c)) for k, c in module._modules.items()))
    for registry in ("_parameters", "_buffers"):
        for name, value in getattr(module, registry).items():
            object.__setattr__(out, name, None if value is None else value.detach())
        object.__setattr__(out, registry, type(getattr(module, registry))())
    return out


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """Inline a ScriptModule's parameters and attributes as constants (an inference-only copy)."""
    _deprecated("freeze", "Please use `torch.compile` instead.")
    if not _builtin_isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or torch.jit.trace "
                           "to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() on "
                           "your module before freezing.")
    return _frozen_copy(mod)


def optimize_for_inference(mod, other_methods=None):
    """Freeze ``mod`` (a ScriptModule) for inference; ember's kernels need no further optimisation."""
    _deprecated("optimize_for_inference", "Please use `torch.compile` instead.")
    if not _builtin_isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    warnings.warn("`torch.jit.freeze` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return _frozen_copy(mod.eval() if mod.training else mod)


# ---------------------------------------------------------------- archives
def save(m, f, _extra_files=None) -> None:
    """Not supported: TorchScript archives need a TorchScript runtime."""
    _deprecated("save", "Please switch to `torch.export`.")
    raise RuntimeError(_NO_ARCHIVES.format("torch.jit.save"))


def load(f, map_location=None, _extra_files=None, _restore_shapes: bool = False):
    """Not supported: TorchScript archives need a TorchScript runtime."""
    _deprecated("load", "Please switch to `torch.export`.")
    raise RuntimeError(_NO_ARCHIVES.format("torch.jit.load"))


class CompilationUnit:
    """A TorchScript compilation unit: empty here (TorchScript source cannot be compiled)."""

    def __init__(self, lang=None, _frames_up: int = 0) -> None:
        if lang is not None:
            self.define(lang)

    def define(self, src, rcb=None, _frames_up: int = 0) -> None:
        raise RuntimeError("ember has no TorchScript compiler: TorchScript source cannot be compiled")


# ---------------------------------------------------------------- decorators and annotations
def ignore(drop=False, **kwargs):
    """Leave a function to Python (it always is here)."""
    if callable(drop):
        return drop
    if not _builtin_isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    if drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on "
                      "compilation. Use torch.jit.unused now. {}", category=FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """Mark a method as not compiled (it runs as Python here)."""
    return fn


def export(fn):
    """Mark a module method as an entry point of the scripted module (every method is callable here)."""
    return fn


def interface(obj):
    """Declare a TorchScript interface type (a plain class here)."""
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return obj


def script_if_tracing(fn):
    """Script ``fn`` only when called under tracing (it runs as Python either way)."""
    return fn


_script_if_tracing = script_if_tracing  # the private spelling torchvision's transforms and ops decorate with


def annotate(the_type, the_value):
    """The value (a type hint for the TorchScript compiler)."""
    return the_value


_RAW_CONTAINERS = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict", typing.List: "List",
                   typing.Optional: "Optional", typing.Tuple: "Tuple"}


def _refuse_raw_container(target) -> None:
    name = _RAW_CONTAINERS.get(target)
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add contained type, e.g. "
                           f"{name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a contained type, e.g. "
                       f"{name}[int]")


def _warn_if_empty(obj) -> None:
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance in eager mode. For "
                      "example, List[int] would become list and therefore falsely return True for List[float] or "
                      "List[str].", stacklevel=4)


def _element_ok(obj, target) -> bool:
    return _container_ok(obj, target) if typing.get_origin(target) else _builtin_isinstance(obj, target)


def _container_ok(obj, target) -> bool:
    """torch.jit.isinstance's check of a parametrised type (List/Dict/Tuple/Optional/Union)."""
    origin, args = typing.get_origin(target), typing.get_args(target)
    _refuse_raw_container(target)
    if origin in (list, dict, tuple):
        _warn_if_empty(obj)
        if not _builtin_isinstance(obj, origin):
            return False
        if origin is list:
            return all(_element_ok(o, args[0]) for o in obj)
        if origin is dict:
            return all(_builtin_isinstance(k, args[0]) and _element_ok(v, args[1]) for k, v in obj.items())
        return len(obj) == len(args) and all(_element_ok(o, a) for o, a in zip(obj, args))
    if origin is typing.Union or origin is types.UnionType:
        if obj is None:
            return True
        for t in args:
            if typing.get_origin(t):
                return _container_ok(obj, t)  # torch decides on the first container alternative
            if _builtin_isinstance(obj, t):
                return True
    return False


def isinstance(obj, target_type) -> bool:  # noqa: A001 - torch's name
    """``isinstance`` that also understands typing containers (``list[int]``, ``Optional[Tensor]`` ...)."""
    if _builtin_isinstance(target_type, (tuple, list, set, dict, str)):
        if not _builtin_isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    if typing.get_origin(target_type):
        return _container_ok(obj, target_type)
    _refuse_raw_container(target_type)
    return _builtin_isinstance(obj, target_type)


# ---------------------------------------------------------------- fork / wait
def fork(func, *args, **kwargs) -> Future:
    """Run ``func(*args, **kwargs)`` (synchronously, as eager torch does) and return a completed Future."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - delivered by wait(), as a future does
        fut.set_exception(e)
    return fut


def wait(future: Future):
    """The result of a forked call."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return future.wait()


# ---------------------------------------------------------------- fusion and execution switches (no effect)
_FUSION = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool) -> None:
    _FUSION["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _FUSION["onednn"]


def set_fusion_strategy(strategy: list) -> list:
    """Set the fuser's specialisation strategy; returns the previous one."""
    warnings.warn("`torch.jit.set_fusion_strategy` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    for kind, _ in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
    old, _FUSION["strategy"] = _FUSION["strategy"], list(strategy)
    return old


class strict_fusion:  # noqa: N801 - torch's name
    """Asserts fusion inside scripted code; only warns outside it (always here)."""

    def __init__(self) -> None:
        if not is_scripting():
            warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        return None


@contextmanager
def optimized_execution(should_optimize: bool):
    """Switch TorchScript's graph optimisations for the block (nothing to switch here)."""
    yield


@contextmanager
def fuser(name: str):
    """Select TorchScript's fuser for the block (nothing to select here)."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002 - torch's type
    yield


def last_executed_optimized_graph():
    """The graph of the last optimised TorchScript execution: none here."""
    return None
