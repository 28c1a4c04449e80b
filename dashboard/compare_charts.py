"""Plotly chart builders for comparing variants and runs: pure functions returning ``go.Figure`` (no Streamlit).

Like :mod:`dashboard.distributions`, every builder answers the edge cases of a
comparison (one variant, nothing scored, a single value, no matched pair) with a
figure carrying a message annotation (``name="message"``, read them with
:func:`dashboard.distributions.figure_messages`) instead of raising, so the
Compare page can always draw what it gets. A missing column is a programming
error and raises ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from scorers.analysis.numbers import signed_numbers
from scorers.analysis.report import VARIANT_COLORS, wrap_label

from .distributions import add_message, message_figure

WIN_COLOR = "#1a9850"
TIE_COLOR = "#bdbdbd"
LOSS_COLOR = "#d73027"
_MARGIN = {"l": 10, "r": 10, "t": 50, "b": 10}


def variant_color(index: int) -> str:
    """The colour of the ``index``-th variant (the palette repeats after 8).

    >>> variant_color(0), variant_color(8)
    ('#4C78A8', '#4C78A8')
    """
    return VARIANT_COLORS[index % len(VARIANT_COLORS)]


def _number(value: object) -> float | None:
    """``value`` as a finite float, or None (None, NaN, infinities, booleans and text)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _require(frame: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: the frame has no column(s) {', '.join(missing)}; it needs {', '.join(columns)}")


def leaderboard_chart(
    board: pd.DataFrame, scorer: str, *, title: str | None = None, colors: Mapping[str, str] | None = None
) -> go.Figure:
    """Mean score per variant for one scorer, with its 95 % confidence interval as error bars.

    Args:
        board: the leaderboard (:func:`scorers.analysis.compare.leaderboard`): columns
            ``variant``, ``scorer``, ``mean`` (NaN when nothing was scored),
            ``ci_low``, ``ci_high`` (NaN when undefined), ``n_scored``, ``n_failed``.
        scorer: the scorer whose rows are drawn (the value of the ``scorer`` column).
        title: the chart title (default ``"<scorer>: mean per variant"``).
        colors: variant → colour (:func:`scorers.analysis.report.variant_colors`), the same in
            every chart of a page; default by position in the board.

    Returns:
        One ``go.Bar`` named ``"mean"`` (``x`` = variants in the board's order, ``y``
        = means, asymmetric error bars to the CI bounds, ``n`` and failures as text at the
        base of each bar, clear of the error bar).
        No row or no scored variant: a message figure. One variant: the bar plus a
        message saying there is nothing to compare it with.
    """
    _require(board, ("variant", "scorer", "mean", "ci_low", "ci_high", "n_scored", "n_failed"), "leaderboard_chart")
    title = title or f"{scorer}: mean per variant"
    rows = board[board["scorer"] == scorer]
    scored = rows[rows["mean"].map(_number).notna()]
    if scored.empty:
        return message_figure("No scored items for this scorer: nothing to plot.", title=title)
    means = [_number(v) for v in scored["mean"]]
    lows = [_number(v) for v in scored["ci_low"]]
    highs = [_number(v) for v in scored["ci_high"]]
    plus = [(h - m) if h is not None and m is not None else 0.0 for m, h in zip(means, highs, strict=True)]
    minus = [(m - lo) if lo is not None and m is not None else 0.0 for m, lo in zip(means, lows, strict=True)]
    fig = go.Figure(
        go.Bar(
            x=scored["variant"].astype(str).tolist(),
            y=means,
            name="mean",
            marker_color=[(colors or {}).get(str(v), variant_color(i)) for i, v in enumerate(scored["variant"])],
            error_y={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "visible": True},
            text=[
                f"n={int(n)}" + (f", {int(f)} not scored" if f else "")
                for n, f in zip(scored["n_scored"], scored["n_failed"], strict=True)
            ],
            textposition="inside",
            insidetextanchor="start",  # at the bar's base: at its top the CI whisker crossed it
            hovertemplate="%{x}<br>mean %{y:.3f}<br>%{text}<extra></extra>",
        )
    )
    fig.update_layout(title=title, height=320, margin=_MARGIN, showlegend=False)
    fig.update_xaxes(title="variant", type="category")
    fig.update_yaxes(title="mean score (95% CI)")
    if len(scored) == 1:
        add_message(fig, "Only one variant has scored items: nothing to compare it with.", y=0.95)
    return fig


def dimension_bars(
    dimensions: pd.DataFrame,
    *,
    title: str = "Mean per dimension",
    order: Sequence[str] | None = None,
    colors: Mapping[str, str] | None = None,
) -> go.Figure:
    """Grouped bars: the mean of each dimension, one bar per variant.

    Args:
        dimensions: long frame with columns ``variant``, ``dimension`` (label) and
            ``mean`` (0..1, NaN when the variant has no score for it); optional
            ``n`` (how many scores the mean is over, shown on hover).
        title: the chart title.
        order: the variants in drawing order (default: first appearance).
        colors: variant → colour, as for :func:`leaderboard_chart`.

    Returns:
        One ``go.Bar`` per variant (``name`` = the variant, ``x`` = dimensions wrapped at
        spaces (:func:`scorers.analysis.report.wrap_label`) so no label is cut,
        ``y`` = means), ``barmode="group"``. No mean: a message figure; one variant:
        the bars plus a message.
    """
    _require(dimensions, ("variant", "dimension", "mean"), "dimension_bars")
    data = dimensions[dimensions["mean"].map(_number).notna()]
    if data.empty:
        return message_figure("No dimension scores: no scorer with a dimension breakdown scored an item.", title=title)
    variants = [str(v) for v in (order if order is not None else dict.fromkeys(data["variant"]))]
    fig = go.Figure()
    for n, variant in enumerate(variants):
        part = data[data["variant"].astype(str) == variant]
        if part.empty:
            continue
        counts = part["n"].tolist() if "n" in part.columns else [None] * len(part)
        fig.add_trace(
            go.Bar(
                x=[wrap_label(d, 14) for d in part["dimension"].astype(str)],
                y=[_number(v) for v in part["mean"]],
                name=variant,
                marker_color=(colors or {}).get(variant, variant_color(n)),
                customdata=counts,
                hovertemplate="%{x}<br>mean %{y:.3f}"
                + ("<br>n=%{customdata}" if "n" in part.columns else "")
                + "<extra>"
                + variant
                + "</extra>",
            )
        )
    fig.update_layout(title=title, barmode="group", height=380, margin=_MARGIN, legend={"orientation": "h", "y": -0.3})
    fig.update_xaxes(type="category", automargin=True, tickangle=0)
    fig.update_yaxes(title="mean dimension score")
    if len(fig.data) == 1:
        add_message(fig, "Only one variant has dimension scores: nothing to compare it with.", y=0.95)
    return fig


def score_distributions(
    scores: pd.DataFrame,
    *,
    title: str = "Score distribution per variant",
    x_range: tuple[float, float] | None = None,
    bins: int = 20,
    order: Sequence[str] | None = None,
    colors: Mapping[str, str] | None = None,
) -> go.Figure:
    """Overlaid histograms of the scores, one semi-transparent histogram per variant.

    Args:
        scores: columns ``variant`` and ``score`` (float; None/NaN for an item that
            was not scored: left out, never counted as 0).
        title: the chart title.
        x_range: the score range, e.g. ``(0, scale)``: every histogram then uses the
            same ``bins`` equal bins over it, so the bars line up. None: Plotly's bins.
        bins: the number of bins over ``x_range``.
        order: the variants in drawing order (default: first appearance).
        colors: variant → colour, as for :func:`leaderboard_chart`.

    Returns:
        One ``go.Histogram`` per variant with a scored item (``name`` = the variant,
        ``x`` = its scores), ``barmode="overlay"``. Nothing scored: a message figure;
        a single score or all scores equal: the histograms plus a message.
    """
    _require(scores, ("variant", "score"), "score_distributions")
    data = scores[scores["score"].map(_number).notna()]
    if data.empty:
        return message_figure("No scored items: nothing to plot.", title=title)
    variants = [str(v) for v in (order if order is not None else dict.fromkeys(data["variant"]))]
    fig = go.Figure()
    for n, variant in enumerate(variants):
        values = [float(v) for v in data.loc[data["variant"].astype(str) == variant, "score"]]
        if not values:
            continue
        hist = go.Histogram(
            x=values,
            name=f"{variant} (n={len(values)})",
            marker_color=(colors or {}).get(variant, variant_color(n)),
            opacity=0.6,
            hovertemplate="score %{x}<br>%{y} items<extra>" + variant + "</extra>",
        )
        if x_range is not None:
            lo, hi = x_range
            hist.xbins = {"start": lo, "end": hi + (hi - lo) * 1e-9, "size": (hi - lo) / max(1, bins)}
        fig.add_trace(hist)
    fig.update_layout(
        title=title, barmode="overlay", height=320, margin=_MARGIN, legend={"orientation": "h", "y": -0.25}
    )
    fig.update_xaxes(title="score", range=list(x_range) if x_range is not None else None)
    fig.update_yaxes(title="items")
    values = [float(v) for v in data["score"]]
    if len(values) == 1:
        add_message(fig, f"Only one scored item ({values[0]:.3g}): a distribution needs at least two.", y=0.9)
    elif len(set(values)) == 1:
        add_message(fig, f"All {len(values)} scores are {values[0]:.3g}: there is no spread to show.", y=0.9)
    return fig


def head_to_head(
    pairs: pd.DataFrame,
    a: str,
    b: str,
    *,
    title: str | None = None,
    x_range: tuple[float, float] | None = None,
    colors: Mapping[str, str] | None = None,
) -> go.Figure:
    """A scatter of the two variants' scores on the same rows: ``a`` on x, ``b`` on y, with the diagonal.

    Points above the diagonal are rows where ``b`` scored higher, below it rows
    where ``a`` did; points on it are ties.

    Args:
        pairs: one row per dataset row scored by both: columns ``row_id``,
            ``score_a`` and ``score_b`` (rows missing either score are left out).
        a: the first variant's name (x axis).
        b: the second variant's name (y axis).
        title: the chart title (default ``"<a> vs <b>, row by row"``).
        x_range: the score range for both axes (default: fitted to the scores).
        colors: variant → colour, as for :func:`leaderboard_chart` (the points a wins take a's).

    Returns:
        Up to three ``go.Scatter`` marker traces named ``"<a> higher"``, ``"tie"``
        and ``"<b> higher"`` (``customdata`` = the row ids), and a line trace named
        ``"equal"`` for the diagonal. No matched pair: a message figure; one pair:
        the point plus a message.
    """
    _require(pairs, ("row_id", "score_a", "score_b"), "head_to_head")
    title = title or f"{a} vs {b}, row by row"
    data = pairs[pairs["score_a"].map(_number).notna() & pairs["score_b"].map(_number).notna()]
    if data.empty:
        return message_figure(f"No row was scored for both {a} and {b}: nothing to pair.", title=title)
    xs = data["score_a"].astype(float)
    ys = data["score_b"].astype(float)
    if x_range is None:
        lo, hi = float(min(xs.min(), ys.min())), float(max(xs.max(), ys.max()))
        pad = (hi - lo) * 0.05 or 0.05
        x_range = (lo - pad, hi + pad)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=list(x_range),
            y=list(x_range),
            mode="lines",
            name="equal",
            line={"color": "#9e9e9e", "dash": "dash"},
            hoverinfo="skip",
        )
    )
    groups = (
        (f"{a} higher", xs > ys, (colors or {}).get(a, variant_color(0))),
        ("tie", xs == ys, TIE_COLOR),
        (f"{b} higher", xs < ys, (colors or {}).get(b, variant_color(1))),
    )
    for name, mask, color in groups:
        if not mask.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=xs[mask].tolist(),
                y=ys[mask].tolist(),
                mode="markers",
                name=name,
                marker={"color": color, "size": 9, "line": {"width": 1, "color": "white"}},
                customdata=data.loc[mask, "row_id"].astype(str).tolist(),
                hovertemplate="%{customdata}<br>" + a + ": %{x:.3f}<br>" + b + ": %{y:.3f}<extra></extra>",
            )
        )
    fig.update_layout(title=title, height=420, margin=_MARGIN, legend={"orientation": "h", "y": -0.2})
    fig.update_xaxes(title=f"{a} score", range=list(x_range))
    fig.update_yaxes(title=f"{b} score", range=list(x_range))
    if len(data) == 1:
        add_message(fig, "Only one row was scored for both: a comparison needs more.", y=0.95)
    return fig


