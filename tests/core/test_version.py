"""The version ``import ember as torch`` reports: torch's API version with ember's release as a PEP 440 local
label, torch.version's fields, and TorchVersion's comparisons (strings, tuples, Version objects) as torch's."""
from __future__ import annotations

import itertools
import os
import re

import pytest
from packaging.version import Version, parse
from torch.torch_version import TorchVersion as TorchTorchVersion

import ember
from ember.torch_version import TorchVersion, _key
from oracle import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_says_torch_api_and_names_ember() -> None:
    v = parse(ember.__version__)
    assert v >= Version("2.2") and v.release[:2] == parse(torch.__version__).release[:2]
    assert v.local.startswith("ember.") and isinstance(ember.__version__, str)
    assert ember.__version__ == ember.version.__version__
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        release = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    assert v.local == "ember." + release == "ember." + ember.version.ember_release


def test_version_module_has_torch_fields() -> None:
    assert set(torch.version.__all__) <= set(ember.version.__all__)
    assert ember.version.cuda is None and ember.version.hip is None and ember.version.debug is False
    assert isinstance(ember.version.git_version, str)


VERSIONS = ["2.13.0+ember.0.1.0", "2.13.0+cpu", "2.13.0", "2.2", "2.2.0", "2.13", "2.14.0.dev20250101",
            "2.13.0rc1", "2.13.0a0", "2.13.0.post1", "1.10.0a", "0.4.1", "1!0.1", "2.13.0+ember.0.2.0",
            "2.13.0+ember.0.10.0", "2.13.0-1", "2.13.0.dev1+cpu"]


def test_ordering_is_pep440() -> None:
    assert sorted(VERSIONS, key=_key) == sorted(VERSIONS, key=Version)
    for a, b in itertools.combinations(VERSIONS, 2):
        assert (_key(a) == _key(b)) == (Version(a) == Version(b)), (a, b)


OPERANDS = ["2.2", "2.13", "2.13.0", "2.14", "1.9.0", "3.0", (2, 2), (2, 13), (2, 13, 0), (2, 14), [1, 10],
            "parrot"]


@pytest.mark.parametrize("mine", ["2.13.0+ember.0.1.0", "2.13.0+cpu", "1.10.0a", "2.2.0"])
def test_comparisons_as_torch_version(mine: str) -> None:
    for other, op in itertools.product(OPERANDS + [Version("2.2"), Version("2.13.1")],
                                       ("__lt__", "__le__", "__gt__", "__ge__", "__eq__")):
        theirs = other
        if isinstance(other, Version):  # torch converts only its vendored Version class: compare its twin
            from torch._vendor.packaging.version import Version as Vendored

            theirs = Vendored(str(other))
        assert getattr(TorchVersion(mine), op)(other) == getattr(TorchTorchVersion(mine), op)(theirs), (mine, op,
                                                                                                        other)


def test_usual_checks() -> None:
    v = ember.__version__
    assert v >= "2.0" and v >= (2, 2) and v < "3" and not v < "2.13" and v > "1.13.1"
    assert f"{v}".startswith("2.13.0") and v.split("+")[0] == "2.13.0"
