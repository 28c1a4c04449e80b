"""The Compare page's chart builders (dashboard/compare_charts.py) on hand-made frames, without Streamlit."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.compare_charts import (
    delta_bars,
    dimension_bars,
    head_to_head,
    leaderboard_chart,
    score_distributions,
    variant_color,
    win_rate_chart,
    win_tie_loss_chart,
)
from dashboard.distributions import figure_messages
from scorers.analysis.report import variant_colors

NAN = float("nan")


def board(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["variant", "scorer", "mean", "ci_low", "ci_high", "n_scored", "n_failed"])


def test_leaderboard_chart_draws_means_with_asymmetric_ci_bars():
    frame = board(
        [
            ("terse", "td", 0.5, 0.25, 0.75, 4, 0),
            ("verbose", "td", 0.8, 0.7, 0.95, 3, 1),
            ("terse", "pa", 0.9, 0.8, 1.0, 4, 0),
        ]
    )
    fig = leaderboard_chart(frame, "td")
    (bar,) = fig.data
    assert bar.type == "bar"
    assert list(bar.x) == ["terse", "verbose"]
    assert list(bar.y) == [0.5, 0.8]
    # Error bars reach the CI bounds: + (high − mean), − (mean − low).
    assert list(bar.error_y.array) == pytest.approx([0.25, 0.15])
    assert list(bar.error_y.arrayminus) == pytest.approx([0.25, 0.1])
    assert list(bar.text) == ["n=4", "n=3, 1 not scored"]
    # The text inside each bar at its base: at the top of the bar (Plotly's default) the CI whisker,
    # which starts at the mean, ran through it.
    assert (bar.textposition, bar.insidetextanchor) == ("inside", "start")
    assert figure_messages(fig) == []
    assert list(bar.marker.color) == [variant_color(0), variant_color(1)]


def test_leaderboard_chart_edge_cases_are_messages():
    nothing = board([("a", "td", NAN, NAN, NAN, 0, 3), ("b", "td", NAN, NAN, NAN, 0, 3)])
    fig = leaderboard_chart(nothing, "td")
    assert len(fig.data) == 0
    assert figure_messages(fig) == ["No scored items for this scorer: nothing to plot."]
    assert figure_messages(leaderboard_chart(nothing, "other")) == ["No scored items for this scorer: nothing to plot."]

    # One variant scored, the other not: the bar of the scored one and a message; a CI
    # that is undefined (one score) draws no error bar instead of failing.
    one = board([("a", "td", 0.4, NAN, NAN, 1, 0), ("b", "td", NAN, NAN, NAN, 0, 2)])
    fig = leaderboard_chart(one, "td")
    assert list(fig.data[0].x) == ["a"]
    assert list(fig.data[0].error_y.array) == [0.0]
    assert figure_messages(fig) == ["Only one variant has scored items: nothing to compare it with."]


def test_leaderboard_chart_names_a_missing_column():
    with pytest.raises(ValueError, match="ci_low"):
        leaderboard_chart(pd.DataFrame({"variant": [], "scorer": [], "mean": []}), "td")


def test_dimension_bars_one_trace_per_variant():
    frame = pd.DataFrame(
        {
            "variant": ["A", "A", "B", "B"],
            "dimension": ["Intent", "Completeness", "Intent", "Completeness"],
            "mean": [0.9, 0.5, 0.7, NAN],
            "n": [3, 3, 3, 0],
        }
    )
    fig = dimension_bars(frame)
    assert fig.layout.barmode == "group"
    assert [t.name for t in fig.data] == ["A", "B"]
    assert list(fig.data[0].x) == ["Intent", "Completeness"]
    assert list(fig.data[0].y) == [0.9, 0.5]
    assert list(fig.data[1].x) == ["Intent"]  # B has no completeness score: no bar, not a 0
    assert figure_messages(fig) == []

    only_a = dimension_bars(frame[frame["variant"] == "A"])
    assert figure_messages(only_a) == ["Only one variant has dimension scores: nothing to compare it with."]
    empty = dimension_bars(frame.iloc[0:0])
    assert len(empty.data) == 0 and figure_messages(empty)


def test_score_distributions_overlay_with_shared_bins_and_no_failures():
    frame = pd.DataFrame({"variant": ["A", "A", "A", "B", "B", "B"], "score": [0.1, 0.5, None, 0.9, NAN, 0.8]})
    fig = score_distributions(frame, x_range=(0.0, 1.0), bins=10)
    assert fig.layout.barmode == "overlay"
    assert [t.name for t in fig.data] == ["A (n=2)", "B (n=2)"]
    assert list(fig.data[0].x) == [0.1, 0.5]  # failed items are left out, never counted as 0
    assert list(fig.data[1].x) == [0.9, 0.8]
    assert fig.data[0].xbins.size == pytest.approx(0.1)
    assert fig.data[1].xbins.start == 0
    assert figure_messages(fig) == []


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([None, NAN], "No scored items: nothing to plot."),
        ([0.4, None], "Only one scored item (0.4): a distribution needs at least two."),
        ([0.7, 0.7], "All 2 scores are 0.7: there is no spread to show."),
    ],
)
def test_score_distributions_edge_cases(scores, message):
    fig = score_distributions(pd.DataFrame({"variant": ["A", "B"], "score": scores}))
    assert figure_messages(fig) == [message]


def test_head_to_head_splits_points_by_winner_and_draws_the_diagonal():
    pairs = pd.DataFrame(
        {"row_id": ["r1", "r2", "r3", "r4"], "score_a": [0.9, 0.2, 0.5, None], "score_b": [0.4, 0.6, 0.5, 0.3]}
    )
    fig = head_to_head(pairs, "terse", "verbose", x_range=(0, 1))
    by_name = {t.name: t for t in fig.data}
    assert set(by_name) == {"equal", "terse higher", "tie", "verbose higher"}
    assert list(by_name["equal"].x) == [0, 1] and list(by_name["equal"].y) == [0, 1]
    assert list(by_name["terse higher"].customdata) == ["r1"]
    assert list(by_name["verbose higher"].customdata) == ["r2"]
    assert list(by_name["tie"].x) == [0.5]
    assert fig.layout.xaxis.title.text == "terse score"
    assert fig.layout.yaxis.title.text == "verbose score"
    assert figure_messages(fig) == []  # r4 (no score for terse) is left out


def test_head_to_head_edge_cases():
    none = head_to_head(pd.DataFrame({"row_id": ["r1"], "score_a": [None], "score_b": [0.3]}), "A", "B")
    assert len(none.data) == 0
    assert figure_messages(none) == ["No row was scored for both A and B: nothing to pair."]
    one = head_to_head(pd.DataFrame({"row_id": ["r1"], "score_a": [0.3], "score_b": [0.3]}), "A", "B")
    assert figure_messages(one) == ["Only one row was scored for both: a comparison needs more."]
    # Fitted axes around a single value still have a width.
    low, high = one.layout.xaxis.range
    assert low < 0.3 < high


def test_win_tie_loss_chart_stacks_the_counts():
    fig = win_tie_loss_chart(3, 1, 1, "A", "B")
    assert fig.layout.barmode == "stack"
    assert [(t.name, t.x[0]) for t in fig.data] == [("A wins", 3), ("tie", 1), ("B wins", 1)]
    assert list(fig.data[0].text) == ["3 (60%)"]
    assert tuple(fig.layout.xaxis.range) == (0, 5)
    empty = win_tie_loss_chart(0, 0, 0, "A", "B")
    assert len(empty.data) == 0
    assert figure_messages(empty) == ["No row was scored for both A and B."]


def test_win_rate_chart_bars_with_ci():
    rates = pd.DataFrame(
        {
            "name": ["A wins", "tie", "B wins"],
            "rate": [0.5, 0.25, 0.25],
            "ci_low": [0.2, 0.05, NAN],
            "ci_high": [0.8, 0.6, NAN],
            "count": [2, 1, 1],
        }
    )
    fig = win_rate_chart(rates)
    (bar,) = fig.data
    assert list(bar.y) == ["A wins", "tie", "B wins"]
    assert list(bar.x) == [0.5, 0.25, 0.25]
    assert list(bar.error_x.array) == pytest.approx([0.3, 0.35, 0.0])
    assert list(bar.error_x.arrayminus) == pytest.approx([0.3, 0.2, 0.0])
    assert tuple(fig.layout.xaxis.range) == (0, 1)
    empty = win_rate_chart(rates.assign(rate=NAN))
    assert figure_messages(empty) == ["No verdict: the pairwise judge has not compared any row yet."]


def test_delta_bars_colour_by_direction_and_say_when_nothing_changed():
    frame = pd.DataFrame({"name": ["td · Ratio", "td · Confidence", "pa"], "delta": [0.2, -0.1, NAN]})
    fig = delta_bars(frame)
    (bar,) = fig.data
    assert list(bar.y) == ["td · Ratio", "td · Confidence"]
    assert list(bar.marker.color) == ["#1a9850", "#d73027"]
    low, high = fig.layout.xaxis.range
    assert math.isclose(-low, high) and high == pytest.approx(0.22)
    assert figure_messages(fig) == []
    same = delta_bars(pd.DataFrame({"name": ["x"], "delta": [0.0]}))
    assert figure_messages(same) == ["No change: every score is the same in both runs."]
    nothing = delta_bars(pd.DataFrame({"name": ["x"], "delta": [NAN]}))
    assert isinstance(nothing, go.Figure) and len(nothing.data) == 0
    assert figure_messages(nothing) == ["Nothing to compare: no score is present in both runs."]


def test_delta_bars_write_small_changes_in_plain_decimals():
    fig = delta_bars(pd.DataFrame({"name": ["td", "pa"], "delta": [-0.0004, 0.0002]}))
    # Plotly's default axis writes -0.0004 as "−400µ". Reach 0.0004, a fifth of it 0.00008 (first digit at the 5th
    # decimal): 6 decimals, trailing zeros trimmed, so the ticks read -0.0004, -0.0002, 0, 0.0002, 0.0004.
    assert fig.layout.xaxis.tickformat == ".6~f"
    # Hover: the 3 usual decimals would round both to 0.000; they get digits down to the 4th decimal, plus one.
    assert list(fig.data[0].customdata) == ["-0.00040", "+0.00020"]
    # Ordinary changes: reach 0.2, a fifth 0.04 -> 3 decimals (0.1, 0.05 ...).
    assert delta_bars(pd.DataFrame({"name": ["td"], "delta": [0.2]})).layout.xaxis.tickformat == ".3~f"


def test_one_colour_per_variant_across_charts():
    # The leaderboard sorts by mean, so gpt-4 is first for one scorer and second for the other;
    # with the page's one mapping it keeps the palette's first colour in both, and in the other charts.
    colors = variant_colors(["gpt-4", "llama-13b"])
    assert colors == {"gpt-4": "#4C78A8", "llama-13b": "#F58518"}
    frame = board([("gpt-4", "td", 0.9, 0.8, 1.0, 4, 0), ("llama-13b", "td", 0.5, 0.4, 0.6, 4, 0)])
    flipped = board([("llama-13b", "pa", 0.9, 0.8, 1.0, 4, 0), ("gpt-4", "pa", 0.5, 0.4, 0.6, 4, 0)])
    for chart in (leaderboard_chart(frame, "td", colors=colors), leaderboard_chart(flipped, "pa", colors=colors)):
        (bar,) = chart.data
        assert dict(zip(bar.x, bar.marker.color, strict=True)) == colors
    dims = pd.DataFrame(
        {"variant": ["llama-13b", "gpt-4"], "dimension": ["User · Constraint adherence"] * 2, "mean": [0.5, 0.7]}
    )
    fig = dimension_bars(dims, colors=colors)
    assert {t.name: t.marker.color for t in fig.data} == colors
    # Long dimension names are wrapped, never cut.
    assert fig.data[0].x == ("User ·<br>Constraint<br>adherence",)
    scores = pd.DataFrame({"variant": ["llama-13b", "gpt-4"], "score": [0.5, 0.7]})
    assert {t.name.split(" (")[0]: t.marker.color for t in score_distributions(scores, colors=colors).data} == colors