def win_tie_loss_chart(wins: int, ties: int, losses: int, a: str, b: str, *, title: str | None = None) -> go.Figure:
    """One stacked horizontal bar: the rows ``a`` won, tied and lost against ``b``.

    Args:
        wins: rows where ``a`` scored higher than ``b``.
        ties: rows with equal scores.
        losses: rows where ``b`` scored higher.
        a: the first variant's name.
        b: the second variant's name.
        title: the chart title (default ``"<a> against <b>"``).

    Returns:
        Three ``go.Bar`` traces named ``"<a> wins"``, ``"tie"`` and ``"<b> wins"``
        (``x`` = the counts), ``barmode="stack"``. No pair at all: a message figure.
    """
    title = title or f"{a} against {b}"
    total = wins + ties + losses
    if total == 0:
        return message_figure(f"No row was scored for both {a} and {b}.", title=title, height=160)
    fig = go.Figure()
    for name, count, color in (
        (f"{a} wins", wins, WIN_COLOR),
        ("tie", ties, TIE_COLOR),
        (f"{b} wins", losses, LOSS_COLOR),
    ):
        fig.add_trace(
            go.Bar(
                x=[count],
                y=["rows"],
                name=name,
                orientation="h",
                marker_color=color,
                text=[f"{count} ({count / total:.0%})" if count else ""],
                textposition="inside",
                hovertemplate=name + ": %{x} rows<extra></extra>",
            )
        )
    legend = {"orientation": "h", "y": -0.35, "traceorder": "normal"}
    fig.update_layout(title=title, barmode="stack", height=170, margin=_MARGIN, legend=legend)
    fig.update_xaxes(range=[0, total])
    fig.update_yaxes(visible=False)
    return fig


