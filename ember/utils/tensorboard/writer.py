"""SummaryWriter: torch.utils.tensorboard's writer over tensorboardX, taking ember tensors."""
from __future__ import annotations

import numpy as np

from ..._tensor import Tensor

_INSTALL = "ember.utils.tensorboard needs tensorboardX: pip install 'ember[tensorboard]'"


def _np(value):
    """An ember tensor (or anything array-like) as NumPy data, outside any graph."""
    if isinstance(value, Tensor):
        return value._data
    return value


def _scalar(value):
    if isinstance(value, Tensor):
        return value._data.reshape(()).item()
    return value


class SummaryWriter:
    """Writes TensorBoard event files into ``log_dir`` (default ``runs/<date>_<host><comment>``)."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        try:
            import tensorboardX  # noqa: PLC0415 - optional dependency
        except ImportError as e:
            raise ModuleNotFoundError(_INSTALL) from e
        self._writer = tensorboardX.SummaryWriter(logdir=log_dir, comment=comment, purge_step=purge_step,
                                                  max_queue=max_queue, flush_secs=flush_secs,
                                                  filename_suffix=filename_suffix)
        self.log_dir = self._writer.logdir

    def get_logdir(self) -> str:
        """The folder the event files are written to."""
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step: int | None = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """Log one number under ``tag`` at ``global_step``; ``new_style``: as a tensor of the scalars plugin
        (float64 with ``double_precision``), as torch's writer does, instead of a simple value."""
        if not new_style:
            self._writer.add_scalar(tag, _scalar(scalar_value), global_step, walltime)
            return
        from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata  # noqa: PLC0415 - optional dependency
        from tensorboardX.proto.tensor_pb2 import TensorProto  # noqa: PLC0415

        value = float(np.asarray(_np(scalar_value)).squeeze())
        proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
                 else TensorProto(float_val=[value], dtype="DT_FLOAT"))
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        summary = Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=meta)])
        self._writer._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Log several numbers in one chart (each tag in its own run folder under ``main_tag``)."""
        self._writer.add_scalars(main_tag, {k: _scalar(v) for k, v in tag_scalar_dict.items()}, global_step,
                                 walltime)

    def add_histogram(self, tag: str, values, global_step: int | None = None, bins: str = "tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:
        """Log the distribution of ``values`` (a tensor or array)."""
        self._writer.add_histogram(tag, np.asarray(_np(values)), global_step, bins, walltime, max_bins)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """Log a (markdown) text."""
        self._writer.add_text(tag, text_string, global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """Run ``model`` on ``input_to_model`` once and log the recorded autograd graph."""
        from tensorboardX.proto import event_pb2  # noqa: PLC0415 - optional dependency

        from ._graph import graph_def  # noqa: PLC0415

        gd = graph_def(model, input_to_model)
        if verbose:
            print(gd)
        self._writer._get_file_writer().add_event(event_pb2.Event(graph_def=gd.SerializeToString()))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
