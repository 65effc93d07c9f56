"""autograd.explain: each cause it knows, produced by a small script, named with the script's own line."""
import runpy
import textwrap

import numpy as np
import pytest

from oracle import ember, torch
from ember.autograd import _provenance

HEAD = "import ember as torch\nfrom ember.autograd import explain\n"

# cause -> script; the line marked `# <-` is the one the explanation must name (when it names lines)
SCRIPTS = {
    "not_leaf": """
        w = torch.randn(3, requires_grad=True)
        y = w * 2
        (y * 3).sum().backward()
        result = explain(y)
    """,
    "no_grad": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        with torch.no_grad():  # <-
            h = w * 2  # <-
        (h * v).sum().backward()
        result = explain(w)
    """,
    "no_grad_result": """
        w = torch.randn(3, requires_grad=True)
        with torch.no_grad():  # <-
            h = w * 2  # <-
        result = explain(h)
    """,
    "inference_mode": """
        w = torch.randn(3, requires_grad=True)
        with torch.inference_mode():  # <-
            h = w * 2
        result = explain(h)
    """,
    "detached": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        a = (w * 3).detach()  # <-
        (a * v).sum().backward()
        result = explain(w)
    """,
    "detached_result": """
        w = torch.randn(3, requires_grad=True)
        a = w.detach()  # <-
        result = explain(a)
    """,
    "data": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        loss = (w.data * v).sum()  # <-
        loss.backward()
        result = explain(w)
    """,
    "numpy": """
        import numpy as np
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        arr = np.tanh(w.detach().numpy())  # <-
        (torch.from_numpy(arr) * v).sum().backward()
        result = explain(w)
    """,
    "tolist": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        s = torch.tensor((w * 2).tolist())  # <-
        (s * v).sum().backward()
        result = explain(w)
    """,
    "item": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        scale = w.sum().item()  # <-
        (v * scale).sum().backward()
        result = explain(w)
    """,
    "float": """
        w = torch.randn(1, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        scale = float(w * 2)  # <-
        (v * scale).sum().backward()
        result = explain(w)
    """,
    "copy_construct": """
        import warnings
        warnings.simplefilter("ignore")
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        c = torch.tensor(w)  # <-
        loss = (c * v).sum()
        loss.backward()
        result = explain(w)
    """,
    "integer_dtype": """
        idx = torch.tensor([0, 2])
        v = torch.randn(3, requires_grad=True)
        v[idx].sum().backward()
        result = explain(idx)
    """,
    "requires_grad_late": """
        u = torch.randn(3)
        v = torch.randn(3, requires_grad=True)
        z = (u * 2).sum()  # <-
        u.requires_grad_()  # <-
        (z * v).sum().backward()
        result = explain(u)
    """,
    "unreachable": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        loss = (v * v).sum()
        loss.backward()
        result = explain(w)
    """,
    "zero_path": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        loss = (torch.relu(w - 100) * v).sum()
        loss.backward(retain_graph=True)
        result = explain(w)
    """,
    "zero_path_masked": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        loss = (w.masked_fill(torch.ones(3, dtype=torch.bool), 0.0) * v).sum()
        loss.backward(retain_graph=True)
        result = explain(w)
    """,
    "zero_path_freed": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        loss = (torch.relu(w - 100) * v).sum()
        loss.backward()
        result = explain(w)
    """,
    "hook": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        w.register_hook(lambda g: g * 0)  # <-
        loss = (w * v).sum()
        loss.backward(retain_graph=True)
        result = explain(w)
    """,
    "hook_on_intermediate": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        y = w.exp()
        y.register_hook(lambda g: torch.zeros_like(g))  # <-
        loss = (y * v).sum()
        loss.backward(retain_graph=True)
        result = explain(w)
    """,
    "hook_on_node": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        y = w.exp()
        y.grad_fn.register_hook(lambda gi, go: (torch.zeros_like(gi[0]),))  # <-
        loss = (y * v).sum()
        loss.backward(retain_graph=True)
        result = explain(w)
    """,
    "hook_freed": """
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        w.register_hook(lambda g: g * 0)  # <-
        (w * v).sum().backward()
        result = explain(w)
    """,
    "not_run": """
        w = torch.randn(3, requires_grad=True)
        loss = (w * 2).sum()
        loss.backward(retain_graph=True)
        w.grad = None
        result = explain(w)
    """,
    "ok": """
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        result = w.explain_grad()
    """,
    "unreachable_temporary_root": """
        w = torch.randn(3, requires_grad=True)
        (torch.randn(3, requires_grad=True) * 2).sum().backward()
        result = explain(w)
    """,
    "no_backward": """
        result = explain(torch.randn(3, requires_grad=True))
    """,
    "not_requires_grad": """
        c = torch.randn(3)
        result = explain(c)
    """,
}
CAUSE = {"no_grad_result": "no_grad", "detached_result": "detached", "data": "detached", "numpy": "detached",
         "tolist": "numpy", "item": "numpy", "float": "numpy", "copy_construct": "numpy", "zero_path_masked": "zero_path", "zero_path_freed": "zero_path",
         "hook_on_intermediate": "hook", "unreachable_temporary_root": "no_backward", "hook_on_node": "hook", "hook_freed": "hook"}


@pytest.fixture(autouse=True)
def fresh_records():
    for ring in (_provenance.breaks, _provenance.blocks, _provenance.flags, _provenance.hooks):
        ring.clear()
    _provenance.last_roots = []
    yield


def _run(tmp_path, key):
    body = textwrap.dedent(SCRIPTS[key])
    path = tmp_path / f"script_{key}.py"
    path.write_text(HEAD + body)
    lines = (HEAD + body).splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith("# <-")]
    return runpy.run_path(str(path))["result"], str(path), marked


