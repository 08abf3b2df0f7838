"""Every numeric tolerance of the test suite, each with its reason.

Import from here instead of writing literals in tests.
"""

#: calibr vs the R reference (rpy2 or committed data): the same formula with a
#: different summation order (R's mean() accumulates in long double and corrects).
R_RTOL = 1e-12
#: ... with an absolute floor for values that are 0 up to rounding (a perfectly
#: calibrated bin gives |acc - conf| ~ 1e-17 rather than 0).
R_ATOL = 1e-14

#: fast kernel vs readable oracle: same sums in another order (chunked, parallel).
ORACLE_RTOL = 1e-12
ORACLE_ATOL = 1e-14

#: ECE <= MCE is exact in real arithmetic; the n-weighted mean of the gaps can
#: exceed their maximum by a few ulps of rounding.
ORDER_SLACK = 1e-15

#: SKCE vs the R reference: pair sums of up to n^2 terms in another order.
SKCE_RTOL = 1e-9
SKCE_ATOL = 1e-12

#: calibr.torchmetrics vs torchmetrics, float64 results: the per-bin sums are the
#: same bits; torch's l2 sqrt is not correctly rounded, and on logits calibr's
#: sigmoid is a few ulps off torch's (docs/torchmetrics.md; measured 2.2e-16).
TORCHMETRICS_ATOL64 = 1e-12
#: ... float32 results (multiclass always): the same at float32 rounding
#: (measured on logits: at most 3.3e-7, a few float32 ulps of 1).
TORCHMETRICS_ATOL32 = 1e-6
#: calibr's sigmoid/softmax of logits vs torch's (or the exact oracles), in ulps
#: of each value: libm's exp and torch's SLEEF exp are each about 1 ulp from
#: exact, and torch adds a long softmax row in another order (measured: sigmoid
#: at most 4, softmax at most 11 with up to 100 classes; docs/torchmetrics.md).
LOGIT_ULPS = 16

# val_prob() vs rms::val.prob, R's glm() and exact computations

#: calibr vs R where both compute the same formula: only the order of the
#: sums differs (R's sum() and mean() accumulate in long double).
VALPROB_RTOL = 1e-9
#: ... with an absolute floor for values that are 0 up to rounding (U, Q and
#: S:z of well-calibrated data are sums of terms that cancel).
VALPROB_ATOL = 1e-12
#: p-values: R computes U:p as 1 - pchisq(x, 2), which cancels to a multiple of
#: 2^-53 near 0; calibr's upper tail does not. One ulp of 1 covers R's rounding.
PVALUE_ATOL = 2.0**-52
#: Intercept and Slope vs rms::val.prob itself: rms's lrm.fit stops Newton-
#: Raphson once -2LL changes by at most 0.025 (then takes one more step), so its
#: estimates are off the maximum by up to 7e-8 relative on these datasets (2.2e-6
#: on other data tried); calibr iterates to full convergence (and equals glm(),
#: VALPROB_RTOL).
RMS_FIT_RTOL = 1e-5
#: The oracle of rms's Fortran vs rms: the same operations in the same order,
#: with the same C library; only the 2 x 2 solve differs (LINPACK QR vs LAPACK).
RMS_ORACLE_RTOL = 1e-12
#: calibr's port of lowess vs R's lowess(): the same floating-point operations
#: in the same order (bit-identical here); the margin allows a compiler that
#: fuses multiply-adds on another platform.
LOWESS_RTOL = 1e-13
LOWESS_ATOL = 1e-15
#: Float computations vs exact fractions: a handful of roundings.
EXACT_RTOL = 1e-14
#: calibr's Intercept/Slope vs the maximum computed in 40-digit decimals on
#: near-separated data: rounding amplified by the fit's condition number
#: (slopes up to 1,364); observed at most 2.3e-14.
MLE_RTOL = 1e-12

# calibration_test() (tests/test_calibration_tests.py)

#: The fast SKCE test (running sums along the sorted values, blocked canonical
#: tiles) vs the dense kernel-matrix oracle, for the statistic, the estimate and
#: every bootstrap replicate: the same sums in another order. Each replicate is
#: compared relative to the largest |T'| of its null distribution (single values
#: near 0 have no relative accuracy); measured at most 6e-14 at n = 2,000.
CTEST_RTOL = 1e-12
#: Hosmer-Lemeshow vs base R (quantile + cut + xtabs + pchisq): the same sums
#: in another order; the chi-square tail as a finite sum of terms computed from
#: lgamma, whose rounding grows with the size of their logarithms (measured at
#: most 5e-15 relative for df <= 40, x <= 200).
HL_RTOL = 1e-12

