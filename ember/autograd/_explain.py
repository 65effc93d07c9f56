"""``explain(tensor, root)``: why a tensor's ``.grad`` is None or zero, in plain words and as data.

# NOTE [explain]
The answer is derived when asked, from three sources: the graph of the root (which nodes reach the tensor),
the provenance records (NOTE [provenance] in _provenance.py: where user code detached, disabled grad mode,
switched requires_grad on or registered hooks), and the source lines of the user's code at those sites.
When the tensor is reached but gets a zero gradient and the root's graph still holds its saved tensors,
a probe backward (retain_graph, temporary node hooks, nothing accumulated) finds the node where the gradient
became zero, or the hook that replaced it. Causes, in the order they are tried:

    integer_dtype, inference_mode, detached, no_grad, not_requires_grad, not_leaf, no_backward,
    requires_grad_late, unreachable, hook, zero_path, ok (has a gradient), not_run (would get a non-zero one)
"""
from __future__ import annotations

import linecache
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from . import _provenance as P
from .graph import AccumulateGrad, _root_nodes, _walk

__all__ = ["explain", "Explanation"]

_ZEROING = {"Relu": "ReLU passes no gradient where its input was <= 0, and here that was every element that "
                    "leads to {name} (a dead ReLU)",
            "Threshold": "the threshold passed no element that leads to {name} (a dead ReLU)",
            "Hardtanh": "every element was outside hardtanh's linear range",
            "Clamp": "every element was clamped (outside the range), where clamp's gradient is zero",
            "Where": "the condition selected the other branch for every element (masked out)",
            "MaskedFill": "the mask covered every element (masked out)",
            "MaskedScatter": "the mask covered every element (masked out)",
            "Mul": "the gradient was multiplied by zero (the other factor is zero)",
            "Div": "the gradient was divided into zero (the numerator's factor is zero)",
            "Index": "the indexing selected no element that leads to {name}",
            "Max": "the max/min picked elements that do not lead to {name}",
            "Min": "the max/min picked elements that do not lead to {name}"}


@dataclass
class Explanation:
    """Why ``tensor.grad`` is what it is: a cause code, a message, and the places in the code it names."""

    cause: str
    message: str
    name: str = "the tensor"
    sites: list = field(default_factory=list)     # [(filename, lineno, source line), ...]
    nodes: list = field(default_factory=list)     # names of the graph nodes involved
    exact: bool = True                            # False: a likely cause (the evidence was gone)

    def __str__(self) -> str:
        lines = [self.message]
        for filename, lineno, text in self.sites:
            lines.append(f'  File "{filename}", line {lineno}' + (f": {text}" if text else ""))
        return "\n".join(lines)


def _src(filename: str, lineno: int) -> str:
    return linecache.getline(filename, lineno).strip()


def _site(r) -> tuple:
    return (r.filename, r.lineno, _src(r.filename, r.lineno))


def _uses(filename: str, first: int, last: int, name: str | None, assigned: bool = False) -> list:
    """Lines in [first, last) of ``filename`` that read ``name`` (or also assign it, with ``assigned``)."""
    if not name:
        return []
    name = name.split(".")[0]  # a parameter `model.0.weight` is used through `model`
    pat = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    assign = re.compile(rf"^\s*{re.escape(name)}\s*=(?!=)")
    out = []
    for n in range(first, last):
        text = linecache.getline(filename, n)
        if not pat.search(text):
            continue
        if not assigned and assign.match(text) and len(pat.findall(text)) == 1:
            continue
        out.append((filename, n, text.strip()))
    return out


def _block_body(r, name: str | None, assigned: bool = False) -> list:
    """Lines inside the ``with`` block recorded by ``r`` that use (or assign) ``name``."""
    first = linecache.getline(r.filename, r.lineno)
    if not first or not name:
        return []
    indent = len(first) - len(first.lstrip())
    end = r.lineno + 1
    while True:
        text = linecache.getline(r.filename, end)
        if not text:
            break
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        end += 1
    return _uses(r.filename, r.lineno + 1, end, name, assigned)


