"""ember.utils.tensorboard: torch's ``SummaryWriter`` on top of tensorboardX (``pip install 'ember[tensorboard]'``).

Scalars, histograms and text go through tensorboardX unchanged (ember tensors become NumPy arrays).
``add_graph`` runs the model once and writes the recorded autograd graph as a TensorBoard GraphDef: one
node per backward node (torch's names: ``AddmmBackward0``), grouped by the module that ran it
(``DigitsNet/Sequential[features]/Conv2d[0]``), parameters named as in ``named_parameters()``.
"""
from __future__ import annotations

from ._graph import graph_def
from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
