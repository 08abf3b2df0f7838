"""Reliability diagrams: render real PNGs and check what they show.

The figures are rendered with the Agg backend (selected here, in the test
module only) and read back as pixel arrays: each panel's region must hold the
curve's colour, the grey diagonal and the count bars, and the axes, labels and
panel count must match the table.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import require

matplotlib = require("matplotlib")  # a test dependency: a failure, not a skip, in CI
matplotlib.use("Agg")

import matplotlib.image  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from calibr.plot import COUNTS_LABEL, PANEL_LABEL, reliability_diagram  # noqa: E402

COLUMNS = ["bin", "lower", "upper", "n", "mean_confidence", "observed_frequency", "gap",
           "ci_lower", "ci_upper"]


def bin_rows(conf, obs, n, bins=5, lo_hi=None):
    """Rows of a calibration table for the given (non-empty) bins."""
    edges = np.linspace(0, 1, bins + 1)
    rows = []
    for c, o, k in zip(conf, obs, n, strict=True):
        b = int(np.searchsorted(edges, c, side="left"))  # 1-based bin of c
        half = 0.1 if lo_hi is None else lo_hi
        rows.append({"bin": b, "lower": edges[b - 1], "upper": edges[b], "n": k,
                     "mean_confidence": c, "observed_frequency": o, "gap": o - c,
                     "ci_lower": max(o - half, 0.0), "ci_upper": min(o + half, 1.0)})
    return pd.DataFrame(rows, columns=COLUMNS)


def grouped_table(keys: dict[str, list], per_group):
    """Stack ``per_group(i)`` tables with the grouping columns in front."""
    frames = []
    n_groups = len(next(iter(keys.values()))) if keys else 1
    for i in range(n_groups):
        t = per_group(i)
        for j, (name, values) in enumerate(keys.items()):
            t.insert(j, name, values[i])
        frames.append(t)
    return pd.concat(frames, ignore_index=True)


BINARY = bin_rows([0.12, 0.31, 0.52, 0.69, 0.9], [0.05, 0.25, 0.6, 0.8, 0.95], [40, 25, 10, 30, 60])


def classwise(k=3):
    return grouped_table(
        {"class": list(range(1, k + 1))},
        lambda i: bin_rows([0.1, 0.5, 0.9], [0.1 + 0.05 * i, 0.45, 0.85], [50, 10 + i, 5 + 2 * i]),
    )


def render(fig, dpi=60):
    """PNG bytes -> RGB float array, plus the dpi used."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    buf.seek(0)
    img = matplotlib.image.imread(buf, format="png")[..., :3]
    return img


