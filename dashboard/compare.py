"""The Compare page's pieces: the generate-and-score job, a comparison's data, and its Streamlit views.

A comparison is always a stored run whose items carry a variant group (``group:variant``)
and the dataset row they answer (``group:row_id``): :class:`CompareJob` generates the
responses of every variant (:func:`scorers.analysis.generate.generate_responses`), turns them into
items (:func:`scorers.analysis.generate.comparison_items`) or takes existing responses as they are
(:func:`scorers.analysis.generate.items_from_responses`), and scores them with
:func:`scorers.run_evals` into the store. The views read the run back from the store, so
a comparison reopened later (or a Batch run with a variant column) shows the same thing.
The statistics are :mod:`scorers.analysis.compare`'s; the charts :mod:`dashboard.compare_charts`'.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    SCORERS,
    EvalItem,
    EvalRunResult,
    JudgeSettings,
    Scorer,
    ScorerError,
    Store,
    create_textual_difference_scorer,
    load_run,
    run_evals,
)
from scorers.analysis.compare import RunDiff, dimension_means, leaderboard, paired, rows_by_difference
from scorers.analysis.generate import (
    Variant,
    comparison_items,
    failed_generations,
    generate_responses,
    generation_costs,
)
from scorers.catalogue.metrics.pairwise import create_pairwise_judge_scorer, pairwise_over_items, win_rates
from scorers.runs.export import results_frame

from .batch import format_duration, truncate
from .compare_charts import (
    delta_bars,
    dimension_bars,
    head_to_head,
    leaderboard_chart,
    score_distributions,
    win_rate_chart,
    win_tie_loss_chart,
)
from .diff import diff_html
from .results import md_escape, render_outcome
from .runs import RunFailure
from .settings import judge_settings

JOB_KEY = "compare_job"
"""Session-state key of this session's :class:`CompareJob`."""

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
VARIANT_GROUP = "group:variant"
ROW_GROUP = "group:row_id"
DEFAULT_RUBRIC = (
    "The better response answers the prompt correctly and completely, follows its instructions, "
    "and is clear and concise."
)

_NUMBER = st.column_config.NumberColumn(format="%.3f")


def sample_datasets() -> dict[str, Path]:
    """The files of ``sample_data/`` the page offers (CSV and JSON Lines), by file name."""
    return {p.name: p for p in sorted(SAMPLE_DIR.iterdir()) if p.suffix in (".csv", ".jsonl")}


