"""torch.hub / torch.utils.model_zoo against a local HTTP server on 127.0.0.1 and local directories: downloads,
hash-prefix checks, atomic writes, the cache directory rules and hubconf.py entrypoints, compared with torch."""
from __future__ import annotations

import functools
import hashlib
import http.server
import io
import os
import sys
import threading
import types
import zipfile

import pytest

from oracle import assert_close, ember, torch, same_outcome


class _Handler(http.server.SimpleHTTPRequestHandler):
    hits: list = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self):  # noqa: N802 - http.server's name
        _Handler.hits.append(self.path)
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    """A static file server on 127.0.0.1 over ``tmp_path/www``; yields (base url, directory)."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.hits = []
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def _hub_dirs(tmp_path, monkeypatch):
    """Each test has its own TORCH_HOME, and neither library keeps a set_dir from another test."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)


def _weights(root, name: str = "weights.pth") -> dict:
    state = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2], dtype=torch.int64)}
    torch.save(state, root / name)
    return state


def test_load_state_dict_from_url_downloads_once_and_loads(server, tmp_path, capsys) -> None:
    base, root = server
    state = _weights(root)
    got = ember.hub.load_state_dict_from_url(f"{base}/weights.pth", model_dir=str(tmp_path / "ckpt"), progress=False)
    out = capsys.readouterr().out
    assert out == f'Downloading: "{base}/weights.pth" to {tmp_path / "ckpt" / "weights.pth"}\n'
    assert set(got) == {"w", "b"}
    for k in state:
        assert_close(got[k], state[k])
    again = ember.hub.load_state_dict_from_url(f"{base}/weights.pth", model_dir=str(tmp_path / "ckpt"))
    assert _Handler.hits == ["/weights.pth"] and capsys.readouterr().out == ""  # served from the cache
    assert_close(again["w"], state["w"])


def test_default_model_dir_is_torchs(server) -> None:
    base, root = server
    _weights(root)
    ember.hub.load_state_dict_from_url(f"{base}/weights.pth", progress=False, file_name="renamed.pth")
    assert os.path.exists(os.path.join(os.environ["TORCH_HOME"], "hub", "checkpoints", "renamed.pth"))


@pytest.mark.parametrize("good", [True, False])
def test_check_hash(server, tmp_path, good: bool) -> None:
    base, root = server
    _weights(root, "tmp.pth")
    digest = hashlib.sha256((root / "tmp.pth").read_bytes()).hexdigest()
    prefix = digest[:10] if good else "0123456789"
    os.rename(root / "tmp.pth", root / f"net-{prefix}.pth")
    url = f"{base}/net-{prefix}.pth"

    def run(lib):
        model_dir = tmp_path / lib.__name__
        out = lib.hub.load_state_dict_from_url(url, model_dir=str(model_dir), check_hash=True, progress=False)
        return sorted(out)

    same_outcome(run)
    for lib in ("ember", "torch"):  # a failed check leaves neither the file nor its partial download
        assert os.listdir(tmp_path / lib) == ([f"net-{prefix}.pth"] if good else [])


def test_download_url_to_file_and_errors(server, tmp_path) -> None:
    base, root = server
    (root / "blob.bin").write_bytes(bytes(range(256)) * 1000)
    dst = tmp_path / "out.bin"
    ember.hub.download_url_to_file(f"{base}/blob.bin", str(dst), hash_prefix=hashlib.sha256(
        (root / "blob.bin").read_bytes()).hexdigest()[:8], progress=False)
    assert dst.read_bytes() == (root / "blob.bin").read_bytes()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]
    same_outcome(lambda lib: lib.hub.download_url_to_file(f"{base}/missing.bin", str(tmp_path / "m.bin"),
                                                          progress=False))
    assert not (tmp_path / "m.bin").exists() and not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]


def test_progress_without_tqdm_writes_percentages(server, tmp_path, capsys, monkeypatch) -> None:
    base, root = server
    (root / "blob.bin").write_bytes(b"x" * 300_000)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # not installed
    ember.hub.download_url_to_file(f"{base}/blob.bin", str(tmp_path / "a.bin"))
    err = capsys.readouterr().err
    assert err.endswith("100.0%\n") and "\r" in err


def test_progress_uses_tqdm_when_installed(server, tmp_path, monkeypatch) -> None:
    base, root = server
    (root / "blob.bin").write_bytes(b"x" * 300_000)
    seen = {}

    class FakeTqdm:
        def __init__(self, total=None, disable=False, **kw):
            seen.update(total=total, disable=disable, kw=kw, n=0)

        def update(self, n):
            seen["n"] += n

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    ember.hub.download_url_to_file(f"{base}/blob.bin", str(tmp_path / "a.bin"))
    assert seen == {"total": 300_000, "disable": False, "n": 300_000,
                    "kw": {"unit": "B", "unit_scale": True, "unit_divisor": 1024}}