@pytest.mark.parametrize("key", sorted(SCRIPTS))
def test_each_cause_is_named_with_its_line(tmp_path, key):
    result, path, marked = _run(tmp_path, key)
    assert isinstance(result, ember.autograd.Explanation)
    assert result.cause == CAUSE.get(key, key), str(result)
    named = [line for f, line, _ in result.sites if f == path]
    assert sorted(named) == marked, str(result)
    text = str(result)
    assert result.message in text and all(f"line {n}" in text for n in marked)


def test_messages_say_what_to_do(tmp_path):
    assert "retain_grad()" in str(_run(tmp_path, "not_leaf")[0])
    assert "ReluBackward0" in str(_run(tmp_path, "zero_path")[0])
    assert "dead ReLU" in str(_run(tmp_path, "zero_path")[0])
    assert "masked out" in str(_run(tmp_path, "zero_path_masked")[0])
    freed = _run(tmp_path, "zero_path_freed")[0]
    assert not freed.exact and "ReluBackward0" in freed.nodes and "retain_graph=True" in freed.message
    assert "`w`" in str(_run(tmp_path, "detached")[0])
    assert ".tolist()" in str(_run(tmp_path, "tolist")[0])


def test_the_probe_leaves_no_trace(tmp_path):
    result, _, _ = _run(tmp_path, "zero_path")
    x = ember.randn(3, requires_grad=True)
    y = (x.exp() * 2).relu()
    loss = y.sum()
    nodes = ember.autograd.graph._walk([loss.grad_fn])
    before = [(n._hooks is None) for n in nodes]
    ember.autograd.explain(x, root=loss)
    assert [(n._hooks is None) for n in nodes] == before
    assert x.grad is None  # nothing accumulated
    loss.backward()  # the graph is intact
    ref = torch.tensor(x.detach().numpy(), requires_grad=True)
    (ref.exp() * 2).relu().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-6)


def test_cuts_made_by_ember_itself_are_not_recorded():
    x = ember.randn(3, requires_grad=True)
    ember.nn.utils.clip_grad_norm_([x], 1.0)
    with ember.autograd.graph.save_on_cpu():
        (x * 2).sum().backward()
    opt = ember.optim.SGD([x], lr=0.1)
    opt.step()
    assert not _provenance.breaks and not _provenance.blocks


