"""Exports of a run's results: CSV, JSON Lines, the seeds' JSON shape and Parquet.

Every export is built from what :func:`~scorers.runs.runner.run_evals` returns (an
:class:`~scorers.runs.runner.EvalRunResult` and its :class:`~scorers.runs.runner.EvalItem`
list) or from a frame in the shape of :meth:`EvalRunResult.to_frame`, and is
returned as ``bytes`` so the dashboard can hand it to a download button and the
CLI can write it to a file. No export holds an API key: results keep the judge's
model, endpoint and parameters only (see :class:`scorers.core.base.JudgeInfo`).

Failures stay failures in every format: a row that was not scored has its
``status`` and ``error`` and an empty score (NaN in frames, empty in CSV, ``null``
in JSON), never a 0.

Typical use::

    result = run_evals(items, scorers, store=store)
    data = export_run(result, items, "csv")          # or "jsonl", "json", "parquet"
    Path("results.csv").write_bytes(data)
    frame = read_results("results.jsonl")            # a JSON Lines or Parquet export read back
"""

from __future__ import annotations

import io
import json
import math
import re
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
import pandas as pd

from scorers.core.base import RunInput, normalize_run
from scorers.core.errors import InvalidInputError, ScoreStatus
from scorers.runs.runner import EvalItem, EvalRunResult, Summary, recorded_scorer_options

if TYPE_CHECKING:
    from scorers.runs.table import RunTable

EXPORT_FORMATS: dict[str, str] = {".csv": "csv", ".jsonl": "jsonl", ".json": "json", ".parquet": "parquet"}
"""File extension → export format, as :func:`format_for_path` reads it."""

SCORER_OPTIONS_COLUMN = "scorer_options"
"""The exports' column of the options the row's scorer scored with (the seeds' JSON: ``scorerOptions``,
by scorer). The gate compares them (:func:`scorers.analysis.gate.side_from_file`): a file without
them has unknown options."""

FORMULA_TRIGGERS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection")."""


def format_for_path(path: str | PurePath) -> str:
    """The export format for a file name, from its extension.

    Args:
        path: the output file name, e.g. ``"results.jsonl"``.

    Returns:
        One of ``"csv"``, ``"jsonl"``, ``"json"`` (the seeds' shape) or ``"parquet"``.

    Raises:
        ValueError: the extension is not one of :data:`EXPORT_FORMATS`; the message lists them.

    >>> format_for_path("out/Results.JSONL")
    'jsonl'
    """
    suffix = PurePath(path).suffix.lower()
    if suffix not in EXPORT_FORMATS:
        what = f"extension {suffix!r}" if suffix else "no extension"
        raise ValueError(
            f"{path}: cannot tell the export format: the name has {what}; use one of "
            f"{', '.join(EXPORT_FORMATS)} (CSV, JSON Lines, the seeds' JSON shape, Parquet)"
        )
    return EXPORT_FORMATS[suffix]


def export_file_stem(run: Mapping[str, Any]) -> str:
    """The name of a run's export files without the extension: ``<name>-<created>-<run id>``.

    The name is the run's, in characters safe in a file name (at most 60); a run named by default
    (``"<dataset> <date> <hh:mm>"``) is named by its dataset's file name without its extension. The
    time the run was created is given in full, in UTC.

    Args:
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`): ``id``, ``name``,
            ``created_at`` and ``dataset_name``.

    >>> export_file_stem({"id": "c4de9c5a5b6f", "name": "data.jsonl 2026-12-02 10:34",
    ...                   "created_at": "2026-12-02T10:34:12+00:00", "dataset_name": "data.jsonl"})
    'data-2026-12-02T103412Z-c4de9c5a5b6f'
    """
    name, dataset, created = run.get("name") or "", run.get("dataset_name") or "", run.get("created_at") or ""
    if dataset and name == f"{dataset} {created[:16].replace('T', ' ')}":  # the store's default name
        name = PurePath(dataset).stem
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60].strip("-.") or "run"
    stamp = datetime.fromisoformat(created).astimezone(UTC).strftime("%Y-%m-%dT%H%M%SZ") if created else None
    return "-".join(part for part in (slug, stamp, run["id"]) if part)


def _raw_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return _json_text(value)


TEXT_FIELDS: tuple[str, ...] = ("input", "system", "output", "ground_truth", "conversation")
"""The texts of an item (:func:`item_texts`), columns of every export in this order."""


