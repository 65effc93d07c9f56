"""Generate docs/compat.md: every public name of torch's namespaces and whether ember has it.

    python tools/compat.py            # rewrite docs/compat.md  (make compat)
    python tools/compat.py --check    # exit 1 when docs/compat.md is stale

"Supported" is derived from ember itself (the name exists in the matching ember namespace); the notes on partial
support and the reasons a name is missing are the one table below (ANNOTATIONS), matched by namespace and name
patterns, first match wins. Names torch has in a namespace are its ``__all__``, or its public attributes defined
by torch (modules and typing helpers left out) where it has no ``__all__``.
"""
from __future__ import annotations

import fnmatch
import importlib
import os
import sys
import types
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "compat.md")

# (torch namespace, note shown under its heading); "Tensor" is the class torch.Tensor's attributes
NAMESPACES = [
    ("torch", "Top-level functions, dtypes and classes."),
    ("torch.Tensor", "Tensor methods and attributes."),
    ("torch.nn", ""), ("torch.nn.functional", ""), ("torch.nn.init", ""), ("torch.nn.utils", ""),
    ("torch.nn.parallel", "No GPU: the multi-GPU helpers walk their arguments as torch's do and raise where "
                          "torch's CPU build raises."),
    ("torch.nn.utils.rnn", ""), ("torch.nn.utils.stateless", ""), ("torch.nn.grad", ""),
    ("torch.nn.utils.parametrize", ""), ("torch.nn.utils.parametrizations", ""),
    ("torch.nn.utils.prune", ""), ("torch.nn.attention", "ember computes attention one way (the math form); the "
                                                         "kernel switches keep torch's state and refusals."),
    ("torch.nn.attention.bias", ""),
    ("torch.nn.attention.flex_attention", "torch's eager (math reference) path: the same values, forward only as on "
                                          "torch's CPU build."),
    ("torch.linalg", ""), ("torch.fft", ""), ("torch.special", ""), ("torch.distributions", ""),
    ("torch.optim", ""), ("torch.optim.lr_scheduler", ""),
    ("torch.autograd", ""), ("torch.autograd.functional", ""), ("torch.autograd.forward_ad", ""),
    ("torch.autograd.graph", ""), ("torch.autograd.profiler", ""), ("torch.func", ""),
    ("torch.utils.data", ""), ("torch.utils.checkpoint", ""), ("torch.utils.dlpack", ""),
    ("torch.utils.model_zoo", ""), ("torch.utils.benchmark", ""), ("torch.utils._pytree", ""),
    ("torch.cuda", "Answers as torch's CPU-only build does (False, 0, or its error), behind one runtime seam "
                   "(ember/cuda/_runtime.py) a GPU backend can take over."),
    ("torch.amp", ""), ("torch.cpu", ""), ("torch.accelerator", "No accelerator: torch's CPU-build answers."),
    ("torch.mps", "No MPS: torch's answers without an MPS backend."),
    ("torch.backends.cudnn", "Flags keep torch's defaults and checks; no cuDNN here."), ("torch.backends.cuda", ""),
    ("torch.backends.mps", ""), ("torch.backends.mkldnn", ""), ("torch.backends.mkl", ""),
    ("torch.backends.openmp", ""), ("torch.backends.cpu", ""), ("torch.backends.mha", ""),
    ("torch.backends.opt_einsum", ""),
    ("torch.version", ""), ("torch.jit", "No TorchScript compiler: scripted and traced callables run the original "
                                         "Python (same outputs, gradients, state_dict)."),
    ("torch.compiler", "ember runs eagerly: torch.compile returns its argument; decorators pass functions "
                       "through."),
    ("torch.profiler", "An op-level CPU profiler over ember's ops."), ("torch.hub", ""),
    ("torch.multiprocessing", ""), ("torch.sparse", "COO tensors over dense storage."), ("torch.futures", ""),
    ("torch.storage", ""), ("torch.random", ""), ("torch.testing", ""), ("torch.distributed", "Over MPI."),
]

# torch namespaces ember does not provide at all, with the reason
ABSENT_NAMESPACES = {
    "torch.export": "graph capture for ahead-of-time compilation (ember has no graph compiler yet)",
    "torch.fx": "symbolic tracing to a graph IR (no graph compiler yet)",
    "torch.quantization": "quantized kernels", "torch.ao": "quantized kernels",
    "torch.onnx": "ONNX export needs a captured graph", "torch.nested": "nested (jagged) tensors",
    "torch.masked": "masked tensors", "torch.library": "registering C++/ATen operators",
    "torch.overrides": "__torch_function__ dispatch", "torch.signal": "signal windows namespace",
    "torch.xpu": "Intel GPUs (GPU-only)", "torch.mtia": "MTIA accelerators (device-only)",
}