def test_zero_paths_are_all_named_and_anomaly_mode_gives_their_lines(tmp_path):
    import warnings

    w = ember.randn(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            a = ember.relu(w - 100)  # relu-line
            b = w.masked_fill(ember.ones(3, dtype=ember.bool), 0.0)
    loss = (a + b).sum()
    r = ember.autograd.explain(w, root=loss)
    assert r.cause == "zero_path" and sorted(r.nodes) == ["MaskedFillBackward0", "ReluBackward0"]
    assert "relu-line" in r.sites[0][2] or "relu-line" in r.sites[1][2]
    assert w.grad is None


def test_a_parameter_is_named_through_its_module(tmp_path):
    model = ember.nn.Linear(2, 1)
    x = ember.randn(4, 2)
    with ember.no_grad():
        h = model(x)
    loss = (h * ember.randn(4, 1, requires_grad=True)).sum()
    loss.backward()
    r = ember.autograd.explain(model.weight)
    assert r.cause == "no_grad" and r.name == "`model.weight`"
    assert [s[2] for s in r.sites] == ["with ember.no_grad():", "h = model(x)"]


# explain called from a helper function (not the frame that built the graph), with root=, after backward freed
# the graph: the cause is found from what was recorded (NOTE [provenance]: records keep what the names on their
# lines meant), so the helper's own name for the tensor does not matter.
HELPER = """
def diagnose(param, root):
    return explain(param, root=root)


def train():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1))
    w = torch.randn(3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
{body}
    loss.backward()
    return loss, {target}


loss, target = train()
result = diagnose(target, loss)
"""
HELPER_CASES = {
    "no_grad": ("""
    with torch.no_grad():  # <-
        h = w * 2  # <-
    loss = (h * v).sum()""", "w"),
    "inference_mode": ("""
    with torch.inference_mode():  # <-
        h = w * 2  # <-
    loss = (h.clone() * v).sum()""", "w"),
    "detached": ("""
    a = (w * 3).detach()  # <-
    loss = (a * v).sum()""", "w"),
    "data": ("""
    loss = (w.data * v).sum()  # <-""", "w"),
    "numpy": ("""
    arr = np.tanh((w * 2).detach().numpy())  # <-
    loss = (torch.from_numpy(arr) * v).sum()""", "w"),
    "item": ("""
    scale = (w * 2).sum().item()  # <-
    loss = (v * scale).sum()""", "w"),
    "tolist": ("""
    s = torch.tensor((w * 2).tolist())  # <-
    loss = (s * v).sum()""", "w"),
    "module_no_grad": ("""
    with torch.no_grad():  # <-
        feats = model[0](v)  # <-
    loss = model[1](feats * v).sum()""", "model[0].weight"),
    "module_item": ("""
    scale = model(v).sum().item()  # <-
    loss = (v * scale).sum()""", "model[0].bias"),
}
HELPER_CAUSE = {"data": "detached", "numpy": "detached", "item": "numpy", "tolist": "numpy", "module_no_grad": "no_grad",
                "module_item": "numpy"}


@pytest.mark.parametrize("key", sorted(HELPER_CASES))
def test_explain_from_a_helper_after_backward_names_the_line(tmp_path, key):
    body, target = HELPER_CASES[key]
    text = "import numpy as np\n" + HEAD + HELPER.format(body=body, target=target)
    path = tmp_path / f"helper_{key}.py"
    path.write_text(text)
    marked = [i + 1 for i, line in enumerate(text.splitlines()) if line.rstrip().endswith("# <-")]
    result = runpy.run_path(str(path))["result"]
    assert result.cause == HELPER_CAUSE.get(key, key), str(result)
    assert sorted(line for f, line, _ in result.sites if f == str(path)) == marked, str(result)
