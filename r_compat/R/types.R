# What kind of object a value is (R torch's is_torch_*()); memory formats and
# quantization schemes print, and memory formats compare, as layouts (R/tensor.R).

is_torch_dtype <- function(x) inherits(x, "torch_dtype")

is_torch_layout <- function(x) inherits(x, "torch_layout")

is_torch_memory_format <- function(x) inherits(x, "torch_memory_format")

is_torch_qscheme <- function(x) inherits(x, "torch_qscheme")

print.torch_memory_format <- print.torch_layout

print.torch_qscheme <- print.torch_layout

Ops.torch_memory_format <- Ops.torch_layout
