"""The Compare page's comparison tab: one stored run's variants side by side."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    SCORERS,
    EvalItem,
    EvalRunResult,
    ScorerError,
    Store,
)
from scorers.analysis.compare import (
    dimension_means,
    leaderboard,
    not_scored_summary,
    paired,
    rows_by_difference,
    variant_label,
)
from scorers.analysis.generate import judging_basis_text
from scorers.analysis.pairwise_runs import (
    order_flip_rate,
    pairwise_table,
    save_pairwise,
    stored_pairwise,
    stored_win_rates,
)
from scorers.analysis.report import variant_colors
from scorers.catalogue.metrics.pairwise import create_pairwise_judge_scorer, pairwise_over_items
from scorers.core.base import decimal_text
from scorers.runs import jobs

from ..batch import stored_scorer_options, truncate
from ..compare_charts import (
    dimension_bars,
    head_to_head,
    leaderboard_chart,
    score_distributions,
    win_rate_chart,
    win_tie_loss_chart,
)
from ..diff import render_text_diff
from ..jobs import remember, render_job_progress
from ..jobs import session_job as session_job_of
from ..layout import follow_run_link, show_run_link
from ..results import md_escape, render_outcome, render_text_block
from ..run_explorer import NO_VALUE, stored_run
from ..runs import RunFailure
from ..settings import judge_cache, judge_settings
from .common import NUMBER_COLUMN, ROW_GROUP, SESSION, VARIANT_GROUP, comparison_runs, pick_run, scorer_names
from .job import render_generation
from .many import render_breakdown, render_per_question, render_ranking

PAIRWISE_SLOT = "pairwise"
"""This session's pairwise-judge job, in :func:`dashboard.jobs.session_job`."""

DEFAULT_RUBRIC = (
    "The better response answers the prompt correctly and completely, follows its instructions, "
    "and is clear and concise."
)


@dataclass
class Comparison:
    """A stored run read back for comparing its variants.

    Attributes:
        run: the run's record.
        items: its items.
        result: its outcomes.
        frame: :func:`scorers.runs.export.results_frame` of the run (with the texts and groups).
        groups: the frame's ``group:<name>`` columns.
    """

    run: dict[str, Any]
    items: list[EvalItem]
    result: EvalRunResult
    frame: pd.DataFrame

    @property
    def groups(self) -> list[str]:
        return [c for c in self.frame.columns if str(c).startswith("group:")]

    @property
    def generation(self) -> dict[str, Any] | None:
        return (self.run.get("config") or {}).get("generation")

    def variants(self, group_col: str) -> list[str]:
        """The variants (values of ``group_col``), in order of first appearance."""
        return list(dict.fromkeys(self.frame[group_col].map(variant_label)))

    def scores(self, scorer: str, group_col: str) -> pd.DataFrame:
        """Columns ``variant`` and ``score`` of one scorer's rows (NaN when not scored)."""
        part = self.frame[self.frame["scorer"] == scorer]
        return pd.DataFrame({"variant": part[group_col].map(variant_label), "score": part["score"]})

    def item_index(self, scorer: str, group_col: str, variant: str, pair_col: str, row_id: str) -> int | None:
        """The item index of one variant on one row for ``scorer``, or None."""
        frame = self.frame
        match = frame[
            (frame["scorer"] == scorer)
            & (frame[group_col].map(variant_label) == variant)
            & (frame[pair_col].map(variant_label) == row_id)
        ]
        return None if match.empty else int(match["item_index"].iloc[0])

    def outcome(self, scorer: str, group_col: str, variant: str, pair_col: str, row_id: str) -> Any:
        """The outcome of one variant on one row for ``scorer``: a ScoreResult, a RunFailure, or None."""
        index = self.item_index(scorer, group_col, variant, pair_col, row_id)
        if index is None:
            return None
        for o in self.result.outcomes:
            if o.item_index == index and o.scorer_id == scorer:
                if o.result is not None:
                    return o.result
                return RunFailure(o.error or "not scored", o.status, o.raw_reply)
        return None

    def items_of(self, group_col: str, variant: str) -> list[EvalItem]:
        """The items of one variant (``group_col`` must be a ``group:<name>`` column)."""
        name = group_col.removeprefix("group:")
        return [it for it in self.items if variant_label(it.groups.get(name)) == variant]


