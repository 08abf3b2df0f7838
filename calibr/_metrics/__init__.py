"""The metrics layer: one module per family of estimators, each a thin public
function over the input layer (:mod:`calibr._input`), the bin rules
(:mod:`calibr._binning`) and the kernels (:mod:`calibr._kernels`).

* :mod:`.binned`: ``ece()``, ``mce()`` (R's binned estimators);
* :mod:`.lp`: ``calibration_error()`` (the Lp norms of the binned gaps);
* :mod:`.kernel`: ``mmce()``, ``skce()``, ``median_bandwidth()``;
* :mod:`.smooth` and :mod:`.smooth_relplot`: ``smece()`` and its curve;
* :mod:`.cumulative`: ``ecce()`` and the cumulative statistics;
* :mod:`.scores`: ``brier()``, ``log_loss()``, ``auroc()`` (the proper scores and
  the discrimination reported beside a calibration error);
* :mod:`.decompose`: ``decompose()`` (the CORP decomposition of the Brier score);
* :mod:`.valprob` and :mod:`.lowess`: ``val_prob()`` (rms::val.prob's indexes).

The metric registry (:mod:`calibr._registry`) names these functions; nothing here
imports a layer above (``tests/test_architecture.py``).
"""
