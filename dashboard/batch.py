"""Batch runs for the dashboard, without Streamlit: items from a mapped dataset, the stored run
record, a run in a background thread with its progress, and the tables the pages show.

A batch run is always a stored run: :func:`create_batch_run` writes the run and its
items first, and :func:`start_batch_job` then scores it through ``run_evals(run_id=...)``,
which writes each outcome as it finishes. Stopping, resuming and retrying failed items
are therefore the same operation, and a Streamlit rerun never scores anything again
(the judge cache answers an unchanged call from the store).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorers import (
    EvalItem,
    EvalRunResult,
    JudgeSettings,
    LoadedDataset,
    RunStatus,
    Scorer,
    ScorerError,
    Store,
    create_scorer,
    iter_runs,
    load_run,
    normalize_run,
    run_evals,
)
from scorers.analysis.labels import scorer_scale
from scorers.catalogue.registry import TARGET_LABELS
from scorers.core.base import RUN_FIELDS, RunInput, decimal_text
from scorers.core.budget import BudgetCaps
from scorers.core.errors import outcome_status_label, run_status_short_label
from scorers.runs import jobs
from scorers.runs.batch_api import run_batch_api
from scorers.runs.datasets import response_text, response_text_key, unmapped_columns
from scorers.runs.judges import judge_record, recorded_judge_settings, run_prices
from scorers.runs.runner import DEFAULT_MAX_CONSECUTIVE_FAILURES, judge_model_of, stored_scorer_options

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
SAMPLE_DATASETS: dict[str, Path] = {
    "examples.csv": SAMPLE_DIR / "examples.csv",
    "examples.jsonl": SAMPLE_DIR / "examples.jsonl",
}
"""Sample datasets the Batch page offers, by file name."""

UPLOAD_TYPES: tuple[str, ...] = ("csv", "tsv", "txt", "jsonl", "ndjson", "json", "parquet", "xlsx")
"""File extensions the Batch page's uploader accepts (what :func:`scorers.load_dataset` reads)."""

ROLE_LABELS: dict[str, str] = {
    "input": "User prompt",
    "system": "System message",
    "output": "Response",
    "ground_truth": "Ground truth",
    "id": "Row id",
    "context": "Context passages",
    "tool_calls": "Tool calls",
    "messages": "Conversation (messages)",
}
"""Dataset roles (``scorers.runs.datasets.ROLES``) and their labels on the page."""


DEFAULT_CONCURRENCY = 8
DEFAULT_ITEM_TIMEOUT_S = 180.0
BATCH_POLL_INTERVAL_S = 30.0  # seconds between two looks at a Batch API run's open batches


# ---- dataset → items → stored run


