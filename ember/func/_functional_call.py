"""functional_call (a module run with substituted parameters and buffers) and stack_module_state."""
from __future__ import annotations

import contextlib
from typing import Any


__all__ = ["functional_call", "stack_module_state"]


def _merge(dicts) -> dict:
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, (tuple, list)) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts)}")
    merged: dict = {}
    repeated = []
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                repeated.append(k)
            merged[k] = v
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


def _tied_groups(module) -> dict[str, list[str]]:
    """Every name of a parameter or buffer shared under several names -> all of its names."""
    by_id: dict[int, list[str]] = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() if len(names) > 1 for n in names}


@contextlib.contextmanager
def _reparametrize(module, values: dict, tie_weights: bool, strict: bool):
    if tie_weights:
        groups = _tied_groups(module)
        values = dict(values)
        for name in list(values):
            for other in groups.get(name, ()):
                if other == name:
                    continue
                if other in values and values[other] is not values[name]:
                    given = sorted(n for n in groups[name] if n in values)
                    raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. "
                                     f"Consider using tie_weights=False")
                values[other] = values[name]
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(known - set(values))
        unexpected = sorted(set(values) - known)
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(parts))
    undo = []
    try:
        for name, value in values.items():
            owner_name, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_name)
            for slot in (owner._parameters, owner._buffers):
                if attr in slot:
                    undo.append((slot, attr, slot[attr]))
                    slot[attr] = value
                    break
            else:
                had = attr in owner.__dict__
                undo.append((owner, attr, owner.__dict__.get(attr) if had else _MISSING))
                object.__setattr__(owner, attr, value)
        yield
    finally:
        for where, attr, old in reversed(undo):
            if isinstance(where, dict):
                where[attr] = old
            elif old is _MISSING:
                object.__delattr__(where, attr)
            else:
                object.__setattr__(where, attr, old)


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by the given tensors (by dotted
    name) for the duration of the call; the module is left as it was, even on error."""
    values = _merge(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of same-shaped ``models`` stacked along a new leading dim (for vmap):
    parameters as new leaves keeping their requires_grad, buffers detached."""
    from ..ops.shape import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = models[0]
    params = {}
    for name, _ in first.named_parameters():
        tensors = [dict(m.named_parameters())[name] for m in models]
        flags = {t.requires_grad for t in tensors}
        if len(flags) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        params[name] = stack([t.detach() for t in tensors]).requires_grad_(flags.pop())
    buffers = {name: stack([dict(m.named_buffers())[name].detach() for m in models])
               for name, _ in first.named_buffers()}
    return params, buffers
