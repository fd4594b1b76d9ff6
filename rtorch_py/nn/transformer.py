"""Transformer layers: R torch's `nn_transformer_encoder_layer` and
`nn_transformer_encoder` (their children, in R torch's order), and the
decoder side and whole model, which R torch lacks, after PyTorch's
(`nn_transformer_decoder_layer`, `nn_transformer_decoder`, `nn_transformer`).

Inputs are (sequence, batch, features), or (batch, sequence, features) with
batch_first. Boolean masks are TRUE where attention is not allowed.
"""
from __future__ import annotations

import copy
from typing import Any, Callable

from ..ops.creation import ones as torch_ones, zeros as torch_zeros
from ..tensor import Tensor
from . import functional as F
from . import init
from .attention import nn_multihead_attention
from .layers import nn_dropout, nn_layer_norm, nn_linear
from .module import Module, nn_module_list


def _activation(activation: Any) -> tuple[Callable, int]:
    """The activation function, and 1 for relu, 2 for gelu, 0 for another."""
    if isinstance(activation, str):
        name = activation.lower()
        if name == "relu":
            return F.nnf_relu, 1
        if name == "gelu":
            return F.nnf_gelu, 2
        raise ValueError(f"Unsupported activation string: {activation}. Use 'relu', 'gelu', or "
                         "a callable function.")
    if callable(activation):
        return activation, 0
    raise ValueError("activation must be a string ('relu' or 'gelu') or a function.")


def causal_mask(size: int) -> Tensor:
    """TRUE above the diagonal: position i may attend to positions up to i."""
    return torch_ones(size, size, dtype="bool").triu(1)


def _mask(mask: Tensor | None, is_causal: bool, x: Tensor, batch_first: bool,
          what: str) -> Tensor | None:
    if not is_causal:
        return mask
    if mask is not None:
        raise ValueError(f"Explicit {what} should not be set when is_causal=TRUE. Use one or "
                         "the other.")
    return causal_mask(x.shape[1] if batch_first else x.shape[0])


def _clones(layer: Module, n: int) -> nn_module_list:
    return nn_module_list([copy.deepcopy(layer) for _ in range(int(n))])


