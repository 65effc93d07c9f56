"""Pruning: a parameter multiplied by a 0/1 mask recomputed before every forward (torch.nn.utils.prune).

# NOTE [pruning hooks]
Pruning ``module.weight`` moves the parameter to ``weight_orig``, registers the mask as the buffer
``weight_mask`` and makes ``module.weight`` a plain attribute ``weight_mask * weight_orig`` that a forward pre-hook
(the pruning method itself) recomputes; gradients reach ``weight_orig`` through that product. Pruning the same
tensor again combines the methods in a ``PruningContainer``: the new method sees only what the previous masks kept
(the kept entries; for structured methods, the kept channels along its dim). ``remove`` makes the pruned values
permanent. Masks are constants computed without recording a graph.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from ... import _backend as _B
from ... import _factories as _F
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ._hooks import _pre_hooks, _remove_pre_hook
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured", "l1_unstructured",
           "random_structured", "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


def _importance_scores(t: Tensor, scores: Tensor | None, name: str | None = None, module=None) -> Tensor:
    """What a pruning method ranks ``t``'s entries by: ``scores`` (of ``t``'s shape), or ``t`` itself; ``name`` and
    ``module``: where ``t`` is, for the error."""
    if scores is None:
        return t
    if scores.shape != t.shape:
        what = "tensor t" if module is None else f"parameter {name} of {module}"
        raise AssertionError(f"importance_scores should have the same shape as {what}, got {scores.shape} vs "
                             f"{t.shape}")
    return scores


class BasePruningMethod(ABC):
    """A way to choose which entries of a tensor to zero (``compute_mask``); also the forward pre-hook that
    reapplies its mask (NOTE [pruning hooks])."""

    _tensor_name: str = None
    PRUNING_TYPE: str = "unstructured"

    def __call__(self, module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, given the mask of the pruning already applied (``default_mask``)."""

    def apply_mask(self, module) -> Tensor:
        """``<name>_mask * <name>_orig``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask, orig = getattr(module, self._tensor_name + "_mask"), getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name: str, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, chained after any pruning already applied to it."""
        found = _pre_hooks(module, BasePruningMethod, name, "_tensor_name")
        if len(found) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                                 f"Use a PruningContainer.")
        for k, _ in found:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if found:
            old = found[0][1]
            if isinstance(old, PruningContainer):
                old.add_pruning_method(method)
                method = old
            else:
                container = PruningContainer(old)
                container.add_pruning_method(method)
                method = container
        orig = getattr(module, name)
        importance_scores = _importance_scores(orig, importance_scores, name, module)
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _F.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with no_grad():
                mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # undo the move
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times the mask this method computes for it (no module involved)."""
        importance_scores = _importance_scores(t, importance_scores)
        default_mask = default_mask if default_mask is not None else _F.ones_like(t)
        with no_grad():
            mask = self.compute_mask(importance_scores, default_mask=default_mask)
        return t * mask

    def remove(self, module) -> None:
        """Make the pruning permanent: ``<name>`` becomes the parameter again, holding the masked values."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig._data, orig._dtype = weight._data, weight._dtype
        orig._bump()
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _set_entries(mask: Tensor, where, value) -> None:
    """Write ``value`` into the constant ``mask`` at ``where`` (an index of its array)."""
    mask._data[where] = value


