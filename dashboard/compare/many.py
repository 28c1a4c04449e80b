"""The Comparison tab's views of many variants: a ranking, every variant per question, breakdowns by group."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from scorers.analysis.compare import variant_label
from scorers.analysis.ranking import group_breakdown, pairwise_tests, ranking
from scorers.analysis.report import breakdown_figure
from scorers.core.base import decimal_text

from ..batch import truncate
from ..results import md_escape, render_outcome, render_text_block
from ..run_explorer import NO_VALUE
from .common import NUMBER_COLUMN, SESSION

if TYPE_CHECKING:
    from .comparison import Comparison


@st.cache_data(max_entries=16, show_spinner="Ranking the variants…")
def _ranking(run_id: str, n_outcomes: int, scorer: str, group_col: str, pair_col: str, _frame: pd.DataFrame):
    """:func:`ranking` and :func:`pairwise_tests` of a stored run (cached by run, size and columns)."""
    ranked = ranking(_frame, scorer, group_col=group_col, pair_col=pair_col)
    tests = pairwise_tests(_frame, scorer, list(ranked.table["variant"]), group_col=group_col, pair_col=pair_col)
    return ranked, tests


def render_ranking(comparison: Comparison, names: Mapping[str, str], group_col: str, pair_col: str, key: str) -> None:
    """A Bradley–Terry ranking of every variant with bootstrap intervals, and Holm-adjusted pairwise tests."""
    sid = st.selectbox(
        "Rank by",
        comparison.result.scorer_ids,
        key=f"{key}_rank_scorer",
        format_func=lambda s: names.get(s, s),
        **SESSION,
    )
    try:
        ranked, tests = _ranking(
            comparison.run["id"], len(comparison.frame), sid, group_col, pair_col, comparison.frame
        )
    except ValueError as exc:
        st.info(f"No ranking: {exc}")
        return
    table = ranked.table.assign(
        rank=[
            f"{r}" if lo == hi else f"{r} (range {lo}–{hi})"
            for r, lo, hi in zip(ranked.table["rank"], ranked.table["rank_low"], ranked.table["rank_high"], strict=True)
        ]
    ).drop(columns=["rank_low", "rank_high"])
    st.dataframe(
        table,
        hide_index=True,
        key=f"{key}_ranking",
        column_config={
            "strength": st.column_config.NumberColumn("Bradley–Terry strength", format="%.3f"),
            "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
            "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
            "wins": st.column_config.NumberColumn("question wins (ties ½)", format="%.1f"),
            "comparisons": st.column_config.NumberColumn("question comparisons", format="%.0f"),
        },
    )
    st.caption(
        f"On each of the {ranked.n_questions} questions, every two variants scored there play one game: the better "
        "score wins, equal scores tie (half a win each). The Bradley–Terry strengths sum to 1, and P(X beats Y) = "
        "strength X / (strength X + strength Y). Intervals and rank ranges: 95% percentile bootstrap over "
        f"{ranked.n_resamples} resamples of the questions; half a pseudo-win on both sides of every pair keeps the fit "
        "finite when one variant wins every game."
    )
    st.markdown("**Every pair, tested question by question** (Holm-adjusted for the number of pairs)")
    shown = tests.drop(columns=["note"]).rename(
        columns={"a": "A", "b": "B", "wins": "A wins", "losses": "B wins", "mean_diff": "mean A − B"}
    )
    st.dataframe(
        shown,
        hide_index=True,
        key=f"{key}_pairwise_tests",
        placeholder=NO_VALUE,
        column_config={
            "mean A − B": NUMBER_COLUMN,
            "ci_low": NUMBER_COLUMN,
            "ci_high": NUMBER_COLUMN,
            "p": st.column_config.NumberColumn("Wilcoxon p", format="%.4f"),
            "p_holm": st.column_config.NumberColumn("Holm-adjusted p", format="%.4f"),
        },
    )
    n_tested = int(tests["p"].notna().sum())
    significant = tests[tests["p_holm"] < 0.05]
    st.caption(
        f'{len(tests)} pairs, {n_tested} with enough differing questions to test ("{NO_VALUE}": a pair without '
        "them has no p-value). Holm's adjustment multiplies the "
        "smallest p-value by the number of tests, the next by one fewer, and so on, so that across all pairs the "
        "chance of any false alarm stays under 5%. "
        + (
            "Below 0.05 after adjustment: "
            + ", ".join(f"{a} vs {b}" for a, b in zip(significant["a"], significant["b"], strict=True))
            + "."
            if len(significant)
            else "No pair differs at 0.05 after adjustment."
        )
    )


def render_per_question(
    comparison: Comparison,
    names: Mapping[str, str],
    variants: list[str],
    group_col: str,
    pair_col: str,
    key: str,
) -> None:
    """Every variant's response and scores on one question, side by side; and all questions' scores in a table."""
    frame = comparison.frame
    sid = st.selectbox(
        "Scores of",
        comparison.result.scorer_ids,
        key=f"{key}_pq_scorer",
        format_func=lambda s: names.get(s, s),
        **SESSION,
    )
    part = frame[frame["scorer"] == sid].assign(
        _variant=lambda f: f[group_col].map(variant_label), _pair=lambda f: f[pair_col].map(variant_label)
    )
    table = part.pivot_table(index="_pair", columns="_variant", values="score", aggfunc="first", dropna=False)
    table = table.reindex(columns=[v for v in variants if v in table.columns])
    questions = part.drop_duplicates("_pair").set_index("_pair")["input"] if "input" in part else pd.Series(dtype=str)
    shown = table.reset_index().rename(columns={"_pair": "question"})
    shown.insert(1, "prompt", shown["question"].map(lambda q: truncate(questions.get(q), 60)))
    st.dataframe(
        shown,
        hide_index=True,
        key=f"{key}_pq_table",
        placeholder=NO_VALUE,
        column_config={v: NUMBER_COLUMN for v in table.columns},
    )
    st.caption(
        f'"{NO_VALUE}": not scored (see the outcome below for why). One row per question, one column per variant.'
    )
    ids = list(table.index)
    if not ids:
        return
    question = st.selectbox(
        "Question",
        ids,
        key=f"{key}_pq_question",
        format_func=lambda q: f"{q} — {truncate(questions.get(q), 70)}",
    )
    st.markdown("**User prompt**")
    render_text_block(str(questions.get(question) or ""), key=f"{key}_pq_{question}_input", name=f"{question}-input")
    shown_variants = [v for v in variants if v in table.columns]
    for start in range(0, len(shown_variants), 3):
        columns = st.columns(3)
        for column, variant in zip(columns, shown_variants[start : start + 3], strict=False):
            with column.container(border=True):
                rows = part[(part["_variant"] == variant) & (part["_pair"] == question)]
                response = rows["output"].iloc[0] if len(rows) and "output" in rows else None
                score = table.loc[question, variant]
                st.markdown(
                    f"**{md_escape(variant)}** · "
                    + ("not scored" if pd.isna(score) else f"{md_escape(names.get(sid, sid))} {decimal_text(score)}")
                )
                render_text_block(
                    str(response or "(no response)"),
                    key=f"{key}_pq_{question}_{variant}_output",
                    name=f"{question}-{variant}-output",
                )
                outcome = comparison.outcome(sid, group_col, variant, pair_col, question)
                if outcome is not None:
                    with st.expander("Breakdown"):
                        render_outcome(outcome, key=f"{key}_pq_{sid}_{variant}")


def render_breakdown(
    comparison: Comparison,
    names: Mapping[str, str],
    variants: list[str],
    group_col: str,
    by_options: list[str],
    key: str,
) -> None:
    """Mean score of every variant within each value of a group column (e.g. category), as a table and a heat map."""
    c1, c2 = st.columns(2)
    by = c1.selectbox(
        "Break down by", by_options, key=f"{key}_by", format_func=lambda c: c.removeprefix("group:"), **SESSION
    )
    sid = c2.selectbox(
        "Scorer", comparison.result.scorer_ids, key=f"{key}_by_scorer", format_func=lambda s: names.get(s, s), **SESSION
    )
    table = group_breakdown(comparison.frame, sid, by, group_col=group_col)
    st.plotly_chart(
        breakdown_figure(table, variants, title=f"{names.get(sid, sid)}: mean by {by.removeprefix('group:')}"),
        key=f"{key}_by_chart",
    )
    st.dataframe(
        table.rename(columns={"group": by.removeprefix("group:")}),
        hide_index=True,
        key=f"{key}_by_table",
        placeholder=NO_VALUE,
        column_config={"mean": NUMBER_COLUMN},
    )
    st.caption(
        "Means count scored outcomes only; n not scored counts the outcomes of that cell that were not scored; "
        f'"{NO_VALUE}": no outcome of that cell was scored, so it has no mean.'
    )
