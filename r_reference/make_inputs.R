# Write the seeded inputs of the R reference data.
#
# Run from the repository root:
#   Rscript r_reference/make_inputs.R
#
# Writes tests/data/r_reference/inputs/<case>.csv (columns `p` and `y` for a
# binary case; `p1`, ..., `pK` and `y` for a multiclass case, y in 1..K) and
# the manifest tests/data/r_reference/inputs/cases.csv (case, kind, n, k, seed,
# description). Every case is generated right after set.seed(seed) with its
# own recorded seed, so any single case can be rebuilt on its own. Doubles are
# written with sprintf("%.17g"), which round-trips exactly; the script reads
# every file back and stops unless the values are identical.
#
# Needs only base R (and stats). R's default RNG kinds are used (Mersenne-
# Twister, Inversion, Rejection sampling), so the files depend on those.

RNGkind("Mersenne-Twister", "Inversion", "Rejection")

script_dir <- function() {
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg) == 1L) dirname(normalizePath(sub("^--file=", "", file_arg))) else "."
}
root <- normalizePath(file.path(script_dir(), ".."))
out_dir <- file.path(root, "tests", "data", "r_reference", "inputs")
dir.create(out_dir, recursive = TRUE, showWarnings = FALSE)
unlink(list.files(out_dir, pattern = "\\.(csv|txt)$", full.names = TRUE))

# ---------------------------------------------------------------- generators

# Rows of a random probability matrix (normalised exponentials, i.e. a flat
# Dirichlet), optionally sharpened: temperature < 1 pushes rows to a corner.
random_simplex <- function(n, k, temperature = 1) {
  logits <- matrix(log(stats::rexp(n * k)), ncol = k) / temperature
  w <- exp(logits - apply(logits, 1, max))
  w / rowSums(w)
}

# One label per row drawn from the row's own distribution (calibrated labels).
sample_labels <- function(p) {
  vapply(seq_len(nrow(p)), function(i) sample.int(ncol(p), 1L, prob = p[i, ]), integer(1))
}

# Equal-width bin breaks for all the bin counts the reference uses.
all_breaks <- function() {
  unique(unlist(lapply(c(1, 2, 3, 5, 7, 10, 15, 20, 50),
                       function(b) seq(0, 1, length.out = b + 1))))
}

# ---------------------------------------------------------------- the cases

cases <- list()
add_case <- function(name, seed, description, make) {
  set.seed(seed)
  data <- make()
  p <- data$p
  storage.mode(p) <- "double"
  cases[[name]] <<- list(seed = seed, description = description, p = p, y = data$y)
}

# Binary cases.
add_case("bin_uniform_n500", 101, "p ~ U(0,1), y ~ Bernoulli(p): calibrated", function() {
  p <- stats::runif(500)
  list(p = p, y = stats::rbinom(500, 1, p))
})
add_case("bin_overconfident_n300", 102,
         "p = plogis(3 qlogis(q)), y ~ Bernoulli(q): overconfident", function() {
  q <- stats::runif(300)
  list(p = stats::plogis(3 * stats::qlogis(q)), y = stats::rbinom(300, 1, q))
})
add_case("bin_underconfident_n250", 103,
         "p = plogis(qlogis(q) / 3), y ~ Bernoulli(q): underconfident", function() {
  q <- stats::runif(250)
  list(p = stats::plogis(stats::qlogis(q) / 3), y = stats::rbinom(250, 1, q))
})
add_case("bin_breaks", 104,
         "every bin break for bins 1,2,3,5,7,10,15,20,50, plus 0.3, 0.7, 1/3, 2/3, 0.1..0.9 literals",
         function() {
  p <- c(all_breaks(), 0.3, 0.7, 1 / 3, 2 / 3, seq(0.1, 0.9, by = 0.1),
         (1:9) / 10, 0, 0, 1, 1)
  p <- sample(c(p, p))  # each value twice, shuffled
  list(p = p, y = stats::rbinom(length(p), 1, 0.5))
})
add_case("bin_ties_n120", 105, "p drawn from {0.1, 0.25, 0.5, 0.75}: heavy ties", function() {
  p <- sample(c(0.1, 0.25, 0.5, 0.75), 120, replace = TRUE)
  list(p = p, y = stats::rbinom(120, 1, p))
})
add_case("bin_zero_one_n40", 106, "p only 0 and 1, one label in five wrong", function() {
  y <- stats::rbinom(40, 1, 0.5)
  wrong <- stats::runif(40) < 0.2
  list(p = ifelse(wrong, 1 - y, y), y = y)
})
add_case("bin_extremes_n60", 107,
         "values next to 0 and 1 (1e-12, eps, 1 - 2^-53, 1 - 1e-12) mixed with 0, 1 and U(0,1)",
         function() {
  p <- c(1e-12, .Machine$double.eps, 1 - 2^-53, 1 - 1e-12, 0, 1, 2^-30, 1 - 2^-30)
  p <- sample(c(p, p, stats::runif(60 - 2 * length(p))))
  list(p = p, y = stats::rbinom(60, 1, p))
})
add_case("bin_n1", 108, "a single observation (uq, ul and the median bandwidth fail)",
         function() list(p = 0.3, y = 1L))