def win_rate_chart(
    rates: pd.DataFrame, *, title: str = "Pairwise judge: win rate", ends: tuple[str, str] | None = None
) -> go.Figure:
    """Horizontal bars of win rates (0..1) with their 95 % confidence intervals.

    Args:
        rates: columns ``name`` (e.g. ``"A wins"``, ``"tie"``, ``"B wins"``),
            ``rate`` (0..1), ``ci_low`` and ``ci_high`` (NaN when undefined); an
            optional ``count`` is shown on hover.
        title: the chart title.
        ends: the colours of A's and B's wins (their variants' colours on the page); default the
            palette's first two.

    Returns:
        One ``go.Bar`` named ``"win rate"`` (``y`` = the names, ``x`` = the rates,
        error bars to the CI bounds), x axis 0..1. No rate: a message figure.
    """
    _require(rates, ("name", "rate", "ci_low", "ci_high"), "win_rate_chart")
    data = rates[rates["rate"].map(_number).notna()]
    if data.empty:
        return message_figure("No verdict: the pairwise judge has not compared any row yet.", title=title, height=200)
    values = [float(v) for v in data["rate"]]
    lows = [_number(v) for v in data["ci_low"]]
    highs = [_number(v) for v in data["ci_high"]]
    first, second = ends or (variant_color(0), variant_color(1))
    colors = [first, TIE_COLOR, second]
    fig = go.Figure(
        go.Bar(
            x=values,
            y=data["name"].astype(str).tolist(),
            name="win rate",
            orientation="h",
            marker_color=[colors[i] if len(data) == 3 else variant_color(i) for i in range(len(data))],
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [(h - v) if h is not None else 0.0 for v, h in zip(values, highs, strict=True)],
                "arrayminus": [(v - lo) if lo is not None else 0.0 for v, lo in zip(values, lows, strict=True)],
            },
            customdata=data["count"].tolist() if "count" in data.columns else None,
            hovertemplate="%{y}: %{x:.0%}"
            + (" (%{customdata} rows)" if "count" in data.columns else "")
            + "<extra></extra>",
        )
    )
    fig.update_layout(title=title, height=120 + 40 * len(data), margin=_MARGIN, showlegend=False)
    fig.update_xaxes(title="share of rows (95% CI)", range=[0, 1], tickformat=".0%")
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def delta_bars(deltas: pd.DataFrame, *, title: str = "Change from run A to run B", label: str = "name") -> go.Figure:
    """Horizontal bars of mean changes (B − A): green where B improved, red where it regressed.

    Args:
        deltas: columns ``label`` (e.g. ``"Textual difference · Ratio"``) and
            ``delta`` (float; NaN where one run has no score: left out); optional
            ``higher_is_better`` (bool per row, default True): where False (toxicity, bias ...)
            a negative change is the improvement and is green.
        title: the chart title.
        label: the column holding the bar labels.

    Returns:
        One ``go.Bar`` named ``"delta"`` (``y`` = labels, ``x`` = deltas), the x
        axis symmetric around 0. No delta: a message figure; every delta 0: the bars
        plus a message.
    """
    _require(deltas, (label, "delta"), "delta_bars")
    data = deltas[deltas["delta"].map(_number).notna()]
    if data.empty:
        return message_figure("Nothing to compare: no score is present in both runs.", title=title, height=200)
    values = [float(v) for v in data["delta"]]
    directions = data["higher_is_better"].tolist() if "higher_is_better" in data else [True] * len(values)
    gains = [v if up else -v for v, up in zip(values, directions, strict=True)]
    reach = max(abs(v) for v in values) or 1.0
    fig = go.Figure(
        go.Bar(
            x=values,
            y=data[label].astype(str).tolist(),
            name="delta",
            orientation="h",
            marker_color=[WIN_COLOR if g > 0 else LOSS_COLOR if g < 0 else TIE_COLOR for g in gains],
            customdata=signed_numbers(values),  # a change of 0.0004 is "+0.00040", never "+0.000"
            hovertemplate="%{y}: %{customdata}<extra></extra>",
        )
    )
    fig.update_layout(title=title, height=140 + 28 * min(len(values), 30), margin=_MARGIN, showlegend=False)
    # Plain decimals on the axis (Plotly's default writes 0.0004 with an SI prefix, "400µ"): enough decimals for a
    # fifth of the reach, trailing zeros trimmed (d3-format "~f").
    decimals = min(12, max(1, 1 - math.floor(math.log10(reach / 5))))
    fig.update_xaxes(title="B − A", range=[-reach * 1.1, reach * 1.1], zeroline=True, tickformat=f".{decimals}~f")
    fig.update_yaxes(type="category", autorange="reversed")
    if all(math.isclose(v, 0.0, abs_tol=1e-12) for v in values):
        add_message(fig, "No change: every score is the same in both runs.", y=0.9)
    return fig