def _caller_name(t) -> str | None:
    """The caller's name for ``t``: a variable, or ``model.0.weight`` for a parameter of a module variable."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(P._PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    name = P._name_in(f, t)
    if name is not None:
        return name
    from ..nn.modules.module import Module  # noqa: PLC0415 - import cycle

    for scope in (f.f_locals, f.f_globals):
        for k, v in list(scope.items()):
            if isinstance(v, Module) and not k.startswith("_"):
                for pname, p in v.named_parameters():
                    if p is t:
                        return f"{k}.{pname}"
    return None


def _alive(ref):
    return ref() if ref is not None else None


def _recorded_name(r, tensor) -> str | None:
    """The name under which the code recorded by ``r`` used ``tensor`` (itself, or a parameter of a module it
    named: ``model.0.weight``), whatever ``explain``'s caller calls it (NOTE [provenance])."""
    if not r.used:
        return None
    return next((name for name, ref in r.used.items() if ref() is tensor), None)


def _nonzero(g) -> bool:
    return g is not None and bool(np.any(g._data != 0))


def explain(tensor, root=None) -> Explanation:
    """Why ``tensor.grad`` is None (or zero) after a backward from ``root`` (default: the last backward).

    Names the place in the code where the link to the root broke when ember saw it. ``str()`` of the result
    is the explanation in words; ``cause``, ``sites`` and ``nodes`` are the same facts as data."""
    name = _caller_name(tensor) or next((r.name for r in reversed(P.flags) if _alive(r.src) is tensor and r.name),
                                        None)
    label = f"`{name}`" if name else "the tensor"
    if not tensor._dtype._differentiable:
        return Explanation("integer_dtype", f"{label} has dtype {tensor._dtype}: only floating point tensors can "
                           "require gradients, so it enters any graph as a constant (indices, masks, counts). Make "
                           "it floating point (e.g. .float()) if it must be learned.", label)
    if not tensor._requires_grad:
        return _no_requires_grad(tensor, label, name)
    if tensor._grad_fn is not None and not tensor.retains_grad:
        return Explanation("not_leaf", f"{label} is not a leaf: it was computed by {tensor._grad_fn.name()} from "
                           "other tensors, and backward() fills .grad only for leaves (tensors created with "
                           f"requires_grad=True, like parameters). Call {name or 'x'}.retain_grad() before "
                           "backward() to keep its gradient, or use autograd.grad(loss, "
                           f"{name or 'x'}).", label, nodes=[tensor._grad_fn.name()])
    roots = _roots(root)
    if not roots:  # the root is gone (often a temporary: ``(...).sum().backward()``): the records may still tell
        found = _cut(tensor, label, name)
        if found is not None:
            return found
        if _nonzero(tensor._grad):
            return Explanation("ok", f"{label} has a non-zero gradient.", label)
        if _tensor_hooked(tensor):
            return Explanation("hook", f"a gradient hook on {label} (registered at the line below) may have replaced "
                               "its gradient; pass root=<the loss> for the exact answer.", label,
                               _hook_sites([tensor]), exact=False)
        return Explanation("no_backward", "the root of the last backward() is gone (or none ran) and ember has no "
                           f"record of a cut: pass root=<the loss> to explain {label}.", label)
    target = tensor._grad_fn if tensor._grad_fn is not None else _alive(tensor._acc)
    rnodes = _root_nodes(roots)
    order = _walk(rnodes)
    if target is None or target not in set(order):
        return _unreachable(tensor, label, name, order)
    return _reached(tensor, label, roots, rnodes, target)


def _roots(root) -> list:
    if root is None:
        roots = [ref() for ref in P.last_roots]
        return roots if roots and all(t is not None for t in roots) else []
    return [root] if hasattr(root, "_grad_fn") else list(root)


