"""Pictures of the backward graph, in the manner of pytorchviz (``make_dot``).

Uses the optional ``graphviz`` Python package (``pip install 'ember[viz]'``); rendering also needs Graphviz's
``dot`` program (``make viz``, or ``apt-get install graphviz``). Without the package, ``make_dot`` returns a
``DotSource``: the same DOT text as ``.source``, and ``render()`` runs ``dot`` itself when it is installed.
"""
from __future__ import annotations

import os
import shutil
import subprocess

from ._tensor import Tensor
from .autograd.graph import AccumulateGrad, _param_names, _saved_arrays

__all__ = ["make_dot", "DotSource"]

INSTALL_HINT = ("drawing the graph needs the 'graphviz' Python package (pip install 'ember[viz]') and Graphviz's "
                "'dot' program (make viz, or apt-get install graphviz)")
_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                  fontname="monospace")


class DotSource:
    """DOT text with graphviz.Digraph's ``source``/``save``/``render``, for when graphviz is not installed."""

    def __init__(self, lines: list[str]) -> None:
        attrs = " ".join(f"{k}={v}" for k, v in _NODE_ATTR.items())
        self.source = "digraph {\n\tgraph [size=\"12,12\"]\n\tnode [" + attrs + "]\n" + \
            "".join("\t" + line + "\n" for line in lines) + "}\n"

    def save(self, filename: str = "graph.dot", directory: str | None = None) -> str:
        path = os.path.join(directory, filename) if directory else filename
        with open(path, "w") as f:
            f.write(self.source)
        return path

    def render(self, filename: str = "graph", directory: str | None = None, format: str = "svg",  # noqa: A002
               cleanup: bool = False, *, view: bool = False, engine: str | None = None, quiet: bool = False) -> str:
        """Write the DOT text and run Graphviz (``engine``, default ``dot``) on it; returns the picture's path.
        ``quiet`` hides Graphviz's messages; opening a viewer (``view=True``) is not supported here."""
        if view:
            raise NotImplementedError(f"DotSource.render(view=True) is not supported: open the returned path "
                                      f"({INSTALL_HINT} for graphviz's own viewer)")
        dot_path = self.save(filename if filename.endswith(".dot") else filename + ".dot", directory)
        exe = shutil.which("dot")
        if exe is None:
            raise RuntimeError(f"{INSTALL_HINT}; the DOT text was written to {dot_path}")
        out = os.path.splitext(dot_path)[0] + "." + format
        cmd = [exe] + ([f"-K{engine}"] if engine else []) + [f"-T{format}", dot_path, "-o", out]
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL if quiet else None)
        if cleanup:
            os.remove(dot_path)
        return out

    def __repr__(self) -> str:
        return f"DotSource({len(self.source)} characters of DOT text; {INSTALL_HINT})"


def _size(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _saved_label(fn, i: int, arr) -> str:
    names = getattr(type(fn), "save", ())
    name = names[i] if i < len(names) else f"saved {i}"
    return f"{name}\n{_size(arr.shape)} {arr.dtype}\n{arr.nbytes} bytes"


def dot_lines(var, params=None, show_attrs: bool = False, show_saved: bool = False,
              max_attr_chars: int = 50) -> list[str]:
    """The node and edge statements of ``make_dot``'s picture (DOT syntax, one per line)."""
    names = _param_names(params)
    outputs = [var] if isinstance(var, Tensor) else list(var)
    lines = []
    seen: set[int] = set()
    stack = []

    def tensor_box(t, color: str, name: str = "") -> str:  # pytorchviz's get_var_name: "name\n (sizes)"
        lines.append(f"t{id(t)} [label={_quote((name or names.get(id(t), '')) + chr(10) + ' ' + _size(t.shape))} "
                     f"fillcolor={color}]")
        return f"t{id(t)}"

    boxed: set[int] = set()

    def add_tensor(t, color: str) -> str:  # pytorchviz's add_base_tensor
        box = f"t{id(t)}"
        if id(t) in boxed:
            return box
        boxed.add(id(t))
        tensor_box(t, color)
        if t._grad_fn is not None:  # (a leaf output is its own box)
            lines.append(f"{id(t._grad_fn)} -> {box}")
            stack.append(t._grad_fn)
        if t._base is not None:  # a view: its base too (a darker olive), joined by a dotted edge
            lines.append(f"{add_tensor(t._base, 'darkolivegreen3')} -> {box} [style=dotted]")
        return box

    for out in outputs:
        add_tensor(out, "darkolivegreen1")
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if type(fn) is AccumulateGrad:  # as pytorchviz: the parameter's box feeds its AccumulateGrad node
            v = fn.variable
            lines.append(f"{tensor_box(v, 'lightblue')} -> {id(fn)}")
            lines.append(f"{id(fn)} [label={_quote('AccumulateGrad')}]")
            continue
        label = fn.name().rsplit("::", 1)[-1]
        if show_attrs:
            for a in getattr(type(fn), "_attr_names", ()):
                if a.startswith("_"):
                    continue
                try:
                    val = repr(getattr(fn, a))
                except AttributeError:
                    continue
                label += f"\n{a}: {val[:max_attr_chars]}"
        lines.append(f"{id(fn)} [label={_quote(label)}]")
        if show_saved:
            for i, arr in _saved_arrays(fn):
                sid = f"{id(fn)}_saved{i}"
                lines.append(f"{sid} [label={_quote(_saved_label(fn, i, arr))} fillcolor=orange]")
                lines.append(f"{sid} -> {id(fn)} [style=dotted dir=none]")
        # an input used twice is two edges, as pytorchviz draws it
        for nxt, _ in fn._next:
            if nxt is not None:
                lines.append(f"{id(nxt)} -> {id(fn)}")
                stack.append(nxt)
    return lines


def make_dot(var, params=None, show_attrs: bool = False, show_saved: bool = False, max_attr_chars: int = 50):
    """The graph that produced ``var`` (a tensor or a sequence of tensors) as a ``graphviz.Digraph``.

    Node names are torch's (``MulBackward0``). As pytorchviz draws it, each leaf that requires grad is a blue box
    named from ``params`` (a mapping or ``model.named_parameters()``) feeding its ``AccumulateGrad`` node, outputs
    are olive (a view's base a darker olive, dotted), and with ``show_saved`` the tensors each
    node saved for backward are orange boxes with shape, dtype and size in bytes. ``render()`` draws SVG or
    PNG. Without the graphviz package the result is a ``DotSource`` with the same ``.source`` text."""
    if params is not None and not hasattr(params, "items"):
        params = list(params)  # a named_parameters() generator is read once
    lines = dot_lines(var, params, show_attrs, show_saved, max_attr_chars)
    try:
        import graphviz  # noqa: PLC0415 - optional dependency
    except ImportError:
        return DotSource(lines)
    g = graphviz.Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))
    g.body.extend("\t" + line + "\n" for line in lines)
    return g