def _group_value(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


def build_items(
    dataset: LoadedDataset, mapping: Mapping[str, str | None], group_by: Sequence[str] = ()
) -> list[EvalItem]:
    """The run's items: one :class:`~scorers.EvalItem` per dataset row, in row order.

    Args:
        dataset: the loaded dataset.
        mapping: role → column (``input`` and ``output`` required; ``system``,
            ``ground_truth`` and ``id`` optional), as for :func:`scorers.iter_runs`.
        group_by: columns whose values are kept as the items' groups (e.g. a variant
            or model column); blank cells become None.

    Returns:
        The items; ``item_id`` is the id column's text or the row label (``"line 12"``);
        ``columns`` holds the row's unmapped columns (:func:`scorers.runs.datasets.unmapped_columns`).

    Raises:
        DatasetError: a required role is not mapped, a column is missing, or the id
            column repeats a value (see :func:`scorers.iter_runs`).
    """
    runs = list(iter_runs(dataset, mapping))
    columns = {name: dataset.frame[name].tolist() for name in group_by}
    others = unmapped_columns(dataset, mapping, exclude=group_by)
    return [
        EvalItem(
            item_id, payload, {name: _group_value(values[index]) for name, values in columns.items()}, others[index]
        )
        for index, item_id, payload in runs
    ]


def field_text(run: RunInput, name: str) -> str:
    """One run field as the scorers read it, as text (context passages and tool calls one per line)."""
    if name == "input":
        return run.user_text
    if name == "system":
        return run.system_text
    if name == "output":
        return run.output
    if name == "ground_truth":
        return run.ground_truth or ""
    if name == "context":
        return "\n---\n".join(run.context)
    return "\n".join(f"{c.name}({'' if c.arguments is None else c.arguments})" for c in run.tool_calls)


def _readable_fields(payload: Mapping[str, Any], reads: Sequence[str]) -> tuple[RunInput | None, Sequence[str]]:
    """A run that cannot be scored, for display: the payload normalised and every field shown; when
    its output is missing or unreadable, the other fields (the output shown as None); else nothing."""
    try:
        return normalize_run(payload), reads
    except ScorerError:
        pass
    try:
        return normalize_run({**payload, "output": ""}), [name for name in reads if name != "output"]
    except ScorerError:
        return None, ()


PREVIEW_ID = "id (or where the row starts in the file)"
"""The heading of a preview's first column: the id column's value, or without one where the row starts in the file
(``"line 6480"``: a physical line of a CSV or JSON Lines file, which cells over several lines move away from the row's
number; ``"row N"`` for a spreadsheet row or a JSON record)."""


def scorer_preview(items: Sequence[EvalItem], scorer: Any, limit: int = 3) -> pd.DataFrame:
    """The first ``limit`` rows exactly as ``scorer`` will read them, before any call.

    Args:
        items: the run's items.
        scorer: a scorer from :func:`scorers.create_scorer` (its ``check`` applies the field rules; a judged
            scorer's ``render_prompt`` its own input checks, e.g. prompt alignment's evaluation mode, as a run does).
        limit: rows to show.

    Returns:
        Columns :data:`PREVIEW_ID`, ``status`` (``"will be scored"`` or ``"not scored: Missing input (...)"``, the status as
        :func:`~scorers.core.errors.outcome_status_label` words it)
        and one per field the scorer reads (``ScorerSpec.reads``), by the field's label.
    """
    spec = getattr(scorer, "spec", None)
    reads = spec.reads if spec is not None else RUN_FIELDS
    rows = []
    for item in items[:limit]:
        row: dict[str, Any] = {PREVIEW_ID: item.item_id}
        try:
            run = scorer.check(item.payload) if hasattr(scorer, "check") else normalize_run(item.payload)
            if hasattr(scorer, "render_prompt"):  # a judged scorer's own input checks too (no call), as estimate_run
                scorer.render_prompt(item.payload)
            row["status"] = "will be scored"
        except ScorerError as exc:
            run = None
            row["status"] = f"not scored: {outcome_status_label(exc.status.value)} ({exc})"
        shown = reads
        if run is None:
            run, shown = _readable_fields(item.payload, reads)
        for name in reads:
            row[ROLE_LABELS.get(name, name)] = truncate(field_text(run, name), 300) if name in shown else None
        rows.append(row)
    return pd.DataFrame(rows)


def create_batch_run(
    store: Store,
    *,
    items: Sequence[EvalItem],
    scorers: Sequence[Scorer],
    scorer_options: Mapping[str, Mapping[str, Any]],
    settings: JudgeSettings | None,
    dataset_name: str,
    mapping: Mapping[str, str | None],
    group_by: Sequence[str] = (),
    concurrency: int = DEFAULT_CONCURRENCY,
    item_timeout: float | None = DEFAULT_ITEM_TIMEOUT_S,
    name: str | None = None,
    batch_api: bool = False,
    live_follow_ups: bool = False,
    limits: Mapping[str, Any] | None = None,
) -> str:
    """Record a new run and its items in the store, before anything is scored.

    The record has the shape the CLI writes (scorer options under ``scorers[].options``
    and ``config["scorerOptions"]``), so either can resume a run the other started.

    Args:
        store: the database.
        items: the items, in dataset order.
        scorers: the scorers, built from ``scorer_options``.
        scorer_options: scorer id → its options.
        settings: the judge settings when a scorer uses a judge (every setting but the key is
            stored: :func:`scorers.runs.judges.judge_record`), else None.
        dataset_name: the dataset's file name.
        mapping: role → column.
        group_by: the group-by columns.
        concurrency: items scored at once.
        item_timeout: seconds per item, or None.
        name: the run's display name (default: dataset and date).
        batch_api: score through the provider's Batch API (:mod:`scorers.runs.batch_api`).
        live_follow_ups: with ``batch_api``, re-ask invalid output live instead of in a follow-up batch.
        limits: more config recorded with the run and used whenever it is scored: ``budget``
            (:meth:`scorers.core.budget.BudgetCaps.to_dict`), ``price`` (``[input, output]`` USD
            per million tokens, or None), ``max_consecutive_failures``, ``cache`` (False to
            bypass the judge cache), ``truncated`` (item id → original response length) and
            ``skipped_long`` (ids of items left out for a long response).

    Returns:
        The new run's id.
    """
    uses_judge = any(getattr(s, "settings", None) is not None for s in scorers)
    return store.create_run(
        dataset_name=dataset_name,
        items=[(it.item_id, it.payload, it.groups, it.columns) for it in items],
        scorers=[{"id": s.id, "name": s.name, "options": dict(scorer_options.get(s.id, {}))} for s in scorers],
        judge=judge_record(settings) if uses_judge else None,
        mapping={**mapping, "groups": list(group_by)},
        config={
            "source": "dashboard",
            "dataset": dataset_name,
            "scorerOptions": {s.id: dict(scorer_options.get(s.id, {})) for s in scorers},
            "concurrency": concurrency,
            "item_timeout": item_timeout,
            "cache": True,
            "batch_api": batch_api,
            "live_follow_ups": live_follow_ups,
            **dict(limits or {}),
        },
        name=name.strip() if name and name.strip() else None,
    )


CONFIRM_ABOVE_CALLS = 1000
CONFIRM_ABOVE_USD = 5.0
"""A run estimated above this many judge calls or this cost asks for confirmation before it starts."""


def needs_confirmation(judge_calls: int, cost_usd: float | None) -> bool:
    """True when an estimate is above :data:`CONFIRM_ABOVE_CALLS` calls or :data:`CONFIRM_ABOVE_USD` dollars."""
    return judge_calls > CONFIRM_ABOVE_CALLS or (cost_usd is not None and cost_usd > CONFIRM_ABOVE_USD)


def long_responses(items: Sequence[EvalItem], limit: int) -> list[int]:
    """Indexes of the items whose response text is longer than ``limit`` characters (``limit`` >= 1)."""
    return [i for i, it in enumerate(items) if len(response_text(it.payload) or "") > limit]


def limit_responses(items: Sequence[EvalItem], limit: int, action: str) -> tuple[list[EvalItem], dict[str, Any]]:
    """Truncate or skip the items whose response is longer than ``limit`` characters.

    Args:
        items: the run's items.
        limit: characters, >= 1.
        action: ``"truncate"`` (keep the first ``limit`` characters) or ``"skip"`` (leave the item out).

    Returns:
        ``(items, record)``: the items to score, and what the run records:
        ``{"truncated": {item id: original length}}`` or ``{"skipped_long": [item ids]}``.

    Raises:
        ValueError: an unknown action.
    """
    if action not in ("truncate", "skip"):
        raise ValueError(f"action must be 'truncate' or 'skip', got {action!r}")
    long = set(long_responses(items, limit))
    if action == "skip":
        return [it for i, it in enumerate(items) if i not in long], {"skipped_long": [items[i].item_id for i in long]}
    out, lengths = [], {}
    for i, it in enumerate(items):
        if i in long:
            text = response_text(it.payload) or ""
            lengths[it.item_id] = len(text)
            output = it.payload["output"]
            cut = text[:limit] if isinstance(output, str) else {**output, response_text_key(output): text[:limit]}
            it = replace(it, payload={**it.payload, "output": cut})
        out.append(it)
    return out, {"truncated": lengths}


def run_limits(run: Mapping[str, Any], model: str | None) -> dict[str, Any]:
    """The :func:`scorers.run_evals` keyword arguments a stored run's config sets: budget, price, K.

    Args:
        run: the stored run (:meth:`scorers.Store.get_run`).
        model: the judge model that scores it now: ``price`` is the one recorded for it
            (:func:`scorers.runs.judges.run_prices`), None for its list price.
    """
    config = run.get("config") or {}
    return {
        "budget": BudgetCaps.from_dict(config.get("budget")),
        "price": run_prices(run).get(model) if model else None,
        "max_consecutive_failures": config.get("max_consecutive_failures") or DEFAULT_MAX_CONSECUTIVE_FAILURES,
    }


def resume_settings(run: Mapping[str, Any], settings: JudgeSettings) -> JudgeSettings:
    """The judge settings to resume a stored run with: the run's judge, every setting as recorded, with the current key.

    A resumed run keeps the model, endpoint, temperature, seed, max output tokens and timeout it started with
    (:func:`scorers.runs.judges.recorded_judge_settings`), so its results stay comparable, unchanged calls are
    answered by the cache and a budget bounds each call as it did; the API key (never stored) comes from ``settings``.
    """
    return recorded_judge_settings(run.get("judge"), settings) if run.get("judge") else settings


def scorers_for_run(run: Mapping[str, Any], settings: JudgeSettings | None, cache: Any = None) -> list[Scorer]:
    """Rebuild a stored run's scorers, with their stored options.

    Raises:
        InvalidInputError: a scorer id is unknown or an option is invalid.
    """
    return [
        create_scorer(sid, options, settings=settings, cache=cache, store=cache if isinstance(cache, Store) else None)
        for sid, options in stored_scorer_options(run).items()
    ]


def work_left(run_result: EvalRunResult, *, retry_failed: bool = False) -> int:
    """Items that still need scoring: some scorer has no outcome (or, with ``retry_failed``, a retryable one)."""
    done: dict[int, set[str]] = {}
    for o in run_result.outcomes:
        if not (retry_failed and o.status.retryable):
            done.setdefault(o.item_index, set()).add(o.scorer_id)
    wanted = set(run_result.scorer_ids)
    return sum(not wanted <= done.get(i, set()) for i in range(run_result.n_items))


# ---- the background job


def start_batch_job(
    store: Store,
    run_id: str,
    scorers: Sequence[Scorer],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    item_timeout: float | None = DEFAULT_ITEM_TIMEOUT_S,
    retry_failed: bool = False,
) -> str:
    """Score a stored run as a background job of this process (:mod:`scorers.runs.jobs`).

    The job calls :func:`scorers.run_evals` with ``run_id`` (resume semantics):
    outcomes already stored are kept, each new one is written as it finishes, and
    stopping the job stops the run after the judge calls in flight. A run recorded with
    ``batch_api`` in its config goes through :func:`scorers.runs.batch_api.run_batch_api`
    instead (stopping it leaves its batches to a later resume). Its result is the
    :class:`~scorers.EvalRunResult`.

    Args:
        store: the database holding the run (also the judge cache of ``scorers``).
        run_id: the stored run.
        scorers: the run's scorers (see :func:`scorers_for_run`).
        concurrency: items scored at once, >= 1.
        item_timeout: seconds per item, or None.
        retry_failed: score the outcomes that are not scored again too.

    Returns:
        The job id.

    Raises:
        ValueError: concurrency < 1.
        JobConflict: the run is already being scored in this process.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    run, _, before = load_run(store, run_id)
    total = work_left(before, retry_failed=retry_failed)

    def work(ctx: jobs.JobContext) -> EvalRunResult:
        ctx.progress(done=0, total=total, phase="scoring")

        try:
            if before.batch_api:
                result = run_batch_api(
                    [],
                    list(scorers),
                    store=store,
                    run_id=run_id,
                    retry_failed=retry_failed,
                    live_follow_ups=bool((run["config"] or {}).get("live_follow_ups")),
                    poll_interval=BATCH_POLL_INTERVAL_S,
                    on_item_complete=ctx.on_item_complete,
                    cancel=ctx.cancel,
                )
            else:
                result = run_evals(
                    [],
                    list(scorers),
                    concurrency=concurrency,
                    item_timeout=item_timeout,
                    store=store,
                    run_id=run_id,
                    retry_failed=retry_failed,
                    on_item_complete=ctx.on_item_complete,
                    cancel=ctx.cancel,
                    **run_limits(run, judge_model_of(scorers)),
                )
        except Exception:
            store.finish_run(run_id, RunStatus.FAILED.value)  # the outcomes stored so far are kept
            raise
        # Items recorded by the runner's timeout never reach on_item_complete.
        ctx.progress(done=total - work_left(result))
        return result

    what = "Retrying failed items of" if retry_failed else "Scoring"
    job_id = jobs.start("batch", f"{what} {run['name']} ({run_id})", work, key=jobs.run_key(run_id), run_id=run_id)
    _JOB_JUDGE_MODELS[job_id] = judge_model_of(scorers)
    return job_id


_JOB_JUDGE_MODELS: dict[str, str | None] = {}
"""Job id → the judge model its scorers use (a resume or retry may use another judge than the run's)."""


def job_judge_model(job_id: str) -> str | None:
    """The judge model a batch job of this process (:func:`start_batch_job`) scores with, or None (no judge, or unknown)."""
    return _JOB_JUDGE_MODELS.get(job_id)


# ---- tables


def truncate(text: Any, limit: int = 120) -> Any:
    """A text cut to ``limit`` characters with "…" (whitespace runs collapsed); other values unchanged.

    >>> truncate("a  long\\ntext", 8)
    'a long…'
    """
    if not isinstance(text, str):
        return text
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def runs_table(runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The History list: one row per stored run (as :meth:`scorers.Store.list_runs` returns them).

    Columns: ``id``, ``created`` (UTC, ``YYYY-MM-DD HH:MM``), ``name``, ``status``, one
    ``mean: <scorer id>`` column per scorer found in any run, one per comparison target for a
    scorer that has one (``mean: textual-difference (vs input)``; NaN when the run has no such
    scorer or nothing scored; ``attrs["no_scored"]`` lists the (row position, column) cells of a used
    scorer that scored no item, and ``attrs["per_variant"]`` the (row position, column, text) cells of a run of
    variants, whose mean is each variant's, e.g. "gpt4 0.473 · gpt4_short 0.506", see :func:`runs_table_styler`), ``scored``, ``not scored``, ``pending`` (outcomes),
    ``items``, ``dataset``, ``scorers`` and ``first judge`` (the model of the judge the run started with; a run resumed or retried with another judge names every judge in its own view).

    ``status`` is the stored one (a :class:`~scorers.RunStatus` value) in a few words
    (:func:`scorers.core.errors.run_status_short_label`; the table's help gives the CLI's ``runs`` wording): it is kept true
    while the run is scored, and a run left ``running`` by a process that died is marked
    ``interrupted`` when the dashboard starts.
    """

    def columns(run: Mapping[str, Any]) -> dict[str, str]:
        # Textual difference against the ground truth and against the input measure different things, and a
        # mean on a 0-10 scale is not one on 0-1: each is its own column.
        targets = {sid: options.get("target") for sid, options in stored_scorer_options(run).items()}
        named = {}
        for sid in (s["id"] for s in run.get("scorers") or []):
            notes = [TARGET_LABELS[t]] if (t := targets.get(sid)) in TARGET_LABELS else []
            if (scale := scorer_scale(run, sid)) != 1:
                notes.append(f"0–{scale:g}")
            named[sid] = f"mean: {sid}" + (f" ({', '.join(notes)})" if notes else "")
        return named

    mean_columns = [columns(run) for run in runs]
    means = list(dict.fromkeys(name for named in mean_columns for name in named.values()))
    rows: list[dict[str, Any]] = []
    no_scored: list[tuple[int, str]] = []
    per_variant: list[tuple[int, str, str]] = []
    for run, named in zip(runs, mean_columns, strict=True):
        stats = run.get("stats") or {}
        ids = [s["id"] for s in run.get("scorers") or []]
        scored = sum(int(stats.get(sid, {}).get("n_scored") or 0) for sid in ids)
        failed = sum(int(stats.get(sid, {}).get("n_failed") or 0) for sid in ids)
        row = {
            "id": run["id"],
            "created": str(run["created_at"])[:16].replace("T", " "),
            "name": run["name"],
            "dataset": run["dataset_name"],
            "scorers": ", ".join(s.get("name") or s["id"] for s in run.get("scorers") or []),
            "first judge": (run.get("judge") or {}).get("model") or "—",
            "items": run["n_items"],
            "scored": scored,
            "not scored": failed,
            "pending": max(0, run["n_items"] * len(ids) - scored - failed),
            "status": run_status_short_label(run["status"]),
        }
        row |= dict.fromkeys(means, float("nan"))
        for sid in ids:
            mean = stats.get(sid, {}).get("mean")
            row[named[sid]] = float("nan") if mean is None else float(mean)
            if variants := (run.get("variant_stats") or {}).get(sid):
                # A mean over every variant's responses mixes them: each variant's mean, as text.
                text = " · ".join(
                    f"{v} {NO_SCORED_ITEMS if s['mean'] is None else decimal_text(s['mean'])}"
                    for v, s in variants.items()
                )
                per_variant.append((len(rows), named[sid], text))
            elif mean is None:
                no_scored.append((len(rows), named[sid]))
        rows.append(row)
    columns = [
        "id",
        "created",
        "name",
        "status",
        *means,
        "scored",
        "not scored",
        "pending",
        "items",
        "dataset",
        "scorers",
        "first judge",
    ]
    table = pd.DataFrame(rows, columns=columns)
    table.attrs["no_scored"] = no_scored
    table.attrs["per_variant"] = per_variant
    return table


NO_SCORED_ITEMS = "no scored items"
"""A used scorer's mean when none of its items was scored (every outcome failed, or none was scored yet)."""
NOT_USED = "—"
"""A scorer's mean in a run that did not use it."""


def runs_table_styler(table: pd.DataFrame) -> Any:
    """The History list as shown: means to 3 decimals, :data:`NOT_USED` where the run did not use the
    scorer, :data:`NO_SCORED_ITEMS` where it used it but scored no item (the counts say why), and each
    variant's mean for a run of variants ("gpt4 0.473 · gpt4_short 0.506"; it sorts below every mean).

    Streamlit's grid shows its placeholder for every missing value, whatever the Styler says, so a used
    scorer's mean without a score is -inf in the styled data (it sorts below every mean) shown as
    :data:`NO_SCORED_ITEMS`; a scorer the run did not use stays NaN, shown as :data:`NOT_USED` by
    :func:`dashboard.run_explorer.show_runs_table`'s placeholder.

    Args:
        table: :func:`runs_table`'s frame, with the cells of ``attrs["no_scored"]`` (row position, column)
            a used scorer's mean without a score; columns may have been dropped.

    Returns:
        A pandas ``Styler`` for ``st.dataframe`` (the values stay numbers, so columns sort as numbers).
    """
    means = [c for c in table.columns if c.startswith("mean:")]
    data = table.copy()
    texts = [(position, column, NO_SCORED_ITEMS) for position, column in table.attrs.get("no_scored", [])]
    texts += table.attrs.get("per_variant", [])
    cells = [(data.index[position], column, text) for position, column, text in texts if column in data.columns]
    for row, column, _ in cells:
        data.loc[row, column] = -math.inf
    styler = data.style.format(lambda v: decimal_text(v) if math.isfinite(v) else v, subset=means, na_rep=NOT_USED)
    for row, column, text in cells:
        styler = styler.format(lambda _, text=text: text, subset=pd.IndexSlice[row, column])
    return styler
