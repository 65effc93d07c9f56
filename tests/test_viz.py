"""ember.viz.make_dot: the DOT text names the nodes as torch names them, leaves from params."""
import numpy as np

from oracle import torch, ember


def _graph(lib):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.ones(3, 2))
    x = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = ((x @ w).tanh() * 2).sum()
    return out, w


def _names(lib, fn, acc=None):
    acc = set() if acc is None else acc
    if fn is None or type(fn).__name__ in acc and type(fn).__name__ != "AccumulateGrad":
        return acc
    acc.add(type(fn).__name__)
    for n, _ in fn.next_functions:
        _names(lib, n, acc)
    return acc


def test_dot_source_has_torchs_node_names_and_param_names(tmp_path):
    out, w = _graph(ember)
    dot = ember.viz.make_dot(out, params={"weight": w}, show_saved=True)
    src = dot.source
    tout, _ = _graph(torch)
    for name in _names(torch, tout.grad_fn) - {"AccumulateGrad"}:
        assert f'"{name}' in src, name
    assert "weight" in src and "lightblue" in src and "saved" in src and "bytes" in src
    path = tmp_path / "g.dot"
    path.write_text(src)
    assert path.read_text().startswith("digraph")
