"""ember.hub: torch.hub, pretrained weights and models published as repositories with a ``hubconf.py``.

``load_state_dict_from_url`` caches a download under ``get_dir()/checkpoints`` (torch's directory: ``$TORCH_HOME/hub``,
so weights torch downloaded are reused) and loads it with ``ember.load``; ``download_url_to_file`` writes to a
temporary file beside the destination, checks the SHA-256 prefix, then renames it (a partial download never takes
the final name). ``load``/``list``/``help`` import a ``hubconf.py`` from a local directory (``source="local"``) or
from a GitHub repository downloaded into the hub directory, with torch's trust list.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_GITHUB = "https://github.com"  # where repositories are downloaded from (tests point it at a local server)
_GITHUB_API = "https://api.github.com"
_hub_dir: str | None = None


class _Faketqdm:
    """Percentages on stderr, for when tqdm is not installed (torch's fallback)."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs) -> None:
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n: int) -> None:
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs) -> None:
        pass

    def write(self, s: str) -> None:
        sys.stderr.write(f"{s}\n")

    def close(self) -> None:
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if not self.disable:
            sys.stderr.write("\n")


def _progress_bar():
    """tqdm when installed, else the fallback (looked up per download, so installing tqdm later works)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _Faketqdm
    return tqdm


tqdm = _progress_bar()


# ---------------------------------------------------------------- directories
def _get_torch_home() -> str:
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME,
                                                                                DEFAULT_CACHE_DIR), "torch")))


def get_dir() -> str:
    """The hub cache directory: set_dir's, else ``$TORCH_HOME/hub`` (``~/.cache/torch/hub``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    """Use ``d`` as the hub cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---------------------------------------------------------------- downloads
def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None, progress: bool = True) -> None:
    """Download ``url`` to ``dst`` through a temporary file beside it; with ``hash_prefix``, the file's SHA-256
    hex digest must start with it (RuntimeError otherwise, and ``dst`` is not written)."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "x+b")  # noqa: SIM115 - closed in the finally below
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    req = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with urlopen(req) as u:
            lengths = u.info().get_all("Content-Length")
            size = int(lengths[0]) if lengths else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with _progress_bar()(total=size, disable=not progress, unit="B", unit_scale=True,
                                 unit_divisor=1024) as pbar:
                while True:
                    buffer = u.read(READ_DATA_CHUNK)
                    if len(buffer) == 0:
                        break
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            if sha256 is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _safe_extract_zip(zip_file: zipfile.ZipFile, extract_to: str) -> None:
    """Extract refusing entries that would land outside ``extract_to``."""
    root = os.path.realpath(extract_to)
    for member in zip_file.infolist():
        name = member.filename
        if os.path.isabs(name) or re.match(r"^[A-Za-z]:", name):
            raise ValueError(f"Archive entry has absolute path: {name}")
        target = os.path.realpath(os.path.join(root, name))
        if os.path.commonpath([root, target]) != root:
            raise ValueError(f"Archive entry escapes extraction directory: {name}")
    zip_file.extractall(extract_to)


def _is_legacy_zip_format(filename: str) -> bool:
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def _legacy_zip_load(filename: str, model_dir: str, map_location, weights_only: bool):
    from .serialization import load as _load

    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                  "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile format.",
                  FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(f, model_dir)
        extracted = os.path.join(model_dir, members[0].filename)
    return _load(extracted, map_location=map_location)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None, progress: bool = True,
                             check_hash: bool = False, file_name: str | None = None, weights_only: bool = False):
    """The object saved at ``url``, downloaded once into ``model_dir`` (default ``get_dir()/checkpoints``) and
    loaded with ember.load (which loads tensors and plain data only, whatever ``weights_only`` says). With
    ``check_hash`` the file name's ``-<sha256 prefix>.`` part is verified."""
    from .serialization import load as _load

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load(cached_file, map_location=map_location)  # ember.load: tensors and plain data only


