"""The third-party libraries `make ecosystem` runs, pinned: where each one's tests come from and how to run them."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Library:
    """One library: its PyPI release, the source of its own test suite, and how pytest runs it.

    ``tests_from`` is ``"sdist"`` when the release's source archive carries the tests, or
    ``"owner/name@commit"`` for a repository snapshot (NOTE [tests from repositories] in run.py).
    """

    name: str                      # distribution name on PyPI
    version: str
    tests: tuple[str, ...]         # paths given to pytest, relative to the source tree
    tests_from: str = "sdist"
    test_deps: tuple[str, ...] = ()  # what the tests import beyond the library's own requirements
    env: dict = field(default_factory=dict)
    pytest_args: tuple[str, ...] = ()
    timeout: int = 300             # seconds per test (pytest-timeout): a hang becomes one failure
    note: str = ""


LIBRARIES = (
    Library("torchdiffeq", "0.2.5", ("tests/api_tests.py", "tests/event_tests.py", "tests/gradient_tests.py",
                                     "tests/norm_tests.py", "tests/odeint_tests.py"),
            tests_from="rtqichen/torchdiffeq@a88aac53cae738addee44251288ce5be9a018af3",
            test_deps=("scipy",), pytest_args=("--deselect", "tests/odeint_tests.py::TestSolverError::test_odeint"),
            timeout=1800,  # one unittest method runs dozens of solver subtests (5 minutes on torch)
            note="ODE solvers with adjoint gradients. Left out: TestSolverError.test_odeint, which fails on torch "
                 "2.13 too (a float32 adaptive_heun tolerance) after 8 minutes"),
    Library("torch-optimizer", "0.3.0", ("tests",), note="a collection of optimizers (pulls in pytorch_ranger)"),
    Library("einops", "0.8.2", ("einops/tests",), env={"EINOPS_TEST_BACKENDS": "torch"},
            note="tensor rearrangement; only its torch backend is tested"),
    Library("torchsde", "0.2.6", ("tests/test_brownian_path.py", "tests/test_brownian_tree.py", "tests/test_sdeint.py"),
            tests_from="google-research/torchsde@eb3a00e31cbd56176270066ed2f62c394cf6acb7",
            pytest_args=("-k", "not test_sdeint_run_shape_method"),
            note="SDE solvers and Brownian motion; the snapshot is 0.2.6 plus its pytest-8 test fix. Left out for "
                 "time (over an hour on this machine): tests/test_adjoint.py (72 adjoint gradient checks), "
                 "tests/test_brownian_interval.py (134 statistical tests on large batches) and the 1,440 cases of "
                 "test_sdeint_run_shape_method"),
    Library("ema-pytorch", "0.8.3", ("tests",), note="exponential moving averages of model weights"),
    Library("nflows", "0.14", ("tests",), test_deps=("torchtestcase",), note="normalizing flows"),
    Library("pytorch_warmup", "0.2.0", ("test",), note="learning-rate warmup schedules"),
    Library("torch-ema", "0.3", ("tests",), tests_from="fadel/pytorch_ema@a3edfae103d79d49ad51aea2cdd0a3dba37d6403",
            note="exponential moving averages of parameters (the repository's v0.3.0 tag)"),
    Library("vector-quantize-pytorch", "1.31.0", ("tests",),
            tests_from="lucidrains/vector-quantize-pytorch@0d7d1aa83334b6f2f8a40306bece75cdaa13d065",
            note="vector quantization (VQ, residual, finite scalar, lookup-free); the snapshot is the 1.31.0 "
                 "release commit"),
)

# Tried and left out for time: x-transformers 2.26.4 (lucidrains/x-transformers@9252ed7, tests/): 201 tests, most
# of them whole 1024-token models with a 20,000-word vocabulary; on this shared 2-core machine torch ran about 90 of them
# in 20 minutes and ember 36 (all 36 passing) before they were stopped.

BY_NAME = {lib.name: lib for lib in LIBRARIES}

# Distributions that are torch itself: never installed on ember's side (their requirements are left out there).
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "triton"})
