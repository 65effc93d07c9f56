"""Module: the base of every layer (parameters, buffers and submodules in ordered registries)."""
from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from ... import _dtype as D
from ..._device import _check_device
from ..._tensor import Tensor
from ...autograd import graph as _graph
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, Buffer, UninitializedBuffer, is_lazy

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = {}  # hook id -> True, as the module's own registries
_global_forward_hooks_always_called: dict = {}
_global_backward_hooks: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
# hook(module, name, value) -> replacement or None, run when a buffer / submodule / parameter is registered
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()


def _registered(hooks: OrderedDict, module, name: str, value):
    """``value`` after the global registration hooks (each may replace it)."""
    for hook in hooks.values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _typename(v) -> str:
    if isinstance(v, Tensor):
        return "torch." + _graph._type_name(v._dtype)
    mod = type(v).__module__
    return type(v).__qualname__ if mod == "builtins" else f"{mod}.{type(v).__qualname__}"


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)


def _as_tensor(v):
    """A state-dict value as an ember tensor (ember tensors, NumPy arrays, array-likes such as torch's)."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, np.ndarray):
        from ..._factories import from_numpy

        return from_numpy(v)
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        from ..._factories import tensor

        return tensor(v.detach().cpu().numpy())
    return None


class Module:
    """Base class of neural-network layers: subclasses set attributes in ``__init__`` and define ``forward``."""

    training: bool
    _version = 1
    call_super_init = False
    dump_patches = False  # torch's flag for printing source diffs of changed module classes (unused)
    T_destination = TypeVar("T_destination", bound=dict)  # state_dict's destination type, in annotations

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", OrderedDict())
        sa(self, "_buffers", OrderedDict())
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_modules", OrderedDict())
        sa(self, "_forward_pre_hooks", OrderedDict())
        sa(self, "_forward_pre_hooks_with_kwargs", {})
        sa(self, "_forward_hooks", OrderedDict())
        sa(self, "_forward_hooks_with_kwargs", {})
        sa(self, "_forward_hooks_always_called", {})
        sa(self, "_backward_hooks", OrderedDict())
        sa(self, "_backward_pre_hooks", OrderedDict())
        sa(self, "_state_dict_hooks", OrderedDict())
        sa(self, "_load_state_dict_pre_hooks", OrderedDict())
        sa(self, "_state_dict_pre_hooks", OrderedDict())
        sa(self, "_load_state_dict_post_hooks", OrderedDict())

    forward: Callable[..., Any]

    def _forward_unimplemented(self, *input: Any) -> None:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    forward = _forward_unimplemented

    # ----------------------------------------------------------------- registries
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter, e.g. BatchNorm's running_mean)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach() if not tensor.requires_grad else tensor
        if _global_buffer_registration_hooks:
            tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        if _global_parameter_registration_hooks:
            param = _registered(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _global_module_registration_hooks:
            module = _registered(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` ("" is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target`` (the parent must exist; ``strict``: so must the name)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*dicts_or_sets):
            for s in dicts_or_sets:
                if name in s:
                    if isinstance(s, dict):
                        del s[name]
                    else:
                        s.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                if _global_module_registration_hooks:
                    value = _registered(_global_module_registration_hooks, self, name, value)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                if _global_module_registration_hooks:
                    value = _registered(_global_module_registration_hooks, self, name, value)
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                marked = isinstance(value, Buffer) or isinstance(value, UninitializedBuffer)
                if marked or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    if marked:
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    remove_from(d, self._parameters, self._modules)
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__) | set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    # ----------------------------------------------------------------- iteration
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate: bool = True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """All parameters (shared ones once), in registration order."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, parameter)`` pairs."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        """``(dotted_name, module)`` for self and every descendant (depth first)."""
        if memo is None:
            memo = set()
        if id(self) in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # ----------------------------------------------------------------- modes and state
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (Dropout, BatchNorm behave differently) on self and children."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every submodule (children first) and self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        for m in self.children() if recurse else ():
            m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            p._data = new._data
            p._dtype = new._dtype
            if p._grad is not None:
                with no_grad():
                    g = fn(p._grad)
                p._grad = g
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move parameters and buffers (and their gradients) to a device and/or cast the floating ones to a dtype,
        in place."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, D.dtype) or (not isinstance(a, str) and a is not None and not hasattr(a, "type")):
                dtype = a
            else:
                device = a
        dev = _check_device(device) if device is not None else None
        if dtype is not None:
            dtype = D.to_dtype(dtype)
            if not dtype._differentiable:
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
            if dtype.is_complex:
                import warnings

                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers. Please file an issue at https://github.com/pytorch/pytorch/issues/new?"
                              "template=bug-report.yml if a complex module does not work as expected.", stacklevel=2)
        if dtype is None and dev is None:
            return self

        def convert(t):
            if dtype is not None and t._dtype._differentiable:
                t = t.to(dtype)
            return t if dev is None else t.to(dev)
        return self._apply(convert)

    def to_empty(self, *, device=None, recurse: bool = True) -> "Module":
        """Replace parameters and buffers by uninitialized tensors of the same shape and dtype."""
        if device is not None:
            _check_device(device)
        from ..._factories import empty_like

        return self._apply(empty_like, recurse=recurse)

    def float(self) -> "Module":
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def cpu(self) -> "Module":
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> "Module":
        """Move parameters and buffers to the GPU: torch's error here, unless there are none to move."""
        return self._apply(lambda t: t.cuda(device))

    def xpu(self, device=None) -> "Module":
        return self._apply(lambda t: t.xpu(device))

    def ipu(self, device=None) -> "Module":
        return self._apply(lambda t: t.ipu(device))

    def mtia(self, device=None) -> "Module":
        return self._apply(lambda t: t.mtia(device))

    def type(self, dst_type) -> "Module":
        return self._apply(lambda t: t.type(dst_type))

    def share_memory(self) -> "Module":
        """Move every parameter and buffer (and their gradients) to shared memory, for processes to update."""
        for t in [*self.parameters(), *self.buffers()]:
            t.share_memory_()
            if t.grad is not None:
                t.grad.share_memory_()
        return self

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers under dotted keys (detached unless ``keep_vars``)."""
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, local_metadata)
            if r is not None:
                if getattr(hook, "_from_public_api", False):
                    raise RuntimeError("state_dict post-hook must return None")
                destination = r
        return destination

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                keep = keep_vars or is_lazy(p)  # torch keeps lazy ones as they are
                destination[prefix + name] = p if keep else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
        extra = getattr(type(self), "get_extra_state", None)
        if extra is not None and extra is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            raw = state_dict[key]
            inp = _as_tensor(raw)
            if inp is None:
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(raw)}")
                continue
            if not is_lazy(param) and inp.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {inp.shape} from checkpoint, "
                                  f"the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            setattr(self, name, Parameter(inp, requires_grad=param.requires_grad))
                        else:
                            setattr(self, name, inp)
                    else:
                        param.copy_(inp)
            except Exception as ex:  # noqa: BLE001 - reported like torch
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {inp.size()}, an "
                                  f"exception occurred : {ex.args}.")
        extra_key = prefix + "_extra_state"
        if getattr(type(self), "set_extra_state", Module.set_extra_state) is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    parts = key[len(prefix):].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict``; returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, dict) and not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local_state, prefix=""):
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, meta, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    cp = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items() if k.startswith(cp)}, cp)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                   "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------------- hooks
    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """``hook(module, args)`` (or ``(module, args, kwargs)``) before forward; may return new args."""
        h = _graph.RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """``hook(module, args, output)`` after forward; may return a new output."""
        h = _graph.RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_input, grad_output)`` once input gradients are computed; may return new ones."""
        h = _graph.RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_output)`` before the module's input gradients are computed."""
        h = _graph.RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_backward_hook(self, hook):
        return self.register_full_backward_hook(hook)

    def _register_state_dict_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after the module's entries are saved (may return a
        new state_dict: torch's private, older form of register_state_dict_post_hook)."""
        h = _graph.RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` after the module's entries are saved; it
        edits ``state_dict`` in place (returning anything else is torch's RuntimeError)."""
        hook._from_public_api = True
        return self._register_state_dict_hook(hook)

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before the module's state is saved by ``state_dict``."""
        h = _graph.RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after ``load_state_dict`` loaded the module (may edit the keys in place)."""
        h = _graph.RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`` (after the
        module with ``with_module``) before this module loads its entries (torch's private form)."""
        h = _graph.RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = (lambda *a: hook(self, *a)) if with_module else hook
        return h

    def register_load_state_dict_pre_hook(self, hook):
        h = _graph.RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = lambda *a: hook(self, *a)
        return h

    # ----------------------------------------------------------------- call
    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hid, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if isinstance(r, tuple) and len(r) == 2:
                        args, kwargs = r
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {r}.")
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = None
        if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks or _global_backward_pre_hooks:
            from ._backward_hook import BackwardHook

            bw = BackwardHook(self, [*_global_backward_hooks.values(), *self._backward_hooks.values()],
                              [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()])
            args = bw.setup_input_hook(args)
        result, done = None, set()
        try:
            result = self.forward(*args, **kwargs)
            for hid, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                done.add(hid)
                r = self._run_forward_hook(hid, hook, args, kwargs, result)
                if r is not None:
                    result = r
        except Exception:  # the hooks registered with always_call=True run anyway (result None), as torch's
            for hid, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hid not in done and (hid in self._forward_hooks_always_called
                                        or hid in _global_forward_hooks_always_called):
                    r = self._run_forward_hook(hid, hook, args, kwargs, result)
                    if r is not None:
                        result = r
            raise
        if bw is not None:
            result = bw.setup_output_hook(result)
        return result

    __call__ = _call_impl

    def _run_forward_hook(self, hid, hook, args, kwargs, result):
        if hid in self._forward_hooks_with_kwargs or hid in _global_forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    def compile(self, *args, **kwargs) -> None:
        """Compile this module in place (ember.compile, NOTE [compile] in ember/_compile): its ``forward`` runs
        through compiled programs; the module, its structure and state_dict keys stay as they are."""
        from ..._compile.api import compile as _compile

        self.forward = _compile(self.forward, *args, **kwargs)

    def _replicate_for_data_parallel(self):
        """A shallow copy for nn.parallel.replicate: shares everything, owns its registries, no parameters."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    # ----------------------------------------------------------------- printing / pickling
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """Extra text inside ``Name(...)`` in the printed module (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        fresh = Module.__new__(Module)  # pickles made before a registry existed get it empty
        Module.__init__(fresh)
        for name, value in fresh.__dict__.items():
            self.__dict__.setdefault(name, value)


def _global_hook(d: OrderedDict, hook):
    h = _graph.RemovableHandle(d)
    d[h.id] = hook
    return h


def register_module_forward_pre_hook(hook):
    """A forward pre-hook run for every module."""
    return _global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False, always_call: bool = False):
    """A forward hook run for every module (``with_kwargs``: also given the keyword arguments; ``always_call``:
    run even when forward raises)."""
    h = _global_hook(_global_forward_hooks, hook)
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_full_backward_hook(hook):
    return _global_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """torch's deprecated global backward hook; here a full backward hook (as Module.register_backward_hook)."""
    return _global_hook(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` (may return a replacement) whenever any module registers a buffer."""
    return _global_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` (may return a replacement) whenever any module registers a submodule."""
    return _global_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` (may return a replacement) whenever any module registers a parameter."""
    return _global_hook(_global_parameter_registration_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    return _global_hook(_global_backward_pre_hooks, hook)