class PruningContainer(BasePruningMethod):
    """The successive pruning methods of one tensor; its mask is the last method's applied to what the earlier
    ones kept."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype).clone()
        if method.PRUNING_TYPE == "unstructured":
            where = (default_mask == 1)._data
            part = method.compute_mask(t[_F.tensor(where)], default_mask=default_mask[_F.tensor(where)])
            _set_entries(new_mask, where, part.to(dtype=new_mask.dtype)._data)
            return new_mask
        if method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                     'defined.')
            n = t.dim()
            dim = method.dim + n if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n}")
            keep = (default_mask.sum(dim=[d for d in range(n) if d != dim]) != 0)._data
            where = (slice(None),) * dim + (keep,)
            part = method.compute_mask(_F.tensor(t._data[where], dtype=t.dtype),
                                       default_mask=_F.tensor(default_mask._data[where], dtype=default_mask.dtype))
            _set_entries(new_mask, where, part.to(dtype=new_mask.dtype)._data)
            return new_mask
        if method.PRUNING_TYPE == "global":
            part = method.compute_mask(t, default_mask=default_mask)
            _set_entries(new_mask, ..., part.to(dtype=new_mask.dtype)._data)
            return new_mask
        raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")


class Identity(BasePruningMethod):
    """Prunes nothing (the mask stays all ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


def _check_amount(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _how_many(amount, size: int) -> int:
    """Entries (or channels) to prune out of ``size``: the count, or the fraction rounded."""
    k = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
    return k


def _check_structured(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _zero_smallest(mask: Tensor, scores: Tensor, k: int, largest: bool = False) -> Tensor:
    """``mask`` (a copy) with the entries of the ``k`` smallest (largest) scores set to 0."""
    mask = mask.clone()
    if k:
        idx = scores.reshape(-1).topk(k, largest=largest).indices._data
        flat = mask._data.reshape(-1)
        flat[idx] = 0
        mask._data = flat.reshape(mask._data.shape)
    return mask


def _channel_mask(t: Tensor, dim: int, keep) -> Tensor:
    """Ones on the channels ``keep`` (a boolean mask or indices) along ``dim``, zeros elsewhere."""
    arr = np.zeros(t.shape, t._data.dtype)
    arr[(slice(None),) * (dim % t.dim()) + (_B.to_host(keep),)] = 1
    return _F.tensor(arr, dtype=t.dtype, device=t.device)


class _Unstructured(BasePruningMethod):
    """Zeroes ``amount`` (a count or a fraction) of the entries: those of smallest ``_scores(t)`` (largest, with
    ``_largest``)."""

    PRUNING_TYPE = "unstructured"
    _largest = False

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _how_many(self.amount, t.numel())
        return _zero_smallest(default_mask, self._scores(t), k, largest=self._largest)


class RandomUnstructured(_Unstructured):
    """Zeroes ``amount`` (a count or a fraction) of the entries, chosen at random."""

    _largest = True  # (torch's: the top-k of uniform draws)

    @staticmethod
    def _scores(t: Tensor) -> Tensor:
        return _F.rand_like(t)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Zeroes ``amount`` (a count or a fraction) of the entries, those of smallest magnitude."""

    @staticmethod
    def _scores(t: Tensor) -> Tensor:
        return t.abs()

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Zeroes ``amount`` of the channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _how_many(self.amount, size)
        if k == 0:
            return default_mask
        prob = _F.rand(size)
        threshold = prob.kthvalue(k).values
        return _channel_mask(t, self.dim, (prob > threshold)._data) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Zeroes ``amount`` of the channels along ``dim``, those of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _how_many(self.amount, size)
        dim = self.dim % t.dim()
        norm = t.norm(p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = norm.topk(size - k, largest=True).indices._data
        if k == 0:
            return default_mask
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Applies a given mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name: str):
    """Prune nothing (adds the ``_orig``/``_mask`` entries and the hook)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name: str, amount):
    """Zero ``amount`` of ``module.<name>``'s entries at random."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name: str, amount, importance_scores=None):
    """Zero ``amount`` of ``module.<name>``'s entries of smallest magnitude (or smallest ``importance_scores``)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name: str, amount, dim: int):
    """Zero ``amount`` of ``module.<name>``'s channels along ``dim`` at random."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name: str, amount, n, dim: int, importance_scores=None):
    """Zero ``amount`` of ``module.<name>``'s channels along ``dim`` of smallest L``n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the (module, name) ``parameters`` together: ``pruning_method`` (unstructured) chooses among all their
    entries at once."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    with no_grad():
        scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
        default_mask = parameters_to_vector([getattr(m, n + "_mask", _F.ones_like(getattr(m, n)))
                                             for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    with no_grad():
        final = container.compute_mask(scores, default_mask)
    start = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=final[start:start + p.numel()].view_as(p))
        start += p.numel()


def custom_from_mask(module, name: str, mask: Tensor):
    """Apply the given ``mask`` to ``module.<name>``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name: str):
    """Make the pruning of ``module.<name>`` permanent (drop ``_orig``, ``_mask`` and the hook)."""
    if _remove_pre_hook(module, BasePruningMethod, name, "_tensor_name"):
        return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module) -> bool:
    """Whether ``module`` or a submodule has a pruning hook."""
    return any(isinstance(h, BasePruningMethod) for _, sub in module.named_modules()
               for h in sub._forward_pre_hooks.values())