def _no_requires_grad(tensor, label, name) -> Explanation:
    cut = next((r for r in reversed(P.breaks) if _alive(r.result) is tensor), None)
    if cut is not None:
        src = f"`{cut.name}`" if cut.name else "a tensor that requires grad"
        return Explanation("detached", f"{label} is the result of {cut.kind} on {src}: it shares the values but is "
                           "outside the graph, so no gradient flows through it and it has no .grad. Use the "
                           "original tensor in the computation (detach only what must not be differentiated).",
                           label, [_site(cut)])
    if tensor.is_inference():
        block = next((r for r in reversed(P.blocks) if r.kind == "inference_mode"), None)
        where = " (the block below)" if block else ""
        return Explanation("inference_mode", f"{label} is an inference tensor: it was made under "
                           f"torch.inference_mode(){where}, which records no graph, and an inference tensor can "
                           "never join one. Compute it outside inference_mode (or use no_grad and clone it).",
                           label, [_site(block)] if block else [])
    for block in reversed(P.blocks):
        used = _block_body(block, _recorded_name(block, tensor) or name, assigned=True)
        if used:
            return Explanation("no_grad", f"{label} does not require grad: it was computed under "
                               f"{block.kind} (the block below), which records no graph, so it is a constant for "
                               "autograd. Compute it outside the block if gradients must flow through it.",
                               label, [_site(block)] + used)
    return Explanation("not_requires_grad", f"{label} does not require grad (requires_grad=False), so it gets no "
                       f"gradient. Create it with requires_grad=True or call {name or 'x'}.requires_grad_() before "
                       "using it.", label)


def _unreachable(tensor, label, name, order) -> Explanation:
    found = _cut(tensor, label, name)
    if found is not None:
        return found
    blocks = list(P.blocks)[-2:] if name is None else []
    text = (f"the root does not depend on {label}: no path of the root's graph ({len(order)} nodes) leads to it. "
            "Either it is not used to compute the root, or its value reached the root through something autograd "
            "does not see (an integer or bool result such as argmax or a comparison, a Python number, a NumPy "
            "array).")
    if blocks:
        text += " Grad mode was also off in the blocks below; if it was used inside one, that is where the link broke."
    return Explanation("unreachable", text, label, [_site(b) for b in blocks], exact=not blocks)


def _cut(tensor, label, name) -> Explanation | None:
    """The recorded place where ``tensor``'s value left the graph, if any."""
    target = tensor._grad_fn if tensor._grad_fn is not None else _alive(tensor._acc)
    for cut in reversed(P.breaks):
        src = _alive(cut.src)
        node = _alive(cut.node)
        if src is tensor:
            hit = exact = True
        elif node is not None:  # the cut tensor's graph is still there: does it lead to ``tensor``?
            hit = exact = target is not None and target in set(_walk([node]))
        else:  # gone (a temporary): did the recorded line use the tensor (by identity, else by name)?
            hit = exact = _recorded_name(cut, tensor) is not None
            if not hit:
                hit = bool(_uses(cut.filename, cut.lineno, cut.lineno + 1, name))
        if hit:
            cause = "detached" if cut.kind in (".detach()", ".data") else "numpy"
            what = cut.kind
            how = ("a detached tensor shares the values but not the graph" if cause == "detached" else
                   "a Python number or NumPy array carries the values but not the graph")
            fix = ("use the tensor itself (detach only what must not be differentiated)" if cause == "detached"
                   else "keep the computation in tensor ops")
            return Explanation(cause, f"the root does not depend on {label} for autograd: its value left the graph "
                               f"through {what} at the line below; {how}. To get a gradient, {fix}.", label,
                               [_site(cut)], exact=exact)
    for block in reversed(P.blocks):
        used = _block_body(block, _recorded_name(block, tensor) or name)
        if used:
            cause = "inference_mode" if block.kind == "inference_mode" else "no_grad"
            return Explanation(cause, f"the root does not depend on {label} for autograd: {label} was used "
                               f"under {block.kind} (the block below), which records no graph, so what was computed "
                               "from it there is a constant. Compute it outside the block (or detach only what "
                               "must not be differentiated).", label, [_site(block)] + used)
    late = next((r for r in reversed(P.flags) if _alive(r.src) is tensor), None)
    if late is not None:
        used = _uses(late.filename, late.firstlineno, late.lineno, name or late.name)
        if used:
            return Explanation("requires_grad_late", f"requires_grad was switched on for {label} at the first line "
                               "below, after it had been used (the lines after it): operations before that recorded "
                               "no graph, so what they computed does not depend on it for autograd. Set "
                               "requires_grad before the first use (e.g. create it with requires_grad=True).",
                               label, [_site(late)] + used)
    return None


