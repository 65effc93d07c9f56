"""The backward graph: Node (a grad_fn), AccumulateGrad, saved tensors and their hooks."""
from __future__ import annotations

import itertools
import threading
from sys import getrefcount
import weakref
from collections import OrderedDict
from typing import Any, Callable, NamedTuple

import numpy as _np

from .. import _backend as _B
from .._layout import contiguous_format as _contiguous_format
from .grad_mode import _mode
from . import _provenance

_nd = _np.ndarray

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "RemovableHandle", "get_gradient_edge", "GradientEdge", "summary",
           "GraphSummary"]

# Later nodes run first among the ready ones (torch's sequence_nr); a global counter is
# monotonic per thread too, which is all the ordering needs.
_next_seq = itertools.count().__next__
_provenance._next_seq = _next_seq

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class RemovableHandle:
    """Handle returned by ``register_*hook``; ``remove()`` unregisters the hook."""

    _ids = itertools.count()
    __slots__ = ("_dict_ref", "id", "_extra_refs")

    def __init__(self, hooks_dict: dict, *, extra_dict=None) -> None:
        """``extra_dict``: a dict, or a list of them, whose entry of this id ``remove()`` deletes too."""
        self._dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        extra = [extra_dict] if isinstance(extra_dict, dict) else extra_dict if isinstance(extra_dict, list) else []
        self._extra_refs = tuple(weakref.ref(d) for d in extra)

    def remove(self) -> None:
        for ref in (self._dict_ref, *self._extra_refs):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _add_hook(d: dict, fn: Callable) -> RemovableHandle:
    h = RemovableHandle(d)
    d[h.id] = fn
    return h


class _NodeHooks:
    """Hook tables of one node, allocated only when a hook is registered."""

    __slots__ = ("tensor_pre", "retain", "pre", "post", "metadata", "traceback", "name_override")

    def __init__(self) -> None:
        self.tensor_pre: dict[int, OrderedDict] = {}  # output_nr -> hooks of that output's tensor
        self.retain: dict[int, Callable] = {}  # output_nr -> retain_grad hook (runs last)
        self.pre: OrderedDict = OrderedDict()
        self.post: OrderedDict = OrderedDict()
        self.metadata: dict | None = None
        self.traceback: str | None = None
        self.name_override: str | None = None


