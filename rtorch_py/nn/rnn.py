"""Recurrent layers: `nn_rnn`, `nn_gru`, `nn_lstm` (multi-layer, bidirectional,
batch_first, packed sequences), with PyTorch's parameter names and gate order. RNN and GRU are
unrolled over time with tensor ops (so autograd needs nothing special); each
LSTM layer and direction is one fused node (`ops.nn_primitives.lstm_layer`), as
PyTorch's fused cells are."""
from __future__ import annotations

import math
from typing import Any

from .. import constructors as _cr
from ..ops.creation import arange as torch_arange, zeros as torch_zeros
from .. import ops as _ops
from ..formals import r_formals
from ..tensor import Tensor, traceable, wrap
from ..ops.nn_primitives import lstm_layer
from . import functional as F
from . import init
from .module import Module, nn_parameter
from .packed import PackedSequence, padded_in_sorted_order, repack

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


class RNNBase(Module):
    mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.bias = int(num_layers), bool(bias)
        self.batch_first, self.dropout = bool(batch_first), float(dropout)
        nonlinearity = "tanh" if nonlinearity is None else nonlinearity  # (R torch's NULL)
        self.bidirectional, self.nonlinearity = bool(bidirectional), nonlinearity
        if self.mode == "RNN":
            if nonlinearity not in ("tanh", "relu"):
                raise ValueError(f"Unknown nonlinearity '{nonlinearity}': use 'tanh' or 'relu'")
            self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"  # (R torch's field)
        self.proj_size = 0  # (R torch's field: projections are not supported, as there)
        gates = _GATES.get(self.mode, 1)
        dirs = 2 if self.bidirectional else 1
        bound = 1 / math.sqrt(self.hidden_size)
        for layer in range(self.num_layers):
            for d in range(dirs):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                in_size = self.input_size if layer == 0 else self.hidden_size * dirs
                shapes = {"weight_ih": (gates * self.hidden_size, in_size),
                          "weight_hh": (gates * self.hidden_size, self.hidden_size)}
                if self.bias:
                    shapes["bias_ih"] = (gates * self.hidden_size,)
                    shapes["bias_hh"] = (gates * self.hidden_size,)
                for name, shape in shapes.items():
                    p = nn_parameter(_cr.torch_empty(*shape))
                    init.nn_init_uniform_(p, -bound, bound)
                    setattr(self, name + suffix, p)

    def forward(self, input: Any, hx: Any = None) -> Any:
        packed = input if isinstance(input, PackedSequence) else None
        lstm = self.mode == "LSTM"
        if packed is not None:  # padded, time first, in the packed (sorted) order
            x, lengths = padded_in_sorted_order(packed)
            batched, batch_first = True, False
            if hx is not None and packed.sorted_indices is not None:
                hx = _permute_hidden(hx, packed.sorted_indices)
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{self._name()}: expected an input of 2 dims (unbatched) or 3 "
                                 f"(batched), got shape {list(input.shape)}")
            batched, batch_first, lengths = input.ndim == 3, self.batch_first, None
            x = input if batched else input.unsqueeze(1 if not self.batch_first else 0)
        if x.shape[-1] != self.input_size:  # (PyTorch's words)
            raise ValueError(f"{self._name()}: input.size(-1) must be equal to input_size. "
                             f"Expected {self.input_size}, got {x.shape[-1]}")
        if lstm and hx is not None and (not isinstance(hx, (list, tuple)) or len(hx) != 2):
            raise ValueError(f"{self._name()}: hx must be two tensors, (h_0, c_0), got "
                             f"{len(hx) if isinstance(hx, (list, tuple)) else type(hx).__name__}")
        if hx is not None:
            h0 = list(hx[:2]) if lstm else hx
            if not batched:
                h0 = [h.unsqueeze(1) for h in h0] if lstm else h0.unsqueeze(1)
            hx = h0
        params = [p for layer in range(self.num_layers) for d in range(2 if self.bidirectional
                                                                        else 1)
                  for p in self._layer_parameters(layer, d)]
        mode = self.mode if self.mode != "RNN" else \
            ("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU")
        if lengths is not None:  # (each sequence stops at its length: step by step)
            out, *hidden = _recurrence(mode, x, hx, params, self.bias, self.num_layers,
                                       self.dropout, self.training, self.bidirectional,
                                       False, lengths)
            out = repack(out, packed)
            if packed.unsorted_indices is not None:
                hidden = [h.index_select(1, packed.unsorted_indices) for h in hidden]
            return [out, hidden] if lstm else [out, hidden[0]]
        fn = {"LSTM": rnn_lstm, "GRU": rnn_gru}.get(self.mode) or \
            (rnn_tanh if self.nonlinearity == "tanh" else rnn_relu)
        out, *hidden = fn(x, hx, params, self.bias, self.num_layers, self.dropout,
                          self.training, self.bidirectional, batch_first)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            hidden = [h.squeeze(1) for h in hidden]
        return [out, hidden] if lstm else [out, hidden[0]]

    def _name(self) -> str:
        return "nn_" + self.mode.lower()

    def _layer_parameters(self, layer: int, direction: int) -> list:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        names = ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if self.bias else ())
        return [getattr(self, n + suffix) for n in names]