def draw(fig):
    """Lay ``fig`` out and draw it on an Agg canvas; the renderer, for window extents."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def region(img, fig, ax, dpi):
    """The pixels inside ``ax`` (in the image rendered at ``dpi``)."""
    box = ax.get_window_extent().transformed(fig.dpi_scale_trans.inverted())  # inches
    h = img.shape[0]
    x0, x1 = int(np.ceil(box.x0 * dpi)) + 2, int(np.floor(box.x1 * dpi)) - 2
    y0, y1 = h - int(np.floor(box.y1 * dpi)) + 2, h - int(np.ceil(box.y0 * dpi)) - 2
    return img[y0:y1, x0:x1]


def colour_pixels(pixels, colour, tol=0.12):
    return int((np.abs(pixels - np.array(to_rgb(colour))).max(axis=-1) < tol).sum())


def panels(fig):
    return [a for a in fig.axes if a.get_label() == PANEL_LABEL]


def count_axes(fig):
    return [a for a in fig.axes if a.get_label() == COUNTS_LABEL]


# --- what the image shows -------------------------------------------------------


def test_binary_table_renders_one_panel_with_curve_diagonal_and_counts():
    fig = reliability_diagram(BINARY)
    dpi = 100
    img = render(fig, dpi)
    w, h = fig.get_size_inches()
    assert img.shape[:2] == (round(h * dpi), round(w * dpi))
    assert len(panels(fig)) == 1 and len(count_axes(fig)) == 1
    ax, cax = panels(fig)[0], count_axes(fig)[0]

    inside = region(img, fig, ax, dpi)
    assert (inside < 0.95).any(axis=-1).mean() > 0.01  # not a blank panel
    assert colour_pixels(inside, "C0") > 50  # the curve and its interval bars
    assert colour_pixels(inside, "0.55", tol=0.08) > 30  # the dashed diagonal

    # The diagonal: grey pixels near (t, t) in data coordinates, away from the curve.
    hits = 0
    for t in (0.05, 0.4, 0.8):
        px, py = ax.transData.transform((t, t)) * dpi / fig.dpi
        py = img.shape[0] - py
        patch = img[int(py) - 3 : int(py) + 4, int(px) - 3 : int(px) + 4]
        hits += colour_pixels(patch, "0.55", tol=0.15) > 0
    assert hits >= 2  # dashes may leave one sample in a gap

    counts = region(img, fig, cax, dpi)
    assert (counts < 0.95).any(axis=-1).mean() > 0.2  # the bars fill a good part of it

    assert ax.get_ylabel() == "Observed frequency"
    assert cax.get_xlabel() == "Mean confidence"
    assert cax.get_ylabel() == "Count\n(log)" and cax.get_yscale() == "log"
    assert ax.get_xlim() == pytest.approx((-0.02, 1.02))
    assert ax.get_ylim() == pytest.approx((-0.02, 1.02))
    assert ax.get_title() == ""


def test_the_drawn_data_are_the_table():
    fig = reliability_diagram(BINARY)
    ax, cax = panels(fig)[0], count_axes(fig)[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    diagonal, curve = lines["perfect calibration"], lines["observed"]
    np.testing.assert_array_equal(diagonal.get_xdata(), [0, 1])
    np.testing.assert_array_equal(diagonal.get_ydata(), [0, 1])
    np.testing.assert_array_equal(curve.get_xdata(), BINARY["mean_confidence"])
    np.testing.assert_array_equal(curve.get_ydata(), BINARY["observed_frequency"])

    (bars,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    segments = np.array(bars.get_segments())
    np.testing.assert_array_equal(segments[:, 0, 0], BINARY["mean_confidence"])
    np.testing.assert_array_equal(segments[:, 0, 1], BINARY["ci_lower"])
    np.testing.assert_array_equal(segments[:, 1, 1], BINARY["ci_upper"])

    rects = cax.patches
    assert [r.get_height() for r in rects] == list(BINARY["n"])
    assert [r.get_x() for r in rects] == pytest.approx(list(BINARY["lower"]))
    assert [r.get_width() for r in rects] == pytest.approx(list(BINARY["upper"] - BINARY["lower"]))


@pytest.mark.parametrize("k", [2, 3, 10])
def test_classwise_table_gets_one_panel_per_class(k):
    table = classwise(k)
    fig = reliability_diagram(table)
    assert len(panels(fig)) == k and len(count_axes(fig)) == k
    assert [a.get_title() for a in panels(fig)] == [f"class = {c}" for c in range(1, k + 1)]
    dpi = 40
    img = render(fig, dpi)
    for ax, cax in zip(panels(fig), count_axes(fig), strict=True):
        assert colour_pixels(region(img, fig, ax, dpi), "C0") > 10
        assert (region(img, fig, cax, dpi) < 0.95).any(axis=-1).mean() > 0.05


def test_layout_wraps_at_ncols():
    fig = reliability_diagram(classwise(5), ncols=2)
    boxes = [a.get_position() for a in panels(fig)]
    xs = sorted({round(b.x0, 3) for b in boxes})
    ys = sorted({round(b.y0, 3) for b in boxes})
    assert len(xs) == 2 and len(ys) == 3
    w, h = fig.get_size_inches()
    assert (w, h) == pytest.approx((2 * 3.6, 3 * 3.6))
    assert reliability_diagram(classwise(10)).get_size_inches() == pytest.approx((4 * 3.6, 3 * 3.6))


def test_groups_not_in_by_become_curves_with_one_legend():
    table = grouped_table(
        {"model": ["lr", "lr", "rf", "rf"], "class": [1, 2, 1, 2]},
        lambda i: bin_rows([0.15, 0.55, 0.85], [0.1, 0.5 + 0.05 * i, 0.9], [30, 20, 10]),
    )
    fig = reliability_diagram(table, by="model")
    assert [a.get_title() for a in panels(fig)] == ["model = lr", "model = rf"]
    assert [ax.get_legend() for ax in panels(fig)] == [None, None]  # not one per panel
    (legend,) = fig.legends  # but one for the figure
    assert [t.get_text() for t in legend.get_texts()] == [
        "perfect calibration", "class = 1", "class = 2"]
    img = render(fig, 60)
    for ax in panels(fig):
        inside = region(img, fig, ax, 60)
        assert colour_pixels(inside, "C0") > 10 and colour_pixels(inside, "C1") > 10
    # beside the panels, inside the figure, clear of the figure's title (centred over
    # the panels)
    renderer = draw(fig)
    box = legend.get_window_extent(renderer)
    assert box.x0 > max(ax.get_window_extent(renderer).x1 for ax in panels(fig))
    assert box.x1 <= fig.bbox.x1 and fig.get_size_inches()[0] == pytest.approx(2 * 3.6 + 1.2)
    titled = reliability_diagram(table, by="model", title="Reliability diagrams: " + "x" * 80)
    renderer = draw(titled)
    assert not titled._suptitle.get_window_extent(renderer).overlaps(
        titled.legends[0].get_window_extent(renderer))

    single = reliability_diagram(table, by=[])
    assert len(panels(single)) == 1
    (legend,) = single.legends  # four curves: beside the panel
    assert [t.get_text() for t in legend.get_texts()][1:] == [
        "model = lr, class = 1", "model = lr, class = 2",
        "model = rf, class = 1", "model = rf, class = 2"]

    both = reliability_diagram(table)  # default: every grouping column -> panels
    assert [a.get_title() for a in panels(both)] == [
        "model = lr, class = 1", "model = lr, class = 2",
        "model = rf, class = 1", "model = rf, class = 2"]


def test_options_histogram_intervals_title():
    fig = reliability_diagram(BINARY, histogram=False, intervals=False, title="Digits")
    assert len(panels(fig)) == 1 and count_axes(fig) == []
    ax = panels(fig)[0]
    assert ax.get_xlabel() == "Mean confidence"
    assert not [c for c in ax.collections if isinstance(c, LineCollection)]
    assert fig.get_suptitle() == "Digits"
    img = render(fig, 50)
    assert colour_pixels(region(img, fig, ax, 50), "C0") > 20


def test_missing_interval_draws_no_bar_for_that_bin():
    table = BINARY.copy()
    table.loc[2, ["ci_lower", "ci_upper"]] = np.nan
    ax = panels(reliability_diagram(table))[0]
    (bars,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(bars.get_segments()) == len(table) - 1


def test_missing_group_key_gets_its_own_panel():
    table = grouped_table({"fold": [1.0, np.nan]}, lambda i: BINARY.copy())
    fig = reliability_diagram(table)
    assert [a.get_title() for a in panels(fig)] == ["fold = 1.0", "fold = nan"]


def test_input_is_untouched_and_no_global_state_changes():
    import matplotlib.pyplot as plt

    table = classwise(3)
    before = table.copy(deep=True)
    rc_before = dict(matplotlib.rcParams)
    figs_before = plt.get_fignums()
    fig = reliability_diagram(table)
    render(fig)
    pd.testing.assert_frame_equal(table, before)
    assert dict(matplotlib.rcParams) == rc_before
    assert plt.get_fignums() == figs_before  # not registered with pyplot: no leak


def test_importing_calibr_plot_does_not_import_matplotlib():
    code = "import sys, calibr.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_matplotlib_the_error_says_how_to_install(monkeypatch):
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    # calibr is not on PyPI, so the hint names matplotlib itself
    with pytest.raises(ImportError, match=r"^reliability_diagram\(\) needs matplotlib, which is "
                       r"an optional dependency of calibr; install it with "
                       r"`pip install matplotlib`\.$"):
        reliability_diagram(BINARY)


# --- errors -------------------------------------------------------------------------


def test_not_a_dataframe():
    with pytest.raises(TypeError, match=r"^`table` must be a pandas DataFrame .*; got ndarray\.$"):
        reliability_diagram(BINARY.to_numpy())


def test_missing_columns():
    with pytest.raises(ValueError, match=r"^`table` must have the columns .*; "
                                         r"missing: 'ci_lower', 'ci_upper'\.$"):
        reliability_diagram(BINARY.drop(columns=["ci_lower", "ci_upper"]))


def test_empty_table():
    with pytest.raises(ValueError, match=r"^`table` must have at least one row; got an empty"):
        reliability_diagram(BINARY.iloc[:0])


def test_non_finite_values():
    table = BINARY.copy()
    table.loc[[1, 3], "mean_confidence"] = [np.nan, np.inf]
    with pytest.raises(ValueError, match=r"^`table` column 'mean_confidence' must be finite "
                                         r"numbers; 2 values are not, the first at position 1 "
                                         r"\(nan\)\.$"):
        reliability_diagram(table)
    table = BINARY.astype({"ci_upper": object})
    table.loc[0, "ci_upper"] = "high"
    with pytest.raises(ValueError, match=r"^`table` column 'ci_upper' must be numbers \(or "
                                         r"missing\); 1 value is not, the first at position 0 "
                                         r"\('high'\)\.$"):
        reliability_diagram(table)


def test_by_must_name_grouping_columns():
    with pytest.raises(ValueError, match=r"^`by` must name grouping columns of `table` \(the "
                                         r"columns before 'bin': 'class'\); got 'model'\.$"):
        reliability_diagram(classwise(3), by="model")
    with pytest.raises(ValueError, match=r"columns before 'bin': none\); got 'n'\.$"):
        reliability_diagram(BINARY, by="n")
    with pytest.raises(ValueError, match=r"^`by` must not repeat a column; got \['class', "):
        reliability_diagram(classwise(3), by=["class", "class"])


@pytest.mark.parametrize("ncols", [0, -1, 2.5, True, "2"])
def test_bad_ncols(ncols):
    with pytest.raises(ValueError, match=r"^`ncols` must be a single positive integer; got "):
        reliability_diagram(BINARY, ncols=ncols)


# --- tables made by calibration_table on the bundled data ---------------------------


@pytest.fixture(scope="module")
def digits():
    from calibr.datasets import load_digits_predictions

    return load_digits_predictions()


def test_top_label_tables_of_the_bundled_digits(digits):
    from calibr import calibration_table

    top = calibration_table(None, "y", type="confidence", data=digits.groupby("model"),
                            p_prefix="p_")
    fig = reliability_diagram(top)
    assert [a.get_title() for a in panels(fig)] == [
        "model = logistic", "model = naive_bayes", "model = random_forest"]
    for ax, (_, sub) in zip(panels(fig), top.groupby("model"), strict=True):
        (curve,) = [ln for ln in ax.get_lines() if ln.get_label() == "observed"]
        np.testing.assert_array_equal(curve.get_ydata(), sub["observed_frequency"])
    img = render(fig, 50)
    for ax, cax in zip(panels(fig), count_axes(fig), strict=True):
        assert colour_pixels(region(img, fig, ax, 50), "C0") > 20
        assert (region(img, fig, cax, 50) < 0.95).any(axis=-1).mean() > 0.02


def test_classwise_tables_of_the_bundled_digits(digits):
    from calibr import calibration_table

    table = calibration_table(None, "y", data=digits.groupby("model"), p_prefix="p_")
    assert list(table.columns[:3]) == ["model", "class", "bin"]
    assert len(panels(reliability_diagram(table))) == 30  # one per (model, class)
    fig = reliability_diagram(table, by="model")  # the classes as curves
    assert len(panels(fig)) == 3
    assert all(ax.get_legend() is None for ax in panels(fig))
    (legend,) = fig.legends
    assert len(legend.get_texts()) == 11  # the diagonal and ten classes, once
    img = render(fig, 50)
    for ax in panels(fig):
        assert colour_pixels(region(img, fig, ax, 50), "C9") > 5  # the tenth class is drawn


# --- the ECE of a table, in the panel titles ------------------------------------------


def random_predictions(n, k, seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.3), n)  # peaked: many empty middle bins
    y = rng.integers(0, k, n)
    return p, y


@pytest.mark.parametrize("bins", [1, 2, 7, 10, 15, 100])
@pytest.mark.parametrize("form", ["binary", "confidence", "classwise"])
@pytest.mark.parametrize("seed", [0, 1])
def test_table_ece_is_calibr_ece_exactly(bins, form, seed):
    import calibr
    from calibr.plot import table_ece

    p, y = random_predictions(257, 4, seed)
    if form == "binary":
        p, y = p[:, 0], (y == 0).astype(int)
        kw = {}
    else:
        kw = {"type": form, "classes": range(4)}
    table = calibr.calibration_table(p, y, bins=bins, **kw)
    assert table_ece(table) == calibr.ece(p, y, bins=bins, **kw)  # bit for bit


def test_table_ece_is_calibr_ece_exactly_without_the_first_and_last_bins():
    """A table whose first bins and last bins are empty (predictions in [0.1, 0.7) of
    ten bins) still has R's bins: its ECE sums over all ten, in calibr.ece()'s order,
    not over the seven up to the last bin drawn (which differs in the last digit
    here). Its first row is bin 2, so its bin width is read from that row's edges."""
    import calibr
    from calibr.plot import table_ece

    rng = np.random.default_rng(2)
    p, y = rng.uniform(0.1, 0.7, 30), rng.integers(0, 2, 30)
    table = calibr.calibration_table(p, y, bins=10)
    assert table["bin"].min() == 2 and table["bin"].max() == 7
    assert table_ece(table) == calibr.ece(p, y, bins=10)  # bit for bit


