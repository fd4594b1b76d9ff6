"""Recurrent layers: `nn_rnn`, `nn_gru`, `nn_lstm` (multi-layer, bidirectional,
batch_first, packed sequences), with PyTorch's parameter names and gate order. RNN and GRU are
unrolled over time with tensor ops (so autograd needs nothing special); each
LSTM layer and direction is one fused node (`ops.nn_functional.lstm_layer`), as
PyTorch's fused cells are."""
from __future__ import annotations

import math
from typing import Any

from .. import creation as _cr
from ..ops.creation import arange as torch_arange, zeros as torch_zeros
from .. import ops as _ops
from ..tensor import Tensor, wrap
from ..ops.nn_functional import lstm_layer
from . import functional as F
from . import init
from .module import Module, nn_parameter
from .packed import PackedSequence, padded_in_sorted_order, repack

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


class _RNNBase(Module):
    mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.bias = int(num_layers), bool(bias)
        self.batch_first, self.dropout = bool(batch_first), float(dropout)
        self.bidirectional, self.nonlinearity = bool(bidirectional), nonlinearity
        if self.mode == "RNN":
            if nonlinearity not in ("tanh", "relu"):
                raise ValueError(f"Unknown nonlinearity '{nonlinearity}': use 'tanh' or 'relu'")
        gates = _GATES["LSTM" if self.mode == "LSTM" else "GRU" if self.mode == "GRU"
                       else "RNN_TANH"]
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

    def _cell(self, x: Tensor, h: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Any, b_hh: Any) -> Any:
        gi = F.nnf_linear(x, w_ih, b_ih)
        if self.mode == "LSTM":
            hx, cx = h
            g = gi + F.nnf_linear(hx, w_hh, b_hh)
            i, f, c, o = g.chunk(4, 1)
            cy = f.sigmoid() * cx + i.sigmoid() * c.tanh()
            return o.sigmoid() * cy.tanh(), cy
        gh = F.nnf_linear(h, w_hh, b_hh)
        if self.mode == "GRU":
            ir, iz, inn = gi.chunk(3, 1)
            hr, hz, hn = gh.chunk(3, 1)
            r = (ir + hr).sigmoid()
            z = (iz + hz).sigmoid()
            n = (inn + r * hn).tanh()
            return (h - n) * z + n
        pre = gi + gh
        return pre.tanh() if self.nonlinearity == "tanh" else pre.relu()

    def forward(self, input: Any, hx: Any = None) -> Any:
        packed = input if isinstance(input, PackedSequence) else None
        lengths = None
        if packed is not None:  # padded, time first, in the packed (sorted) order
            x, lengths = padded_in_sorted_order(packed)
            batched = True
            if hx is not None and packed.sorted_indices is not None:
                hx = _permute_hidden(hx, packed.sorted_indices)
        else:
            batched = input.ndim == 3
            x = input if batched else input.unsqueeze(1 if not self.batch_first else 0)
            if self.batch_first:
                x = x.transpose(0, 1)
        seq, batch = x.shape[0], x.shape[1]
        dirs = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        if hx is None:
            zeros = torch_zeros(self.num_layers * dirs, batch, self.hidden_size,
                                    dtype=x.dtype)
            h0, c0 = zeros, zeros
        elif lstm:
            h0, c0 = hx[0], hx[1]
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        else:
            h0 = hx if batched else hx.unsqueeze(1)
        h_n, c_n = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                k = layer * dirs + d
                w_ih, w_hh = getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix)
                b_ih = self._parameters.get("bias_ih" + suffix)
                b_hh = self._parameters.get("bias_hh" + suffix)
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
                    new = self._cell(layer_in[t], h, w_ih, w_hh, b_ih, b_hh)
                    if lengths is not None:  # a finished sequence keeps its state
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
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.nnf_dropout(layer_in, self.dropout, True)
        hn = _ops.stack(h_n, 0)
        cn = _ops.stack(c_n, 0) if lstm else None
        if packed is not None:
            out = repack(layer_in, packed)
            if packed.unsorted_indices is not None:
                hn, cn = (None if h is None else h.index_select(1, packed.unsorted_indices)
                          for h in (hn, cn))
            return [out, [hn, cn] if lstm else hn]
        out = layer_in.transpose(0, 1) if self.batch_first else layer_in
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            hn = hn.squeeze(1)
            cn = cn.squeeze(1) if lstm else None
        return [out, [hn, cn] if lstm else hn]


def _permute_hidden(hx: Any, order: Tensor) -> Any:
    """The initial states given in the batch's order, in the packed (sorted) one."""
    if isinstance(hx, (list, tuple)):
        return [h.index_select(1, order) for h in hx]
    return hx.index_select(1, order)


def _flip(x: Tensor) -> Tensor:
    """Reverse the time (first) axis."""
    return x[torch_arange(x.shape[0] - 1, -1, -1, dtype="int64")]


class nn_rnn(_RNNBase):
    mode = "RNN"


class nn_gru(_RNNBase):
    mode = "GRU"


class nn_lstm(_RNNBase):
    mode = "LSTM"