add_case("bin_n2", 109, "two observations", function() list(p = c(0.2, 0.9), y = c(0L, 1L)))
add_case("bin_n3", 110, "three observations: odd n for ul", function() {
  p <- stats::runif(3)
  list(p = p, y = stats::rbinom(3, 1, p))
})
add_case("bin_n7", 111, "seven observations: odd n for ul", function() {
  p <- stats::runif(7)
  list(p = p, y = stats::rbinom(7, 1, p))
})
add_case("bin_constant_n10", 112, "all p equal to 0.4 (the median bandwidth fails)", function() {
  list(p = rep(0.4, 10), y = stats::rbinom(10, 1, 0.4))
})
add_case("bin_all_zero_labels_n50", 113, "y all 0, p ~ U(0, 0.3)", function() {
  list(p = stats::runif(50, 0, 0.3), y = integer(50))
})
add_case("bin_n2000", 114, "p ~ Beta(2, 5), y ~ Bernoulli(p^0.8): larger n", function() {
  p <- stats::rbeta(2000, 2, 5)
  list(p = p, y = stats::rbinom(2000, 1, p^0.8))
})

# Multiclass cases, K = 2..10.
sizes <- c(`2` = 300, `3` = 250, `4` = 200, `5` = 200, `6` = 150, `7` = 150, `8` = 120,
           `9` = 120, `10` = 400)
for (k in 2:10) {
  n <- sizes[[as.character(k)]]
  add_case(sprintf("mc_k%d_n%d", k, n), 200 + k,
           sprintf("K = %d: flat-Dirichlet rows sharpened (temperature 0.5), labels drawn from the rows", k),
           function() {
    p <- random_simplex(n, k, temperature = 0.5)
    list(p = p, y = sample_labels(p))
  })
}
add_case("mc_k4_overconfident_n200", 301,
         "K = 4: labels from the flat rows, reported rows sharpened (temperature 0.3)", function() {
  logits <- matrix(stats::rnorm(200 * 4), ncol = 4)
  softmax <- function(z) {
    w <- exp(z - apply(z, 1, max))
    w / rowSums(w)
  }
  list(p = softmax(logits / 0.3), y = sample_labels(softmax(logits)))
})
add_case("mc_k3_breaks_n90", 302,
         "K = 3: rows with entries on bin breaks (0.3, 0.7, 1/3, 0.2, 0.5, 0, 1, ...)", function() {
  rows <- rbind(c(0.3, 0.7, 0), c(0.7, 0.3, 0), c(1 / 3, 1 / 3, 1 / 3), c(0.2, 0.3, 0.5),
                c(0, 0, 1), c(0.1, 0.2, 0.7), c(0.5, 0.5, 0), c(0.25, 0.25, 0.5),
                c(0.6, 0.2, 0.2), c(0.4, 0.6, 0), c(2 / 3, 1 / 3, 0), c(0.8, 0.1, 0.1),
                c(1, 0, 0), c(0.05, 0.15, 0.8), c(0.35, 0.35, 0.3))
  p <- rows[sample.int(nrow(rows), 90, replace = TRUE), ]
  list(p = p, y = sample.int(3, 90, replace = TRUE))
})
add_case("mc_k3_ties_n60", 303,
         "K = 3: ties for the top label (0.4/0.4/0.2, thirds, 0.45/0.1/0.45, ...)", function() {
  rows <- rbind(c(0.4, 0.4, 0.2), c(0.2, 0.4, 0.4), c(0.4, 0.2, 0.4), c(1 / 3, 1 / 3, 1 / 3),
                c(0.45, 0.1, 0.45), c(0.5, 0.5, 0), c(0, 0.5, 0.5), c(0.6, 0.3, 0.1))
  p <- rows[sample.int(nrow(rows), 60, replace = TRUE), ]
  list(p = p, y = sample.int(3, 60, replace = TRUE))
})
add_case("mc_k4_onehot_n50", 304, "K = 4: one-hot rows, 30% of them wrong, plus a few 0.5/0.5 rows",
         function() {
  y <- sample.int(4, 50, replace = TRUE)
  predicted <- ifelse(stats::runif(50) < 0.3, sample.int(4, 50, replace = TRUE), y)
  p <- diag(4)[predicted, ]
  half <- 1:5
  p[half, ] <- 0
  p[cbind(half, 1)] <- 0.5
  p[cbind(half, 2)] <- 0.5
  list(p = p, y = y)
})
add_case("mc_k5_sharp_n150", 305, "K = 5: very sharp rows (temperature 0.05), near one-hot",
         function() {
  p <- random_simplex(150, 5, temperature = 0.05)
  list(p = p, y = sample_labels(p))
})
add_case("mc_k6_missing_class_n100", 306, "K = 6: class 6 never occurs among the labels",
         function() {
  p <- random_simplex(100, 6)
  list(p = p, y = sample.int(5, 100, replace = TRUE))
})
add_case("mc_k3_n1", 307, "K = 3, a single row", function() {
  list(p = matrix(c(0.2, 0.5, 0.3), nrow = 1), y = 2L)
})
add_case("mc_k3_n2", 308, "K = 3, two rows", function() {
  list(p = rbind(c(0.2, 0.5, 0.3), c(0.6, 0.1, 0.3)), y = c(2L, 3L))
})
add_case("mc_k4_n5", 309, "K = 4, five rows: odd n for ul", function() {
  p <- random_simplex(5, 4)
  list(p = p, y = sample_labels(p))
})
add_case("mc_k3_constant_n20", 310, "K = 3: every row (0.2, 0.3, 0.5) (the median bandwidth fails)",
         function() {
  list(p = matrix(rep(c(0.2, 0.3, 0.5), each = 20), ncol = 3),
       y = sample.int(3, 20, replace = TRUE))
})

