"""The Compare page's run-vs-run tab: two stored runs matched row by row, and the CI gate's verdict on them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    Store,
)
from scorers.analysis.compare import RunDiff, run_diff
from scorers.catalogue.registry import unlike_scorers
from scorers.core.errors import run_status_short_label
from scorers.runs.runner import stored_scorer_options

from ..batch import runs_table, truncate
from ..layout import follow_run_link
from ..results import md_escape, on_request
from ..run_explorer import NO_VALUE, page_of, per_version, run_table, show_runs_table
from ..run_frames import PAGE_SIZE
from .common import NUMBER_COLUMN, pick_run, render_report_builder, scorer_names, variant_runs

_SHOWN = ["item_id", "scorer", "input", "output_a", "output_b", "status_a", "status_b", "score_a", "score_b", "delta"]


def _diff_table(rows: pd.DataFrame, names: Mapping[str, str], label_a: str, label_b: str) -> pd.DataFrame:
    table = rows[[c for c in _SHOWN if c in rows.columns] + ["improvement"]]
    table = table.assign(scorer=table["scorer"].map(lambda s: names.get(s, s)))
    for column in ("input", "output_a", "output_b"):
        if column in table.columns:
            table[column] = table[column].map(lambda v: truncate(v, 80))
    return table.rename(
        columns={
            "score_a": f"score in {label_a}",
            "score_b": f"score in {label_b}",
            "output_a": f"response in {label_a}",
            "output_b": f"response in {label_b}",
            "status_a": f"status in {label_a}",
            "status_b": f"status in {label_b}",
            "delta": "Δ (B − A)",
        }
    )


def _page(rows: pd.DataFrame, key: str) -> pd.DataFrame:
    """The rows of the page chosen in a page box keyed ``key`` (no box when they fit on one page)."""
    if len(rows) <= PAGE_SIZE:
        return rows
    page, start = page_of(rows, key)
    st.caption(f"Rows {start + 1}–{start + len(page)} of {len(rows)}.")
    return page


CHANGE_COLUMN = st.column_config.NumberColumn(format="%+.3f")
"""A table column of changes (B − A), signed, to 3 decimals."""

_DIMENSION_COLUMNS = {"name": "scorer · dimension", "mean_a": "mean in A", "mean_b": "mean in B", "delta": "Δ (B − A)"}


def _render_delta_charts(diff: RunDiff, names: Mapping[str, str], dims: pd.DataFrame, key: str) -> None:
    """The mean change per scorer and per dimension (``dims``: :attr:`RunDiff.dimensions` with a ``name``) as bars."""
    # The charts' module (with the report's colours) loads when the charts are asked for, not with the tab.
    from ..compare_charts import delta_bars

    overall = pd.DataFrame(
        {
            "name": [names[s] for s in diff.scorers],
            "delta": [diff.comparisons[s].mean_diff for s in diff.scorers],
            "higher_is_better": [diff.comparisons[s].higher_is_better for s in diff.scorers],
        }
    )
    left, right = st.columns(2)
    left.plotly_chart(delta_bars(overall, title="Mean change per scorer (B − A, paired rows)"), key=f"{key}_scorers")
    dims = dims.assign(higher_is_better=[diff.comparisons[s].higher_is_better for s in dims["scorer"]])
    right.plotly_chart(delta_bars(dims, title="Mean change per dimension (B − A)"), key=f"{key}_dims")


def render_run_diff(diff: RunDiff, *, key: str) -> None:
    """Two stored runs compared row by row (:func:`scorers.analysis.compare.run_diff`): what regressed and what improved.

    Args:
        diff: the comparison (deltas are run B − run A).
        key: prefix of every widget and chart key.
    """
    key = f"{key}_{diff.run_a}_{diff.run_b}"
    names = scorer_names([*diff.scorers, *diff.scorers_only_in_a, *diff.scorers_only_in_b, *diff.scorers_unlike])
    if not diff.same_dataset:
        st.warning(
            md_escape(diff.dataset_note)
            + " Only the rows with the same id in both runs are compared below; read the deltas with care."
        )
    elif diff.dataset_note:
        st.info(md_escape(diff.dataset_note))
    elif not diff.scorers:  # no row is matched: the warning below says why
        st.info("Both runs score the same dataset.")
    else:
        st.success(f"Both runs score the same dataset ({diff.rows['item_id'].nunique()} rows matched by id).")
    for label, only in ((diff.name_a, diff.scorers_only_in_a), (diff.name_b, diff.scorers_only_in_b)):
        if only:
            st.caption(md_escape(f"Only in {label}: {', '.join(names[s] for s in only)} (not compared)."))
    for sid, differ in diff.scorers_unlike.items():
        st.warning(
            md_escape(
                f"{names[sid]} was scored with other options in the two runs ({'; '.join(differ)}, run A against "
                "run B): its scores do not measure the same thing, so they are not compared."
            )
        )
    if not diff.scorers:
        if not diff.scorers_unlike:
            st.warning("The two runs have no scorer in common: there is nothing to compare.")
        return
    columns = st.columns(4)
    compared = int(diff.rows["delta"].notna().sum())
    columns[0].metric("Outcomes compared", compared, help="Scored in both runs.")
    columns[1].metric(
        "Regressions", len(diff.regressions), help="Worse in run B in the scorer's direction (higher toxicity ...)."
    )
    columns[2].metric("Improvements", len(diff.improvements), help="Better in run B in the scorer's direction.")
    columns[3].metric("Unchanged", int((diff.rows["delta"] == 0).sum()))
    if compared == 0:
        st.info(
            "No outcome was scored in both runs, so there is no change to show: the rows share no id, or every "
            "outcome of one run was not scored (see History)."
        )
        return
    for sid in diff.scorers:
        summary = diff.comparisons[sid].summary()
        st.markdown(f"**{md_escape(names[sid])}** — {md_escape(summary)}")
    dims = diff.dimensions
    dims = dims.assign(
        name=[f"{names.get(s, s)} · {lab}" for s, lab in zip(dims["scorer"], dims["label"], strict=True)]
    )
    if not dims.empty:
        st.markdown("**Mean per dimension** (the scored outcomes of each run)")
        st.dataframe(
            dims[["name", "mean_a", "mean_b", "delta"]].rename(columns=_DIMENSION_COLUMNS),
            hide_index=True,
            key=f"{key}_dims_table",
            placeholder=NO_VALUE,
            column_config={"mean in A": NUMBER_COLUMN, "mean in B": NUMBER_COLUMN, "Δ (B − A)": CHANGE_COLUMN},
        )
        st.caption(f'"{NO_VALUE}": no value (a dimension no scored outcome of that run has, so no mean nor change).')
    # The charts' module is 4.7 MB of script for the browser to evaluate: built when asked for, not on the open.
    if (charts := on_request("Charts: mean change per scorer and per dimension", f"{key}_charts")) is not None:
        with charts:
            _render_delta_charts(diff, names, dims, key)
    config = {"Δ (B − A)": CHANGE_COLUMN}
    for title, rows, change in (
        ("Regressions", diff.regressions, "worse"),
        ("Improvements", diff.improvements, "better"),
    ):
        st.markdown(f"#### {title} ({len(rows)})")
        if rows.empty:
            st.caption(f"No row got {change} in run B.")
        else:
            page = diff.with_texts(_page(rows, f"{key}_{title.lower()}_page"))  # the texts of one page only
            table = _diff_table(page, names, "A", "B")
            st.dataframe(table, hide_index=True, key=f"{key}_{title.lower()}", column_config=config)


BASELINE_WHY = "compare_diff_a_why"
"""Session key: (run A's id, run B's id, why A was picked) after a ``?run=`` link chose run A."""


def default_baseline(runs: list[dict[str, Any]], run_b: str) -> tuple[str, str] | None:
    """Run A for a linked run B: the next older run on the same dataset when there is one, and why.

    The same dataset is the same ``dataset_name`` and number of items (the runs' metadata; the items
    themselves are not read); failing that the same ``dataset_name``; failing that the next older run, one
    with as many items as B first. Under each rule a run that shares a comparable scorer with B (the same scale
    and target) comes first, then a completed run: a run stopped part way (paused at the budget cap,
    interrupted) has items never scored, which would only be counted as not scored in A.
    With no older run, the newer runs are searched the same way (nearest first).

    Args:
        runs: the stored runs, newest first (:meth:`scorers.runs.store.Store.list_runs`).
        run_b: the id of run B, one of ``runs``.

    Returns:
        ``(run A's id, a sentence saying which run and why)``, or None when ``runs`` holds no other run.
    """
    ids = [r["id"] for r in runs]
    at = ids.index(run_b)
    b = runs[at]
    older = runs[at + 1 :]
    candidates, where = (older, "older") if older else (runs[:at][::-1], "newer")
    if not candidates:
        return None
    dataset = f"{b.get('dataset_name')} ({b.get('n_items')} items)"

    # A run whose shared scorers all measure something else (another scale or target) compares nothing, and a
    # run stopped part way compares only what it scored: each rule takes its nearest run that is neither first.
    def comparable(r: Mapping[str, Any]) -> bool:
        return _comparable(r, b)

    def completed(r: Mapping[str, Any]) -> bool:
        return r.get("status") == "completed"

    def as_many(r: Mapping[str, Any]) -> bool:
        return r.get("n_items") == b.get("n_items")

    rules = (
        (
            lambda r: (r.get("dataset_name"), r.get("n_items")) == (b.get("dataset_name"), b.get("n_items")),
            f"on the same dataset, {dataset}",
        ),
        (
            lambda r: r.get("dataset_name") == b.get("dataset_name"),
            f"on {b.get('dataset_name')}, though with another number of items than run B's {b.get('n_items')}",
        ),
    )
    for same, how in rules:
        pool = [r for r in candidates if same(r)]
        if pool:
            match = min(pool, key=lambda r: (not comparable(r), not completed(r)))
            why = f"Run A is {match['name']} ({match['id']}), the next {where} run {how}"
            if not comparable(pool[0]) and comparable(match):
                why += (
                    f" scored as run B is (the nearer {pool[0]['name']} ({pool[0]['id']}) has another scale or target)"
                )
            elif match is not pool[0]:
                why += f" that was completed (the nearer {_stopped(pool[0])})"
            return match["id"], why + "."
    a = min(candidates, key=lambda r: (not comparable(r), not as_many(r), not completed(r)))
    nearest = candidates[0]
    better = [
        (comparable, "scored as run B is"),
        (as_many, f"with run B's number of items ({b.get('n_items')})"),
        (completed, "that was completed"),
    ]
    qualities = "".join(f" {text}" for good, text in better if good(a) and not good(nearest))
    stopped = f" (the nearer {_stopped(nearest)})" if completed(a) and not completed(nearest) else ""
    return a["id"], (
        f"Run A is {a['name']} ({a['id']}), the next {where} run{qualities}{stopped}: no other run is on run B's "
        f"dataset, {dataset}; A is on {a.get('dataset_name')} ({a.get('n_items')} items): only the items whose ids "
        "are in both runs are compared (counted below)."
    )


def _stopped(run: Mapping[str, Any]) -> str:
    """A run not completed, named with its status: "RUN (id) is paused at the budget cap"."""
    label = run_status_short_label(str(run.get("status")))
    return f"{run['name']} ({run['id']}) is {label[:1].lower()}{label[1:]}"


def _comparable(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two runs share a scorer whose scores measure the same thing in both (the same scale and target)."""
    shared = [s["id"] for s in a.get("scorers") or [] if s["id"] in {t["id"] for t in b.get("scorers") or []}]
    return len(unlike_scorers(shared, stored_scorer_options(a), stored_scorer_options(b))) < len(shared)


def follow_run_b(runs: list[dict[str, Any]], *, also: Callable[[str], None] | None = None) -> bool:
    """Put the run named by ``?run=ID`` into run B (once per link), with run A from :func:`default_baseline`;
    True when applied. Why run A was picked is kept under :data:`BASELINE_WHY` for the tab to say.

    ``also`` (given the run id) makes the link's other writes (the page's tab). All are done before the link
    counts as followed (:func:`~dashboard.layout.follow_run_link`): a run stopped between them by a rerun
    request follows it again. A run of variants is not linked here: its link opens the Comparison tab.
    """

    def with_baseline(linked: str) -> None:
        baseline = default_baseline(runs, linked)
        if baseline is not None and st.session_state.get("compare_diff_a") in (None, linked):
            st.session_state[BASELINE_WHY] = (baseline[0], linked, baseline[1])
            st.session_state["compare_diff_a"] = baseline[0]
        if also is not None:
            also(linked)

    variants = {r["id"] for r in variant_runs(runs)}
    plain = [r["id"] for r in runs if r["id"] not in variants]
    return follow_run_link("compare_diff_b", plain, also=with_baseline) is not None


def render_run_vs_run(store: Store, runs: list[dict[str, Any]]) -> None:
    """Tab 3: two stored runs picked from ``runs`` and compared row by row, with the report's Build button."""
    st.caption(
        "Two stored runs over the same dataset, matched row by row: what got worse and what got better from A to B."
    )
    if len(runs) < 2:
        st.info("Run vs run needs two stored runs; there " + ("is one." if runs else "are none."))
    else:
        # Built when opened: a hidden table is still a data grid for the browser to set up.
        if (stored := on_request("Stored runs", "compare_diff_runs")) is not None:
            with stored:
                show_runs_table(runs_table(runs).drop(columns=["id"]))
        left, right = st.columns(2)
        with left:
            run_a = pick_run(runs, "Run A (baseline)", "compare_diff_a", default=1)
        with right:
            run_b = pick_run(runs, "Run B", "compare_diff_b", default=0)
        picked = st.session_state.get(BASELINE_WHY)
        if picked and tuple(picked[:2]) == (run_a, run_b):  # the pair a link picked (another pick drops the note)
            st.caption(md_escape(picked[2]))
        if run_a == run_b:
            st.info("Choose two different runs.")
        else:
            _render_pair(store, run_a, run_b)


VIEWS = ("Row by row", "CI gate")
"""Run vs run's two views of a pair of runs; only the one shown is built (a switch reruns the page)."""
VIEW_KEY = "compare_diff_view"


def _render_pair(store: Store, run_a: str, run_b: str) -> None:
    """The pair's row-by-row diff or its CI gate (whichever view is open), then the report's Build button."""
    rows_tab, gate_tab = st.tabs(list(VIEWS), key=VIEW_KEY, on_change="rerun")
    if rows_tab.open:
        with rows_tab:
            try:
                diff = per_version(
                    store,
                    "run_diff",
                    (run_a, run_b),
                    lambda: run_diff(store, run_a, run_b, table=lambda r: run_table(store, r)),
                )
            except KeyError as exc:
                st.warning(f"A run is no longer in the store: {exc}")
                return
            render_run_diff(diff, key="compare_diff")
    if gate_tab.open:
        from .gate import render_gate  # the gate's modules (JUnit, certification) load when its view opens

        with gate_tab:
            render_gate(store, run_a, run_b, key=f"compare_gate_{run_a}_{run_b}")
    render_report_builder(
        "run comparison",
        lambda: _run_comparison_report(store, run_b, run_a),
        f"run-comparison-{run_b}-vs-{run_a}.html",
        f"compare_report_diff_{run_a}_{run_b}",
    )


def _run_comparison_report(store: Store, run_b: str, run_a: str) -> str:
    # The report's module (its charts, the certification's) loads when a report is built, not with the tab.
    from scorers.analysis.report import run_comparison_report

    return run_comparison_report(store, run_b, run_a)
