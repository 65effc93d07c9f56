"""Spectral normalization as a forward pre-hook (torch.nn.utils.spectral_norm; parametrizations.spectral_norm is
the newer form)."""
from __future__ import annotations

from ... import _factories as _F
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from ._hooks import _pre_hooks, _remove_pre_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook", "spectral_norm",
           "remove_spectral_norm"]


def _as_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` with ``dim`` first, flattened to (size of dim, rest)."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.shape[0], -1)


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name>`` to ``<name>_orig / sigma``, sigma estimated by power
    iteration on the buffers ``<name>_u`` and ``<name>_v`` (updated in training mode)."""

    _version = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        return _as_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):  # the buffers are updated in place
                    v.copy_(F.normalize(mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(mat.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        return weight / u.dot(mat.mv(v))

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, mat: Tensor, u: Tensor, target_sigma: Tensor) -> Tensor:
        """A v with u^T W v = target_sigma (for checkpoints that stored the normalized weight instead of v)."""
        v = (mat.t().mm(mat).pinverse() @ mat.t() @ u.unsqueeze(1)).squeeze(1)
        return v * (target_sigma / u.dot(mat.mv(v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> "SpectralNorm":
        if _pre_hooks(module, SpectralNorm, name):
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized parameters. Make sure to run "
                             "the dummy forward before applying spectral normalization")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(_F.randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=fn.eps)
            v = F.normalize(_F.randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts checkpoints of the first spectral_norm (which stored the normalized weight, not v)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and all(key + s in state_dict for s in ("_orig", "_u", "_v")) and key not in state_dict:
            return
        missing = False
        for suffix in ("_orig", "", "_u"):
            if key + suffix not in state_dict:
                missing = True
                if strict:
                    missing_keys.append(key + suffix)
        if missing:
            return
        with no_grad():
            orig, weight = _tensor(state_dict[key + "_orig"]), _tensor(state_dict.pop(key))
            sigma = (orig / weight).mean()
            state_dict[key + "_v"] = fn._solve_v_and_rescale(fn.reshape_weight_to_matrix(orig),
                                                              _tensor(state_dict[key + "_u"]), sigma)


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else _F.tensor(x)


class SpectralNormStateDictHook:
    """Records the spectral_norm version in the state_dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        entry = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in entry:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        entry[key] = self.fn._version


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value), estimated by power iteration before
    every forward (``dim``: the output dim, 1 for ConvTranspose layers by default)."""
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``spectral_norm``: ``module.<name>`` becomes a plain parameter with the normalized value."""
    if not _remove_pre_hook(module, SpectralNorm, name):
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in hooks.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[k]
                break
    return module
