"""calibr.sklearn's scorer against the same metric called by hand on ``predict_proba``.

Run: ``python benchmarks/bench_sklearn.py`` (needs scikit-learn).

Two measures, each the median of ``--repeat`` rounds after a warm-up, the scorer
and the hand call in turn in each round (so a change in the machine's load hits
both alike), with the ratio scorer / hand (target in ``benchmarks/README.md``):

* score: one fitted ``LogisticRegression`` scored on ``--n`` held-out rows,
  ``make_scorer(metric)(model, X, y)`` against ``calibr.<metric>(
  model.predict_proba(X)[:, 1] or the matrix, y, classes=model.classes_)``;
* cross_validate: ``cross_validate(LogisticRegression(), X, y, cv=5,
  scoring=scorer)`` against the loop a user would write (fit a clone on each
  fold's training rows, ``predict_proba`` on its test rows, the metric), one
  process; and the same ``cross_validate`` with the hand call as its ``scoring``
  callable (what a user writes without calibr.sklearn), which isolates the
  scorer's cost from ``cross_validate``'s own; and, from those two, the summed
  ``score_time`` of the folds (``predict_proba`` and the metric on each test fold,
  which ``cross_validate`` times apart from the fits): the scorer's cost itself.

Binary (string labels) and K = 10 (``type="confidence"``), ``ece`` with 15 bins.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _interleaved(a, b, repeat: int) -> tuple[float, float]:
    a()
    b()
    ta, tb = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        a()
        t1 = time.perf_counter()
        b()
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
    return statistics.median(ta), statistics.median(tb)


def _data(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    W = rng.normal(size=(8, k))
    logits = X @ W + rng.gumbel(size=(n, k))
    labels = np.array([f"class_{j}" for j in range(k)])
    return X, labels[logits.argmax(axis=1)]


def bench_case(k: int, n: int, cv_n: int, repeat: int) -> None:
    """Print the two measures for K = ``k`` classes."""
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold, cross_validate

    import calibr
    from calibr.sklearn import make_scorer

    options = {"bins": 15} if k == 2 else {"bins": 15, "type": "confidence"}
    scorer = make_scorer("ece", **options)

    def by_hand(model, X, y):
        proba = model.predict_proba(X)
        p = proba[:, 1] if k == 2 else proba
        return -calibr.ece(p, y, classes=model.classes_, **options)

    X, y = _data(n, k)
    model = LogisticRegression(max_iter=200).fit(X[:5000], y[:5000])
    assert scorer(model, X, y) == by_hand(model, X, y)
    t_s, t_h = _interleaved(lambda: scorer(model, X, y), lambda: by_hand(model, X, y), repeat)
    print(f"{f'score, K={k}, n={n:,}':<34} {t_s:>10.4f} {t_h:>10.4f} {t_s / t_h:>7.3f}")

    Xc, yc = _data(cv_n, k, seed=1)
    cv = KFold(5, shuffle=True, random_state=0)
    est = LogisticRegression(max_iter=200)

    def with_scorer():
        return cross_validate(est, Xc, yc, cv=cv, scoring=scorer)["test_score"]

    def loop():
        out = []
        for train, test in cv.split(Xc):
            m = clone(est).fit(Xc[train], yc[train])
            out.append(by_hand(m, Xc[test], yc[test]))
        return np.array(out)

    assert (with_scorer() == loop()).all()
    t_s, t_h = _interleaved(with_scorer, loop, max(3, repeat // 2))
    print(f"{f'cross_validate, K={k}, n={cv_n:,}':<34} {t_s:>10.4f} {t_h:>10.4f} "
          f"{t_s / t_h:>7.3f}")

    def with_callable():  # the hand call as cross_validate's scoring: its own cost apart
        return cross_validate(est, Xc, yc, cv=cv, scoring=by_hand)["test_score"]

    assert (with_callable() == loop()).all()
    t_s, t_h = _interleaved(with_scorer, with_callable, max(3, repeat // 2))
    print(f"{f'cv vs hand callable, K={k}, n={cv_n:,}':<34} {t_s:>10.4f} {t_h:>10.4f} "
          f"{t_s / t_h:>7.3f}")

    # the scoring step alone: cross_validate's own score_time (predict_proba and the
    # metric on each test fold, summed over the folds), free of the fits' noise
    times: dict[str, list[float]] = {"scorer": [], "hand": []}

    def timed(scoring, key):
        def run():
            times[key].append(cross_validate(est, Xc, yc, cv=cv,
                                             scoring=scoring)["score_time"].sum())
        return run

    _interleaved(timed(scorer, "scorer"), timed(by_hand, "hand"), max(3, repeat // 2))
    t_s, t_h = statistics.median(times["scorer"][1:]), statistics.median(times["hand"][1:])
    print(f"{f'score_time in cv, K={k}, n={cv_n:,}':<34} {t_s:>10.4f} {t_h:>10.4f} "
          f"{t_s / t_h:>7.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200_000, help="rows scored (score measure)")
    ap.add_argument("--cv-n", type=int, default=50_000, help="rows of cross_validate")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"{'case':<34} {'scorer s':>10} {'hand s':>10} {'ratio':>7}")
    for k in (2, 10):
        bench_case(k, args.n, args.cv_n, args.repeat)


if __name__ == "__main__":
    main()