def win_rate_table(rates: Mapping[str, Any], a: str, b: str) -> pd.DataFrame:
    """:func:`scorers.catalogue.metrics.pairwise.win_rates` as rows for :func:`dashboard.compare_charts.win_rate_chart`.

    Returns:
        Columns ``name`` (``"<a> wins"``, ``"tie"``, ``"<b> wins"``), ``rate``, ``ci_low``,
        ``ci_high`` and ``count``.
    """
    rows = []
    for name, prefix, count in (
        (f"{a} wins", "a_win", "a_wins"),
        ("tie", "tie", "ties"),
        (f"{b} wins", "b_win", "b_wins"),
    ):
        low, high = rates[f"{prefix}_rate_ci"]
        rows.append(
            {"name": name, "rate": rates[f"{prefix}_rate"], "ci_low": low, "ci_high": high, "count": rates[count]}
        )
    return pd.DataFrame(rows, columns=["name", "rate", "ci_low", "ci_high", "count"])


# ---- views


def _scale_range(run: Mapping[str, Any], scorer: str) -> tuple[float, float] | None:
    for entry in run.get("scorers") or []:
        if entry.get("id") == scorer:
            scale = (entry.get("options") or {}).get("scale", 1.0)
            if isinstance(scale, (int, float)) and scale > 0 and SCORERS.get(scorer) is not None:
                return (0.0, float(scale))
    return None


def _leaderboard_table(board: pd.DataFrame, names: Mapping[str, str]) -> None:
    # A variant's generation cost is one figure, not one per scorer: repeated on each scorer's row, the column would
    # add up to a multiple of the Generation cost tile. It is shown once per variant under that tile instead.
    shown = board.drop(columns="cost_usd").assign(scorer=board["scorer"].map(lambda s: names.get(s, s)))
    st.dataframe(
        shown,
        hide_index=True,
        placeholder=NO_VALUE,
        column_config={
            "mean": NUMBER_COLUMN,
            "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
            "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
            "n_scored": st.column_config.NumberColumn("n scored"),
            "n_failed": st.column_config.NumberColumn("n not scored"),
            "prompt_tokens": st.column_config.NumberColumn("judge prompt tokens (calls made)"),
            "completion_tokens": st.column_config.NumberColumn("judge completion tokens (calls made)"),
            "n_cached": st.column_config.NumberColumn("n from judge cache"),
            "latency_s": st.column_config.NumberColumn("scoring latency (s)", format="%.2f"),
        },
    )
    st.caption(
        "Means count scored items only, with a 95% bootstrap confidence interval; items not scored are in n not "
        f'scored, never averaged as 0; "{NO_VALUE}": no value (a variant with no item scored has no mean nor '
        "interval). Tokens are those of the judge calls made for the run: a reply taken from the "
        "judge cache (n from judge cache) made no call and adds none, so equal work can show different tokens. "
        "What generating each variant's responses cost is not here (one figure per variant, not per scorer): it is "
        "under Generation cost above, when the responses were generated on this page."
    )


def _pair_label(column: str, run: Mapping[str, Any]) -> str:
    """How a "Pairs are matched by" choice reads: the row key names the dataset's id column the user chose."""
    if column == "input":
        return "the user prompt's text"
    if column == ROW_GROUP:
        id_col = (run.get("mapping") or {}).get("id")
        return (
            f"{id_col} (the question id column)"
            if id_col
            else "row_id (no id column was chosen: the row, or the question text in the long layout)"
        )
    return column.removeprefix("group:")