def other_bins_table(bins, edges, n, conf, obs):
    """A calibration table of the given bins (not R's equal-width ones)."""
    lower, upper = zip(*edges, strict=True)
    return pd.DataFrame({"bin": bins, "lower": lower, "upper": upper, "n": n,
                         "mean_confidence": conf, "observed_frequency": obs,
                         "gap": np.subtract(obs, conf), "ci_lower": np.nan,
                         "ci_upper": np.nan})


def test_table_ece_of_other_bins_from_0_to_1_with_zero_width_bins():
    """Bins other than R's (explicit breaks) are accepted from 0 to 1 inclusive, a
    zero-width bin among them (even the first, whose width says nothing of the bin
    count); the ECE is the count-weighted mean gap, by hand."""
    from calibr.plot import table_ece

    table = other_bins_table([1, 2, 3, 4], [(0, 0), (0, 0.25), (0.25, 0.25), (0.25, 1)],
                             [1, 2, 1, 2], [0.0, 0.1, 0.25, 0.7], [0.0, 0.0, 1.0, 0.5])
    want = (1 * 0 + 2 * 0.1 + 1 * 0.75 + 2 * 0.2) / 6
    assert table_ece(table) == pytest.approx(want, abs=1e-15)


def test_table_ece_refuses_a_bin_number_below_1_or_repeated():
    """Other bins must be numbered 1, 2, ... increasing: a bin 0 (which would index
    the last column) or a bin number twice (one row would overwrite the other) is
    refused, however the rest of the table looks."""
    from calibr import InputError
    from calibr.plot import table_ece

    edges = [(0, 0.3), (0.3, 0.6), (0.6, 1)]
    args = ([2, 1, 1], [0.2, 0.5, 0.8], [0.0, 1.0, 1.0])
    table_ece(other_bins_table([1, 2, 3], edges, *args))  # fine
    for bins in ([0, 1, 2], [1, 1, 2], [1, 2, 2]):
        with pytest.raises(InputError, match=r"^`show_ece` needs the bins of "):
            table_ece(other_bins_table(bins, edges, *args))