def variant_label(value: Any) -> str:
    """A variant (or row id) value as the comparison shows it: text, ``"(blank)"`` when missing.

    The same rule as :func:`scorers.analysis.compare.leaderboard` applies to its ``variant`` column.

    >>> variant_label(None), variant_label(" "), variant_label(3)
    ('(blank)', '(blank)', '3')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == "":
        return "(blank)"
    return str(value)


def scorer_names(scorer_ids: Sequence[str]) -> dict[str, str]:
    """Scorer id → display name (the id for a scorer not in the catalogue)."""
    return {sid: SCORERS[sid].name if sid in SCORERS else sid for sid in scorer_ids}


# ---- the job: generate (optional), then score into the store


@dataclass(frozen=True)
class JobProgress:
    """How far a :class:`CompareJob` is.

    Attributes:
        phase: ``"generating"``, ``"scoring"`` or ``"done"``.
        done: units finished in this phase (responses generated, or items scored).
        total: units of this phase.
        elapsed_s: seconds since the job started (until it ended).
        running: whether the job's thread is still working.
    """

    phase: str
    done: int
    total: int
    elapsed_s: float
    running: bool

    @property
    def fraction(self) -> float:
        """``done / total`` in [0, 1] (1 for an empty phase)."""
        return min(1.0, self.done / self.total) if self.total else 1.0

    def describe(self) -> str:
        """One line for the progress bar, e.g. ``"Generating responses: 3 of 8 · 2 s"``.

        >>> JobProgress("scoring", 1, 4, 3.2, True).describe()
        'Scoring: 1 of 4 items · 3 s'
        """
        what = {"generating": "Generating responses", "scoring": "Scoring"}.get(self.phase, "Done")
        unit = "items" if self.phase == "scoring" else ""
        counts = f"{self.done} of {self.total}" + (f" {unit}" if unit else "")
        return f"{what}: {counts} · {format_duration(self.elapsed_s)}"


@dataclass(frozen=True)
class GenerationPlan:
    """What to generate before scoring: the rows, the variants, and how items are built from them.

    Attributes:
        rows: the dataset rows (column → value), in order.
        item_ids: one id per row (the pairs' ``row_id``).
        variants: the variants, with distinct names.
        settings: endpoint, key and default sampling parameters (each variant's model replaces the model).
        input_col: the column the scorers judge the responses against (the user's question).
        ground_truth_col: the reference answer column, or None.
    """

    rows: list[dict[str, Any]]
    item_ids: list[str]
    variants: list[Variant]
    settings: JudgeSettings
    input_col: str
    ground_truth_col: str | None = None


def generation_record(responses: Sequence[Any]) -> dict[str, Any]:
    """What a stored comparison run keeps of its generation step (in ``config["generation"]``).

    Returns:
        ``{"responses", "cached", "prompt_tokens", "completion_tokens", "costs"}`` (costs:
        variant → USD or None when the model's price is unknown) and ``"failed"``: one
        ``{"row_id", "variant", "status", "error"}`` per response that was not generated.
    """
    return {
        "responses": len(responses),
        "cached": sum(bool(r.cached) for r in responses),
        "prompt_tokens": sum(r.usage.prompt_tokens for r in responses),
        "completion_tokens": sum(r.usage.completion_tokens for r in responses),
        "costs": generation_costs(responses),
        "failed": [
            {"row_id": r.item_id, "variant": r.variant.name, "status": r.status.value, "error": r.error}
            for r in failed_generations(responses)
        ],
    }


class CompareJob:
    """Generate (optionally) and score a comparison in a background thread, so the page stays responsive.

    With a :class:`GenerationPlan`, every variant answers every row first; the responses
    that were generated become the items. Without one, ``items`` are scored as given.
    The items are then scored by :func:`scorers.run_evals` into ``store`` (a new run,
    written as outcomes finish, which History can reopen and resume).

    Args:
        store: the database (also the reply cache of the generation and of the judges).
        scorers: the scorers, with distinct ids.
        scorer_options: scorer id → its options (recorded with the run).
        items: the items to score when nothing is generated.
        plan: what to generate first, or None.
        dataset_name: the dataset's name for the stored run.
        run_name: the run's display name, or None for the default.
        mapping: the columns used, recorded with the run.
        config: other settings recorded with the run (``config``).
        concurrency: requests (generation) and items (scoring) at once, >= 1.
    """

    def __init__(
        self,
        store: Store,
        scorers: Sequence[Scorer],
        scorer_options: Mapping[str, Mapping[str, Any]],
        *,
        items: Sequence[EvalItem] = (),
        plan: GenerationPlan | None = None,
        dataset_name: str,
        run_name: str | None = None,
        mapping: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        concurrency: int = 8,
    ):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.store = store
        self.scorers = list(scorers)
        self.scorer_options = {k: dict(v) for k, v in scorer_options.items()}
        self.items = list(items)
        self.plan = plan
        self.dataset_name = dataset_name
        self.run_name = run_name
        self.mapping = dict(mapping or {})
        self.config = dict(config or {})
        self.concurrency = concurrency
        self.responses: list[Any] = []
        self.generation: dict[str, Any] | None = None
        self.result: EvalRunResult | None = None
        self.run_id: str | None = None
        self.error: str | None = None
        self.shown = False
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._phase = "generating" if plan is not None else "scoring"
        self._done = 0
        self._total = len(plan.rows) * len(plan.variants) if plan is not None else len(self.items)
        self._started = 0.0
        self._ended: float | None = None
        self._thread = threading.Thread(target=self._work, name="compare-job", daemon=True)

    def start(self) -> CompareJob:
        """Start the thread."""
        self._started = time.monotonic()
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop after the requests in flight: what was scored so far is kept (the run can be resumed)."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end."""
        self._thread.join(timeout)

    def progress(self) -> JobProgress:
        """A snapshot of the progress (safe to call from any thread)."""
        with self._lock:
            end = self._ended if self._ended is not None else time.monotonic()
            phase = self._phase if self.running else "done"
            return JobProgress(phase, self._done, self._total, max(0.0, end - self._started), self.running)

    def _on_generated(self, done: int, total: int) -> None:
        with self._lock:
            self._done, self._total = done, total

    def _on_item(self, index: int, item: EvalItem, outcomes: list[Any]) -> None:
        with self._lock:
            self._done += 1

    def _generate(self, plan: GenerationPlan) -> list[EvalItem]:
        self.responses = generate_responses(
            plan.rows,
            plan.variants,
            settings=plan.settings,
            item_ids=plan.item_ids,
            concurrency=self.concurrency,
            cache=self.store,
            cancel=self._cancel,
            on_progress=self._on_generated,
        )
        self.generation = generation_record(self.responses)
        return comparison_items(
            plan.rows, self.responses, input_col=plan.input_col, ground_truth_col=plan.ground_truth_col
        )

    def _work(self) -> None:
        try:
            items = self.items
            config = dict(self.config, source="compare", scorerOptions=self.scorer_options, cache=True)
            if self.plan is not None:
                items = self._generate(self.plan)
                config["variants"] = [asdict(v) for v in self.plan.variants]
                config["generation"] = self.generation
                if self._cancel.is_set():
                    self.error = "Stopped while generating: nothing was scored or stored (the responses are cached)."
                    return
                if not items:
                    failed = (self.generation or {}).get("failed") or []
                    first = f" The first error: {failed[0]['error']}" if failed else ""
                    self.error = f"No response could be generated, so there is nothing to score.{first}"
                    return
            with self._lock:
                self._phase, self._done, self._total = "scoring", 0, len(items)
            self.result = run_evals(
                items,
                self.scorers,
                concurrency=self.concurrency,
                store=self.store,
                dataset_name=self.dataset_name,
                run_name=self.run_name,
                mapping=self.mapping,
                scorer_options=self.scorer_options,
                run_config=config,
                cancel=self._cancel,
                on_item_complete=self._on_item,
            )
            self.run_id = self.result.run_id
        except ScorerError as exc:  # e.g. no API key for the target model: shown on the page
            self.error = str(exc)
        except Exception as exc:  # shown on the page; what was stored so far is kept
            self.error = f"The comparison stopped on an unexpected error: {exc!r}"
        finally:
            with self._lock:
                self._ended = time.monotonic()


def session_job() -> CompareJob | None:
    """This session's comparison job, running or finished, or None."""
    return st.session_state.get(JOB_KEY)


def start_job(job: CompareJob) -> None:
    """Start ``job`` as this session's comparison job."""
    st.session_state[JOB_KEY] = job.start()


@st.fragment(run_every=1.0)
def _progress() -> None:
    job = session_job()
    if job is None:
        return
    if not job.running:
        st.rerun()  # the whole page: the run is complete now
    progress = job.progress()
    st.progress(progress.fraction, text=progress.describe())
    if job.cancel_requested:
        st.caption("Stopping: the requests in flight finish first.")
    else:
        st.button(
            "Stop",
            key="compare_job_stop",
            icon=":material/stop_circle:",
            on_click=job.cancel,
            help="Stop after the requests in flight. Outcomes scored so far are kept in the run.",
        )


def render_job_panel() -> str | None:
    """This session's job: progress with Stop while it runs; when it has ended, its outcome once.

    Returns:
        The id of the run the job has just stored (the first time the page is drawn
        after the job ended), else None.
    """
    job = session_job()
    if job is None:
        return None
    if job.running:
        st.info("Generating and scoring in the background. You can switch pages; the job goes on.")
        _progress()
        return None
    if job.error:
        st.error(job.error)
    if job.generation is not None:
        render_generation(job.generation)
    if job.shown:
        return None
    job.shown = True
    return job.run_id


def render_generation(generation: Mapping[str, Any]) -> None:
    """The generation step of a comparison: responses, tokens, cost, and the responses that failed."""
    costs = generation.get("costs") or {}
    known = [c for c in costs.values() if c is not None]
    if not costs:
        cost = "—"
    elif len(known) < len(costs):
        cost = "unknown" if not known else f"≥ ${sum(known):,.4f}"
    else:
        cost = f"${sum(known):,.4f}"
    failed = generation.get("failed") or []
    columns = st.columns(4)
    columns[0].metric("Responses generated", int(generation.get("responses", 0)) - len(failed))
    columns[1].metric("Not generated", len(failed), help="Rows that got no response: they are not scored.")
    tokens = int(generation.get("prompt_tokens", 0)) + int(generation.get("completion_tokens", 0))
    columns[2].metric(
        "Generation tokens",
        f"{tokens:,}",
        help=f"{generation.get('prompt_tokens', 0):,} prompt + {generation.get('completion_tokens', 0):,} completion "
        f"tokens; {generation.get('cached', 0)} responses came from the cache and cost nothing.",
    )
    columns[3].metric(
        "Generation cost",
        cost,
        help="At list prices of common OpenAI models; 'unknown' for a model not in the price table.",
    )
    if failed:
        st.warning(f"{len(failed)} response(s) could not be generated; those rows are missing from the comparison.")
        st.dataframe(pd.DataFrame(failed), hide_index=True)


# ---- a comparison's data


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

    def outcome(self, scorer: str, group_col: str, variant: str, pair_col: str, row_id: str) -> Any:
        """The outcome of one variant on one row for ``scorer``: a ScoreResult, a RunFailure, or None."""
        frame = self.frame
        match = frame[
            (frame["scorer"] == scorer)
            & (frame[group_col].map(variant_label) == variant)
            & (frame[pair_col].map(variant_label) == row_id)
        ]
        if match.empty:
            return None
        index = int(match["item_index"].iloc[0])
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


def load_comparison(store: Store, run_id: str) -> Comparison:
    """Read a stored run for comparison.

    Raises:
        KeyError: the run is not in the store.
    """
    run, items, result = load_run(store, run_id)
    return Comparison(run, items, result, results_frame(result, items))


def response_diff(text_a: str, text_b: str, *, title_a: str, title_b: str) -> str:
    """A word diff of two responses as safe HTML (:func:`dashboard.diff.diff_html`), A on the left.

    The word alignment is the textual-difference scorer's (B compared with A as its input).
    """
    result = create_textual_difference_scorer().run({"input": text_a or "", "output": text_b or ""})
    details = result.details
    return diff_html(
        details["referenceTokens"],
        details["responseTokens"],
        details["opcodes"],
        reference_title=title_a,
        response_title=title_b,
    )


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
    shown = board.assign(scorer=board["scorer"].map(lambda s: names.get(s, s)))
    st.dataframe(
        shown,
        hide_index=True,
        column_config={
            "mean": _NUMBER,
            "ci_low": st.column_config.NumberColumn("95% CI low", format="%.3f"),
            "ci_high": st.column_config.NumberColumn("95% CI high", format="%.3f"),
            "n_scored": st.column_config.NumberColumn("n scored"),
            "n_failed": st.column_config.NumberColumn("n failed"),
            "prompt_tokens": st.column_config.NumberColumn("judge prompt tokens"),
            "completion_tokens": st.column_config.NumberColumn("judge completion tokens"),
            "cost_usd": st.column_config.NumberColumn("generation cost (USD)", format="%.4f"),
            "latency_s": st.column_config.NumberColumn("scoring latency (s)", format="%.2f"),
        },
    )
    st.caption(
        "Means count scored items only, with a 95% bootstrap confidence interval; failed items are in n failed, "
        "never averaged as 0. Tokens are the scorer's judge tokens; the cost is that of generating the "
        "variant's responses (blank when they were not generated here or the model's price is unknown)."
    )


def render_comparison(store: Store, comparison: Comparison, *, key: str) -> None:
    """The comparison of a run's variants: leaderboard, charts, head-to-head, rows by difference, pairwise judge.

    Args:
        store: the database (the pairwise judge's cache).
        comparison: the run, from :func:`load_comparison`.
        key: prefix of every widget and chart key.
    """
    run, frame, result = comparison.run, comparison.frame, comparison.result
    key = f"{key}_{run['id']}"
    names = scorer_names(result.scorer_ids)
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
        format_func=lambda c: c.removeprefix("group:"),
    )
    pair_options = [c for c in groups if c != group_col] + ["input"]
    pair_col = right.selectbox(
        "Pairs are matched by",
        pair_options,
        index=pair_options.index(ROW_GROUP) if ROW_GROUP in pair_options else len(pair_options) - 1,
        key=f"{key}_pair",
        format_func=lambda c: "the user prompt's text" if c == "input" else c.removeprefix("group:"),
        help="Two variants' responses to the same dataset row form a pair.",
    )
    variants = comparison.variants(group_col)
    costs = (comparison.generation or {}).get("costs")
    board = leaderboard(frame, group_col=group_col, costs=costs)

    scored = int(frame["score"].notna().sum())
    columns = st.columns(4)
    columns[0].metric("Variants", len(variants))
    columns[1].metric("Rows", frame[pair_col].map(variant_label).nunique())
    columns[2].metric("Outcomes scored", scored)
    columns[3].metric("Not scored", int(len(frame) - scored), help="Counted apart, never as a score of 0.")
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
        left.plotly_chart(leaderboard_chart(board, sid, title=f"{name}: mean per variant"), key=f"{key}_board_{sid}")
        right.plotly_chart(
            score_distributions(comparison.scores(sid, group_col), title=f"{name}: scores", x_range=span),
            key=f"{key}_dist_{sid}",
        )
        means = dimension_means(frame, sid, group_col, options=_options(run, sid), store=store)
        if not means.empty:
            st.plotly_chart(
                dimension_bars(
                    means.assign(dimension=means["label"]), title=f"{name}: mean per dimension", order=variants
                ),
                key=f"{key}_dims_{sid}",
            )

    if len(variants) >= 2:
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
    a = c1.selectbox("Variant A", variants, index=0, key=f"{key}_a")
    b = c2.selectbox("Variant B", variants, index=1, key=f"{key}_b")
    sid = c3.selectbox(
        "Scorer", comparison.result.scorer_ids, key=f"{key}_scorer", format_func=lambda s: names.get(s, s)
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
        head_to_head(rows, a, b, x_range=_scale_range(comparison.run, sid), title=f"{names.get(sid, sid)}: {a} vs {b}"),
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
            column_config={f"{a} score": _NUMBER, f"{b} score": _NUMBER, "Δ (A − B)": _NUMBER},
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
    with st.container(border=True):
        st.markdown("**User prompt**")
        st.code(row["input"] or "", language=None, wrap_lines=True)
        if isinstance(row["ground_truth"], str) and row["ground_truth"]:
            st.markdown("**Ground truth**")
            st.code(row["ground_truth"], language=None, wrap_lines=True)
        left, right = st.columns(2)
        for column, variant, side in ((left, a, "a"), (right, b, "b")):
            column.markdown(f"**{md_escape(variant)}** · {md_escape(names.get(sid, sid))} {row[f'score_{side}']:.3f}")
            column.code(row[f"output_{side}"] or "", language=None, wrap_lines=True)
        st.markdown("**Text diff** (words of A struck through where B differs)")
        st.html(response_diff(row["output_a"] or "", row["output_b"] or "", title_a=a, title_b=b))
    tabs = st.tabs([f"Breakdown: {a}", f"Breakdown: {b}"])
    for tab, variant, side in ((tabs[0], a, "a"), (tabs[1], b, "b")):
        with tab:
            for scorer in comparison.result.scorer_ids:
                st.markdown(f"##### {md_escape(names.get(scorer, scorer))}")
                outcome = comparison.outcome(scorer, group_col, variant, pair_col, row_id)
                if outcome is None:
                    st.info("No outcome for this row.")
                else:
                    render_outcome(outcome, key=f"{key}_row_{side}_{scorer}")


def _render_pairwise(
    store: Store, comparison: Comparison, a: str, b: str, group_col: str, pair_col: str, key: str
) -> None:
    st.caption(
        "An LLM judge compares the two responses to each row against your rubric, twice (A shown first, then B "
        "shown first); it declares a winner only when both orders agree, else a tie. Two judge calls per row, "
        "with the sidebar's judge settings."
    )
    if not pair_col.startswith("group:"):
        st.info("The pairwise judge pairs rows by a group column (such as row_id); choose one above.")
        return
    rubric = st.text_area("Rubric", value=DEFAULT_RUBRIC, key=f"{key}_rubric", height=80)
    state_key = f"{key}_pairwise"
    wanted = (a, b, group_col, pair_col, rubric.strip())
    if st.button("Run the pairwise judge", key=f"{key}_pairwise_run", icon=":material/balance:"):
        try:
            judge = create_pairwise_judge_scorer(rubric, settings=judge_settings(), cache=store)
            judge.judge  # noqa: B018 - creating the client checks the key before any call
            with st.spinner("Judging every pair in both orders…"):
                outcomes = pairwise_over_items(
                    comparison.items_of(group_col, a),
                    comparison.items_of(group_col, b),
                    judge,
                    pair_key=pair_col.removeprefix("group:"),
                )
        except ScorerError as exc:
            st.error(str(exc))
        else:
            st.session_state[state_key] = (wanted, outcomes)
    saved = st.session_state.get(state_key)
    if saved is None or saved[0] != wanted:
        return
    outcomes = saved[1]
    if not outcomes:
        st.info("No row has a response from both variants.")
        return
    rates = win_rates(outcomes)
    st.plotly_chart(win_rate_chart(win_rate_table(rates, a, b)), key=f"{key}_winrate")
    consistency = rates["consistency"]
    st.caption(
        f"{rates['n']} pair(s) judged, {rates['n_failed']} not judged. Win rates with 95% Wilson intervals. "
        + ("" if math.isnan(consistency) else f"Both orders agreed on {consistency:.0%} of the pairs.")
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "row": o.row_id,
                    "winner": {"a": a, "b": b, "tie": "tie"}[o.verdict.winner] if o.verdict else "—",
                    "status": o.status.value,
                    "reason": o.verdict.reason if o.verdict else o.error,
                }
                for o in outcomes
            ]
        ),
        hide_index=True,
        key=f"{key}_pairwise_table",
    )


def _diff_table(rows: pd.DataFrame, names: Mapping[str, str], label_a: str, label_b: str) -> pd.DataFrame:
    table = rows.assign(scorer=rows["scorer"].map(lambda s: names.get(s, s)))
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


def render_run_diff(diff: RunDiff, *, key: str) -> None:
    """Two stored runs compared row by row (:func:`scorers.analysis.compare.run_diff`): what regressed and what improved.

    Args:
        diff: the comparison (deltas are run B − run A).
        key: prefix of every widget and chart key.
    """
    key = f"{key}_{diff.run_a}_{diff.run_b}"
    names = scorer_names([*diff.scorers, *diff.scorers_only_in_a, *diff.scorers_only_in_b])
    if not diff.same_dataset:
        st.warning(
            md_escape(diff.dataset_note)
            + " Only the rows with the same id in both runs are compared below; read the deltas with care."
        )
    elif diff.dataset_note:
        st.info(md_escape(diff.dataset_note))
    else:
        st.success(f"Both runs score the same dataset ({len(set(diff.rows['item_id']))} rows matched by id).")
    for label, only in ((diff.name_a, diff.scorers_only_in_a), (diff.name_b, diff.scorers_only_in_b)):
        if only:
            st.caption(md_escape(f"Only in {label}: {', '.join(names[s] for s in only)} (not compared)."))
    if not diff.scorers:
        st.warning("The two runs have no scorer in common: there is nothing to compare.")
        return
    columns = st.columns(4)
    compared = int(diff.rows["delta"].notna().sum())
    columns[0].metric("Outcomes compared", compared, help="Scored in both runs.")
    columns[1].metric("Regressions", len(diff.regressions), help="Lower score in run B.")
    columns[2].metric("Improvements", len(diff.improvements), help="Higher score in run B.")
    columns[3].metric("Unchanged", int((diff.rows["delta"] == 0).sum()))
    for sid in diff.scorers:
        summary = diff.comparisons[sid].summary()
        st.markdown(f"**{md_escape(names[sid])}** — {md_escape(summary)}")
    overall = pd.DataFrame(
        {
            "name": [names[s] for s in diff.scorers],
            "delta": [diff.comparisons[s].mean_diff for s in diff.scorers],
        }
    )
    left, right = st.columns(2)
    left.plotly_chart(delta_bars(overall, title="Mean change per scorer (B − A, paired rows)"), key=f"{key}_scorers")
    dims = diff.dimensions
    dims = dims.assign(
        name=[f"{names.get(s, s)} · {lab}" for s, lab in zip(dims["scorer"], dims["label"], strict=True)]
    )
    right.plotly_chart(delta_bars(dims, title="Mean change per dimension (B − A)"), key=f"{key}_dims")
    config = {"Δ (B − A)": st.column_config.NumberColumn(format="%+.3f")}
    st.markdown(f"#### Regressions ({len(diff.regressions)})")
    if diff.regressions.empty:
        st.caption("No row scored lower in run B.")
    else:
        st.dataframe(
            _diff_table(diff.regressions, names, "A", "B"),
            hide_index=True,
            key=f"{key}_regressions",
            column_config=config,
        )
    st.markdown(f"#### Improvements ({len(diff.improvements)})")
    if diff.improvements.empty:
        st.caption("No row scored higher in run B.")
    else:
        st.dataframe(
            _diff_table(diff.improvements, names, "A", "B"),
            hide_index=True,
            key=f"{key}_improvements",
            column_config=config,
        )
