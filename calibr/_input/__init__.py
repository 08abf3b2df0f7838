"""The input layer of calibr (the rules: ``docs/definitions.md``, section Inputs).

Every public function turns its arguments into canonical arrays here:

* ``p`` becomes a float64 vector (binary) or a C-contiguous float64 matrix with
  one column per class;
* ``y`` becomes exact 0/1 values (binary) or 0-based int64 class codes
  (multiclass), with the class labels kept for messages;
* each option is checked by the rule declared for it (:mod:`.params`).

No metric validates its inputs in any other way. The caller's objects are never
modified: arrays are read, and copied only when a conversion or a row filter
(``na_rm=True``) needs new memory.

Bad input raises :class:`InputError` (a ``ValueError``: a bad value) or
:class:`InputTypeError` (a ``TypeError``: a kind of object calibr does not
read); nothing else escapes. Every message names the argument, says what was
expected and what was found, and for bad values gives their count and the
first (0-based) position, e.g.
"`p` must lie in [0, 1]; 3 values do not, the first at position 17 (1.2)."

One job per module:

* :mod:`.errors`: the two exceptions, and :func:`arg`, the arguments a message names;
* :mod:`.messages`: the pieces of the messages (a value shown, a count, a position);
* :mod:`.params`: the rule of each option, and the bounds several functions share;
* :mod:`.arrays`: reading the caller's objects (lists, arrays, pandas) into numpy;
* :mod:`.probabilities`, :mod:`.labels`, :mod:`.weights`: ``p``, ``y`` and ``weights``;
* :mod:`.canonical`: :func:`prepare`, the entry point of the metrics;
* :mod:`.warning`: :func:`warn`, warnings that point at the caller's line, and
  the counted warnings a summary gathers into one (:class:`GroupWarnings`);
* :mod:`.frames`: arrays of other libraries (DLPack, the array API) read as numpy,
  polars, Arrow and PyCapsule columns and frames read as numpy or pandas, and the
  verbs' ``by=`` (:func:`frame_verb`);
* :mod:`.backends`: :func:`lazy_backend`, the backend of a lazy collection (Dask,
  polars' LazyFrame, DuckDB, Spark);
* :mod:`.groups`: the columns of a frame (``p``, ``y``, ``weights``) and its
  groups, split into the per-group inputs of the verbs.

The layer imports only :mod:`calibr._kernels` (its one-pass scans), numpy and
pandas, and a backend by its name when :func:`lazy_backend` finds a lazy value.
Its names are imported from this package (``from calibr._input import
prepare``), each from its module on first use, so that the command line can
catch :class:`InputError` without importing numpy.
"""

from importlib import import_module as _import_module

#: Each name of the layer and its module (imported on first use).
_SOURCES = {
    # errors
    "InputError": "errors",
    "InputTypeError": "errors",
    "Term": "errors",
    "arg": "errors",
    "extended": "errors",
    "reworded": "errors",
    # messages
    "bad_values_message": "messages",
    "count_phrase": "messages",
    "fmt": "messages",
    "missing_message": "messages",
    "position_text": "messages",
    # params
    "BANDWIDTH": "params",
    "BINNING": "params",
    "BINS": "params",
    "BIN_SPEC": "params",
    "FLAG": "params",
    "Integer": "params",
    "LEVEL": "params",
    "MAX_BINS": "params",
    "MAX_BIN_CELLS": "params",
    "MAX_RESAMPLES": "params",
    "OPTIONAL_STRING": "params",
    "Optional": "params",
    "Options": "params",
    "RIGHT": "params",
    "RNG": "params",
    "Rule": "params",
    "check_bandwidth": "params",
    "check_bin_cells": "params",
    "check_binning": "params",
    "check_bins": "params",
    "check_choice": "params",
    "check_flag": "params",
    "check_options": "params",
    "defaults": "params",
    "metric_value": "params",
    "real_value": "params",
    "resolved_options": "params",
    "validate_params": "params",
    # arrays
    "as_array": "arrays",
    "as_float_array": "arrays",
    "refuse_non_array": "arrays",
    # probabilities
    "ROUNDED_HINT": "probabilities",
    "ROUNDED_SUM_TOL": "probabilities",
    "ROW_SUM_TOL": "probabilities",
    "any_outside_unit": "probabilities",
    "check_p_values": "probabilities",
    "check_row_sums": "probabilities",
    "convert_p": "probabilities",
    # labels
    "binary_labels": "labels",
    "class_list": "labels",
    "convert_y": "labels",
    "infer_object_labels": "labels",
    "multiclass_labels": "labels",
    "native_labels": "labels",
    "missing_labels": "labels",
    # weights
    "MAX_COUNT_TOTAL": "weights",
    "check_kernel_weights": "weights",
    "check_weight_total": "weights",
    "check_weight_values": "weights",
    "convert_weights": "weights",
    # canonical
    "Converted": "canonical",
    "Prepared": "canonical",
    "convert": "canonical",
    "finish": "canonical",
    "prepare": "canonical",
    # warning
    "Counted": "warning",
    "CountedRuntimeWarning": "warning",
    "CountedWarning": "warning",
    "GroupWarnings": "warning",
    "RENAMED_SINCE": "warning",
    "renamed": "warning",
    "warn": "warning",
    # frames
    "eager": "frames",
    "eager_frame": "frames",
    "foreign_kind": "frames",
    "frame_to_pandas": "frames",
    "frame_verb": "frames",
    "grouped": "frames",
    "host_array": "frames",
    "lazy_grouping": "frames",
    "to_callers_frame": "frames",
    # backends
    "BACKENDS": "backends",
    "lazy_backend": "backends",
    # groups
    "Columns": "groups",
    "Groups": "groups",
    "Part": "groups",
    "Split": "groups",
    "by_columns": "groups",
    "classes_from_names": "groups",
    "complete_rows": "groups",
    "group_seeds": "groups",
    "groups_of": "groups",
    "numbered_classes": "groups",
    "raise_per_group": "groups",
    "resolve_columns": "groups",
    "split": "groups",
    "subframes": "groups",
    "weights_column": "groups",
    "with_context": "groups",
}

__all__ = sorted(_SOURCES)


def __getattr__(name: str) -> object:
    """Import a name of the layer from its module on first use (PEP 562)."""
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(f".{_SOURCES[name]}", __name__), name)
    globals()[name] = value  # later uses do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
