# The fields R torch's nn_* layers set in initialize(), compared with the shim's.
#
# R torch's own layer definitions (its R/nn*.R files, in the directory named by
# RTORCH_NN_SOURCE) are evaluated in a sandbox whose parent is the shim's
# namespace: each becomes a module defined in R on the shim's nn_module(), so
# building one runs R torch's initialize() body, and what it assigns with
# `self$name <-` is exactly what R torch holds for those arguments. Each layer is
# then built both ways with the same arguments and every such field compared:
# R class, storage type, value. Prints one tab-separated line per layer:
#   layer  status  detail
# status "ok" (detail: the fields compared), "differ" (detail: what differs),
# "skip" (detail: why the layer could not be built from R torch's source).

library(torch)
source_dir <- Sys.getenv("RTORCH_NN_SOURCE")
ns <- asNamespace("torch")
sandbox <- new.env(parent = ns)

# (R torch's internal helpers its layers call, value_error() and the like, come
# from its own sources in the same directory)
for (file in list.files(source_dir, pattern = "\\.R$", full.names = TRUE)) {
  for (expr in parse(file, keep.source = FALSE)) {
    tryCatch(eval(expr, sandbox), error = function(e) NULL)
  }
}
# R torch's convolutions make their weight with torch_empty(a, b, !!!kernel_size):
# R torch's torch_empty() takes rlang's dynamic dots, the shim's not yet. The
# weight is a parameter, not a field compared here.
sandbox$torch_empty <- function(...) do.call(torch::torch_empty, rlang::list2(...))

# typical values for arguments without defaults, by name
typical <- list(
  in_channels = 4, out_channels = 6, kernel_size = 3, in_features = 5, out_features = 3,
  in1_features = 5, in2_features = 4, num_features = 4, normalized_shape = 4,
  num_embeddings = 10, embedding_dim = 3, input_size = 4, hidden_size = 6, d_model = 8,
  nhead = 2, embed_dim = 8, num_heads = 2, num_groups = 2, num_channels = 4, size = 2,
  output_size = 2, upscale_factor = 2, downscale_factor = 2, p = 2, norm_type = 2,
  padding = 1, dim = 2, margin = 1, negative_slope = 0.1, threshold = 0.5, value = 0,
  lambd = 0.5, alpha = 1, n_classes = 10, cutoffs = c(3, 6), in_feature = 5,
  head_bias = FALSE, num_layers = 1, unflattened_size = c(2, 3)
)

# the same layer, other arguments: integer and per-dimension values
extra_cases <- list(
  nn_conv2d = list(in_channels = 4L, out_channels = 6L, kernel_size = c(3L, 2L),
                   stride = 2L, padding = c(1, 0)),
  nn_conv_transpose2d = list(in_channels = 4, out_channels = 6, kernel_size = c(3, 2),
                             stride = 2, output_padding = 1),
  nn_max_pool2d = list(kernel_size = c(2L, 3L), stride = 1L),
  nn_avg_pool1d = list(kernel_size = 3, stride = 2, padding = 1)
)

# arguments in place of the typical ones (R torch's defaults alone stop)
own_case <- list(
  nn_fractional_max_pool2d = list(kernel_size = 3, output_size = 2),
  nn_fractional_max_pool3d = list(kernel_size = 3, output_ratio = 0.5)
)

# fields not compared, and why
not_compared <- c(
  flat_weights_ = "R torch's recurrent layers' bookkeeping for libtorch's fused kernels",
  flat_weight_names_ = "R torch's recurrent layers' bookkeeping for libtorch's fused kernels",
  flat_weights_names_ = "R torch's recurrent layers' bookkeeping for libtorch's fused kernels",
  all_weights_ = "R torch's recurrent layers' bookkeeping for libtorch's fused kernels"
)

# why a layer is not built generically
not_generic <- list(
  nn_adaptive_log_softmax_with_loss = "R torch's initialize() stops: 'not yet implemented'",
  nn_transformer_encoder = "holds copies of a layer it is given (the layer's own fields are compared)",
  nn_transformer_decoder = "holds copies of a layer it is given (the layer's own fields are compared)"
)

is_layer <- function(name) {
  startsWith(name, "nn_") && inherits(sandbox[[name]], "nn_module_generator") &&
    exists(name, envir = ns, inherits = FALSE)
}

args_for <- function(gen) {
  f <- formals(attr(gen, "module")$public_methods$initialize %||% function() NULL)
  init <- attr(gen, "module")
  while (!is.null(init) && is.null(init$public_methods$initialize)) init <- init$get_inherit()
  f <- formals(init$public_methods$initialize)
  out <- list()
  for (n in names(f)) {
    if (n == "...") next
    if (identical(f[[n]], quote(expr = ))) {
      if (!n %in% names(typical)) stop("no typical value for argument `", n, "`")
      out[n] <- list(typical[[n]])
    }
  }
  out
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# what R torch assigned: the R6 object's own bindings that are data
ref_fields <- function(m) {
  inst <- attr(m, "module")
  nms <- ls(inst, all.names = TRUE)
  nms <- setdiff(nms, c(".__enclos_env__", ".classes", "training", "parameters", "buffers",
                        "modules", "children"))
  nms[!vapply(nms, function(n) bindingIsActive(n, inst) || is.function(inst[[n]]), TRUE)]
}

describe <- function(x) {
  if (is_torch_tensor(x)) {
    return(sprintf("tensor %s %s", as.character(x$dtype), paste(x$shape, collapse = "x")))
  }
  sprintf("%s<%s>(%s)", paste(class(x), collapse = "/"), typeof(x),
          paste(deparse(unclass(x), width.cutoff = 500L), collapse = ""))
}

compare <- function(name, args) {
  ref <- tryCatch(do.call(sandbox[[name]], args),
                  error = function(e) structure(conditionMessage(e), class = "failed"))
  if (inherits(ref, "failed")) {
    return(c("skip", paste("R torch's initialize() did not run here:", unclass(ref))))
  }
  ours <- do.call(ns[[name]], args)
  diffs <- character()
  fields <- ref_fields(ref)
  for (f in setdiff(fields, names(not_compared))) {
    r <- .subset2(attr(ref, "module"), f)
    o <- ours[[f]]
    if (is_nn_module(r) || is.environment(r)) next  # a child: compared as a layer
    if (!identical(describe(r), describe(o))) {
      diffs <- c(diffs, sprintf("$%s: R torch %s, here %s", f, describe(r), describe(o)))
    }
  }
  if (length(diffs)) c("differ", paste(diffs, collapse = "; ")) else
    c("ok", paste(fields, collapse = ","))
}

label <- function(args) {
  paste(vapply(names(args), function(n) paste0(n, "=", deparse(args[[n]])), ""),
        collapse = ", ")
}

for (name in sort(Filter(is_layer, ls(sandbox)))) {
  if (!is.null(not_generic[[name]])) {
    cat(name, "skip", not_generic[[name]], sep = "\t")
    cat("\n")
    next
  }
  cases <- list(own_case[[name]] %||%
                  tryCatch(args_for(sandbox[[name]]), error = function(e) conditionMessage(e)))
  if (!is.null(extra_cases[[name]])) cases <- c(cases, list(extra_cases[[name]]))
  for (args in cases) {
    res <- if (is.character(args)) c("skip", args) else compare(name, args)
    cat(name, "(", if (!is.character(args)) label(args), ")\t", res[[1]], "\t", res[[2]], "\n",
        sep = "")
  }
}