# ---------------------------------------------------------------- writing

fmt17 <- function(x) sprintf("%.17g", x)

write_case <- function(name, case) {
  path <- file.path(out_dir, paste0(name, ".csv"))
  if (is.matrix(case$p)) {
    cols <- c(lapply(seq_len(ncol(case$p)), function(j) fmt17(case$p[, j])),
              list(as.character(as.integer(case$y))))
    header <- c(paste0("p", seq_len(ncol(case$p))), "y")
  } else {
    cols <- list(fmt17(case$p), as.character(as.integer(case$y)))
    header <- c("p", "y")
  }
  writeLines(c(paste(header, collapse = ","), do.call(paste, c(cols, sep = ","))), path)
  # The written text must give back exactly the same doubles.
  back <- utils::read.csv(path)
  p_back <- as.matrix(back[setdiff(names(back), "y")])
  storage.mode(p_back) <- "double"  # a column of 0s and 1s reads back as integer
  dimnames(p_back) <- NULL
  p_orig <- if (is.matrix(case$p)) case$p else matrix(case$p, ncol = 1)
  dimnames(p_orig) <- NULL
  stopifnot(identical(p_back, p_orig), identical(back$y, as.integer(case$y)))
}

for (name in names(cases)) write_case(name, cases[[name]])

manifest <- data.frame(
  case = names(cases),
  kind = vapply(cases, function(cs) if (is.matrix(cs$p)) "multiclass" else "binary", ""),
  n = vapply(cases, function(cs) NROW(cs$p), integer(1)),
  k = vapply(cases, function(cs) if (is.matrix(cs$p)) ncol(cs$p) else 1L, integer(1)),
  seed = vapply(cases, function(cs) as.integer(cs$seed), integer(1)),
  description = vapply(cases, function(cs) cs$description, ""),
  row.names = NULL
)
utils::write.csv(manifest, file.path(out_dir, "cases.csv"), row.names = FALSE)

writeLines(c(
  sprintf("- date (UTC): %s", format(Sys.time(), "%Y-%m-%d %H:%M:%S", tz = "UTC")),
  sprintf("- R: %s (%s)", R.version.string, R.version$platform),
  sprintf("- RNG kinds: %s", paste(RNGkind(), collapse = ", ")),
  "- seeds: the `seed` column of cases.csv (set.seed(seed) before each case)"
), file.path(out_dir, "generated_by.txt"))

total <- sum(file.size(list.files(out_dir, full.names = TRUE)))
cat(sprintf("wrote %d cases to %s (%d bytes)\n", nrow(manifest), out_dir, total))