def test_table_ece_of_the_bundled_digits_per_model(digits):
    import calibr
    from calibr.plot import table_ece

    cols = [f"p_{k}" for k in range(10)]
    for form in ("classwise", "confidence"):
        table = calibr.calibration_table(None, "y", type=form, data=digits.groupby("model"),
                                         p_prefix="p_")
        for model, sub in table.groupby("model"):
            g = digits[digits["model"] == model]
            want = calibr.ece(g[cols], g["y"], type=form, classes=range(10))
            assert table_ece(sub.drop(columns="model")) == want


def test_show_ece_puts_the_ece_in_each_panel_title(digits):
    import calibr

    table = calibr.calibration_table(None, "y", data=digits.groupby("model"), p_prefix="p_")
    fig = reliability_diagram(table, by="model", show_ece=True)
    cols = [f"p_{k}" for k in range(10)]
    for ax, model in zip(panels(fig), ["logistic", "naive_bayes", "random_forest"],
                         strict=True):
        g = digits[digits["model"] == model]
        ece = calibr.ece(g[cols], g["y"], classes=range(10))
        assert ax.get_title() == f"model = {model}\nECE = {ece:.4g} (mean over 10 classes)"
    fig = reliability_diagram(BINARY, show_ece=True)
    from calibr.plot import table_ece

    assert panels(fig)[0].get_title() == f"ECE = {table_ece(BINARY):.4g}"
    assert reliability_diagram(BINARY).axes[0].get_title() == ""  # only when asked


def test_show_ece_of_two_classes_says_it_is_their_mean():
    """Two classes drawn as curves are already a mean over classes (the classwise ECE):
    the title says so from two curves on, and not for one."""
    from calibr.plot import table_ece

    two = classwise(2)
    fig = reliability_diagram(two, by=[], show_ece=True)
    assert panels(fig)[0].get_title() == (f"ECE = {table_ece(two, by='class'):.4g} "
                                          "(mean over 2 classes)")
    one = classwise(1)
    fig = reliability_diagram(one, by=[], show_ece=True)
    assert panels(fig)[0].get_title() == f"ECE = {table_ece(one, by='class'):.4g}"


