"""Optimizer base: param_groups, per-parameter state, torch's state_dict layout, step hooks."""
from __future__ import annotations

from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Iterable

import numpy as np

from .. import _dtype as D
from .. import _factories as _F
from .._tensor import Tensor, _wrap
from ..autograd import graph as _graph
from ..autograd import _stale
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()
_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable):
    """``hook(optimizer, args, kwargs)`` before every optimizer's step."""
    h = _graph.RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[h.id] = hook
    return h


def register_optimizer_step_post_hook(hook: Callable):
    """``hook(optimizer, args, kwargs)`` after every optimizer's step."""
    h = _graph.RemovableHandle(_global_post_hooks)
    _global_post_hooks[h.id] = hook
    return h


def _to_array(v, like: np.ndarray | None = None) -> np.ndarray:
    """A state value (ember/torch tensor or array) as an ndarray."""
    if isinstance(v, Tensor):
        return v._data
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        return v.detach().cpu().numpy()
    return np.asarray(v)


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of params + options) and ``state`` (per parameter)."""

    _torch_flags: dict = {}

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got torch.FloatTensor")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for g in param_groups:
            self.add_param_group(g)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (missing options take the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        named = [p for p in param_group["params"] if isinstance(p, tuple)]  # from named_parameters()
        if named:
            if len(named) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = [name for name, _ in named]
            param_group["params"] = [p for _, p in named]
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            import warnings

            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        for g in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in g):
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{'with names' if 'param_names' in param_group else 'without names'} to the "
                                 "optimizer")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if not seen.isdisjoint(id(p) for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    if set_to_none:
                        p._grad = None
                    else:
                        g = p._grad
                        if g._grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    def _pre_step_hooks(self, closure) -> None:
        for hook in chain(_global_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            r = hook(self, (closure,) if closure else (), {})
            if r is not None:
                raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {r}.")

    def _post_step_hooks(self, closure) -> None:
        for hook in chain(self._optimizer_step_post_hooks.values(), _global_post_hooks.values()):
            hook(self, (closure,) if closure else (), {})
        if _stale._enabled:
            _stale.on_step(self)

    def _run_step(self, closure):
        """Hooks around ``_step``; the closure re-evaluates the loss with grad enabled."""
        self._pre_step_hooks(closure)
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                if any(p._dtype.is_complex for p in group["params"]):
                    self._update_complex_group(group)
                else:
                    self._update_group(group)
        self._post_step_hooks(closure)
        return loss

    def _update_complex_group(self, group: dict) -> None:
        """NOTE [complex parameters]: as torch's optimizers, the update of a complex parameter treats its real and
        imaginary parts as two real parameters (torch views parameter, gradient and state as real). Their arrays
        are swapped for real views during the group's update; the state stays complex between steps."""
        from ..ops.complex_numbers import _as_complex, _as_real

        swapped = []
        for p in group["params"]:
            if not p._dtype.is_complex:
                continue
            tensors = [p] + ([p._grad] if p._grad is not None else [])
            tensors += [s for s in self.state.get(p, {}).values() if isinstance(s, Tensor) and s._dtype.is_complex]
            for t in tensors:
                swapped.append((t, t._data, t._dtype))
                t._data, t._dtype = _as_real(t._data), t._dtype.to_real()
        try:
            self._update_group(group)
        finally:
            for t, data, dtype in swapped:
                t._data, t._dtype = data, dtype
            for p in group["params"]:  # state made during this step from the real views: back to complex
                if p._dtype.is_complex:
                    for s in self.state.get(p, {}).values():
                        if isinstance(s, Tensor) and not s._dtype.is_complex and s._data.shape == p._data.shape + (2,):
                            s._data, s._dtype = _as_complex(s._data), p._dtype

    def step(self, closure: Callable | None = None):
        """Update the parameters once (``closure`` re-computes and returns the loss)."""
        return self._run_step(closure)

    def _update_group(self, group: dict) -> None:  # pragma: no cover - each optimizer defines it
        raise NotImplementedError

    def _param_steps(self, group: dict, *zeros: str, **first):
        """(param, grad array, state, step) for each parameter of ``group`` that has a gradient: its state filled
        on first use (``_fresh_state``), then its step counter bumped."""
        for p, g in _params_with_grad(group):
            state = self.state[p]
            if not state:
                _fresh_state(state, p, *zeros, **first)
            yield p, g, state, _bump_step(state)

    def register_step_pre_hook(self, hook: Callable):
        h = _graph.RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[h.id] = hook
        return h

    def register_step_post_hook(self, hook: Callable):
        h = _graph.RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[h.id] = hook
        return h

    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}`` as torch lays it out."""
        mapping: dict[int, int] = {}
        start = 0
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(g["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in g["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {mapping[id(k)]: v for k, v in self.state.items() if isinstance(k, Tensor) and id(k) in mapping}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state dict made by ``state_dict()`` (ember's or torch's: tensors are converted).

        Saved groups replace the current ones (extra keys such as a scheduler's ``initial_lr`` are kept);
        options a saved group lacks take the optimizer's signature defaults, as torch's ``__setstate__`` does.
        """
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = deepcopy(list(state_dict["param_groups"]))
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: self._cast_state(param, key, value) for key, value in v.items()}
            else:
                state[k] = v
        fallback = {**self.defaults, **_signature_defaults(type(self))}  # fixed options (AdamW's) from defaults
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            for key, default in fallback.items():
                s.setdefault(key, default)
            new_groups.append(s)
        self.state = state
        self.param_groups = new_groups

    @staticmethod
    def _cast_state(param: Tensor, key: Any, value: Any):
        """A saved state value as ember tensors (floating params: cast to their dtype, except 'step'). An ember tensor
        that needs no cast is kept, not copied, as torch's ``value.to(...)`` keeps it: the optimizer then updates
        the loaded dict's tensors in place, as torch's does."""
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, k, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state(param, None, v) for v in value)
        if isinstance(value, Tensor):  # on the parameter's device, as torch's ('step' stays where it is)
            if key == "step":
                return value
            if not param.is_floating_point() or value._dtype == param._dtype:
                return value.to(param.device)
            return value.to(param.device, param._dtype)
        if not (isinstance(value, np.ndarray) or hasattr(value, "numpy")):
            return value
        arr = np.array(_to_array(value), copy=True)
        if key != "step" and param._data.dtype.kind == "f":
            arr = arr.astype(param._data.dtype)
        return _F.from_numpy(arr).to(param.device)