class Node:
    """A function of the backward graph (what ``tensor.grad_fn`` holds)."""

    __slots__ = ("_next", "_seq", "_meta_out", "_saved", "_hooks", "__weakref__")
    _name = "Node"
    _save_idx: tuple = ()  # per saved value: the input slot it comes from (Op: NOTE [declaring an op])

    def name(self) -> str:
        """The node's name as torch prints it (``MulBackward0``)."""
        h = self._hooks
        if h is not None and h.name_override:
            return h.name_override
        return self._name

    @property
    def next_functions(self) -> tuple:
        """``((node, input_nr), ...)``: where the gradient of each input goes."""
        return self._next

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations of this node."""
        h = self._ext()
        if h.metadata is None:
            h.metadata = {}
        return h.metadata

    def _ext(self) -> _NodeHooks:
        h = self._hooks
        if h is None:
            h = self._hooks = _NodeHooks()
        return h

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; may return new grad_inputs."""
        _provenance.note_hook(self, fn, "node hook")
        return _add_hook(self._ext().post, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; may return new grad_outputs."""
        _provenance.note_hook(self, fn, "node prehook")
        return _add_hook(self._ext().pre, fn)

    def _register_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        d = self._ext().tensor_pre.setdefault(output_nr, OrderedDict())
        return _add_hook(d, fn)

    def _tensor_pre_hooks(self):
        """(output_nr, hook tables) pairs the engine runs before the node; None if none."""
        h = self._hooks
        if h is None or not (h.tensor_pre or h.retain):
            return None
        return h

    # Backward itself: subclasses implement _apply(grads: list) -> tuple of input grads.
    def _apply(self, grads):  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, *grads):
        """Run this node's backward formula on the given output gradients."""
        return self._apply(list(grads))

    def _release(self) -> None:
        saved = self._saved
        if saved:
            numbers = False
            for s in saved:
                if type(s) is SavedTensor:  # SavedTensor._free, inlined (once per saved value per backward)
                    s._freed = True
                    s._tensor = None
                    s._data = None
                    s._packed = None
                    s._unpack_hook = None  # it may own recomputed tensors (checkpoint)
                elif s is not None:
                    numbers = True
            if numbers:
                _free_numbers(self, saved)

    def __getattr__(self, name: str) -> Any:
        # torch exposes saved values as grad_fn._saved_<name> and grad_fn._raw_saved_<name>.
        if name.startswith("_saved_"):
            return self._get_saved(name[7:], raw=False)
        if name.startswith("_raw_saved_"):
            return self._get_saved(name[11:], raw=True)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _get_saved(self, key: str, raw: bool):
        names = getattr(type(self), "save", ())
        saved = self._saved
        if saved is not None and key in names:
            k = names.index(key)
            s = saved[k]
            if type(s) is SavedTensor:
                return s if raw else s.unpack(self)
            if s is not None and 0 <= type(self)._save_idx[k] < len(self._next) and _wrap_number is not None:
                return _wrap_number(s)  # a number in a tensor slot: torch's wrapped-number tensor
            return s
        if key in getattr(type(self), "_attr_names", ()):
            return object.__getattribute__(self, key)
        raise AttributeError(f"'{self.name()}' object has no attribute '_saved_{key}'")

    def __repr__(self) -> str:
        return f"<{self.name().rsplit('::', 1)[-1]} object at {hex(id(self))}>"


def _free_numbers(node: Node, saved) -> None:
    """Free the Python numbers ``node`` saved for tensor slots (``x * 2``'s 2): torch saves them as wrapped tensors,
    freed by backward like any saved tensor, so a second backward fails exactly when torch's does."""
    idx, nin = type(node)._save_idx, len(node._next)
    if type(saved) is not list:  # (an op's saved values are a list; other nodes' a tuple)
        saved = list(saved)
        node._saved = saved
    for k in range(len(saved)):
        s = saved[k]
        if s is not None and type(s) is not SavedTensor and 0 <= idx[k] < nin:
            saved[k] = _FREED


class AccumulateGrad(Node):
    """Sink node of a leaf: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)
    _name = "torch::autograd::AccumulateGrad"
    # One lock for every leaf: accumulation is short, and a lock per node (a node per leaf per
    # backward) cost more than contention between threads ever does. Reentrant: one backward may run
    # inside another (a hook or custom Function) and reach another leaf.
    _lock = threading.RLock()

    def __init__(self, variable) -> None:
        self.variable = variable
        self._next = ()
        self._seq = 2**62  # torch: UINT64_MAX, leaves run as soon as they are ready
        self._meta_out = ((variable._data.shape, variable._dtype),)
        self._saved = None
        self._hooks = None

    def name(self) -> str:
        return self._name

    def _tensor_pre_hooks(self):
        ext = self.variable._ext
        if ext is None or not ext.get("hooks"):
            return None
        return ext

    def _apply(self, grads):
        var = self.variable
        new = grads[0]
        if new is None:
            return ()
        with self._lock:
            old = var._grad
            if old is None:
                # Under create_graph a clone keeps the gradient's graph. Without it, the incoming array
                # becomes .grad when nothing else can see it (see _sole_owner); otherwise a copy: one
                # gradient may reach several leaves (x1 + x2) or be held by a hook or the caller.
                if _mode.grad_enabled:
                    var._grad = _clone_in_layout(new, var._data)
                elif not var._data.flags.c_contiguous:  # NOTE [gradient layout]
                    var._grad = _grad_in_layout(new, var._data)
                elif _sole_owner(grads):
                    var._grad = _wrap(new._data, new._dtype)
                else:
                    var._grad = _fresh_grad(new)
            elif _mode.grad_enabled:
                var._grad = old + new
            else:
                arr = old._data
                if _B.writeable(arr) and (arr.base is None or _B.whole_stand_in(arr)):
                    arr += new._data  # in place, as torch (a graph saving it sees the version bump)
                    old._bump()
                else:
                    old._data = _B.asarray(arr + new._data)  # NOTE [0-d results are arrays], on its device
        ext = var._ext
        if ext is not None and ext.get("post_acc_hooks"):
            for fn in list(ext["post_acc_hooks"].values()):
                fn(var)
        return ()


# NOTE [gradient layout]: a leaf's first gradient is laid out as the leaf is (torch's gradient layout
# contract: a dense leaf's .grad has the leaf's strides, anything else a contiguous one), not as the incoming
# gradient happens to be. Linear's weight gradient, for one, arrives as a transposed view; optimizers that
# flatten .grad with .view (AdamP, SGDP) need the parameter's layout, as they get on torch. Under create_graph
# the copy is differentiable; without it a C-contiguous leaf (nearly every parameter) keeps the stolen or
# copied C-contiguous array, and only other leaves pay for the layout check's copy.
def _grad_in_layout(new, like):
    """A detached gradient owning its memory, laid out as the array ``like`` (np.empty_like keeps a dense
    array's dimension order and lays anything else out C-contiguously)."""
    arr = _np.empty_like(like, dtype=new._data.dtype)
    arr[...] = new._data
    return _wrap(arr, new._dtype)


def _clone_in_layout(new, like):
    """A differentiable copy of ``new`` with the memory layout of the array ``like``."""
    order = None if like.flags.c_contiguous else _dense_order(like)
    if order is None:
        return new.clone(memory_format=_contiguous_format)
    inverse = tuple(_np.argsort(order).tolist())
    return new.permute(order).clone(memory_format=_contiguous_format).permute(inverse)


def _dense_order(arr):
    """The dimensions of ``arr`` from outermost to innermost in memory when it is dense and non-overlapping
    (its elements fill one block with no gaps), else None."""
    dims = sorted(range(arr.ndim), key=lambda d: (arr.strides[d], d), reverse=True)
    step = arr.itemsize
    for d in reversed(dims):
        if arr.shape[d] != 1:
            if arr.strides[d] != step:
                return None
            step *= arr.shape[d]
    return tuple(dims)


def _fresh_grad(new):
    """A detached gradient that owns its memory (its array may be shared with other grads)."""
    return _wrap(new._data.copy(), new._dtype)


# NOTE [stolen gradients]: copying each leaf's first gradient costs a full pass over every parameter
# per step, and for large parameters the allocation churn of the copy makes glibc return memory to the
# OS and fault it back in (W2: 1,600 page faults and ~40% of a step). As torch (whose AccumulateGrad
# steals a gradient whose use_count is 1), the incoming array becomes ``.grad`` when nothing outside
# this call can see it: the engine's buffer list holds the only reference to the gradient tensor (the
# engine drops its own stale references before running the next node), that tensor holds the only
# reference to its array, and the array owns its memory, is writable and C-contiguous (as a copy would
# be). Any other holder (the caller of backward(gradient=...), a hook that kept the gradient, a second
# leaf receiving the same tensor, a view of the array) raises a count, and the gradient is copied.
# The counts are calibrated once on this interpreter by the same function, so they do not depend on
# how a Python version counts references on its evaluation stack.
def _ref_counts(grads) -> tuple:
    t = grads[0]
    return getrefcount(t), getrefcount(t._data)


def _calibrate() -> tuple:
    class Probe:
        __slots__ = ("_data",)

    new = Probe()  # as in AccumulateGrad._apply: the list and one local name hold the gradient
    new._data = _np.empty(1, _np.float32)
    grads = [new]
    return _ref_counts(grads)


_OWNED_COUNTS = _calibrate()


def _sole_owner(grads) -> bool:
    """Whether ``grads[0]`` (also bound to one local name of the caller) and its array are seen by nobody
    else, so that its array may become a leaf's ``.grad`` without a copy (NOTE [stolen gradients])."""
    t = grads[0]
    arr = t._data
    if type(arr) is _nd:
        if arr.base is not None:
            return False
        flags = arr.flags
        if not (flags.c_contiguous and flags.writeable):
            return False
        del flags  # the flags object refers to the array too
    elif not _B.sole_array(arr):  # a device array
        return False
    del t, arr
    return _ref_counts(grads) == _OWNED_COUNTS


class SavedTensor:
    """A tensor saved for backward: checks its version on unpack and runs pack/unpack hooks."""

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_is_output", "_output_nr", "_packed",
                 "_unpack_hook", "_freed", "_requires_grad")

    def unpack(self, owner: Node | None = None):
        """The saved tensor (outputs are re-wrapped with their grad_fn; nothing cycles)."""
        if self._freed:
            raise RuntimeError(_FREED_MSG)
        if self._unpack_hook is not None:
            t = self._unpack_hook(self._packed)
            from .._tensor import Tensor  # noqa: PLC0415 - only with user hooks

            if not isinstance(t, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                                f"result of type {type(t).__name__}")
            if self._is_output and owner is not None and self._requires_grad:
                return _rewrap(t._data, t._dtype, owner, self._output_nr)
            return t
        vc = self._vc
        if vc is None and self._tensor is not None:  # NOTE [lazy version counters]
            vc = self._tensor._vc
        if vc is not None and vc.value != self._version:
            self._vc = vc
            _raise_modified(self, owner)
        if self._is_output:
            if owner is None or not self._requires_grad:
                return _wrap_plain(self._data)
            return _rewrap(self._data, None, owner, self._output_nr)
        return self._tensor

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack the saved tensor now with ``pack_hook``; ``unpack_hook`` restores it in backward."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("Expected pack_hook and unpack_hook to be callables")
        if self._freed:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been freed. Saved "
                               "intermediate values of the graph are freed when you call .backward() or "
                               "autograd.grad(). Specify retain_graph=True if you need to backward through "
                               "the graph a second time or if you need to access saved variables after "
                               "calling backward.")
        if self._unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        self._packed = _pack(pack_hook, _wrap_plain(self._tensor._data if not self._is_output else self._data))
        self._unpack_hook = unpack_hook
        self._tensor = None
        self._data = None

    def _free(self) -> None:
        self._freed = True
        self._tensor = None
        self._data = None
        self._packed = None
        self._unpack_hook = None  # the hook may own recomputed tensors (checkpoint): let them go

    def __repr__(self) -> str:
        return f"<ember.autograd.graph.SavedTensor object at {hex(id(self))}>"