# Packages whose public module paths are listed (``from torch.nn.modules.batchnorm import _BatchNorm`` must find
# a module when ember stands in for torch), with the reason a path ember lacks is missing (first match wins)
MODULE_ROOTS = ("torch.nn",)
MODULE_ABSENT = [
    ("torch.nn.quantized*", "quantized kernels"), ("torch.nn.quantizable*", "quantized kernels"),
    ("torch.nn.qat*", "quantized kernels"), ("torch.nn.intrinsic*", "quantized kernels"),
    ("torch.nn.backends*", "torch's legacy THNN backend registry"),
    ("torch.nn.cpp", "wrappers of C++ frontend modules"),
    ("torch.nn.attention.varlen", "FlashAttention kernels (GPU-only: torch's CPU build raises)"),
    ("torch.nn.attention.experimental", "experimental paged / quantized attention"),
    ("torch.nn.modules.linear_cross_entropy", "torch's chunked kernel (ember runs the reference form)"),
    ("*", "not implemented yet"),
]

# Names torch defines only when an optional package is missing (torch.hub's fallback progress bar, also in model_zoo,
# when tqdm is not installed): listed always, so that the page does not depend on what else the machine has.
ENVIRONMENT_NAMES = {"torch.hub": {"tqdm"}, "torch.utils.model_zoo": {"tqdm"}}

