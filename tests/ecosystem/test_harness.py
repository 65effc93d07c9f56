"""The ecosystem harness (ecosystem/, `make ecosystem`): the torch alias gives ember's modules under torch's names
without loading torch, and the report counts and groups results as described."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from ecosystem import report
from ecosystem.causes import classify

ROOT = Path(__file__).resolve().parents[2]


def test_alias_gives_ember_under_torch_names_without_loading_torch():
    # real torch IS installed in this venv: the alias must still win, and torch's own files must never load
    code = textwrap.dedent("""
        import sys
        import ecosystem.torch_alias
        import torch, torch.nn.functional as F
        from torch.utils.data import DataLoader
        from torch import nn
        import ember, ember.nn.functional, ember.utils.data
        assert torch is ember and F is ember.nn.functional and nn is ember.nn
        assert DataLoader is ember.utils.data.DataLoader
        assert isinstance(torch.zeros(2), ember.Tensor)
        try:
            import torch.no_such_module
        except ModuleNotFoundError as e:
            assert e.name == "torch.no_such_module", e.name
        else:
            raise AssertionError("imported a module ember lacks")
        real = [m for m, mod in sys.modules.items() if "site-packages/torch" in str(getattr(mod, "__file__", ""))]
        assert not real, real
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_alias_imports_the_modules_ember_builds_at_run_time():
    # torch.backends.cudnn and the config modules are module objects ember makes and registers itself; the alias
    # (importlib.util.find_spec) needs their __spec__, as `import torch.backends.cudnn as cudnn` in dcgan does
    code = textwrap.dedent("""
        import importlib.util
        import ecosystem.torch_alias
        import torch.backends.cudnn as cudnn, torch.backends.mps, torch._dynamo.config, torch._inductor.config
        import ember
        assert cudnn is ember.backends.cudnn
        assert torch._dynamo.config is ember._dynamo.config
        for name in ("ember.backends.cudnn", "ember.backends.cuda", "ember._dynamo.config"):
            assert importlib.util.find_spec(name) is not None
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def _junit(tmp_path, name, cases):
    body = "".join(cases)
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')
    return p


def test_report_counts_and_reasons(tmp_path):
    torch_xml = _junit(tmp_path, "t.xml", [
        '<testcase classname="tests.test_a" name="test_1"/>',
        '<testcase classname="tests.test_a" name="test_2"/>',
        '<testcase classname="tests.test_b" name="test_3"/>',
        '<testcase classname="tests.test_b" name="test_4"><failure message="AssertionError: off"/></testcase>',
        '<testcase classname="tests.test_c" name="test_5"><skipped message="no gpu"/></testcase>',
    ])
    ember_xml = _junit(tmp_path, "e.xml", [
        '<testcase classname="tests.test_a" name="test_1"/>',
        '<testcase classname="tests.test_a" name="test_2"><failure message="TypeError: f() got an unexpected '
        'keyword argument \'size\'"/></testcase>',
        '<testcase classname="" name="tests.test_b"><error message="collection failure">'
        "E   AttributeError: module 'ember' has no attribute 'bfloat16'</error></testcase>",
        '<testcase classname="tests.test_c" name="test_5"><skipped message="no gpu"/></testcase>',
    ])
    t_pass, both, extra, lost = report.compare(report.parse(torch_xml), report.parse(ember_xml))
    assert t_pass == {"tests.test_a::test_1", "tests.test_a::test_2", "tests.test_b::test_3"}
    assert both == {"tests.test_a::test_1"} and not extra
    assert lost == {"tests.test_a::test_2": "TypeError: f() got an unexpected keyword argument 'size'",
                    "tests.test_b::test_3": "AttributeError: module 'ember' has no attribute 'bfloat16'"}
    assert classify(lost["tests.test_a::test_2"])[1] == "sig"
    assert classify(lost["tests.test_b::test_3"]) == ("bfloat16", "bf16")


def test_unknown_reasons_group_with_numbers_blanked():
    a = classify("AssertionError: Scalars are not close: 0.715 vs 0.62 at 0x7f00aa")
    b = classify("AssertionError: Scalars are not close: 0.5 vs 1e-3 at 0x7f11bb")
    assert a == b == ("AssertionError: Scalars are not close: # vs # at 0x…", "eco")


def test_diagnosed_tests_name_their_cause_for_their_library_only():
    # NOTE [diagnosed tests]: a loss traced by hand is reported under its diagnosis whatever the assertion says
    tid = "tests.norm_tests.TestNorms::test_seminorm"
    reason = "AssertionError: 67 not less than or equal to 54"
    cause, area = classify(reason, ("torchdiffeq", tid))
    assert area == "none" and cause.startswith("random draws")
    assert classify(reason, ("another-library", tid)) == classify(reason) == (
        "AssertionError: # not less than or equal to #", "eco")
