"""Live parity of skce() and mmce() with the R reference (``r_reference/calibrRef``,
driven through rpy2 by ``tests/rref.py``) on hundreds of freshly generated cases:
every estimator, form and bandwidth; n = 2, 3 and odd n; heavy ties, constant
columns, one-hot rows, K up to 10, bandwidths from 1e-3 to 10 and "median".
Also the Examples of R's help page (``r_reference/calibrRef/man/skce.Rd``) run in
R with R's own RNG, the median bandwidth against the R reference's own
``median_bandwidth()``, and the errors that both sides must raise.

Set ``CALIBR_SKCE_SEED`` to draw a different set of cases.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from tolerances import SKCE_ATOL, SKCE_RTOL

import calibr
from calibr._metrics.kernel import mmce, skce

pytestmark = pytest.mark.r

SEED = int(os.environ.get("CALIBR_SKCE_SEED", "20191029"))
N_CASES = 600
FORMS = ("binary", "canonical", "confidence", "classwise")
ESTIMATORS = ("uq", "ul", "biased")
FIXED_BANDWIDTHS = (1e-3, 0.01, 0.05, 0.2, 1.0, 10.0)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=SKCE_RTOL, abs_tol=SKCE_ATOL)


def _case(i: int):
    """Case i: (form, estimator, bandwidth, p, y) with y as R expects it."""
    rng = np.random.default_rng([SEED, i])
    form = FORMS[i % 4]
    estimator = ESTIMATORS[(i // 4) % 3]
    choice = rng.integers(0, 8)
    if choice < len(FIXED_BANDWIDTHS):
        bandwidth = float(FIXED_BANDWIDTHS[choice])
    elif choice == 6:
        bandwidth = float(10 ** rng.uniform(-3, 1))
    else:
        bandwidth = "median"
    n = int(rng.choice([2, 3, 5, int(rng.integers(4, 120)) | 1, int(rng.integers(4, 300))]))
    kind = ("plain", "ties", "onehot", "constant")[(i // 12) % 4]
    if form == "binary":
        if kind == "plain":
            p = rng.random(n)
        elif kind == "ties":
            p = rng.choice([0.0, 0.2, 0.5, 0.8, 1.0], n)
        elif kind == "onehot":
            p = rng.choice([0.0, 1.0], n)
        else:
            p = np.round(rng.beta(0.3, 0.3, n), 2)
        y = (rng.random(n) < p).astype(np.int64)
        return form, estimator, bandwidth, p, y
    k = int(rng.integers(2, 11))
    if kind == "plain":
        p = rng.dirichlet(np.ones(k) * rng.uniform(0.2, 3), n)
    elif kind == "ties":
        p = rng.dirichlet(np.ones(k), 4)[rng.integers(0, 4, n)]
    elif kind == "onehot":
        p = np.eye(k)[rng.integers(0, k, n)]
        mixed = rng.random(n) < 0.3
        p[mixed] = rng.dirichlet(np.ones(k), int(mixed.sum()))
    else:  # a constant column (and, with k = 2, a constant matrix)
        p = rng.dirichlet(np.ones(k - 1), n) * 0.6
        p = np.column_stack([p[:, :1], np.full(n, 0.4), p[:, 1:]])
    y = rng.integers(1, k + 1, n).astype(np.int64)
    return form, estimator, bandwidth, p, y


def _both(python_call, r_call):
    """Run both sides; return (py, r) values, or (exc, exc) when both raise."""
    try:
        want = r_call()
    except Exception as exc:  # rref.RError
        with pytest.raises(calibr.InputError) as info:
            python_call()
        return info.value, exc
    return python_call(), want


@pytest.mark.parametrize("i", range(N_CASES))
def test_skce_parity(rref, i):
    form, estimator, bandwidth, p, y = _case(i)
    r_type = "canonical" if form == "binary" else form
    got, want = _both(
        lambda: skce(p, y, estimator, bandwidth, r_type),
        lambda: rref.skce(p, y, estimator=estimator, bandwidth=bandwidth, type=r_type),
    )
    if isinstance(want, Exception):
        assert isinstance(want, rref.RError)
        assert "median" in str(want)
        if form == "classwise":  # calibr also names the first constant column (R does not)
            k = int(np.flatnonzero(np.ptp(p, axis=0) == 0)[0])
            assert str(got) == (
                '`bandwidth = "median"` with `type = "classwise"` needs at least two distinct '
                f"predictions in every column of `p`; the column of class {k + 1} has all its "
                f"values equal ({float(p[0, k])!r})."
            )
        else:
            assert str(got) == str(want)
        return
    assert _close(got, want), (form, estimator, bandwidth, p.shape, got, want)
    if form in ("binary", "confidence"):
        m_got, m_want = mmce(p, y, bandwidth), rref.mmce(p, y, bandwidth=bandwidth)
        assert _close(m_got, m_want)
        if estimator == "biased":
            assert _close(m_got**2, got)


def test_every_combination_is_covered():
    seen = set()
    for i in range(N_CASES):
        form, estimator, bandwidth, p, _ = _case(i)
        seen.add((form, estimator, bandwidth == "median"))
    assert len(seen) == 4 * 3 * 2
    sizes = {_case(i)[3].shape[0] for i in range(N_CASES)}
    assert {2, 3} <= sizes and any(s % 2 == 1 and s > 3 for s in sizes)
    ks = {_case(i)[3].shape[1] for i in range(N_CASES) if _case(i)[3].ndim == 2}
    assert 10 in ks and 2 in ks


@pytest.mark.parametrize("n", (2, 3, 4, 7))
@pytest.mark.parametrize("bandwidth", (1e-3, 0.2, 10.0, "median"))
def test_small_n_every_form(rref, n, bandwidth):
    rng = np.random.default_rng([SEED, 1000 + n])
    p = rng.random(n)
    y = (rng.random(n) < 0.5).astype(np.int64)
    prob = rng.dirichlet(np.ones(3), n)
    lab = rng.integers(1, 4, n).astype(np.int64)
    for estimator in ESTIMATORS:
        assert _close(
            skce(p, y, estimator, bandwidth), rref.skce(p, y, estimator, bandwidth=bandwidth)
        )
        for t in ("canonical", "confidence", "classwise"):
            got, want = _both(
                lambda t=t, e=estimator: skce(prob, lab, e, bandwidth, t),
                lambda t=t, e=estimator: rref.skce(prob, lab, e, bandwidth=bandwidth, type=t),
            )
            if isinstance(want, Exception):
                assert str(got) == str(want)
            else:
                assert _close(got, want)


@pytest.mark.parametrize("n", (1500, 2001))
def test_median_selection_path_against_r(rref, n):
    """n large enough that the exact median selection takes its bracketing rounds
    (histogram and sampled pivots) rather than collecting every difference."""
    rng = np.random.default_rng([SEED, 2000 + n])
    for p in (rng.random(n), np.round(rng.random(n), 3), rng.beta(0.2, 0.2, n)):
        y = (rng.random(n) < p).astype(np.int64)
        for estimator in ESTIMATORS:
            got = skce(p, y, estimator, "median")
            assert _close(got, rref.skce(p, y, estimator, bandwidth="median"))
    prob = rng.dirichlet(np.ones(4) * 0.5, 700)
    lab = rng.integers(1, 5, 700).astype(np.int64)
    for t in ("canonical", "confidence", "classwise"):
        assert _close(skce(prob, lab, "uq", "median", t), rref.skce(prob, lab, "uq", "median", t))


# ------------------------------------------------- the help page, run in R


def _r():
    import rpy2.robjects as ro

    return ro


def test_help_page_examples(rref):
    ro = _r()
    ro.r(
        "set.seed(31); .p <- stats::runif(200); .y <- rbinom(200, 1, .p);"
        "set.seed(32); .prob <- matrix(stats::runif(150 * 3), ncol = 3);"
        ".prob <- .prob / rowSums(.prob); .labels <- max.col(.prob)"
    )
    p = np.array(ro.r(".p"))
    y = np.array(ro.r(".y"), dtype=np.int64)
    prob = np.array(ro.r(".prob"))
    labels = np.array(ro.r(".labels"), dtype=np.int64)
    assert p.shape == (200,) and prob.shape == (150, 3)

    # skce(p, y), computed by the R reference on R's own objects
    r_uq = ro.r("calibrRef::skce(.p, .y)")[0]
    assert _close(skce(p, y), r_uq)
    # all.equal(skce(p, y, estimator = "biased"), mmce(p, y)^2) is TRUE in R ...
    assert ro.r(
        'isTRUE(all.equal(calibrRef::skce(.p, .y, estimator = "biased"),'
        " calibrRef::mmce(.p, .y)^2))"
    )[0]
    # ... and the identity holds in Python too, to 1e-12
    assert math.isclose(skce(p, y, estimator="biased"), mmce(p, y) ** 2, rel_tol=1e-12)
    assert _close(skce(p, y, estimator="biased"), rref.skce(p, y, "biased"))
    assert _close(mmce(p, y), rref.mmce(p, y))
    # skce(prob, labels, type = "canonical")
    r_canon = ro.r('calibrRef::skce(.prob, .labels, type = "canonical")')[0]
    assert _close(skce(prob, labels, type="canonical"), r_canon)
    ro.r("rm(.p, .y, .prob, .labels)")


# ------------------------------------------------------------------- errors


@pytest.mark.parametrize("bandwidth", (0.0, -0.2, float("nan"), float("inf"), "mean"))
def test_bad_bandwidth_rejected_by_both(rref, bandwidth):
    p = np.array([0.2, 0.6, 0.9])
    y = np.array([0, 1, 1])
    with pytest.raises(rref.RError, match="bandwidth"):
        rref.skce(p, y, bandwidth=bandwidth)
    with pytest.raises(calibr.InputError, match="`bandwidth` must be a positive finite number"):
        skce(p, y, bandwidth=bandwidth)
    with pytest.raises(rref.RError, match="bandwidth"):
        rref.mmce(p, y, bandwidth=bandwidth)
    with pytest.raises(calibr.InputError, match="`bandwidth` must be a positive finite number"):
        mmce(p, y, bandwidth=bandwidth)


@pytest.mark.parametrize("estimator", ("uq", "ul"))
def test_too_few_observations_both(rref, estimator):
    with pytest.raises(rref.RError) as r_info:
        rref.skce(np.array([0.3]), np.array([1]), estimator)
    with pytest.raises(calibr.InputError) as py_info:
        skce([0.3], [1], estimator)
    assert str(py_info.value) == str(r_info.value)
    assert _close(skce([0.3], [1], "biased"), rref.skce(np.array([0.3]), np.array([1]), "biased"))


def test_median_all_equal_both(rref):
    p = np.array([0.4, 0.4, 0.4])
    y = np.array([0, 1, 1])
    with pytest.raises(rref.RError) as r_info:
        rref.skce(p, y, bandwidth="median")
    with pytest.raises(calibr.InputError) as py_info:
        skce(p, y, bandwidth="median")
    assert str(py_info.value) == str(r_info.value)


# ------------------------------------------------------- the median bandwidth


def _r_eval(rref, expr: str) -> np.ndarray:
    """Evaluate R code; an R error becomes ``rref.RError`` with R's message, as in
    ``tests/rref.py`` (R's console output is kept off the terminal)."""
    from rpy2.rinterface_lib import callbacks

    ro = _r()
    with callbacks.obj_in_module(callbacks, "consolewrite_warnerror", lambda _: None):
        try:
            return np.array(ro.r(expr))
        except rref._rruntime_error as exc:
            message = str(rref._geterrmessage()[0]).strip().removeprefix("Error: ")
            raise rref.RError(message) from exc


def _r_median(rref, x: np.ndarray) -> float:
    """The R reference's median bandwidth (``calibrRef:::median_bandwidth``, R's
    ``median(d[d > 0])``) of the distances R computes: ``abs(outer(x, x, "-"))`` for
    scalars, ``dist(p)`` for the rows of a matrix."""
    ro = _r()
    ro.globalenv[".x"] = rref._p(np.ascontiguousarray(x, dtype=np.float64))
    try:
        if x.ndim == 1:
            return float(_r_eval(rref, 'calibrRef:::median_bandwidth(abs(outer(.x, .x, "-")))')[0])
        return float(_r_eval(
            rref,
            'calibrRef:::median_bandwidth(as.matrix(stats::dist(.x, method = "euclidean")))')[0])
    finally:
        ro.r("rm(.x)")


def _r_top_label_confidence(rref, p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """R's top-label confidences (``calibrRef:::top_label``; ties to the first column)."""
    ro = _r()
    ro.globalenv[".p"] = rref._p(p)
    ro.globalenv[".y"] = rref._y(y)
    try:
        return _r_eval(rref, "calibrRef:::top_label(.p, .y)$r")
    finally:
        ro.r("rm(.p, .y)")


@pytest.mark.parametrize("i", range(40))
def test_median_bandwidth_equals_r(rref, i):
    """calibr.median_bandwidth() is R's median, bit for bit (an exact selection of
    a value R computes the same way), in every form; where R finds no positive
    distance, calibr raises R's message."""
    rng = np.random.default_rng([SEED, 3000 + i])
    n = int(rng.choice([2, 3, 4, 5, int(rng.integers(6, 400))]))
    k = int(rng.integers(2, 8))
    if i % 3 == 0:
        p = rng.dirichlet(np.ones(k) * rng.uniform(0.2, 3), n)
    elif i % 3 == 1:  # ties between rows
        p = rng.dirichlet(np.ones(k), max(2, n // 3))[rng.integers(0, max(2, n // 3), n)]
    else:  # coarse rows: many equal differences
        coarse = rng.integers(1, 4, (n, k)).astype(float)
        p = coarse / coarse.sum(axis=1, keepdims=True)
    y = rng.integers(1, k + 1, n).astype(np.int64)
    calls = [
        (lambda: calibr.median_bandwidth(p, y), lambda: _r_median(rref, p)),
        (lambda: calibr.median_bandwidth(p, y, "confidence"),
         lambda: _r_median(rref, _r_top_label_confidence(rref, p, y))),
        (lambda: calibr.median_bandwidth(p[:, 0], (y == 1).astype(np.int64)),
         lambda: _r_median(rref, p[:, 0])),
    ]
    calls += [(lambda j=j: float(calibr.median_bandwidth(p, y, "classwise")[j]),
               lambda j=j: _r_median(rref, p[:, j])) for j in range(k)]
    for py_call, r_call in calls:
        try:
            want = r_call()
        except rref.RError as err:
            with pytest.raises(calibr.InputError) as info:
                py_call()
            if "classwise" not in str(info.value):  # classwise names the column (R does not)
                assert str(info.value) == str(err)
            continue
        assert py_call() == want, i


def test_median_bandwidth_errors_match_r(rref):
    with pytest.raises(rref.RError) as r_info:
        _r_median(rref, np.array([0.4, 0.4, 0.4]))
    with pytest.raises(calibr.InputError) as py_info:
        calibr.median_bandwidth([0.4, 0.4, 0.4])
    assert str(py_info.value) == str(r_info.value)
    same = np.tile([0.2, 0.8], (3, 1))
    with pytest.raises(rref.RError) as r_info:
        _r_median(rref, same)
    with pytest.raises(calibr.InputError) as py_info:
        calibr.median_bandwidth(same)
    assert str(py_info.value) == str(r_info.value)


# ------------------------------- the median bandwidth at every n, against R


@pytest.mark.parametrize("n", (100, 101, 300, 301))
def test_median_bandwidth_at_small_n_equals_r(rref, n):
    """At n = 100 and 300 (and odd n: both parities of the number of positive
    distances occur over the kinds) the scalar median is R's median bit for bit,
    on smooth, tied, rounded, heavy-tailed, clustered and extreme data; skce()
    with it matches the R reference in every estimator."""
    rng = np.random.default_rng([SEED, 4000 + n])
    kinds = (
        rng.random(n),
        rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], n),
        np.round(rng.random(n), 2),
        rng.beta(0.1, 0.1, n),
        0.5 + rng.integers(-3, 4, n) * 1e-12,
        rng.choice([0.0, 5e-324, 1e-300, 1e-17, 1 - 2**-53, 1.0, 0.5], n),
    )
    for p in kinds:
        assert calibr.median_bandwidth(p) == _r_median(rref, p)
        y = (rng.random(n) < p).astype(np.int64)
        for estimator in ESTIMATORS:
            got = skce(p, y, estimator, "median")
            assert _close(got, rref.skce(p, y, estimator, bandwidth="median"))
    prob = rng.dirichlet(np.ones(3) * 0.5, n)
    lab = rng.integers(1, 4, n).astype(np.int64)
    for t in ("canonical", "confidence", "classwise"):
        assert _close(skce(prob, lab, "uq", "median", t), rref.skce(prob, lab, "uq", "median", t))


def test_median_bandwidth_subsample_path_equals_r(rref):
    """n above the size from which the first pivots come from a subsample: R's
    median, bit for bit."""
    rng = np.random.default_rng([SEED, 4500])
    for p in (rng.random(4500), np.round(rng.random(4501), 3)):
        assert calibr.median_bandwidth(p) == _r_median(rref, p)