def _path_nodes(rnodes, target) -> set:
    """Nodes of the root's graph from which ``target`` can be reached (``target`` included)."""
    from .engine import _discover  # noqa: PLC0415 - engine imports the tensor module

    _, order = _discover(rnodes)  # children before parents
    path = {target}
    for fn in order:
        if any(n in path for n, _ in fn._next if n is not None):
            path.add(fn)
    return path


def _user_hooks(fn) -> bool:
    h = fn._hooks
    return h is not None and bool(h.pre or h.post or h.tensor_pre)


def _hook_sites(owners) -> list:
    ids = {id(o) for o in owners}
    out = []
    for r in P.hooks:
        owner = _alive(r.src)
        if id(owner) in ids or id(getattr(owner, "_grad_fn", None)) in ids:
            out.append(_site(r))
    return out


def _tensor_hooked(tensor) -> bool:
    if tensor._grad_fn is None:
        ext = tensor._ext
        return bool(ext is not None and ext.get("hooks"))
    h = tensor._grad_fn._hooks
    return h is not None and bool(h.tensor_pre.get(tensor._output_nr))


def _reached(tensor, label, roots, rnodes, target) -> Explanation:
    grad = tensor._grad
    if _nonzero(grad):
        return Explanation("ok", f"{label} is reached from the root and has a non-zero gradient.", label)
    path = _path_nodes(rnodes, target)
    intact = all(not _freed(fn) for fn in path)
    if not intact:
        return _structural(tensor, label, path, grad)
    probe = _probe(roots, tensor, path)
    arrived, seen, incoming, formula, final, captured = probe
    zeroing = []
    for fn in _ordered(path):
        if fn is target:
            continue
        nm = fn.name().rsplit("::", 1)[-1]
        if arrived.get(fn) and not seen.get(fn):
            return Explanation("hook", f"a hook registered with register_hook on the output of {nm} (on the way to "
                               f"{label}) replaced its non-zero gradient with zero.", label,
                               _hook_sites([fn]), [nm])
        if seen.get(fn) and not incoming.get(fn):
            return Explanation("hook", f"a prehook of {nm} (on the way to {label}) replaced its non-zero gradient "
                               "with zero.", label, _hook_sites([fn]), [nm])
        if incoming.get(fn) and formula.get(fn) is False:
            zeroing.append(fn)
        if formula.get(fn) and final.get(fn) is False:
            return Explanation("hook", f"a hook of {nm} (registered with register_hook on the node, on the way to "
                               f"{label}) replaced its non-zero gradient with zero.", label, _hook_sites([fn]), [nm])
    if zeroing and not arrived.get(target):
        return _zeroing(zeroing, label)
    if arrived.get(target) and not _nonzero(captured):
        return Explanation("hook", f"a hook on {label} itself (register_hook) replaced its non-zero gradient with "
                           "zero (or a zero tensor).", label, _hook_sites([tensor]))
    if _nonzero(captured):
        return Explanation("not_run", f"{label} is reached from the root and a backward from it gives a non-zero "
                           f"gradient, but {label}.grad is {'None' if grad is None else 'zero'}: no backward from "
                           "this root has reached it since .grad was last reset (optimizer.zero_grad() sets it to "
                           "None), or backward ran with inputs= that left it out.", label)
    return Explanation("zero_path", f"{label} is reached from the root, but the gradient arriving from the root is "
                       "already zero.", label)


def _freed(fn) -> bool:
    saved = fn._saved
    if saved == "freed":
        return True
    return bool(saved) and any(getattr(s, "_freed", False) for s in saved)


def _ordered(path) -> list:
    """Path nodes newest first (the order the engine runs them)."""
    return sorted(path, key=lambda fn: -fn._seq)


def _zeroing(fns, label) -> Explanation:
    """Every path to the tensor ends in a node whose backward turned a non-zero gradient into zero."""
    parts, sites, names = [], [], []
    for fn in fns:
        nm = fn.name().rsplit("::", 1)[-1]
        stem = nm.rstrip("0123456789").removesuffix("Backward")
        why = next((v for k, v in _ZEROING.items() if stem.startswith(k)), "its backward returned zero for {name}")
        parts.append(f"at {nm}, {why.format(name=label)}")
        names.append(nm)
        h = fn._hooks
        tb = h.traceback if h is not None else None
        m = re.findall(r'File "([^"]+)", line (\d+)', tb) if tb else []
        if m:
            sites.append((m[-1][0], int(m[-1][1]), _src(m[-1][0], int(m[-1][1]))))
    where = "" if sites else (" (run the forward under ember.autograd.detect_anomaly() to have the line where "
                              "each node was created)")
    return Explanation("zero_path", f"{label} is reached from the root, but every path multiplies its gradient by "
                       f"zero: {'; '.join(parts)}{where}.", label, sites, names)


