"""libtorch's CPU random streams, bit for bit: its generator (mt19937, seeds,
state bytes, cached normals) and its transformations (uniform, normal, random_,
randperm, bernoulli, multinomial, ...), vectorised with NumPy.

Ground floor: imports NumPy only. See docs/random.md.
"""
from .generator import DEFAULT_SEED, STATE_SIZE, Generator, default_generator, fresh_seed
from .distributions import (bernoulli, bernoulli_, cauchy_, exponential_, geometric_,
                            log_normal_, multinomial, normal, normal_, normal_scalar, poisson,
                            random_, randperm, standard_gamma, uniform_)
from .kernel_arith import iteration_view

__all__ = ["Generator", "default_generator", "fresh_seed", "DEFAULT_SEED", "STATE_SIZE",
           "uniform_", "normal_", "normal", "normal_scalar", "log_normal_", "random_",
           "randperm", "bernoulli_", "bernoulli", "exponential_", "geometric_", "cauchy_",
           "multinomial", "poisson", "standard_gamma", "iteration_view"]
