"""Plotly chart builders: pure functions from scorer results to ``go.Figure`` (no Streamlit)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scorers import dimension_breakdown, interpretation_band
from scorers.catalogue.prompt_alignment import BANDS, DIMENSION_LABELS
from scorers.core.base import decimal_text, exact_decimal_text

SOURCE_NAMES = {"user": "User prompt", "system": "System messages"}
SOURCE_COLORS = {"user": "#4C78A8", "system": "#F58518"}
# One colour per interpretation band of BANDS, best first.
BAND_COLORS = ("#1a9850", "#91cf60", "#d9ef8b", "#fee08b", "#fc8d59", "#d73027")


def dimension_chart(analysis: Mapping[str, Any]) -> go.Figure:
    """Horizontal bars of the four prompt-alignment dimensions and their weighted contributions.

    Left panel: each dimension's 0..1 score, one trace per instruction source
    (user prompt, and system messages side by side in both mode). Right panel: each
    dimension's contribution ``sourceShare · weight · score`` to the 0..1 weighted
    score W, so the right-hand bars sum to W (shown in the title exactly, at least 4 decimals, as
    :func:`dashboard.results.weighted_score_line` writes it). Hover and bar
    labels give the weight and the contribution.

    Args:
        analysis: ``ScoreResult.analyze_step_result`` of the prompt-alignment scorer
            (keys as described by :func:`scorers.dimension_breakdown`).

    Returns:
        A figure with two traces per source: ``"<source>"`` (scores, left) and
        ``"<source>: contribution"`` (contributions, right), y = dimension labels.
    """
    rows = dimension_breakdown(analysis)
    labels = list(DIMENSION_LABELS.values())
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        column_widths=[0.6, 0.4],
        horizontal_spacing=0.03,
        subplot_titles=("Dimension score (0–1)", "Contribution to the weighted score"),
    )
    for source in ("user", "system"):
        part = [r for r in rows if r["source"] == source]
        if not part:
            continue
        name = SOURCE_NAMES[source]
        # The numbers are written by decimal_text (half away from zero), not by the browser's d3 format.
        customdata = [
            [r["weight"], r["sourceShare"], decimal_text(r["contribution"], 3), decimal_text(r["score"], 2)]
            for r in part
        ]
        hover = (
            "%{y}<br>score %{customdata[3]}<br>weight %{customdata[0]:.0%} within the "
            + name.lower()
            + " score (share %{customdata[1]:.0%})<br>contribution %{customdata[2]}<extra>"
            + name
            + "</extra>"
        )
        common = {
            "y": [r["label"] for r in part],
            "orientation": "h",
            "legendgroup": source,
            "marker_color": SOURCE_COLORS[source],
            "customdata": customdata,
            "hovertemplate": hover,
            "textposition": "auto",
        }
        fig.add_trace(
            go.Bar(
                x=[r["score"] for r in part],
                name=name,
                text=[f"{decimal_text(r['score'], 2)} × {r['weight']:.0%}" for r in part],
                **common,
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Bar(
                x=[r["contribution"] for r in part],
                name=f"{name}: contribution",
                showlegend=False,
                opacity=0.7,
                text=[decimal_text(r["contribution"], 3) for r in part],
                **common,
            ),
            row=1,
            col=2,
        )
    total = math.fsum(r["contribution"] for r in rows)
    widest = max((r["sourceShare"] * r["weight"] for r in rows), default=0.4)
    fig.update_layout(
        barmode="group",
        title=f"Weighted score W = {exact_decimal_text(total)} (sum of the contributions)",
        height=360,
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        legend={"orientation": "h", "y": -0.1},
    )
    fig.update_yaxes(categoryorder="array", categoryarray=labels, autorange="reversed")
    fig.update_xaxes(range=[0, 1], row=1, col=1)
    fig.update_xaxes(range=[0, widest * 1.15], row=1, col=2)
    return fig


def score_gauge(score: float, scale: float, title: str = "Prompt alignment") -> go.Figure:
    """A gauge of a prompt-alignment score over the SPEC's interpretation bands.

    Args:
        score: the score in [0, scale].
        scale: the scorer's scale (> 0); the bands are drawn at their 0..1 bounds × scale.
        title: the chart title; the score's band label is appended.

    Returns:
        A figure with one ``go.Indicator`` whose gauge steps are the six bands
        (``[lower·scale, upper·scale]``, best band first), and the score written in its middle as the score
        tile writes it (:func:`scorers.core.base.decimal_text`: 0.49 reads 0.490).
    """
    uppers = [1.0] + [bound for bound, _ in BANDS[:-1]]
    steps = [
        {"range": [lower * scale, upper * scale], "color": color, "name": label}
        for (lower, label), upper, color in zip(BANDS, uppers, BAND_COLORS, strict=True)
    ]
    fig = go.Figure(
        go.Indicator(
            mode="gauge",
            value=score,
            title={"text": f"{title}<br><span style='font-size:0.8em'>{interpretation_band(score, scale)}</span>"},
            gauge={
                "axis": {"range": [0, scale], "tickvals": [b * scale for b in (0, 0.4, 0.6, 0.7, 0.8, 0.9, 1)]},
                "bar": {"color": "#2b2b2b", "thickness": 0.3},
                "steps": steps,
            },
        )
    )
    # The number is the score tile's text (decimal_text, 3 decimals), not the browser's d3 format of the float.
    fig.add_annotation(
        text=decimal_text(score), x=0.5, y=0, xref="paper", yref="paper", yanchor="bottom", showarrow=False,
        font={"size": 44},
    )  # fmt: skip
    fig.update_layout(height=260, margin={"l": 20, "r": 20, "t": 70, "b": 10})
    return fig


def textual_difference_chart(analysis: Mapping[str, Any]) -> go.Figure:
    """Bars of the textual-difference metrics that lie in [0, 1].

    Args:
        analysis: ``{"ratio", "changes", "lengthDiff", "confidence"}`` from the
            textual-difference scorer.

    Returns:
        A figure with one horizontal bar trace: similarity ratio, confidence and
        length difference (x in [0, 1]); the word-level change count is in the title.
    """
    labels = ["Similarity ratio", "Confidence", "Length difference"]
    values = [analysis["ratio"], analysis["confidence"], analysis["lengthDiff"]]
    changes = analysis["changes"]
    fig = go.Figure(
        go.Bar(
            x=values,
            y=labels,
            orientation="h",
            marker_color=["#4C78A8", "#54A24B", "#E45756"],
            text=[f"{v:.3f}" for v in values],
            textposition="auto",
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{changes} word-level change{'' if changes == 1 else 's'}",
        height=240,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(autorange="reversed")
    return fig