def test_legacy_zip_checkpoint(server, tmp_path) -> None:
    base, root = server
    _weights(root, "inner.pth")
    with zipfile.ZipFile(root / "old.zip", "w") as z:
        z.write(root / "inner.pth", "inner.pth")
    with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
        got = ember.hub.load_state_dict_from_url(f"{base}/old.zip", model_dir=str(tmp_path / "c"), progress=False)
    assert sorted(got) == ["b", "w"]


def test_get_dir_and_set_dir_match_torch(tmp_path, monkeypatch) -> None:
    same_outcome(lambda lib: lib.hub.get_dir())
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    same_outcome(lambda lib: lib.hub.get_dir())
    monkeypatch.delenv("XDG_CACHE_HOME")
    same_outcome(lambda lib: lib.hub.get_dir())
    same_outcome(lambda lib: (lib.hub.set_dir("~/somewhere"), lib.hub.get_dir())[1])
    monkeypatch.setenv("TORCH_HUB", "x")
    same_outcome(lambda lib: lib.hub.get_dir())


HUBCONF = '''
dependencies = ["numpy"]


def tiny(scale=1.0, *, lib):
    """A one-layer model whose weights are ``scale`` everywhere."""
    m = lib.nn.Linear(2, 1)
    with lib.no_grad():
        m.weight.fill_(scale)
        m.bias.fill_(0.0)
    return m


def _private():
    return 0


not_callable = 3
'''


@pytest.fixture
def hubdir(tmp_path):
    d = tmp_path / "repo"
    d.mkdir()
    (d / "hubconf.py").write_text(HUBCONF)
    return d


def test_load_local_hubconf(hubdir) -> None:
    m = ember.hub.load(str(hubdir), "tiny", 2.0, source="local", lib=ember)
    assert m(ember.ones(1, 2)).tolist() == [[4.0]]
    assert str(hubdir) not in sys.path


@pytest.mark.parametrize("call", [
    'lib.hub.load(d, "nope", source="local")',
    'lib.hub.load(d, "not_callable", source="local")',
    'lib.hub.load(d, 3, source="local")',
    'lib.hub.load(d, "tiny", source="svn")',
    'lib.hub.load(d, "tiny", 1.0, source="LOCAL", lib=lib).weight.shape[1]',
])
def test_load_local_errors_match_torch(hubdir, call: str) -> None:
    same_outcome(lambda lib: eval(call, {"lib": lib, "d": str(hubdir)}))


def test_missing_dependencies_match_torch(hubdir) -> None:
    (hubdir / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["numpy", "surely_not_installed_pkg"]'))
    same_outcome(lambda lib: lib.hub.load(str(hubdir), "tiny", source="local", lib=lib))


def test_list_and_help_local(hubdir) -> None:
    assert ember.hub.list(str(hubdir), source="local") == ["tiny"]
    assert ember.hub.help(str(hubdir), "tiny", source="local").startswith("A one-layer model")


def _zip_repo(hubdir, root, owner: str, repo: str, ref: str) -> None:
    """GitHub's archive layout: one top folder holding the repository."""
    path = root / owner / repo / "zipball"
    path.mkdir(parents=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(f"{owner}-{repo}-abc123/", "")
        z.write(hubdir / "hubconf.py", f"{owner}-{repo}-abc123/hubconf.py")
    (path / ref).write_bytes(buf.getvalue())


def test_github_source_through_a_local_server(hubdir, server, monkeypatch, capsys) -> None:
    base, root = server
    _zip_repo(hubdir, root, "someone", "models", "main")
    (root / "someone" / "models" / "tree" / "main").mkdir(parents=True)  # the default-branch probe finds main
    monkeypatch.setattr(ember.hub, "_GITHUB", base)
    m = ember.hub.load("someone/models", "tiny", 3.0, trust_repo=True, skip_validation=True, lib=ember)
    assert m(ember.ones(1, 2)).tolist() == [[6.0]]
    hub_dir = ember.hub.get_dir()
    assert os.path.isdir(os.path.join(hub_dir, "someone_models_main"))
    assert open(os.path.join(hub_dir, "trusted_list")).read() == "someone_models\n"
    assert ember.hub.list("someone/models:main", trust_repo="check") == ["tiny"]
    assert "Using cache found in" in capsys.readouterr().err
    assert _Handler.hits.count("/someone/models/zipball/main") == 1


def test_github_untrusted_repo_is_refused(hubdir, server, monkeypatch) -> None:
    base, root = server
    monkeypatch.setattr(ember.hub, "_GITHUB", base)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository."):
        ember.hub.load("stranger/models:main", "tiny", trust_repo="check", skip_validation=True)


def test_model_zoo_is_hub() -> None:
    assert ember.utils.model_zoo.load_url is ember.hub.load_state_dict_from_url
    same_outcome(lambda lib: sorted(n for n in lib.hub.__all__))