_SIGNATURE_DEFAULTS: dict[type, dict] = {}


def _signature_defaults(cls: type) -> dict:
    """Keyword defaults of an optimizer's constructor (what a group missing an option falls back to)."""
    found = _SIGNATURE_DEFAULTS.get(cls)
    if found is None:
        import inspect

        found = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                 if p.default is not inspect.Parameter.empty and name != "params"}
        _SIGNATURE_DEFAULTS[cls] = found
    return found


def _params_with_grad(group: dict):
    """(param, grad array) pairs of a group, skipping params without a gradient."""
    for p in group["params"]:
        g = p._grad
        if g is not None:
            yield p, g._data




def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def _validate(lr=0.0, eps=0.0, weight_decay=0.0, betas=None, momentum=None) -> None:
    """torch's argument checks shared by the optimizers."""
    if not isinstance(lr, Tensor):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
    _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
    _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
    if betas is not None:
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
    if momentum is not None:
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")


def _no_differentiable(differentiable: bool) -> None:
    if differentiable:
        raise RuntimeError("ember's optimizers do not support differentiable=True (updates run without a graph)")


def _step_tensor() -> Tensor:
    """A fresh float32 0-d ``step`` counter, as torch keeps it: on the CPU whatever the default device (reading
    it each step is then no host sync)."""
    return _F.tensor(0.0, device="cpu")


def _bump_step(state: dict) -> float:
    """Increment the float32 ``step`` tensor of a parameter's state; return its value."""
    step = state.get("step")
    if step is None:
        step = state["step"] = _step_tensor()
    step._data += np.float32(1)
    return float(step._data)


def _fresh_state(state: dict, p: Tensor, *zeros: str, **first) -> None:
    """Fills a parameter's empty ``state`` in torch's key order (which state_dict keeps): the ``step`` counter, an
    entry made by each factory in ``first``, then a zero tensor like ``p`` for each name in ``zeros``."""
    state["step"] = _step_tensor()
    for name, make in first.items():
        state[name] = make()
    for name in zeros:
        state[name] = _zeros_state(p)


def _zeros_state(p: Tensor) -> Tensor:
    return _state_of(np.zeros_like(p._data))


def _state_of(arr) -> Tensor:
    """An optimizer state tensor around ``arr`` (an array on the parameter's device)."""
    return _wrap(arr, D.from_numpy_dtype(arr.dtype))


def _lerp_(a: np.ndarray, b: np.ndarray, w: float) -> None:
    """In-place torch lerp: a + w * (b - a) for w < 0.5, else b - (b - a) * (1 - w)."""
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


def _grad_of(p: Tensor, g: np.ndarray, maximize: bool, weight_decay: float) -> np.ndarray:
    """The gradient an update uses: negated for maximize, plus L2 weight decay."""
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * p._data
    return g


def _decayed_grad(p: Tensor, g: np.ndarray, group: dict) -> np.ndarray:
    """The gradient a step of the Adam family uses. With ``decoupled_weight_decay`` (AdamW) the parameter first
    shrinks by lr * weight_decay in place; otherwise the decay is added to the gradient (L2, ``_grad_of``)."""
    wd = group["weight_decay"]
    if group.get("decoupled_weight_decay", False):
        p._data *= 1 - group["lr"] * wd
        return _grad_of(p, g, group["maximize"], 0)
    return _grad_of(p, g, group["maximize"], wd)


def _adam_moments(m: np.ndarray, v: np.ndarray, g: np.ndarray, beta1: float, beta2: float) -> None:
    """Adam's moment estimates, updated in place: m <- lerp(m, g, 1 - beta1), v <- beta2 v + (1 - beta2) g^2."""
    _lerp_(m, g, 1 - beta1)
    v *= beta2
    v += (1 - beta2) * g * g


def _commit(p: Tensor) -> None:
    p._bump()
