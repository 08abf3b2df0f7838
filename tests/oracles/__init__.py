"""Readable reference implementations ("oracles") of calibr's kernels, for the tests.

Each oracle is the definition written plainly (numpy loops over bins, n x n
matrices, exact rational arithmetic), independent of the fast code in
``calibr/_kernels/``: nothing here imports a kernel, so that a test comparing a
kernel with its oracle compares two independent computations. The definitions
are in ``docs/definitions.md`` (and ``docs/torchmetrics.md`` for
``calibr.torchmetrics``).

The oracles of the kernels in ``calibr/_kernels/``:

* :mod:`.binned` -- per-bin statistics of ``ece()``/``mce()``, in float64 and
  in exact fractions;
* :mod:`.top_label` -- the top-label calibration error (``type="top-label"``):
  each predicted class's rows binned on their own, a loop over the (class, bin)
  cells;
* :mod:`.decompose` -- the isotonic fit (PAV in exact fractions), and the CORP
  and Murphy decompositions of ``decompose()``, scored row by row;
* :mod:`.skce` -- the SKCE estimators and the median bandwidth from the n x n
  distance matrix;
* :mod:`.torchmetrics` -- torchmetrics' bins and per-bin sums, and the top label;
* :mod:`.multicalibration` -- ``multicalibration()``'s segments (pandas'
  ``value_counts``, ``quantile`` and ``cut``), each segment's ECCE from its own
  rows, and the tail of the range of Brownian motion in 40 digits;
* :mod:`.cumulative` -- ``ecce()``'s cumulative differences over the distinct
  values of ``p``, and the tail of the maximum of ``|B|`` in 40 digits;
* :mod:`.valprob_oracle` -- ``rms::val.prob``'s statistics and its Fortran
  logistic fit, transcribed from R's source (``docs/val_prob.md``).
"""
