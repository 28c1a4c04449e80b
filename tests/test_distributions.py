"""The batch results' chart builders (dashboard/distributions.py) on hand-made frames, without Streamlit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.distributions import (
    dimension_distribution,
    dimension_heatmap,
    figure_messages,
    group_comparison_chart,
    heatmap_rows,
    message_figure,
    score_box,
    score_histogram,
    status_chart,
)


def dims(rows: list[tuple[int, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item_index", "item_id", "dimension", "value"]).assign(scorer="prompt-alignment")


def test_message_figure_has_no_trace_and_one_message():
    fig = message_figure("Nothing here.", title="T")
    assert isinstance(fig, go.Figure)
    assert len(fig.data) == 0
    assert figure_messages(fig) == ["Nothing here."]
    assert fig.layout.title.text == "T"


def test_histogram_counts_the_scored_values_only():
    fig = score_histogram([0.2, None, 0.9, float("nan"), 0.9, 0.5], title="PA", x_range=(0, 1), bins=10)
    (trace,) = fig.data
    assert trace.type == "bar"
    # Bins of 0.1: 0.2 in [0.2, 0.3), 0.5 in [0.5, 0.6), 0.9 twice in [0.9, 1.0]; None/NaN are not a 0.
    assert list(trace.y) == [0, 0, 1, 0, 0, 1, 0, 0, 0, 2]
    assert list(trace.customdata[2]) == pytest.approx([0.2, 0.3])
    assert list(trace.x)[0] == pytest.approx(0.05)
    assert fig.layout.title.text == "PA (n = 4)"
    assert list(fig.layout.xaxis.range) == [0, 1]
    assert figure_messages(fig) == []


@pytest.mark.parametrize("scores", [[], [None, float("nan")], pd.Series([float("nan")], dtype="float64")])
def test_histogram_without_scores_is_a_message(scores):
    fig = score_histogram(scores, title="PA")
    assert len(fig.data) == 0
    assert figure_messages(fig) == ["No scored items: nothing to plot."]


def test_histogram_of_a_single_value_says_so():
    fig = score_histogram([0.84], title="PA")
    assert sum(fig.data[0].y) == 1
    assert figure_messages(fig) == ["Only one scored item (0.84): a distribution needs at least two."]


def test_histogram_of_equal_values_says_there_is_no_spread():
    fig = score_histogram([1.0, 1.0, 1.0])
    assert figure_messages(fig) == ["All 3 scored items are 1: there is no spread to show."]


def test_box_keeps_labels_aligned_with_the_scores_it_keeps():
    fig = score_box([0.5, None, 0.75, 1.0], labels=["a", "b", "c", "d"], x_range=(0, 10))
    (trace,) = fig.data
    assert trace.type == "box"
    assert list(trace.x) == [0.5, 0.75, 1.0]
    assert list(trace.text) == ["a", "c", "d"]
    assert trace.boxpoints == "all"
    assert list(fig.layout.xaxis.range) == [0, 10]


def test_box_of_a_score_column_keeps_labels_aligned_whatever_its_index():
    # A run's score column (float, NaN where not scored) sliced from a bigger frame: its index starts at 10.
    scores = pd.Series([0.5, np.nan, 0.75, np.inf, 1.0], index=range(10, 15), dtype="float64")
    fig = score_box(scores, labels=["a", "b", "c", "d", "e"])
    (trace,) = fig.data
    assert list(trace.x) == [0.5, 0.75, 1.0]  # NaN and infinity left out, with their labels
    assert list(trace.text) == ["a", "c", "e"]
    with pytest.raises(ValueError, match="labels has 2 entries but scores has 5"):
        score_box(scores, labels=["a", "b"])


def test_box_of_many_scores_is_drawn_from_its_statistics_without_points():
    values = [i / 400 for i in range(401)]  # 0, 0.0025, ..., 1: quartiles 0.25, 0.5, 0.75 by linear interpolation
    fig = score_box(values, labels=[str(i) for i in range(401)])
    (trace,) = fig.data
    assert trace.x is None and trace.boxpoints is None
    assert (trace.q1[0], trace.median[0], trace.q3[0]) == pytest.approx((0.25, 0.5, 0.75))
    # IQR 0.5: Tukey fences at -0.5 and 1.5 hold every value, so the whiskers end at 0 and 1.
    assert (trace.lowerfence[0], trace.upperfence[0], trace.mean[0]) == pytest.approx((0.0, 1.0, 0.5))
    assert "points drawn up to 300" in fig.layout.title.text


def test_box_of_many_scores_marks_the_min_and_max_beyond_the_whiskers():
    # 0, then 399 × 0.5, then 1: quartiles 0.5 and 0.5, IQR 0, so the whiskers end at 0.5 and the box alone
    # would hide the range; the 0 and the 1 are marked, one value beyond each whisker.
    fig = score_box([0.0] + [0.5] * 399 + [1.0])
    box, marks = fig.data
    assert (box.lowerfence[0], box.upperfence[0]) == (0.5, 0.5)
    assert marks.type == "scatter" and marks.mode == "markers"
    assert list(marks.x) == [0.0, 1.0] and list(marks.y) == ["scores", "scores"]
    assert [list(c) for c in marks.customdata] == [["lowest of 401", 1, "below"], ["highest of 401", 1, "above"]]
    assert "min and max beyond the whiskers" in fig.layout.title.text
    # Only the side a whisker does not reach: sorted, 0 then 100 × 0.4, 100 × 0.5, 200 × 0.6 give quartiles
    # 0.4 (position 100) and 0.6 (position 300), fences 0.1 and 0.9: the max 0.6 is within, the 0 below.
    low = score_box([0.0] + [0.4] * 100 + [0.5] * 100 + [0.6] * 200)
    assert list(low.data[1].x) == [0.0] and low.data[0].upperfence[0] == pytest.approx(0.6)


def test_dimension_boxes_of_many_items_mark_the_min_and_max_after_the_boxes():
    values = [0.0] + [0.5] * 299 + [1.0]
    frame = dims([(i, f"i{i}", d, v) for i, v in enumerate(values) for d in ("Ratio", "Confidence")])
    fig = dimension_distribution(frame)
    assert [t.type for t in fig.data] == ["box", "box", "scatter", "scatter"]  # the boxes keep their colours
    assert [(list(t.x), list(t.y)) for t in fig.data[2:]] == [
        (["Ratio"] * 2, [0.0, 1.0]),
        (["Confidence"] * 2, [0.0, 1.0]),
    ]
    assert "min and max beyond the whiskers" in fig.layout.title.text


def test_box_edge_cases():
    assert figure_messages(score_box([])) == ["No scored items: nothing to plot."]
    single = score_box([0.3], labels=["only"])
    assert list(single.data[0].x) == [0.3]
    assert figure_messages(single) == ["Only one scored item (0.3): a distribution needs at least two."]
    with pytest.raises(ValueError, match="one label per score"):
        score_box([0.1, 0.2], labels=["a"])


def test_dimension_distribution_one_trace_per_dimension_in_order():
    frame = dims(
        [
            (0, "a", "User · Intent alignment", 1.0),
            (0, "a", "User · Completeness", 0.5),
            (1, "b", "User · Intent alignment", 0.25),
            (1, "b", "User · Completeness", 0.75),
        ]
    )
    fig = dimension_distribution(frame, order=["User · Completeness", "User · Intent alignment"])
    assert [t.name for t in fig.data] == ["User · Completeness", "User · Intent alignment"]
    assert [t.type for t in fig.data] == ["box", "box"]
    assert list(fig.data[0].y) == [0.5, 0.75]
    assert list(fig.data[1].y) == [1.0, 0.25]
    assert list(fig.data[1].text) == ["a", "b"]
    assert figure_messages(fig) == []

    violin = dimension_distribution(frame, kind="violin")
    assert [t.type for t in violin.data] == ["violin", "violin"]
    assert [t.name for t in violin.data] == ["User · Intent alignment", "User · Completeness"]


def test_dimension_distribution_edge_cases():
    empty = dimension_distribution(dims([]))
    assert len(empty.data) == 0
    assert figure_messages(empty) == ["No dimension scores: no item has been scored with a dimension breakdown."]
    single = dimension_distribution(dims([(3, "x", "Ratio", 0.4), (3, "x", "Confidence", 0.9)]))
    assert len(single.data) == 2
    assert figure_messages(single) == ["Only one scored item: a distribution needs at least two."]
    with pytest.raises(ValueError, match="'box' or 'violin'"):
        dimension_distribution(dims([]), kind="bar")
    with pytest.raises(ValueError, match="no column"):
        dimension_distribution(pd.DataFrame({"value": [1.0]}))


def test_heatmap_rows_are_items_ranked_lowest_first_and_gaps_stay_empty():
    frame = dims(
        [
            (1, "second", "Ratio", 0.5),
            (0, "first", "Ratio", 1.0),
            (0, "first", "Confidence", 0.25),
        ]
    )
    fig = dimension_heatmap(frame)
    (trace,) = fig.data
    assert trace.type == "heatmap"
    assert list(trace.x) == ["Ratio", "Confidence"]
    # The dimension labels stand above the plot, under the title: the top margin holds both rows
    # (a title line of about 30 px and a tick-label line of about 20 px, with a gap), not the 50 px of one.
    assert fig.layout.xaxis.side == "top" and fig.layout.margin.t >= 80
    # Mean dimension score: first (1.0 + 0.25) / 2 = 0.625, second 0.5 → second comes first.
    assert list(trace.y) == ["second", "first"]
    assert [list(r) for r in trace.z] == [[0.5, None], [1.0, 0.25]]
    assert (trace.zmin, trace.zmax) == (0, 1)


def test_heatmap_of_many_items_is_binned_by_rank():
    # 120 items with scores 0, 1/119, ..., 1 on one dimension: 60 bins of 2 consecutive ranks.
    frame = dims([(i, f"i{i}", "Ratio", i / 119) for i in reversed(range(120))])
    fig = dimension_heatmap(frame)
    (trace,) = fig.data
    assert len(trace.y) == 60
    assert trace.y[0] == "#1–#2 (2 items)" and trace.y[-1] == "#119–#120 (2 items)"
    assert trace.z[0][0] == pytest.approx((0 + 1 / 119) / 2)
    table, members = heatmap_rows(frame)
    assert members[0] == [0, 1] and members[-1] == [118, 119]
    assert "bins of items ranked" in fig.layout.title.text
    # Every row labelled: Plotly's automatic ticks label every other row once rows are closer than the
    # label font (60 rows in 700 px, 12 px each, showed #1–#2, #5–#6, ...), so the ticks are given one per
    # row and each row is taller than its label.
    assert fig.layout.yaxis.tickmode == "array"
    assert list(fig.layout.yaxis.tickvals) == list(trace.y) == list(fig.layout.yaxis.ticktext)
    layout = fig.layout
    assert (layout.height - layout.margin.t - layout.margin.b) / 60 > layout.yaxis.tickfont.size


def test_heatmap_without_rows_is_a_message():
    fig = dimension_heatmap(dims([]))
    assert len(fig.data) == 0
    assert figure_messages(fig)


def test_group_comparison_one_bar_trace_per_scorer():
    table = pd.DataFrame(
        [
            ("A", "Prompt alignment", 0.845, 2, 0),
            ("B", "Prompt alignment", 0.84, 1, 1),
            ("A", "Textual difference", 0.875, 2, 0),
            ("B", "Textual difference", 0.5, 2, 0),
        ],
        columns=["group", "scorer", "mean", "n_scored", "n_failed"],
    )
    fig = group_comparison_chart(table, "variant")
    assert [t.name for t in fig.data] == ["Prompt alignment", "Textual difference"]
    assert list(fig.data[0].x) == ["A", "B"]
    assert list(fig.data[0].y) == [0.845, 0.84]
    assert list(fig.data[0].text) == ["n=2", "n=1, 1 not scored"]
    assert fig.layout.title.text == "Mean score by variant"
    assert figure_messages(fig) == []


def test_group_comparison_edge_cases():
    nothing = pd.DataFrame([("A", "PA", math.nan, 0, 2)], columns=["group", "scorer", "mean", "n_scored", "n_failed"])
    assert figure_messages(group_comparison_chart(nothing, "model")) == ["No scored items in any model group."]
    one = pd.DataFrame([("A", "PA", 0.5, 1, 0)], columns=["group", "scorer", "mean", "n_scored", "n_failed"])
    fig = group_comparison_chart(one, "model")
    assert list(fig.data[0].y) == [0.5]
    assert figure_messages(fig) == ["Only one model group has scored items: nothing to compare it with."]


def test_status_chart_stacks_each_scorers_outcomes_by_status():
    counts = pd.DataFrame(
        [("TD", "scored", 4), ("Slow", "scored", 3), ("Slow", "invalid_input", 1), ("Slow", "pending", 2)],
        columns=["scorer", "status", "n"],
    )
    fig = status_chart(counts)
    bars = {t.name: (list(t.y), list(t.x)) for t in fig.data}
    # One bar per status over both scorers; a scorer without that status has 0.
    assert bars == {
        "scored": (["TD", "Slow"], [4, 3]),
        "invalid_input": (["TD", "Slow"], [0, 1]),
        "pending": (["TD", "Slow"], [0, 2]),
    }
    assert fig.layout.barmode == "stack"
    assert figure_messages(status_chart(counts.iloc[:0])) == ["No outcome stored yet."]
