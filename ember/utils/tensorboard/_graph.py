"""The recorded autograd graph of one model call as a TensorBoard GraphDef (tensorboardX's protobufs)."""
from __future__ import annotations

from ..._tensor import Tensor
from ...autograd import graph as G
from ...autograd.grad_mode import enable_grad

_DEVICE = "/device:CPU:0"


def _scopes(model):
    """Hooks stamping the sequence numbers each submodule's call spans; returns (spans, handles)."""
    spans = []  # [start, end, scope]
    handles = []
    paths = {}
    for name, mod in model.named_modules():
        parent = name.rsplit(".", 1)[0] if "." in name else ("" if name else None)
        own = type(mod).__name__ + (f"[{name.rsplit('.', 1)[-1]}]" if name else "")
        paths[name] = own if parent is None else paths[parent] + "/" + own

        def pre(m, args, _n=name):
            spans.append([G._next_seq(), None, paths[_n]])
            m.__dict__.setdefault("_ember_tb_open", []).append(spans[-1])

        def post(m, args, out):
            m.__dict__["_ember_tb_open"].pop()[1] = G._next_seq()
        handles.append(mod.register_forward_pre_hook(pre))
        handles.append(mod.register_forward_hook(post))
    return spans, handles


def _scope_of(seq: int, spans) -> str:
    best = None
    for start, end, scope in spans:
        if start < seq < (end if end is not None else 2**62) and (best is None or start > best[0]):
            best = (start, scope)
    return best[1] if best else ""


def _shape_attr(shapes):
    from tensorboardX.proto.attr_value_pb2 import AttrValue  # noqa: PLC0415 - optional dependency
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto  # noqa: PLC0415

    return AttrValue(list=AttrValue.ListValue(shape=[
        TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(s)) for s in shape]) for shape in shapes]))


def graph_def(model, input_to_model):
    """Run ``model(*inputs)`` with grad enabled and describe its backward graph as a GraphDef."""
    from tensorboardX.proto.attr_value_pb2 import AttrValue  # noqa: PLC0415 - optional dependency
    from tensorboardX.proto.graph_pb2 import GraphDef  # noqa: PLC0415
    from tensorboardX.proto.node_def_pb2 import NodeDef  # noqa: PLC0415
    from tensorboardX.proto.versions_pb2 import VersionDef  # noqa: PLC0415

    inputs = input_to_model if isinstance(input_to_model, (tuple, list)) else (input_to_model,)
    inputs = tuple(i for i in inputs if i is not None)
    spans, handles = _scopes(model)
    try:
        with enable_grad():
            out = model(*inputs)
    finally:
        for h in handles:
            h.remove()
        for m in model.modules():
            m.__dict__.pop("_ember_tb_open", None)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, Tensor)]
    params = {id(p): n for n, p in model.named_parameters()}
    nodes = G._walk(G._root_nodes(outs))
    names: dict = {}
    counts: dict = {}
    defs = []
    root_scope = type(model).__name__
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor):
            defs.append(NodeDef(name=f"input/input.{i}", op="IO Node", device=_DEVICE,
                                attr={"_output_shapes": _shape_attr([t.shape]),
                                      "attr": AttrValue(s=f"{t.dtype}".encode())}))
    for fn in sorted(nodes, key=lambda n: n._seq):
        if isinstance(fn, G.AccumulateGrad):
            v = fn.variable
            pname = params.get(id(v), f"leaf.{len(names)}")
            names[fn] = f"{root_scope}/{pname}"
            defs.append(NodeDef(name=names[fn], op="Parameter", device=_DEVICE,
                                attr={"_output_shapes": _shape_attr([v.shape]),
                                      "attr": AttrValue(s=f"{v.dtype}".encode())}))
            continue
        op = fn.name().rsplit("::", 1)[-1]
        scope = _scope_of(fn._seq, spans) or root_scope
        k = counts[(scope, op)] = counts.get((scope, op), -1) + 1
        names[fn] = f"{scope}/{op}" + (f"_{k}" if k else "")
    for fn in sorted(nodes, key=lambda n: n._seq):
        if isinstance(fn, G.AccumulateGrad):
            continue
        op = fn.name().rsplit("::", 1)[-1]
        defs.append(NodeDef(name=names[fn], op=op, device=_DEVICE,
                            input=[names[n] for n, _ in fn._next if n is not None],
                            attr={"_output_shapes": _shape_attr([m[0] for m in fn._meta_out])}))
    for i, t in enumerate(outs):
        src = G._root_nodes([t])
        defs.append(NodeDef(name=f"output/output.{i}", op="IO Node", device=_DEVICE,
                            input=[names[src[0]]] if src else [],
                            attr={"_output_shapes": _shape_attr([t.shape])}))
    return GraphDef(node=defs, versions=VersionDef(producer=22))
