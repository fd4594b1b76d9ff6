"""Multi-head attention, composed of tensor ops (PyTorch's parameter layout:
`in_proj_weight`, `in_proj_bias`, `out_proj`)."""
from __future__ import annotations

import math
from typing import Any

from .. import constructors as _cr
from .. import ops as _ops
from ..formals import r_formals
from ..ops.creation import zeros as torch_zeros
from ..tensor import Tensor
from . import functional as F
from . import init
from .layers import nn_linear
from .module import Module, nn_parameter


@r_formals("query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, "
           "bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, "
           "training = TRUE, key_padding_mask = NULL, need_weights = TRUE, attn_mask = NULL, "
           "avg_weights = TRUE, use_separate_proj_weight = FALSE, q_proj_weight = NULL, "
           "k_proj_weight = NULL, v_proj_weight = NULL, static_k = NULL, static_v = NULL, "
           "batch_first = FALSE", python_names={"avg_weights": "average_attn_weights"})
def nnf_multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
        out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True, *,
        batch_first: bool = False) -> list:
    """PyTorch's arguments (R torch's `batch_first` too). Inputs are (L, N, E),
    sequence first, or (N, L, E) with batch_first; returns [output, weights or None].
    bias_k / bias_v: a key and value added at the end of the sequence; add_zero_attn:
    a zero one after them; static_k / static_v: (N * heads, S, E / heads) used as
    they are for the keys and values."""
    if batch_first:
        query, key, value = (t.transpose(0, 1) for t in (query, key, value))
    tgt, bsz, embed = query.shape
    if embed != embed_dim_to_check:
        raise ValueError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                         f"but got {embed}")
    hd = embed // num_heads
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias.chunk(3, 0)
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight.chunk(3, 0)
    q = F.nnf_linear(query, wq, bq)
    k = F.nnf_linear(key, wk, bk)
    v = F.nnf_linear(value, wv, bv)
    if attn_mask is not None and attn_mask.ndim == 2:
        attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        k = _ops.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _ops.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _one_more(attn_mask), _one_more(key_padding_mask)
    # (L, N, E) -> (N * heads, L, hd)
    q = q.reshape(tgt, bsz * num_heads, hd).transpose(0, 1) / math.sqrt(hd)
    k = k.reshape(k.shape[0], bsz * num_heads, hd).transpose(0, 1) if static_k is None \
        else static_k
    v = v.reshape(v.shape[0], bsz * num_heads, hd).transpose(0, 1) if static_v is None \
        else static_v
    if add_zero_attn:
        k = _ops.cat([k, torch_zeros(k.shape[0], 1, hd, dtype=k.dtype)], 1)
        v = _ops.cat([v, torch_zeros(v.shape[0], 1, hd, dtype=v.dtype)], 1)
        attn_mask, key_padding_mask = _one_more(attn_mask), _one_more(key_padding_mask)
    src = k.shape[1]
    scores = q.matmul(k.transpose(1, 2))
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            scores = scores.masked_fill(attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    if key_padding_mask is not None:
        s = scores.reshape(bsz, num_heads, tgt, src)
        s = s.masked_fill(key_padding_mask.reshape(bsz, 1, 1, src).to(dtype="bool"),
                          float("-inf"))
        scores = s.reshape(bsz * num_heads, tgt, src)
    attn = scores.softmax(-1)
    if dropout_p > 0:
        attn = F.nnf_dropout(attn, dropout_p, training)
    out = attn.matmul(v).transpose(0, 1).reshape(tgt, bsz, embed)
    out = F.nnf_linear(out, out_proj_weight, out_proj_bias)
    if batch_first:
        out = out.transpose(0, 1)
    weights = None
    if need_weights:
        weights = attn.reshape(bsz, num_heads, tgt, src)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    return [out, weights]


def _one_more(mask: Tensor | None) -> Tensor | None:
    """A mask over keys with one more (unmasked) key at the end."""
    return None if mask is None else F.nnf_pad(mask, (0, 1))


class nn_multihead_attention(Module):
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Any = None,
                 vdim: Any = None, batch_first: bool = False) -> None:
        super().__init__()
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) or \
                vdim not in (None, embed_dim):
            raise NotImplementedError("nn_multihead_attention: add_bias_kv, add_zero_attn and "
                                      "kdim / vdim other than embed_dim are not supported")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        if self.embed_dim % self.num_heads:
            raise ValueError("embed_dim must be divisible by num_heads")
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        # (R torch's fields, for the one configuration supported)
        self.kdim = self.vdim = self.embed_dim
        self.qkv_same_embed_dim_, self.add_zero_attn = True, False
        self.head_dim = self.embed_dim // self.num_heads
        self.in_proj_weight = nn_parameter(_cr.torch_empty(3 * self.embed_dim, self.embed_dim))
        if bias:
            self.in_proj_bias = nn_parameter(torch_zeros(3 * self.embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        # R torch's order of draws: the projection's own initialisation, then
        # reset_parameters()'s xavier_uniform_
        self.out_proj = nn_linear(self.embed_dim, self.embed_dim, bias=bias)
        init.nn_init_xavier_uniform_(self.in_proj_weight)
        if bias:
            init.nn_init_zeros_(self.out_proj.bias)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                avg_weights: bool | None = None) -> list:
        if avg_weights is not None:  # R torch's name for it
            average_attn_weights = avg_weights
        if self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, w = nnf_multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self._parameters.get("in_proj_bias"), None, None, False, self.dropout,
            self.out_proj.weight, self.out_proj._parameters.get("bias"), self.training,
            key_padding_mask, need_weights, attn_mask,
            average_attn_weights=average_attn_weights)
        if self.batch_first:
            out = out.transpose(0, 1)
        return [out, w]
