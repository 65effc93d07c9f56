"""ember.viz.make_dot: the DOT text and the rendered SVG name the nodes as torch names them, leaves from params."""
import re
from collections import Counter
import shutil
import sys

import numpy as np
import pytest

from oracle import torch, ember, torch_graph_ops


def _graph(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    x = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = ((model(x)).tanh() * 2).sum()
    return out, model


def _labels(src: str) -> list[str]:
    """The first line of each node label in DOT text."""
    return [m.split("\\n")[0] for m in re.findall(r'\[label="([^"]*)"', src)]


def test_dot_source_has_torchs_node_names_and_param_names(tmp_path):
    out, model = _graph(ember)
    dot = ember.viz.make_dot(out, params=model.named_parameters(), show_saved=True)
    src = dot.source
    tout, _ = _graph(torch)
    leaves = {n for n, _ in model.named_parameters()}
    ops = Counter(o for o in _labels(src) if o not in leaves and o and not o.startswith("(")
                  and o not in ("self", "other", "result", "mat1", "mat2", "third", "AccumulateGrad"))
    assert ops == torch_graph_ops(tout.grad_fn)
    assert _labels(src).count("AccumulateGrad") == 4
    for name, _ in model.named_parameters():
        assert f'label="{name}\\n' in src
    assert src.count("lightblue") == 4 and "darkolivegreen1" in src
    path = tmp_path / "g.dot"
    path.write_text(src)
    assert path.read_text().startswith("digraph")


def test_saved_tensors_show_shape_dtype_and_bytes():
    x = ember.randn(2, 3, requires_grad=True)
    y = (x * x.exp()).sum()
    src = ember.viz.make_dot(y, show_saved=True).source
    saved = y.grad_fn.next_functions[0][0]._saved_self
    assert f"self\\n(2, 3) float32\\n{saved.nbytes} bytes" in src
    assert "orange" in src
    assert "orange" not in ember.viz.make_dot(y).source
    y.backward()  # freed saved tensors are no longer drawn
    assert "orange" not in ember.viz.make_dot(y, show_saved=True).source


def test_show_attrs_lists_node_attributes():
    x = ember.randn(2, 3, requires_grad=True)
    src = ember.viz.make_dot(x.sum(1), show_attrs=True).source
    assert "SumBackward" in src and "keepdim: False" in src


def test_without_graphviz_the_dot_text_is_still_there(monkeypatch, tmp_path):
    out, model = _graph(ember)
    with_pkg = ember.viz.make_dot(out, params=dict(model.named_parameters()))
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz -> ImportError
    dot = ember.viz.make_dot(out, params=dict(model.named_parameters()))
    assert isinstance(dot, ember.viz.DotSource)
    assert "pip install 'ember[viz]'" in repr(dot)
    assert sorted(_labels(dot.source)) == sorted(_labels(with_pkg.source))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="pip install 'ember\\[viz\\]'"):
        dot.render(str(tmp_path / "g"))
    assert (tmp_path / "g.dot").read_text() == dot.source


def _svg_node_names(svg: str) -> list[str]:
    groups = re.findall(r'<g id="node\d+" class="node">(.*?)</g>', svg, flags=re.S)
    return [re.findall(r"<text[^>]*>([^<]*)</text>", g)[0] for g in groups]


@pytest.mark.parametrize("with_package", [True, False])
def test_rendered_svg_nodes_match_torchs_names(tmp_path, monkeypatch, with_package):
    # `make test` installs Graphviz (the viz target); a machine without it fails here rather than skipping
    assert shutil.which("dot"), "Graphviz's dot is missing: run `make viz` (apt-get install graphviz)"
    if not with_package:
        monkeypatch.setitem(sys.modules, "graphviz", None)
    out, model = _graph(ember)
    path = ember.viz.make_dot(out, params=dict(model.named_parameters())).render(
        str(tmp_path / "graph"), format="svg")
    svg = open(path).read()
    names = _svg_node_names(svg)
    tout, _ = _graph(torch)
    leaves = {n for n, _ in model.named_parameters()}
    ops = Counter(n for n in names if n not in leaves and n.strip() and not n.strip().startswith("(")
                  and n != "AccumulateGrad")
    assert ops == torch_graph_ops(tout.grad_fn)
    assert sorted(n for n in names if n in leaves) == sorted(leaves)
    assert names.count("AccumulateGrad") == len(leaves)
    assert len(names) == sum(ops.values()) + 2 * len(leaves) + 1  # ops + leaves and their nodes + the output


def test_render_png(tmp_path):
    assert shutil.which("dot"), "Graphviz's dot is missing: run `make viz` (apt-get install graphviz)"
    out, model = _graph(ember)
    path = ember.viz.make_dot(out, params=dict(model.named_parameters())).render(str(tmp_path / "g"), format="png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def _structure(src: str) -> tuple:
    """A DOT picture up to node ids: its boxes (label, fill colour) and its edges between boxes, as multisets."""
    boxes = {}
    for nid, label, fill in re.findall(r'(\w+) \[label=("(?:[^"\\]|\\.)*"|\w+)(?: fillcolor=(\w+))?', src):
        boxes[nid] = (label.strip('"').replace("\\n", "\n"), fill)
    edges = Counter((boxes[a], boxes[b]) for a, b in re.findall(r"(\w+) -> (\w+)", src))
    return Counter(boxes.values()), edges


@pytest.mark.parametrize("case", ["mlp", "shared weight", "view output", "leaf output", "two outputs"])
def test_picture_matches_pytorchviz(case):
    """The same graph drawn by pytorchviz (torchviz.make_dot) on torch: the same boxes (labels and colours, the
    AccumulateGrad nodes between each parameter box and the graph included) and the same edges."""
    import torchviz  # in the test extra: the oracle of this picture (never skipped)

    def build(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        x = lib.ones(2, 3)
        if case == "mlp":
            return model(x).tanh().sum(), model
        if case == "shared weight":
            w = model[0].weight
            return ((x @ w.t()) * (x @ w.t())).sum(), model
        if case == "view output":
            return model(x)[0], model
        if case == "leaf output":
            return model[0].weight, model
        return (model(x).sum(), model[0](x).mean()), model

    (eo, em), (to, tm) = build(ember), build(torch)
    ours = ember.viz.make_dot(eo, params=dict(em.named_parameters())).source
    theirs = torchviz.make_dot(to, params=dict(tm.named_parameters())).source
    assert _structure(ours) == _structure(theirs)


def test_dot_source_render_options(tmp_path, monkeypatch):
    """The fallback DotSource takes graphviz's engine/quiet/view: engine and quiet honoured, view refused, any other
    keyword a TypeError (nothing accepted and ignored)."""
    assert shutil.which("dot"), "Graphviz's dot is missing: run `make viz` (apt-get install graphviz)"
    out, model = _graph(ember)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    dot = ember.viz.make_dot(out, params=dict(model.named_parameters()))
    plain = open(dot.render(str(tmp_path / "dot"), format="plain")).read()
    circo = open(dot.render(str(tmp_path / "circo"), format="plain", engine="circo", quiet=True)).read()
    assert plain.split("\n")[0] != circo.split("\n")[0]  # another layout: another graph size line
    with pytest.raises(NotImplementedError, match="view=True"):
        dot.render(str(tmp_path / "v"), view=True)
    with pytest.raises(TypeError, match="renderer"):
        dot.render(str(tmp_path / "r"), renderer="cairo")