def _structural(tensor, label, path, grad) -> Explanation:
    """The graph's saved tensors are gone: name the likely culprits from the structure alone."""
    hooked = [fn for fn in path if _user_hooks(fn)]
    if _tensor_hooked(tensor) or hooked:
        owners = [tensor] + hooked
        return Explanation("hook", f"{label} is reached from the root, and a gradient hook on the way may have "
                           "replaced its gradient (registered at the lines below). For the exact place, call "
                           "backward(retain_graph=True) before explaining.", label, _hook_sites(owners),
                           [fn.name() for fn in hooked], exact=False)
    cands = []
    for fn in _ordered(path):
        stem = fn.name().rsplit("::", 1)[-1].rstrip("0123456789").removesuffix("Backward")
        if any(stem.startswith(k) for k in _ZEROING):
            cands.append(fn.name())
    if grad is None:
        return Explanation("not_run", f"{label} is reached from the root, yet {label}.grad is None: no backward "
                           "from this root has filled it since .grad was last reset (optimizer.zero_grad() sets it "
                           "to None), or backward ran with inputs= that left it out.", label, exact=False)
    state = "zero"
    text = (f"{label} is reached from the root but its gradient is {state}. The backward freed the values that "
            "would show where it became zero; the nodes that can zero a gradient on the way are: "
            f"{', '.join(cands) or 'none'}. For the exact node, run backward(retain_graph=True) (or explain before "
            "backward).")
    return Explanation("zero_path", text, label, nodes=cands, exact=False)


def _probe(roots, tensor, path):
    """Run a backward from ``roots`` to ``tensor`` with temporary hooks on the path nodes; nothing accumulates.

    Returns per-node flags: a non-zero gradient ``arrived`` (summed from parents), was ``seen`` by the node
    (after tensor hooks), reached its formula (``incoming``), left the ``formula`` towards the tensor, left the
    node after its hooks (``final``); and the gradient captured for the tensor."""
    from .._factories import ones_like  # noqa: PLC0415 - import cycle
    from .engine import run_backward  # noqa: PLC0415

    arrived, seen, incoming, formula, final = {}, {}, {}, {}, {}
    for r in roots:
        fn = _root_nodes([r])[0]
        arrived[fn] = True
    installed = []

    def make(fn):
        def first_pre(grads):
            seen[fn] = any(_nonzero(g) for g in grads)

        def last_pre(grads):
            incoming[fn] = any(_nonzero(g) for g in grads)

        def first_post(result, grads):
            formula[fn] = any(_nonzero(g) for g, (n, _) in zip(result, fn._next) if n in path)

        def last_post(result, grads):
            final[fn] = any(_nonzero(g) for g, (n, _) in zip(result, fn._next) if n in path)
            for g, (n, _) in zip(result, fn._next):
                if n is not None and _nonzero(g):
                    arrived[n] = True
        return first_pre, last_pre, first_post, last_post

    try:
        for fn in path:
            if type(fn) is AccumulateGrad:
                continue
            created = fn._hooks is None
            h = fn._ext()
            fp, lp, fpo, lpo = make(fn)
            keys = []
            for d, f, first in ((h.pre, fp, True), (h.pre, lp, False), (h.post, fpo, True), (h.post, lpo, False)):
                key = ("explain", id(f))
                d[key] = f
                if first:
                    d.move_to_end(key, last=False)
                keys.append((d, key))
            installed.append((fn, created, keys))
        grads = [ones_like(r) for r in roots]
        captured = run_backward(roots, grads, True, False, inputs=(tensor,), accumulate=False)[0]
    finally:
        for fn, created, keys in installed:
            for d, key in keys:
                d.pop(key, None)
            if created:
                fn._hooks = None
    return arrived, seen, incoming, formula, final, captured
