"""Plotly chart builders of the Review page: pure functions returning ``go.Figure`` (no Streamlit).

They draw what :mod:`scorers.analysis.agreement` computes. Empty input gives a figure with a
message annotation (see :func:`dashboard.distributions.figure_messages`), never an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from scorers.analysis.agreement import CalibrationBin, Confusion, ConsistencyRow

from .distributions import HEATMAP_SCALE, SCORE_COLOR, message_figure

PASS_COLOR = "#1a9850"
FAIL_COLOR = "#d73027"
REFERENCE_COLOR = "#888888"


def confusion_heatmap(table: Confusion, *, title: str = "Judge vs people") -> go.Figure:
    """The 2×2 verdict table as a heatmap: people's verdict in rows, the judge's in columns.

    Each cell shows its count and its share of all rows; the diagonal is agreement.

    Args:
        table: the counts (:func:`scorers.analysis.agreement.confusion`).
        title: the chart title.

    Returns:
        A heatmap, or a message figure when the table is empty.

    >>> confusion_heatmap(Confusion(4, 2, 1, 3)).data[0].z
    ([4, 2], [1, 3])
    """
    if table.n == 0:
        return message_figure("No labelled row has a verdict yet.", title=title)
    z = table.matrix()
    text = [[f"{count}<br>{count / table.n:.0%}" for count in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=["Judge: pass", "Judge: fail"],
            y=["People: pass", "People: fail"],
            text=text,
            texttemplate="%{text}",
            textfont={"size": 16},
            colorscale=[[0.0, "#f7fbff"], [1.0, SCORE_COLOR]],
            showscale=False,
            hovertemplate="%{y} · %{x}: %{z} rows<extra></extra>",
        )
    )
    fig.update_layout(title=title, height=320, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    fig.update_yaxes(autorange="reversed")
    return fig


def calibration_chart(
    bins: Sequence[CalibrationBin],
    *,
    scale: float = 1.0,
    threshold: float | None = None,
    title: str = "Calibration: people's pass rate by judge score",
) -> go.Figure:
    """The people's pass rate per judge-score bin, with the counts, against the diagonal.

    The dashed diagonal (pass rate = judge score ÷ scale) is where a judge whose score
    reads as a probability of passing would lie; a dotted vertical line marks the threshold (named in the legend).

    Args:
        bins: :func:`scorers.analysis.agreement.calibration_bins` (empty bins are left out).
        scale: the top of the scorer's scale.
        threshold: the pass threshold, drawn when given.
        title: the chart title.

    Returns:
        A line-and-marker chart (x: bin centre on the scorer's scale, y: pass rate 0..1,
        hover: the bin's range and count), or a message figure when every bin is empty.
    """
    filled = [b for b in bins if b.n]
    if not filled:
        return message_figure("No labelled row has a verdict yet.", title=title)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[0, scale],
            y=[0, 1],
            mode="lines",
            name="score ÷ scale",
            line={"dash": "dash", "color": REFERENCE_COLOR},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[(b.lo + b.hi) / 2 for b in filled],
            y=[b.pass_rate for b in filled],
            mode="lines+markers+text",
            name="people's pass rate",
            text=[f"n={b.n}" for b in filled],
            textposition="top center",
            cliponaxis=False,  # a count above a 100% point is drawn whole
            marker={"size": [8 + 4 * min(b.n, 10) for b in filled], "color": SCORE_COLOR},
            customdata=[[b.lo, b.hi, b.n, b.n_pass] for b in filled],
            hovertemplate="judge score %{customdata[0]:.3g}–%{customdata[1]:.3g}: "
            "%{customdata[3]} of %{customdata[2]} passed (%{y:.0%})<extra></extra>",
        )
    )
    if threshold is not None:
        fig.add_trace(  # named in the legend, so no label inside the plot collides with the counts
            go.Scatter(
                x=[threshold, threshold],
                y=[0, 1],
                mode="lines",
                name=f"threshold {threshold:g}",
                line={"dash": "dot", "color": FAIL_COLOR},
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        title=title,
        height=340,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "yanchor": "top", "y": -0.3},  # below the axis title
    )
    fig.update_xaxes(title="judge score", range=[0, scale])
    fig.update_yaxes(title="people's pass rate", range=[-0.05, 1.15], tickformat=".0%")
    return fig


def consistency_chart(
    rows: Sequence[ConsistencyRow], *, threshold: float, title: str = "Re-judged scores"
) -> go.Figure:
    """Per re-judged row: its min–max range as a bar, each repetition as a dot, the stored score as a diamond.

    Rows whose verdict flips are drawn in red; a dotted line marks the threshold.

    Args:
        rows: :class:`scorers.analysis.agreement.ConsistencyRow` per row.
        threshold: the pass threshold.
        title: the chart title.
    """
    scored = [r for r in rows if r.scores]
    if not scored:
        return message_figure("No repetition was scored.", title=title)
    labels = [r.item_id for r in scored]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            y=labels,
            x=[r.spread for r in scored],
            base=[r.min for r in scored],
            orientation="h",
            name="min–max",
            marker={"color": [FAIL_COLOR if r.flips else HEATMAP_SCALE[-1][1] for r in scored], "opacity": 0.35},
            customdata=[[r.min, r.max] for r in scored],
            hovertemplate="%{y}: %{customdata[0]:.3g}–%{customdata[1]:.3g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            y=[r.item_id for r in scored for _ in r.scores],
            x=[s for r in scored for s in r.scores],
            mode="markers",
            name="repetition",
            marker={"color": SCORE_COLOR, "size": 8},
            hovertemplate="%{y}: %{x:.3g}<extra></extra>",
        )
    )
    stored = [r for r in scored if r.stored_score is not None]
    if stored:
        fig.add_trace(
            go.Scatter(
                y=[r.item_id for r in stored],
                x=[r.stored_score for r in stored],
                mode="markers",
                name="stored score",
                marker={"symbol": "diamond-open", "size": 12, "color": "#333333"},
                hovertemplate="%{y}: stored %{x:.3g}<extra></extra>",
            )
        )
    fig.add_vline(x=threshold, line={"dash": "dot", "color": FAIL_COLOR})
    fig.update_layout(
        title=title,
        height=max(240, 40 * len(scored) + 120),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        barmode="overlay",
        legend={"orientation": "h", "y": -0.15},
    )
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_xaxes(title="score")
    return fig