# (namespace pattern, name pattern, status, note): status "partial" for names ember has with a difference,
# "absent" for the reason a name ember lacks is missing, "no" for names ember has only to refuse them
ANNOTATIONS = [
    # TorchScript
    ("torch.jit", "save", "no", "TorchScript archives: raises a clear error (no TorchScript runtime)"),
    ("torch.jit", "load", "no", "TorchScript archives: raises a clear error (no TorchScript runtime)"),
    ("torch.jit", "CompilationUnit", "no", "compiling TorchScript source (no TorchScript compiler)"),
    ("torch.jit", "script", "partial", "returns a ScriptFunction / RecursiveScriptModule running the original "
                                       "Python; .code/.graph absent"),
    ("torch.jit", "trace*", "partial", "runs the example once; the result re-runs Python each call (branches are "
                                       "not frozen), no TracerWarnings; .code/.graph absent"),
    ("torch.jit", "freeze", "partial", "parameters become constants of a copy; no graph optimisation"),
    ("torch.jit", "optimize_for_inference", "partial", "freezes; no graph optimisation"),
    ("torch.jit", "script_method", "partial", "returns the function (torch returns a stub)"),
    ("torch.jit", "interface", "partial", "returns the class unchanged"),
    ("torch.jit", "last_executed_optimized_graph", "partial", "None: no graphs are executed"),
    ("torch.jit", "export_opnames", "absent", "needs TorchScript graphs"),
    ("torch.jit", "*", "absent", "TorchScript runtime"),
    # compiler
    ("torch", "compile", "partial", "returns the model/function unchanged (eager)"),
    ("torch.compiler", "compile", "partial", "ember.compile: returns its argument (eager)"),
    ("torch.compiler", "*", "absent", "needs a graph compiler"),
    # profiler
    ("torch.profiler", "profile", "partial", "CPU activity; op names follow ember's ops (decomposition differs "
                                             "from ATen's); memory = bytes allocated by op outputs; no FLOPs"),
    ("torch.autograd.profiler", "profile", "partial", "as torch.profiler.profile"),
    ("torch.autograd.profiler", "load_nvprof", "no", "nvprof traces come from CUDA runs"),
    ("torch.profiler", "ExecutionTraceObserver", "no", "records torch's C++ execution graph"),
    ("torch.profiler", "*", "absent", "device profiling internals"),
    # hub / storage / multiprocessing / sparse
    ("torch.hub", "load_state_dict_from_url", "partial", "loads with ember.load: tensors and plain data only"),
    ("torch.utils.model_zoo", "load_url", "partial", "loads with ember.load: tensors and plain data only"),
    ("torch.Tensor", "share_memory_", "partial", "moves this tensor's memory (and its base's); other existing "
                                                 "views keep the old memory"),
    ("torch.Tensor", "to_sparse", "partial", "COO only; dense storage underneath"),
    ("torch", "sparse_coo_tensor", "partial", "dense storage underneath; ops torch refuses on sparse tensors "
                                              "compute densely"),
    ("torch.sparse", "mm", "partial", "dense storage underneath"),
    ("torch.sparse", "*", "absent", "semi-structured / other sparse layouts"),
    ("torch.utils.benchmark", "Timer", "partial", "Python statements; no C++ statements or Callgrind counts"),
    ("torch.utils.benchmark", "*", "absent", "Compare tables, fuzzers and Callgrind counts"),
    # mixed precision (docs/bfloat16.md)
    ("torch*", "autocast", "partial", "CPU: torch's CPU op lists; names imported from ember by user code before the "
                                     "first autocast region keep the unwrapped function"),
    ("torch.amp", "GradScaler", "partial", "as torch's CPU build: 'cuda' disables itself, 'cpu' works"),
    # backends / devices
    ("torch.backends.mkldnn", "is_available", "partial", "False: ember has no oneDNN kernels"),
    ("torch.backends.mkl", "is_available", "partial", "False: ember's kernels are NumPy's"),
    ("torch.backends.openmp", "is_available", "partial", "False: ember's kernels are NumPy's"),
    ("torch.backends.cpu", "get_cpu_capability", "partial", "the SIMD level NumPy's kernels use"),
    ("torch.backends*", "*", "absent", "not implemented yet"),
    ("torch.cuda", "*", "absent", "GPU-only"),
    ("torch.mps", "*", "absent", "MPS-only"),
    ("torch.cpu", "*", "absent", "torch.cpu stream/device helpers"),
    # nn
    ("torch.nn.functional", "interpolate", "partial", "no 'lanczos' mode; antialiased resizing to one output column "
                                                      "gives the filter's values (torch's kernel repeats the first "
                                                      "row there)"),
    ("torch.nn.functional", "scaled_dot_product_attention", "partial", "the math form for every kernel choice: "
                                                                       "node names are torch's math path's, and "
                                                                       "second derivatives exist where torch's CPU "
                                                                       "flash kernel has none"),
    ("torch.nn.attention", "*flash_attention_impl*", "absent", "FlashAttention implementation registry (GPU "
                                                                "kernels)"),
    ("torch.nn.attention.flex_attention", "create_block_mask", "partial", "no compute_dq_write_order (metadata of "
                                                                          "torch's FLASH backward kernel)"),
    ("torch.nn.attention.flex_attention", "BlockMask", "partial", "not a registered pytree node; no dq write-order "
                                                                  "metadata"),
    ("torch.nn.functional", "linear_cross_entropy", "partial", "the reference form (linear, then cross_entropy) "
                                                                "whatever the options: every logit in memory; "
                                                                "twice differentiable, repeatable backward"),
    ("torch.nn", "LinearCrossEntropy*", "partial", "options validated, computed by the reference form (see "
                                                    "F.linear_cross_entropy)"),
    ("torch.nn.utils", "convert_conv*_weight_memory_format", "partial", "strides stay row-major (ember keeps no "
                                                                       "memory formats)"),
    ("torch.nn.utils", "skip_init", "partial", "parameters are initialised, then replaced by uninitialised memory "
                                               "(no meta device)"),
    ("torch", "batch_norm_*", "absent", "SyncBatchNorm's kernels (CUDA-only in torch but for batch_norm_update_stats)"),
    ("torch", "native_*", "absent", "ATen's internal kernel entry points (on torch's CPU build partly missing or "
                                    "unchecked); the nn.functional forms are supported"),
    ("torch.nn.functional", "*has_torch_function*", "absent", "__torch_function__ dispatch (torch.overrides)"),
    ("torch.nn.functional", "handle_torch_function", "absent", "__torch_function__ dispatch (torch.overrides)"),
    ("torch.nn.functional", "*scaled*mm", "absent", "float8 / scaled matmul kernels"),
    ("torch.nn.functional", "*Type", "absent", "float8 / scaled matmul kernels"),
    ("torch.nn.functional", "grouped_mm", "absent", "not implemented yet (mixture-of-experts grouped matmul)"),
    # families ember leaves out
    ("*", "*quantiz*", "absent", "quantized kernels"), ("*", "q_*", "absent", "quantized kernels"),
    ("*", "*fake_quant*", "absent", "quantized kernels"), ("*", "*qint*", "absent", "quantized kernels"),
    ("*", "*quint*", "absent", "quantized kernels"), ("*", "*fbgemm*", "absent", "quantized kernels"),
    ("*", "*cudnn*", "absent", "GPU-only"), ("*", "*miopen*", "absent", "GPU-only"),
    ("*", "*cuda*", "absent", "GPU-only"), ("*", "*mkldnn*", "absent", "oneDNN kernels"),
    ("*", "*nested*", "absent", "nested tensors"), ("*", "*vulkan*", "absent", "other accelerators"),
    ("*", "*xla*", "absent", "other accelerators"), ("*", "*xpu*", "absent", "other accelerators"),
    ("*", "*mps*", "absent", "other accelerators"), ("*", "*mtia*", "absent", "other accelerators"),
    ("*", "*hpu*", "absent", "other accelerators"), ("*", "*ipu*", "absent", "other accelerators"),
    ("*", "*csr*", "absent", "sparse layouts other than COO"), ("*", "*csc*", "absent", "sparse layouts other than COO"),
    ("*", "*bsr*", "absent", "sparse layouts other than COO"), ("*", "*bsc*", "absent", "sparse layouts other than COO"),
    ("*", "*script*", "absent", "TorchScript runtime"),
    ("*", "*jit*", "absent", "TorchScript runtime"), ("*", "*_foreach*", "absent", "fused multi-tensor kernels"),
    ("*", "*fused*", "absent", "fused kernels"), ("*", "*pin_memory*", "absent", "page-locked memory (GPU transfers)"),
    ("*", "*", "absent", "not implemented yet"),
]