# ---------------------------------------------------------------- repositories with a hubconf.py
@contextlib.contextmanager
def _add_to_sys_path(path: str):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hubconf(repo_dir: str):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(module, VAR_DEPENDENCY, None)
    if deps is not None:
        missing = [pkg for pkg in deps if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _remove_if_exists(path: str) -> None:
    if os.path.exists(path):
        if os.path.isfile(path):
            os.remove(path)
        else:
            shutil.rmtree(path)


def _parse_repo_info(github: str) -> tuple:
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    repo_owner, repo_name = repo_info.split("/")
    if ref is None:  # the default branch: main when it exists, else master
        try:
            with urlopen(f"{_GITHUB}/{repo_owner}/{repo_name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            ref = next((r for r in ("main", "master") if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{r}")),
                       None)
            if ref is None:
                raise RuntimeError(f"It looks like there is no internet connection and the repo could not be found "
                                   f"in the cache ({get_dir()})") from e
    return repo_owner, repo_name, ref


def _check_repo_is_trusted(repo_owner: str, repo_name: str, owner_name_branch: str, trust_repo) -> None:
    """torch's trust list: ``<hub dir>/trusted_list``; repos not on it are asked about (or refused)."""
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(path):
        Path(path).touch()
    with open(path) as file:
        trusted = tuple(line.strip() for line in file)
    legacy = next(os.walk(hub_dir))[1]
    owner_name = "_".join([repo_owner, repo_name])
    is_trusted = owner_name in trusted or owner_name_branch in legacy or repo_owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                         f"such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                         f"list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - torch's type
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as file:
            file.write(owner_name + "\n")


def _validate_not_a_forked_repo(repo_owner: str, repo_name: str, ref: str) -> None:
    import json

    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get("GITHUB_TOKEN")
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for prefix in (f"{_GITHUB_API}/repos/{repo_owner}/{repo_name}/branches",
                   f"{_GITHUB_API}/repos/{repo_owner}/{repo_name}/tags"):
        page = 0
        while True:
            page += 1
            with urlopen(Request(f"{prefix}?per_page=100&page={page}", headers=headers)) as r:
                response = json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))
            if not response:
                break
            if any(br["name"] == ref or br["commit"]["sha"].startswith(ref) for br in response):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. If it's a commit from a "
                     f"forked repo, please call hub.load() with forked repo directly.")


def _get_cache_or_reload(github: str, force_reload: bool, trust_repo, verbose: bool = True,
                         skip_validation: bool = False) -> str:
    """The local directory of ``owner/repo[:ref]``, downloaded (as GitHub's zip archive) unless cached."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    normalized = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    cached_file = os.path.join(hub_dir, normalized + ".zip")
    _remove_if_exists(cached_file)
    url = f"{_GITHUB}/{repo_owner}/{repo_name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as archive:
        extracted = os.path.join(hub_dir, archive.infolist()[0].filename)
        _remove_if_exists(extracted)
        _safe_extract_zip(archive, hub_dir)
    _remove_if_exists(cached_file)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _repo_dir(repo_or_dir: str, source: str, force_reload: bool, trust_repo, verbose: bool,
              skip_validation: bool) -> str:
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return repo_or_dir
    return _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose=verbose,
                                skip_validation=skip_validation)


def list(github, force_reload: bool = False, skip_validation: bool = False, trust_repo="check",  # noqa: A001
         verbose: bool = True, *, source: str = "github"):
    """The public callables (entrypoints) of a repository's hubconf.py (``source="local"``: a directory; an
    ember extension of torch's signature)."""
    module = _hubconf(_repo_dir(github, source, force_reload, trust_repo, verbose, skip_validation))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload: bool = False, skip_validation: bool = False, trust_repo="check",  # noqa: A001
         *, source: str = "github"):
    """The docstring of entrypoint ``model`` (``source="local"``: a directory; an ember extension)."""
    module = _hubconf(_repo_dir(github, source, force_reload, trust_repo, True, skip_validation))
    return _load_entry_from_hubconf(module, model).__doc__


def load(repo_or_dir, model, *args, source: str = "github", trust_repo="check", force_reload: bool = False,
         verbose: bool = True, skip_validation: bool = False, **kwargs):
    """Call entrypoint ``model`` of the repository's (or local directory's) hubconf.py with ``args``/``kwargs``."""
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose, skip_validation)
    with _add_to_sys_path(repo_dir):
        module = _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)