class nn_transformer_encoder_layer(Module):
    """Self-attention then a feed-forward network, each added to its input
    (residual) and normalised: after (the default) or before (norm_first)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        self.norm_first = bool(norm_first)
        self.self_attn = nn_multihead_attention(d_model, nhead, dropout=dropout, bias=bias,
                                                batch_first=batch_first)
        self.linear1 = nn_linear(d_model, dim_feedforward, bias=bias)
        self.linear2 = nn_linear(dim_feedforward, d_model, bias=bias)
        self.dropout = nn_dropout(dropout)
        self.dropout1 = nn_dropout(dropout)
        self.dropout2 = nn_dropout(dropout)
        self.norm1 = nn_layer_norm(d_model, eps=layer_norm_eps, elementwise_affine=bias)
        self.norm2 = nn_layer_norm(d_model, eps=layer_norm_eps, elementwise_affine=bias)
        self.activation, self.activation_relu_or_gelu = _activation(activation)

    def _attend(self, x: Tensor, mask: Tensor | None, padding: Tensor | None) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                             need_weights=False)[0]
        return self.dropout1(out)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        mask = _mask(src_mask, is_causal, src, self.self_attn.batch_first, "src_mask")
        if self.norm_first:
            x = src + self._attend(self.norm1(src), mask, src_key_padding_mask)
            return x + self._feed_forward(self.norm2(x))
        x = self.norm1(src + self._attend(src, mask, src_key_padding_mask))
        return self.norm2(x + self._feed_forward(x))


class _LayerStack(Module):
    """`num_layers` copies of one layer, applied in turn, then `norm` if given."""

    def __init__(self, layer: Module, num_layers: int, norm: Module | None, part: str) -> None:
        super().__init__()
        if not isinstance(layer, Module):
            raise ValueError(f"`{part}_layer` must be an `nn_module` (transformer {part} "
                             "layer instance).")
        self.num_layers = int(num_layers)
        self.layers = _clones(layer, num_layers)
        self.norm = norm


class nn_transformer_encoder(_LayerStack):
    """`num_layers` copies of `encoder_layer`, in turn, then `norm` if given."""

    def __init__(self, encoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__(encoder_layer, num_layers, norm, "encoder")

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=is_causal)
        return out if self.norm is None else self.norm(out)


class nn_transformer_decoder_layer(Module):
    """Self-attention, attention over the encoder's output (`memory`), then a
    feed-forward network, each residual and normalised (PyTorch's layer)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        self.norm_first = bool(norm_first)
        self.self_attn = nn_multihead_attention(d_model, nhead, dropout=dropout, bias=bias,
                                                batch_first=batch_first)
        self.multihead_attn = nn_multihead_attention(d_model, nhead, dropout=dropout,
                                                     bias=bias, batch_first=batch_first)
        self.linear1 = nn_linear(d_model, dim_feedforward, bias=bias)
        self.dropout = nn_dropout(dropout)
        self.linear2 = nn_linear(dim_feedforward, d_model, bias=bias)
        self.norm1 = nn_layer_norm(d_model, eps=layer_norm_eps, elementwise_affine=bias)
        self.norm2 = nn_layer_norm(d_model, eps=layer_norm_eps, elementwise_affine=bias)
        self.norm3 = nn_layer_norm(d_model, eps=layer_norm_eps, elementwise_affine=bias)
        self.dropout1 = nn_dropout(dropout)
        self.dropout2 = nn_dropout(dropout)
        self.dropout3 = nn_dropout(dropout)
        self.activation, self.activation_relu_or_gelu = _activation(activation)

    def _self_attend(self, x: Tensor, mask: Tensor | None, padding: Tensor | None) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                             need_weights=False)[0]
        return self.dropout1(out)

    def _cross_attend(self, x: Tensor, memory: Tensor, mask: Tensor | None,
                      padding: Tensor | None) -> Tensor:
        out = self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=padding,
                                  need_weights=False)[0]
        return self.dropout2(out)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        bf = self.self_attn.batch_first
        tgt_mask = _mask(tgt_mask, tgt_is_causal, tgt, bf, "tgt_mask")
        x = tgt
        if self.norm_first:
            x = x + self._self_attend(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._cross_attend(self.norm2(x), memory, memory_mask,
                                       memory_key_padding_mask)
            return x + self._feed_forward(self.norm3(x))
        x = self.norm1(x + self._self_attend(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._cross_attend(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._feed_forward(x))


class nn_transformer_decoder(_LayerStack):
    """`num_layers` copies of `decoder_layer`, in turn, then `norm` if given."""

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__(decoder_layer, num_layers, norm, "decoder")

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


class nn_transformer(Module):
    """An encoder and a decoder (PyTorch's nn.Transformer), their matrices
    initialised with xavier_uniform."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        layer_args = dict(dim_feedforward=dim_feedforward, dropout=dropout,
                          activation=activation, layer_norm_eps=layer_norm_eps,
                          batch_first=batch_first, norm_first=norm_first, bias=bias)
        if custom_encoder is None:
            custom_encoder = nn_transformer_encoder(
                nn_transformer_encoder_layer(d_model, nhead, **layer_args), num_encoder_layers,
                nn_layer_norm(d_model, eps=layer_norm_eps, bias=bias))
        if custom_decoder is None:
            custom_decoder = nn_transformer_decoder(
                nn_transformer_decoder_layer(d_model, nhead, **layer_args), num_decoder_layers,
                nn_layer_norm(d_model, eps=layer_norm_eps, bias=bias))
        self.encoder, self.decoder = custom_encoder, custom_decoder
        self.d_model, self.nhead, self.batch_first = int(d_model), int(nhead), bool(batch_first)
        for p in self.parameters.values():
            if p.ndim > 1:
                init.nn_init_xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: bool = False,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    def generate_square_subsequent_mask(self, sz: int) -> Tensor:
        """-Inf above the diagonal, 0 elsewhere (a float mask)."""
        return torch_zeros(int(sz), int(sz)).masked_fill(causal_mask(int(sz)),
                                                             float("-inf"))
