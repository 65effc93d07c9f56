"""Runs one world script in this interpreter, as ``python SCRIPT ARGS`` would, after the side's preparations.

    python tools/world/child.py SIDE SCRIPT [ARGS...]

SIDE ``ember`` installs ecosystem/torch_alias.py first, so ``import torch`` (and every ``torch.X``) gives ember even
though real torch is installed; ``torch`` leaves real torch in place. Both sides then get the same preparations:
- No network (NOTE [downloads from a table]): requests and urllib are served from the files named in the
  ``WORLD_URLS`` environment variable (a JSON object, URL -> local path); any other URL fails as offline.
- torchvision's package ``__init__`` does not run on either side (NOTE [torchvision without its __init__]): it
  loads C++ operators (the PyPI wheel is built against CUDA torch, so they cannot load here even on torch) and
  imports models/ops, which need torch.onnx, torch.fx and torch._C. ``torchvision`` is a bare package over the
  installed one, so ``torchvision.datasets``, ``.transforms``, ``.utils`` and ``.models`` are the real modules,
  loaded on demand (on attribute access too); ``torchvision.ops`` registers no ONNX symbolics (that needs torch.onnx).
- CIFAR-10's MD5 check accepts the synthetic batches (their bytes differ from the real archive's by design).
"""
from __future__ import annotations

import importlib.abc
import importlib.metadata
import importlib.util
import io
import json
import os
import runpy
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _urls():
    return json.loads(os.environ.get("WORLD_URLS", "{}"))


def _offline(url):
    return OSError(f"world: no network here and no local stand-in for {url}")


def _patch_requests(requests):
    """Every requests transport reads the URL table instead of the network."""
    from requests.adapters import HTTPAdapter
    from requests.models import Response

    def send(self, request, **kwargs):
        path = _urls().get(request.url)
        if path is None:
            raise requests.exceptions.ConnectionError(str(_offline(request.url)), request=request)
        resp = Response()
        resp.status_code, resp.url, resp.request = 200, request.url, request
        resp.raw = io.BytesIO(Path(path).read_bytes())
        resp.reason = "OK"
        return resp

    HTTPAdapter.send = send


def _patch_urllib():
    import urllib.error
    import urllib.request

    def urlopen(url, *args, **kwargs):
        url = getattr(url, "full_url", url)
        path = _urls().get(url)
        if path is None:
            raise urllib.error.URLError(str(_offline(url)))
        return io.BytesIO(Path(path).read_bytes())

    def urlretrieve(url, filename=None, *args, **kwargs):
        data = urlopen(url).read()
        Path(filename).write_bytes(data)
        return filename, None

    urllib.request.urlopen = urlopen
    urllib.request.urlretrieve = urlretrieve


def _cifar_accepts_synthetic(module):
    for name in ("CIFAR10", "CIFAR100"):
        getattr(module, name)._check_integrity = lambda self: True
    module.check_integrity = lambda fpath, md5=None: os.path.isfile(fpath)  # batches.meta's check


_AFTER_IMPORT = {"requests": _patch_requests, "torchvision.datasets.cifar": _cifar_accepts_synthetic}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``_AFTER_IMPORT[name](module)`` once the named module has executed (whoever imports it first)."""

    def find_spec(self, name, path=None, target=None):
        hook = _AFTER_IMPORT.get(name)
        if hook is None:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            hook(module)

        spec.loader.exec_module = exec_module
        return spec


def _bare_torchvision():
    """NOTE [torchvision without its __init__]: a package module over the installed torchvision's folder carrying
    the few attributes its submodules read from the package; its registration modules are empty."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None:
        return
    pkg = types.ModuleType("torchvision")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__file__ = spec.origin
    pkg.__spec__ = importlib.util.spec_from_loader("torchvision", None, is_package=True)
    pkg.__spec__.submodule_search_locations = pkg.__path__
    backend = ["PIL"]
    pkg.get_image_backend = lambda: backend[0]
    pkg.set_image_backend = lambda name: backend.__setitem__(0, name)
    pkg._is_tracing = lambda: False
    pkg.__version__ = importlib.metadata.version("torchvision")

    def __getattr__(name):  # `import torchvision; torchvision.models.X` as the real __init__'s imports allow
        if name in ("datasets", "io", "models", "ops", "transforms", "utils"):
            return importlib.import_module(f"torchvision.{name}")
        raise AttributeError(f"module 'torchvision' has no attribute '{name}'")

    pkg.__getattr__ = __getattr__
    sys.modules["torchvision"] = pkg
    for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
        sys.modules[name] = types.ModuleType(name)
    # torchvision.ops registers ONNX export symbolics on import (it needs torch.onnx, which ember lacks);
    # registering nothing on both sides keeps torchvision.models importable.
    onnx = sys.modules["torchvision.ops._register_onnx_ops"] = types.ModuleType("torchvision.ops._register_onnx_ops")
    onnx._register_custom_op = lambda: None


_PREPARED = []


def prepare(side):
    """The side's preparations (see the module docstring); once per interpreter."""
    if _PREPARED:
        return
    _PREPARED.append(side)
    if side == "ember":
        sys.path.insert(0, os.environ.get("WORLD_EMBER", str(ROOT)))
        import ecosystem.torch_alias  # noqa: F401  (installs the finder)
    elif side != "torch":
        raise SystemExit(f"unknown side {side!r}")
    _bare_torchvision()
    _patch_urllib()
    sys.meta_path.insert(0, _AfterImport())


def main(argv):
    side, script, *args = argv
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)  # this folder's data.py must not shadow a script's own `import data`
    prepare(side)
    script = os.path.abspath(script)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