def test_show_ece_needs_one_group_per_panel():
    table = grouped_table(
        {"model": ["lr", "lr", "rf", "rf"], "class": [1, 2, 1, 2]},
        lambda i: bin_rows([0.15, 0.55, 0.85], [0.1, 0.5 + 0.05 * i, 0.9], [30, 20, 10]),
    )
    with pytest.raises(ValueError, match=r"^`show_ece` needs one group per panel: `by` must "
                                         r"name every grouping column except 'class'; 'model' "
                                         r"would mix groups in one panel\.$"):
        reliability_diagram(table, by=[], show_ece=True)
    reliability_diagram(table, by="model", show_ece=True)  # classes as curves: fine


def test_show_ece_needs_the_bins_of_calibration_table():
    table = BINARY.copy()
    table.loc[0, "upper"] = 0.3  # overlaps the next bin
    with pytest.raises(ValueError, match=r"^`show_ece` needs the bins of "
                                         r"calibr\.calibration_table\(\) \(consecutive bins "
                                         r"from 0 to 1\): the columns 'bin', "
                                         r"'lower' and 'upper' of `table` do not describe "
                                         r"them\.$"):
        reliability_diagram(table, show_ece=True)


def test_stacked_binary_rows_are_one_observed_curve():
    """A binary table stacked with a classwise one has no class: one curve, no legend."""
    binary = BINARY.assign(model="b")
    multi = classwise(3).assign(model="m")
    table = pd.concat([binary, multi], ignore_index=True)[["model", "class", *COLUMNS]]
    fig = reliability_diagram(table, by="model", show_ece=True)
    first, second = panels(fig)
    assert [ln.get_label() for ln in first.get_lines()] == ["perfect calibration", "observed"]
    assert first.get_legend() is None
    assert first.get_title().startswith("model = b\nECE = ")
    assert "(mean over 3 classes)" in second.get_title()


def test_table_ece_refuses_bins_that_are_not_calibration_table_bins():
    """table_ece() is the count-weighted mean gap (by hand) of consecutive bins that
    calibration_table() could have made; a fractional bin number, a bin beyond 1 or
    overlapping bins are refused."""
    from calibr import InputError, calibration_table
    from calibr.plot import table_ece

    p, y = [0.1, 0.2, 0.6, 0.9], [0, 1, 1, 1]
    table = calibration_table(p, y, bins=2)
    # bin 1: 0.1, 0.2 (gap |0.5 - 0.15|), bin 2: 0.6, 0.9 (gap |1 - 0.75|)
    assert table_ece(table) == pytest.approx((2 * 0.35 + 2 * 0.25) / 4, abs=1e-12)
    msg = r"`show_ece` needs the bins of calibr.calibration_table\(\)"
    bad_number = table.astype({"bin": float})
    bad_number.loc[0, "bin"] = 1.5  # its edges are still those of bin 1
    bad_range = table.copy()
    bad_range.loc[1, ["bin", "lower", "upper"]] = [3, 1.0, 1.5]
    overlap = table.copy()
    overlap.loc[0, "upper"] = 0.6  # bin 1 reaches into bin 2
    # (any consecutive bins from 0 to 1 are bins of calibration_table(binning=...,
    # bins=<breaks>), so a narrower or zero-width bin is no longer refused)
    for bad in (bad_number, bad_range, overlap):
        with pytest.raises(InputError, match=msg):
            table_ece(bad)


# --- many curves in one panel -------------------------------------------------------


def test_many_curves_get_side_by_side_bars_and_a_legend_beside():
    table = classwise(10)
    fig = reliability_diagram(table, by=[])
    ax, cax = panels(fig)[0], count_axes(fig)[0]
    assert ax.get_legend() is None
    (legend,) = fig.legends
    assert len(legend.get_texts()) == 11
    renderer = draw(fig)
    assert legend.get_window_extent(renderer).x0 > ax.get_window_extent(renderer).x1
    w, _ = fig.get_size_inches()
    assert w == pytest.approx(3.6 + 1.2)  # the legend's room
    bars = cax.patches
    assert len(bars) == 10 * 3
    for j, (_, sub) in enumerate(table.groupby("class")):
        mine = bars[3 * j: 3 * j + 3]
        width = (sub["upper"] - sub["lower"]).to_numpy() / 10
        assert [b.get_x() for b in mine] == pytest.approx(list(sub["lower"] + j * width))
        assert [b.get_width() for b in mine] == pytest.approx(list(width))
        assert [b.get_height() for b in mine] == list(sub["n"])
    img = render(fig, 40)
    inside = region(img, fig, ax, 40)
    assert colour_pixels(inside, "C9") > 3  # the tenth class is drawn
    few = reliability_diagram(classwise(3), by=[])
    assert few.get_size_inches()[0] == pytest.approx(3.6)  # a legend inside for few curves
    assert few.legends == [] and len(panels(few)[0].get_legend().get_texts()) == 4


def test_four_curves_are_crowded_three_are_not():
    """A panel of more than three curves puts its legend beside the panel (1.2 inches
    wider) and draws thinner lines; three curves are drawn in the plain style."""
    from calibr import calibration_table

    rng = np.random.default_rng(9)
    for k, width, line in ((4, 3.6 + 1.2, 1.0), (3, 3.6, 1.5)):
        p = rng.dirichlet(np.ones(k), size=60)
        y = rng.integers(1, k + 1, size=60)
        fig = reliability_diagram(calibration_table(p, y, bins=3), by=[])
        assert fig.get_size_inches()[0] == pytest.approx(width)
        ax = fig.axes[0]
        curves = [ln for ln in ax.get_lines() if ln.get_label().startswith("class")]
        assert len(curves) == k
        assert {ln.get_linewidth() for ln in curves} == {line}


