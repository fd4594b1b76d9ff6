"""Neural network modules, layers, losses and initialisation with R torch's
names: `nn_module`, `nn_linear`, `nnf_relu`, `nn_init_xavier_uniform_`, ...

`rt.nn.Module` is the base class for PyTorch-style subclassing.
"""
from __future__ import annotations

from . import functional, init
from .functional import *  # noqa: F401,F403
from .init import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import (Module, ParameterList, is_nn_buffer, is_nn_module, is_nn_parameter,
                     nn_buffer, nn_module, nn_module_dict, nn_module_list, nn_parameter,
                     nn_sequential)
from .rnn import nn_gru, nn_lstm, nn_rnn
from .attention import nn_multihead_attention, nnf_multi_head_attention_forward
from .transformer import (nn_transformer, nn_transformer_decoder, nn_transformer_decoder_layer,
                          nn_transformer_encoder, nn_transformer_encoder_layer)
from .utils import nn_utils_clip_grad_norm_, nn_utils_clip_grad_value_, nn_utils_weight_norm
from .packed import (PackedSequence, is_packed_sequence, nn_utils_rnn_pack_padded_sequence,
                     nn_utils_rnn_pack_sequence, nn_utils_rnn_pad_packed_sequence,
                     nn_utils_rnn_pad_sequence)

__all__ = sorted({n for n in list(globals()) if n.startswith(("nn_", "nnf_", "is_nn_"))}) + [
    "Module", "ParameterList", "PackedSequence", "is_packed_sequence"]
