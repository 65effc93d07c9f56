"""Finding and removing the forward pre-hooks that the hook-based reparametrizations (prune, the old weight_norm
and spectral_norm) register on a module, one per tensor they act on."""
from __future__ import annotations


def _pre_hooks(module, kind: type, name: str, attr: str = "name") -> list:
    """The (key, hook) pairs of ``module``'s forward pre-hooks of class ``kind`` acting on ``module.<name>`` (the
    hook's attribute ``attr`` holds the tensor's name)."""
    return [(k, h) for k, h in module._forward_pre_hooks.items() if isinstance(h, kind) and getattr(h, attr) == name]


def _remove_pre_hook(module, kind: type, name: str, attr: str = "name") -> bool:
    """Undo the first such hook (its ``remove(module)``) and unregister it; whether there was one."""
    for k, hook in _pre_hooks(module, kind, name, attr):
        hook.remove(module)
        del module._forward_pre_hooks[k]
        return True
    return False
