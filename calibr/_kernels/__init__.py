"""calibr's compiled kernels (numba, made by :func:`._jit.jit`), one module per job.

* ``binned`` -- per-bin sums of ``ece()``/``mce()`` (R's right-closed bins);
  ``bin_sums`` -- the same sums over any breaks, either closure, weights (the
  numpy path's ``searchsorted`` and ``bincount``, bit for bit);
* ``sweep`` -- the number of bins of ``bins="sweep"`` from the rows sorted once;
* ``skce`` -- the map of the kernel metrics and their estimators, with
  ``scalar_sums`` (pair sums of scalars), ``scalar_median`` (the exact median
  bandwidth of scalars), ``canonical`` (tiles of the canonical form) and
  ``vexp`` (a vectorisable exp);
* ``top_label`` -- the one top-label rule (first maximal column);
* ``multicalibration`` -- one pass over the rows sorted by ``p`` per
  combination of segment features;
* ``cumulative`` -- ``ecce()``'s cumulative differences (the rows' ``p`` and
  ``y`` packed into one sorted integer key), and the tails of the maximum
  of ``|B|`` and of the range of Brownian motion, the ECCE p-values;
* ``scans`` -- the input layer's one-pass checks;
* ``rms`` -- the arithmetic of rms's Fortran ``lrm.fit`` for
  ``val_prob(method="rms")``;
* ``torchmetrics_kernels`` -- ``calibr.torchmetrics`` (left-closed bins on
  torch.linspace boundaries, torch's order of additions);
* ``_threads`` -- the one chunk runner; ``_jit`` -- the compiler and its cache.

The formulas are in ``docs/definitions.md``; the readable numpy oracles that the
tests check these kernels against are in ``tests/oracles/``.
"""
