"""Pictures of the backward graph, in the manner of pytorchviz (``make_dot``).

Uses the optional ``graphviz`` Python package (``pip install 'ember[viz]'``; rendering also needs
Graphviz's ``dot`` program, e.g. ``apt-get install graphviz``). Without it, ``make_dot`` still
returns an object whose ``.source`` is the DOT text and whose ``render()`` writes the .dot file.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Mapping

from ._tensor import Tensor
from .autograd.graph import AccumulateGrad, SavedTensor

__all__ = ["make_dot"]

_INSTALL = ("drawing the graph needs the 'graphviz' package (pip install graphviz) and Graphviz's 'dot' program "
            "(apt-get install graphviz)")


class DotSource:
    """DOT text with graphviz.Digraph's ``source``/``render``/``save`` for when graphviz is missing."""

    def __init__(self, lines: list[str]) -> None:
        self.source = "digraph {\n" + "\n".join("\t" + line for line in lines) + "\n}\n"

    def save(self, filename: str = "graph.dot", directory: str | None = None) -> str:
        path = os.path.join(directory, filename) if directory else filename
        with open(path, "w") as f:
            f.write(self.source)
        return path

    def render(self, filename: str = "graph", directory: str | None = None, format: str = "svg",  # noqa: A002
               cleanup: bool = False, **kwargs) -> str:
        dot_path = self.save(filename + ".dot" if not filename.endswith(".dot") else filename, directory)
        exe = shutil.which("dot")
        if exe is None:
            raise RuntimeError(f"{_INSTALL}; the DOT text was written to {dot_path}")
        out = os.path.splitext(dot_path)[0] + "." + format
        subprocess.run([exe, f"-T{format}", dot_path, "-o", out], check=True)
        if cleanup:
            os.remove(dot_path)
        return out

    def _repr_svg_(self):  # pragma: no cover - notebooks
        return None


def _size(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _quote(s: str) -> str:
    return '"' + s.replace('"', '\\"') + '"'


def make_dot(var, params: Mapping[str, Tensor] | None = None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50):
    """The graph that produced ``var`` (a tensor or a sequence of tensors) as a Digraph.

    Leaves that require grad are blue boxes named from ``params`` (e.g. ``dict(model.named_parameters())``),
    outputs are dark olive, saved tensors (``show_saved``) orange with shape, dtype and size in bytes.
    """
    names = {id(v): k for k, v in (params or {}).items()}
    lines = ['node [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]',
             "size=\"12,12\""]
    seen: set[int] = set()
    outputs = [var] if isinstance(var, Tensor) else list(var)

    def node_id(obj) -> str:
        return str(id(obj))

    def add_node(fn) -> None:
        if id(fn) in seen:
            return
        seen.add(id(fn))
        if isinstance(fn, AccumulateGrad):
            v = fn.variable
            label = (names.get(id(v), "") + "\n" if id(v) in names else "") + _size(v.shape)
            lines.append(f"{node_id(fn)} [label={_quote(label)} fillcolor=lightblue]")
        else:
            label = fn.name().rsplit("::", 1)[-1]
            if show_attrs:
                for a in getattr(type(fn), "attrs", ()):
                    val = repr(getattr(fn, a, None))
                    label += f"\n{a}: {val[:max_attr_chars]}"
            lines.append(f"{node_id(fn)} [label={_quote(label)}]")
            if show_saved and fn._saved and not isinstance(fn._saved, str):
                for i, s in enumerate(fn._saved):
                    if type(s) is SavedTensor and not s._freed:
                        arr = s._data if s._data is not None else (s._tensor._data if s._tensor is not None else None)
                        if arr is None:
                            continue
                        sid = f"{node_id(fn)}_saved{i}"
                        text = f"saved {i}\n{_size(arr.shape)} {arr.dtype}\n{arr.nbytes} bytes"
                        lines.append(f"{sid} [label={_quote(text)} fillcolor=orange]")
                        lines.append(f"{sid} -> {node_id(fn)} [style=dotted dir=none]")

    stack = []
    for out in outputs:
        oid = f"out{id(out)}"
        lines.append(f"{oid} [label={_quote(_size(out.shape))} fillcolor=darkolivegreen1]")
        fn = out.grad_fn if out.grad_fn is not None else (out._grad_accumulator() if out.requires_grad else None)
        if fn is not None:
            lines.append(f"{node_id(fn)} -> {oid} [style=dashed]")
            stack.append(fn)
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        add_node(fn)
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                lines.append(f"{node_id(nxt)} -> {node_id(fn)}")
                stack.append(nxt)
    # duplicate edges appear when a node feeds another twice; keep them (they are two inputs)
    try:
        import graphviz  # noqa: PLC0415 - optional dependency
    except ImportError:
        return DotSource(lines)
    g = graphviz.Digraph(node_attr=dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1",
                                        height="0.2", fontname="monospace"), graph_attr=dict(size="12,12"))
    g.body.extend("\t" + line + "\n" for line in lines[2:])
    return g