def _raise_modified(s: SavedTensor, owner: Node | None) -> None:
    from .._tensor import _inplace_site  # noqa: PLC0415 - error path only

    if s._is_output:
        shape, dt, fn, nr = s._data.shape, None, owner, s._output_nr
        from .._dtype import from_numpy_dtype  # noqa: PLC0415

        dt = from_numpy_dtype(s._data.dtype)
    else:
        t = s._tensor
        shape, dt, fn, nr = t._data.shape, t._dtype, t._grad_fn, t._output_nr
    which = f", which is output {nr} of {_short_name(fn)}," if fn is not None else ""
    msg = ("one of the variables needed for gradient computation has been modified by an inplace "
           f"operation: [torch.{_type_name(dt)} [{', '.join(map(str, shape))}]]{which} is at version "
           f"{s._vc.value}; expected version {s._version} instead. Hint: enable anomaly detection to "
           "find the operation that failed to compute its gradient, with "
           "torch.autograd.set_detect_anomaly(True, check_nan=False).")
    site = _inplace_site(s._vc, s._version)
    if site:
        msg += f" (ember: the in-place operation that modified it ran at {site}.)"
    raise RuntimeError(msg)


def _short_name(fn: Node) -> str:
    """A node's name as torch's in-place error prints it: no namespace, no ``Backward<N>``."""
    name = fn.name().rsplit("::", 1)[-1]
    stem = name.rstrip("0123456789")
    return stem[:-8] if stem.endswith("Backward") else name


