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

#: SKCE vs the R reference (issue 3): pair sums of up to n^2 terms.
SKCE_RTOL = 1e-9
SKCE_ATOL = 1e-12
