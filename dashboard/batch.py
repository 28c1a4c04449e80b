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
import re
from collections.abc import Callable, Mapping, Sequence
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
    ScoreStatus,
    Store,
    Summary,
    create_scorer,
    iter_runs,
    load_run,
    run_evals,
)
from scorers.runs import jobs
from scorers.runs.batch_api import run_batch_api
from scorers.runs.export import results_frame

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
}
"""Dataset roles (``scorers.runs.datasets.ROLES``) and their labels on the page."""

TEXT_COLUMNS: tuple[str, ...] = ("input", "system", "output", "ground_truth", "reason", "error")
"""Columns of :func:`result_rows` holding free text (truncated in the table, searched in full)."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

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
        The items; ``item_id`` is the id column's text or the row label (``"line 12"``).

    Raises:
        DatasetError: a required role is not mapped, a column is missing, or the id
            column repeats a value (see :func:`scorers.iter_runs`).
    """
    runs = list(iter_runs(dataset, mapping))
    columns = {name: dataset.frame[name].tolist() for name in group_by}
    return [
        EvalItem(item_id, payload, {name: _group_value(values[index]) for name, values in columns.items()})
        for index, item_id, payload in runs
    ]


def judge_record(settings: JudgeSettings | None) -> dict[str, Any] | None:
    """What a stored run keeps of its judge: model, endpoint, temperature and seed (never the key)."""
    if settings is None:
        return None
    return {
        "model": settings.model_name,
        "baseUrl": settings.endpoint,
        "temperature": settings.temperature,
        "seed": settings.seed,
    }


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
) -> str:
    """Record a new run and its items in the store, before anything is scored.

    The record has the shape the CLI writes (scorer options under ``scorers[].options``
    and ``config["scorerOptions"]``), so either can resume a run the other started.

    Args:
        store: the database.
        items: the items, in dataset order.
        scorers: the scorers, built from ``scorer_options``.
        scorer_options: scorer id → its options.
        settings: the judge settings when a scorer uses a judge (only model, endpoint,
            temperature and seed are stored), else None.
        dataset_name: the dataset's file name.
        mapping: role → column.
        group_by: the group-by columns.
        concurrency: items scored at once.
        item_timeout: seconds per item, or None.
        name: the run's display name (default: dataset and date).
        batch_api: score through the provider's Batch API (:mod:`scorers.runs.batch_api`).
        live_follow_ups: with ``batch_api``, re-ask invalid output live instead of in a follow-up batch.

    Returns:
        The new run's id.
    """
    uses_judge = any(getattr(s, "settings", None) is not None for s in scorers)
    return store.create_run(
        dataset_name=dataset_name,
        items=[(it.item_id, it.payload, it.groups) for it in items],
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
        },
        name=name.strip() if name and name.strip() else None,
    )


