# Kernel metrics: skce() and mmce() (man/skce.Rd, man/mmce.Rd; docs/definitions.md,
# "Kernel metrics: skce() and mmce()").
#
# Every estimator is computed from two n x n matrices: D, the pairwise
# distances between what the kernel sees (scalar confidences, or probability
# vectors in the canonical form), and G, the inner products <e_i, e_j> of the
# residuals. The kernel terms are h_ij = exp(-D_ij / h) * G_ij. This is
# O(n^2) in time and memory on purpose: it is the formula, written plainly.

# The median heuristic: R's median() of the positive pairwise distances
# (each unordered pair i < j once).
median_bandwidth <- function(D) {
  d <- D[lower.tri(D)]
  d <- d[d > 0]
  if (length(d) == 0L) {
    stop(paste0("`bandwidth = \"median\"` needs at least two distinct predictions; ",
                "all pairwise distances are 0."), call. = FALSE)
  }
  median(d)
}

# The three estimators of Widmann et al. (2019, Table 1) from D, G and h.
skce_estimate <- function(D, G, bandwidth, estimator) {
  n <- nrow(D)
  if (estimator != "biased" && n < 2L) {
    stop(sprintf("`estimator = \"%s\"` needs at least 2 observations; got %d.", estimator, n),
         call. = FALSE)
  }
  h <- if (identical(bandwidth, "median")) median_bandwidth(D) else bandwidth
  H <- exp(-D / h) * G
  switch(estimator,
         biased = sum(H) / n^2,
         uq = sum(H[upper.tri(H)]) / choose(n, 2),
         ul = {
           m <- n %/% 2L
           pairs <- cbind(2L * seq_len(m) - 1L, 2L * seq_len(m))
           sum(H[pairs]) / m
         })
}

# Binary (and confidence) form: scalar confidences rho and 0/1 targets c,
# residual e_i = c_i - rho_i, kernel exp(-|rho_i - rho_j| / h).
binary_skce <- function(rho, c, estimator, bandwidth) {
  e <- c - rho
  D <- abs(outer(rho, rho, "-"))
  G <- outer(e, e)
  skce_estimate(D, G, bandwidth, estimator)
}

# Canonical form: residual e_i = onehot(y_i) - p_i, kernel
# exp(-||p_i - p_j||_2 / h) times the identity.
canonical_skce <- function(p, y, estimator, bandwidth) {
  onehot <- diag(ncol(p))[y, , drop = FALSE]
  E <- onehot - p
  D <- as.matrix(stats::dist(p, method = "euclidean"))
  G <- tcrossprod(E)
  skce_estimate(D, G, bandwidth, estimator)
}

# Squared kernel calibration error (exported).
skce <- function(p, y, estimator = c("uq", "ul", "biased"), bandwidth = 0.2,
                 type = c("canonical", "confidence", "classwise")) {
  estimator <- match.arg(estimator)
  type <- match.arg(type)
  bandwidth <- check_bandwidth(bandwidth)
  p <- check_p(p)
  y <- check_y(y, p)
  if (!is.matrix(p)) {
    return(binary_skce(p, y, estimator, bandwidth))
  }
  switch(type,
         canonical = canonical_skce(p, y, estimator, bandwidth),
         confidence = {
           top <- top_label(p, y)
           binary_skce(top$r, top$c, estimator, bandwidth)
         },
         classwise = mean(vapply(seq_len(ncol(p)), function(k) {
           binary_skce(p[, k], as.double(y == k), estimator, bandwidth)
         }, numeric(1))))
}

# Maximum mean calibration error (exported).
mmce <- function(p, y, bandwidth = 0.2) {
  bandwidth <- check_bandwidth(bandwidth)
  p <- check_p(p)
  y <- check_y(y, p)
  if (is.matrix(p)) {
    top <- top_label(p, y)
    p <- top$r
    y <- top$c
  }
  sqrt(binary_skce(p, y, "biased", bandwidth))
}
