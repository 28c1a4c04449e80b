"""Plotly chart builders for a batch run's scores: pure functions returning ``go.Figure`` (no Streamlit).

Every builder accepts the edge cases a run produces (nothing scored yet, a single
scored item, every score equal) and answers them with a figure that carries a
message annotation instead of raising, so a page can always draw what it gets.
The message annotations have ``name="message"`` (see :func:`figure_messages`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

SCORE_COLOR = "#4C78A8"
FAILED_COLOR = "#E45756"
# Diverging red → yellow → green for 0..1 dimension scores (the bands' colours of charts.BAND_COLORS).
HEATMAP_SCALE = [[0.0, "#d73027"], [0.5, "#fee08b"], [1.0, "#1a9850"]]
_MESSAGE = "message"


def add_message(fig: go.Figure, text: str, *, y: float = 0.5) -> go.Figure:
    """``fig`` with ``text`` as a message annotation (centred, at height ``y`` of the plot), as
    :func:`figure_messages` reads them."""
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
    return add_message(fig, message)


def figure_messages(fig: go.Figure) -> list[str]:
    """The texts of the message annotations of a figure made here (``[]`` when it shows data only)."""
    return [a.text for a in fig.layout.annotations if a.name == _MESSAGE]


def _single_value_note(values: Sequence[float], what: str) -> str | None:
    if len(values) == 1:
        return f"Only one {what} ({values[0]:.3g}): a distribution needs at least two."
    if len(set(values)) == 1:
        return f"All {len(values)} {what}s are {values[0]:.3g}: there is no spread to show."
    return None


def _finite_array(values: Iterable[object]) -> np.ndarray:
    """The finite numbers among ``values`` as floats (None, NaN, infinities, booleans and text left out)."""
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    if series.dtype == object:
        series = series[~series.map(lambda v: isinstance(v, bool))]
    numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return numbers[np.isfinite(numbers)]


def histogram_bins(values: np.ndarray, x_range: tuple[float, float] | None, bins: int) -> np.ndarray:
    """The bin edges :func:`score_histogram` counts in: ``bins`` equal widths over ``x_range``
    (or over the data's range when it is None or does not hold every value)."""
    if x_range is not None and len(values) and x_range[0] <= values.min() and values.max() <= x_range[1]:
        edges = np.linspace(x_range[0], x_range[1], max(1, bins) + 1)
    else:
        edges = np.histogram_bin_edges(values, bins=max(1, bins))
    # Rounded so that a score on an edge such as 0.85 falls in the bin that starts there
    # (linspace gives 0.8500000000000001).
    return np.round(edges, 12)


def score_histogram(
    scores: Iterable[float | None],
    *,
    title: str = "Score distribution",
    x_range: tuple[float, float] | None = None,
    bins: int = 20,
) -> go.Figure:
    """A histogram of one scorer's scores, counted here: one bar per bin, whatever the number of items.

    Args:
        scores: the scores of the scored items; None, NaN and infinities (items that
            were not scored) are left out, never counted as 0.
        title: the chart title; ``(n = …)`` is appended.
        x_range: the score range, e.g. ``(0, scale)``; the bins then split it into
            ``bins`` equal widths and the axis shows all of it. None: fitted to the data.
        bins: the number of bins, >= 1. Each bin holds ``lo <= score < hi``, the last
            one also ``score == hi`` (numpy's ``histogram``).

    Returns:
        A figure with one ``go.Bar`` trace named ``"scores"``: ``x`` the bin centres,
        ``y`` the counts, ``customdata`` each bin's ``[lo, hi]`` (a click on a bar
        selects that range). No score: a :func:`message_figure`. One score, or all
        equal: the histogram plus a message annotation saying there is no spread.
    """
    values = _finite_array(scores)
    if not len(values):
        return message_figure("No scored items: nothing to plot.", title=title)
    counts, edges = np.histogram(values, bins=histogram_bins(values, x_range, bins))
    fig = go.Figure(
        go.Bar(
            x=((edges[:-1] + edges[1:]) / 2).tolist(),
            y=counts.tolist(),
            width=np.diff(edges).tolist(),
            customdata=np.column_stack([edges[:-1], edges[1:]]).tolist(),
            name="scores",
            marker_color=SCORE_COLOR,
            hovertemplate="score %{customdata[0]:.3g} to %{customdata[1]:.3g}<br>%{y} items<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{title} (n = {len(values)})",
        height=280,
        bargap=0.05,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        showlegend=False,
        clickmode="event+select",
    )
    fig.update_xaxes(title="score", range=list(x_range) if x_range is not None else None)
    fig.update_yaxes(title="items")
    note = _single_value_note(values.tolist(), "scored item")
    return add_message(fig, note, y=0.9) if note else fig


POINTS_LIMIT = 300
"""Up to this many values a box plot draws every point over the box; beyond, the box alone (from its statistics)."""


def box_statistics(values: np.ndarray) -> dict[str, float]:
    """The statistics a box is drawn from: quartiles by linear interpolation (Plotly's default
    ``quartilemethod``), Tukey whiskers (the most extreme values within 1.5 × IQR of the box) and the mean."""
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    iqr = q3 - q1
    inside = values[(values >= q1 - 1.5 * iqr) & (values <= q3 + 1.5 * iqr)]
    return {
        "q1": float(q1),
        "median": float(median),
        "q3": float(q3),
        "lowerfence": float(inside.min()),
        "upperfence": float(inside.max()),
        "mean": float(values.mean()),
    }


def _box_traces(
    values: np.ndarray, name: str, text: Sequence[str] | None, *, horizontal: bool
) -> list[go.BaseTraceType]:
    """All points over the box up to :data:`POINTS_LIMIT` values; beyond, a box from its statistics and
    :func:`_extreme_marks` (the min and max, where the whiskers do not reach them)."""
    axis = "x" if horizontal else "y"
    if len(values) <= POINTS_LIMIT:
        return [
            go.Box(
                **{axis: values.tolist()},
                name=name,
                text=list(text) if text is not None else None,
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                boxmean=True,
                marker={"color": SCORE_COLOR, "size": 5, "opacity": 0.6} if horizontal else {"size": 4},
                hovertemplate=("%{text}<br>" if text is not None else "")
                + name
                + " %{"
                + axis
                + ":.3g}<extra></extra>",
            )
        ]
    stats = box_statistics(values)
    box = go.Box(
        **{"y" if horizontal else "x": [name]},
        **{k: [v] for k, v in stats.items()},
        name=name,
        legendgroup=name,
        orientation="h" if horizontal else "v",
        boxmean=True,
        marker={"color": SCORE_COLOR} if horizontal else None,
    )
    marks = _extreme_marks(values, stats, name, horizontal=horizontal)
    return [box] if marks is None else [box, marks]


EXTREMES_NOTE = "◇ min and max beyond the whiskers"
"""What the title of a box plot of more than :data:`POINTS_LIMIT` values says of its :func:`_extreme_marks`."""


def _extreme_marks(values: np.ndarray, stats: dict[str, float], name: str, *, horizontal: bool) -> go.Scatter | None:
    """The lowest and highest of ``values`` as marks on the box ``name``, those beyond its whiskers (None: both
    within), each hover saying which it is and how many values lie beyond that whisker."""
    marks = []
    below = int((values < stats["lowerfence"]).sum())
    above = int((values > stats["upperfence"]).sum())
    if below:
        marks.append((float(values.min()), f"lowest of {len(values)}", below, "below"))
    if above:
        marks.append((float(values.max()), f"highest of {len(values)}", above, "above"))
    if not marks:
        return None
    scores = [m[0] for m in marks]
    where = [[name] * len(marks), scores] if not horizontal else [scores, [name] * len(marks)]
    return go.Scatter(
        x=where[0],
        y=where[1],
        mode="markers",
        name=f"{name}: min and max",
        legendgroup=name,
        showlegend=False,
        marker={"color": SCORE_COLOR if horizontal else "#444444", "size": 7, "symbol": "diamond-open"},
        customdata=[[m[1], m[2], m[3]] for m in marks],
        hovertemplate="%{customdata[0]}: %{"
        + ("x" if horizontal else "y")
        + ":.3g}<br>%{customdata[1]} value(s) %{customdata[2]} the whisker (1.5 × IQR)<extra>"
        + name
        + "</extra>",
    )


def score_box(
    scores: Iterable[float | None],
    *,
    labels: Sequence[str] | None = None,
    title: str = "Score spread",
    x_range: tuple[float, float] | None = None,
) -> go.Figure:
    """A horizontal box plot of one scorer's scores; every item is drawn as a point up to :data:`POINTS_LIMIT`.

    Args:
        scores: the scores; None, NaN and infinities are left out.
        labels: one label per entry of ``scores`` (e.g. the item ids), shown on hover;
            the labels of left-out scores are dropped with them.
        title: the chart title.
        x_range: the axis range, e.g. ``(0, scale)``, or None.

    Returns:
        A figure with one ``go.Box`` trace named ``"scores"``: up to :data:`POINTS_LIMIT`
        scores its ``x`` are the scores (quartiles computed by Plotly) with every point
        drawn; beyond, the box is drawn from :func:`box_statistics` and only the lowest
        and highest scores beyond the whiskers are marked (a second trace, a ``go.Scatter``
        named ``"scores: min and max"``), so the chart still shows the data's range.
        No score: a :func:`message_figure`. One score, or all equal: the box plus a
        message annotation.

    Raises:
        ValueError: ``labels`` and ``scores`` differ in length.
    """
    if isinstance(scores, pd.Series) and pd.api.types.is_float_dtype(scores.dtype):  # a score column: no bool, no text
        numbers = scores.reset_index(drop=True)
        given = len(numbers)
    else:
        raw = pd.Series(list(scores) if not isinstance(scores, pd.Series) else scores.to_list(), dtype=object)
        numbers = pd.to_numeric(raw[~raw.map(lambda v: isinstance(v, bool))], errors="coerce")
        given = len(raw)
    names = list(labels) if labels is not None else None
    if names is not None and len(names) != given:
        raise ValueError(f"labels has {len(names)} entries but scores has {given}; give one label per score")
    numbers = numbers[np.isfinite(numbers.to_numpy(dtype=float, na_value=np.nan))]
    if numbers.empty:
        return message_figure("No scored items: nothing to plot.", title=title)
    values = numbers.to_numpy(dtype=float)
    # The labels are shown on the points, drawn up to POINTS_LIMIT scores only.
    text = [str(names[i]) for i in numbers.index] if names is not None and len(values) <= POINTS_LIMIT else None
    fig = go.Figure(_box_traces(values, "scores", text, horizontal=True))
    shown = ""
    if len(values) > POINTS_LIMIT:  # on a second line: the half-width chart cuts a long title
        marked = f"; {EXTREMES_NOTE}" if len(fig.data) > 1 else ""
        shown = f" (box of {len(values)} scores)<br><sup>points drawn up to {POINTS_LIMIT}{marked}</sup>"
    fig.update_layout(
        title=title + shown,
        height=280,
        margin={"l": 10, "r": 10, "t": 70 if shown else 50, "b": 10},
        showlegend=False,
    )
    fig.update_xaxes(title="score", range=list(x_range) if x_range is not None else None)
    fig.update_yaxes(visible=False)
    note = _single_value_note(values.tolist(), "scored item")
    return add_message(fig, note, y=0.9) if note else fig


def dimension_distribution(
    dimensions: pd.DataFrame,
    *,
    kind: str = "box",
    title: str = "Dimension scores",
    order: Sequence[str] | None = None,
) -> go.Figure:
    """The distribution of each dimension's 0..1 scores, one box or violin per dimension.

    Every point is drawn up to :data:`POINTS_LIMIT` items; beyond, boxes are drawn from
    their statistics (:func:`box_statistics`) with their min and max marked where the whiskers
    do not reach them (``go.Scatter`` traces after the boxes), and violins without points
    (their outline spans the min to the max).

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
    names = list(order) if order is not None else list(pd.unique(data["dimension"]))
    fig = go.Figure()
    marks: list[go.Scatter] = []  # added after every box, which keep their default colours
    for name in names:
        part = data[data["dimension"] == name]
        if part.empty:
            continue
        values = part["value"].to_numpy(dtype=float)
        if kind == "box":
            text = part["item_id"].astype(str).tolist() if len(values) <= POINTS_LIMIT else None  # on the points only
            box, *extremes = _box_traces(values, name, text, horizontal=False)
            fig.add_trace(box)
            marks += extremes
        else:
            many = len(values) > POINTS_LIMIT
            fig.add_trace(
                go.Violin(
                    y=values.tolist(),
                    name=name,
                    text=None if many else part["item_id"].astype(str).tolist(),
                    points=False if many else "all",
                    box_visible=True,
                    meanline_visible=True,
                    spanmode="hard",
                    hovertemplate=("" if many else "%{text}<br>") + name + ": %{y:.2f}<extra></extra>",
                )
            )
    fig.add_traces(marks)
    if marks:
        title += f" (boxes of more than {POINTS_LIMIT} items: {EXTREMES_NOTE})"
    fig.update_layout(title=title, height=360, margin={"l": 10, "r": 10, "t": 50, "b": 10}, showlegend=False)
    fig.update_yaxes(title="dimension score (0–1)", range=[-0.05, 1.05])
    if data["item_id"].nunique() == 1:
        add_message(fig, "Only one scored item: a distribution needs at least two.", y=0.95)
    return fig


PENDING_COLOR = "#BAB0AC"
NOT_SCORED_COLORS = ("#E45756", "#F58518", "#B279A2", "#9D755D", "#FF9DA6", "#EECA3B")
"""Colours of the statuses of outcomes that were not scored, in order of appearance."""


def status_chart(counts: pd.DataFrame, *, title: str = "Outcomes by status") -> go.Figure:
    """One horizontal stacked bar per scorer: its outcomes by status, the items not scored yet last.

    Args:
        counts: columns ``scorer``, ``status`` (``"scored"``, a reason an item was not
            scored, or ``"pending"``) and ``n`` (see :func:`dashboard.run_frames.status_counts`).
        title: the chart title.

    Returns:
        A figure with one ``go.Bar`` per status (``name`` = the status, ``x`` = counts,
        ``y`` = scorers, in the order of ``counts``): scored in blue, each other status
        in its own warm colour, pending in grey. No row: a :func:`message_figure`.
    """
    _require(counts, ("scorer", "status", "n"), "status_chart")
    if counts.empty:
        return message_figure("No outcome stored yet.", title=title)
    scorers = list(dict.fromkeys(counts["scorer"]))
    others = iter(NOT_SCORED_COLORS * len(counts))
    fig = go.Figure()
    for status, part in counts.groupby("status", sort=False):
        by_scorer = dict(zip(part["scorer"], part["n"], strict=True))
        color = SCORE_COLOR if status == "scored" else PENDING_COLOR if status == "pending" else next(others)
        fig.add_trace(
            go.Bar(
                x=[int(by_scorer.get(s, 0)) for s in scorers],
                y=scorers,
                name=str(status),
                orientation="h",
                marker_color=color,
                hovertemplate="%{y}<br>" + str(status) + ": %{x}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        barmode="stack",
        height=110 + 40 * len(scorers),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.3},
    )
    fig.update_xaxes(title="outcomes")
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


HEATMAP_ROWS = 60
"""At most this many heatmap rows: beyond, items are ranked and binned (each row the mean of a bin)."""


HEATMAP_ROW_PX = 15
"""The height of a heatmap row in pixels: room for its label (:data:`HEATMAP_TICK_PX`) and a gap."""
HEATMAP_TICK_PX = 11
"""The font size of the heatmap's row labels."""


def heatmap_rows(dimensions: pd.DataFrame, order: Sequence[str] | None = None) -> tuple[pd.DataFrame, list[list[int]]]:
    """The rows of :func:`dimension_heatmap`: items ranked by their mean dimension score (lowest first).

    Up to :data:`HEATMAP_ROWS` items, one row per item labelled with its id; beyond, the
    ranked items are cut into :data:`HEATMAP_ROWS` bins of consecutive ranks, each row the
    mean of its bin, labelled ``"#1–#167 (167 items)"``.

    Args:
        dimensions: long frame with ``item_index``, ``item_id``, ``dimension``, ``value``.
        order: the dimension columns in order (default: first appearance).

    Returns:
        The table (index: row labels; columns: dimension labels; values: scores, NaN
        where none) and, per row, the item indexes it stands for.
    """
    data = dimensions[pd.to_numeric(dimensions["value"], errors="coerce").notna()]
    present = list(pd.unique(data["dimension"]))
    columns = [c for c in (list(order) if order is not None else present) if c in set(present)]
    # Pivoted on the item index alone (grouping by the id text too took most of the time), ids looked up after.
    table = data.pivot_table(index="item_index", columns="dimension", values="value", aggfunc="first")
    table = table.reindex(columns=columns)
    ranked = table.assign(_mean=table.mean(axis=1)).sort_values(["_mean"], kind="stable").drop(columns="_mean")
    indexes = [int(i) for i in ranked.index]
    if len(ranked) <= HEATMAP_ROWS:
        ids = data.drop_duplicates("item_index").set_index("item_index")["item_id"]
        ranked.index = [str(item_id) for item_id in ids.reindex(ranked.index)]
        return ranked, [[i] for i in indexes]
    bins = np.array_split(np.arange(len(ranked)), HEATMAP_ROWS)
    bin_of = np.repeat(np.arange(len(bins)), [len(positions) for positions in bins])
    means = ranked.groupby(bin_of).mean()  # per bin and dimension, NaN skipped (NaN when the bin has none)
    labels = [f"#{positions[0] + 1}–#{positions[-1] + 1} ({len(positions)} items)" for positions in bins]
    grouped = [indexes[positions[0] : positions[-1] + 1] for positions in bins]
    return pd.DataFrame(means.to_numpy(), index=labels, columns=columns), grouped


def dimension_heatmap(
    dimensions: pd.DataFrame,
    *,
    title: str = "Dimension scores by item",
    order: Sequence[str] | None = None,
    rows: tuple[pd.DataFrame, list[list[int]]] | None = None,
) -> go.Figure:
    """A heatmap of items (rows) by dimensions (columns), coloured by the 0..1 score, lowest items first.

    Args:
        dimensions: long frame with columns ``item_index``, ``item_id``, ``dimension``
            and ``value`` (one row per scored item × dimension).
        title: the chart title.
        order: the dimension columns in order (default: first appearance).
        rows: :func:`heatmap_rows` of ``dimensions`` and ``order`` when the caller has
            them already (None: computed here).

    Returns:
        A figure with one ``go.Heatmap`` (``x`` = dimension labels, ``y`` = the rows of
        :func:`heatmap_rows`: item ids ranked by their mean dimension score, or bins of
        ranked items when there are many, ``z`` = scores, None where an item has no
        score for a dimension, colour scale fixed to 0..1), every row labelled (one tick per row,
        :data:`HEATMAP_ROW_PX` high). No rows: a :func:`message_figure`.
    """
    _require(dimensions, ("item_index", "item_id", "dimension", "value"), "dimension_heatmap")
    if pd.to_numeric(dimensions["value"], errors="coerce").notna().sum() == 0:
        return message_figure("No dimension scores: no item has been scored with a dimension breakdown.", title=title)
    table, members = rows if rows is not None else heatmap_rows(dimensions, order)
    binned = any(len(m) > 1 for m in members)
    z = [[None if pd.isna(v) else float(v) for v in row] for row in table.to_numpy()]
    labels = [str(label) for label in table.index]
    what = "bins of items ranked by mean dimension score (mean of each bin)" if binned else "items ranked by mean score"
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(table.columns),
            y=labels,
            zmin=0,
            zmax=1,
            colorscale=HEATMAP_SCALE,
            colorbar={"title": "score"},
            hovertemplate="%{y}<br>%{x}: %{z:.2f}<extra></extra>",
            xgap=1,
            ygap=1 if len(labels) <= HEATMAP_ROWS else 0,
        )
    )
    fig.update_layout(
        title=f"{title}: {what}, lowest first",
        height=150 + HEATMAP_ROW_PX * len(labels),
        margin={"l": 10, "r": 10, "t": 80, "b": 10},  # room for the title above the dimension labels on top
        clickmode="event+select",
    )
    # Every row labelled: left to itself Plotly labels every other row once they are closer than its font.
    fig.update_yaxes(
        autorange="reversed",
        type="category",
        tickmode="array",
        tickvals=labels,
        ticktext=labels,
        tickfont={"size": HEATMAP_TICK_PX},
        title=None,
    )
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
                    f"n={s}" + (f", {f} not scored" if f else "")
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
        add_message(fig, f"Only one {group} group has scored items: nothing to compare it with.", y=0.95)
    return fig


def _require(frame: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: the frame has no column(s) {', '.join(missing)}; it needs {', '.join(columns)}")