def stored_scorer_options(run: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Scorer id → the options a stored run was started with (``{}`` when not recorded)."""
    config = run.get("config") or {}
    from_config = config.get("scorerOptions") or {}
    out = {}
    for entry in run.get("scorers") or []:
        options = entry.get("options")
        out[entry["id"]] = dict(options if options is not None else from_config.get(entry["id"]) or {})
    return out


def resume_settings(run: Mapping[str, Any], settings: JudgeSettings) -> JudgeSettings:
    """The judge settings to resume a stored run with: the run's judge, with the current key.

    A resumed run keeps the model, endpoint, temperature and seed it started with, so
    its results stay comparable and unchanged calls are answered by the cache; the
    API key (never stored) comes from ``settings``.
    """
    judge = run.get("judge") or {}
    if not judge:
        return settings
    return replace(
        settings,
        model=judge.get("model") or settings.model,
        base_url=judge.get("baseUrl") or settings.base_url,
        temperature=judge.get("temperature", settings.temperature),
        seed=judge.get("seed", settings.seed),
    )


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
    """Items that still need scoring: some scorer has no outcome (or, with ``retry_failed``, a failed one)."""
    done: dict[int, set[str]] = {}
    for o in run_result.outcomes:
        if not (retry_failed and o.status is not ScoreStatus.SCORED):
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
                )
        except Exception:
            store.finish_run(run_id, RunStatus.FAILED.value)  # the outcomes stored so far are kept
            raise
        # Items recorded by the runner's timeout never reach on_item_complete.
        ctx.progress(done=total - work_left(result))
        return result

    what = "Retrying failed items of" if retry_failed else "Scoring"
    return jobs.start("batch", f"{what} {run['name']} ({run_id})", work, key=jobs.run_key(run_id), run_id=run_id)


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


def result_rows(run_result: EvalRunResult, items: Sequence[EvalItem]) -> pd.DataFrame:
    """One row per item × scorer with the full texts (for filtering, search and the drill-down).

    Columns: ``item_index``, ``item_id``, ``scorer``, ``score`` (float, NaN when not
    scored), ``status``, ``error``, ``input``, ``output``, ``ground_truth``, ``system``,
    ``reason``, one ``group:<name>`` per group-by column, then
    ``prompt_tokens``, ``completion_tokens``, ``judge_calls``, ``latency_s``.
    """
    frame = results_frame(run_result, items).drop(columns=["run_id", "analysis"])
    groups = [c for c in frame.columns if str(c).startswith("group:")]
    order = [
        "item_index",
        "item_id",
        "scorer",
        "score",
        "status",
        "error",
        "input",
        "output",
        "ground_truth",
        "system",
        "reason",
        *groups,
        "prompt_tokens",
        "completion_tokens",
        "judge_calls",
        "latency_s",
    ]
    return frame[order]


def filter_rows(
    rows: pd.DataFrame,
    *,
    statuses: Sequence[str] | None = None,
    scorers: Sequence[str] | None = None,
    score_range: tuple[float, float] | None = None,
    search: str = "",
) -> pd.DataFrame:
    """Filter :func:`result_rows`.

    Args:
        rows: the frame of :func:`result_rows`.
        statuses: keep these statuses (``ScoreStatus`` values); None keeps all.
        scorers: keep these scorer ids; None keeps all.
        score_range: keep scored rows with ``lo <= score <= hi``; rows that were not
            scored have no score and are kept or dropped by ``statuses`` alone.
        search: case-insensitive text searched in the item id and every text column
            (the whole texts, not the truncated ones); blank keeps all.

    Returns:
        The matching rows, in their order.
    """
    keep = pd.Series(True, index=rows.index)
    if statuses is not None:
        keep &= rows["status"].isin(list(statuses))
    if scorers is not None:
        keep &= rows["scorer"].isin(list(scorers))
    if score_range is not None:
        lo, hi = score_range
        scored = rows["score"].notna()
        keep &= ~scored | rows["score"].between(lo, hi)
    needle = search.strip().casefold()
    if needle:
        columns = ["item_id", *[c for c in TEXT_COLUMNS if c in rows.columns]]
        hit = pd.Series(False, index=rows.index)
        for column in columns:
            hit |= rows[column].map(lambda v: isinstance(v, str) and needle in v.casefold())
        keep &= hit
    return rows[keep]


def display_rows(rows: pd.DataFrame, limit: int = 120) -> pd.DataFrame:
    """:func:`result_rows` for the table: long texts truncated (see :func:`truncate`)."""
    shown = rows.copy()
    for column in TEXT_COLUMNS:
        if column in shown.columns:
            shown[column] = shown[column].map(lambda v: truncate(v, limit))
    return shown


def aggregates_frame(run_result: EvalRunResult, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per scorer: mean, median, std, min, max of the scored items, n scored, n failed, n pending.

    Failed items never count as 0: they are counted in ``n failed`` only. ``n pending``
    is items without an outcome yet (a stopped run). ``std`` is the sample standard
    deviation (NaN with fewer than two scores).

    Args:
        run_result: the run.
        names: scorer id → display name (default: the id).
    """
    rows = []
    counted: dict[str, int] = {}
    for o in run_result.outcomes:
        counted[o.scorer_id] = counted.get(o.scorer_id, 0) + 1
    for sid, summary in run_result.scores().items():
        rows.append(
            _summary_row(
                {"scorer": (names or {}).get(sid, sid)}, summary, pending=run_result.n_items - counted.get(sid, 0)
            )
        )
    return pd.DataFrame(
        rows, columns=["scorer", "mean", "median", "std", "min", "max", "n scored", "n failed", "n pending"]
    )


def _summary_row(head: dict[str, Any], summary: Summary, pending: int | None = None) -> dict[str, Any]:
    row = {
        **head,
        "mean": summary.mean,
        "median": summary.median,
        "std": summary.std,
        "min": summary.min,
        "max": summary.max,
        "n scored": summary.n_scored,
        "n failed": summary.n_failed,
    }
    if pending is not None:
        row["n pending"] = pending
    return {k: (float("nan") if v is None else v) for k, v in row.items()}


def dimension_label(name: str) -> str:
    """A readable label for a key of a scorer's ``dimension_scores``: camelCase split into words, dots as " · ".

    >>> dimension_label("user.intentAlignment")
    'User · Intent alignment'
    >>> dimension_label("ratio")
    'Ratio'
    """
    parts = []
    for part in name.split("."):
        words = _CAMEL.sub(" ", part).replace("_", " ").lower()
        parts.append(words[:1].upper() + words[1:])
    return " · ".join(parts)


def dimension_splitters(scorer_options: Mapping[str, Mapping[str, Any]]) -> dict[str, Callable[..., dict[str, float]]]:
    """Scorer id → its ``dimension_scores(analysis)`` function, for the scorers that have one.

    Each scorer is built (with its options and keyless judge settings: no call is made)
    only to find its class's function; a scorer that cannot be built has no dimensions.

    Args:
        scorer_options: scorer id → options, e.g. :func:`stored_scorer_options` of a run.
    """
    out = {}
    for sid, options in scorer_options.items():
        try:
            scorer = create_scorer(sid, options, settings=JudgeSettings())
        except ScorerError:
            continue
        split = getattr(scorer, "dimension_scores", None)
        if callable(split):
            out[sid] = split
    return out


def dimension_frame(
    run_result: EvalRunResult, splitters: Mapping[str, Callable[..., dict[str, float]]] | None = None
) -> pd.DataFrame:
    """The 0..1 dimension scores of the scored items, long: one row per item × scorer × dimension.

    Args:
        run_result: the run.
        splitters: scorer id → ``dimension_scores`` (default: :func:`dimension_splitters`
            of the run's scorers with default options).

    Returns:
        Columns ``item_index``, ``item_id``, ``scorer``, ``dimension`` (a label such as
        ``"User · Intent alignment"``, see :func:`dimension_label`) and ``value``. Only
        scorers with a dimension breakdown contribute; failed items have no row.
    """
    if splitters is None:
        splitters = dimension_splitters({sid: {} for sid in run_result.scorer_ids})
    rows = []
    for o in run_result.outcomes:
        split = splitters.get(o.scorer_id)
        if split is None or o.result is None:
            continue
        for name, value in split(o.result.analyze_step_result).items():
            rows.append(
                {
                    "item_index": o.item_index,
                    "item_id": o.item_id,
                    "scorer": o.scorer_id,
                    "dimension": dimension_label(name),
                    "value": float(value),
                }
            )
    return pd.DataFrame(rows, columns=["item_index", "item_id", "scorer", "dimension", "value"])


def dimension_aggregates(dimensions: pd.DataFrame) -> pd.DataFrame:
    """Per scorer and dimension: mean, median, std, min, max and n scored of :func:`dimension_frame`."""
    rows = []
    for (scorer, dimension), part in dimensions.groupby(["scorer", "dimension"], sort=False):
        rows.append(_summary_row({"scorer": scorer, "dimension": dimension}, Summary.of(part["value"].tolist())))
    columns = ["scorer", "dimension", "mean", "median", "std", "min", "max", "n scored", "n failed"]
    return pd.DataFrame(rows, columns=columns).drop(columns=["n failed"])


def _group_key(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == "":
        return "(blank)"
    return str(value)


def group_means(rows: pd.DataFrame, group: str) -> pd.DataFrame:
    """Mean score per group value and scorer, with counts; failed items are counted, never averaged.

    Args:
        rows: :func:`result_rows` (with its ``group:<group>`` column).
        group: the group-by column's name.

    Returns:
        Columns ``group`` (text; ``"(blank)"`` for a missing or empty value), ``scorer``,
        ``mean`` (NaN when nothing in the group was scored), ``n_scored``, ``n_failed``.
    """
    column = f"group:{group}"
    if column not in rows.columns:
        raise ValueError(
            f"no group column {group!r}; the rows have {[c for c in rows.columns if c.startswith('group:')]}"
        )
    keys = rows[column].map(_group_key)
    out = []
    for (value, scorer), part in rows.assign(_group=keys).groupby(["_group", "scorer"], sort=True):
        scored = part["score"].dropna()
        out.append(
            {
                "group": value,
                "scorer": scorer,
                "mean": scored.mean() if len(scored) else float("nan"),
                "n_scored": int(len(scored)),
                "n_failed": int((part["status"] != ScoreStatus.SCORED.value).sum()),
            }
        )
    return pd.DataFrame(out, columns=["group", "scorer", "mean", "n_scored", "n_failed"])


def runs_table(runs: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The History list: one row per stored run (as :meth:`scorers.Store.list_runs` returns them).

    Columns: ``id``, ``created`` (UTC, ``YYYY-MM-DD HH:MM``), ``name``, ``status``, one
    ``mean: <scorer id>`` column per scorer found in any run (NaN when the run has no
    such scorer or nothing scored), ``scored``, ``failed``, ``pending`` (outcomes),
    ``items``, ``dataset``, ``scorers`` and ``judge model``.

    ``status`` is the stored one (a :class:`~scorers.RunStatus` value): it is kept true
    while the run is scored, and a run left ``running`` by a process that died is marked
    ``interrupted`` when the dashboard starts.
    """
    scorer_ids = list(dict.fromkeys(s["id"] for run in runs for s in run.get("scorers") or []))
    rows = []
    for run in runs:
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
            "judge model": (run.get("judge") or {}).get("model") or "—",
            "items": run["n_items"],
            "scored": scored,
            "failed": failed,
            "pending": max(0, run["n_items"] * len(ids) - scored - failed),
            "status": run["status"],
        }
        for sid in scorer_ids:
            mean = stats.get(sid, {}).get("mean")
            row[f"mean: {sid}"] = float("nan") if mean is None else float(mean)
        rows.append(row)
    columns = [
        "id",
        "created",
        "name",
        "status",
        *[f"mean: {sid}" for sid in scorer_ids],
        "scored",
        "failed",
        "pending",
        "items",
        "dataset",
        "scorers",
        "judge model",
    ]
    return pd.DataFrame(rows, columns=columns)