def render_comparison(store: Store, comparison: Comparison, *, key: str) -> None:
    """The comparison of a run's variants: leaderboard, charts, head-to-head, rows by difference, pairwise judge.

    Args:
        store: the database (the pairwise judge's cache).
        comparison: the run (:func:`dashboard.run_explorer.stored_run`).
        key: prefix of every widget and chart key.
    """
    run, frame, result = comparison.run, comparison.frame, comparison.result
    key = f"{key}_{run['id']}"
    names = scorer_names(result.scorer_ids, stored_scorer_options(run))
    if frame.empty:
        st.info("No outcome has been stored for this run yet: there is nothing to compare.")
        return
    groups = comparison.groups
    if not groups:
        st.info(
            "This run has no variant column, so there is nothing to compare within it. Generate and score "
            "variants above, score existing responses with a variant column, or compare two runs under Run vs run."
        )
        return
    default = groups.index(VARIANT_GROUP) if VARIANT_GROUP in groups else 0
    left, right = st.columns(2)
    group_col = left.selectbox(
        "Variants are the values of",
        groups,
        index=default,
        key=f"{key}_group",
        **SESSION,
        format_func=lambda c: c.removeprefix("group:"),
    )
    pair_options = [c for c in groups if c != group_col] + ["input"]
    pair_col = right.selectbox(
        "Pairs are matched by",
        pair_options,
        index=pair_options.index(ROW_GROUP) if ROW_GROUP in pair_options else len(pair_options) - 1,
        key=f"{key}_pair",
        **SESSION,
        format_func=lambda c: _pair_label(c, run),
        help="Two variants' responses to the same dataset row form a pair.",
    )
    variants = comparison.variants(group_col)
    colors = variant_colors(variants)  # one colour per variant in every chart of the page
    costs = (comparison.generation or {}).get("costs")
    board = leaderboard(frame, group_col=group_col, costs=costs)

    scored = int(frame["score"].notna().sum())
    columns = st.columns(4)
    columns[0].metric("Variants", len(variants))
    columns[1].metric("Rows", frame[pair_col].map(variant_label).nunique())
    columns[2].metric("Outcomes scored", scored)
    columns[3].metric("Not scored", int(len(frame) - scored), help="Counted apart, never as a score of 0.")
    st.caption(md_escape(judging_basis_text(run)))
    failures = not_scored_summary(frame)
    if failures:
        st.warning(md_escape(failures) + " The status and error of each outcome are in History.")
    if comparison.generation is not None:
        render_generation(comparison.generation)

    st.markdown("#### Leaderboard")
    _leaderboard_table(board, names)
    if len(variants) < 2:
        st.info(f"Only one variant ({md_escape(variants[0])}) is in this run: add another variant to compare it with.")
    if not scored:
        st.warning("Nothing in this run was scored: see the status and error of each outcome in History.")

    for sid in result.scorer_ids:
        name = names[sid]
        st.markdown(f"#### {md_escape(name)}")
        span = _scale_range(run, sid)
        left, right = st.columns(2)
        left.plotly_chart(
            leaderboard_chart(board, sid, title=f"{name}: mean per variant", colors=colors), key=f"{key}_board_{sid}"
        )
        right.plotly_chart(
            score_distributions(
                comparison.scores(sid, group_col), title=f"{name}: scores", x_range=span, order=variants, colors=colors
            ),
            key=f"{key}_dist_{sid}",
        )
        means = dimension_means(frame, sid, group_col, options=_options(run, sid), store=store)
        if not means.empty:
            st.plotly_chart(
                dimension_bars(
                    means.assign(dimension=means["label"]),
                    title=f"{name}: mean per dimension",
                    order=variants,
                    colors=colors,
                ),
                key=f"{key}_dims_{sid}",
            )

    breakdowns = [g for g in groups if g not in (group_col, pair_col, "group:model", ROW_GROUP)]
    if breakdowns:
        st.markdown("#### Breakdown by group")
        render_breakdown(comparison, names, variants, group_col, breakdowns, key)
    if len(variants) >= 2:
        st.markdown("#### Ranking of all variants")
        render_ranking(comparison, names, group_col, pair_col, key)
        st.markdown("#### Question by question")
        render_per_question(comparison, names, variants, group_col, pair_col, key)
        st.markdown("#### Head to head")
        _render_head_to_head(store, comparison, names, variants, group_col, pair_col, key)


