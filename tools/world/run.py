"""Runs public PyTorch scripts unchanged on real torch and on ember (``import ember as torch``) and compares them.

    python -m tools.world.run [--only SUBSTR,...] [--sides torch,ember] [--repos DIR] [--ember REV] [--report]

Run from the repository root with the venv that has real torch (the test extra) and the ``world`` extra. Sources
come from local git snapshots ``$WORLD_REPOS/<owner>+<name>/repo`` (default /work/.mirror, the layout the search
tool's ``fetch`` leaves; ``git clone --bare URL <that path>`` works too), exported at the commit the table names
into ``.world/<script>/<side>/`` (ignored by git). Each run's outcome goes to ``.world/results.json``; ``--report``
prints the markdown table from it. ``--ember REV`` runs the ember of another commit of this repository (a branch
being integrated, say), exported into ``.world/ember-<commit>/``; the default is this working tree. Nothing here is
part of ``make test``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.world.scripts import SCRIPTS, work_url_files  # noqa: E402

WORK = ROOT / ".world"
CHILD = Path(__file__).with_name("child.py")
MODELS = Path(__file__).with_name("models.py")
SIDES = ("torch", "ember")


def _slug(name):
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()


def _export(repos, source, dest, folders=None):
    repo, commit = source
    git_dir = Path(repos) / repo.replace("/", "+") / "repo"
    if not git_dir.exists():
        raise FileNotFoundError(f"no snapshot of {repo} at {git_dir}")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    git = ["git", "--git-dir", str(git_dir)]
    archive = subprocess.run([*git, "archive", commit, *(folders or [])], capture_output=True)
    if archive.returncode != 0:
        # NOTE [snapshots without their large files]: a snapshot may lack some blobs (large data files); the
        # files it has are exported, and a script needing a missing one gets a stand-in from its setup.
        listing = subprocess.run([*git, "ls-tree", "-r", "--format=%(objectname) %(path)", commit, "--",
                                  *(folders or [])], check=True, capture_output=True, text=True).stdout.splitlines()
        present = [path for obj, path in (line.split(" ", 1) for line in listing)
                   if subprocess.run([*git, "cat-file", "-e", obj], capture_output=True).returncode == 0]
        archive = subprocess.run([*git, "archive", commit, "--", *present], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def _site():
    """A folder whose sitecustomize makes the side's preparations (tools/world/child.py), so every interpreter a run
    starts, spawned workers too, has them: on ember, ``import torch`` gives ember there as well."""
    site = WORK / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text("import os\nfrom tools.world import child\n\n"
                                           "child.prepare(os.environ['WORLD_SIDE'])\n")
    return site


_EMBER = {"root": str(ROOT), "label": "working tree"}


def _use_ember(rev):
    """Exports ``ember/`` and ``ecosystem/`` at ``rev`` into ``.world/ember-<commit>/`` and runs that ember."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], check=True, capture_output=True,
                            text=True).stdout.strip()
    dest = WORK / f"ember-{commit[:10]}"
    if not dest.exists():
        tmp = WORK / f"ember-{commit[:10]}.part"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "ember", "ecosystem"], check=True,
                                 capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        tmp.rename(dest)
    _EMBER.update(root=str(dest), label=f"{rev}@{commit[:10]}")


def _label_working_tree():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "ember", "ecosystem"],
                           capture_output=True, text=True).stdout.strip()
    _EMBER["label"] = f"working tree at {head}" + (" (with changes)" if dirty else "")


def _env(side, urls):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONPATH=os.pathsep.join([str(_site()), str(ROOT)]), WORLD_SIDE=side, MPLBACKEND="Agg",
               WORLD_EMBER=_EMBER["root"],
               PYTHONDONTWRITEBYTECODE="1",
               WORLD_URLS=json.dumps(urls), OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", TQDM_MININTERVAL="0")
    return env


_EXC = re.compile(r"^(\w[\w.]*(?:Error|Exception|Exit|Interrupt|Warning|NotImplemented\w*)\b.*)$", re.M)


def first_failure(text):
    """The exception line of the last traceback in ``text`` and the deepest frame in ember (or the script)."""
    idx = text.rfind("Traceback (most recent call last)")
    if idx < 0:
        return None, None
    tb = text[idx:]
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', tb)
    exc = _EXC.findall(tb)
    where = None
    for path, line, fn in frames:
        if path.startswith((str(ROOT / "ember"), _EMBER["root"] + "/ember/")) or not path.startswith(("/", "<")) or str(WORK) in path:
            where = f"{_short(path)}:{line} {fn}"
    return (exc[-1].strip()[:300] if exc else tb.strip().splitlines()[-1][:300]), where