def item_texts(item: EvalItem) -> dict[str, str | None]:
    """The texts of an item (:data:`TEXT_FIELDS`): ``input`` (user text: the user messages joined), ``system``,
    ``output``, ``ground_truth`` and ``conversation``.

    ``conversation`` is a conversation's turns before the response, with their roles, as the judge is shown
    them (:attr:`~scorers.core.base.RunInput.conversation`), as JSON text
    (``[{"role": "user", "content": "Hi"}, {"role": "assistant", ...}, ...]``, an assistant turn's ``tool_calls``
    and a tool result's ``tool_call_id`` and ``name`` kept: :meth:`~scorers.core.base.Message.as_turn`); ``"[]"`` for
    a run without earlier turns, None only when the input cannot be read.

    Unlike :func:`~scorers.core.base.normalize_run`, a malformed payload (an item whose
    outcome is ``invalid_input``, e.g. a response that is null, or ``missing_input``, a conversation that ends
    without an assistant reply) does not raise:
    each field that cannot be read as text is given as its raw JSON, or None.
    """
    payload = item.payload
    try:
        run = normalize_run(payload)
    except InvalidInputError:
        pass
    else:
        return {
            "input": run.user_text,
            "system": run.system_text,
            "output": run.output,
            "ground_truth": run.ground_truth,
            "conversation": _conversation_text(run),
        }
    texts: dict[str, str | None] = {}
    try:
        run = normalize_run({"input": payload.get("input"), "output": ""})
        texts.update(input=run.user_text, system=run.system_text, conversation=_conversation_text(run))
    except InvalidInputError:
        texts.update(input=_raw_text(payload.get("input")), system=None, conversation=None)
    output = payload.get("output")
    try:
        texts["output"] = normalize_run({"output": output}).output
    except InvalidInputError:
        missing = isinstance(output, dict) and output.get("text") is None and output.get("content") is None
        texts["output"] = None if missing else _raw_text(output)
    ground_truth = payload.get("ground_truth")
    texts["ground_truth"] = _raw_text(payload.get("groundTruth") if ground_truth is None else ground_truth)
    return texts


def _conversation_text(run: RunInput) -> str:
    """A run's conversation as JSON text: ``"[]"`` for a run without earlier turns (an empty conversation, not a
    missing value)."""
    return _json_text([m.as_turn() for m in run.conversation])


def conversation_turns_of(text: Any) -> list[dict[str, Any]] | None:
    """An export's ``conversation`` text (:func:`item_texts`) as its list of ``{"role", "content", ...}`` turns
    (:meth:`~scorers.core.base.Message.as_turn`; empty
    for a run without earlier turns); None for a missing value (an input that cannot be read).

    >>> conversation_turns_of('[{"role": "user", "content": "Hi"}]'), conversation_turns_of(None)
    ([{'role': 'user', 'content': 'Hi'}], None)
    """
    return json.loads(text) if isinstance(text, str) else None


def results_frame(run_result: EvalRunResult, items: Sequence[EvalItem] | None = None) -> pd.DataFrame:
    """The frame the CSV, JSON Lines and Parquet exports are written from.

    Args:
        run_result: a run's result.
        items: the run's items, in order, or None.

    Returns:
        One row per item × scorer: the columns of :meth:`EvalRunResult.to_frame`
        (``item_index``, ``item_id``, ``scorer``, ``status``, ``score`` (float, NaN
        when not scored), ``reason``, ``error``, ``prompt_tokens``,
        ``completion_tokens``, ``judge_calls`` (answered), ``judge_requests`` (HTTP requests sent, failed ones and
        retries included; a Batch API run's batch lines sent), ``latency_s``, ``judge_model``) with ``run_id`` first
        and, when the run knows them (:attr:`EvalRunResult.scorer_options`), :data:`SCORER_OPTIONS_COLUMN`
        (the row's scorer's options, a dict) after ``scorer``; with ``items``, then ``input``, ``system``, ``output``, ``ground_truth``, ``conversation``
        (see :func:`item_texts`) and one ``group:<name>`` column per group-by
        column; and last ``analysis``, the scorer's ``analyzeStepResult`` as a dict
        (None for outcomes that were not scored).
    """
    frame = run_result.to_frame()
    frame.insert(0, "run_id", run_result.run_id)
    if run_result.scorer_options is not None:
        _insert_scorer_options(frame, run_result.scorer_options)
    if items is not None:
        texts = [item_texts(items[o.item_index]) for o in run_result.outcomes]
        for name in TEXT_FIELDS:
            frame[name] = pd.Series([t[name] for t in texts], index=frame.index, dtype=object)
        groups = list(dict.fromkeys(k for item in items for k in item.groups))
        for name in groups:
            frame[f"group:{name}"] = pd.Series(
                [items[o.item_index].groups.get(name) for o in run_result.outcomes], index=frame.index, dtype=object
            )
    frame["analysis"] = pd.Series(
        [o.result.analyze_step_result if o.result is not None else None for o in run_result.outcomes],
        index=frame.index,
        dtype=object,
    )
    return frame


