# Input checks shared by every metric (the arguments of man/*.Rd;
# docs/definitions.md, "Inputs").
#
# Each check either returns the canonical value or stops with a message that
# names the argument, what was expected and what was found; for values it
# gives the count and the first offending position. Nothing is ever clipped,
# coerced silently or dropped.

# Format one number for a message.
fmt_value <- function(x) format(x, digits = 15)

# Where the first TRUE of `bad` sits in `x`: "position 17", or "row 3, column 2"
# for a matrix.
first_position <- function(x, bad) {
  first <- which(bad)[1L]
  if (is.matrix(x)) {
    rc <- arrayInd(first, dim(x))
    sprintf("row %d, column %d", rc[1L], rc[2L])
  } else {
    sprintf("position %d", first)
  }
}

# "3 values do not, the first at position 17 (1.2)" for a logical vector `bad`
# over `x`.
describe_bad <- function(x, bad) {
  count <- sum(bad)
  sprintf("%d %s, the first at %s (%s)",
          count, if (count == 1L) "value does not" else "values do not",
          first_position(x, bad), fmt_value(x[which(bad)[1L]]))
}

# "found 2 missing values, the first at position 3" for the NAs (and NaNs) of `x`.
describe_missing <- function(x) {
  miss <- is.na(x)
  sprintf("found %d missing %s, the first at %s",
          sum(miss), if (sum(miss) == 1L) "value" else "values", first_position(x, miss))
}

# How to show a bad scalar option in a message.
describe_option <- function(x) {
  if (length(x) == 1L && is.character(x)) {
    sprintf("\"%s\"", x)
  } else if (length(x) == 1L && is.numeric(x)) {
    fmt_value(x)
  } else {
    sprintf("an object of class %s and length %d", class(x)[1L], length(x))
  }
}

# Validate `p` and return it as a double vector (binary) or double matrix.
check_p <- function(p) {
  if (is.data.frame(p)) {
    stop("`p` must be a numeric vector or matrix; got a data frame (use as.matrix()).",
         call. = FALSE)
  }
  if (!is.numeric(p) || (!is.null(dim(p)) && !is.matrix(p))) {
    stop(sprintf("`p` must be a numeric vector or matrix; got an object of class %s.",
                 paste(class(p), collapse = "/")), call. = FALSE)
  }
  if (length(p) == 0L) {
    stop("`p` must not be empty; got 0 predictions.", call. = FALSE)
  }
  if (is.matrix(p)) {
    if (ncol(p) < 2L) {
      stop(sprintf("`p` as a matrix must have at least two columns (one per class); got %d.",
                   ncol(p)), call. = FALSE)
    }
    storage.mode(p) <- "double"
  } else {
    p <- as.double(p)
  }
  if (anyNA(p)) {
    stop(sprintf("`p` must not contain missing values; %s.", describe_missing(p)),
         call. = FALSE)
  }
  bad <- !is.finite(p)
  if (any(bad)) {
    stop(sprintf("`p` must be finite; %s.", describe_bad(p, bad)), call. = FALSE)
  }
  bad <- p < 0 | p > 1
  if (any(bad)) {
    stop(sprintf("`p` must lie in [0, 1]; %s.", describe_bad(p, bad)), call. = FALSE)
  }
  if (is.matrix(p)) {
    sums <- rowSums(p)
    bad <- abs(sums - 1) > 1e-6
    if (any(bad)) {
      first <- which(bad)[1L]
      stop(sprintf(paste0("each row of `p` must sum to 1 (absolute tolerance 1e-6); ",
                          "%d %s not, the first is row %d (sum %s)."),
                   sum(bad), if (sum(bad) == 1L) "row does" else "rows do",
                   first, fmt_value(sums[first])), call. = FALSE)
    }
  }
  p
}

# Validate `y` against a checked `p`. Returns 0/1 doubles for a binary `p`
# and integer class codes 1..K for a matrix `p`.
check_y <- function(y, p) {
  n <- if (is.matrix(p)) nrow(p) else length(p)
  if (length(y) != n) {
    stop(sprintf("`y` must have one label per prediction: `p` has %d, `y` has %d.",
                 n, length(y)), call. = FALSE)
  }
  if (anyNA(y)) {
    stop(sprintf("`y` must not contain missing values; %s.", describe_missing(y)),
         call. = FALSE)
  }
  if (!is.matrix(p)) {
    if (is.logical(y)) {
      return(as.double(y))
    }
    if (!is.numeric(y) || is.factor(y)) {
      stop(sprintf("`y` for a binary `p` must be 0/1 numbers or logicals; got class %s.",
                   paste(class(y), collapse = "/")), call. = FALSE)
    }
    y <- as.double(y)
    bad <- !(y == 0 | y == 1)
    if (any(bad)) {
      stop(sprintf("`y` for a binary `p` must be coded 0 and 1; %s.", describe_bad(y, bad)),
           call. = FALSE)
    }
    return(y)
  }
  k <- ncol(p)
  if (is.factor(y)) {
    if (nlevels(y) != k) {
      stop(sprintf("`y` as a factor must have one level per column of `p` (%d); got %d levels.",
                   k, nlevels(y)), call. = FALSE)
    }
    return(as.integer(y))
  }
  if (!is.numeric(y)) {
    stop(sprintf(paste0("`y` for a matrix `p` must be a factor or integer class codes in 1:%d; ",
                        "got class %s."), k, paste(class(y), collapse = "/")), call. = FALSE)
  }
  bad <- !is.finite(y) | y != round(y) | y < 1 | y > k
  if (any(bad)) {
    hint <- if (any(y[bad] == 0)) {
      " Class codes are 1-based (column k of `p` is class k); add 1 to 0-based labels."
    } else {
      ""
    }
    stop(sprintf("`y` for a matrix `p` must be integer class codes in 1:%d; %s.%s",
                 k, describe_bad(as.double(y), bad), hint), call. = FALSE)
  }
  as.integer(y)
}

check_bins <- function(bins) {
  ok <- is.numeric(bins) && length(bins) == 1L && !is.na(bins) && is.finite(bins) &&
    bins >= 1 && bins == round(bins)
  if (!ok) {
    stop(sprintf("`bins` must be a single positive integer; got %s.", describe_option(bins)),
         call. = FALSE)
  }
  as.integer(bins)
}

# Returns a positive finite number or the string "median".
check_bandwidth <- function(bandwidth) {
  if (is.character(bandwidth) && length(bandwidth) == 1L && identical(bandwidth, "median")) {
    return("median")
  }
  ok <- is.numeric(bandwidth) && length(bandwidth) == 1L && !is.na(bandwidth) &&
    is.finite(bandwidth) && bandwidth > 0
  if (!ok) {
    stop(sprintf("`bandwidth` must be a single positive finite number or \"median\"; got %s.",
                 describe_option(bandwidth)), call. = FALSE)
  }
  as.double(bandwidth)
}