def _type_name(dt) -> str:
    return dt._scalar_name + "Tensor"


_FREED = object.__new__(SavedTensor)  # a saved value after backward freed it (unpack raises torch's error)
_FREED._freed = True
_FREED._tensor = _FREED._data = _FREED._packed = _FREED._unpack_hook = _FREED._vc = None


class _HookState(threading.local):
    stack: tuple = ()
    disabled: str | None = None


_hook_state = _HookState()
# How many saved_tensors_hooks blocks are open, over all threads: while none is, saving skips the thread-local
# hook stack.
_hook_blocks = [0]
_blocks_lock = threading.Lock()
_new = object.__new__


# NOTE [lazy version counters]: a tensor gets its version counter when it is first changed in place, viewed,
# detached or saved as an op's output. Saving an input that has none yet records version 0 and no counter:
# the SavedTensor keeps the tensor, so unpack reads the tensor's counter then (any in-place change since
# has created it, at a version above 0). An output is saved as its array alone (no cycle), so it needs its
# counter now.
def _make_saved(t, is_output: bool, output_nr: int = 0) -> SavedTensor:
    """Save ``t`` (a Tensor) for backward; outputs keep only their array (no cycle)."""
    s = _new(SavedTensor)
    vc = t._vc
    if vc is not None:
        s._vc = vc
        s._version = vc.value
    elif is_output:
        s._vc = t._vc = _VersionCounter()
        s._version = 0
    else:
        s._vc = None
        s._version = 0
    s._is_output = is_output
    s._output_nr = output_nr
    s._freed = False
    s._requires_grad = t._requires_grad
    s._unpack_hook = None
    s._packed = None
    if is_output:
        s._tensor = None
        s._data = t._data
    else:
        s._tensor = t
        s._data = None
    ext = t._ext
    if ext is not None and ext.get("inference"):
        raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                           "inference mode in computation tracked by autograd. To work around this, you can make a "
                           "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                           "`torch.inference_mode()`.")
    stack = _hook_state.stack if _hook_blocks[0] else None
    if stack:
        if _hook_state.disabled:
            raise RuntimeError(_hook_state.disabled)
        pack, unpack = stack[-1]
        s._packed = _pack(pack, t)  # the tensor itself, outputs included (a hook keeping it makes a cycle, as torch)
        s._unpack_hook = unpack
        s._tensor = None
        s._data = None
    return s