def _torch():
    import torch

    for name in ("torch.utils.data", "torch.utils.benchmark", "torch.utils.model_zoo", "torch.utils.checkpoint",
                 "torch.utils.dlpack", "torch.utils._pytree", "torch.hub", "torch.multiprocessing", "torch.futures",
                 "torch.sparse", "torch.func", "torch.profiler", "torch.autograd.profiler", "torch.storage",
                 "torch.nn.attention", "torch.nn.attention.bias", "torch.nn.attention.flex_attention",
                 "torch.nn.utils.prune",
                 "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations", "torch.nn.grad", "torch.cpu", "torch.distributed", "torch.export", "torch.fx",
                 "torch.quantization", "torch.onnx", "torch.nested", "torch.masked", "torch.library",
                 "torch.overrides", "torch.signal", "torch.xpu", "torch.mtia"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a namespace that cannot load is listed as such
            pass
    return torch


def _resolve(root, path: str):
    obj = root
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _defined_by_torch(value) -> bool:
    """Whether a public attribute is torch's own (not a module, nor a typing/stdlib helper it imports)."""
    if isinstance(value, types.ModuleType):
        return False
    if isinstance(value, (bool, int, float, str)):
        return True
    mod = getattr(value, "__module__", None) or ""
    return mod.split(".")[0] == "torch"


def _public(obj, path: str) -> list:
    """torch's public names in one namespace: ``__all__`` (plus its own public attributes at the top level), or
    its own public attributes where there is no ``__all__``."""
    if path == "torch.Tensor":
        return sorted(n for n in dir(obj) if not n.startswith("_"))
    props = set()
    if hasattr(obj, "m") and isinstance(obj.m, types.ModuleType):  # torch.backends' property modules
        props = {n for n in vars(type(obj)) if not n.startswith("_")}
        obj = obj.m
    declared = getattr(obj, "__all__", None)
    names = set(declared or []) | props | ENVIRONMENT_NAMES.get(path, set())
    if not declared or path == "torch":
        for n in dir(obj):
            if not n.startswith("_"):
                try:
                    value = getattr(obj, n)
                except Exception:  # noqa: BLE001 - an attribute that cannot load is not listed
                    continue
                if _defined_by_torch(value):
                    names.add(n)
    return sorted(n for n in names if not isinstance(getattr(obj, n, None), types.ModuleType) or n in props)


def _has(ember_ns, name: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return hasattr(ember_ns, name)
    except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is missing
        return False


def _annotation(path: str, name: str, present: bool, value=None) -> tuple:
    if not present and isinstance(value, type) and value.__module__.startswith("torch._C"):
        return "not supported", "C++ binding types (TorchScript IR, dispatcher, profiler internals)"
    if not present and name.endswith("Storage") and isinstance(value, type):
        return "not supported", "typed storage classes (deprecated in torch; use Tensor.untyped_storage())"
    for ns_pat, name_pat, status, note in ANNOTATIONS:
        if fnmatch.fnmatchcase(path, ns_pat) and fnmatch.fnmatchcase(name, name_pat):
            if status == "no":
                return "not supported", note
            if status == "partial" and present:
                return "partial", note
            if status == "absent" and not present:
                return "not supported", note
    return ("supported", "") if present else ("not supported", "not implemented yet")


def _code(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _module_paths(root: str) -> list:
    """torch's public module paths under ``root`` (no component starting with an underscore)."""
    import pkgutil

    package = importlib.import_module(root)
    found = [root]
    for info in pkgutil.walk_packages(package.__path__, root + ".", onerror=lambda name: None):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return sorted(found)


def _module_section(root: str) -> str:
    present, missing = [], {}
    for path in _module_paths(root):
        try:
            importlib.import_module("ember" + path[len("torch"):])
            present.append(path)
        except ImportError:
            why = next(reason for pattern, reason in MODULE_ABSENT if fnmatch.fnmatchcase(path, pattern))
            missing.setdefault(why, []).append(path)
    n_missing = sum(len(v) for v in missing.values())
    lines = [f"## `{root}` module paths", "",
             f"Where torch's public modules under `{root}` import from (`from {root}.modules.batchnorm import "
             "_BatchNorm`, with ember standing in for torch): the module exists in ember.", "",
             f"{len(present)} present, {n_missing} missing (of {len(present) + n_missing}).", "",
             "Present: " + _code(present), ""]
    if missing:
        lines += ["| missing | why |", "|---|---|"]
        lines += [f"| {_code(paths)} | {why} |" for why, paths in sorted(missing.items())] + [""]
    return "\n".join(lines)


def render() -> str:
    torch = _torch()
    import ember

    out = ["# Compatibility with torch 2.13 (CPU)", "",
           "Generated by `tools/compat.py` from ember itself: regenerate with `make compat` (a test fails when this "
           "file is stale). A name is *supported* when ember has it in the matching namespace; *partial* and the "
           "reasons for *not supported* come from the table in the generator. Tests compare supported names with "
           "torch (values, gradients, errors).", ""]
    totals = {"supported": 0, "partial": 0, "not supported": 0}
    sections = []
    for path, note in NAMESPACES:
        try:
            tns = _resolve(torch, path)
        except AttributeError:
            continue
        try:
            ens = _resolve(ember, "ember" + path[len("torch"):])
        except AttributeError:  # a submodule torch also loads only on import (torch.nn.attention.flex_attention)
            try:
                ens = importlib.import_module("ember" + path[len("torch"):])
            except ImportError:
                ens = None
        except Exception:  # noqa: BLE001 - the whole namespace is missing
            ens = None
        rows = {"supported": [], "partial": [], "not supported": []}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            names = _public(tns, path)
        for name in names:
            present = ens is not None and _has(ens, name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = getattr(tns, name, None)
            status, why = _annotation(path, name, present, value)
            rows[status].append((name, why))
        for k in totals:
            totals[k] += len(rows[k])
        n = sum(len(v) for v in rows.values())
        lines = [f"## `{path}`", ""]
        if note:
            lines += [note, ""]
        lines += [f"{len(rows['supported'])} supported, {len(rows['partial'])} partial, "
                  f"{len(rows['not supported'])} not supported (of {n}).", ""]
        if rows["supported"]:
            lines += ["Supported: " + _code(name for name, _ in rows["supported"]), ""]
        if rows["partial"]:
            lines += ["| partial | what differs |", "|---|---|"]
            lines += [f"| `{name}` | {why} |" for name, why in rows["partial"]] + [""]
        if rows["not supported"]:
            by_reason: dict = {}
            for name, why in rows["not supported"]:
                by_reason.setdefault(why, []).append(name)
            lines += ["| not supported | why |", "|---|---|"]
            lines += [f"| {_code(names)} | {why} |" for why, names in sorted(by_reason.items())] + [""]
        sections.append("\n".join(lines))
    out += [f"Overall: {totals['supported']} supported, {totals['partial']} partial, {totals['not supported']} not "
            f"supported.", ""]
    out += sections
    out += [_module_section(root) for root in MODULE_ROOTS]
    out += ["## Namespaces ember does not provide", "", "| namespace | why |", "|---|---|"]
    out += [f"| `{ns}` | {why} |" for ns, why in ABSENT_NAMESPACES.items()]
    return "\n".join(out) + "\n"


def main(argv: list) -> int:
    sys.path.insert(0, ROOT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecated names warn when looked at
        text = render()
    if "--check" in argv:
        with open(DOC) as f:
            stale = f.read() != text
        if stale:
            print("docs/compat.md is stale: regenerate it with `make compat`", file=sys.stderr)
        return int(stale)
    with open(DOC, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
