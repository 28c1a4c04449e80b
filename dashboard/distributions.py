"""Plotly chart builders for a batch run's scores: pure functions returning ``go.Figure`` (no Streamlit).

Every builder accepts the edge cases a run produces (nothing scored yet, a single
scored item, every score equal) and answers them with a figure that carries a
message annotation instead of raising, so a page can always draw what it gets.
The message annotations have ``name="message"`` (see :func:`figure_messages`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd
import plotly.graph_objects as go

SCORE_COLOR = "#4C78A8"
FAILED_COLOR = "#E45756"
# Diverging red → yellow → green for 0..1 dimension scores (the bands' colours of charts.BAND_COLORS).
HEATMAP_SCALE = [[0.0, "#d73027"], [0.5, "#fee08b"], [1.0, "#1a9850"]]
_MESSAGE = "message"


def _finite(values: Iterable[object]) -> list[float]:
    out = []
    for v in values:
        if v is None or isinstance(v, bool):
            continue
        try:
            number = float(v)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            out.append(number)
    return out


def _add_message(fig: go.Figure, text: str, *, y: float = 0.5) -> go.Figure:
    fig.add_annotation(
        text=text,
        name=_MESSAGE,
        xref="paper",
        yref="paper",
        x=0.5,
        y=y,
        showarrow=False,
        font={"size": 14},
        bgcolor="rgba(255,255,255,0.6)",
    )
    return fig


def message_figure(message: str, *, title: str | None = None, height: int = 260) -> go.Figure:
    """An empty chart that says why there is nothing to draw.

    Args:
        message: the sentence to show in the middle of the chart.
        title: the chart title, or None.
        height: the figure height in pixels.

    Returns:
        A figure without traces, hidden axes and one annotation named ``"message"``.

    >>> figure_messages(message_figure("No scored items yet."))
    ['No scored items yet.']
    """
    fig = go.Figure()
    fig.update_layout(title=title, height=height, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _add_message(fig, message)


def figure_messages(fig: go.Figure) -> list[str]:
    """The texts of the message annotations of a figure made here (``[]`` when it shows data only)."""
    return [a.text for a in fig.layout.annotations if a.name == _MESSAGE]


def _single_value_note(values: Sequence[float], what: str) -> str | None:
    if len(values) == 1:
        return f"Only one {what} ({values[0]:.3g}): a distribution needs at least two."
    if len(set(values)) == 1:
        return f"All {len(values)} {what}s are {values[0]:.3g}: there is no spread to show."
    return None


def score_histogram(
    scores: Iterable[float | None],
    *,
    title: str = "Score distribution",
    x_range: tuple[float, float] | None = None,
    bins: int = 20,
) -> go.Figure:
    """A histogram of one scorer's scores.

    Args:
        scores: the scores of the scored items; None, NaN and infinities (items that
            were not scored) are left out, never counted as 0.
        title: the chart title; ``(n = …)`` is appended.
        x_range: the score range, e.g. ``(0, scale)``; the bins then split it into
            ``bins`` equal widths and the axis shows all of it. None: fitted to the data.
        bins: the number of bins over ``x_range`` (or Plotly's choice without it), >= 1.

    Returns:
        A figure with one ``go.Histogram`` trace named ``"scores"`` whose ``x`` are the
        scores. No score: a :func:`message_figure`. One score, or all equal: the
        histogram plus a message annotation saying there is no spread.
    """
    values = _finite(scores)
    if not values:
        return message_figure("No scored items: nothing to plot.", title=title)
    hist = go.Histogram(
        x=values,
        name="scores",
        marker_color=SCORE_COLOR,
        hovertemplate="score %{x}<br>%{y} items<extra></extra>",
    )
    if x_range is not None:
        lo, hi = x_range
        hist.xbins = {"start": lo, "end": hi + (hi - lo) * 1e-9, "size": (hi - lo) / max(1, bins)}
    else:
        hist.nbinsx = bins
    fig = go.Figure(hist)
    fig.update_layout(
        title=f"{title} (n = {len(values)})",
        height=280,
        bargap=0.05,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        showlegend=False,
    )
    fig.update_xaxes(title="score", range=list(x_range) if x_range is not None else None)
    fig.update_yaxes(title="items")
    note = _single_value_note(values, "scored item")
    return _add_message(fig, note, y=0.9) if note else fig


def score_box(
    scores: Iterable[float | None],
    *,
    labels: Sequence[str] | None = None,
    title: str = "Score spread",
    x_range: tuple[float, float] | None = None,
) -> go.Figure:
    """A horizontal box plot of one scorer's scores, every item drawn as a point.

    Args:
        scores: the scores; None, NaN and infinities are left out.
        labels: one label per entry of ``scores`` (e.g. the item ids), shown on hover;
            the labels of left-out scores are dropped with them.
        title: the chart title.
        x_range: the axis range, e.g. ``(0, scale)``, or None.

    Returns:
        A figure with one ``go.Box`` trace named ``"scores"`` (``x`` = the scores, the
        quartiles computed by Plotly). No score: a :func:`message_figure`. One score,
        or all equal: the box plus a message annotation.
    """
    raw = list(scores)
    names = list(labels) if labels is not None else [""] * len(raw)
    if len(names) != len(raw):
        raise ValueError(f"labels has {len(names)} entries but scores has {len(raw)}; give one label per score")
    kept = [(v, n) for v, n in zip(raw, names, strict=True) if _finite([v])]
    if not kept:
        return message_figure("No scored items: nothing to plot.", title=title)
    values = [float(v) for v, _ in kept]  # type: ignore[arg-type]
    fig = go.Figure(
        go.Box(
            x=values,
            name="scores",
            text=[n for _, n in kept],
            boxpoints="all",
            jitter=0.4,
            pointpos=0,
            boxmean=True,
            marker={"color": SCORE_COLOR, "size": 5, "opacity": 0.6},
            hovertemplate="%{text}<br>score %{x}<extra></extra>",
        )
    )
    fig.update_layout(title=title, height=280, margin={"l": 10, "r": 10, "t": 50, "b": 10}, showlegend=False)
    fig.update_xaxes(title="score", range=list(x_range) if x_range is not None else None)
    fig.update_yaxes(visible=False)
    note = _single_value_note(values, "scored item")
    return _add_message(fig, note, y=0.9) if note else fig


def dimension_distribution(
    dimensions: pd.DataFrame,
    *,
    kind: str = "box",
    title: str = "Dimension scores",
    order: Sequence[str] | None = None,
) -> go.Figure:
    """The distribution of each dimension's 0..1 scores, one box or violin per dimension.

    Args:
        dimensions: long frame with columns ``dimension`` (label), ``value`` (0..1
            float) and ``item_id``, one row per scored item × dimension (see
            :func:`dashboard.batch.dimension_frame`).
        kind: ``"box"`` or ``"violin"``.
        title: the chart title.
        order: the dimensions in drawing order (default: first appearance).

    Returns:
        A figure with one trace per dimension (``name`` = its label, ``y`` = its
        values), y axis 0..1. No rows: a :func:`message_figure`; a single scored item:
        the traces plus a message annotation.

    Raises:
        ValueError: ``kind`` is not ``"box"`` or ``"violin"``, or a column is missing.
    """
    if kind not in ("box", "violin"):
        raise ValueError(f"kind must be 'box' or 'violin', got {kind!r}")
    _require(dimensions, ("dimension", "value", "item_id"), "dimension_distribution")
    data = dimensions[pd.to_numeric(dimensions["value"], errors="coerce").notna()]
    if data.empty:
        return message_figure("No dimension scores: no item has been scored with a dimension breakdown.", title=title)
    names = list(order) if order is not None else list(dict.fromkeys(data["dimension"]))
    fig = go.Figure()
    for name in names:
        part = data[data["dimension"] == name]
        if part.empty:
            continue
        common = {
            "y": part["value"].astype(float).tolist(),
            "name": name,
            "text": part["item_id"].astype(str).tolist(),
            "hovertemplate": "%{text}<br>" + name + ": %{y:.2f}<extra></extra>",
        }
        if kind == "box":
            fig.add_trace(go.Box(boxpoints="all", jitter=0.4, pointpos=0, boxmean=True, marker={"size": 4}, **common))
        else:
            fig.add_trace(go.Violin(points="all", box_visible=True, meanline_visible=True, spanmode="hard", **common))
    fig.update_layout(title=title, height=360, margin={"l": 10, "r": 10, "t": 50, "b": 10}, showlegend=False)
    fig.update_yaxes(title="dimension score (0–1)", range=[-0.05, 1.05])
    if data["item_id"].nunique() == 1:
        _add_message(fig, "Only one scored item: a distribution needs at least two.", y=0.95)
    return fig


def dimension_heatmap(
    dimensions: pd.DataFrame,
    *,
    title: str = "Dimension scores by item",
    order: Sequence[str] | None = None,
) -> go.Figure:
    """A heatmap of items (rows) by dimensions (columns), coloured by the 0..1 score.

    Args:
        dimensions: long frame with columns ``item_index``, ``item_id``, ``dimension``
            and ``value`` (see :func:`dashboard.batch.dimension_frame`).
        title: the chart title.
        order: the dimension columns in order (default: first appearance).

    Returns:
        A figure with one ``go.Heatmap`` (``x`` = dimension labels, ``y`` = item ids in
        item order, ``z`` = scores, None where an item has no score for a dimension,
        colour scale fixed to 0..1). No rows: a :func:`message_figure`.
    """
    _require(dimensions, ("item_index", "item_id", "dimension", "value"), "dimension_heatmap")
    data = dimensions[pd.to_numeric(dimensions["value"], errors="coerce").notna()]
    if data.empty:
        return message_figure("No dimension scores: no item has been scored with a dimension breakdown.", title=title)
    columns = list(order) if order is not None else list(dict.fromkeys(data["dimension"]))
    columns = [c for c in columns if c in set(data["dimension"])]
    table = data.pivot_table(index=["item_index", "item_id"], columns="dimension", values="value", aggfunc="first")
    table = table.reindex(columns=columns).sort_index(level="item_index")
    z = [[None if pd.isna(v) else float(v) for v in row] for row in table.to_numpy()]
    labels = [str(item_id) for _, item_id in table.index]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=columns,
            y=labels,
            zmin=0,
            zmax=1,
            colorscale=HEATMAP_SCALE,
            colorbar={"title": "score"},
            hovertemplate="%{y}<br>%{x}: %{z:.2f}<extra></extra>",
            xgap=1,
            ygap=1 if len(labels) <= 60 else 0,
        )
    )
    fig.update_layout(
        title=title,
        height=120 + min(18 * len(labels), 700),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    fig.update_yaxes(autorange="reversed", type="category", showticklabels=len(labels) <= 80)
    fig.update_xaxes(side="top", type="category")
    return fig


def group_comparison_chart(table: pd.DataFrame, group: str, *, title: str | None = None) -> go.Figure:
    """Mean score per group, one bar group per group value and one colour per scorer.

    Args:
        table: frame with columns ``group`` (the group value as text), ``scorer``,
            ``mean`` (float, NaN when the group has no scored item), ``n_scored`` and
            ``n_failed`` (see :func:`dashboard.batch.group_means`).
        group: the group-by column's name, for the title and axis.
        title: the chart title (default ``"Mean score by <group>"``).

    Returns:
        A figure with one ``go.Bar`` per scorer (``x`` = group values, ``y`` = means,
        the counts in the bar text). No scored group: a :func:`message_figure`.
    """
    _require(table, ("group", "scorer", "mean", "n_scored", "n_failed"), "group_comparison_chart")
    title = title or f"Mean score by {group}"
    scored = table[table["mean"].notna()]
    if scored.empty:
        return message_figure(f"No scored items in any {group} group.", title=title)
    fig = go.Figure()
    for scorer, part in table.groupby("scorer", sort=False):
        fig.add_trace(
            go.Bar(
                x=part["group"].astype(str).tolist(),
                y=[None if pd.isna(v) else float(v) for v in part["mean"]],
                name=str(scorer),
                text=[
                    f"n={s}" + (f", {f} failed" if f else "")
                    for s, f in zip(part["n_scored"], part["n_failed"], strict=True)
                ],
                textposition="auto",
                hovertemplate="%{x}<br>mean %{y:.3f}<br>%{text}<extra>" + str(scorer) + "</extra>",
            )
        )
    fig.update_layout(
        title=title,
        barmode="group",
        height=320,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.2},
    )
    fig.update_xaxes(title=group, type="category")
    fig.update_yaxes(title="mean score")
    if len(scored["group"].unique()) == 1:
        _add_message(fig, f"Only one {group} group has scored items: nothing to compare it with.", y=0.95)
    return fig


def _require(frame: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: the frame has no column(s) {', '.join(missing)}; it needs {', '.join(columns)}")
