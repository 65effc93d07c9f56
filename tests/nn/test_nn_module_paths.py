"""torch.nn's module paths in ember (``from torch.nn.modules.batchnorm import _BatchNorm``, ``torch.nn.modules.utils
._pair``, ``torch.nn.grad``, ``torch.nn._reduction`` ...): the same names, the same objects as ember.nn's, and the
same behaviour as torch's (values, warnings, errors)."""
from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
import pytest

from oracle import ember, same_error, torch

# module path -> the private names real code imports from it, beside its __all__
PATHS = {
    "nn.modules.batchnorm": "_NormBase _BatchNorm _LazyNormBase",
    "nn.modules.instancenorm": "_InstanceNorm",
    "nn.modules.distance": "",
    "nn.modules.conv": "_ConvNd",
    "nn.modules.pooling": "_MaxPoolNd _AvgPoolNd",
    "nn.modules.loss": "_Loss _WeightedLoss",
    "nn.modules.dropout": "_DropoutNd",
    "nn.modules.module": "",
    "nn.modules.container": "",
    "nn.modules.normalization": "",
    "nn.modules.utils": "_single _pair _triple _quadruple _ntuple _reverse_repeat_tuple _list_with_default",
    "nn.common_types": "_size_1_t _size_2_t _size_3_t _size_any_t _size_2_opt_t _ratio_2_t _ratio_any_t "
                       "_maybe_indices_t _tensor_list_t",
    "nn._reduction": "get_enum legacy_get_string legacy_get_enum",
    "nn.grad": "",
    "nn.utils.fusion": "", "nn.utils.init": "", "nn.utils.memory_format": "",
    "nn.utils.weight_norm": "WeightNorm", "nn.utils.spectral_norm": "SpectralNorm",
    "nn.parallel.scatter_gather": "scatter_kwargs _is_namedtuple", "nn.parallel.replicate": "",
    "nn.parallel.parallel_apply": "get_a_var",
    "nn.parallel.comm": "broadcast broadcast_coalesced reduce_add reduce_add_coalesced scatter gather",
    "nn.modules.linear_cross_entropy_options": "",
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_module_path_has_torchs_names(path):
    t = importlib.import_module("torch." + path)
    e = importlib.import_module("ember." + path)
    names = list(getattr(t, "__all__", [])) + PATHS[path].split()
    assert not [n for n in names if not hasattr(t, n)], "the list holds only torch names"
    assert not [n for n in names if not hasattr(e, n)], f"ember.{path} lacks some"
    for n in getattr(t, "__all__", []):  # the public names are ember.nn's own objects, not copies
        for space in ("nn", "nn.utils", "nn.parallel", "nn.modules"):
            owner = importlib.import_module("ember." + space)
            if hasattr(owner, n) and not isinstance(getattr(owner, n), type(sys)):
                assert getattr(e, n) is getattr(owner, n), (path, n, space)


@pytest.mark.parametrize("path", ["nn.modules.batchnorm", "nn.modules.utils", "nn.grad", "nn._reduction",
                                  "nn.common_types", "nn.utils.fusion", "nn.utils.init", "nn.utils.memory_format"])
def test_reached_as_attributes(path):
    # torch.nn.modules.batchnorm._BatchNorm without an import statement, as isinstance checks in real code read it
    t, e = torch, ember
    for part in path.split("."):
        t, e = getattr(t, part), getattr(e, part)
    assert type(e) is type(sys) and e.__name__ == "ember." + path


def test_private_bases_are_torchs():
    nn = ember.nn
    mods = nn.modules
    pairs = [(nn.BatchNorm2d, mods.batchnorm._BatchNorm), (nn.SyncBatchNorm, mods.batchnorm._BatchNorm),
             (nn.BatchNorm1d, mods.batchnorm._NormBase), (nn.InstanceNorm2d, mods.instancenorm._InstanceNorm),
             (nn.InstanceNorm1d, mods.batchnorm._NormBase), (nn.LazyBatchNorm2d, mods.batchnorm._LazyNormBase),
             (nn.Conv2d, mods.conv._ConvNd), (nn.ConvTranspose1d, mods.conv._ConvNd)]
    for cls, base in pairs:
        assert issubclass(cls, base), (cls, base)
        tcls = getattr(torch.nn, cls.__name__)
        tbase = getattr(importlib.import_module("torch." + base.__module__.replace("ember.", "", 1).replace(
            "normalization", "batchnorm" if "Instance" not in base.__name__ else "instancenorm")), base.__name__)
        assert issubclass(tcls, tbase)
    assert not issubclass(nn.InstanceNorm2d, mods.batchnorm._BatchNorm)
    assert not issubclass(torch.nn.InstanceNorm2d, torch.nn.modules.batchnorm._BatchNorm)


def test_common_types_are_the_same_aliases():
    for name in PATHS["nn.common_types"].split():
        e, t = getattr(ember.nn.common_types, name), getattr(torch.nn.common_types, name)
        # the same shape of alias: a union of the scalar and its tuples, with the same argument count
        assert len(getattr(e, "__args__", ())) == len(getattr(t, "__args__", ())), name


@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "elementwise_mean", "max"])
def test_reduction_enum(reduction):
    got = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = lib.nn._reduction.get_enum(reduction)
            except ValueError as e:
                r = str(e)
        got.append((r, [(x.category, str(x.message)) for x in w]))
    assert got[0] == got[1]