# --------------------------------------------------------------------------
# The recurrences as functions of the input, the initial state and the flat list of
# parameters (per layer and direction: weight_ih, weight_hh[, bias_ih, bias_hh]), with
# PyTorch's `torch.lstm`/`torch.gru`/`torch.rnn_tanh` signatures: one call each for
# the modes (rtorch_py.jit records one node). The input is 3-D; `hx` None starts
# from zeros.


def _permute_hidden(hx: Any, order: Tensor) -> Any:
    """The initial states given in the batch's order, in the packed (sorted) one."""
    if isinstance(hx, (list, tuple)):
        return [h.index_select(1, order) for h in hx]
    return hx.index_select(1, order)


def _cell(mode: str, x: Tensor, h: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Any,
          b_hh: Any) -> Any:
    gi = F.nnf_linear(x, w_ih, b_ih)
    if mode == "LSTM":  # (a packed sequence's steps; otherwise the fused layer)
        hx, cx = h
        i, f, c, o = (gi + F.nnf_linear(hx, w_hh, b_hh)).chunk(4, 1)
        cy = f.sigmoid() * cx + i.sigmoid() * c.tanh()
        return o.sigmoid() * cy.tanh(), cy
    gh = F.nnf_linear(h, w_hh, b_hh)
    if mode == "GRU":
        ir, iz, inn = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r = (ir + hr).sigmoid()
        z = (iz + hz).sigmoid()
        n = (inn + r * hn).tanh()
        return (h - n) * z + n
    pre = gi + gh
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _recurrence(mode: str, input: Tensor, hx: Any, params: list, has_biases: bool,
                num_layers: int, dropout: float, train: bool, bidirectional: bool,
                batch_first: bool, lengths: Any = None) -> tuple:
    """`lengths` (time-first input in decreasing length order, a packed sequence's):
    a sequence keeps its state once its steps are done."""
    lstm = mode == "LSTM"
    x = input.transpose(0, 1) if batch_first else input
    seq, batch = x.shape[0], x.shape[1]
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    hidden_size = params[1].shape[1]
    if hx is None:
        zeros = torch_zeros(num_layers * dirs, batch, hidden_size, dtype=input.dtype)
        h0, c0 = zeros, zeros
    elif lstm:
        h0, c0 = hx[0], hx[1]
    else:
        h0 = hx
    h_n, c_n = [], []
    layer_in = x
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = params[k * per:(k + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            if lstm and lengths is None:
                # the fused layer: one node for the whole sequence
                xin = _flip(layer_in) if d else layer_in
                ys, hT, cT = lstm_layer(xin, h0[k], c0[k], w_ih, w_hh, b_ih, b_hh)
                outs.append(_flip(ys) if d else ys)
                h_n.append(hT)
                c_n.append(cT)
                continue
            h = (h0[k], c0[k]) if lstm else h0[k]
            steps = range(seq - 1, -1, -1) if d else range(seq)
            ys = [None] * seq
            for t in steps:
                new = _cell(mode, layer_in[t], h, w_ih, w_hh, b_ih, b_hh)
                if lengths is not None:
                    running = wrap((t < lengths).reshape(-1, 1))
                    new = tuple(_ops.where(running, a, b) for a, b in zip(new, h)) \
                        if lstm else _ops.where(running, new, h)
                h = new
                ys[t] = h[0] if lstm else h
            outs.append(_ops.stack(ys, 0))
            h_n.append(h[0] if lstm else h)
            if lstm:
                c_n.append(h[1])
        layer_in = outs[0] if dirs == 1 else _ops.cat(outs, 2)
        if dropout and train and layer < num_layers - 1:
            layer_in = F.nnf_dropout(layer_in, dropout, True)
    out = layer_in.transpose(0, 1) if batch_first else layer_in
    if lstm:
        return out, _ops.stack(h_n, 0), _ops.stack(c_n, 0)
    return out, _ops.stack(h_n, 0)


def _recurrence_of(mode: str, name: str) -> Any:
    def recurrence(input: Tensor, hx: Any, params: list, has_biases: bool, num_layers: int,
                   dropout: float, train: bool, bidirectional: bool,
                   batch_first: bool) -> tuple:
        return _recurrence(mode, input, hx, params, has_biases, num_layers, dropout, train,
                           bidirectional, batch_first)
    recurrence.__name__ = recurrence.__qualname__ = "rnn_" + name.removeprefix("rnn_")
    return traceable(name)(recurrence)


rnn_lstm = _recurrence_of("LSTM", "lstm")
rnn_gru = _recurrence_of("GRU", "gru")
rnn_tanh = _recurrence_of("RNN_TANH", "rnn_tanh")
rnn_relu = _recurrence_of("RNN_RELU", "rnn_relu")


def _flip(x: Tensor) -> Tensor:
    """Reverse the time (first) axis."""
    return x[torch_arange(x.shape[0] - 1, -1, -1, dtype="int64")]


@r_formals("input_size, hidden_size, num_layers = 1, nonlinearity = NULL, bias = TRUE, "
           "batch_first = FALSE, dropout = 0, bidirectional = FALSE, ...")
class nn_rnn(RNNBase):
    mode = "RNN"


_GATED = ("input_size, hidden_size, num_layers = 1, bias = TRUE, batch_first = FALSE, "
          "dropout = 0, bidirectional = FALSE, ...")  # (R torch's `...`: nonlinearity too)


@r_formals(_GATED)
class nn_gru(RNNBase):
    mode = "GRU"


@r_formals(_GATED)
class nn_lstm(RNNBase):
    mode = "LSTM"
