"""ember.utils.tensorboard.SummaryWriter: event files read back with TensorBoard's EventAccumulator."""
import os

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from oracle import ember, torch, torch_graph_ops
import ember.utils.tensorboard  # noqa: F401,E402 - imported on demand, as torch.utils.tensorboard


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_scalars_histograms_and_text_read_back(tmp_path):
    w = ember.tensor(np.linspace(-1, 1, 101, dtype=np.float32), requires_grad=True)
    with ember.utils.tensorboard.SummaryWriter(log_dir=str(tmp_path)) as writer:
        assert writer.get_logdir() == str(tmp_path)
        for step in range(3):
            loss = (w * (step + 1)).pow(2).mean()
            writer.add_scalar("loss", loss, step)  # a tensor that requires grad is fine
            writer.add_scalar("lr", 0.1 / (step + 1), step)
        writer.add_scalars("acc", {"train": 0.9, "test": ember.tensor(0.8)}, 7)
        writer.add_histogram("w", w, 0)
        writer.add_text("note", "hello **ember**", 0)
    acc = _read(tmp_path)
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2]
    expect = [float(((w.detach() * (s + 1)) ** 2).mean()) for s in range(3)]
    np.testing.assert_allclose([e.value for e in loss], expect, rtol=1e-6)
    np.testing.assert_allclose([e.value for e in acc.Scalars("lr")], [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    h = acc.Histograms("w")[0].histogram_value
    assert h.num == 101 and h.min == -1 and h.max == 1 and abs(h.sum) < 1e-4
    text = acc.Tensors("note/text_summary")[0].tensor_proto.string_val[0].decode()
    assert text == "hello **ember**"
    runs = sorted(os.listdir(tmp_path / "acc"))
    assert runs == ["test", "train"]
    np.testing.assert_allclose(_read(tmp_path / "acc" / "test").Scalars("acc")[0].value, 0.8, rtol=1e-6)


class Net:
    @staticmethod
    def make(lib):
        lib.manual_seed(0)

        class N(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.features = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU())
                self.head = lib.nn.Linear(8, 2)

            def forward(self, x):
                return lib.nn.functional.softmax(self.head(self.features(x)), -1)
        return N()


def test_add_graph_writes_the_recorded_graph(tmp_path):
    model = Net.make(ember)
    x = ember.randn(3, 4)
    with ember.utils.tensorboard.SummaryWriter(log_dir=str(tmp_path)) as writer:
        writer.add_graph(model, x)
    graph = _read(tmp_path).Graph()
    nodes = {n.name: n for n in graph.node}
    ops = sorted(n.op for n in graph.node if n.op not in ("Parameter", "IO Node"))
    tmodel = Net.make(torch)
    assert ops == sorted(torch_graph_ops(tmodel(torch.randn(3, 4)).grad_fn).elements())
    params = sorted(n.name.split("/", 1)[1] for n in graph.node if n.op == "Parameter")
    assert params == sorted(n for n, _ in model.named_parameters())
    relu = [n for n in nodes if n.endswith("ReluBackward0")]
    assert relu == ["N/Sequential[features]/ReLU[1]/ReluBackward0"]
    for n in graph.node:  # every edge names a node of the graph
        assert all(i in nodes for i in n.input), n.name
    out = nodes["output/output.0"]
    assert out.input and nodes[out.input[0]].op == "SoftmaxBackward0"
    dims = [d.size for d in nodes["input/input.0"].attr["_output_shapes"].list.shape[0].dim]
    assert dims == [3, 4]


def test_missing_tensorboardx_says_how_to_install(monkeypatch):
    import sys

    import pytest

    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'ember\[tensorboard\]'"):
        ember.utils.tensorboard.SummaryWriter()


def test_new_style_scalars_as_torch_writes_them(tmp_path):
    """add_scalar(new_style=True[, double_precision=True]): a tensor of the scalars plugin, as torch's writer."""
    import torch.utils.tensorboard  # noqa: F401,PLC0415 - torch's writer is the oracle

    for lib in (ember, torch):
        with lib.utils.tensorboard.SummaryWriter(log_dir=str(tmp_path / lib.__name__)) as writer:
            writer.add_scalar("plain", 0.25, 0)
            writer.add_scalar("new", lib.tensor(1.5), 1, new_style=True)
            writer.add_scalar("double", 1 / 3, 2, new_style=True, double_precision=True)
    seen = {}
    for lib in ("ember", "torch"):
        acc = _read(tmp_path / lib)
        protos = {tag: acc.Tensors(tag)[0] for tag in ("new", "double")}
        seen[lib] = (acc.Tags()["scalars"], {t: (p.step, str(p.tensor_proto)) for t, p in protos.items()},
                     acc.SummaryMetadata("new").plugin_data.plugin_name)
    assert seen["ember"] == seen["torch"]
    assert "double_val" in seen["torch"][1]["double"][1]
