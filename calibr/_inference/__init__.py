"""The inference layer: intervals and tests over the registered metrics.

* :mod:`.bootstrap`: ``bootstrap()`` and ``paired_bootstrap()``;
* :mod:`.calibration_tests`: ``calibration_test()`` (resampling and asymptotic
  tests of calibration);
* :mod:`.multitest`: ``p_adjust()`` (R's ``p.adjust``);
* :mod:`.multicalibration`: ``multicalibration()`` (the worst group's cumulative
  statistic and its p-value).

It sits above the registry (:mod:`calibr._registry`), whose metrics it resamples,
and below the verbs (``calibr.frame``, ``calibr.table``) that report it.
"""