def _short(path):
    for root in (_EMBER["root"], str(ROOT)):
        if path.startswith(root + "/ember/"):
            return os.path.relpath(path, root)
    if path.startswith(str(WORK) + "/"):  # a script's own file: .world/<script>/<side>/<path in the repository>
        return "/".join(Path(path).relative_to(WORK).parts[2:])
    if "/site-packages/" in path:
        return path[path.index("/site-packages/") + 15:]
    return "/".join(path.split("/")[-2:])


def run_one(script, side, repos):
    work = WORK / _slug(script.name) / side
    _export(repos, script.source, work, script.export)
    if script.setup is not None:
        script.setup(work)
    urls = work_url_files(script, work)
    env = _env(side, urls)
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *(str(work / p) for p in script.pythonpath)])
    log_parts, started, rc, step = [], time.time(), 0, None
    for path, args in [*script.before, (script.path, script.args)]:
        cwd = work / (script.cwd if script.cwd is not None else os.path.dirname(path))
        rel = os.path.relpath(work / path, cwd)
        cmd = [sys.executable, str(CHILD), side, rel, *map(str, args)]
        remaining = script.timeout - (time.time() - started)
        try:
            proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, errors="replace",
                                  timeout=max(remaining, 1))
            rc, out = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        log_parts.append(f"$ {' '.join(cmd[2:])}\n{out}")
        if rc != 0:
            step = path
            break
    log = "\n".join(log_parts)
    (work.parent / f"{side}.log").write_text(log)
    exc, where = first_failure(log)
    if rc == 0 and exc:
        rc = "ok, with a traceback"  # e.g. a worker process that died while the script went on
    last = log_parts[-1] if log_parts else ""
    metric = [float(m) for m in re.findall(script.metric, last, re.M)]
    accuracy = [float(m) for m in re.findall(script.accuracy, last, re.M)] if script.accuracy else []
    return {"script": script.name, "side": side, "ember": _EMBER["label"] if side == "ember" else None, "rc": rc, "seconds": round(time.time() - started, 1),
            "failed_step": step, "exception": exc, "where": where, "metric": metric, "accuracy": accuracy,
            "tail": log[-1500:]}


def run_model(model, repos):
    """One model on both sides (tools/world/models.py): the torch side writes the weights, ember compares."""
    base = WORK / "models" / _slug(model.name)
    src, out = base / "src", base / "out"
    _export(repos, model.source, src, model.export)
    out.mkdir(parents=True, exist_ok=True)
    rec = {"model": model.name}
    for side in SIDES:
        started = time.time()
        cmd = [sys.executable, str(MODELS), side, model.name, str(out)]
        try:
            proc = subprocess.run(cmd, cwd=src, env=_env(side, {}), capture_output=True, text=True,
                                  errors="replace", timeout=900)
            rc, log = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            rc, log = "timeout", ""
        exc, where = first_failure(log)
        rec[side] = {"rc": rc, "seconds": round(time.time() - started, 1), "exception": exc, "where": where,
                     "tail": log[-1500:]}
        if rc != 0:
            break
    cmp = out / "compare.json"
    if rec.get("ember", {}).get("rc") == 0 and cmp.exists():
        from tools.world.models import summarize

        rec.update(summarize(json.loads(cmp.read_text())))
    return rec


def _load():
    path = WORK / "results.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _save(results):
    WORK.mkdir(exist_ok=True)
    tmp = tempfile.NamedTemporaryFile("w", dir=WORK, delete=False)
    json.dump(results, tmp, indent=1)
    tmp.close()
    os.replace(tmp.name, WORK / "results.json")


def _curve(values, k=3):
    if not values:
        return "-"
    if len(values) <= 2 * k:
        return " ".join(f"{v:.3g}" for v in values)
    return " ".join(f"{v:.3g}" for v in values[:k]) + " ... " + " ".join(f"{v:.3g}" for v in values[-k:])


def compare(t, e):
    """Words for how ember's followed numbers sit against torch's (different RNG streams: close, not equal)."""
    if not t or not e:
        return "-"
    tl, el = t[-1], e[-1]
    rel = abs(el - tl) / max(abs(tl), 1e-12)
    trend = lambda v: "falls" if v[-1] < v[0] else "rises" if v[-1] > v[0] else "flat"
    return (f"last {el:.4g} vs {tl:.4g} ({rel:.0%} apart); torch {trend(t)} {t[0]:.3g}->{tl:.3g}, "
            f"ember {trend(e)} {e[0]:.3g}->{el:.3g}")


def _status(r):
    if r is None:
        return "-"
    rc = r["rc"]
    word = "ok" if rc == 0 else rc if isinstance(rc, str) else f"fails ({rc})"
    return f"{word}, {r['seconds']:.0f} s"


