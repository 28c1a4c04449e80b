"""Self-contained HTML reports of a run or a comparison, to send to stakeholders.

A report is one HTML file that opens offline and makes no request of its own: the
Plotly library is inlined once (the first chart carries it, the others reuse it), the
styles are inline, there are no web fonts and no images from URLs, and a
Content-Security-Policy forbids any fetch. Every text from the data (prompts,
responses, reasons, names) is HTML-escaped. The setup section lists the dataset, the
variants and the judge's model and parameters, never an API key (keys that look like
secrets are dropped from ``setup``).

The charts are built here with Plotly rather than imported from ``dashboard/``: the
library never depends on the dashboard (STYLE.md: data flows one way).

Typical use::

    html = run_report(store, run_id)                       # or:
    html = comparison_report(frame, setup={...}, costs=generation_costs(responses))
    Path("report.html").write_text(html, encoding="utf-8")

or from the command line: ``python -m scorers report RUN_ID [--compare-with RUN_ID] --output report.html``.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from scorers.analysis.certify import labels_report_tables
from scorers.analysis.compare import (
    dimension_means,
    not_scored_summary,
    paired,
    rows_by_difference,
    run_diff,
    run_frames,
)
from scorers.analysis.compare import leaderboard as build_leaderboard
from scorers.analysis.generate import judging_basis_text
from scorers.analysis.pairwise_runs import pairwise_report_tables
from scorers.analysis.ranking import group_breakdown, pairwise_tests, ranking
from scorers.core.base import decimal_text
from scorers.core.errors import ScoreStatus, run_status_label
from scorers.core.pricing import RunCost, usd_text
from scorers.runs.export import json_safe, results_frame
from scorers.runs.judges import judges_text, judges_used, stored_run_cost
from scorers.runs.runner import load_run, recorded_scorer_options
from scorers.runs.store import Store

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
    "font-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'"
)
"""The report's policy: inline scripts and styles only; nothing is fetched from anywhere."""

MAX_CELL_CHARS = 4000
"""Longer texts in the sample rows are cut here (the report says how much was left out)."""

GENERATION_COST = "generation cost of the variant (USD)"
"""A variant report's leaderboard column: what generating the variant's responses cost (no judging)."""
JUDGE_COST = "judge cost (USD)"
"""A run report's leaderboard column: what the judge calls of the scorer's outcomes cost."""

_SECRET_KEYS = {"apikey", "key", "secret", "password", "authorization", "token", "accesstoken", "bearer"}
VARIANT_COLORS = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D")
"""The palette of variants (Tableau-like), shared by the Compare page's charts and the reports."""


def variant_colors(variants: Sequence[Any]) -> dict[str, str]:
    """One fixed colour per variant, by its position in ``variants`` (the palette repeats after 8).

    Every chart of a page or a report takes its colours from this one mapping, so a variant
    keeps its colour whatever order a chart sorts the variants in.

    >>> variant_colors(["gpt-4", "llama-13b"])
    {'gpt-4': '#4C78A8', 'llama-13b': '#F58518'}
    """
    return {str(v): VARIANT_COLORS[i % len(VARIANT_COLORS)] for i, v in enumerate(dict.fromkeys(map(str, variants)))}


def wrap_label(text: str, width: int = 18) -> str:
    """A chart label wrapped at spaces with ``<br>`` so that a long dimension name is never cut.

    >>> wrap_label("User · Constraint adherence", 12)
    'User ·<br>Constraint<br>adherence'
    """
    lines: list[str] = []
    for word in str(text).split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 0;
       color: #1f2328; background: #ffffff; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #d0d7de; padding-bottom: 0.3em; }