def test_reliability_diagram_styles_of_few_and_many_curves():
    """Three curves are drawn in the plain style (markers 4, lines 1.5, intervals 1.0 at
    alpha 0.8), four in the thin one (3, 1.0, 0.8 at alpha 0.35), over the dashed
    diagonal of width 1 from (0, 0) to (1, 1)."""
    from calibr import calibration_table

    rng = np.random.default_rng(9)
    for k, marker, line, ci_width, ci_alpha in ((3, 4, 1.5, 1.0, 0.8), (4, 3, 1.0, 0.8, 0.35)):
        p = rng.dirichlet(np.ones(k), size=60)
        y = rng.integers(1, k + 1, size=60)
        ax = reliability_diagram(calibration_table(p, y, bins=3), by=[]).axes[0]
        (diagonal,) = [ln for ln in ax.get_lines() if ln.get_label() == "perfect calibration"]
        assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
        assert diagonal.get_linewidth() == 1 and diagonal.get_linestyle() == "--"
        curves = [ln for ln in ax.get_lines() if ln.get_label().startswith("class")]
        assert len(curves) == k
        assert {ln.get_markersize() for ln in curves} == {marker}
        assert {ln.get_linewidth() for ln in curves} == {line}
        bars = [c for c in ax.collections if isinstance(c, LineCollection)]
        assert len(bars) == k
        assert {float(c.get_linewidth()[0]) for c in bars} == {ci_width}
        assert {c.get_alpha() for c in bars} == {ci_alpha}


def test_smoothed_curve_style_and_the_shared_x_axis():
    """The smoothed curve (relplot's main line) is drawn dark grey (0.15) at width 1.8,
    heavier than a binned curve (1.5); with the histogram, the reliability panel's x
    tick labels are hidden (the count axes below share its x axis and label it), and
    without it they are shown."""
    import calibr

    rng = np.random.default_rng(4)
    p = rng.random(200)
    y = (rng.random(200) < p).astype(int)
    fig = reliability_diagram(calibr.calibration_table(p, y), smooth=calibr.smece_curve(p, y))
    ax = panels(fig)[0]
    (smoothed,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("smoothed")]
    assert smoothed.get_linewidth() == 1.8 and smoothed.get_color() == "0.15"
    assert ax.xaxis.get_tick_params()["labelbottom"] is False
    assert count_axes(fig)[0].get_xlabel() == "Mean confidence" and ax.get_xlabel() == ""
    ax = panels(reliability_diagram(BINARY, histogram=False))[0]
    assert ax.xaxis.get_tick_params().get("labelbottom", True) is True
    assert ax.get_xlabel() == "Mean confidence"


# --- the layout: a grid for the panels it has, titles that fit, counts on a log scale --


def groups_table(names, k=None):
    """One binary table per name (``model`` column), or a classwise one of ``k`` classes."""
    if k is None:
        return grouped_table({"model": list(names)}, lambda i: BINARY.copy())
    return grouped_table(
        {"model": [m for m in names for _ in range(k)], "class": list(range(k)) * len(names)},
        lambda i: bin_rows([0.1, 0.5, 0.9], [0.05, 0.5, 0.95], [900, 3, 40]),
    )


@pytest.mark.parametrize(("n", "rows", "cols"), [(1, 1, 1), (3, 1, 3), (4, 1, 4), (5, 2, 3),
                                                 (6, 2, 3), (7, 2, 4), (9, 3, 3), (10, 3, 4)])
def test_the_grid_has_rows_for_its_panels(n, rows, cols):
    """The fewest rows of at most four panels, balanced: fewer empty slots than rows,
    and no axes without data."""
    fig = reliability_diagram(groups_table([f"m{i}" for i in range(n)]))
    boxes = [a.get_position() for a in panels(fig)]
    assert len({round(b.x0, 3) for b in boxes}) == cols
    assert len({round(b.y0, 3) for b in boxes}) == rows
    assert rows * cols - n < rows
    assert tuple(fig.get_size_inches()) == pytest.approx((cols * 3.6, rows * 3.6))
    assert len(fig.axes) == 2 * n  # a panel and its counts: nothing empty
    for ax in fig.axes:
        assert ax.get_visible() and (ax.get_lines() or ax.patches)


def test_titles_fit_in_the_figure_and_do_not_collide():
    """Long group names and a long figure title are wrapped (after the ", " between
    keys first), inside the figure and clear of each other, every character kept;
    the figure grows by the extra lines."""
    names = ["a_gradient_boosted_ensemble_with_tuned_depth", "random_forest",
             "logistic regression with an l2 penalty of one"]
    table = groups_table(names).assign(dataset="breast_cancer")
    table = table[["dataset", *table.columns[:-1]]]
    title = ("Reliability diagrams: 10 equal-width bins; form: binary (breast_cancer), "
             "top-label confidence (digits)")
    for fig in (reliability_diagram(table, show_ece=True, title=title),
                reliability_diagram(table[table["model"] == "random_forest"], show_ece=True,
                                    title=title)):
        renderer = draw(fig)
        frame = fig.bbox
        texts = [ax.title for ax in panels(fig)] + [fig._suptitle]
        boxes = [t.get_window_extent(renderer) for t in texts]
        for t, box in zip(texts, boxes, strict=True):
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1, t.get_text()
            assert frame.y0 <= box.y0 and box.y1 <= frame.y1, t.get_text()
        for i in range(len(boxes)):
            for j in range(i):
                assert not boxes[i].overlaps(boxes[j]), (texts[i].get_text(),
                                                         texts[j].get_text())
        assert re.sub(r"\s", "", fig.get_suptitle()) == re.sub(r"\s", "", title)
    assert panels(fig)[0].get_title().startswith("dataset = breast_cancer,\nmodel = random_forest")
    many = reliability_diagram(table, show_ece=True, title=title)
    lines = max(ax.get_title().count("\n") + 1 for ax in panels(many))
    assert lines > 3  # the long name is cut too
    extra = (lines - 2) * 0.2 + many.get_suptitle().count("\n") * 0.2
    assert many.get_size_inches()[1] == pytest.approx(3.6 + extra)
    short = reliability_diagram(groups_table(["a", "b"]), show_ece=True)
    assert [ax.get_title() for ax in panels(short)] == [
        f"model = {m}\nECE = {table_ece_of(BINARY):.4g}" for m in "ab"]