# frequency weights (tests/test_weights.py)

#: A weighted value vs the same metric on the repeated rows (or unit weights vs
#: none, or weights scaled by a constant): w_i * x_i once instead of w_i
#: additions, pair sums through the weighted recurrence; the same sums in
#: another order.
WEIGHTS_RTOL = 1e-12
#: ... with an absolute floor for "uq" estimates near 0, where the pair sum
#: cancels (terms are bounded by 1, so rounding is at most a few 1e-16).
WEIGHTS_ATOL = 1e-14

# Dask (tests/test_dask.py)

#: Merged per-partition sums add the confidences in another order than one pass
#: over all rows: the binned results agree to rounding (docs/dask.md).
DASK_MERGED_RTOL = 1e-12
#: The exact distributed scalar SKCE (a global sort, per-partition pair sums and
#: the factorised cross-partition terms) adds its O(n^2) signed terms in another
#: order: to rounding, relative to a value that cancellation can make small
#: (measured about 6e-15).
DASK_SORTED_RTOL = 1e-11
#: ecce() on Dask (the global sort by the keys, then a prefix scan): each
#: partition's running sum starts from 0 and is added to the total before it,
#: where the pandas path runs one sum over all rows: to rounding (measured about
#: 2e-15); bit for bit with one partition.
DASK_SCAN_RTOL = 1e-12

# decompose() (tests/test_decompose.py)

#: calibr vs model_diagnostics.scoring.decompose (model-diagnostics 1.5.0): the same
#: isotonic fit; the recalibrated score summed per block (n_b H(ybar_b)) instead of
#: per row, the means in another order; values of order 1 (measured at most 3e-16).
MODEL_DIAGNOSTICS_ATOL = 1e-12
#: score = mcb - dsc + unc, and mcb, dsc >= 0, in floats: a handful of roundings of
#: numbers no larger than the score (relative to max(1, score)).
DECOMPOSE_IDENTITY_RTOL = 1e-14

# multicalibration() (tests/test_multicalibration.py)

#: Per-segment ECCE, sigma and their ratio vs mcgrad 0.1.5 at float64, and vs
#: the oracle: the same sums in another order (calibr divides the range of the
#: running sum by the segment's weight once, mcgrad divides every term before
#: its cumulative sum; the oracle pools ties with numpy.unique). Measured at
#: most 2e-15 relative on 5,000 rows.
MULTICAL_RTOL = 1e-12
#: p-values vs mcgrad: mcgrad computes 1 - F(x) from its series everywhere (an
#: absolute error of a few ulps of 1; 2.2e-16 once x >= 8.27, where it stops),
#: calibr the upper tail directly from x >= 1. Measured at most 2e-15.
MULTICAL_PVALUE_ATOL = 1e-14
#: calibr's tail of the range of Brownian motion vs the 40-digit oracle: from
#: x >= 1 relative to the value (each erfc term is within an ulp or two and
#: they alternate with little cancellation); below, 1 - F(x) is absolute.
RANGE_SF_RTOL = 1e-13
RANGE_SF_ATOL = 1e-15

# ecce() and calibration_test("ks" | "kuiper") (tests/test_ecce.py)

#: calibr.ecce vs mcgrad's ecce / ecce_sigma at float64 and vs the oracle: the
#: same running sum (mcgrad divides each term by n before its cumsum, calibr the
#: extremes once). Measured at most 2e-14 relative at n = 1e5.
ECCE_RTOL = 1e-12
#: calibr.ecce (exact p) vs MAPIE's statistics: MAPIE sorts and sums the scores
#: multiplied by 1 + 1e-8 N(0, 1) (its add_jitter, seed 1), so its running sums
#: are off by about 1e-8 of each score. Measured at most 3e-9 relative.
MAPIE_JITTER_RTOL = 1e-7
#: the tail of the maximum of |B| vs the 40-digit oracle (as RANGE_SF_*): from
#: x >= 1 relative to the value, below absolute.
MAX_ABS_SF_RTOL = 1e-13
MAX_ABS_SF_ATOL = 1e-15
# Lazy engines: polars LazyFrame, DuckDB, Spark (tests/test_engines*.py)

#: The engine adds each bin's confidences (and weighted sums) in its own order
#: (threads, partitions), not in row order: the binned results agree to rounding
#: (docs/engines.md); counts and hits are integers, exact in any order.
ENGINE_RTOL = 1e-12

#: calibr's top-label ECE vs MAPIE's top_label_ece (tests/test_top_label.py): the
#: same bins and gaps; MAPIE sums each bin by numpy.sum (pairwise), calibr in row
#: order, and the per-class terms are added with their shares.
MAPIE_RTOL = 1e-12
