# Compute the R reference outputs from the committed inputs.
#
# Run from anywhere, after installing the reference package:
#   R CMD INSTALL r_reference/calibrRef
#   Rscript r_reference/make_reference.R
#
# Reads tests/data/r_reference/inputs/cases.csv and every <case>.csv it lists
# (written by make_inputs.R), evaluates calibrRef's ece, mce, skce and mmce
# over the option grid below, and writes
#   tests/data/r_reference/reference.csv  (one row per case, metric, options)
#   tests/data/r_reference/PROVENANCE.md  (R version, seeds, scripts, date,
#                                           checksums, the CSV columns)
# Values are written with sprintf("%.17g"), which round-trips exactly. A call
# that signals an error (e.g. "uq" with n = 1, or the median bandwidth when
# all predictions are equal) is recorded with an empty value and R's message.

suppressPackageStartupMessages(library(calibrRef))

script_dir <- function() {
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg) == 1L) dirname(normalizePath(sub("^--file=", "", file_arg))) else "."
}
root <- normalizePath(file.path(script_dir(), ".."))
data_dir <- file.path(root, "tests", "data", "r_reference")
in_dir <- file.path(data_dir, "inputs")

BINS <- c(1, 2, 3, 5, 7, 10, 15, 20, 50)
BINNED_TYPES <- c("classwise", "confidence")
ESTIMATORS <- c("uq", "ul", "biased")
SKCE_TYPES <- c("canonical", "confidence", "classwise")
BANDWIDTHS <- list(0.05, 0.2, 1, "median")

read_case <- function(case) {
  df <- utils::read.csv(file.path(in_dir, paste0(case, ".csv")))
  p_cols <- setdiff(names(df), "y")
  p <- if (identical(p_cols, "p")) {
    as.double(df$p)
  } else {
    m <- as.matrix(df[p_cols])
    storage.mode(m) <- "double"
    dimnames(m) <- NULL
    m
  }
  list(p = p, y = as.integer(df$y))
}

# One output row; `call` evaluates the metric.
evaluate <- function(case, metric, estimator, type, bins, bandwidth, call) {
  result <- tryCatch(list(value = call(), error = ""),
                     error = function(e) list(value = NA_real_, error = conditionMessage(e)))
  data.frame(case = case, metric = metric, estimator = estimator, type = type,
             bins = bins, bandwidth = bandwidth,
             value = if (is.na(result$value)) "" else sprintf("%.17g", result$value),
             error = result$error)
}

bandwidth_label <- function(bw) if (is.character(bw)) bw else format(bw)

manifest <- utils::read.csv(file.path(in_dir, "cases.csv"))
rows <- list()
for (case in manifest$case) {
  d <- read_case(case)
  p <- d$p
  y <- d$y
  for (metric in c("ece", "mce")) {
    f <- get(metric, envir = asNamespace("calibrRef"))
    for (type in BINNED_TYPES) for (bins in BINS) {
      rows[[length(rows) + 1L]] <- evaluate(case, metric, "", type, format(bins), "",
                                            function() f(p, y, bins = bins, type = type))
    }
  }
  for (estimator in ESTIMATORS) for (type in SKCE_TYPES) for (bw in BANDWIDTHS) {
    rows[[length(rows) + 1L]] <- evaluate(
      case, "skce", estimator, type, "", bandwidth_label(bw),
      function() skce(p, y, estimator = estimator, bandwidth = bw, type = type))
  }
  for (bw in BANDWIDTHS) {
    rows[[length(rows) + 1L]] <- evaluate(case, "mmce", "", "", "", bandwidth_label(bw),
                                          function() mmce(p, y, bandwidth = bw))
  }
}
reference <- do.call(rbind, rows)
# Only the free-text error column needs quoting.
utils::write.csv(reference, file.path(data_dir, "reference.csv"), row.names = FALSE,
                 quote = which(names(reference) == "error"))

# ------------------------------------------------- the bundled example data
#
# calibr ships two data sets of predictions (calibr/datasets/data/). Their
# per-model summaries and per-bin tables are computed here, in R, so that no
# number in calibr's tests of the bundled data comes from calibr itself:
# ece()/mce() from calibrRef, bins from calibrRef's own bin table, and the
# interval of each bin's observed frequency from R's
# prop.test(x, n, correct = FALSE) (the Wilson score interval).

