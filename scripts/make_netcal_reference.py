"""Reference numbers of netcal's ECE, made once with netcal itself and committed
(netcal pulls in gpytorch and pyro, too heavy for CI).

netcal's ``ECE(bins).measure(X, y)`` needs only numpy and scipy, so this script
runs it from netcal's PyPI wheel unpacked to a folder, without installing it or
its dependencies::

    pip download netcal==1.4.0 --no-deps -d /tmp/netcal
    python -m zipfile -e /tmp/netcal/netcal-1.4.0-py3-none-any.whl /tmp/netcal/x
    PYTHONPATH=/tmp/netcal/x python scripts/make_netcal_reference.py

It writes ``tests/data/netcal_reference/netcal_ece.csv`` (one row per case:
the case's generator arguments and netcal's value at 17 significant digits)
and ``PROVENANCE.md`` beside it. The inputs are not stored: :func:`case_data`
makes them from a seed, and ``tests/test_netcal_reference.py`` makes the same
inputs with it and compares calibr's call for netcal's convention
(``docs/conventions.md``: left-closed bins, ``right=False``).
"""

from __future__ import annotations

import csv
import platform
import sys
from datetime import date
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "netcal_reference"

#: (kind, n, k, bins, seed): binary random, binary on the decimal grid k/10
#: (values on the edges), heavy ties, and multiclass top-label (netcal's
#: confidence ECE of a probability matrix).
CASES = [
    *[("binary", n, 1, b, s) for n in (1, 7, 100, 1000) for b in (5, 10, 15) for s in (0, 1)],
    *[("grid", n, 1, b, s) for n in (50, 500) for b in (5, 10) for s in (0, 1)],
    *[("ties", 300, 1, b, s) for b in (4, 10) for s in (0, 1)],
    *[("multiclass", 500, k, b, s) for k in (3, 10) for b in (10, 15) for s in (0, 1)],
]


def case_data(kind: str, n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The predictions and labels of one case (numpy's default_rng of the seed)."""
    gen = np.random.default_rng([seed, n, k, len(kind)])
    if kind == "multiclass":
        p = gen.dirichlet(np.full(k, 0.5), n)
        y = np.minimum((np.cumsum(p**1.5 / np.sum(p**1.5, axis=1, keepdims=True), axis=1)
                        <= gen.random(n)[:, None]).sum(axis=1), k - 1)
        return p, y
    if kind == "grid":
        p = gen.integers(0, 11, n) / 10.0
    elif kind == "ties":
        p = gen.choice([0.0, 0.25, 0.5, 0.75, 1.0], n)
    else:
        p = gen.random(n)
    y = (gen.random(n) < p**2).astype(np.int64)
    return p, y


def main() -> None:
    import netcal
    import scipy
    from netcal.metrics import ECE

    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for kind, n, k, bins, seed in CASES:
        p, y = case_data(kind, n, k, seed)
        rows.append((kind, n, k, bins, seed, repr(float(ECE(bins=bins).measure(p, y)))))
    with open(OUT / "netcal_ece.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["kind", "n", "k", "bins", "seed", "netcal_ece"])
        w.writerows(rows)
    (OUT / "PROVENANCE.md").write_text(
        "# netcal reference numbers\n\n"
        f"Made by `scripts/make_netcal_reference.py` on {date.today().isoformat()} with "
        f"netcal {netcal.__version__} (its PyPI wheel unpacked, not installed, no "
        f"dependencies), numpy {np.__version__}, scipy {scipy.__version__}, Python "
        f"{platform.python_version()}; {len(rows)} cases, the inputs made by "
        "`case_data()` of that script from their seeds. netcal's value is "
        "`netcal.metrics.ECE(bins=bins).measure(p, y)`, written with `repr()` (17 "
        "significant digits).\n", encoding="utf-8")
    print(f"wrote {len(rows)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