@pytest.mark.parametrize("size_average", [None, True, False])
@pytest.mark.parametrize("reduce", [None, True, False])
@pytest.mark.parametrize("emit", [True, False])
def test_reduction_legacy_flags(size_average, reduce, emit):
    got = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = (lib.nn._reduction.legacy_get_string(size_average, reduce, emit),
                 lib.nn._reduction.legacy_get_enum(size_average, reduce, emit))
        got.append((r, [(x.category, str(x.message)) for x in w]))
    assert got[0] == got[1]


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category.__name__, str(x.message)) for x in w]


def test_container_is_deprecated_as_in_torch():
    got = []
    for lib in (ember, torch):
        c, w1 = _warned(lambda: lib.nn.Container(a=lib.nn.Linear(2, 2), b=lib.nn.ReLU()))
        sub, w2 = _warned(lambda: type("Mine", (lib.nn.Container,), {}))
        _, w3 = _warned(sub)
        got.append((repr(c), list(c.state_dict()), w1, w2, w3, isinstance(c, lib.nn.Module)))
    assert got[0] == got[1]
    assert got[0][2] and got[0][3] and not got[0][4]


FACTORY_KWARGS = [None, {}, {"device": "cpu"}, {"dtype": "f64", "device": "cpu"},
                  {"factory_kwargs": {"dtype": "f64"}, "device": "cpu"}, {"memory_format": "cl"}]


@pytest.mark.parametrize("kw", FACTORY_KWARGS, ids=str)
def test_factory_kwargs(kw):
    def resolve(lib, kw):
        if kw is None:
            return None
        subst = {"f64": lib.float64, "cl": lib.channels_last}
        out = {k: subst.get(v, v) if not isinstance(v, dict) else resolve(lib, v) for k, v in kw.items()}
        return out
    e, t = ember.nn.factory_kwargs(resolve(ember, kw)), torch.nn.factory_kwargs(resolve(torch, kw))
    assert {k: str(v) for k, v in e.items()} == {k: str(v) for k, v in t.items()}


@pytest.mark.parametrize("kw", [{"foo": 1}, {"dtype": None, "factory_kwargs": {"dtype": None}}])
def test_factory_kwargs_errors(kw):
    same_error(lambda lib: lib.nn.factory_kwargs(kw))


def test_weight_norm_names_stay_functions_after_importing_their_modules():
    code = ("import ember.nn.utils.weight_norm, ember.nn.utils.spectral_norm, ember; "
            "from ember.nn.utils.weight_norm import WeightNorm; "
            "print(callable(ember.nn.utils.weight_norm) and not isinstance(ember.nn.utils.weight_norm, type(ember)), "
            "callable(ember.nn.utils.spectral_norm) and not isinstance(ember.nn.utils.spectral_norm, type(ember)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]
    assert not isinstance(torch.nn.utils.weight_norm, type(sys))
