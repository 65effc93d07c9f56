"""`make ecosystem`: third-party libraries' own test suites, once on torch and once with ember as ``torch``.

    python3 -m ecosystem.run [--libs a,b] [--sides torch,ember] [--repos DIR] [--jobs N] [--report-only]

Two venvs under ``.ecosystem/`` (ignored by git): ``torch`` has real torch 2.13.0 and the libraries with their
requirements; ``ember`` has no torch at all: the libraries are installed with ``--no-deps`` plus their non-torch
requirements (_install_without_torch.py), beside ember's ml_dtypes (its bfloat16), and a ``.pth`` line installs
ecosystem/torch_alias.py at start-up, so ``import torch`` gives ember before any library runs. Each library's tests run by pytest in each venv (JUnit XML
under ``.ecosystem/results``), and report.py writes ECOSYSTEM.md from the XML.

NOTE [tests from repositories]: a release's source archive on PyPI is downloaded at run time and its tests used
when it carries them. Some releases ship without tests; for those the library still installs from PyPI, and its
tests come from the project's repository at the release's commit (``Library.tests_from``), read from a local git
snapshot ``$ECO_REPOS/<owner>+<name>/repo`` (the layout the search tool's ``fetch`` leaves under /work/.mirror,
the default; ``git clone --bare`` into that path works too). No third-party code is kept in this repository; a
library whose snapshot is missing is reported as not run.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from ecosystem import report
from ecosystem.libraries import BY_NAME, LIBRARIES, TORCH_FAMILY

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".ecosystem"
HARNESS_DEPS = ("pytest==9.2.0", "pytest-timeout==2.4.0", "packaging", "numpy")
# ember's optional extras that stand for parts of torch itself: torch has bfloat16 built in, ember stores it with
# ml_dtypes (the bf16 extra in pyproject.toml)
EMBER_EXTRAS = ("ml_dtypes",)
SIDES = ("torch", "ember")


def _run(cmd, **kw):
    print("+", " ".join(map(str, cmd)), flush=True)
    subprocess.check_call(list(map(str, cmd)), **kw)


def _clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg", OMP_NUM_THREADS="1", **(extra or {}))
    return env


def _python(side):
    return WORK / side / "bin" / "python"


def _site_packages(side):
    out = subprocess.check_output([_python(side), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  env=_clean_env())
    return Path(out.decode().strip())


def _requirements(libs):
    reqs = [f"{lib.name}=={lib.version}" for lib in libs]
    return reqs + sorted({d for lib in libs for d in lib.test_deps})


def build_venv(side, libs):
    """Creates (or reuses, when its install list is unchanged) one side's venv with the libraries in it."""
    wanted = json.dumps([side, *HARNESS_DEPS, *(EMBER_EXTRAS if side == "ember" else ()), *_requirements(libs)])
    stamp = WORK / side / ".ecosystem-installed"
    if stamp.exists() and stamp.read_text() == wanted:
        return
    if not _python(side).exists():
        _run([sys.executable, "-m", "venv", WORK / side])
    pip = [_python(side), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, *HARNESS_DEPS], env=_clean_env())
    if side == "torch":
        _run([*pip, "torch==2.13.0", *_requirements(libs)], env=_clean_env())
    else:
        _run([*pip, *EMBER_EXTRAS], env=_clean_env())
        _run([_python(side), ROOT / "ecosystem" / "_install_without_torch.py", ",".join(sorted(TORCH_FAMILY)),
              *_requirements(libs)], env=_clean_env())
        _install_alias()
    stamp.write_text(wanted)


def _install_alias():
    """ember itself through a folder holding only a link to it (the repository root would put its tests/ and
    bench/ on sys.path), and the torch alias, both named in one .pth file."""
    src = WORK / "ember-src"
    src.mkdir(parents=True, exist_ok=True)
    link = src / "ember"
    if not link.is_symlink():
        link.symlink_to(ROOT / "ember", target_is_directory=True)
    site = _site_packages("ember")
    shutil.copy(ROOT / "ecosystem" / "torch_alias.py", site / "_ember_torch_alias.py")
    (site / "_ember_torch_alias.pth").write_text(f"{src}\nimport _ember_torch_alias\n")
    check = ("import importlib.util, sys, torch, ember; assert torch is ember, torch; "
             "import torch.nn.functional as F; assert F is sys.modules['ember.nn.functional']; "
             "assert importlib.util.find_spec('ember').origin.startswith(%r)" % str(src))
    _run([_python("ember"), "-c", check], env=_clean_env(), cwd=WORK)
    if subprocess.run([_python("ember"), "-m", "pip", "show", "-q", "torch"], env=_clean_env(),
                      capture_output=True).returncode == 0:
        raise SystemExit("real torch is installed in the ember venv: remove .ecosystem/ember and run again")