def _insert_scorer_options(frame: pd.DataFrame, options: Mapping[str, Mapping[str, Any] | None]) -> None:
    """Put :data:`SCORER_OPTIONS_COLUMN` after ``scorer`` in ``frame``: each row's scorer's options
    (``{}``: its defaults; None: not known, so the gate refuses them), in place."""
    by_scorer = _options_by_scorer(options, frame["scorer"].unique().tolist())
    column = pd.Series([by_scorer[sid] for sid in frame["scorer"].tolist()], index=frame.index, dtype=object)
    frame.insert(frame.columns.get_loc("scorer") + 1, SCORER_OPTIONS_COLUMN, column)


def _options_by_scorer(
    options: Mapping[str, Mapping[str, Any] | None], scorer_ids: Sequence[str]
) -> dict[str, dict[str, Any] | None]:
    """Each of ``scorer_ids`` → its recorded options (``{}`` when none are recorded), or None when the
    run records them as not known."""
    return {
        sid: None if sid in options and options[sid] is None else dict(options.get(sid) or {}) for sid in scorer_ids
    }


def _is_text_column(column: pd.Series) -> bool:
    return pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype)


def _is_nested(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple, np.ndarray))


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data: numpy scalars and arrays unwrapped, NaN/NA/NaT and infinities as None.

    >>> json_safe({"a": float("nan"), "b": np.int64(3), "c": (1.5, None)})
    {'a': None, 'b': 3, 'c': [1.5, None]}
    """
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(value).isoformat()
    return value


def _json_text(value: Any) -> str:
    return json.dumps(json_safe(value), ensure_ascii=False, allow_nan=False, default=str)


def neutralize_cell(value: Any) -> Any:
    """Neutralise one CSV text cell against spreadsheet formula injection.

    A string starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
    gets a single quote ``'`` in front, as OWASP's "CSV Injection" page recommends,
    so Excel, LibreOffice and Google Sheets show it as text instead of running it.
    Anything else (other strings, numbers, None) is returned unchanged.

    >>> [neutralize_cell(v) for v in ("=1+1", "-2", "@x", "ok", -1.5)]
    ["'=1+1", "'-2", "'@x", 'ok', -1.5]
    """
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def to_csv_bytes(frame: pd.DataFrame, *, spreadsheet: bool = True, header: bool = True) -> bytes:
    """A frame as UTF-8 CSV, by default safe to open in a spreadsheet.

    Neutralisation rule (OWASP, "CSV Injection",
    https://owasp.org/www-community/attacks/CSV_Injection): in text columns
    (object or string dtype) and in the header, every cell that starts with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a single quote
    ``'`` prepended, so a response such as ``=HYPERLINK(...)`` is shown as text,
    not run as a formula. A text that merely starts with ``-`` (a bullet list) is
    quoted too: the rule cannot tell it from ``-2+3``. Numeric columns are
    written as numbers (a score of -1.5 stays ``-1.5``), and a number inside a
    text column is not touched. Nested values (dicts, lists) are JSON-encoded
    first. Missing values (None, NaN) are empty cells. Fields holding a comma,
    a quote, a line feed or a carriage return are quoted (RFC 4180); no
    byte-order mark is written.

    With ``spreadsheet=False`` nothing is neutralised (a plain CSV for data tools, where
    a bullet answer starting with ``"- "`` must stay as it is); nested values are still
    JSON-encoded.

    Args:
        frame: any frame, typically :func:`results_frame` or :meth:`EvalRunResult.to_frame`
            (one row per item × scorer).
        spreadsheet: neutralise formula cells (default) or write every text as it is.
        header: write the header line (False for the later chunks of a streamed file).

    Returns:
        The CSV text encoded as UTF-8, one header line, ``\\r\\n`` line endings (RFC 4180), no index.
    """
    cell = neutralize_cell if spreadsheet else (lambda v: v)
    safe = frame.copy()
    for name in safe.columns:
        if _is_text_column(safe[name]):
            safe[name] = safe[name].map(lambda v: cell(_json_text(v) if _is_nested(v) else v), na_action="ignore")
    safe.columns = [cell(str(c)) for c in safe.columns]
    # CRLF as RFC 4180 asks; it also makes the csv module quote a field holding a lone "\r".
    return safe.to_csv(index=False, header=header, lineterminator="\r\n").encode("utf-8")


def to_jsonl_bytes(frame: pd.DataFrame) -> bytes:
    """A frame as JSON Lines: one JSON object per row (per item × scorer).

    Each line maps the frame's column names to the row's values as plain JSON:
    NaN, None and missing values are ``null`` (a failed item's ``score`` is
    ``null``, with its ``status`` and ``error``), nested values (the ``analysis``
    dict of :func:`results_frame`) stay nested, and text is written as is (JSON is
    not a spreadsheet, so nothing is neutralised). UTF-8, non-ASCII written
    unescaped, one ``\\n`` after every line.

    Args:
        frame: typically :func:`results_frame` or :meth:`EvalRunResult.to_frame`.

    Returns:
        The JSON Lines text encoded as UTF-8 (empty for an empty frame).
    """
    columns = [str(c) for c in frame.columns]
    lines = [
        json.dumps(
            {c: json_safe(v) for c, v in zip(columns, row, strict=True)},
            ensure_ascii=False,
            allow_nan=False,
            default=str,
        )
        for row in frame.itertuples(index=False, name=None)
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def _summary_dict(summary: Any) -> dict[str, Any]:
    return {
        "mean": summary.mean,
        "median": summary.median,
        "std": summary.std,
        "min": summary.min,
        "max": summary.max,
        "nScored": summary.n_scored,
        "nFailed": summary.n_failed,
    }


def to_seed_json(run_result: EvalRunResult, items: Sequence[EvalItem]) -> dict[str, Any]:
    """The run in the seeds' camelCase JSON shape, as a dict (see :func:`to_seed_json_bytes`)."""
    by_item: dict[int, dict[str, Any]] = {}
    for o in run_result.outcomes:
        r = o.result
        by_item.setdefault(o.item_index, {})[o.scorer_id] = {
            "status": o.status.value,
            "score": r.score if r is not None else None,
            "reason": r.reason if r is not None else None,
            "analyzeStepResult": r.analyze_step_result if r is not None else None,
            "error": o.error,
            "judgeModel": o.asked_judge_model,
        }
    out_items = []
    has_groups, has_columns = any(item.groups for item in items), any(item.columns for item in items)
    for index, item in enumerate(items):
        texts = item_texts(item)
        document = {
            "itemId": item.item_id,
            "input": texts["input"],
            "groundTruth": texts["ground_truth"],
            "output": texts["output"],
            "conversation": conversation_turns_of(texts["conversation"]),
            "scorerResults": by_item.get(index, {}),
        }
        out_items.append(
            _with_extras(document, item.groups if has_groups else None, item.columns if has_columns else None)
        )
    document = {"runId": run_result.run_id, "scores": {sid: _summary_dict(s) for sid, s in run_result.scores().items()}}
    if run_result.scorer_options is not None:
        document["scorerOptions"] = _options_by_scorer(run_result.scorer_options, run_result.scorer_ids)
    return json_safe({**document, "items": out_items})


def to_seed_json_bytes(run_result: EvalRunResult, items: Sequence[EvalItem]) -> bytes:
    """The run as one JSON document in the seeds' shape (Mastra's ``runEvals`` result, camelCase).

    Shape::

        {"runId": str | null,
         "scores": {scorer_id: {"mean", "median", "std", "min", "max", "nScored", "nFailed"}},
         "scorerOptions": {scorer_id: {option: value}},
         "items": [{"itemId", "input", "groundTruth", "output", "conversation",
                    "scorerResults": {scorer_id: {"status", "score", "reason",
                                                  "analyzeStepResult", "error", "judgeModel"}},
                    "groups": {column: value}, "columns": {column: value}}]}

    ``groups`` (the group-by columns' values) and ``columns`` (the dataset's other,
    unmapped columns: ids, metadata, human votes) are there when the run has any.
    ``scorerOptions`` (each scorer's options as the run records them, ``{}`` for its defaults, null when not known) is
    there when the run knows them (:attr:`EvalRunResult.scorer_options`).

    ``scores`` counts scored items only (``std`` is the sample standard deviation,
    null with fewer than two scores; every statistic is null when nothing was
    scored). An outcome that was not scored keeps its ``status`` (e.g.
    ``"invalid_input"``) and ``error``, with ``score``, ``reason`` and
    ``analyzeStepResult`` null, never 0. ``judgeModel`` is the model of the judge that made
    the outcome (null for a code-based scorer and for an outcome not scored for its input). ``input`` is the user text, ``output``
    the response text, ``groundTruth`` the reference or null, ``conversation`` a conversation's turns before the
    response (``[{"role", "content", ...}, ...]``, as the judge is shown them) or null for a run without earlier turns. An item with no
    outcome yet (a stopped run) has empty ``scorerResults``. NaN and infinities
    are written as null.

    Args:
        run_result: the run's result.
        items: the run's items, in order (the ``item_index`` of every outcome).

    Returns:
        UTF-8 JSON, indented by 2, non-ASCII unescaped.
    """
    document = to_seed_json(run_result, items)
    return json.dumps(document, ensure_ascii=False, allow_nan=False, indent=2, default=str).encode("utf-8")


def _with_extras(
    document: dict[str, Any], groups: Mapping[str, Any] | None, columns: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A seeds'-shape item with its ``groups`` and the dataset's other ``columns`` added, each when given."""
    if groups is not None:
        document["groups"] = dict(groups)
    if columns is not None:
        document["columns"] = dict(columns)
    return document


def _parquet_column(column: pd.Series) -> pd.Series:
    """An object column Parquet can store: nested values as JSON text, mixed scalars as text."""
    values = column.dropna().tolist()
    kinds = {type(v) for v in values}
    if not any(_is_nested(v) for v in values) and (kinds <= {str} or kinds <= {bool} or kinds <= {int, float}):
        return column
    return column.map(lambda v: _json_text(v) if _is_nested(v) else str(v), na_action="ignore")


def to_parquet_bytes(frame: pd.DataFrame) -> bytes:
    """A frame as a Parquet file (pyarrow, no index).

    Column types are kept (``score`` float64 with NaN where not scored, token
    counts int64, texts as strings). Nested values (the ``analysis`` dicts of
    :func:`results_frame`) are stored as JSON text, since their shape differs
    from scorer to scorer; an object column mixing scalar types is stored as text.

    Args:
        frame: typically :func:`results_frame` or :meth:`EvalRunResult.to_frame`.

    Returns:
        The Parquet file's bytes; read it back with ``pd.read_parquet(io.BytesIO(data))``.
    """
    safe = frame.copy()
    for name in safe.columns:
        if pd.api.types.is_object_dtype(safe[name].dtype):
            safe[name] = _parquet_column(safe[name])
    safe.columns = [str(c) for c in safe.columns]
    buffer = io.BytesIO()
    safe.to_parquet(buffer, index=False, engine="pyarrow")
    return buffer.getvalue()


def export_run(run_result: EvalRunResult, items: Sequence[EvalItem], fmt: str) -> bytes:
    """A run's results in one export format.

    Args:
        run_result: the run's result.
        items: the run's items, in order.
        fmt: ``"csv"``, ``"jsonl"``, ``"parquet"`` (all from :func:`results_frame`:
            one row per item × scorer) or ``"json"`` (:func:`to_seed_json_bytes`).

    Returns:
        The export's bytes.

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "json":
        return to_seed_json_bytes(run_result, items)
    writers = {"csv": to_csv_bytes, "jsonl": to_jsonl_bytes, "parquet": to_parquet_bytes}
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; use one of csv, jsonl, json, parquet")
    return writers[fmt](results_frame(run_result, items))


RESULTS_COLUMNS: tuple[str, ...] = ("item_id", "scorer", "status", "score")
"""The columns a results file must have to be read back (:func:`read_results`)."""


def _results_error(path: str | PurePath, message: str) -> InvalidInputError:
    return InvalidInputError(f"{path}: {message}", field=str(path))


def read_results(path: str | PurePath) -> pd.DataFrame:
    """Read back a JSON Lines or Parquet export of :func:`results_frame` (one row per item × scorer).

    Args:
        path: a ``.jsonl`` or ``.parquet`` file written by :func:`export_run` (or ``python -m
            scorers run --output`` / ``export``). CSV is not read back: its text cells are
            neutralised for spreadsheets (:func:`to_csv_bytes`), so they are not the texts scored.

    Returns:
        The frame: at least ``item_id`` (text), ``scorer``, ``status`` and ``score`` (float,
        NaN when not scored), plus whatever other columns the file has. An ``analysis``
        or :data:`SCORER_OPTIONS_COLUMN` stored as JSON text (Parquet) is decoded back to a dict.

    Raises:
        InvalidInputError: the file is missing or unreadable, has another extension, a line
            that is not a JSON object (the line is named), a required column missing, or a
            score that is not a number (the row is named).
    """
    suffix = PurePath(path).suffix.lower()
    if suffix not in (".jsonl", ".parquet"):
        raise _results_error(path, f"read results from a .jsonl or .parquet export, not {suffix or 'no extension'!r}")
    try:
        data = Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise _results_error(path, f"cannot read the results file ({exc.strerror or exc})") from None
    if suffix == ".parquet":
        try:
            frame = pd.read_parquet(io.BytesIO(data), engine="pyarrow")
        except (OSError, ValueError) as exc:
            raise _results_error(path, f"not a readable Parquet file ({exc})") from None
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise _results_error(path, f"line {line}: not UTF-8 (byte {exc.start})") from None
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _results_error(path, f"line {number}, column {exc.colno}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise _results_error(path, f"line {number}: expected a JSON object, got {type(record).__name__}")
            records.append(record)
        frame = pd.DataFrame.from_records(records)
    missing = [c for c in RESULTS_COLUMNS if c not in frame.columns]
    if missing:
        raise _results_error(
            path,
            f"no column(s) {', '.join(missing)}: is this a results export (python -m scorers export RUN_ID "
            "--output FILE.jsonl)? Its columns are " + (", ".join(map(str, frame.columns)) or "none"),
        )
    frame["item_id"] = frame["item_id"].map(lambda v: v if isinstance(v, str) else json_safe(v)).astype(str)
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = frame["score"].notna() & scores.isna()
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise _results_error(
            path,
            f"row {row + 1} (item {frame['item_id'].iloc[row]!r}): score {frame['score'].iloc[row]!r} is not a number",
        )
    frame["score"] = scores.astype("float64")
    for name in ("analysis", SCORER_OPTIONS_COLUMN):
        if name in frame.columns:
            frame[name] = frame[name].map(_decoded, na_action="ignore")
    return frame


def _decoded(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


TABLE_EXPORTS: dict[str, tuple[str, str]] = {
    "csv": ("Spreadsheet CSV (formula-safe)", "csv"),
    "plain-csv": ("Plain CSV (for data tools)", "csv"),
    "jsonl": ("JSON Lines", "jsonl"),
    "json": ("JSON (seeds' shape)", "json"),
    "parquet": ("Parquet", "parquet"),
}
"""Export format → (label, file extension) of :func:`write_run_export`."""


SPREADSHEET_CELL_LIMIT = 32_767
"""Characters a spreadsheet cell holds (Excel's limit; LibreOffice's is the same for a CSV it opens)."""


def spreadsheet_overflow(table: RunTable) -> dict[str, int]:
    """The cells of a stored run's spreadsheet CSV that are longer than :data:`SPREADSHEET_CELL_LIMIT`, by column.

    The export writes them whole (nothing is cut silently); a spreadsheet cuts or breaks them, so the
    page says where they are. A cell is counted as written: one per item × scorer row (an item's long
    text counts once for each of its scorers), with the ``'`` a formula-safe cell gets.

    Only the items whose stored record is longer than the limit are read (a text is never longer
    than the JSON record that holds it), so a run without long texts costs one small query.

    Args:
        table: the run (:func:`scorers.runs.table.load_run_table`, with its store).

    Returns:
        Column name → cells over the limit; empty when none is.
    """

    def over(values: pd.Series) -> pd.Series:
        # A text one under the limit can pass it by the ' prefix; the few that long are measured as written.
        long = (values.astype("string").str.len() >= SPREADSHEET_CELL_LIMIT).to_numpy(dtype=bool, na_value=False)
        return values[long].map(lambda v: len(neutralize_cell(v)) > SPREADSHEET_CELL_LIMIT).astype(bool)

    rows_per_item = table.results["item_index"].value_counts()
    found: dict[str, int] = {}
    long_items = [
        int(row[0])
        for row in table.store.query(
            "SELECT item_index FROM items WHERE run_id = ? AND length(payload) >= ? ORDER BY item_index",
            [table.run["id"], SPREADSHEET_CELL_LIMIT],
        )
    ]
    if long_items:
        texts = table.texts(long_items)
        for name in texts.columns:
            hits = over(texts[name])
            found[name] = int(rows_per_item.reindex(hits.index[hits.to_numpy()]).fillna(0).sum())
    for name in table.items.columns:
        if table.items[name].dtype == object or isinstance(table.items[name].dtype, pd.StringDtype):
            hits = over(table.items[name])
            found[name] = int(rows_per_item.reindex(hits.index[hits.to_numpy()]).fillna(0).sum())
    for name in ("reason", "error", "analysis"):
        if name in table.results.columns:
            found[name] = int(over(table.results[name]).sum())
    return {name: n for name, n in found.items() if n}


def spreadsheet_overflow_note(table: RunTable) -> str | None:
    """What :func:`spreadsheet_overflow` finds, said for the user (the page's Export tab, the CLI's ``--output
    x.csv``), or None when every cell of the spreadsheet CSV fits."""
    overflow = spreadsheet_overflow(table)
    if not overflow:
        return None
    n = sum(overflow.values())
    one = n == 1
    return (
        f"{n:,} cell{'' if one else 's'} of the spreadsheet CSV {'is' if one else 'are'} longer than the "
        f"{SPREADSHEET_CELL_LIMIT:,} characters a spreadsheet cell holds "
        f"({', '.join(f'{name}: {count:,}' for name, count in overflow.items())}). The file keeps "
        f"{'it' if one else 'them'} whole, but Excel cuts or breaks {'it' if one else 'them'} on opening: for the "
        "full texts, use the plain CSV, JSON Lines or Parquet."
    )


def export_columns(table: RunTable, index: Any = None) -> pd.DataFrame:
    """The rows the CSV, JSON Lines and Parquet exports of a stored run hold (all, or the labels ``index``).

    One row per item × scorer: ``run_id``, then :meth:`~scorers.runs.table.RunTable.rows`:
    ``item_index``, ``item_id`` (the mapped id column's value, or the row label),
    ``scorer``, ``status``, ``score`` (empty when not scored, never 0), ``reason``,
    ``error``, tokens and latency, ``judge_model`` (the model of the judge that made the
    outcome; empty for a code-based scorer and for an outcome not scored for its input), the item's texts, its ``group:<name>`` columns, the
    dataset's unmapped columns under their own names, one flat numeric column per
    dimension score (e.g. ``prompt_alignment.user.intentAlignment``, 0..1) and
    ``analysis`` (the scorer's analysis as JSON text); after ``scorer``, :data:`SCORER_OPTIONS_COLUMN`
    (the options the run records for the row's scorer, a dict; ``{}``: its defaults; None: not known).
    """
    frame = table.rows(index)
    frame.insert(0, "run_id", table.run["id"])
    _insert_scorer_options(frame, recorded_scorer_options(table.run))
    return frame


def nest_analysis(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (rows of :func:`export_columns`) with its ``analysis`` JSON text decoded, for JSON Lines; changed in place."""
    frame["analysis"] = frame["analysis"].map(json.loads, na_action="ignore").astype(object)
    return frame


def _chunks(index: pd.Index, size: int) -> Iterator[pd.Index]:
    for start in range(0, len(index), size):
        yield index[start : start + size]


def write_run_export(table: RunTable, fmt: str, out: BinaryIO, *, chunk_rows: int = 2000) -> None:
    """Write a stored run's export to a binary file, a chunk of rows at a time.

    Only ``chunk_rows`` rows are ever turned into text at once, so a large run is
    streamed to the file rather than built in memory. Parquet is written from the
    columnar frame in one piece (its column types must be known for the whole file).

    Args:
        table: the run (:func:`scorers.runs.table.load_run_table`).
        fmt: a key of :data:`TABLE_EXPORTS`: ``"csv"`` (formula cells neutralised, for
            spreadsheets), ``"plain-csv"`` (texts as they are), ``"jsonl"`` (analysis
            nested), ``"json"`` (the seeds' shape, see :func:`to_seed_json_bytes`) or
            ``"parquet"``; the rows of the others are :func:`export_columns`.
        out: a file opened for writing bytes.
        chunk_rows: rows per chunk, >= 1.

    Raises:
        ValueError: an unknown format.
    """
    if fmt not in TABLE_EXPORTS:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(TABLE_EXPORTS)}")
    if fmt == "json":
        _write_seed_json(table, out, chunk_rows)
        return
    if fmt == "parquet":
        out.write(to_parquet_bytes(export_columns(table)))
        return
    for n, index in enumerate(_chunks(table.results.index, max(1, chunk_rows))):
        frame = export_columns(table, index)
        if fmt == "jsonl":
            out.write(to_jsonl_bytes(nest_analysis(frame)))
        else:
            out.write(to_csv_bytes(frame, spreadsheet=fmt == "csv", header=n == 0))
    if table.results.empty and fmt != "jsonl":
        out.write(to_csv_bytes(export_columns(table), spreadsheet=fmt == "csv"))


def _write_seed_json(table: RunTable, out: BinaryIO, chunk_rows: int) -> None:
    results = table.results
    scored = results["status"] == ScoreStatus.SCORED.value
    scores = {}
    for sid in table.scorer_ids:
        mine = results["scorer"] == sid
        values = results.loc[mine & scored, "score"].tolist()
        scores[sid] = _summary_dict(Summary.of(values, n_failed=int((mine & ~scored).sum())))
    options = recorded_scorer_options(table.run)
    head = json.dumps(
        {
            "runId": table.run["id"],
            "scores": json_safe(scores),
            "scorerOptions": json_safe(_options_by_scorer(options, table.scorer_ids)),
        },
        ensure_ascii=False,
        indent=2,
    )
    out.write((head[:-2] + ',\n  "items": [').encode("utf-8"))
    starts = results["item_index"].searchsorted(range(table.n_items + 1))
    groups = [c for c in table.items.columns if c.startswith("group:")]
    columns = [c for c in table.items.columns if c != "item_id" and c not in groups]
    first = True
    for chunk in _chunks(table.items.index, max(1, chunk_rows)):
        texts = table.texts(chunk)  # read a chunk of items at a time
        part = table.items.loc[chunk]
        for index, row in zip(chunk, part.to_dict("records"), strict=True):
            document = _with_extras(
                _seed_item(row["item_id"], texts.loc[index], results.iloc[starts[index] : starts[index + 1]]),
                {c.removeprefix("group:"): row[c] for c in groups} if groups else None,
                {c.removeprefix("dataset:"): row[c] for c in columns} if columns else None,
            )
            text = json.dumps(json_safe(document), ensure_ascii=False, allow_nan=False, indent=2, default=str)
            out.write((("\n" if first else ",\n") + textwrap.indent(text, "    ")).encode("utf-8"))
            first = False
    out.write(("\n  ]\n}" if not first else "]\n}").encode("utf-8"))


def _seed_item(item_id: str, texts: pd.Series, part: pd.DataFrame) -> dict[str, Any]:
    """One item of the seeds' JSON: its texts and its outcomes ``part``."""
    outcomes = {}
    for row in part.itertuples(index=False):
        ok = row.status == ScoreStatus.SCORED.value
        outcomes[row.scorer] = {
            "status": row.status,
            "score": row.score if ok else None,
            "reason": row.reason if ok and isinstance(row.reason, str) else None,
            "analyzeStepResult": json.loads(row.analysis) if ok and isinstance(row.analysis, str) else None,
            "error": row.error if isinstance(row.error, str) else None,
            "judgeModel": row.judge_model if isinstance(row.judge_model, str) else None,
        }
    return {
        "itemId": item_id,
        "input": _text_or_none(texts["input"]),
        "groundTruth": _text_or_none(texts["ground_truth"]),
        "output": _text_or_none(texts["output"]),
        "conversation": conversation_turns_of(_text_or_none(texts["conversation"])),
        "scorerResults": outcomes,
    }


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
