"""Optimisers and learning-rate schedulers, with R torch's names."""
from .ignite import (IgniteOptimizer, optim_ignite_adagrad, optim_ignite_adam, optim_ignite_adamw,
                     optim_ignite_rmsprop, optim_ignite_sgd)
from .lbfgs import LBFGS, optim_lbfgs
from .optimizer import (ASGD, SGD, Adadelta, Adagrad, Adam, AdamW, Optimizer, RMSprop, Rprop,
                        is_optimizer, optim_adadelta, optim_adagrad, optim_adam, optim_adamw,
                        optim_asgd, optim_rmsprop, optim_rprop, optim_sgd, required)
from .schedulers import (CosineAnnealingLR, LambdaLR, LRScheduler, MultiplicativeLR, OneCycleLR,
                         ReduceLROnPlateau, StepLR, lr_cosine_annealing, lr_lambda,
                         lr_multiplicative, lr_one_cycle, lr_reduce_on_plateau, lr_step)

__all__ = [
    "optim_sgd", "optim_adam", "optim_adamw", "optim_rmsprop", "optim_adagrad",
    "optim_adadelta", "optim_asgd", "optim_rprop", "optim_lbfgs", "is_optimizer",
    "optim_ignite_sgd", "optim_ignite_adam", "optim_ignite_adamw", "optim_ignite_rmsprop",
    "optim_ignite_adagrad", "IgniteOptimizer",
    "lr_step", "lr_lambda", "lr_multiplicative", "lr_cosine_annealing", "lr_one_cycle",
    "lr_reduce_on_plateau", "Optimizer", "LRScheduler",
]
