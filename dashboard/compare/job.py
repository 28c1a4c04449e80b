"""The Compare page's background job: generate (optional), then score into the store."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    EvalItem,
    EvalRunResult,
    JudgeSettings,
    Scorer,
    ScorerError,
    Store,
    run_evals,
)
from scorers.analysis.generate import (
    Variant,
    comparison_items,
    failed_generations,
    generate_responses,
    generation_costs,
)

from ..batch import format_duration

JOB_KEY = "compare_job"
"""Session-state key of this session's :class:`CompareJob`."""


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