def _pack(hook: Callable, t) -> Any:
    """``hook(t)`` with grad mode off, as torch packs: a hook computing on the tensor (``t * 4``) records no graph,
    so its own ops save nothing and never call the hook again."""
    prev = _mode.grad_enabled
    _mode.grad_enabled = False
    try:
        return hook(t)
    finally:
        _mode.grad_enabled = prev


class saved_tensors_hooks:
    """Within this context, tensors saved for backward go through ``pack_hook``/``unpack_hook``."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hook_state.disabled:
            raise RuntimeError(_hook_state.disabled)
        _hook_state.stack = _hook_state.stack + ((self.pack_hook, self.unpack_hook),)
        with _blocks_lock:
            _hook_blocks[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        _hook_state.stack = _hook_state.stack[:-1]
        with _blocks_lock:
            _hook_blocks[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (all ember tensors already are): a copy is stored."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t.detach().clone(), lambda t: t)


class disable_saved_tensors_hooks:
    """Raise ``error_message`` if saved-tensor hooks are used within this context."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self.prev = _hook_state.disabled
        _hook_state.disabled = self.error_message

    def __exit__(self, *exc) -> None:
        _hook_state.disabled = self.prev


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: its node and which of the node's inputs
    (``ownership_token``: what keeps the node alive, when the edge does not own it)."""

    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The gradient edge of ``tensor`` (its grad_fn or its AccumulateGrad node)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not "
                           "require gradients")
    if tensor._grad_fn is not None:
        return GradientEdge(tensor._grad_fn, tensor._output_nr)
    return GradientEdge(tensor._grad_accumulator(), 0)


# Bound at the end of ember._tensor (import cycle).
_VersionCounter = None
_wrap = None
_wrap_plain = None
_rewrap = None
_wrap_number = None  # ember.tensor


# ----------------------------------------------------------------------------- inspection
def _saved_arrays(node: Node) -> list:
    """``(index, ndarray)`` for each saved tensor ``node`` still holds (freed ones are left out)."""
    saved = node._saved
    if not saved or isinstance(saved, str):  # None, () or a custom Function's "freed"
        return []
    out = []
    for i, s in enumerate(saved):
        if type(s) is not SavedTensor or s._freed:
            continue
        if s._data is not None:
            arr = s._data
        elif s._tensor is not None:
            arr = s._tensor._data
        else:  # packed by a saved_tensors_hooks pack hook: count it when the hook kept a tensor
            arr = getattr(s._packed, "_data", None)
        if arr is not None:
            out.append((i, arr))
    return out


def _walk(roots) -> list:
    """Every node reachable from ``roots`` (nodes), each once, roots first (iterative)."""
    seen = set()
    order = []
    stack = [r for r in roots if r is not None]
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        order.append(fn)
        for nxt, _ in fn._next:
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    return order


def _reachable_leaves(outputs) -> set:
    """ids of the leaf tensors the graphs of the tensors ``outputs`` reach (a grad-requiring leaf output counts)."""
    found = {id(t) for t in outputs if t._grad_fn is None and t._requires_grad}
    found.update(id(fn.variable) for fn in _walk([t._grad_fn for t in outputs]) if type(fn) is AccumulateGrad)
    return found


def _root_nodes(root) -> list:
    """The graph nodes a tensor (or a sequence of tensors, or a node) hands its gradient to."""
    if isinstance(root, Node):
        return [root]
    items = [root] if hasattr(root, "_grad_fn") else list(root)
    nodes = []
    for t in items:
        if isinstance(t, Node):
            nodes.append(t)
        elif t._grad_fn is not None:
            nodes.append(t._grad_fn)
        elif t._requires_grad:
            nodes.append(t._grad_accumulator())
    return nodes


def _param_names(params) -> dict:
    """``{id(tensor): name}`` from a mapping, ``named_parameters()`` pairs, or None."""
    if params is None:
        return {}
    items = params.items() if hasattr(params, "items") else params
    return {id(v): k for k, v in items}


class GraphSummary:
    """What a backward graph holds: nodes by type, depth, saved tensors and their bytes, leaves.

    ``str()`` is a short text table; ``to_dict()`` the same facts as plain data."""

    def __init__(self, data: dict) -> None:
        self._data = data

    def __getitem__(self, key: str):
        return self._data[key]

    def to_dict(self) -> dict:
        return dict(self._data)

    def __repr__(self) -> str:
        return self.__str__()

    def __str__(self) -> str:
        d = self._data
        lines = [f"graph: {d['nodes']} nodes, depth {d['depth']}, {d['saved_tensors']} saved tensors holding "
                 f"{_fmt_bytes(d['saved_bytes'])}" + (f" ({d['freed_nodes']} nodes already freed)"
                                                     if d["freed_nodes"] else "")]
        width = max((len(k) for k in d["by_type"]), default=0)
        for name, n in d["by_type"].items():
            b = d["saved_bytes_by_type"].get(name, 0)
            lines.append(f"  {name:<{width}}  x{n:<5d} saved {_fmt_bytes(b)}" if b else f"  {name:<{width}}  x{n}")
        lines.append(f"leaves requiring grad: {len(d['leaves'])} ({_fmt_bytes(d['leaf_bytes'])})")
        for leaf in d["leaves"]:
            lines.append(f"  {leaf['name'] or '<unnamed>'}  {list(leaf['shape'])} {leaf['dtype']}")
        return "\n".join(lines)


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def summary(root, params=None) -> GraphSummary:
    """Summarize the graph behind ``root`` (a tensor, tensors, or a node).

    Counts nodes by type, the depth (longest chain of nodes from the root), the saved tensors still held and
    their total bytes (each distinct array once: the memory the graph keeps alive) and the leaves that require
    grad, named from ``params`` (a mapping or ``named_parameters()``)."""
    roots = _root_nodes(root)
    nodes = _walk(roots)
    names = _param_names(params)
    by_type: dict[str, int] = {}
    bytes_by_type: dict[str, int] = {}
    seen_arrays: dict[int, int] = {}
    n_saved = freed = 0
    leaves = []
    for fn in nodes:
        name = fn.name().rsplit("::", 1)[-1]
        by_type[name] = by_type.get(name, 0) + 1
        if type(fn) is AccumulateGrad:
            v = fn.variable
            leaves.append({"name": names.get(id(v)), "shape": tuple(v._data.shape), "dtype": v._dtype.name,
                           "bytes": v._data.nbytes})
            continue
        saved = fn._saved
        if saved == "freed" or (saved and any(type(s) is SavedTensor and s._freed for s in saved)):
            freed += 1
        for _, arr in _saved_arrays(fn):
            n_saved += 1
            if id(arr) not in seen_arrays:
                seen_arrays[id(arr)] = arr.nbytes
                bytes_by_type[name] = bytes_by_type.get(name, 0) + arr.nbytes
    depth = _depth(roots)
    return GraphSummary({
        "nodes": len(nodes), "by_type": dict(sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0]))),
        "depth": depth, "saved_tensors": n_saved, "saved_bytes": sum(seen_arrays.values()),
        "saved_bytes_by_type": bytes_by_type, "freed_nodes": freed,
        "leaves": sorted(leaves, key=lambda leaf: (leaf["name"] is None, leaf["name"] or "")),
        "leaf_bytes": sum(leaf["bytes"] for leaf in leaves)})


def _depth(roots) -> int:
    """The number of nodes on the longest chain from a root (iterative post-order)."""
    depth: dict = {}
    for root in roots:
        if root in depth:
            continue
        stack = [(root, iter(root._next))]
        on_stack = {root}
        while stack:
            fn, it = stack[-1]
            for nxt, _ in it:
                if nxt is not None and nxt not in depth and nxt not in on_stack:
                    on_stack.add(nxt)
                    stack.append((nxt, iter(nxt._next)))
                    break
            else:
                stack.pop()
                on_stack.discard(fn)
                depth[fn] = 1 + max((depth[n] for n, _ in fn._next if n is not None), default=0)
    return max((depth[r] for r in roots), default=0)
