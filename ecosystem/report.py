"""ECOSYSTEM.md from the JUnit XML of both sides: per library the tests that pass on torch, how many of those pass
on ember, and why the others do not, grouped into causes (causes.py)."""
from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

from ecosystem.causes import classify

_EXC_LINE = re.compile(r"^E\s+((?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Warning|Failed|Interrupt)\b.*)$")


def _reason(el):
    """The failure's last exception as 'Type: message' (collection errors only name it in the traceback)."""
    msg = (el.get("message") or "").strip()
    if msg and msg not in ("collection failure", "failed on setup with", "failed on teardown with"):
        return msg
    lines = [m.group(1) for m in map(_EXC_LINE.match, (el.text or "").splitlines()) if m]
    return lines[-1] if lines else msg or el.tag


def parse(xml):
    """{test id: (outcome, reason)}; outcome is passed, failed or skipped. A file that failed to import is one
    entry ``<module>::<collection>`` holding the error."""
    out = {}
    if not Path(xml).exists():
        return out
    for tc in ET.parse(xml).iter("testcase"):
        cls, name = tc.get("classname") or "", tc.get("name") or ""
        tid = f"{cls}::{name}" if cls else f"{name}::<collection>"
        outcome, reason = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                if outcome != "failed":
                    outcome, reason = "failed", _reason(child)
            elif child.tag == "skipped" and outcome == "passed":
                outcome, reason = "skipped", "skipped: " + (child.get("message") or "")
        out[tid] = outcome, reason
    return out


def _why_missing(tid, ember):
    """The reason a test that ran on torch has no result on ember: its module's collection error, if any."""
    for key, (_, reason) in ember.items():
        if key.endswith("::<collection>") and tid.startswith(key[: -len("::<collection>")]):
            return reason
    return "not collected on ember"


def compare(torch_res, ember_res):
    """(tests passing on torch, of those passing on ember, ember-only passes, {lost test id: reason})."""
    t_pass = {t for t, (o, _) in torch_res.items() if o == "passed"}
    e_pass = {t for t, (o, _) in ember_res.items() if o == "passed"}
    lost = {t: (ember_res[t][1] if t in ember_res else _why_missing(t, ember_res)) for t in sorted(t_pass - e_pass)}
    return t_pass, t_pass & e_pass, e_pass - t_pass - {t for t in torch_res if t.endswith("<collection>")}, lost


