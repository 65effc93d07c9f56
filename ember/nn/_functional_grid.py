"""grid_sample and affine_grid (torch.nn.functional's forms): argument checks, torch's warnings and errors; the
differentiable work is in ember/ops/grid_sample.py."""
from __future__ import annotations

import warnings

from .. import _args
from .._tensor import Tensor
from ..ops import grid_sample as _G
from ..ops._inplace import _title

__all__ = ["grid_sample", "affine_grid"]

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDING = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
                  "details.")


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(map(str, t.shape)) + "]"


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """torch.grid_sampler: grid_sample with the modes as integers (checks of the ATen function)."""
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {_sizes(grid)}")
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        raise RuntimeError(f"grid_sampler(): expected {4 if input.dim() == 4 else 5}D input and grid with same number "
                           f"of dimensions, but got input with sizes {_sizes(input)} and grid with sizes "
                           f"{_sizes(grid)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {_sizes(input)} and grid with sizes {_sizes(grid)}")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {_sizes(input)} with dimension {d} being empty")
    nd = input.dim() - 2
    if nd == 3 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        kernel = "grid_sampler_2d_cpu_kernel_impl" if nd == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_title(input.dtype)}\'')
    if input.dtype != grid.dtype:  # (the kernel's read of the grid: after the shape checks and its dtype dispatch)
        raise RuntimeError(f"expected scalar type {_title(input.dtype)} but found {_title(grid.dtype)}")
    return _G.grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the ``grid`` (N, H_out, W_out, 2) or
    (N, D_out, H_out, W_out, 3) locations given in [-1, 1] (x indexes the last axis)."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDING[padding_mode], align_corners)


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """torch.affine_grid_generator: affine_grid without the Python-level checks."""
    return _G.affine_grid_generator(theta, size, align_corners)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) or (N, D, H, W, 3) sampling grid of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4) for
    an output of ``size`` (for grid_sample)."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, list(size)  # (torch's messages show the size as given)
    shape = f"torch.Size([{', '.join(map(str, theta.shape))}])"
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {given}. Got {shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {given}. Got {shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size[0] to equal theta.size(0) ({theta.shape[0]}), but got {size[0]}")
    return _G.affine_grid_generator(theta, size, align_corners)


_args.install(globals(), ("grid_sampler", "affine_grid_generator"))