bundled_dir <- file.path(root, "calibr", "datasets", "data")
bundled_files <- file.path(bundled_dir, c("breast_cancer_predictions.csv",
                                          "digits_predictions.csv"))
read_bundled <- function(name) {
  df <- utils::read.csv(file.path(bundled_dir, paste0(name, "_predictions.csv")),
                        stringsAsFactors = FALSE)
  p_cols <- grep("^p(_[0-9]+)?$", names(df), value = TRUE)
  p <- if (identical(p_cols, "p")) as.double(df$p) else {
    m <- as.matrix(df[p_cols])
    storage.mode(m) <- "double"
    dimnames(m) <- NULL
    m
  }
  # the digits labels are 0..9 in the file; R's class codes are 1..K
  y <- if (is.matrix(p)) as.integer(df$y) + 1L else as.integer(df$y)
  list(model = df$model, p = p, y = y)
}
BUNDLED <- list(
  list(data = "breast_cancer", summaries = list(
    list(metric = "ece", type = "classwise", bins = 10),
    list(metric = "mce", type = "classwise", bins = 10),
    list(metric = "ece", type = "classwise", bins = 5),
    list(metric = "mce", type = "classwise", bins = 15)),
    tables = list(list(type = "classwise", bins = 10, level = 0.95),
                  list(type = "classwise", bins = 7, level = 0.9))),
  list(data = "digits", summaries = list(
    list(metric = "ece", type = "classwise", bins = 10),
    list(metric = "mce", type = "classwise", bins = 10),
    list(metric = "ece", type = "confidence", bins = 10),
    list(metric = "mce", type = "confidence", bins = 4)),
    tables = list(list(type = "classwise", bins = 10, level = 0.95),
                  list(type = "confidence", bins = 5, level = 0.8)))
)
fmt17 <- function(x) sprintf("%.17g", x)

# One data.frame of per-bin rows for binary scores r with outcomes c.
bin_rows <- function(r, c, bins, level) {
  tab <- calibrRef:::bin_table(r, c, bins)
  breaks <- seq(0, 1, length.out = bins + 1L)
  x <- vapply(seq_len(nrow(tab)), function(i) sum(c[.bincode(r, breaks, right = TRUE,
                                                             include.lowest = TRUE)
                                                     == tab$bin[i]]), numeric(1))
  ci <- t(vapply(seq_len(nrow(tab)), function(i) {
    # (prop.test warns that its chi-squared p-value may be inaccurate for small n;
    # the interval is the closed-form Wilson interval all the same)
    suppressWarnings(stats::prop.test(x[i], tab$n[i], conf.level = level,
                                      correct = FALSE))$conf.int[1:2]
  }, numeric(2)))
  data.frame(bin = tab$bin, lower = fmt17(breaks[tab$bin]), upper = fmt17(breaks[tab$bin + 1L]),
             n = tab$n, mean_confidence = fmt17(tab$conf), observed_frequency = fmt17(tab$acc),
             gap = fmt17(abs(tab$acc - tab$conf)), ci_lower = fmt17(ci[, 1]),
             ci_upper = fmt17(ci[, 2]))
}

