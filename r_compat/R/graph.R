# autograd_graph(): a picture of the backward graph (rtorch_py/graph.py draws it).
# The object holds its DOT text and its SVG (NULL where Graphviz's `dot` is not
# installed); it shows itself in knitr/R Markdown (the SVG inline), in RStudio's
# viewer (print() when getOption("viewer") is set) and as DOT text elsewhere.

autograd_graph <- function(y, params = NULL) {
  parts <- .autograd_graph_parts(y, params)
  structure(list(dot = parts$dot, svg = parts$svg), class = "autograd_graph")
}

# The <svg> element alone (no XML prolog), to sit inside an HTML page.
.svg_element <- function(svg) sub("^[\\s\\S]*?(<svg)", "\\1", svg, perl = TRUE)

print.autograd_graph <- function(x, ...) {
  viewer <- getOption("viewer")
  if (is.function(viewer) && !is.null(x$svg)) {
    page <- file.path(tempfile("autograd_graph"), "index.html")
    dir.create(dirname(page))
    writeLines(c("<!DOCTYPE html>", "<html><body>", .svg_element(x$svg), "</body></html>"),
               page)
    viewer(page)
  } else {
    cat(x$dot, sep = "\n")
  }
  invisible(x)
}

knit_print.autograd_graph <- function(x, ...) {
  if (is.null(x$svg) || !knitr::is_html_output()) {
    return(knitr::asis_output(paste0("\n```\n", x$dot, "\n```\n")))
  }
  # (a raw HTML block: pandoc passes it through untouched)
  knitr::asis_output(paste0("\n```{=html}\n", .svg_element(x$svg), "\n```\n"))
}