def table_ece_of(table):
    from calibr.plot import table_ece

    return table_ece(table)


def test_counts_are_on_a_log_scale_down_to_a_single_prediction():
    """A bin of 3 beside one of 900: both bars visible on the log axis; the linear
    axis on request."""
    table = groups_table(["lr", "rf"], k=4)
    fig = reliability_diagram(table, by="model")
    for cax in count_axes(fig):
        assert cax.get_yscale() == "log" and cax.get_ylabel() == "Count\n(log)"
        low, high = cax.get_ylim()
        assert low == 0.5 and high == 2 * 900  # a bar of one stands out from the bottom
        assert {r.get_height() for r in cax.patches} == {900, 3, 40}
    weighted = BINARY.assign(n=[0.3, 2.0, 5.0, 7.5, 12.0])  # total weights below one
    (cax,) = count_axes(reliability_diagram(weighted))
    assert cax.get_ylim() == pytest.approx((0.15, 24.0))
    ones = BINARY.assign(n=1)  # one prediction a bin: from half of one to twice one
    (cax,) = count_axes(reliability_diagram(ones))
    assert cax.get_ylim() == pytest.approx((0.5, 2.0))
    (cax,) = count_axes(reliability_diagram(BINARY, count_scale="linear"))
    assert cax.get_yscale() == "linear" and cax.get_ylabel() == "Count"
    assert cax.get_ylim()[0] == 0


def test_each_curve_keeps_its_colour_in_every_panel():
    """A class missing from one panel does not shift the colours of the others."""
    full = groups_table(["lr"], k=3)
    part = groups_table(["rf"], k=3)
    table = pd.concat([full, part[part["class"] != 0]], ignore_index=True)
    fig = reliability_diagram(table, by="model")
    colours = [{ln.get_label(): ln.get_color() for ln in ax.get_lines()} for ax in panels(fig)]
    assert colours[0] == {"perfect calibration": "0.55", "class = 0": "C0", "class = 1": "C1",
                          "class = 2": "C2"}
    assert colours[1] == {"perfect calibration": "0.55", "class = 1": "C1", "class = 2": "C2"}
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "perfect calibration", "class = 0", "class = 1", "class = 2"]


def test_ece_label_names_the_form_of_each_panel(digits):
    import calibr

    top = calibr.calibration_table(None, "y", type="confidence", data=digits.groupby("model"),
                                   p_prefix="p_")
    fig = reliability_diagram(top, show_ece=True, ece_label="confidence ECE")
    cols = [f"p_{k}" for k in range(10)]
    for ax, (model, g) in zip(panels(fig), digits.groupby("model"), strict=True):
        ece = calibr.ece(g[cols], g["y"], type="confidence", classes=range(10))
        assert ax.get_title() == f"model = {model}\nconfidence ECE = {ece:.4g}"
    fig = reliability_diagram(top, show_ece=True, ece_label={("naive_bayes",): "their ECE"})
    assert [ax.get_title().split("\n")[1].split(" = ")[0] for ax in panels(fig)] == [
        "ECE", "their ECE", "ECE"]
    for bad in (3, {("a",): 1}, None):
        with pytest.raises(TypeError, match=r"^`ece_label` must be a string or a dict of "
                                            r"strings by panel; got (int|dict|NoneType)\.$"):
            reliability_diagram(top, show_ece=True, ece_label=bad)


# --- every bad argument is named -----------------------------------------------------


PANEL_SIZE_MSG = (r"^`panel_size` must be two positive finite numbers \(width, height\) in "
                  r"inches; got {}\.$")


@pytest.mark.parametrize(
    ("size", "exc", "shown"),
    [
        (5, TypeError, "5"),
        ("3x3", TypeError, "'3x3'"),
        (None, TypeError, "None"),
        ((3.6,), ValueError, r"\(3\.6,\)"),
        ((1, 2, 3), ValueError, r"\(1, 2, 3\)"),
        ((0, 3), ValueError, r"\(0, 3\)"),
        ((-1, 3), ValueError, r"\(-1, 3\)"),
        ((np.inf, 3), ValueError, r"\(inf, 3\)"),
        ((np.nan, 3), ValueError, r"\(nan, 3\)"),
        ((True, 3), TypeError, r"\(True, 3\)"),
        (("3", 3), TypeError, r"\('3', 3\)"),
    ],
)
def test_bad_panel_size_is_named(size, exc, shown):
    from calibr import InputError, InputTypeError

    with pytest.raises(exc, match=PANEL_SIZE_MSG.format(shown)) as info:
        reliability_diagram(BINARY, panel_size=size)
    assert isinstance(info.value, (InputError, InputTypeError))


