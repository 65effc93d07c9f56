"""Lazy package attributes (ember._lazy): ``import ember`` leaves the heavy subpackages unimported, and every
lazily exported name still resolves to the object an eager import gives."""
import importlib
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# package -> {name: (module, attribute or None)}: what each lazy name must be
LAZY = {
    "ember": {"optim": ("ember.optim", None), "utils": ("ember.utils", None), "viz": ("ember.viz", None),
              "linalg": ("ember.linalg", None), "distributed": ("ember.distributed", None),
              "func": ("ember.func", None), "serialization": ("ember.serialization", None),
              "save": ("ember.serialization", "save"), "load": ("ember.serialization", "load"),
              "from_dlpack": ("ember.utils.dlpack", "from_dlpack"), "special": ("ember.special", None),
              "testing": ("ember.testing", None)},
    "ember.utils": {n: (f"ember.utils.{n}", None) for n in ("checkpoint", "data", "dlpack", "safetensors")},
    "ember.nn": {"utils": ("ember.nn.utils", None), "parallel": ("ember.nn.parallel", None), "DataParallel": ("ember.nn.parallel", "DataParallel")},
    "ember.nn.utils": {"stateless": ("ember.nn.utils.stateless", None)},
    "ember.nn.functional": {"scaled_dot_product_attention": ("ember.nn._functional_attention",
                                                             "scaled_dot_product_attention"),
                            "multi_head_attention_forward": ("ember.nn._functional_attention",
                                                             "multi_head_attention_forward"),
                            "ctc_loss": ("ember.nn._functional_ctc", "ctc_loss"),
                            **{n: ("ember.nn._functional_conv", n) for n in ("conv2d", "max_pool2d", "pad",
                                                                              "interpolate", "unfold", "fold")}},
    "ember.autograd": {"functional": ("ember.autograd.functional", None),
                       "forward_ad": ("ember.autograd.forward_ad", None),
                       "Variable": ("ember.autograd.variable", "Variable"),
                       "explain": ("ember.autograd._explain", "explain"),
                       "Explanation": ("ember.autograd._explain", "Explanation")},
}

NOT_LOADED = ["ember.optim", "ember.utils.data", "ember.utils.safetensors", "ember.utils.checkpoint",
              "ember.distributed", "ember.func", "ember.serialization", "ember.viz", "ember.linalg",
              "ember.special", "ember.testing",
              "ember.nn.parallel", "ember.nn.utils", "ember.nn.utils.stateless",
              "ember.autograd.functional", "ember.autograd.forward_ad", "ember.autograd._explain",
              "ember.nn._functional_attention", "ember.nn._functional_ctc", "ember.ops.ctc",
              "ember.nn._functional_conv", "ember.ops.conv", "ember.ops.pooling", "ember.ops.resample",
              *(f"ember.nn.modules.{sub}" for sub in ("conv", "pooling", "activation", "loss", "rnn", "transformer")),
              "multiprocessing", "zipfile", "subprocess", "tempfile", "uuid"]


def _fresh(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def test_import_ember_leaves_heavy_modules_unloaded():
    loaded = _fresh(f"import sys, ember; print(sorted(m for m in {NOT_LOADED!r} if m in sys.modules))")
    assert loaded == "[]"


def test_first_use_loads_the_module():
    assert _fresh("import sys, ember; ember.optim.SGD; print('ember.optim' in sys.modules)") == "True"
    assert _fresh("import sys, ember; from ember.utils.data import DataLoader; "
                  "print('ember.utils.data' in sys.modules, DataLoader.__name__)") == "True DataLoader"


@pytest.mark.parametrize("package", sorted(LAZY))
def test_every_lazy_name_resolves_to_its_object(package):
    pkg = importlib.import_module(package)
    for name, (module, attr) in LAZY[package].items():
        want = importlib.import_module(module)
        if attr is not None:
            want = getattr(want, attr)
        assert getattr(pkg, name) is want, f"{package}.{name}"
        assert name in dir(pkg)
        assert name in vars(pkg)  # cached after the first lookup


def test_lazy_layer_families_match_their_modules():
    # the name table of ember.nn.modules is each family's __all__, and nn re-exports every layer
    import ember.nn as nn
    import ember.nn.modules as modules

    for sub, names in modules.LAZY_FAMILIES.items():
        family = importlib.import_module(f"ember.nn.modules.{sub}")
        assert tuple(family.__all__) == names, sub
        for name in names:
            assert getattr(modules, name) is getattr(family, name) is getattr(nn, name)
            assert name in nn.__all__ and name in dir(nn)
        assert getattr(modules, sub) is family


def test_lazy_functional_conv_names_match_the_module():
    import ember.nn._functional_conv as conv
    import ember.nn.functional as F

    assert F.CONV_NAMES == tuple(conv.__all__)
    for name in F.CONV_NAMES:
        assert getattr(F, name) is getattr(conv, name)


def test_submodule_import_does_not_shadow_a_function():
    # ember.autograd.gradcheck is the function (as torch's), also after its module was imported
    import ember.autograd.gradcheck  # noqa: F401
    import ember

    assert callable(ember.autograd.gradcheck) and ember.autograd.gradcheck.__name__ == "gradcheck"


@pytest.mark.parametrize("package", sorted(LAZY))
def test_public_names_all_resolve(package):
    pkg = importlib.import_module(package)
    for name in getattr(pkg, "__all__", ()):
        getattr(pkg, name)


@pytest.mark.parametrize("package", sorted(LAZY))
def test_unknown_attribute_is_an_attribute_error(package):
    pkg = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        _ = pkg.no_such_name
    assert not hasattr(pkg, "no_such_name")


def test_star_import_of_ember_still_works():
    # ember has no __all__: a star import binds the loaded public names (lazy ones are reached as ember.<name>)
    assert _fresh("from ember import *; print(callable(tensor), callable(relu), nn.Linear.__name__)") == \
        "True True Linear"