def _cell(text, width=150):
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def write(path, libraries, results, timings, missing, versions):
    rows, all_causes, sections = [], Counter(), []
    area_of, total, commits = {}, [0, 0], set()
    for lib in libraries:
        t_xml, e_xml = results / f"{lib.name}.torch.xml", results / f"{lib.name}.ember.xml"
        if lib.name in missing or not (t_xml.exists() and e_xml.exists()):
            if lib.name in missing:
                rows.append(f"| {lib.name} | {lib.version} | not run: {missing[lib.name]} | | | | |")
            continue
        torch_res, ember_res = parse(t_xml), parse(e_xml)
        t_pass, both, extra, lost = compare(torch_res, ember_res)
        total[0] += len(t_pass)
        total[1] += len(both)
        ratio = f"{100 * len(both) / len(t_pass):.1f}%" if t_pass else "-"
        tt, te = (t if isinstance(t, dict) else None for t in (timings.get(f"{lib.name}.{s}") for s in ("torch", "ember")))
        times = f"{tt['cpu']:.0f} s / {te['cpu']:.0f} s" if tt and te else ""
        if te:
            commits.add(te["commit"])
        rows.append(f"| {lib.name} | {lib.version} | {len(t_pass)} | {len(both)} | {ratio} | {len(extra)} | {times} |")
        causes, example = Counter(), {}
        for tid, reason in lost.items():
            label, area = classify(reason, (lib.name, tid))
            causes[label] += 1
            example.setdefault(label, tid)
            area_of[label] = area
        all_causes.update(causes)
        src = "its PyPI source archive" if lib.tests_from == "sdist" else f"the repository {lib.tests_from}"
        lines = [f"### {lib.name} {lib.version}", "", f"{lib.note}. Tests from {src}; "
                 f"`pytest {' '.join(lib.tests)}`" + "".join(f" with {k}={v}" for k, v in lib.env.items()) + ".", ""]
        if causes:
            lines += ["| tests lost | cause | area | e.g. |", "|---:|---|---|---|"]
            lines += [f"| {n} | {_cell(c)} | {area_of[c]} | `{_cell(example[c], 90)}` |" for c, n in causes.most_common()]
        else:
            lines.append("Every test that passes on torch passes on ember.")
        if extra:
            lines += ["", f"Passing on ember but not on torch: {', '.join(f'`{t}`' for t in sorted(extra)[:5])}"
                      + (" ..." if len(extra) > 5 else "")]
        sections.append("\n".join(lines))
    ratio = f"{100 * total[1] / total[0]:.1f}%" if total[0] else "-"
    rows.append(f"| **all** | | **{total[0]}** | **{total[1]}** | **{ratio}** | | |")
    torch_v = next((p for p in versions.get("torch", []) if p.lower().startswith("torch==")), "torch")
    text = [
        "# ember and third-party libraries",
        "",
        f"Written by `make ecosystem` (ecosystem/run.py) on {datetime.date.today()}; the ember side ran at commit "
        f"{', '.join(sorted(commits)) or versions.get('commit', '?')} of this repository. Each library's own tests run twice: in a venv with {torch_v}, and in a "
        "venv without torch where `import torch` gives ember (ecosystem/torch_alias.py, installed by a `.pth` "
        "line before anything imports torch). A test counts for ember when it passes on torch and on ember.",
        "",
        "| library | version | pass on torch | pass on ember (of those) | ratio | ember only | CPU time torch / ember |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "## Causes, by tests lost (all libraries)",
        "",
        "`area` names who owns the fix: eco (ecosystem helper), sig (signatures, keywords, out=, deprecated "
        "overloads), bf16 (bfloat16, amp), surf (jit/_dynamo/pytree/cuda/sparse surface), cplx (complex), dist "
        "(distributions), rel (reliability: NaN gradients, index bounds); none: nothing in ember to fix (a loss "
        "diagnosed by hand, NOTE [diagnosed tests] in ecosystem/causes.py). A cause whose fix is on another "
        "helper's branch, not yet on main, still counts here.",
        "",
        "| tests | cause | area |",
        "|---:|---|---|",
        *[f"| {n} | {_cell(c)} | {area_of[c]} |" for c, n in all_causes.most_common()],
        "",
        "## Per library",
        "",
        "\n\n".join(sections),
        "",
        "## Running it",
        "",
        "`make ecosystem` runs every library; `make ecosystem ECO_LIBS=einops,torchsde` some of them. Venvs, "
        "downloads and JUnit XML live in `.ecosystem/`. Libraries whose release ships without tests take them from "
        "a git snapshot of their repository under `$ECO_REPOS/<owner>+<name>/repo` (default /work/.mirror); see "
        "NOTE [tests from repositories] in ecosystem/run.py.",
        "",
        "Installed on the ember side: " + ", ".join(f"`{p}`" for p in versions.get("ember", [])),
        "",
    ]
    Path(path).write_text("\n".join(text))


def lost_by_cause(libraries, results):
    """{cause: [test ids]} over all libraries, for reading what a cause covers."""
    out = defaultdict(list)
    for lib in libraries:
        t_xml, e_xml = results / f"{lib.name}.torch.xml", results / f"{lib.name}.ember.xml"
        if t_xml.exists() and e_xml.exists():
            for tid, reason in compare(parse(t_xml), parse(e_xml))[3].items():
                out[classify(reason, (lib.name, tid))[0]].append(f"{lib.name}: {tid}: {reason[:200]}")
    return out
