"""Failure reasons grouped into causes: first the tests whose loss was diagnosed by hand (DIAGNOSED), then a table of
(pattern, cause, area) read top down; a reason no pattern matches is its own cause, with numbers and addresses
blanked so that repeats of one failure group together."""
from __future__ import annotations

import re

# area: who owns the fix (see ECOSYSTEM.md's legend).
CAUSES = [
    (r"No module named 'torch\.(amp|cuda\.amp|cpu\.amp)'|has no attribute '(amp|autocast|GradScaler)'",
     "torch.amp missing", "bf16"),
    (r"bfloat16", "bfloat16", "bf16"),
    (r"complex|Complex", "complex dtypes", "cplx"),
    (r"No module named 'torch\.(jit|_dynamo|compiler|_inductor)'|has no attribute '(jit|_dynamo|compile|compiler)'",
     "torch.jit / torch._dynamo / torch.compile", "surf"),
    (r"_pytree|has no attribute '(ByteTensor|FloatTensor|LongTensor|DoubleTensor)'|to_sparse|is_sparse|sparse_coo",
     "torch.utils._pytree / legacy tensor types / sparse", "surf"),
    (r"No module named 'torch\.distributions'|distributions", "torch.distributions", "dist"),
    (r"Cannot initialize CUDA without ATen_cuda",
     "Tensor.type(torch.Tensor) refused as a CUDA type (the Tensor class's is_cuda property reads as true)", "surf"),
    (r"got an unexpected keyword argument|unexpected keyword|takes \d+ positional arguments? but|"
     r"missing \d+ required positional argument|received an invalid combination of arguments",
     "keyword or positional signature differs from torch (incl. deprecated overloads, out=)", "sig"),
    (r"Timeout", "hit the per-test time limit", "eco"),
    (r"assert .* > \(.*\* nan\)",
     "a training loss turns NaN: binary_cross_entropy's gradient is 0/0 where the sigmoid saturates to 0 or 1 "
     "(torch's kernel clamps; rel's one-node BCE fixes it)", "rel"),
]
# Matched against the whole message when the first line says too little (an `assert False` and its explanation).
DETAILED = [
    (r"allclose.*tensor\(\[nan",
     "an optimizer's state never grows: torch.max(a, b, out=a) accepts out= and does not write it (SWATS)", "sig"),
]
# NOTE [diagnosed tests]: (library, test id) -> (cause, area) for a loss traced to something other than ember
# computing a wrong answer, so that ECOSYSTEM.md says why instead of repeating the assertion. Area "none": nothing
# in ember to fix. How each was established:
# - torchdiffeq test_seminorm needs seminorm to take no more function evaluations than the default norm, for the
#   weights torch draws under seed 0. Real torch given the weights ember draws under seed 0 fails the same way
#   (dopri8, float64: 67 evaluations against 54), and ember counts 67 and 54 too.
# - torch-ema's test_val_error needs the EMA weights to validate better than the trained ones on random labels drawn
#   under seed 0. Real torch given ember's seed-0 data and initial weights fails the same two cases (decay 0.995
#   without num_updates: 0.7253 against 0.7175, ember's numbers to four places) and passes the other six, as ember.
# - nflows' forward/inverse checks of the piecewise CDFs draw unseeded random inputs and parameters and compare to
#   1e-4: over seeds 0..99 they fail 17 and 6 times on torch, 19 and 5 times on ember (bounded, unconstrained).
_FLAKY_NFLOWS = "flaky on torch too: unseeded random inputs checked to 1e-4 (over 100 seeds: 17/6 failures on torch, 19/5 on ember)"
_SEEDED = "random draws (ember's generator is not torch's): real torch given ember's seed-0 draws fails the same way"
DIAGNOSED = {
    ("torch-ema", "tests.test_ema::test_val_error[True-False-0.995]"): (_SEEDED, "none"),
    ("torch-ema", "tests.test_ema::test_val_error[False-False-0.995]"): (_SEEDED, "none"),
    ("torchdiffeq", "tests.norm_tests.TestNorms::test_seminorm"): (_SEEDED, "none"),
    ("nflows", "tests.transforms.nonlinearities_test.TestPiecewiseCDF::test_forward_inverse_are_consistent"):
        (_FLAKY_NFLOWS, "none"),
    ("nflows", "tests.transforms.nonlinearities_test.TestUnconstrainedPiecewiseCDF::test_forward_inverse_are_consistent"):
        (_FLAKY_NFLOWS, "none"),
}
_COMPILED = [(re.compile(p), c, a) for p, c, a in CAUSES]
_DETAILED = [(re.compile(p, re.S), c, a) for p, c, a in DETAILED]
_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_NUM = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e[-+]?\d+)?(?!\w)")


def classify(reason, test=None):
    """(cause, area) for one failure reason; ``test`` is (library, test id), looked up in DIAGNOSED first."""
    if test in DIAGNOSED:
        return DIAGNOSED[test]
    first = reason.strip().splitlines()[0] if reason.strip() else "no message"
    for pattern, cause, area in _COMPILED:
        if pattern.search(first):
            return cause, area
    for pattern, cause, area in _DETAILED:
        if pattern.search(reason):
            return cause, area
    return _NUM.sub("#", _ADDR.sub("0x…", first))[:200], "eco"
