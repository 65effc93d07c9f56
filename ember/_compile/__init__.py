"""ember.compile: trace one eager run through the interposition level, replay it as a flat NumPy program.

# NOTE [compile]
``ember.compile(fn)`` (or a module, or the decorator form) returns a callable that, per set of guards, traces a call
and then replays it without the framework in the loop:

1. Trace (``trace.Tracer``, an interposition level, NOTE [interposition]): the call runs eagerly (its results and
   graph are the uncompiled ones) while every op application is recorded as a step of a program over arrays;
   in-place writes, random generators, replayable helpers (NOTE [replayable steps]) and values read into Python
   are reported to the tracer by the library. After the forward run the backward formulas of the nodes the call
   created are run on placeholder gradients, in the engine's order, and recorded as backward programs (one for
   all outputs, one per output alone when there are up to four).
2. Build (``build``): dead steps are removed, elementwise ops whose kernel is one ufunc call it directly (checked bit
   for bit on the traced arrays) and may write into dead buffers, and the program becomes Python source
   (``forward``, ``backward<k>``) compiled with ``exec``; ``compiled.code`` shows it.
3. Check (``api._verify``): the program is replayed on the values the call started from and must reproduce the
   eager outputs, final input values, random generator states and gradients bit for bit; otherwise the call is a
   graph break.
4. Confirm: a program is replayed only after the next call with the same guards traced the same program (the same
   source, the same constants). A difference means an op argument was computed outside the ops from the data (or
   Python state changes between calls): after three tries that guard set runs eagerly. Integer and bool inputs
   that had the same values in both traces are guarded by value while the program holds array constants that no
   factory made (``made``: from shapes and Python values, so independent of the data).
5. Replay (``runtime.run``): the guard (NOTE [compile guards]) fetches the input tensors and checks them, the forward
   program runs on their arrays and the outputs are wrapped once, with one graph node (CompiledFunctionBackward)
   whose backward runs the backward program on the saved values. Inputs written in place get their version bumps.

A graph break (a value read into Python, a data-dependent shape, a custom Function, hooks, Python state changed by
the call, an unexpected in-place change, a failed check) makes that call eager with a warning naming the user's
file:line once per site, and ``compiled.explain()`` lists it; breaks that may pass (Python state changed by a first
call) are retried up to three times, the others make that guard set eager. Under ``fullgraph=True`` a break raises
``torch._dynamo.exc.Unsupported`` instead. Compiled callables run eagerly under vmap, forward AD, the profiler,
anomaly mode and ``set_stance("force_eager")``, and inside another compiled call's trace (inlined there).

# NOTE [compiled on devices]
A program runs on the arrays of the device its inputs were on when it was traced (NOTE [device seam] in
ember/_backend.py): CuPy arrays for ``cuda`` (the stand-in's ``StandInArray`` in tests), NumPy's for ``cpu``.
- Its lines are the ops' kernels and NumPy calls, which dispatch to CuPy as in eager code; what it makes itself is
  made on the device of an array it has (placeholder gradients and missing-gradient zeros with ``like``); what it
  holds (constants the call made, ``made`` by the factories) is the device array the eager run made.
- Arrays are told apart by ``_backend``: ``type(x) in ARRAYS`` / ``is_array`` (every device's), not
  ``np.ndarray`` (a CuPy array is none). vmap's batched tensors, whose arrays are an ndarray subclass no device
  owns, are still refused by the tracer; comparisons (the check, the confirming trace) need the same array type
  and device, then equal bytes (copied to the host).
- What ``Op.apply`` does around a kernel on a device is recorded or repeated: a 0-d CPU tensor or a backward
  formula's host constant entering a cuda op is moved by a recorded ``to_device`` op (the tracer moves it before
  the op, as ``_on_device`` would, NOTE [device check]); a kernel that returned host arrays for device inputs in
  the traced run (``_backend.host_results``) has its result moved in the program too (NOTE [host results]). The
  backward walk runs with ``in_backward`` set, as the engine's. An op that takes the host fallback (NOTE [host fallback])
  runs its kernel on the host only in eager code, so a call where one did is a graph break (eager), named.
- Fast forms and ufunc bindings are checked on the traced arrays, on their device: a form the device's array
  module lacks, or computes with other bits, keeps the op's kernel.
- The guard checks each input's array type (and its GPU when CuPy sees several): the same function called with
  cpu tensors after cuda ones traces another program (the cache holds one per device).
- Views taken outside ops are found by their base. A stand-in array is a view of a hidden host array, and NumPy
  functions' views of it have that host array as base (CuPy's views have the CuPy array), so the tracer maps each
  hidden host array to the stand-in array over it (``Tracer._own``).
"""
from __future__ import annotations

from .api import CompiledFunction, compile

__all__ = ["compile", "CompiledFunction"]