.generated { color: #59636e; font-size: 0.9em; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
dl.setup { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
dl.setup dt { font-weight: 600; }
dl.setup dd { margin: 0; }
.text { white-space: pre-wrap; max-height: 16em; overflow: auto; }
.note { background: #f6f8fa; border-left: 4px solid #4C78A8; padding: 8px 12px; margin: 8px 0; }
.figure { margin: 12px 0 24px; }
.missing { color: #59636e; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _plain(value: Any) -> str:
    """A label for a Plotly figure: Plotly reads a little HTML in labels, so escape it."""
    return html.escape(str(value), quote=False)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _secret_key(key: Any) -> bool:
    normalized = re.sub(r"[^a-z]", "", str(key).lower())
    return normalized in _SECRET_KEYS or normalized.endswith(("apikey", "secret", "password"))


def redact_setup(setup: Mapping[str, Any]) -> dict[str, Any]:
    """``setup`` without anything that looks like a secret: keys such as ``api_key``, ``apiKey``,
    ``secret``, ``password``, ``authorization`` (at any depth), and ``sk-...`` strings.

    >>> redact_setup({"judge": {"model": "gpt-4o-mini", "api_key": "sk-123"}, "k": "sk-abc"})
    {'judge': {'model': 'gpt-4o-mini'}}
    """

    def clean(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(k): clean(v) for k, v in value.items() if not _secret_key(k) and not _looks_secret(v)}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value if not _looks_secret(v)]
        return value

    return clean(dict(setup))


def _looks_secret(value: Any) -> bool:
    return isinstance(value, str) and bool(re.match(r"^sk-[A-Za-z0-9_\-]{2,}$", value.strip()))


def _format_number(value: Any, column: str = "") -> str:
    if _is_missing(value):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        if column in (GENERATION_COST, JUDGE_COST):
            return usd_text(value)
        if column in ("wilcoxon_p", "p"):
            return "< 0.001" if value < 0.001 else f"{value:.3f}"
        return decimal_text(value) if math.isfinite(value) else str(float(value))  # ±inf as inf / -inf
    return str(value)


def _render_value(value: Any) -> str:
    value = json_safe(value)
    if isinstance(value, Mapping):
        if not value:
            return '<span class="missing">–</span>'
        inner = "".join(f"<dt>{_e(k)}</dt><dd>{_render_value(v)}</dd>" for k, v in value.items())
        return f'<dl class="setup">{inner}</dl>'
    if isinstance(value, list):
        if not value:
            return '<span class="missing">–</span>'
        if all(not isinstance(v, (Mapping, list)) for v in value):
            return _e(", ".join("–" if v is None else str(v) for v in value))
        return "<ul>" + "".join(f"<li>{_render_value(v)}</li>" for v in value) + "</ul>"
    if value is None:
        return '<span class="missing">–</span>'
    return f'<span class="text">{_e(value)}</span>'


def _cell(value: Any, column: str) -> str:
    if isinstance(value, (Mapping, list, tuple)):
        return f"<td>{_render_value(value)}</td>"
    if _is_missing(value):
        return '<td class="missing">–</td>'
    if isinstance(value, (int, float, np.integer, np.floating, bool, np.bool_)):
        return f'<td class="num">{_e(_format_number(value, column))}</td>'
    text = str(value)
    more = len(text) - MAX_CELL_CHARS
    if more > 0:
        text = text[:MAX_CELL_CHARS]
    suffix = f'<span class="missing"> … ({more:,} more characters)</span>' if more > 0 else ""
    return f'<td><div class="text">{_e(text)}{suffix}</div></td>'


def _table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(_cell(v, str(c)) for c, v in zip(frame.columns, row, strict=True)) + "</tr>"
        for row in frame.itertuples(index=False, name=None)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def build_report(
    *,
    title: str,
    setup: Mapping[str, Any],
    leaderboard: pd.DataFrame | None,
    figures: Sequence[go.Figure],
    rows: pd.DataFrame,
    notes: Sequence[str] = (),
    sections: Sequence[tuple[str, str, str]] = (),
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> str:
    """Assemble a self-contained HTML report.

    Args:
        title: the report's title.
        setup: what was compared and how: dataset, variants, judge model and parameters
            (nested mappings and lists are fine). Anything that looks like a secret is
            dropped (:func:`redact_setup`); never pass an API key anyway.
        leaderboard: a table such as :func:`scorers.analysis.compare.leaderboard`, or None.
        figures: Plotly figures, drawn in order.
        rows: sample rows (e.g. :func:`scorers.analysis.compare.rows_by_difference`); texts longer
            than :data:`MAX_CELL_CHARS` are cut, saying by how much.
        notes: sentences for the reader (e.g. :meth:`PairedComparison.summary`), shown
            before the charts.
        sections: ``(id, heading, HTML)`` shown first, e.g. the gate's verdict
            (:func:`scorers.analysis.gate.gate_section_html`); the HTML must already be escaped.
        tables: more tables after the leaderboard, heading → table (e.g. a ranking, a
            breakdown by category, pairwise-judge verdicts, labels and agreement).

    Returns:
        One HTML document (UTF-8 text): Plotly's JavaScript inlined once, no external
        reference (no CDN, web font or remote image; a Content-Security-Policy forbids
        fetching), every data text HTML-escaped.
    """
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CONTENT_SECURITY_POLICY)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body><main>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="generated">Generated by Scorer Studio on {_e(generated)}.</p>',
    ]
    for section_id, heading, body in sections:
        parts += [f'<h2 id="{_e(section_id)}">{_e(heading)}</h2>', body]
    if notes:
        parts.append('<h2 id="summary">Summary</h2>')
        parts += [f'<p class="note">{_e(n)}</p>' for n in notes]
    parts.append('<h2 id="setup">Setup</h2>')
    parts.append(_render_value(redact_setup(setup)) if setup else '<p class="missing">Not recorded.</p>')
    if leaderboard is not None:
        parts.append('<h2 id="leaderboard">Leaderboard</h2>')
        # "n_failed" counts every outcome without a score (a missing input too): headed as the CLI and Compare say it.
        shown = leaderboard.rename(columns={"n_failed": "n_not_scored"})
        parts.append(_table(shown) if not shown.empty else '<p class="missing">Nothing was scored.</p>')
    for n, (heading, table) in enumerate((tables or {}).items()):
        parts.append(f'<h2 id="table-{n}">{_e(heading)}</h2>')
        parts.append(_table(table) if not table.empty else '<p class="missing">Nothing to show.</p>')
    if figures:
        parts.append('<h2 id="charts">Charts</h2>')
        for i, fig in enumerate(figures):
            div = pio.to_html(
                fig, include_plotlyjs=i == 0, full_html=False, config={"displaylogo": False, "responsive": True}
            )
            parts.append(f'<div class="figure">{div}</div>')
    parts.append('<h2 id="rows">Sample rows</h2>')
    parts.append(_table(rows) if not rows.empty else '<p class="missing">No rows to show.</p>')
    parts.append("</main></body></html>")
    return "\n".join(parts)


# ---- figures ------------------------------------------------------------------------------------------


def leaderboard_figure(
    board: pd.DataFrame, *, title: str = "Mean score by variant (95% CI)", colors: Mapping[str, str] | None = None
) -> go.Figure:
    """Grouped bars: one group per scorer, one bar per variant, error bars from ``ci_low``/``ci_high``.

    Args:
        board: :func:`scorers.analysis.compare.leaderboard` output.
        title: the chart title.
        colors: variant → colour (:func:`variant_colors`); default by the board's order.
    """
    fig = go.Figure()
    colors = colors or variant_colors(board["variant"])
    for variant, part in board.groupby("variant", sort=False):
        means = part["mean"].astype(float)
        fig.add_trace(
            go.Bar(
                name=_plain(variant),
                x=[_plain(s) for s in part["scorer"]],
                y=means,
                marker_color=colors.get(str(variant), VARIANT_COLORS[0]),
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"].astype(float) - means).tolist(),
                    "arrayminus": (means - part["ci_low"].astype(float)).tolist(),
                },
                customdata=np.stack([part["n_scored"], part["n_failed"]], axis=-1),
                hovertemplate="%{x}: mean %{y:.3f}<br>%{customdata[0]} scored, %{customdata[1]} failed<extra>"
                + _plain(variant)
                + "</extra>",
            )
        )
    fig.update_layout(
        title=title,
        barmode="group",
        height=380,
        yaxis_title="mean score",
        margin={"l": 50, "r": 10, "t": 60, "b": 40},
        legend={"orientation": "h", "y": -0.15},
    )
    fig.update_xaxes(categoryorder="category ascending")
    return fig


def distribution_figure(
    frame: pd.DataFrame,
    group_col: str | None,
    *,
    title: str = "Score distribution",
    colors: Mapping[str, str] | None = None,
) -> go.Figure:
    """Box plots with every scored item as a point: one box per scorer (and variant, coloured by ``colors``)."""
    fig = go.Figure()
    scored = frame[(frame["status"] == ScoreStatus.SCORED.value) & frame["score"].notna()]
    groups = [(None, scored)] if group_col is None else list(scored.groupby(scored[group_col].astype(str), sort=False))
    for i, (variant, part) in enumerate(groups):
        fig.add_trace(
            go.Box(
                name=_plain(variant) if variant is not None else "all items",
                x=[_plain(s) for s in part["scorer"]],
                y=part["score"].astype(float),
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker_color=(colors or {}).get(str(variant), VARIANT_COLORS[i % len(VARIANT_COLORS)]),
            )
        )
    fig.update_layout(
        title=title,
        boxmode="group",
        height=380,
        yaxis_title="score",
        margin={"l": 50, "r": 10, "t": 60, "b": 40},
        legend={"orientation": "h", "y": -0.15},
    )
    fig.update_xaxes(categoryorder="category ascending")  # scorers in the leaderboard's order
    return fig


def dimension_figure(means: pd.DataFrame, scorer: str, *, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Horizontal grouped bars of :func:`scorers.analysis.compare.dimension_means` (0..1) for one scorer.

    The dimension labels are wrapped (:func:`wrap_label`) and the axis makes room for them,
    so none is cut at any width; each variant has its colour from ``colors``.
    """
    fig = go.Figure()
    for i, (variant, part) in enumerate(means.groupby("variant", sort=False)):
        fig.add_trace(
            go.Bar(
                name=_plain(variant),
                y=[wrap_label(_plain(x)) for x in part["label"]],
                x=part["mean"].astype(float),
                orientation="h",
                marker_color=(colors or {}).get(str(variant), VARIANT_COLORS[i % len(VARIANT_COLORS)]),
                text=[f"{v:.2f}" for v in part["mean"]],
                textposition="auto",
                hovertemplate="%{y}: %{x:.3f}<extra>" + _plain(variant) + "</extra>",
            )
        )
    n_dims = means["dimension"].nunique()
    fig.update_layout(
        title=f"{_plain(scorer)}: mean per dimension (0–1)",
        barmode="group",
        height=max(260, 60 + 28 * n_dims * max(1, means["variant"].nunique())),
        margin={"l": 10, "r": 10, "t": 60, "b": 40},
        legend={"orientation": "h", "y": -0.1},
    )
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(autorange="reversed", automargin=True)
    return fig


def difference_figure(differences: Sequence[float], scorer: str, a: str, b: str) -> go.Figure:
    """Histogram of the per-question differences ``a − b`` for one scorer, with a line at 0."""
    fig = go.Figure(
        go.Histogram(
            x=list(differences),
            marker_color=VARIANT_COLORS[0],
            nbinsx=21,
            hovertemplate="difference %{x}<br>%{y} questions<extra></extra>",
        )
    )
    fig.add_vline(x=0, line_dash="dash", line_color="#59636e")
    fig.update_layout(
        title=f"{_plain(scorer)}: per-question difference ({_plain(a)} − {_plain(b)})",
        height=300,
        xaxis_title=f"score of {_plain(a)} − score of {_plain(b)}",
        yaxis_title="questions",
        margin={"l": 50, "r": 10, "t": 60, "b": 50},
    )
    return fig


def breakdown_figure(breakdown: pd.DataFrame, variants: Sequence[str], *, title: str) -> go.Figure:
    """A heat map of mean scores: one row per group value, one column per variant, the mean and n in each cell.

    Args:
        breakdown: :func:`scorers.analysis.ranking.group_breakdown`: columns ``group``, ``variant``,
            ``mean`` (NaN when nothing was scored), ``n_scored``.
        variants: the variants in column order.
        title: the chart title.

    Returns:
        One ``go.Heatmap`` (``z`` = means, NaN cells blank, the text ``"0.812 (n=5)"``); a message
        figure when no cell has a scored outcome.
    """
    missing = [c for c in ("group", "variant", "mean", "n_scored") if c not in breakdown.columns]
    if missing:
        raise ValueError(f"breakdown_figure: the frame has no column(s) {', '.join(missing)}")
    if breakdown["mean"].isna().all():
        fig = go.Figure()
        fig.add_annotation(text="No scored outcome in any group: nothing to plot.", showarrow=False, name="message")
        return fig.update_layout(title=title, height=200)
    means = breakdown.pivot(index="group", columns="variant", values="mean").reindex(columns=list(variants))
    counts = breakdown.pivot(index="group", columns="variant", values="n_scored").reindex(columns=list(variants))
    text = [
        ["not scored" if pd.isna(m) else f"{decimal_text(m)} (n={int(n)})" for m, n in zip(mrow, nrow, strict=True)]
        for mrow, nrow in zip(means.to_numpy(), counts.fillna(0).to_numpy(), strict=True)
    ]
    fig = go.Figure(
        go.Heatmap(
            z=means.to_numpy(),
            x=[str(v) for v in means.columns],
            y=[str(g) for g in means.index],
            text=text,
            texttemplate="%{text}",
            colorscale="Blues",
            colorbar={"title": "mean"},
            hovertemplate="%{y} · %{x}<br>%{text}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title, height=max(260, 60 + 40 * len(means.index)), margin={"l": 10, "r": 10, "t": 50, "b": 10}
    )
    fig.update_xaxes(type="category", title="variant", automargin=True)
    fig.update_yaxes(type="category", automargin=True)
    return fig


def _status_figure(frame: pd.DataFrame) -> go.Figure:
    counts = frame.groupby(["scorer", "status"]).size().reset_index(name="n")
    fig = go.Figure()
    for i, (status, part) in enumerate(counts.groupby("status", sort=True)):
        fig.add_trace(
            go.Bar(
                name=_plain(status),
                x=[_plain(s) for s in part["scorer"]],
                y=part["n"],
                marker_color=VARIANT_COLORS[i % len(VARIANT_COLORS)],
            )
        )
    fig.update_layout(
        title="Outcomes per scorer (scored and not scored)",
        barmode="stack",
        height=320,
        yaxis_title="items",
        margin={"l": 50, "r": 10, "t": 60, "b": 40},
    )
    return fig


# ---- reports ------------------------------------------------------------------------------------------


def _variants(frame: pd.DataFrame, group_col: str) -> list[str]:
    return [str(v) for v in dict.fromkeys(frame[group_col].dropna())] if group_col in frame.columns else []


def comparison_report(
    frame: pd.DataFrame,
    *,
    title: str = "Comparison report",
    setup: Mapping[str, Any] | None = None,
    a: str | None = None,
    b: str | None = None,
    scorers: Sequence[str] | None = None,
    group_col: str = "group:variant",
    pair_col: str = "group:row_id",
    costs: Mapping[str, float | None] | None = None,
    notes: Sequence[str] = (),
    max_rows: int = 10,
    scorer_options: Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = 0,
    sections: Sequence[tuple[str, str, str]] = (),
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> str:
    """A report comparing variants (or runs) scored in one results frame.

    Args:
        frame: a results frame with the texts (:func:`scorers.runs.export.results_frame` with items),
            with ``group_col`` and ``pair_col``.
        title: the report's title.
        setup: dataset, variants, judge model and parameters (no API key).
        a, b: the two variants the paired statistics and sample rows compare (``a − b``);
            default the first two variants in the frame.
        scorers: the scorers to report on; default every scorer in the frame.
        group_col, pair_col: as for :func:`scorers.analysis.compare.paired`.
        costs: variant → USD cost of generating its responses (:func:`scorers.analysis.generate.generation_costs`),
            shown once per variant in a table after the leaderboard, "generation cost of the variant (USD)" (the
            judging cost is not in it; the leaderboard's rows are per scorer, so it is not there); None: no such table.
        notes: sentences to show first, before the paired summaries (e.g. a warning about the data).
        max_rows: sample rows per scorer (the largest differences).
        scorer_options: scorer id → options, for per-dimension breakdowns that depend on them.
        seed: for the bootstrap intervals.
        sections: extra sections shown first (:func:`build_report`).
        tables: more tables to include (heading → table), e.g. pairwise-judge verdicts.

    Returns:
        The HTML document (:func:`build_report`): the leaderboard, with three or more
        variants a Bradley–Terry ranking and Holm-adjusted pairwise tests per scorer
        (:mod:`scorers.analysis.ranking`), a breakdown by every other group column (e.g.
        category), one plain-English paired summary per scorer, charts (means with
        intervals, distributions, per-question differences, per-dimension means, breakdown
        heat maps) and the rows where a and b differ most.

    Raises:
        ValueError: fewer than two variants, or a missing column.
    """
    variants = _variants(frame, group_col)
    if len(variants) < 2 and (a is None or b is None):
        raise ValueError(f"a comparison needs two variants in {group_col}; found {variants or 'none'}")
    a = a if a is not None else variants[0]
    b = b if b is not None else next(v for v in variants if v != a)
    scorers = list(scorers) if scorers is not None else list(dict.fromkeys(frame["scorer"]))
    frame = frame[frame["scorer"].isin(scorers)]
    board = build_leaderboard(frame, group_col=group_col, costs=costs, seed=seed)
    colors = variant_colors(variants)
    summaries, figures, samples = [], [leaderboard_figure(board, colors=colors)], []
    figures.append(distribution_figure(frame, group_col, colors=colors))
    for scorer in scorers:
        comparison = paired(frame, scorer, a, b, group_col=group_col, pair_col=pair_col, seed=seed)
        summaries.append(f"{scorer}: {comparison.summary()}")
        if any(comparison.differences):  # all zero: the summary says so, a histogram would add nothing
            figures.append(difference_figure(comparison.differences, scorer, a, b))
        means = dimension_means(frame, scorer, group_col, options=(scorer_options or {}).get(scorer))
        if not means.empty:
            figures.append(dimension_figure(means, scorer, colors=colors))
        rows = rows_by_difference(frame, scorer, a, b, group_col=group_col, pair_col=pair_col, limit=max_rows)
        samples.append(rows.assign(scorer=scorer))
    extra = _ranking_tables(frame, scorers, variants, group_col, pair_col, seed) if len(variants) >= 3 else {}
    for by in [
        c for c in frame.columns if str(c).startswith("group:") and c not in _NOT_BREAKDOWNS + (group_col, pair_col)
    ]:
        for scorer in scorers:
            table = group_breakdown(frame, scorer, by, group_col=group_col)
            name = by.removeprefix("group:")
            extra[f"{scorer}: mean by {name}"] = table.rename(columns={"group": name})
            figures.append(breakdown_figure(table, variants, title=f"{scorer}: mean by {name}"))
    extra.update(tables or {})
    if costs:
        generation = pd.DataFrame({"variant": list(costs), GENERATION_COST: list(costs.values())})
        extra = {"Generation cost per variant (judging not included)": generation, **extra}
    failure = not_scored_summary(frame)
    sample = pd.concat(samples, ignore_index=True) if samples else pd.DataFrame()
    if not sample.empty:
        sample = sample[
            [
                "scorer",
                "row_id",
                "input",
                "score_a",
                "score_b",
                "diff",
                "output_a",
                "output_b",
                "reason_a",
                "reason_b",
                "ground_truth",
            ]
        ]
        sample = sample.rename(
            columns={
                "score_a": f"score {a}",
                "score_b": f"score {b}",
                "diff": f"{a} − {b}",
                "output_a": f"response {a}",
                "output_b": f"response {b}",
                "reason_a": f"reason {a}",
                "reason_b": f"reason {b}",
            }
        )
        sample = sample.dropna(axis=1, how="all")
    return build_report(
        title=title,
        setup={**(setup or {}), "Compared": f"{a} against {b} (differences are {a} − {b})"},
        # A variant's generation cost is one figure, not one per scorer: in a table of its own, one row per variant
        # (repeated on each scorer's leaderboard row, the column added up to a multiple of what generating cost).
        leaderboard=board.drop(columns="cost_usd"),
        figures=figures,
        rows=sample,
        notes=[*notes, *summaries, *([failure] if failure else [])],
        sections=sections,
        tables=extra,
    )


_NOT_BREAKDOWNS = ("group:model", "group:row_id", "group:variant")


def _ranking_tables(
    frame: pd.DataFrame, scorers: Sequence[str], variants: Sequence[str], group_col: str, pair_col: str, seed: int
) -> dict[str, pd.DataFrame]:
    """Per scorer: the Bradley–Terry ranking and the Holm-adjusted pairwise tests (skipped when not defined)."""
    out = {}
    for scorer in scorers:
        try:
            ranked = ranking(frame, scorer, group_col=group_col, pair_col=pair_col, seed=seed)
        except ValueError:
            continue
        out[f"{scorer}: ranking (Bradley–Terry strength, 95% bootstrap interval)"] = ranked.table
        tests = pairwise_tests(frame, scorer, list(variants), group_col=group_col, pair_col=pair_col, seed=seed)
        out[f"{scorer}: every pair (Wilcoxon p, Holm-adjusted)"] = tests.drop(columns=["note"])
    return out


def _judge_setup(store: Store, run: Mapping[str, Any]) -> dict[str, Any] | str:
    """The run's judge and its parameters; every judge with its number of outcomes when a resume or retry used others."""
    judge = run.get("judge") or {}
    if not judge:
        return "none (code scorers)"
    setup = {
        "model": judge.get("model"),
        "endpoint": judge.get("baseUrl"),
        "temperature": judge.get("temperature"),
        "seed": judge.get("seed"),
    }
    used = judges_used(store, run["id"])
    if any((model, url) != (judge.get("model"), judge.get("baseUrl")) for model, url, _ in used):
        started = f"{judge.get('model')} at {judge.get('baseUrl')}"
        return {"models": judges_text(used), "started with": started} | {k: setup[k] for k in ("temperature", "seed")}
    return setup | ({"outcomes": used[0][2]} if used else {})


def _cost_text(cost: RunCost | None) -> str | float | None:
    """A leaderboard cost cell: USD when every outcome is priced, else the known part and what is unknown, in words."""
    if cost is None or not cost.unpriced:
        return None if cost is None else cost.usd
    return f"{usd_text(cost.usd)} + {cost.unknown_text()}" if cost.priced else cost.unknown_text()


def _run_setup(store: Store, run: Mapping[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    recorded = recorded_scorer_options(run)
    return {
        "Run": f"{run['name']} ({run['id']})",
        "Dataset": run.get("dataset_name"),
        "Items": run.get("n_items"),
        "Status": run_status_label(run.get("status") or ""),
        "Created (UTC)": str(run.get("created_at", ""))[:16].replace("T", " "),
        "Scorers": {
            sid: "not known (a scorer of the caller's own class)" if options is None else options or "default options"
            for sid, options in recorded.items()
        },
        "Judge": _judge_setup(store, run),
        "Variants": _variants(frame, "group:variant") or None,
        "Judged against": judging_basis_text(run),
    }


def _scorer_options(run: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    stored = (run.get("config") or {}).get("scorerOptions") or {}
    return {s["id"]: s.get("options") or stored.get(s["id"]) or {} for s in run.get("scorers") or []}


def run_report(store: Store, run_id: str, *, max_rows: int = 10, seed: int = 0) -> str:
    """A report of one stored run.

    A run whose items have at least two ``variant`` groups and a ``row_id`` group (as
    :func:`scorers.analysis.generate.comparison_items` makes them) is reported as a comparison of
    its first two variants (:func:`comparison_report`). Otherwise: the mean score per
    scorer with its interval, the score distribution, per-dimension means, outcomes per
    status, and the lowest-scored and failed items.

    Raises:
        KeyError: no such run.
    """
    run, items, result = load_run(store, run_id)
    frame = results_frame(result, items)
    setup = _run_setup(store, run, frame)
    title = f"Run report: {run['name']}"
    options = _scorer_options(run)
    if len(_variants(frame, "group:variant")) >= 2 and "group:row_id" in frame.columns:
        return comparison_report(
            frame,
            title=title,
            setup=setup,
            max_rows=max_rows,
            scorer_options=options,
            seed=seed,
            tables={**pairwise_report_tables(store, run_id), **labels_report_tables(store, run, result, items)},
        )
    label = str(run["name"])
    single = frame.assign(**{"group:run": label})
    board = build_leaderboard(single, group_col="group:run", seed=seed) if not frame.empty else None
    if board is not None:  # each scorer's judge cost, its outcomes at the price of the judge model that made each
        board["cost_usd"] = [_cost_text(stored_run_cost(store, run, sid)) for sid in board["scorer"]]
    figures = []
    if board is not None:
        figures += [
            leaderboard_figure(board, title="Mean score per scorer (95% CI)"),
            distribution_figure(single, None),
        ]
        for scorer in dict.fromkeys(frame["scorer"]):
            means = dimension_means(single, scorer, "group:run", options=options.get(scorer), store=store)
            if not means.empty:
                figures.append(dimension_figure(means, scorer))
        if (frame["status"] != ScoreStatus.SCORED.value).any():
            figures.append(_status_figure(frame))
    sample = _lowest_rows(frame, max_rows)
    failure = not_scored_summary(frame) if not frame.empty else "Nothing has been scored in this run yet."
    return build_report(
        title=title,
        setup=setup,
        leaderboard=board.rename(columns={"cost_usd": JUDGE_COST}) if board is not None else None,
        figures=figures,
        rows=sample,
        notes=[failure] if failure else [],
        tables=labels_report_tables(store, run, result, items),
    )


def _lowest_rows(frame: pd.DataFrame, max_rows: int) -> pd.DataFrame:
    """Per scorer: the items that were not scored, then the lowest scores, ``max_rows`` at most."""
    columns = ["scorer", "item_id", "status", "score", "input", "output", "ground_truth", "reason", "error"]
    picked = []
    for _, part in frame.groupby("scorer", sort=False):
        ordered = part.assign(_failed=part["status"] != ScoreStatus.SCORED.value)
        ordered = ordered.sort_values(["_failed", "score", "item_index"], ascending=[False, True, True])
        picked.append(ordered.head(max_rows))
    if not picked:
        return pd.DataFrame(columns=columns)
    out = pd.concat(picked, ignore_index=True)
    return out[[c for c in columns if c in out.columns]].dropna(axis=1, how="all")


def run_comparison_report(store: Store, run_id: str, baseline_id: str, *, max_rows: int = 10, seed: int = 0) -> str:
    """A report of a stored run against a baseline run (matched item by item; see :func:`scorers.analysis.compare.run_diff`).

    Differences are ``run − baseline``: a positive difference is an improvement for a
    higher-is-better scorer and a regression for a lower-is-better one. When the
    runs are not over the same dataset, the report says what differs first.

    Raises:
        KeyError: a run is not in the store.
    """
    diff = run_diff(store, baseline_id, run_id, seed=seed)
    rec_baseline, rec_run, combined = run_frames(store, baseline_id, run_id)
    notes = [diff.dataset_note] if diff.dataset_note else []
    notes.append(
        f"{len(diff.regressions)} item × scorer results got worse and {len(diff.improvements)} got better "
        f"from {diff.name_a} to {diff.name_b} (in each scorer's direction: lower is better for toxicity, "
        "bias and hallucination)."
    )
    if diff.scorers_only_in_a or diff.scorers_only_in_b:
        notes.append(
            "Scorers not in both runs are left out: "
            + "; ".join(
                f"{', '.join(ids)} only in {name}"
                for ids, name in ((diff.scorers_only_in_a, diff.name_a), (diff.scorers_only_in_b, diff.name_b))
                if ids
            )
            + "."
        )
    setup = {
        "Run": _run_setup(store, rec_run, combined[combined["group:run"] == rec_run["label"]]),
        "Baseline": _run_setup(store, rec_baseline, combined[combined["group:run"] == rec_baseline["label"]]),
    }
    for part in setup.values():
        part.pop("Variants", None)
    return comparison_report(
        combined,
        title=f"Run comparison: {rec_run['name']} against {rec_baseline['name']}",
        setup=setup,
        a=diff.name_b,
        b=diff.name_a,
        scorers=diff.scorers,
        group_col="group:run",
        pair_col="item_id",
        notes=notes,
        max_rows=max_rows,
        scorer_options=_scorer_options(rec_run),
        seed=seed,
    )


__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MAX_CELL_CHARS",
    "build_report",
    "comparison_report",
    "difference_figure",
    "dimension_figure",
    "distribution_figure",
    "leaderboard_figure",
    "redact_setup",
    "run_comparison_report",
    "run_report",
]
