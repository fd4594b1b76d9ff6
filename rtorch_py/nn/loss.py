"""Loss modules (`nn_*_loss`): each holds its options and calls its `nnf_` function."""
from __future__ import annotations

import inspect
from typing import Any, Sequence

from ..formals import r_formals
from . import functional as F
from .layers import nn_pairwise_distance
from .module import Module, counted_of, options_signature


def _loss(name: str, fn: Any, params: Sequence[tuple[str, Any]] = (),
          n_inputs: int = 2, weighted: bool = False) -> type:
    names = [p for p, _ in params]
    defaults = dict(params)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        values = dict(defaults)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in defaults:
                raise TypeError(f"{name}() got an unexpected argument '{k}'")
            values[k] = v
        for k, v in values.items():
            if k == "weight" and v is not None:
                self.register_buffer("weight", v)
            else:
                object.__setattr__(self, k, v)

    def forward(self, *inputs: Any, **named: Any) -> Any:
        if named:  # inputs given by name (fn's names for them), after those by position
            inputs += tuple(named.pop(k) for k in input_names[len(inputs):] if k in named)
            if named:
                raise TypeError(f"{name}'s forward() got an unexpected argument "
                                f"'{next(iter(named))}'")
        if len(inputs) != n_inputs:
            raise TypeError(f"{name} takes {n_inputs} inputs, got {len(inputs)}")
        kw = {k: getattr(self, k, None) for k in names}
        return fn(*inputs, **kw)

    __init__.__signature__ = options_signature(params)
    # the inputs by the names fn gives them, and what R counts from 1 (fn's declaration)
    inputs = list(inspect.signature(fn).parameters.values())[:n_inputs]
    P = inspect.Parameter
    forward.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [P("self", P.POSITIONAL_ONLY),
         *(p.replace(kind=P.POSITIONAL_OR_KEYWORD) for p in inputs)])
    input_names = [p.name for p in inputs]
    forward.__r_counted__ = counted_of(fn, input_names)  # type: ignore[attr-defined]
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__module__": __name__, "__r_counted__": counted_of(fn, names)})


_R = ("reduction", "mean")
nn_mse_loss = _loss("nn_mse_loss", F.nnf_mse_loss, [_R])
nn_l1_loss = _loss("nn_l1_loss", F.nnf_l1_loss, [_R])
nn_smooth_l1_loss = r_formals("reduction = 'mean'")(
    _loss("nn_smooth_l1_loss", F.nnf_smooth_l1_loss, [_R, ("beta", 1.0)]))
nn_huber_loss = _loss("nn_huber_loss", F.nnf_huber_loss, [_R, ("delta", 1.0)])
nn_bce_loss = _loss("nn_bce_loss", F.nnf_binary_cross_entropy, [("weight", None), _R])
nn_bce_with_logits_loss = _loss("nn_bce_with_logits_loss",
                                F.nnf_binary_cross_entropy_with_logits,
                                [("weight", None), _R, ("pos_weight", None)])
nn_cross_entropy_loss = r_formals("weight = NULL, ignore_index = -100, reduction = 'mean'")(
    _loss("nn_cross_entropy_loss", F.nnf_cross_entropy,
          [("weight", None), ("ignore_index", -100), _R, ("label_smoothing", 0.0)]))
nn_nll_loss = _loss("nn_nll_loss", F.nnf_nll_loss, [("weight", None), ("ignore_index", -100), _R])
nn_kl_div_loss = r_formals("reduction = 'mean'")(
    _loss("nn_kl_div_loss", F.nnf_kl_div, [_R, ("log_target", False)]))
nn_poisson_nll_loss = _loss("nn_poisson_nll_loss", F.nnf_poisson_nll_loss,
                            [("log_input", True), ("full", False), ("eps", 1e-8), _R])
nn_margin_ranking_loss = _loss("nn_margin_ranking_loss", F.nnf_margin_ranking_loss,
                               [("margin", 0.0), _R], n_inputs=3)
nn_hinge_embedding_loss = _loss("nn_hinge_embedding_loss", F.nnf_hinge_embedding_loss,
                                [("margin", 1.0), _R])
nn_soft_margin_loss = _loss("nn_soft_margin_loss", F.nnf_soft_margin_loss, [_R])
nn_cosine_embedding_loss = _loss("nn_cosine_embedding_loss", F.nnf_cosine_embedding_loss,
                                 [("margin", 0.0), _R], n_inputs=3)
nn_triplet_margin_loss = _loss("nn_triplet_margin_loss", F.nnf_triplet_margin_loss,
                               [("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False), _R],
                               n_inputs=3)
nn_multilabel_soft_margin_loss = _loss("nn_multilabel_soft_margin_loss",
                                       F.nnf_multilabel_soft_margin_loss,
                                       [("weight", None), _R])
nn_aum_loss = _loss("nn_aum_loss", F.nnf_area_under_min_fpr_fnr)
nn_aum_loss.reduction = "mean"  # (R torch's nn_loss field; the loss itself takes none)
nn_multilabel_margin_loss = _loss("nn_multilabel_margin_loss", F.nnf_multilabel_margin_loss,
                                  [_R])
nn_multi_margin_loss = _loss("nn_multi_margin_loss", F.nnf_multi_margin_loss,
                             [("p", 1), ("margin", 1.0), ("weight", None), _R])

nn_ctc_loss = _loss("nn_ctc_loss", F.nnf_ctc_loss,
                    [("blank", 0), _R, ("zero_infinity", False)], n_inputs=4)


class nn_triplet_margin_with_distance_loss(Module):
    """The triplet loss with a distance function (a child nn_pairwise_distance
    by default, as in R torch)."""

    def __init__(self, distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.distance_function = nn_pairwise_distance() if distance_function is None \
            else distance_function
        self.margin, self.swap, self.reduction = margin, bool(swap), reduction

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Any:
        return F.nnf_triplet_margin_with_distance_loss(
            anchor, positive, negative, self.distance_function, self.margin, self.swap,
            self.reduction)


class nn_adaptive_log_softmax_with_loss(Module):
    """Not built in R torch 0.17 either: constructing one is an error, as there."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Any, div_value: float = 4,
                 head_bias: bool = False) -> None:
        raise NotImplementedError("not yet implemented")


__all__ = [n for n in list(globals()) if n.startswith("nn_")]
