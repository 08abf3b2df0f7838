"""Lazy sources: polars ``LazyFrame``, DuckDB relations and Spark DataFrames
(``docs/engines.md``).

The public metrics and verbs hand such a source here through
:func:`calibr._input.lazy_backend` (:data:`calibr._input.BACKENDS` names one
module per engine: :mod:`.polars`, :mod:`.duckdb`, :mod:`.spark`); none of these
modules, nor its engine, is imported before such a value is passed.

One written rule (:mod:`._lazy`):

* **Pushed down**: the binned metrics of a binary ``p`` (``ece``, ``mce``,
  ``calibration_error``, ``calibration_table`` and the ``ece``/``mce`` columns of
  ``summarise``), with R's bins, any number of equal-width bins, explicit breaks,
  either closure, and weights; equal-mass bins of an ungrouped source without
  weights. The engine computes each row's bin in its own expression language
  and the per-(group, bin) sums in one ``group_by().agg()``, with counters of bad
  values; only O(groups x bins) numbers travel to the driver, which finishes as
  the pandas path does.
* **Pushed down too** (``._pushdown``): ``brier``, ``log_loss``, ``auroc``, ``ecce`` and
  ``calibration_test(method="spiegelhalter" | "hosmer_lemeshow" | "ks" | "kuiper")`` of a
  binary ``p``, and
  the first four as ``summarise`` columns per group: row sums, and the running sums
  over ``p`` per group (a window), with the binned path's check of bad values.
* **Collected**: everything else (multiclass ``p``, ``classes=``,
  ``type="top-label"`` (which reads a binary ``p`` as two columns), kernel
  metrics, callables, ``tests``/``confidence_level``, consistency bands, isotonic bins,
  equal-mass bins per group or with weights) and the messages of bad input: the
  columns used are collected and the eager path runs on them, bit for bit that
  of pandas, when the source has at most :data:`._lazy.MAX_COLLECT_ROWS` rows;
  above, calibr refuses with a message naming the way out.
* **Resampled on the engine**: ``bootstrap(..., scheme="poisson", row_key=...)`` of
  ``ece``/``mce`` with fixed bins, ``brier`` and ``log_loss``, and the same
  intervals of ``summarise(..., scheme="poisson")`` by group (:mod:`._poisson`):
  each row's Poisson(1) count per replicate from a counter-based generator
  written in the engine's language, the per-(group, replicate, bin) sums on the
  engine.
"""