summary_rows <- list()
table_rows <- list()
for (spec in BUNDLED) {
  d <- read_bundled(spec$data)
  for (model in sort(unique(d$model))) {
    keep <- d$model == model
    p <- if (is.matrix(d$p)) d$p[keep, , drop = FALSE] else d$p[keep]
    y <- d$y[keep]
    for (s in spec$summaries) {
      f <- get(s$metric, envir = asNamespace("calibrRef"))
      summary_rows[[length(summary_rows) + 1L]] <- data.frame(
        data = spec$data, model = model, metric = s$metric, type = s$type, bins = s$bins,
        value = fmt17(f(p, y, bins = s$bins, type = s$type)))
    }
    for (tb in spec$tables) {
      parts <- if (!is.matrix(p)) {
        list(cbind(class = "", bin_rows(p, as.double(y), tb$bins, tb$level)))
      } else if (tb$type == "confidence") {
        top <- calibrRef:::top_label(p, y)
        list(cbind(class = "", bin_rows(top$r, top$c, tb$bins, tb$level)))
      } else {
        lapply(seq_len(ncol(p)), function(k) {
          # classes are named by the file's labels 0..K-1
          cbind(class = as.character(k - 1L), bin_rows(p[, k], as.double(y == k), tb$bins,
                                                       tb$level))
        })
      }
      table_rows[[length(table_rows) + 1L]] <- cbind(
        data = spec$data, model = model, type = tb$type, bins = tb$bins,
        level = format(tb$level), do.call(rbind, parts))
    }
  }
}
bundled_summary <- do.call(rbind, summary_rows)
bundled_tables <- do.call(rbind, table_rows)
utils::write.csv(bundled_summary, file.path(data_dir, "bundled_summary.csv"), row.names = FALSE,
                 quote = FALSE)
utils::write.csv(bundled_tables, file.path(data_dir, "bundled_tables.csv"), row.names = FALSE,
                 quote = FALSE)

# ---------------------------------------------------------------- provenance

md5 <- function(paths) unname(tools::md5sum(paths))
rel <- function(paths) substring(normalizePath(paths), nchar(root) + 2L)
pkg_dir <- file.path(root, "r_reference", "calibrRef")
pkg_files <- sort(c(file.path(pkg_dir, c("DESCRIPTION", "NAMESPACE")),
                    list.files(file.path(pkg_dir, "R"), full.names = TRUE)))
script_files <- file.path(root, "r_reference", c("make_inputs.R", "make_reference.R"))
input_files <- c(file.path(in_dir, c("cases.csv", "generated_by.txt")),
                 file.path(in_dir, paste0(manifest$case, ".csv")), bundled_files)
checksum_table <- function(paths) {
  c("| file | md5 |", "| --- | --- |", sprintf("| `%s` | `%s` |", rel(paths), md5(paths)))
}
n_errors <- sum(reference$error != "")

