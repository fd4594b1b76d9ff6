"""R torch's generated functions that it keeps unexported: its own code and tests call
them from inside the namespace (`torch:::torch_nll_loss`). Each is libtorch's form of
a function the engine has (a reduction given by its enum code, results as R torch's
list), bound by the one binder; R keeps the names of R_INTERNAL out of the exports."""
from __future__ import annotations

from typing import Any, Callable

from ..formals import counted, r_counted, r_formals
from ..nn import functional as F
from ..tensor import Tensor
from . import binding, one_based

_REDUCTIONS = ("none", "mean", "sum")  # (libtorch's Reduction enum, by code)


@r_counted(target="label", ignore_index="ignore_label")
@r_formals("self, target, weight = list(), reduction = torch_reduction_mean(), "
           "ignore_index = -100")
def torch_nll_loss(self: Tensor, target: Tensor, weight: Any = None, reduction: int = 1,
                   ignore_index: int = -100) -> Tensor:
    weight = weight if isinstance(weight, Tensor) else None  # (list(): none)
    return F.nnf_nll_loss(self, target, weight, ignore_index,
                          _REDUCTIONS[one_based.integer(reduction, "reduction")])


def _max_pool_with_indices(nd: int) -> Callable:
    pool = getattr(F, f"nnf_max_pool{nd}d")

    @r_formals("self, kernel_size, stride = list(), padding = 0, dilation = 1, "
               "ceil_mode = FALSE")
    def max_pool_with_indices(self: Tensor, kernel_size: Any, stride: Any = None,
                              padding: Any = 0, dilation: Any = 1,
                              ceil_mode: bool = False) -> tuple:
        return pool(self, kernel_size, stride or None, padding, dilation, ceil_mode,
                    return_indices=True)
    max_pool_with_indices.__name__ = f"torch_max_pool{nd}d_with_indices"
    return max_pool_with_indices


@r_counted(dim="dim")
def torch_size(self: Tensor, dim: int) -> int:
    return self.shape[dim]


def _bound(fn: Callable, **facts: Any) -> Callable:
    """`fn` as R calls it: what it declares R counts from 1, R's vectors as Python's."""
    return binding.r_callable(fn, binding.RFacts(fn.__name__, counted=counted(fn), vectors=True,
                                                 **facts))


R_FUNCTIONS: dict[str, Callable] = {
    "torch_nll_loss": _bound(torch_nll_loss),
    "torch_size": _bound(torch_size),
    **{f"torch_max_pool{nd}d_with_indices": _bound(_max_pool_with_indices(nd),
                                                   returns_indices=1) for nd in (1, 2, 3)},
}
R_INTERNAL = frozenset(R_FUNCTIONS)