def _options(run: Mapping[str, Any], scorer: str) -> dict[str, Any]:
    for entry in run.get("scorers") or []:
        if entry.get("id") == scorer:
            return dict(entry.get("options") or {})
    return {}


def _render_head_to_head(
    store: Store,
    comparison: Comparison,
    names: Mapping[str, str],
    variants: list[str],
    group_col: str,
    pair_col: str,
    key: str,
) -> None:
    c1, c2, c3 = st.columns(3)
    a = c1.selectbox("Variant A", variants, index=0, key=f"{key}_a", **SESSION)
    b = c2.selectbox("Variant B", variants, index=1, key=f"{key}_b", **SESSION)
    sid = c3.selectbox(
        "Scorer", comparison.result.scorer_ids, key=f"{key}_scorer", format_func=lambda s: names.get(s, s), **SESSION
    )
    if a == b:
        st.info("Choose two different variants.")
        return
    frame = comparison.frame
    try:
        comparison_ab = paired(frame, sid, a, b, group_col=group_col, pair_col=pair_col)
        rows = rows_by_difference(frame, sid, a, b, group_col=group_col, pair_col=pair_col)
    except ValueError as exc:
        st.error(str(exc))
        return
    st.markdown(f"**{md_escape(comparison_ab.summary())}**")
    m = st.columns(5)
    m[0].metric("Pairs", comparison_ab.n_pairs)
    m[1].metric(f"{a} wins", comparison_ab.wins)
    m[2].metric("Ties", comparison_ab.ties)
    m[3].metric(f"{b} wins", comparison_ab.losses)
    p = comparison_ab.wilcoxon_p
    m[4].metric(
        "Wilcoxon p",
        "—" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}"),
        help="Two-sided Wilcoxon signed-rank test of the paired differences (ties dropped). "
        + (comparison_ab.note or "Below 0.05: a difference this large would be unlikely by chance."),
    )
    left, right = st.columns([2, 3])
    left.plotly_chart(
        win_tie_loss_chart(comparison_ab.wins, comparison_ab.ties, comparison_ab.losses, a, b),
        key=f"{key}_wtl",
    )
    right.plotly_chart(
        head_to_head(
            rows,
            a,
            b,
            x_range=_scale_range(comparison.run, sid),
            title=f"{names.get(sid, sid)}: {a} vs {b}",
            colors=variant_colors(variants),
        ),
        key=f"{key}_h2h",
    )

    st.markdown("#### Rows with the largest difference")
    if rows.empty:
        st.info("No row was scored for both variants.")
    else:
        table = rows[["row_id", "score_a", "score_b", "diff", "input", "output_a", "output_b"]].copy()
        for column in ("input", "output_a", "output_b"):
            table[column] = table[column].map(lambda v: truncate(v, 80))
        st.dataframe(
            table.rename(
                columns={
                    "score_a": f"{a} score",
                    "score_b": f"{b} score",
                    "diff": "Δ (A − B)",
                    "output_a": f"{a} response",
                    "output_b": f"{b} response",
                }
            ),
            hide_index=True,
            key=f"{key}_rows",
            column_config={f"{a} score": NUMBER_COLUMN, f"{b} score": NUMBER_COLUMN, "Δ (A − B)": NUMBER_COLUMN},
        )
        _render_row(comparison, rows, names, sid, a, b, group_col, pair_col, key)

    st.markdown("#### Pairwise judge")
    _render_pairwise(store, comparison, a, b, group_col, pair_col, key)