def _failure(t, e):
    if not e or e["rc"] == 0:
        return ""
    cell = f"`{e['exception']}` at `{e['where']}`"
    if t and t["rc"] != 0:
        same = (t["exception"] or "").split(":")[0] == (e["exception"] or "").split(":")[0]
        cell = ("torch fails the same way: " if same else f"torch fails too (`{t['exception']}`); ember: ") + cell
    return cell.replace("|", "\\|")


def report(results):
    lines = ["| script | source | what ran | torch | ember | loss, torch | loss, ember | accuracy % (torch / ember) "
             "| ember's failure |", "|---|---|---|---|---|---|---|---|---|"]
    for script in SCRIPTS:
        r = results.get(script.name, {})
        t, e = r.get("torch"), r.get("ember")
        acc = "-"
        if (t and t.get("accuracy")) or (e and e.get("accuracy")):
            last = lambda x: f"{x['accuracy'][-1]:.1f}" if x and x.get("accuracy") else "-"
            acc = f"{last(t)} / {last(e)}"
        repo, commit = script.source
        lines.append(f"| {script.name} | {repo}@{commit[:7]} | {script.changed} | {_status(t)} | {_status(e)} | "
                     f"{_curve(t and t['metric'])} | {_curve(e and e['metric'])} | {acc} | {_failure(t, e)} |")
    return "\n".join(lines)


def _model_cell(rec):
    t, e = rec.get("torch", {}), rec.get("ember")
    if t.get("rc") != 0:
        return f"torch side fails: {t.get('exception')} | | | |"
    if e is None or e["rc"] != 0:
        return f"fails: `{e and e['exception']}` at `{e and e['where']}` | | | |"
    extra = f"; mismatched {rec['mismatched']}" if rec.get("mismatched") else ""
    beyond = ", ".join(rec["beyond"]) if rec["beyond"] else "none"
    return (f"ok ({e['seconds']:.0f} s){extra} | {rec['arrays']} | {rec['worst']:.2g} | {rec['ember64']:.2g} / "
            f"{rec['torch64']:.2g} | {beyond}")


def report_models(models):
    lines = ["| model | ember | arrays | worst error vs torch | worst error vs float64, ember / torch | "
             "arrays beyond torch's own float32 error |", "|---|---|---:|---:|---:|---|"]
    lines += [f"| {name} | {_model_cell(rec)} |" for name, rec in models.items()]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated substrings of script names")
    ap.add_argument("--sides", default="torch,ember")
    ap.add_argument("--repos", default=os.environ.get("WORLD_REPOS", "/work/.mirror"))
    ap.add_argument("--report", action="store_true", help="print the table from .world/results.json and stop")
    ap.add_argument("--models", action="store_true", help="the same-weights model comparisons instead of scripts")
    ap.add_argument("--ember", default=None, help="a git revision of this repository whose ember runs "
                                                   "(default: this working tree)")
    args = ap.parse_args(argv)
    if args.ember:
        _use_ember(args.ember)
    else:
        _label_working_tree()
    results = _load()
    if args.report:
        print(report(results))
        print()
        print(report_models(results.get("models", {})))
        return
    if args.models:
        from tools.world.models import _tables

        for model in _tables():
            if args.only and not any(o.lower() in model.name.lower() for o in args.only.split(",")):
                continue
            print(f"== {model.name}", flush=True)
            try:
                rec = run_model(model, args.repos)
            except FileNotFoundError as err:
                rec = {"model": model.name, "torch": {"rc": "no source", "exception": str(err)}}
            results.setdefault("models", {})[model.name] = rec
            _save(results)
            print("   " + _model_cell(rec), flush=True)
        return
    wanted = [s for s in SCRIPTS if not args.only or any(o.lower() in s.name.lower() for o in args.only.split(","))]
    for script in wanted:
        for side in args.sides.split(","):
            print(f"== {script.name} [{side}]", flush=True)
            try:
                r = run_one(script, side, args.repos)
            except (FileNotFoundError, subprocess.CalledProcessError) as err:
                r = {"script": script.name, "side": side, "rc": "no source", "seconds": 0, "exception": str(err),
                     "where": None, "metric": [], "accuracy": [], "failed_step": None, "tail": ""}
            results.setdefault(script.name, {})[side] = r
            _save(results)
            print(f"   rc={r['rc']} {r['seconds']}s {r['exception'] or ''} {r['where'] or ''}", flush=True)
            print(f"   metric: {_curve(r['metric'])}", flush=True)
        rs = results[script.name]
        if "torch" in rs and "ember" in rs:
            print("   " + compare(rs["torch"]["metric"], rs["ember"]["metric"]), flush=True)


if __name__ == "__main__":
    main()
