"""Kernels and host syncs per training step of the GPU workloads, counted on the NumPy stand-in for ``cuda``.

    PYTHONPATH=. python tools/kernel_count.py [--tiny] [--detail] [W2 W3 W5 W6]

On a GPU a small step costs what it launches and what it waits for (NOTE [stand-in counters] in
ember/_backend.py), and both can be counted without one. For each workload of bench/workloads.py this builds the
step on the strict stand-in (``EMBER_FAKE_CUDA=strict``), eager and through ember.compile, runs it three times,
then counts one step with ``ember._backend.counting()``: kernels (array operations on device arrays) and host syncs
(reads of a device value by the host, host fallbacks). Beside them, torch's count for the same step on its CPU,
from torch.profiler's tree of ATen ops: an op counts one kernel when it has no ATen op below it, or when it is one
of ``_OWN_KERNEL`` (one launch or one library call on CUDA, which the CPU implements with helper ops: the GEMMs
copy transposed operands for the CPU's BLAS, a sum fills its output first, a binary op with a Python number copies
the number into a CPU tensor first: a CUDA kernel takes it as an argument); its helpers then do not count.
Views, allocations without a fill and metadata reads (``_NO_KERNEL``) never count. That approximates torch's CUDA
launches; where CUDA launches more, it does not see them: addmm copies the bias into the output before the GEMM,
nll_loss and pooling backward zero their output before the kernel, cuDNN's convolution backward is several
kernels, and AdamW (W6) on CUDA defaults to the foreach implementation (a few multi-tensor launches for all
parameters, where the CPU's per-parameter loop is counted here).
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT]

# ATen ops that launch no kernel: views, allocations without a fill, metadata (see the docstring)
_NO_KERNEL = frozenset(
    "aten::" + n for n in (
        "view", "reshape", "_reshape_alias", "_unsafe_view", "t", "transpose", "permute", "expand", "expand_as",
        "as_strided", "unsqueeze", "squeeze", "select", "slice", "detach", "detach_", "alias", "empty",
        "empty_strided", "empty_like", "resize_", "lift_fresh", "split", "split_with_sizes", "chunk", "unbind",
        "narrow", "flatten", "unflatten", "contiguous", "resolve_conj", "resolve_neg", "result_type", "to",
        "view_as", "numpy_T", "movedim", "swapaxes", "set_", "_has_compatible_shallow_copy_type", "is_nonzero",
        "item", "_local_scalar_dense", "size", "stride", "dim", "lift", "clone_if_needed"))


# ATen ops that are one kernel on CUDA whatever helper ops the CPU runs below them (see the docstring)
_OWN_KERNEL = frozenset(
    "aten::" + n for n in (
        "mm", "addmm", "bmm", "baddbmm", "addmv", "mv", "dot", "sum", "mean", "mul", "add", "sub", "div", "mul_",
        "add_", "sub_", "div_", "rsub", "mkldnn_convolution", "_slow_conv2d_forward", "convolution_backward",
        "max_pool2d_with_indices_backward", "nll_loss_backward", "nll_loss_forward", "_log_softmax",
        "_softmax", "embedding_dense_backward", "native_layer_norm", "native_layer_norm_backward"))


def torch_kernels(step) -> tuple:
    """(the kernels of one call of ``step``, their counts by ATen op), from torch.profiler on the CPU."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    by_name: dict = {}

    def visit(e) -> None:
        name = e.name
        aten = name.startswith("aten::")
        if aten and name in _OWN_KERNEL:
            by_name[name] = by_name.get(name, 0) + 1
            return
        below = [c for c in e.cpu_children]
        if aten and name not in _NO_KERNEL and not any(c.name.startswith("aten::") for c in below):
            by_name[name] = by_name.get(name, 0) + 1
            return
        for c in below:
            visit(c)

    for e in prof.events():
        if e.cpu_parent is None:
            visit(e)
    return sum(by_name.values()), by_name


def ember_counts(w, sizes: dict, compiled: bool):
    """The ``Counts`` of one step of workload ``w`` on the strict stand-in (after three uncounted steps)."""
    import ember
    from ember import _backend

    ember.set_default_device("cuda")
    try:
        step, _ = w.build(ember, w.data(sizes), sizes, compile=compiled)
        for _ in range(3):
            step()
        with _backend.counting() as c:
            loss = step()
    finally:
        ember.set_default_device("cpu")
    float(loss)  # (read after the counted block: the loss stays on the device in the step)
    return c


def count(names, tiny: bool = False) -> dict:
    """{workload: {ember, ember_syncs, ember_compiled, ember_compiled_syncs, torch, by-name details}}."""
    import torch

    from bench.workloads import WORKLOADS
    from ember import _backend

    _backend.enable_stand_in(True, strict=True)
    out = {}
    for name in names:
        w = WORKLOADS[name]
        sizes = w.tiny if tiny else w.sizes
        row = {}
        for key, comp in (("ember", False), ("ember_compiled", True)):
            c = ember_counts(w, sizes, comp)
            row[key], row[key + "_syncs"] = c.kernels, c.syncs
            row[key + "_by_kernel"], row[key + "_by_sync"] = dict(c.by_kernel), dict(c.by_sync)
        torch.manual_seed(0)
        step, _ = w.build(torch, w.data(sizes), sizes)
        for _ in range(3):
            step()
        row["torch"], row["torch_by_kernel"] = torch_kernels(step)
        out[name] = row
    return out


def table(rows: dict) -> str:
    lines = ["| workload | ember eager kernels | syncs | ember compiled kernels | syncs | torch ATen kernels (CPU) |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['ember']} | {r['ember_syncs']} | {r['ember_compiled']} | "
                     f"{r['ember_compiled_syncs']} | {r['torch']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="*", default=["W2", "W3", "W5", "W6"])
    p.add_argument("--tiny", action="store_true", help="the workloads' test sizes")
    p.add_argument("--detail", action="store_true", help="counts by kernel name")
    args = p.parse_args(argv)
    rows = count(args.workloads, args.tiny)
    print(table(rows))
    if args.detail:
        for name, r in rows.items():
            for key in ("ember", "ember_compiled", "torch"):
                by = sorted(r[key + "_by_kernel"].items(), key=lambda kv: -kv[1])
                print(f"{name} {key}: " + ", ".join(f"{k} {v}" for k, v in by))
                if r.get(key + "_by_sync"):
                    print(f"{name} {key} syncs: {r[key + '_by_sync']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
