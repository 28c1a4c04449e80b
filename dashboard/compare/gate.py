"""The regression gate in the Compare page's Run vs run view: the verdict CI would give for two stored runs.

The numbers come from :func:`scorers.analysis.gate.evaluate_gate` of :func:`~scorers.analysis.gate.side_from_table`
(the same numbers as :func:`~scorers.analysis.gate.gate_runs`) and the text from
:func:`scorers.analysis.gate.markdown_summary`, the same functions ``python -m scorers gate``
uses, so the page and the CLI agree to the digit for the same runs and settings.
"""

from __future__ import annotations

import shlex

import streamlit as st

from scorers.analysis.gate import (
    DEFAULT_MAX_UNSCORED_SHARE,
    GatePolicy,
    GateResult,
    Verdict,
    evaluate_gate,
    markdown_summary,
    side_from_table,
)
from scorers.runs.store import Store

from ..results import md_escape
from ..run_explorer import per_version, run_table
from .common import SESSION


def gate_command(baseline_run: str, candidate_run: str, policy: GatePolicy) -> str:
    """The ``python -m scorers gate`` command that gives the same verdict as the page."""
    parts = ["python", "-m", "scorers", "gate", "--baseline", baseline_run, "--candidate", candidate_run]
    if policy.default_min_effect:
        parts += ["--min-effect", f"{policy.default_min_effect:g}"]
    if policy.max_unscored_share != DEFAULT_MAX_UNSCORED_SHARE:
        parts += ["--max-unscored", f"{policy.max_unscored_share:g}"]
    return shlex.join(parts)


def _gate(store: Store, baseline_run: str, candidate_run: str, policy: GatePolicy) -> GateResult:
    """:func:`gate_runs`, kept per policy and versions of both runs, from each run's columns (:func:`run_table`,
    shared with Run vs run's diff and History)."""
    runs = (baseline_run, candidate_run)
    what = f"gate {policy.default_min_effect!r} {policy.max_unscored_share!r}"
    return per_version(
        store, what, runs, lambda: evaluate_gate(*(side_from_table(run_table(store, r)) for r in runs), policy)
    )


def baseline_notes(store: Store, baseline_run: str, candidate_run: str) -> list[str]:
    """Sentences on the two runs' standing: which named baselines they are, and a failed CI gate of run B."""
    names: dict[str, list[str]] = {}
    for entry in store.list_baselines():
        names.setdefault(entry["run_id"], []).append(repr(entry["name"]))
    lines = [
        f"Run {label} is the named baseline {', '.join(names[run])}."
        for label, run in (("A", baseline_run), ("B", candidate_run))
        if run in names
    ]
    failed = [v for v in store.gate_verdicts(candidate_run) if v["verdict"] == "fail"]
    if failed:
        lines.append(
            f"Run B failed a CI gate against {failed[0]['baseline']} on {failed[0]['created_at'][:16].replace('T', ' ')} "
            "UTC: it can never become a baseline."
        )
    return lines


def render_gate(store: Store, baseline_run: str, candidate_run: str, *, key: str) -> None:
    """The gate of run B (candidate) against run A (baseline), with the minimum effect and unscored share as inputs.

    Args:
        store: the store both runs are in.
        baseline_run, candidate_run: the run ids (A and B of the view).
        key: prefix of every widget key.
    """
    st.markdown("#### Gate: would CI pass run B against run A?")
    left, right = st.columns(2)
    min_effect = left.number_input(
        "Minimum effect (every scorer, on its own scale)",
        min_value=0.0,
        value=0.0,
        step=0.01,
        format="%.3f",
        key=f"{key}_min_effect",
        help="A worsening smaller than this passes even when it is real; 0 fails any regression the interval shows.",
        **SESSION,  # kept while Run vs run shows the rows, where the gate is not drawn
    )
    share = right.number_input(
        "Largest share of items not scored",
        min_value=0.0,
        max_value=1.0,
        value=DEFAULT_MAX_UNSCORED_SHARE,
        step=0.05,
        key=f"{key}_max_unscored",
        help="Above this share (on either run), the scorer is undecided: items not scored are never counted as 0.",
        **SESSION,
    )
    policy = GatePolicy(default_min_effect=float(min_effect), max_unscored_share=float(share))
    try:
        result = _gate(store, baseline_run, candidate_run, policy)
    except KeyError as exc:
        st.warning(f"A run is no longer in the store: {exc}")
        return
    except ValueError as exc:
        st.info(md_escape(f"No gate for these runs: {exc}."))
        return
    show = {Verdict.PASS: st.success, Verdict.FAIL: st.error, Verdict.UNDECIDED: st.warning}[result.verdict]
    show(md_escape(f"Gate verdict: {result.headline()}"))
    for line in baseline_notes(store, baseline_run, candidate_run):
        st.caption(md_escape(line))
    body = markdown_summary(result).split("\n", 2)[2]  # the heading is the verdict shown above
    st.markdown(body)
    st.caption("The same verdict in CI (exit code 0 pass, 1 regression, 3 undecided):")
    st.markdown(f"`{gate_command(baseline_run, candidate_run, policy)}`")


__all__ = ["baseline_notes", "gate_command", "render_gate"]
