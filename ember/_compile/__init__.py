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
   that had the same values in both traces are guarded by value while the program holds array constants.
5. Replay (``runtime.run``): the guard (NOTE [compile guards]) fetches the input tensors and checks them, the forward
   program runs on their arrays and the outputs are wrapped once, with one graph node (CompiledFunctionBackward)
   whose backward runs the backward program on the saved values. Inputs written in place get their version bumps.

A graph break (a value read into Python, a data-dependent shape, a custom Function, hooks, Python state changed by
the call, an unexpected in-place change, a failed check) makes that call eager with a warning naming the user's
file:line once per site, and ``compiled.explain()`` lists it; breaks that may pass (Python state changed by a first
call) are retried up to three times, the others make that guard set eager. Under ``fullgraph=True`` a break raises
``torch._dynamo.exc.Unsupported`` instead. Compiled callables run eagerly under vmap, forward AD, the profiler,
anomaly mode and ``set_stance("force_eager")``, and inside another compiled call's trace (inlined there).
"""
from __future__ import annotations

from .api import CompiledFunction, compile

__all__ = ["compile", "CompiledFunction"]
