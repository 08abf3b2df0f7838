# Binned metrics: ece() and mce() (man/ece.Rd, man/mce.Rd; docs/definitions.md,
# "Binned metrics: ece() and mce()").

# Top-label reduction of a probability matrix: the confidence r_i = max_k p_ik
# and the correctness c_i = 1{argmax_k p_ik = y_i}; ties in the argmax go to
# the first maximal column.
top_label <- function(p, y) {
  predicted <- max.col(p, ties.method = "first")
  list(r = p[cbind(seq_len(nrow(p)), predicted)],
       c = as.double(predicted == y))
}

# The per-bin table of a binary problem: one row per non-empty bin with its
# size n_b, mean confidence conf(b) and mean outcome acc(b).
#
# Breaks are seq(0, 1, length.out = bins + 1); bin b holds
# breaks[b] < r <= breaks[b + 1], and 0 belongs to the first bin.
bin_table <- function(r, c, bins) {
  breaks <- seq(0, 1, length.out = bins + 1L)
  bin <- .bincode(r, breaks, right = TRUE, include.lowest = TRUE)
  members <- split(seq_along(r), factor(bin, levels = seq_len(bins)))
  members <- members[lengths(members) > 0L]  # empty bins are ignored
  data.frame(
    bin = as.integer(names(members)),
    n = lengths(members),
    conf = vapply(members, function(i) mean(r[i]), numeric(1)),
    acc = vapply(members, function(i) mean(c[i]), numeric(1)),
    row.names = NULL
  )
}

binary_ece <- function(r, c, bins) {
  tab <- bin_table(r, c, bins)
  sum(tab$n / length(r) * abs(tab$acc - tab$conf))
}

binary_mce <- function(r, c, bins) {
  tab <- bin_table(r, c, bins)
  max(abs(tab$acc - tab$conf))
}

# Shared driver: `binary_metric` is binary_ece or binary_mce and `combine`
# aggregates the classwise values (mean for ECE, max for MCE).
binned_metric <- function(p, y, bins, type, binary_metric, combine) {
  bins <- check_bins(bins)
  p <- check_p(p)
  y <- check_y(y, p)
  if (!is.matrix(p)) {
    return(binary_metric(p, y, bins))
  }
  if (type == "confidence") {
    top <- top_label(p, y)
    return(binary_metric(top$r, top$c, bins))
  }
  per_class <- vapply(seq_len(ncol(p)),
                      function(k) binary_metric(p[, k], as.double(y == k), bins),
                      numeric(1))
  combine(per_class)
}

# Expected calibration error (exported).
ece <- function(p, y, bins = 10, type = c("classwise", "confidence")) {
  type <- match.arg(type)
  binned_metric(p, y, bins, type, binary_ece, mean)
}

# Maximum calibration error (exported).
mce <- function(p, y, bins = 10, type = c("classwise", "confidence")) {
  type <- match.arg(type)
  binned_metric(p, y, bins, type, binary_mce, max)
}