def _render_row(
    comparison: Comparison,
    rows: pd.DataFrame,
    names: Mapping[str, str],
    sid: str,
    a: str,
    b: str,
    group_col: str,
    pair_col: str,
    key: str,
) -> None:
    by_id = {str(r["row_id"]): r for r in rows.to_dict("records")}
    row_id = st.selectbox(
        "Row to inspect (largest |Δ| first)",
        list(by_id),
        key=f"{key}_row",
        format_func=lambda r: f"{r} — Δ {by_id[r]['diff']:+.3f} — {truncate(by_id[r]['input'], 70)}",
    )
    row = by_id[row_id]
    # Each text as Review shows it: a long one cut, with a toggle to show all of it and a download.
    text_key = f"{key}_row_{row_id}"
    with st.container(border=True):
        st.markdown("**User prompt**")
        render_text_block(row["input"] or "", key=f"{text_key}_input", name=f"{row_id}-input")
        if isinstance(row["ground_truth"], str) and row["ground_truth"]:
            st.markdown("**Ground truth**")
            render_text_block(row["ground_truth"], key=f"{text_key}_ground_truth", name=f"{row_id}-ground_truth")
        left, right = st.columns(2)
        for column, variant, side in ((left, a, "a"), (right, b, "b")):
            with column:
                score = row[f"score_{side}"]  # a pair of scores: both scored (a difference)
                st.markdown(f"**{md_escape(variant)}** · {md_escape(names.get(sid, sid))} {decimal_text(score)}")
                render_text_block(
                    row[f"output_{side}"] or "", key=f"{text_key}_output_{side}", name=f"{row_id}-{variant}-output"
                )
        st.markdown("**Text diff** (A on the left, B on the right)")
        render_text_diff(
            row["output_a"] or "", row["output_b"] or "", key=f"{key}_row", reference_title=a, response_title=b
        )
    tabs = st.tabs([f"Breakdown: {a}", f"Breakdown: {b}"])
    for tab, variant, side in ((tabs[0], a, "a"), (tabs[1], b, "b")):
        with tab:
            for scorer in comparison.result.scorer_ids:
                st.markdown(f"##### {md_escape(names.get(scorer, scorer))}")
                outcome = comparison.outcome(scorer, group_col, variant, pair_col, row_id)
                if outcome is None:
                    st.info("No outcome for this row.")
                else:
                    index = comparison.item_index(scorer, group_col, variant, pair_col, row_id)
                    payload = comparison.items[index].payload if index is not None else None
                    render_outcome(outcome, key=f"{key}_row_{side}_{scorer}", payload=payload)


def _render_pairwise(
    store: Store, comparison: Comparison, a: str, b: str, group_col: str, pair_col: str, key: str
) -> None:
    st.caption(
        "An LLM judge compares the two responses to each row against your rubric, twice (A shown first, then B "
        "shown first); it declares a winner only when both orders agree, else a tie. Two judge calls per row, "
        "with the sidebar's judge settings. It runs in the background on the server, and its results are stored "
        "with the run (shown again here and in the report)."
    )
    if not pair_col.startswith("group:"):
        st.info("The pairwise judge pairs rows by a group column (such as row_id); choose one above.")
        return
    run_id = comparison.run["id"]
    rubric = st.text_area("Rubric", value=DEFAULT_RUBRIC, key=f"{key}_rubric", height=80, **SESSION)
    job = session_job_of(PAIRWISE_SLOT)
    busy = job is not None and job.running
    if st.button("Run the pairwise judge", key=f"{key}_pairwise_run", icon=":material/balance:", disabled=busy):
        try:
            settings = judge_settings()
            judge = create_pairwise_judge_scorer(rubric, settings=settings, cache=judge_cache(store))
            judge.judge  # noqa: B018 - creating the client checks the key before any call
        except ScorerError as exc:
            st.error(str(exc))
        else:
            remember(
                PAIRWISE_SLOT, _start_pairwise(store, comparison, judge, settings, a, b, group_col, pair_col, rubric)
            )
            st.rerun()
    if job is not None and job.running:
        render_job_progress(job.id, key=f"{key}_pairwise_job")
    elif job is not None and job.snapshot().status == "failed":
        st.error(job.snapshot().message)
    records = stored_pairwise(store, run_id)
    if not records:
        return
    by_id = {r["id"]: r for r in records}
    chosen = st.selectbox(
        "Stored pairwise judgings of this run (newest first)",
        list(by_id),
        key=f"{key}_pairwise_pick",
        format_func=lambda i: f"{by_id[i]['a']} vs {by_id[i]['b']} · {by_id[i]['created_at'][:16].replace('T', ' ')} UTC",
    )
    record = by_id[chosen]
    if not record["outcomes"]:
        st.info("No row had a response from both variants.")
        return
    rates = stored_win_rates(record)
    colors = variant_colors(comparison.variants(record["group_col"]))
    st.plotly_chart(
        win_rate_chart(
            win_rate_table(rates, record["a"], record["b"]),
            ends=(colors.get(record["a"], "#4C78A8"), colors.get(record["b"], "#F58518")),
        ),
        key=f"{key}_winrate",
    )
    flips, n_judged = order_flip_rate(record)
    c = st.columns(3)
    c[0].metric("Pairs judged", rates["n"], help=f"{rates['n_failed']} not judged (see status).")
    c[1].metric(
        "Order flips",
        "—" if flips is None else f"{flips:.0%}",
        help="Share of judged pairs whose preference changed when the two responses were shown in the other "
        "order: the judge's position bias. Those pairs count as ties.",
    )
    c[2].metric("Rubric", f"{len(record['rubric'])} chars", help=record["rubric"])
    st.caption(
        f"Win rates with 95% Wilson intervals over {n_judged} judged pair(s). "
        f'"{NO_VALUE}": a pair not judged (its status says why) has no winner nor order flip.'
    )
    st.dataframe(pairwise_table(record), hide_index=True, key=f"{key}_pairwise_table", placeholder=NO_VALUE)


