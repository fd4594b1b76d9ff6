# testthat's edition-3 expect_equal() compares tensors through waldo: what it
# compares is the tensor's values, dtype, shape, requires_grad and grad_fn (as
# R torch does), not the external pointers.
compare_proxy.torch_tensor <- function(x, path) {
  grad_fn <- x$grad_fn
  list(
    object = list(values = as_array(x), dtype = as.character(x$dtype),
                  requires_grad = x$requires_grad,
                  grad_fn = if (is.null(grad_fn)) NULL else grad_fn$name),
    path = paste0("as_array(", path, ")")
  )
}

# Registered with waldo when (and if) waldo is loaded.
.register_compare_proxy <- function() {
  register <- function(...) {
    registerS3method("compare_proxy", "torch_tensor", compare_proxy.torch_tensor,
                     envir = asNamespace("waldo"))
  }
  if (isNamespaceLoaded("waldo")) register()
  setHook(packageEvent("waldo", "onLoad"), register)
}