def _sdist(lib):
    dl = WORK / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    found = [p for p in dl.iterdir() if p.name.lower().replace("_", "-").startswith(
        f"{lib.name}-{lib.version}.".lower().replace("_", "-"))]
    if not found:
        _run([_python("torch"), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
              f"{lib.name}=={lib.version}", "-d", dl], env=_clean_env())
        return _sdist(lib)
    return found[0]


def source_tree(lib, repos):
    """The release's source tree with its tests (from the sdist, or overlaid from a repository snapshot)."""
    dest = WORK / "src" / f"{lib.name}-{lib.version}"
    if dest.exists():
        return dest
    tmp = WORK / "src" / ".unpack"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(_sdist(lib)) as tar:
        tar.extractall(tmp, filter="data")
    (top,) = tmp.iterdir()
    if lib.tests_from != "sdist":
        repo, commit = lib.tests_from.split("@")
        git_dir = Path(repos) / repo.replace("/", "+") / "repo"
        if not git_dir.exists():
            shutil.rmtree(tmp)
            return None
        paths = sorted({t.split("/")[0] for t in lib.tests})
        archive = subprocess.run(["git", "--git-dir", git_dir, "archive", commit, *paths], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "x", "-C", top], input=archive, check=True)
    if not _has_pytest_config(top):  # else pytest would take this repository's own configuration
        (top / "pytest.ini").write_text("[pytest]\n")
    top.rename(dest)
    shutil.rmtree(tmp)
    return dest


def _has_pytest_config(tree):
    marks = {"pytest.ini": "", "pyproject.toml": "[tool.pytest", "setup.cfg": "[tool:pytest]", "tox.ini": "[pytest]"}
    return any((tree / f).exists() and mark in (tree / f).read_text() for f, mark in marks.items())


def run_tests(lib, side, tree):
    """One pytest run of the library's tests; returns its wall and CPU seconds and ember's commit."""
    results = WORK / "results"
    results.mkdir(parents=True, exist_ok=True)
    xml = results / f"{lib.name}.{side}.xml"
    xml.unlink(missing_ok=True)
    cmd = [_python(side), "-m", "pytest", *lib.tests, "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "--continue-on-collection-errors",
           f"--junitxml={xml}", f"--timeout={lib.timeout}", *lib.pytest_args]
    start, commit = time.perf_counter(), _commit()
    with open(results / f"{lib.name}.{side}.log", "w") as log:
        print("+", " ".join(map(str, cmd)), f"(in {tree})", flush=True)
        proc = subprocess.Popen(list(map(str, cmd)), cwd=tree, env=_clean_env(lib.env), stdout=log,
                                stderr=subprocess.STDOUT)
        _, _, usage = os.wait4(proc.pid, 0)  # this run's own CPU time: wall time depends on the machine's load
    return {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime, "commit": commit}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libs", default="", help="comma-separated names (default: all)")
    ap.add_argument("--sides", default="torch,ember")
    ap.add_argument("--repos", default=os.environ.get("ECO_REPOS") or "/work/.mirror")
    ap.add_argument("--report-only", action="store_true", help="rewrite ECOSYSTEM.md from the last results")
    ap.add_argument("--out", default=str(ROOT / "ECOSYSTEM.md"))
    ap.add_argument("--jobs", type=int, default=2, help="pytest runs at a time (default 2: the machine's cores)")
    args = ap.parse_args(argv)
    libs = [BY_NAME[n] for n in args.libs.split(",")] if args.libs else list(LIBRARIES)
    sides = args.sides.split(",")
    timings_file = WORK / "results" / "timings.json"
    timings = json.loads(timings_file.read_text()) if timings_file.exists() else {}
    missing = {}
    if not args.report_only:
        for side in SIDES:  # the torch venv also downloads the sdists
            if side in sides or side == "torch":
                build_venv(side, libs)
        runs = []
        for lib in libs:
            tree = source_tree(lib, args.repos)
            if tree is None:
                missing[lib.name] = f"no snapshot of {lib.tests_from} under {args.repos}"
                continue
            runs += [(lib, side, tree) for side in sides]
        # one pytest process per (library, side), ``--jobs`` at a time (each is single-threaded: OMP_NUM_THREADS=1)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for (lib, side, _), secs in zip(runs, pool.map(lambda r: run_tests(*r), runs)):
                timings[f"{lib.name}.{side}"] = secs
                timings_file.write_text(json.dumps(timings, indent=1))
    report.write(Path(args.out), LIBRARIES, WORK / "results", timings, missing, _versions())
    print(f"wrote {args.out}")


def _versions():
    """What ran: pip freeze of each venv, and ember's commit."""
    out = {}
    for side in SIDES:
        if _python(side).exists():
            out[side] = subprocess.run([_python(side), "-m", "pip", "freeze", "--exclude-editable"],
                                       capture_output=True, text=True, env=_clean_env()).stdout.split()
    out["commit"] = _commit()
    return out


def _commit():
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "ember"],
                           capture_output=True, text=True).stdout.strip()
    return rev.stdout.strip() + ("+changes" if dirty else "")


if __name__ == "__main__":
    main()