def _start_pairwise(
    store: Store,
    comparison: Comparison,
    judge: Any,
    settings: Any,
    a: str,
    b: str,
    group_col: str,
    pair_col: str,
    rubric: str,
) -> str:
    """Judge every pair of ``a`` and ``b`` as a background job of the server, then store the result; the job id."""
    items_a, items_b = comparison.items_of(group_col, a), comparison.items_of(group_col, b)
    run_id = comparison.run["id"]

    def work(ctx: jobs.JobContext) -> int:
        ctx.progress(done=0, total=min(len(items_a), len(items_b)), phase="judging pairs")
        outcomes = pairwise_over_items(
            items_a,
            items_b,
            judge,
            pair_key=pair_col.removeprefix("group:"),
            cancel=ctx.cancel,
            on_progress=lambda done, total: ctx.progress(done=done, total=total),
        )
        return save_pairwise(
            store,
            run_id,
            a=a,
            b=b,
            group_col=group_col,
            pair_col=pair_col,
            rubric=rubric.strip(),
            judge={"model": settings.model_name, "temperature": settings.temperature, "seed": settings.seed},
            outcomes=outcomes,
        )

    return jobs.start("pairwise", f"Pairwise judge: {a} vs {b} in run {run_id}", work, key=f"pairwise:{run_id}")


def _picked(store: Store, run_id: str) -> Comparison | None:
    try:
        return Comparison(*stored_run(store, run_id))  # read once per version of the run's outcomes
    except KeyError:
        return None


def selected_comparison(store: Store, runs: list[dict[str, Any]]) -> Comparison | None:
    """The run the Comparison tab shows (its pick, else the newest run with groups), read once per version;
    None when no run has groups or it is no longer in the store."""
    ids = [r["id"] for r in comparison_runs(runs)]
    if not ids:
        return None
    picked = st.session_state.get("compare_run_pick")
    return _picked(store, picked if picked in ids else ids[0])


def render_comparison_tab(store: Store, runs: list[dict[str, Any]]) -> None:
    """Tab 2: pick a run with groups and compare its variants.

    The run is read once per version of its outcomes (:func:`dashboard.run_explorer.stored_run`).
    """
    comparable = comparison_runs(runs)
    if not comparable:
        st.info(
            "No comparison yet: generate and score variants in the first tab (or score a dataset with a group column on the Batch page)."
        )
    else:
        follow_run_link("compare_run_pick", [r["id"] for r in comparable])  # ?run=ID picks that run
        run_id = pick_run(comparable, "Run to compare", "compare_run_pick")
        show_run_link(run_id)
        comparison = _picked(store, run_id)
        if comparison is None:
            st.warning(f"Run {run_id} is no longer in the store.")
        else:
            render_comparison(store, comparison, key="compare")