provenance <- c(
  "# R reference data: provenance",
  "",
  "Generated by committed R scripts from committed, seeded inputs. Do not edit by hand and",
  "never regenerate these numbers from Python (e.g. pytest-regressions' `--force-regen`).",
  "",
  "## How to regenerate",
  "",
  "From the repository root:",
  "",
  "```sh",
  "R CMD INSTALL r_reference/calibrRef     # the reference package (base R only)",
  "Rscript r_reference/make_inputs.R       # only if the inputs must change",
  "Rscript r_reference/make_reference.R    # reference.csv, bundled_*.csv and this file",
  "```",
  "",
  "## Run",
  "",
  sprintf("- Date (UTC): %s", format(Sys.time(), "%Y-%m-%d %H:%M:%S", tz = "UTC")),
  sprintf("- R: %s", R.version.string),
  sprintf("- Platform: %s", R.version$platform),
  sprintf("- calibrRef: %s (installed from `r_reference/calibrRef`)",
          as.character(utils::packageVersion("calibrRef"))),
  "- Inputs were made by a run of `r_reference/make_inputs.R` that recorded:",
  paste0("  ", readLines(file.path(in_dir, "generated_by.txt"))),
  sprintf("- Cases: %d; reference rows: %d, of which %d record an R error.",
          nrow(manifest), nrow(reference), n_errors),
  "",
  "## Inputs (`inputs/`, written by `r_reference/make_inputs.R`)",
  "",
  "Each case was generated right after `set.seed(seed)` with the seed below. A binary case",
  "has columns `p` (P(y = 1)) and `y` (0/1); a multiclass case has `p1`, ..., `pK` (one",
  "column per class, rows summing to 1) and `y` (class codes 1..K, as in R). Doubles are",
  "written with `sprintf(\"%.17g\")` and read back bit-identical (the script checks).",
  "",
  "| case | kind | n | K | seed | description |",
  "| --- | --- | --- | --- | --- | --- |",
  sprintf("| `%s` | %s | %d | %d | %d | %s |", manifest$case, manifest$kind, manifest$n,
          manifest$k, manifest$seed, manifest$description),
  "",
  "## Outputs: `reference.csv` columns",
  "",
  "One row per (case, metric, options), every option combination below for every case:",
  "",
  "| column | meaning |",
  "| --- | --- |",
  "| `case` | the input, `inputs/<case>.csv` |",
  "| `metric` | `ece`, `mce`, `skce` or `mmce` (the calibrRef function called) |",
  "| `estimator` | skce only: `uq`, `ul` or `biased`; empty otherwise |",
  paste0("| `type` | ece/mce: `classwise` or `confidence`; skce: `canonical`, `confidence` or ",
         "`classwise`; empty for mmce. For a binary case `type` is ignored by R, so all ",
         "types give the same number |"),
  sprintf("| `bins` | ece/mce only: %s; empty otherwise |", paste(BINS, collapse = ", ")),
  paste0("| `bandwidth` | skce/mmce only: `0.05`, `0.2`, `1` (passed to R as those doubles) ",
         "or `median`; empty otherwise |"),
  "| `value` | the result, `sprintf(\"%.17g\")`; empty when R signalled an error |",
  "| `error` | R's condition message when the call failed (quoted); empty otherwise |",
  "",
  "Calls are exactly `ece(p, y, bins = bins, type = type)`, `mce(...)`,",
  "`skce(p, y, estimator = estimator, bandwidth = bandwidth, type = type)` and",
  "`mmce(p, y, bandwidth = bandwidth)` with `p` a double vector or matrix and `y` an",
  "integer vector, as read by `utils::read.csv`.",
  "",
  "## Outputs: the bundled example data",
  "",
  "`bundled_summary.csv` and `bundled_tables.csv` hold the numbers behind calibr's tests of",
  "its bundled data sets (`calibr/datasets/data/*.csv`, checksums below), per model:",
  "",
  "- `bundled_summary.csv`: `data`, `model`, `metric` (calibrRef's `ece` or `mce`), `type`,",
  "  `bins`, `value` (`sprintf(\"%.17g\")`). The digits labels 0..9 are passed to R as",
  "  class codes 1..10.",
  "- `bundled_tables.csv`: one row per non-empty bin (and class, for the classwise form of",
  "  the digits data; `class` is the file's label 0..9, empty otherwise): `data`, `model`,",
  "  `type`, `bins`, `level`, `class`, `bin` (1-based), `lower`/`upper` (the breaks),",
  "  `n`, `mean_confidence`, `observed_frequency`, `gap` (from calibrRef's bin table) and",
  "  `ci_lower`/`ci_upper` = `prop.test(x, n, conf.level = level, correct = FALSE)$conf.int`.",
  "",
  "## Numerical notes for comparisons",
  "",
  "- R's `sum()` and `mean()` accumulate in long double (and `mean()` adds a second,",
  "  correcting pass), so a float64 implementation agrees to a few ulps, not bit for bit.",
  "- Where a value is ~0 by cancellation (unbiased SKCE of well-calibrated data; the",
  "  residuals of `bin_constant_n10` sum to exactly 0 in real arithmetic) its relative error",
  "  is meaningless: compare with an absolute tolerance as well. `mmce` is the square root",
  "  of the biased SKCE, so there an absolute error of 1e-18 in the SKCE becomes ~1e-9 (the",
  "  `bin_constant_n10` mmce values are 3.65e-09, i.e. rounding noise around 0).",
  "- The canonical form uses `tcrossprod()` (BLAS) for the residual inner products.",
  "",
  "## Checksums (md5)",
  "",
  "Scripts:",
  "",
  checksum_table(script_files),
  "",
  "Reference package sources:",
  "",
  checksum_table(pkg_files),
  "",
  "Inputs (the seeded cases and the bundled data sets):",
  "",
  checksum_table(input_files),
  ""
)
writeLines(provenance, file.path(data_dir, "PROVENANCE.md"))
cat(sprintf("wrote %d rows (%d errors) to %s\n", nrow(reference), n_errors,
            file.path(data_dir, "reference.csv")))
