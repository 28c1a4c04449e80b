"""The Compare page's report tab: self-contained HTML reports of a comparison, a run vs run, a run."""

from __future__ import annotations

from typing import Any

import streamlit as st

from scorers import (
    Store,
)
from scorers.analysis.generate import judging_basis_text
from scorers.analysis.pairwise_runs import pairwise_report_tables
from scorers.analysis.report import comparison_report, run_report

from ..results import md_escape
from .common import VARIANT_GROUP, pick_run, render_report_builder
from .comparison import Comparison


def setup_record(run: dict[str, Any]) -> dict[str, Any]:
    """What a report's setup section shows of ``run``: dataset, variants or existing responses, scorers, judge."""
    config = run.get("config") or {}
    judge = run.get("judge") or {}
    return {
        "Run": f"{run['name']} ({run['id']})",
        "Dataset": run.get("dataset_name"),
        "Items": run.get("n_items"),
        "Variants": config.get("variants") or None,
        "Existing responses": {k: v for k, v in config.items() if k in ("layout", "responses", "variant", "output")}
        or None,
        "Judged against": judging_basis_text(run),
        "Scorers": [s["id"] for s in run.get("scorers") or []],
        "Judge": judge or "none (code scorers)",
    }


def render_report_tab(store: Store, runs: list[dict[str, Any]], comparison: Comparison | None) -> None:
    """Tab 4: the comparison report of the run shown in tab 2 (``comparison``), and a single run's report."""
    st.caption(
        "A single HTML file that opens offline: setup (dataset, variants, judge model and parameters, never a key), "
        "the leaderboard, the charts and the rows that differ most."
    )
    if comparison is not None:
        st.markdown(f"**Comparison: {md_escape(comparison.run['name'])}**")
        rid = comparison.run["id"]
        group_col = st.session_state.get(f"compare_{rid}_group", VARIANT_GROUP)
        pair_col = st.session_state.get(f"compare_{rid}_pair", "group:row_id")
        variants = comparison.variants(group_col) if group_col in comparison.frame.columns else []
        if len(variants) < 2 or pair_col not in comparison.frame.columns:
            st.info("The comparison report needs a run with two variants; the single-run report is below.")
        else:
            a = st.session_state.get(f"compare_{rid}_a", variants[0])
            b = st.session_state.get(f"compare_{rid}_b", variants[1])
            if a == b:
                a, b = variants[0], variants[1]
            st.caption(md_escape(f"{a} against {b}, pairs matched by {pair_col.removeprefix('group:')}."))
            render_report_builder(
                "comparison",
                lambda: comparison_report(
                    comparison.frame,
                    title=f"Comparison report: {comparison.run['name']}",
                    setup=setup_record(comparison.run),
                    a=a,
                    b=b,
                    group_col=group_col,
                    pair_col=pair_col,
                    costs=(comparison.generation or {}).get("costs"),
                    tables=pairwise_report_tables(store, rid),
                ),
                f"comparison-{rid}.html",
                f"compare_report_cmp_{rid}",
            )
    st.markdown("**A single run**")
    if not runs:
        st.info("No stored run yet.")
    else:
        single = pick_run(runs, "Run", "compare_report_run")
        render_report_builder(
            "run", lambda: run_report(store, single), f"run-{single}.html", f"compare_report_run_{single}"
        )
