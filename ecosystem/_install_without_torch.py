"""Installs requirements into the running venv with ``--no-deps``, walking their requirements by hand and
leaving out torch's family, so that a library which requires torch installs without it.

Run by the venv's own interpreter: ``python _install_without_torch.py EXCLUDED,NAMES spec [spec ...]``.
"""
import importlib.metadata as md
import subprocess
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def _installed(req):
    try:
        return req.specifier.contains(md.version(req.name), prereleases=True)
    except md.PackageNotFoundError:
        return False


def main(excluded, specs):
    excluded = {canonicalize_name(n) for n in excluded}
    seen, pending = set(), [Requirement(s) for s in specs]
    while pending:
        todo = [r for r in pending if not _installed(r)]
        if todo:
            subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *map(str, todo)])
        seen.update(canonicalize_name(r.name) for r in pending)
        nxt = []
        for r in pending:
            for line in md.requires(r.name) or ():
                dep = Requirement(line)
                name = canonicalize_name(dep.name)
                if dep.marker is not None and not any(dep.marker.evaluate({"extra": e}) for e in ("", *r.extras)):
                    continue
                if name in excluded or name in seen or any(canonicalize_name(d.name) == name for d in nxt):
                    continue
                dep.marker = None
                nxt.append(dep)
        pending = nxt


if __name__ == "__main__":
    main(sys.argv[1].split(","), sys.argv[2:])
