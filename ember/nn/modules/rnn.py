"""Recurrent layers: RNN, LSTM, GRU and their cells (torch's arguments, parameter names, init and printed form).

Each layer direction projects the whole input once (one GEMM for every step), then steps through time with the
hidden-to-hidden product only. Padded input runs as a packed sequence whose steps all have the full batch, so
one loop serves both; every operation is an ember op, so gradients (of any order) come from the engine.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _factories as _F, _state
from ..._tensor import Tensor
from ...autograd._interpose import fused_ok as _fused_ok
from ...ops import rnn as _R, shape as _S
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ..._device import _check_device
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# ---------------------------------------------------------------- one time step of each kind of cell
# ``gi`` is the input projection (with bias_ih) of this step; ``state`` a tuple (h,) or (h, c).

def _tanh_step(gi: Tensor, state: tuple, w_hh: Tensor, b_hh, w_hr=None) -> tuple:
    return ((gi + F.linear(state[0], w_hh, b_hh)).tanh(),)


def _relu_step(gi: Tensor, state: tuple, w_hh: Tensor, b_hh, w_hr=None) -> tuple:
    return ((gi + F.linear(state[0], w_hh, b_hh)).relu(),)


def _lstm_step(gi: Tensor, state: tuple, w_hh: Tensor, b_hh, w_hr=None) -> tuple:
    h, c = state
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi: Tensor, state: tuple, w_hh: Tensor, b_hh, w_hr=None) -> tuple:
    h = state[0]
    r_i, z_i, n_i = gi.chunk(3, 1)
    r_h, z_h, n_h = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = (r_i + r_h).sigmoid()
    z = (z_i + z_h).sigmoid()
    n = (n_i + r * n_h).tanh()
    return (n + z * (h - n),)


_STEPS = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": _lstm_step, "GRU": _gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _run_direction(step, gates: list, batch_sizes: list, state: tuple, weights: tuple, reverse: bool) -> tuple:
    """Run one direction over the per-step input projections; returns (outputs in time order, final state).

    Batch sizes never grow along time (packed order): going forward, rows that finish are set aside; going
    backward, rows that start are taken from the initial state."""
    full = batch_sizes[0] if batch_sizes else state[0].shape[0]
    outputs = [None] * len(gates)
    order = range(len(gates) - 1, -1, -1) if reverse else range(len(gates))
    cur = full
    if reverse and batch_sizes and batch_sizes[-1] != full:
        cur = batch_sizes[-1]
        init_state, state = state, tuple(s[:cur] for s in state)
    done = []
    for t in order:
        n = batch_sizes[t]
        if n != cur:
            if reverse:
                state = tuple(_S.cat([s, s0[cur:n]], 0) for s, s0 in zip(state, init_state))
            else:
                done.append(tuple(s[n:cur] for s in state))
                state = tuple(s[:n] for s in state)
            cur = n
        state = step(gates[t], state, *weights)
        outputs[t] = state[0]
    if done:
        state = tuple(_S.cat([s, *reversed(parts)], 0) for s, parts in zip(state, zip(*done)))
    return outputs, state


class RNNBase(Module):
    """Shared state of RNN, LSTM and GRU: geometry, per-layer/direction parameters and the forward loop."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        _check_device(device)
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size or hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(directions):
                in_size = input_size if layer == 0 else real_hidden * directions
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate_size, in_size)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + sfx, Parameter(_F.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op (parameters are not kept in one flat buffer)."""

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    def _layer_weights(self, layer: int, direction: int) -> tuple:
        sfx = f"_l{layer}" + ("_reverse" if direction else "")
        get = self._parameters.get
        return (get("weight_ih" + sfx), get("bias_ih" + sfx), get("weight_hh" + sfx), get("bias_hh" + sfx),
                get("weight_hr" + sfx))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------ forward
    def _state_shapes(self, batch: int) -> list:
        d = 2 if self.bidirectional else 1
        h = (self.num_layers * d, batch, self.proj_size or self.hidden_size)
        return [h, (self.num_layers * d, batch, self.hidden_size)] if self.mode == "LSTM" else [h]

    def _check_input(self, input: Tensor, batch_sizes) -> None:
        want = 2 if batch_sizes is not None else 3
        if input.dim() != want:
            raise RuntimeError(f"input must have {want} dimensions, got {input.dim()}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _check_hidden(self, states: list, batch: int) -> None:
        for i, (s, shape) in enumerate(zip(states, self._state_shapes(batch))):
            if tuple(s.shape) != shape:
                which = f"hidden[{i}]" if self.mode == "LSTM" else "hidden"
                raise RuntimeError(f"Expected {which} size {shape}, got {list(s.shape)}")

    def forward(self, input, hx=None):
        if _state._tls.cpu and self.mode == "GRU":  # CPU autocast: torch's GRU runs in the autocast dtype only
            data = input.data if isinstance(input, PackedSequence) else input  # on an input of that dtype
            if data._dtype is not _state._tls.cpu_dtype:
                with _state._cpu_autocast_off():
                    if data._dtype._reduced:  # (another 16-bit dtype: float32)
                        input = input.float() if not isinstance(input, PackedSequence) else \
                            input._replace(data=input.data.float())
                    return self.forward(input, hx)
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        unbatched = False
        if packed:
            data, batch_sizes = input.data, [int(n) for n in input.batch_sizes._data]
            batch = batch_sizes[0]
            sorted_idx = input.sorted_indices
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
            unbatched = input.dim() == 2
            hx_list = list(hx) if lstm and hx is not None else ([hx] if hx is not None else [])
            if hx_list:
                hdim = hx_list[0].dim()
                if unbatched and hdim != 2:
                    raise RuntimeError(self._hx_dim_msg(hx_list, "unbatched 2-D", 2))
                if not unbatched and hdim != 3:
                    raise RuntimeError(self._hx_dim_msg(hx_list, "batched 3-D", 3))
            if unbatched:
                input = input.unsqueeze(1)
                if hx is not None:
                    hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[0], input.shape[1]
            data = input.reshape(steps * batch, input.shape[2])
            batch_sizes, sorted_idx = [batch] * steps, None
        self._check_input(data if packed else input, batch_sizes if packed else None)
        w = self._flat_weights[0]
        low = _state._tls.cpu and _state._tls.cpu_dtype  # CPU autocast: torch's kernel runs in its dtype
        if low:
            data = data.to(low)
            if hx is not None:
                hx = tuple(h.to(low) for h in hx) if lstm else hx.to(low)
        elif data.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype ({w.dtype}). Convert input: "
                             f"input.to({w.dtype}), or convert model: model.to({data.dtype})")
        if not batch_sizes:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if hx is None:
            states = [_F.zeros(shape, dtype=data.dtype, device=data.device) for shape in self._state_shapes(batch)]
        else:
            states = list(hx) if lstm else [hx]
            if sorted_idx is not None:
                states = [s.index_select(1, sorted_idx) for s in states]
            self._check_hidden(states, batch)
        out, finals = self._run(data, batch_sizes, states, packed)
        finals = [_S.stack(f, 0) for f in finals]
        if packed:
            if input.unsorted_indices is not None:
                finals = [f.index_select(1, input.unsorted_indices) for f in finals]
            output = PackedSequence(out, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
        else:
            output = out if out.dim() == 3 else out.view(steps, batch, out.shape[-1])
            if unbatched:
                output, finals = output.squeeze(1), [f.squeeze(1) for f in finals]
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, (tuple(finals) if lstm else finals[0])

    # torch's public checking helpers, which subclasses of its recurrent layers call (forward does its own checks)
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        w = self._flat_weights[0]
        if input.dtype != w.dtype and not _state._tls.cpu:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        self._check_input(input, batch_sizes)

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple:
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.proj_size or self.hidden_size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None):
        return hx if permutation is None else hx.index_select(1, permutation)

    def _hx_dim_msg(self, hx_list: list, kind: str, want: int) -> str:
        if self.mode == "LSTM":
            dims = ", ".join(f"{h.dim()}-D" for h in hx_list)
            return f"For {kind} input, hx and cx should also be {want}-D but got ({dims}) tensors"
        return f"For {kind} input, hx should also be {want}-D but got {hx_list[0].dim()}-D tensor"

    def _run(self, data: Tensor, batch_sizes: list, states: list, packed: bool = False) -> tuple:
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        per_state = [s.unbind(0) for s in states]
        finals = [[] for _ in states]
        layer_input = data
        fused = (self.mode == "LSTM" and not self.proj_size and not packed and _fused_ok()
                 and data.numel() > 0
                 and data._data.dtype in (np.float32, np.float64) and type(data._data) is np.ndarray)
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                layer_input = F.dropout(layer_input, self.dropout, True)
            outs = []
            for d in range(directions):
                w_ih, b_ih, w_hh, b_hh, w_hr = self._layer_weights(layer, d)
                k = layer * directions + d
                init_state = tuple(ps[k] for ps in per_state)
                if fused:  # NOTE [fused LSTM layer]: (steps, batch, features) in and out, as torch's layer
                    x3 = layer_input if layer_input.dim() == 3 else layer_input.reshape(
                        len(batch_sizes), batch_sizes[0], layer_input.shape[-1])
                    out, h, c = _R.LstmLayer.apply(x3, w_ih, w_hh, b_ih, b_hh, *init_state, d == 1, step)
                    outs.append(out)
                    final = (h, c)
                else:
                    gates = F.linear(layer_input, w_ih, b_ih).split(batch_sizes, 0)
                    seq, final = _run_direction(step, list(gates), batch_sizes, init_state, (w_hh, b_hh, w_hr),
                                                d == 1)
                    outs.append(_S.cat(seq, 0))
                for f, s in zip(finals, final):
                    f.append(s)
            layer_input = outs[0] if directions == 1 else _S.cat(outs, -1)
        return layer_input, finals


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` with act tanh or relu."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o; optional projection of h to ``proj_size``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple:
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: tuple, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: tuple, permutation: Tensor | None) -> tuple:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n)."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---------------------------------------------------------------- cells
class RNNCellBase(Module):
    """Shared state of the cells: weight_ih, weight_hh (and biases) with torch's init."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        _check_device(device)
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_F.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(_F.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_F.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(_F.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _cell(self, input: Tensor, hx: tuple | None, n_states: int):
        if _state._tls.cpu and self._mode in ("LSTM", "GRU"):  # torch's lstm_cell / gru_cell: not autocast
            with _state._cpu_autocast_off():
                return self._cell(input, hx, n_states)
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for i, h in enumerate(hx):
                if h.dim() not in (1, 2):
                    raise ValueError(f"{type(self).__name__}: Expected hidden to be 1D or 2D, got {h.dim()}D "
                                     "instead" if n_states == 1 else
                                     f"{type(self).__name__}: Expected hx[{i}] to be 1D or 2D, got {h.dim()}D "
                                     "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = None if hx is None else tuple(h.unsqueeze(0) for h in hx)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        if hx is None:
            hx = tuple(_F.zeros((input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device) for _ in range(n_states))
        for i, h in enumerate(hx):
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                   f"{h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                   f"{self.hidden_size}")
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        out = _STEPS[self._mode](gi, hx, self.weight_hh, self.bias_hh)
        return out if batched else tuple(o.squeeze(0) for o in out)


class RNNCell(RNNCellBase):
    """One step of the Elman RNN."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity
        if nonlinearity == "tanh":
            self._mode = "RNN_TANH"
        elif nonlinearity == "relu":
            self._mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._cell(input, None if hx is None else (hx,), 1)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        return self._cell(input, None if hx is None else tuple(hx), 2)


class GRUCell(RNNCellBase):
    """One GRU step."""

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._cell(input, None if hx is None else (hx,), 1)[0]
