"""Ops of op_db.py (by OpInfo name) that do not yet run on the strict cuda stand-in as on the CPU.

Their kernels or backward formulas make host (NumPy) arrays from device inputs where neither the host fallback
nor the backward's device rule catches it (NOTE [cuda stand-in] in ember/_backend.py, NOTE [host fallback] in
ember/ops/_op.py): a result that leaves ``Op.apply`` on the CPU, an array attribute that never passes through an
op, a gradient summed by the engine from a host array. Each such site becomes ``_backend.like(ref, values)`` or
``_backend.asarray``; tests/cuda/test_stand_in_ops.py marks these strict xfail, so an op that starts working must
leave this list.
"""

KNOWN: frozenset = frozenset()

# Ops (by node name) that may take the host fallback on the strict stand-in (NOTE [host fallback] in
# ember/ops/_op.py), each with its reason; tests/cuda/test_stand_in_ops.py fails on any other.
HOST_FALLBACKS: dict = {}