def test_numpy_panel_size_is_fine():
    fig = reliability_diagram(BINARY, panel_size=np.array([2.0, 3.0]))
    assert tuple(fig.get_size_inches()) == pytest.approx((2.0, 3.0))


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"histogram": "yes"}, ValueError, r"^`histogram` must be True or False; got 'yes'\.$"),
        ({"intervals": 1}, ValueError, r"^`intervals` must be True or False; got 1\.$"),
        ({"show_ece": None}, ValueError, r"^`show_ece` must be True or False; got None\.$"),
        ({"title": 3}, TypeError, r"^`title` must be a string or None; got int\.$"),
        ({"ncols": 0}, ValueError, r"^`ncols` must be a single positive integer; got 0\.$"),
        ({"count_scale": "sqrt"}, ValueError,
         r"^`count_scale` must be one of 'log', 'linear'; got 'sqrt'\.$"),
        ({"ece_label": ["ECE"]}, TypeError,
         r"^`ece_label` must be a string or a dict of strings by panel; got list\.$"),
        ({"by": "x"}, ValueError, r"^`by` must name grouping columns of `table`"),
    ],
)
def test_every_plot_error_is_calibrs_and_names_its_argument(kwargs, exc, match):
    from calibr import InputError, InputTypeError

    with pytest.raises(exc, match=match) as info:
        reliability_diagram(BINARY, **kwargs)
    assert isinstance(info.value, (InputError, InputTypeError))


# --- consistency bands (docs/definitions.md, "Consistency bands") -----------------


def with_band(table, half=0.1):
    t = table.copy()
    t["consistency_lower"] = (t["mean_confidence"] - half).clip(0, 1)
    t["consistency_upper"] = (t["mean_confidence"] + half).clip(0, 1)
    return t


BAND_RGB = 0.2 * np.array(to_rgb("C0")) + 0.8  # C0 at opacity 0.2 over white


def band_pixels(pixels, tol=0.03):
    return int((np.abs(pixels - BAND_RGB).max(axis=-1) < tol).sum())


def pixel_at(img, fig, ax, dpi, x, y):
    px, py = ax.transData.transform((x, y)) * dpi / fig.dpi
    return img[img.shape[0] - int(round(py)), int(round(px))]


def test_consistency_band_is_shaded_between_its_bounds():
    from calibr.plot import BAND_LABEL

    table = with_band(BINARY)
    dpi = 100
    fig = reliability_diagram(table, histogram=False, intervals=False)
    img = render(fig, dpi)
    (ax,) = panels(fig)
    assert band_pixels(region(img, fig, ax, dpi)) > 2000
    # inside the band, between two bins, away from the curve and the diagonal
    x = (0.52 + 0.69) / 2
    lo = (0.42 + 0.59) / 2
    assert np.abs(pixel_at(img, fig, ax, dpi, x, lo + 0.03) - BAND_RGB).max() < 0.03
    # above the band's upper bound: white
    assert np.abs(pixel_at(img, fig, ax, dpi, x, lo + 0.2 + 0.12) - 1.0).max() < 0.02
    # below its lower bound (the curve there is near 0.7, the diagonal at 0.6): white
    assert np.abs(pixel_at(img, fig, ax, dpi, x, 0.25) - 1.0).max() < 0.02
    # the drawn band is the table's columns
    (poly,) = [c for c in ax.collections if c.get_label() == BAND_LABEL]
    verts = poly.get_paths()[0].vertices
    xs = table["mean_confidence"].to_numpy()
    for xv, lov, hiv in zip(xs, table["consistency_lower"], table["consistency_upper"],
                            strict=True):
        at = verts[np.isclose(verts[:, 0], xv)]
        assert np.isclose(at[:, 1], lov).any() and np.isclose(at[:, 1], hiv).any()


def test_consistency_false_or_no_columns_draws_no_band():
    dpi = 100
    for fig in (reliability_diagram(with_band(BINARY), histogram=False, intervals=False,
                                    consistency=False),
                reliability_diagram(BINARY, histogram=False, intervals=False)):
        img = render(fig, dpi)
        (ax,) = panels(fig)
        assert band_pixels(region(img, fig, ax, dpi)) < 50


def test_consistency_option_errors():
    import calibr

    with pytest.raises(calibr.InputError, match=re.escape(
            "`consistency` needs the columns 'consistency_lower' and 'consistency_upper' of "
            "calibr.calibration_table(..., consistency=LEVEL); `table` has neither.")):
        reliability_diagram(BINARY, consistency=True)
    with pytest.raises(calibr.InputError, match=re.escape(
            "`consistency` must be True, False or 'auto'; got 'yes'.")):
        reliability_diagram(with_band(BINARY), consistency="yes")
    bad = with_band(BINARY).astype({"consistency_lower": object})
    bad.loc[2, "consistency_lower"] = "x"
    with pytest.raises(calibr.InputError, match=re.escape(
            "`table` column 'consistency_lower' must be numbers (or missing); 1 value is not, "
            "the first at position 2 ('x').")):
        reliability_diagram(bad)


def test_band_of_a_real_table_per_class_and_missing_bounds():
    import calibr

    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(3), 300)
    y = np.array([rng.choice(3, p=row) for row in p]) + 1
    table = calibr.calibration_table(p, y, bins=5, consistency=0.9, n_resamples=50, rng=0)
    table.loc[1, "consistency_upper"] = np.nan  # left out of the band
    fig = reliability_diagram(table, by=[], histogram=False, intervals=False)
    (ax,) = panels(fig)
    from calibr.plot import BAND_LABEL

    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["perfect calibration", "class = 1", "class = 2", "class = 3", BAND_LABEL]
    ax.get_legend().remove()  # its swatches are not the bands
    img = render(fig, 80)
    assert len([c for c in ax.collections if c.get_label() == BAND_LABEL]) == 3
    for j in range(3):
        tint = 0.2 * np.array(to_rgb(f"C{j}")) + 0.8
        inside = region(img, fig, ax, 80)
        assert int((np.abs(inside - tint).max(axis=-1) < 0.03).sum()) > 50
