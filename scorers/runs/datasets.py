"""Load evaluation datasets (CSV, JSON Lines, JSON, Parquet, Excel) for batch runs.

The loader is shared by the dashboard (which passes the bytes of an uploaded
file and its name) and the CLI (which passes a path). It never guesses
silently: every row it does not load is listed in
:attr:`LoadedDataset.skipped` with its line or row number and the reason, and
anything it had to adjust is listed in :attr:`LoadedDataset.warnings`. Errors
that stop a load are :class:`DatasetError`, which name the file, the line (or
row) and column, and say how to fix the file.

Text stays text: a CSV is read with every field as ``str`` ("None", "N/A",
"NULL", "NaN" and "" are kept as written, numbers are not converted), so the
response a model wrote is scored exactly as it was written.

CSV, JSON and JSON Lines are read without pandas: the rows are kept as plain Python
columns (:meth:`LoadedDataset.column_values`, exactly what the frame's columns
hold) and :attr:`LoadedDataset.frame` is built when it is first used, so the
command line scores such a file without importing pandas, numpy or pyarrow
(about half a second). A JSON or JSON Lines file whose columns pandas would convert
(a key missing from some records, ``null``, mixed kinds such as whole and
fractional numbers) is read into the frame at once.

Typical use::

    dataset = load_dataset(uploaded.getvalue(), name=uploaded.name)
    mapping = guess_columns(dataset.frame.columns)
    for index, item_id, payload in iter_runs(dataset, mapping):
        result = scorer.run(payload)
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import functools
import io
import json
import math
import re
import sys
import threading
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from scorers.core.base import MESSAGE_ROLES, normalize_run, split_conversation
from scorers.core.errors import InvalidInputError, ScorerError

if TYPE_CHECKING:
    import pandas as pd

SUPPORTED_FORMATS: tuple[str, ...] = ("csv", "jsonl", "json", "parquet", "xlsx")
"""The values ``load_dataset(format=...)`` accepts."""

_EXTENSION_FORMATS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".xlsx": "xlsx",
    ".xls": "xlsx",
}

ROLES: tuple[str, ...] = ("input", "output", "system", "ground_truth", "id", "context", "tool_calls", "messages")
"""The roles a dataset column can play in a run; ``output`` is required, and the chosen scorers
say what else (``ScorerSpec.requires``: no input column is needed to compare with a ground truth).

``ground_truth`` also serves as the reference tone text of tone consistency;
``context`` holds context passages (a JSON list of strings, or one passage);
``tool_calls`` the assistant's tool calls (a JSON list of ``{"name", "arguments"}``);
``messages`` a whole conversation in OpenAI chat format (a JSON list of ``{"role", "content"}``,
or a JSONL record's ``messages`` list): its turns are the input and, unless an output column is
mapped, its final message is the response when it is the assistant's (else there is none: ``missing_input``).
"""

_REQUIRED_ROLES = (
    "output",
)  # or messages ending with the assistant's reply  # the scorers chosen decide what else a row needs (see ScorerSpec.requires)

# Only unambiguous names for the roles the judge reads: a bare "system" column often names the
# system under test (a model), "user" a user id, "label" or "target" a class; such columns are
# mapped by hand.
_ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "input": ("prompt", "input", "question", "instruction", "query", "user_prompt"),
    "output": ("response", "output", "answer", "completion", "generation"),
    "system": ("system_prompt", "system_message", "system_instructions"),
    "ground_truth": (
        "ground_truth",
        "groundtruth",
        "reference",
        "expected",
        "expected_output",
        "reference_answer",
        "gold",
    ),
    "id": ("id", "row_id", "question_id", "item_id", "example_id", "qid", "key", "uid"),
    "context": ("context", "contexts", "passages", "documents", "retrieved_context"),
    "tool_calls": ("tool_calls", "toolcalls", "tools_called", "tool_invocations"),
    "messages": ("messages", "conversation", "chat_messages"),
}

_CSV_DELIMITERS = (",", ";", "\t")
_JSON_WRAPPER_KEYS = ("data", "items", "rows")
_SNIFF_SAMPLE_CHARS = 32_768
_MAX_LISTED = 5  # problems listed in one error or warning
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # old binary .xls workbooks
_FIX_ENCODING = (
    "Save the file as UTF-8 (Excel: File > Save As > 'CSV UTF-8'). If it is in Windows-1252/Latin-1, "
    "convert it first, e.g. `iconv -f cp1252 -t utf-8 in.csv > out.csv`; it is not converted "
    "automatically because a wrong guess garbles the text without any error"
)


class DatasetError(InvalidInputError):
    """A dataset file cannot be loaded, or cannot be used as asked.

    The message starts with where the problem is (``"data.csv, line 7: ..."``)
    and ends with how to fix it.

    Args:
        message: what is wrong and how to fix it.
        path: the file path or uploaded file name, or None.
        line: 1-based line number in the file (CSV, JSON Lines, JSON), or None.
        row: 1-based row number (the Excel sheet row; the record number in a
            Parquet or JSON file), or None.
        column: 1-based character column within ``line`` (a byte column for
            encoding errors), or None.
        field: the dataset column (or JSON key) concerned, or None.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        row: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ):
        self.path = path
        self.line = line
        self.row = row
        self.column = column
        parts = [path] if path else []
        parts += [f"{unit} {value}" for unit, value in (("line", line), ("row", row), ("column", column)) if value]
        super().__init__(f"{', '.join(parts)}: {message}" if parts else message)
        self.field = field


@dataclass(frozen=True)
class SkippedRow:
    """A record of the source that was not loaded, and why.

    Attributes:
        line: 1-based line number in the file (CSV, JSON Lines), or None.
        row: 1-based row or record number (Excel sheet row, JSON array element
            ``row - 1``), or None.
        reason: what was wrong with it, e.g. ``"not a JSON object (found an array)"``.
    """

    line: int | None
    row: int | None
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else f"row {self.row}"
        return f"{where}: {self.reason}"


SKIPPED_LISTED = 20
"""Records not loaded that a run lists by line and reason (:func:`skipped_record`); the rest are counted."""


def skipped_record(skipped: Sequence[SkippedRow]) -> dict[str, Any]:
    """What a run records of the source records that were not loaded (``config["skippedAtLoad"]``).

    A run keeps it so that, reopened or shared, it still says that rows of its file are not in it.

    Returns:
        ``{}`` when every record was loaded, else ``{"skippedAtLoad": {"count": n, "first": [...]}}``:
        the number of records not loaded and the first :data:`SKIPPED_LISTED` as
        ``"line 13: invalid JSON at column 34: ..."``.
    """
    if not skipped:
        return {}
    return {"skippedAtLoad": {"count": len(skipped), "first": [str(s) for s in skipped[:SKIPPED_LISTED]]}}


@dataclass(frozen=True, eq=False)
class LoadedDataset:
    """A dataset ready for a batch run.

    Attributes:
        frame: one row per loaded record, index ``0..n-1``, columns in file
            order. CSV columns are all ``str``; other formats keep their types
            (numbers, lists and dicts from JSON, Parquet types), with every
            all-text column of ``str`` values. Built on first use (importing
            pandas then) when the file was read into :attr:`plain` columns.
        source_name: the path or uploaded file name, as used in messages.
        format: one of :data:`SUPPORTED_FORMATS`.
        skipped: the records that were not loaded, in file order, with reasons.
        warnings: adjustments the loader made (empty rows ignored, short rows
            padded, unnamed columns named), one sentence each.
        source_rows: for each row of ``frame``, its 1-based line number in the
            file (CSV, JSON Lines) or row number (Excel sheet row, record number
            in JSON and Parquet).
    """

    source_name: str
    format: str
    skipped: list[SkippedRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source_rows: tuple[int, ...] = ()
    plain: Mapping[str, list[Any]] | None = field(default=None, repr=False)
    """Column name → its values in row order, read without pandas (CSV, most JSON and JSON Lines), or None."""
    make_frame: Callable[[], pd.DataFrame] | None = field(default=None, repr=False)
    """Builds :attr:`frame` (called once, on first use)."""

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """One row per loaded record (see the class docstring)."""
        assert self.make_frame is not None
        return self.make_frame()

    @property
    def columns(self) -> list[str]:
        """The column names, in file order."""
        return list(self.plain) if self.plain is not None else [str(c) for c in self.frame.columns]

    def column_values(self, name: Any) -> list[Any]:
        """The values of column ``name`` in row order, as ``frame[name].tolist()`` gives them.

        Raises:
            KeyError: there is no such column.
        """
        return list(self.plain[name]) if self.plain is not None else self.frame[name].tolist()

    def row_label(self, i: int) -> str:
        """Where row ``i`` of :attr:`frame` came from, for messages.

        Args:
            i: 0-based position in :attr:`frame`.

        Returns:
            ``"line N"`` for CSV and JSON Lines (the line the record starts on),
            ``"row N"`` otherwise (the Excel sheet row, or the 1-based record
            number in JSON and Parquet).

        Raises:
            IndexError: if ``i`` is not a row of :attr:`frame`.
        """
        if not 0 <= i < len(self.source_rows):
            raise IndexError(
                f"row {i} is out of range: the dataset has {len(self.source_rows)} rows (0..{len(self.source_rows) - 1})"
            )
        unit = "line" if self.format in ("csv", "jsonl") else "row"
        return f"{unit} {self.source_rows[i]}"

    def row_error(self, i: int, message: str, *, field: str | None = None) -> DatasetError:
        """A :class:`DatasetError` about row ``i`` of :attr:`frame`: the file, then the 1-based line
        (CSV, JSON Lines) or row (Excel, JSON, Parquet) it came from, as :meth:`row_label` names it.

        Raises:
            IndexError: if ``i`` is not a row of :attr:`frame`.
        """
        unit, number = self.row_label(i).split(" ")
        return DatasetError(message, path=self.source_name, field=field, **{unit: int(number)})


@dataclass
class _Parsed:
    """What a format reader hands to :func:`load_dataset`: the frame, or plain columns and how
    to build the frame from them (see :class:`LoadedDataset`)."""

    frame: pd.DataFrame | None
    source_rows: list[int]
    skipped: list[SkippedRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    plain: dict[str, list[Any]] | None = None
    make_frame: Callable[[], pd.DataFrame] | None = None


def load_dataset(
    source: str | Path | bytes,
    *,
    name: str | None = None,
    format: str | None = None,
    sheet: str | int | None = None,
    delimiter: str | None = None,
) -> LoadedDataset:
    """Load an evaluation dataset from a file path or from uploaded bytes.

    Args:
        source: a path (``str`` or :class:`~pathlib.Path`), the file's content
            as ``bytes``, or a binary file object (e.g. Streamlit's
            ``UploadedFile``, whose ``.name`` is used when ``name`` is not given).
        name: the file name, used to detect the format from its extension and
            in messages. Defaults to the path.
        format: one of :data:`SUPPORTED_FORMATS`; overrides the detection by
            extension (``.csv .tsv .txt`` → csv, ``.jsonl .ndjson`` → jsonl,
            ``.json`` → json, ``.parquet`` → parquet, ``.xlsx .xls`` → xlsx).
        sheet: Excel only: the sheet name or 0-based index; the first sheet
            by default.
        delimiter: CSV only: ``","``, ``";"`` or ``"\\t"``; detected by default
            (tab for ``.tsv``).

    Returns:
        The loaded dataset, with the records not loaded listed in ``skipped``.
        A ``.json`` file is an array of objects, or an object holding that
        array under one of the keys ``data``, ``items`` or ``rows`` (a warning
        then names the key read).

    Raises:
        DatasetError: the file is missing, in an unsupported format, not UTF-8
            (the message names the line and byte), malformed (a CSV row with
            more fields than the header, an unclosed quote, invalid JSON in a
            ``.json`` file: the line and column are named), has duplicate column
            names (named), is a JSON object with no single list of records
            under those keys, or has no rows (empty, header only, or every
            record skipped: the first problems are listed).
    """
    data, source_name = _read_source(source, name)
    fmt, suffix = _detect_format(source_name, format)
    if sheet is not None and fmt != "xlsx":
        raise DatasetError(f"sheet={sheet!r} applies to Excel files only, and this is read as {fmt}", path=source_name)
    if delimiter is not None and fmt != "csv":
        raise DatasetError(
            f"delimiter={delimiter!r} applies to CSV files only, and this is read as {fmt}", path=source_name
        )
    if delimiter is not None and delimiter not in _CSV_DELIMITERS:
        raise DatasetError(
            f"unsupported delimiter {delimiter!r}: use one of {', '.join(map(repr, _CSV_DELIMITERS))}",
            path=source_name,
        )
    if fmt == "csv":
        parsed = _read_csv(data, source_name, delimiter="\t" if delimiter is None and suffix == ".tsv" else delimiter)
    elif fmt == "jsonl":
        parsed = _read_jsonl(data, source_name)
    elif fmt == "json":
        parsed = _read_json(data, source_name)
    elif fmt == "parquet":
        parsed = _read_parquet(data, source_name)
    else:
        parsed = _read_xlsx(data, source_name, sheet)
    if not parsed.source_rows and parsed.skipped:
        listed = "; ".join(str(s) for s in parsed.skipped[:_MAX_LISTED])
        more = f" (and {len(parsed.skipped) - _MAX_LISTED} more)" if len(parsed.skipped) > _MAX_LISTED else ""
        raise DatasetError(
            f"no rows loaded: all {len(parsed.skipped)} records were skipped. First problems: {listed}{more}",
            path=source_name,
        )
    if parsed.frame is not None:
        frame = parsed.frame.reset_index(drop=True)
        make_frame = functools.partial(_given, frame)
    else:
        make_frame = functools.partial(_reset_index, parsed.make_frame)
    return LoadedDataset(
        source_name=source_name,
        format=fmt,
        skipped=parsed.skipped,
        warnings=parsed.warnings,
        source_rows=tuple(parsed.source_rows),
        plain=parsed.plain,
        make_frame=make_frame,
    )


def _given(frame: pd.DataFrame) -> pd.DataFrame:
    return frame


def _reset_index(make_frame: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    return make_frame().reset_index(drop=True)


def require_columns(dataset: LoadedDataset, required: Mapping[str, str | None]) -> None:
    """Check that the columns mapped to roles exist in the dataset.

    Args:
        dataset: a loaded dataset.
        required: role → column name, e.g. ``{"input": "prompt", "output":
            "response"}``. Roles mapped to None (or "") are not mapped and not checked.

    Raises:
        DatasetError: one or more columns are not in the dataset. The message
            names each role and its missing column, lists the columns read
            from the file, and suggests close matches; ``field`` is the first
            missing column.
    """
    columns = dataset.columns
    problems = []
    first_missing = None
    for role, column in required.items():
        if not column or column in columns:
            continue
        first_missing = first_missing or str(column)
        problems.append(
            f"the column {column!r} mapped to the {role!r} role is not in the file{_close_match_hint(str(column), columns)}"
        )
    if problems:
        raise DatasetError(
            f"{'; '.join(problems)}. Columns read from the header: {columns}. "
            "Map each role to one of these columns, or rename the column in the file.",
            path=dataset.source_name,
            field=first_missing,
        )


def unused_system_column(columns: Iterable[Any], mapping: Mapping[str, str | None]) -> str | None:
    """A column named ``system`` (any case) that plays no role, or None.

    Such a column is never guessed as the system message (the name often means the system under
    test, e.g. a model), so the Batch page and the command line point it out instead: if it holds
    the system prompt, it has to be chosen by hand, else the judge never sees it.

    >>> unused_system_column(["prompt", "response", "System"], {"input": "prompt", "output": "response"})
    'System'
    """
    used = {column for column in mapping.values() if column}
    return next((str(c) for c in columns if str(c).strip().lower() == "system" and c not in used), None)


def guess_columns(columns: Iterable[Any]) -> dict[str, str | None]:
    """Guess which columns play which role, from their names.

    Names are compared case-insensitively, with spaces and hyphens read as
    underscores (``"System Prompt"`` matches ``system_prompt``). For each role
    the first known name found wins, in the order: input (prompt, input,
    question, instruction, query, user_prompt), output (response, output, answer,
    completion, generation), system (system_prompt, system_message,
    system_instructions), ground_truth (ground_truth, groundtruth, reference,
    expected, expected_output, reference_answer, gold), id (id, row_id, uid,
    item_id, question_id, example_id, qid, key), context (context, contexts,
    passages, documents, retrieved_context), tool_calls (tool_calls, toolcalls,
    tools_called, tool_invocations), messages (messages, conversation,
    chat_messages). Only unambiguous names are guessed for what the judge reads:
    a column named ``system`` (often the model under test), ``user``, ``label`` or
    ``target`` is left for the user
    to map. A column is given one role at most.

    Args:
        columns: the column names, e.g. ``dataset.frame.columns``.

    Returns:
        role → column name (as spelled in ``columns``), or None when no column
        matches; the keys are :data:`ROLES` in order.

    >>> guess_columns(["ID", "Prompt", "Model Response", "response"])
    {'input': 'Prompt', 'output': 'response', 'system': None, 'ground_truth': None, 'id': 'ID', 'context': None, 'tool_calls': None, 'messages': None}
    """
    by_key: dict[str, str] = {}
    for column in columns:
        by_key.setdefault(_name_key(str(column)), str(column))
    used: set[str] = set()
    guessed: dict[str, str | None] = {}
    for role in ROLES:
        match = next((by_key[n] for n in _ROLE_NAMES[role] if n in by_key and by_key[n] not in used), None)
        guessed[role] = match
        if match is not None:
            used.add(match)
    return guessed


def iter_runs(dataset: LoadedDataset, mapping: Mapping[str, str | None]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """Turn each row into a seed-shaped run payload for a scorer.

    The mapping is checked before the first row is produced. A missing or
    empty input or response is passed through (as ``None`` or ``""``) rather
    than dropped, so the scorer reports the item as invalid input and the
    batch shows it.

    Args:
        dataset: a loaded dataset.
        mapping: role → column name. ``output`` is required (``input`` too for every scorer
            but textual difference or content similarity against the ground truth);
            ``system``, ``ground_truth``, ``id``, ``context`` and ``tool_calls`` are
            optional (absent or None).
            The output of :func:`guess_columns` can be passed as is once its
            required roles are set.

    Returns:
        An iterator of ``(row_index, item_id, payload)`` in row order:
        ``row_index`` is the 0-based position in ``dataset.frame``;
        ``item_id`` is the id column's value as text, or the row label
        (``"line 12"``) when there is no id column or the cell is empty;
        ``payload`` is ``{"input": {"inputMessages": [{"role": "user",
        "content": ...}], "systemMessages": [...]}, "output": {"text": ...},
        "ground_truth"?: str}``, without ``output`` when the output cell is missing (a
        missing key, null, NaN: every scorer reports the row as ``missing_input``, naming
        the output; an empty text cell is an empty response). Cells are converted to text: numbers
        without a trailing ``.0`` when whole, lists and dicts as JSON;
        an empty or missing system cell gives no system message. ``ground_truth``
        is there only when a column is mapped to it, in every row (``""`` for an empty
        or missing cell), so a scorer that compares with it reports such a row as
        ``missing_input`` instead of comparing with the input. An input cell holding a list of
        ``{"role", "content"}`` messages or a Mastra agent run input
        (``{"inputMessages", "systemMessages", ...}``), or an output cell holding a
        message or a list of messages (JSON datasets, such as an export of Mastra
        scorer runs), is passed as is.

    Raises:
        DatasetError: an unknown role, a required role not mapped, a mapped
            column not in the dataset (see :func:`require_columns`), or an id
            column with duplicate values (the values and their rows are named).
    """
    unknown = [role for role in mapping if role not in ROLES]
    if unknown:
        raise DatasetError(f"unknown role(s) {unknown}: the roles are {list(ROLES)}", path=dataset.source_name)
    for role in _REQUIRED_ROLES:
        if not mapping.get(role) and not mapping.get("messages"):
            raise DatasetError(
                f"no column is mapped to the {role!r} role, which is required. Columns: {dataset.columns}",
                path=dataset.source_name,
                field=role,
            )
    require_columns(dataset, mapping)
    item_ids = _item_ids(dataset, mapping.get("id"))
    return _runs(dataset, mapping, item_ids)


def unmapped_columns(
    dataset: LoadedDataset, mapping: Mapping[str, Any], exclude: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """Per row, the dataset's columns that no role is mapped to (ids, metadata, human votes ...).

    Runs keep them so exports can carry them through next to the scores.

    Args:
        dataset: a loaded dataset.
        mapping: role → column, as for :func:`iter_runs` (non-text values are ignored).
        exclude: further columns to leave out (e.g. the group-by columns, kept as groups).

    Returns:
        One dict per row, in row order, column name → a plain JSON value: numbers and
        booleans as they are, missing cells (None, NaN, NaT) as None, anything else
        as text (see :func:`iter_runs` for how cells become text).
    """
    used = {c for c in mapping.values() if isinstance(c, str) and c} | set(exclude)
    names = [c for c in (dataset.plain if dataset.plain is not None else dataset.frame.columns) if c not in used]
    columns = {str(name): dataset.column_values(name) for name in names}
    return [
        {name: _plain_value(values[i]) for name, values in columns.items()} for i in range(len(dataset.source_rows))
    ]


_TEXT_ROLES = {"input": "prompt", "output": "response", "system": "system message", "ground_truth": "ground truth"}
"""The roles whose cells are read as text, and their names in messages."""


def not_text_notices(
    dataset: LoadedDataset, mapping: Mapping[str, str | None], *, messages_as_is: bool = True
) -> list[str]:
    """Say which mapped text fields hold JSON values that are not text (numbers, booleans, lists, objects).

    Such a value is scored as its text (numbers as written, ``true``/``false``, lists and objects as
    JSON; see :func:`iter_runs`): this is decided, and the user must be told before anything is
    scored. Messages passed as they are (a list of ``{"role", "content"}`` messages as the prompt or
    response, a message object as the response (:func:`_is_message`) or a Mastra agent run input) are
    not text by design and are not counted; nor are missing cells; any other object is counted. A mapped
    messages column's cells that hold no list of messages (read as the prompt's text) are named, and, when no
    response column is mapped, its conversations that end without an assistant reply (no response: ``missing_input``);
    so are its conversations with a message of an unknown role (``invalid_input``).

    Args:
        dataset: a loaded dataset.
        mapping: role → column, as for :func:`iter_runs`; the prompt (``input``), response
            (``output``), system message and ground truth columns are checked.
        messages_as_is: messages are passed as they are (:func:`iter_runs`); False where every cell
            is read as text, messages too (the Compare page's columns).

    Returns:
        One sentence per field that holds such values, naming the field and its role, how many rows
        and which kinds, and the first row's line (or row) number, e.g. ``"Field 'answer' (the
        response) is not text in 2 rows (2 numbers), the first on line 3: each is scored as its
        text (numbers as written, true/false, lists and objects as JSON)."``; empty when every value is text.
    """
    notices = []
    for role, name in _TEXT_ROLES.items():
        column = mapping.get(role)
        if not column or column not in dataset.columns:
            continue
        kinds: Counter[str] = Counter()
        first = None
        for i, value in enumerate(dataset.column_values(column)):
            kind = _not_text_kind(value, role if messages_as_is else "")
            if kind is not None:
                kinds[kind] += 1
                first = i if first is None else first
        if first is None:
            continue
        n = sum(kinds.values())
        shown = ", ".join(f"{count} {kind if count == 1 else kind + 's'}" for kind, count in kinds.most_common())
        notices.append(
            f"Field {column!r} (the {name}) is not text in {n} row{'' if n == 1 else 's'} ({shown}), the first on "
            f"{dataset.row_label(first)}: each is scored as its text (numbers as written, true/false, lists and "
            "objects as JSON)."
        )
    column = mapping.get("messages")
    if messages_as_is and column and column in dataset.columns:
        notices += _conversation_notices(dataset, column, response_mapped=bool(mapping.get("output")))
    return notices


def blank_response_note(payloads: Iterable[Mapping[str, Any]], scorers: Sequence[Any]) -> str | None:
    """The note said before a run (Batch page, CLI) when rows have a response that is there but blank (an empty CSV
    cell, or a reply whose content parts hold no text: :func:`_blank_response`) and a chosen scorer reads the response: how many such rows there are and what each chosen scorer that
    reads the response does with them. Textual difference and content similarity score each 0 by their formula
    (SPEC §1.2: one empty text → 0), and those 0s count in their mean; a scorer that requires the response does not
    score them (``missing_input``); another that reads it scores them with the response empty. None when no row's
    response is blank or no chosen scorer reads the response.

    Args:
        payloads: the run's payloads.
        scorers: the run's scorers (each with ``id``, ``name`` and ``check(payload)``, which raises
            :class:`~scorers.core.errors.ScorerError` for a row it will not score; the fields it reads are its
            ``spec.reads``, the response among them when it has no spec).
    """
    blank = [p for p in payloads if _blank_response(p)]
    reading = [s for s in scorers if "output" in getattr(getattr(s, "spec", None), "reads", ("output",))]
    if not blank or not reading:
        return None
    n = len(blank)
    sentences, not_scoring = [], []
    for scorer in reading:
        scored = sum(_checks(scorer, p) for p in blank)
        them = "each" if scored == n else f"{scored} of them"
        if not scored:
            not_scoring.append(scorer.name)
        elif scorer.id in _EMPTY_TEXT_SCORES_0:
            sentences.append(
                f"{scorer.name} scores {them} 0 by its formula (an empty text against a non-empty one is 0), and "
                "those 0s count in its mean."
            )
        else:
            sentences.append(f"{scorer.name} scores {them} with the response empty.")
    if not_scoring:
        sentences.append(f"{', '.join(not_scoring)} will not score them (not scored: Missing input).")
    return (
        f"{n} row{'' if n == 1 else 's'} ha{'s' if n == 1 else 've'} a blank response. {' '.join(sentences)} If "
        "these rows have no answer rather than an empty one, leave them out of the file."
    )


def _blank_response(payload: Mapping[str, Any]) -> bool:
    """Whether a payload has a response that is there but blank as the scorers read it: a blank string, or a
    response object or message list whose reply text is blank (content parts with no text, ``content: []``); not
    a conversation without a reply, nor a row that cannot be read."""
    text = response_text(payload)
    if text is not None:
        return not text.strip()
    if not isinstance(payload.get("output"), (list, dict)):
        return False
    try:
        run = normalize_run(dict(payload))
    except ScorerError:
        return False
    return run.no_reply is None and not run.output.strip()


_EMPTY_TEXT_SCORES_0 = ("textual-difference", "content-similarity")
"""The scorers that compare the response's text with another text by a formula that scores an empty text 0."""


def _checks(scorer: Any, payload: Mapping[str, Any]) -> bool:
    try:
        scorer.check(payload)
    except ScorerError:
        return False
    return True


def response_text(payload: Mapping[str, Any]) -> str | None:
    """A payload's response text as the scorers read it (a string, or a response object's text), None when it has
    none (no output, or an output that is not text)."""
    output = payload.get("output")
    if isinstance(output, str):
        return output
    key = response_text_key(output)
    return None if key is None else output[key]


def response_text_key(output: Any) -> str | None:
    """The key holding a response object's text, as the scorers read it: ``text``, else a message's ``content``
    (a conversation's final assistant message); None when neither is a string."""
    if not isinstance(output, Mapping):
        return None
    key = "text" if output.get("text") is not None else "content"
    return key if isinstance(output.get(key), str) else None


def _conversation_notices(dataset: LoadedDataset, column: str, *, response_mapped: bool) -> list[str]:
    """Say which cells of the messages ``column`` are no conversation (read as the prompt's text), which are an
    empty list (no prompt), which hold a message that cannot be read (no text content: ``invalid_input``), which
    hold a message whose role is not one of :data:`~scorers.core.base.MESSAGE_ROLES` (``invalid_input``) and, when
    no response column is mapped, which conversations end without an assistant reply (no response: ``missing_input``)."""
    not_lists: list[int] = []
    no_reply: list[int] = []
    unknown_roles: list[int] = []
    empty: list[int] = []
    unreadable: list[int] = []
    first_why = ""
    roles: Counter[str] = Counter()
    for i, cell in enumerate(dataset.column_values(column)):
        turns = conversation_turns(cell)
        if turns is None:
            if cell_text(cell) is not None:  # a missing cell is said elsewhere: no prompt
                not_lists.append(i)
            continue
        unknown = [t.get("role") for t in turns if t.get("role", "user") not in MESSAGE_ROLES]
        if not turns:
            empty.append(i)
        elif unknown:
            unknown_roles.append(i)
            roles.update(repr(r) for r in unknown)
        elif (why := _unreadable(turns)) is not None:
            unreadable.append(i)
            first_why = first_why or why
        elif not response_mapped and split_conversation(turns)[1] is None:
            no_reply.append(i)

    def rows(found: list[int]) -> str:
        return f"{len(found)} row{'' if len(found) == 1 else 's'}, the first on {dataset.row_label(found[0])}"

    notices = []
    if not_lists:
        notices.append(
            f"Field {column!r} (the conversation) is not a list of messages in {rows(not_lists)}: each is read as "
            + (
                "the prompt's text."
                if response_mapped
                else "the prompt's text, with no response (not scored: Missing input)."
            )
        )
    if empty:
        notices.append(
            f"Field {column!r} (the conversation) is an empty list of messages in {rows(empty)}: no prompt"
            + (
                " (not scored where the input is needed: Missing input)."
                if response_mapped
                else " and no response (not scored: Missing input)."
            )
        )
    if unknown_roles:
        notices.append(
            f"Field {column!r} (the conversation) has a message whose role is not one of {', '.join(MESSAGE_ROLES)} "
            f"in {rows(unknown_roles)} (roles {', '.join(roles)}): not scored (Invalid input)."
        )
    if unreadable:
        notices.append(
            f"Field {column!r} (the conversation) has a message that cannot be read in {rows(unreadable)} "
            f"({first_why}): not scored (Invalid input)."
        )
    if no_reply:
        notices.append(
            f"Field {column!r} (the conversation) ends without an assistant reply in {rows(no_reply)}: "
            "no response to score (not scored: Missing input)."
        )
    return notices


def _unreadable(turns: list[Any]) -> str | None:
    """Why a conversation's messages cannot be read (a message with no text content ...), as the scorers will say
    (``invalid_input``), or None."""
    try:
        normalize_run({"input": turns, "output": ""})
    except InvalidInputError as exc:
        return str(exc)
    return None


def _not_text_kind(value: Any, role: str) -> str | None:
    """``"number"``, ``"boolean"``, ``"list"`` or ``"object"`` for a cell of ``role`` read as text though it is not
    text; None for text, a missing cell, or messages passed as they are."""
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        value = value.tolist()
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, list):
        return None if _is_message_list(value) and role in ("input", "output") else "list"
    if isinstance(value, dict):
        passed = (role == "output" and _is_message(value)) or (role == "input" and "inputMessages" in value)
        return None if passed else "object"
    return None


_MESSAGE_KEYS = ("text", "content", "role", "toolInvocations", "tool_calls")


def _is_message(value: dict[str, Any]) -> bool:
    """Whether an object is a response message passed as it is: ``{"text": ...}``, a ``{"role", "content"}``
    message (OpenAI's, or Mastra's with v2 ``content``) or an assistant turn that only calls tools; any other
    object is scored as its JSON text."""
    return any(key in value for key in _MESSAGE_KEYS)


def _is_message_list(value: Any) -> bool:
    """Whether a value is a list of messages passed as it is (a conversation): a non-empty list of objects
    that are each a message (:func:`_is_message`); any other list is scored as its JSON text."""
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and _is_message(m) for m in value)


def _numpy() -> Any:
    """numpy when it has been imported, else None: only then can a value be a numpy object."""
    return sys.modules.get("numpy")


def _plain_value(value: Any) -> Any:
    np = _numpy()
    if np is not None and isinstance(value, np.generic) and not isinstance(value, np.datetime64):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return cell_text(value)


def _runs(
    dataset: LoadedDataset, mapping: Mapping[str, str | None], item_ids: list[str]
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    columns = {role: dataset.column_values(column) for role, column in mapping.items() if column and role != "id"}
    for i, item_id in enumerate(item_ids):
        system = cell_text(columns["system"][i]) if "system" in columns else None
        if "messages" in columns:
            output = columns["output"][i] if "output" in columns else None
            payload = conversation_run(columns["messages"][i], output, [system] if system and system.strip() else [])
        else:
            payload = {"input": _run_input(columns["input"][i] if "input" in columns else None, system)}
            output = _output_value(columns["output"][i])
            if output is not None:  # a missing key, null or NaN: no output (missing_input, naming it)
                payload["output"] = output
        if "ground_truth" in columns:  # carried in every row, "" when blank (missing_input where required)
            payload["ground_truth"] = cell_text(columns["ground_truth"][i]) or ""
        if "context" in columns:
            payload["context"] = _json_list(columns["context"][i], strings=True)
        if "tool_calls" in columns:
            payload["tool_calls"] = _json_list(columns["tool_calls"][i], strings=False)
        yield i, item_id, payload


def shared_columns(roles: Mapping[str, str | Sequence[str] | None]) -> list[str]:
    """One sentence per column that plays more than one role, e.g. the response column also chosen as a
    breakdown column or as the ground truth, where the scorers would read the same text twice (textual difference of
    a response with itself scores 1): Compare warns about it, Batch and the CLI refuse it.

    Args:
        roles: role label → the chosen column, None, or several columns (the breakdown columns).

    Returns:
        The sentences, in the order the columns are first used; empty when every role has its own column.

    >>> shared_columns({"response": "category", "breakdown": ["category"], "question": "turn"})
    ["Column 'category' is used as the response and as the breakdown."]
    """
    users: dict[str, list[str]] = {}
    for role, chosen in roles.items():
        for column in [chosen] if isinstance(chosen, str) or chosen is None else chosen:
            if column is not None:
                users.setdefault(column, []).append(role)
    return [
        f"Column {column!r} is used as the {' and as the '.join(used)}."
        for column, used in users.items()
        if len(used) > 1
    ]


def conversation_run(cell: Any, output: Any, system: Sequence[str] = ()) -> dict[str, Any]:
    """A messages cell (OpenAI chat format: a list of ``{"role", "content"}``, or its JSON text) as a
    run: the turns are the input; the response is the output cell when one is mapped, else the
    conversation's final message when it is the assistant's (:func:`split_conversation`); a conversation that
    does not end with an assistant reply has no response (``missing_input`` for every scorer, never an empty
    response or an earlier exchange scored).

    A cell that holds no list of messages is the prompt's text, given as text (not as a one-message list, so that a
    row without a response says so, not that a conversation ends with a user turn); :func:`not_text_notices` names
    such rows before the run. An empty list is an empty conversation (no prompt), not the text ``"[]"``. The one
    reader of a conversation for the CLI, the Batch page and the Evaluate form.

    Args:
        cell: the messages cell: a list of messages, its JSON text, or any other value (the prompt's text).
        output: the response cell when a response column is mapped (None when its cell is missing: no output),
            None when none is (the response is then the conversation's final assistant reply, if any).
        system: system messages to put before the turns.

    Returns:
        ``{"input": [messages...], "output"?: ...}``: the run's input and, when there is one, its output.
    """
    system_turns = [{"role": "system", "content": m} for m in system]
    turns = conversation_turns(cell)
    value = _output_value(output)
    if turns is not None and output is None:  # the response is the conversation's final assistant reply, if any
        earlier, reply = split_conversation(turns)
        return {"input": [*system_turns, *earlier]} | ({} if reply is None else {"output": reply})
    text = cell_text(cell) if turns is None else None
    prompt = turns if turns is not None else [] if text is None else [{"role": "user", "content": text}]
    if value is not None:
        return {"input": [*system_turns, *prompt], "output": value}
    # No response given (a missing response cell, or a prompt's text without one): the input's shape says so, not
    # that a conversation ends with a user turn (normalize_run's reason).
    if text is not None and not system_turns:
        return {"input": text}
    return {"input": {"inputMessages": prompt, "systemMessages": system_turns}}


def conversation_turns(cell: Any) -> list[Any] | None:
    """A messages cell's turns: the list it holds (a list value, or its JSON text; ``[]`` is an empty conversation),
    None when it holds no list of messages (:func:`_is_message_list`)."""
    np = _numpy()
    if np is not None and isinstance(cell, np.ndarray):
        cell = cell.tolist()
    if isinstance(cell, str):
        try:
            cell = json.loads(cell)
        except json.JSONDecodeError:
            return None
    return cell if cell == [] or _is_message_list(cell) else None


def _json_list(cell: Any, *, strings: bool) -> Any:
    """A cell holding a JSON list (or, for context, plain text: one passage).

    Values that cannot be read are passed through as they are, so the scorer
    reports the item as invalid input (naming the field) instead of it being dropped.
    """
    if isinstance(cell, list):
        return cell
    text = cell_text(cell)
    if text is None or not text.strip():
        return [] if strings else None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return [text] if strings else text
    return value if isinstance(value, list) or not strings else [text]


def _item_ids(dataset: LoadedDataset, id_column: str | None) -> list[str]:
    n = len(dataset.source_rows)
    if not id_column:
        return [dataset.row_label(i) for i in range(n)]
    ids = []
    for i, value in enumerate(dataset.column_values(id_column)):
        text = cell_text(value)
        ids.append(text.strip() if text and text.strip() else dataset.row_label(i))
    duplicates = [(value, count) for value, count in Counter(ids).items() if count > 1]
    if duplicates:
        shown = "; ".join(
            f"{value!r} on {', '.join(dataset.row_label(i) for i, v in enumerate(ids) if v == value)}"
            for value, _ in duplicates[:_MAX_LISTED]
        )
        raise DatasetError(
            f"the id column {id_column!r} has duplicate values ({len(duplicates)} repeated): {shown}. "
            "Item ids must be unique: fix the ids, map the id role to another column, or leave it unmapped "
            "to use the row labels as ids.",
            path=dataset.source_name,
            field=id_column,
        )
    return ids


def _run_input(value: Any, system: str | None) -> dict[str, Any]:
    """The run's input: a Mastra agent run input (``{"inputMessages", ...}``, from a
    JSON export of Mastra scorer runs) as it is, else the cell as the user message(s);
    a mapped system cell adds a system message."""
    system_messages = [{"role": "system", "content": system}] if system and system.strip() else []
    if isinstance(value, dict) and "inputMessages" in value:
        return {**value, "systemMessages": [*(value.get("systemMessages") or []), *system_messages]}
    return {"inputMessages": _input_messages(value), "systemMessages": system_messages}


def _input_messages(value: Any) -> list[Any]:
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        value = value.tolist()
    if _is_message_list(value):
        return value
    text = cell_text(value)
    return [] if text is None else [{"role": "user", "content": text}]  # no cell: no user message (missing_input)


def _output_value(value: Any) -> Any:
    """The run's output from a cell: a message or list of messages as it is, text as ``{"text": ...}``
    (any other value as its text: another object as JSON), None when the cell is missing (a missing key,
    null, NaN), so the run has no output."""
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        value = value.tolist()
    if (isinstance(value, dict) and _is_message(value)) or _is_message_list(value):
        return value
    text = cell_text(value)
    return None if text is None else {"text": text}


def cell_text(value: Any) -> str | None:
    """A cell as the text a scorer reads, or None when it is missing (None, NaN, NaT).

    Numbers without a trailing ``.0`` when whole, booleans as ``true``/``false``, lists and dicts as JSON.
    """
    if isinstance(value, str):
        return value
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    if value is None:
        return None
    pd = sys.modules.get("pandas")  # only then can a value be pandas' NA or NaT
    if pd is not None and (value is pd.NA or value is pd.NaT):
        return None
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return str(value)


def _name_key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def _close_match_hint(column: str, columns: list[str]) -> str:
    same = [c for c in columns if _name_key(c) == _name_key(column)]
    matches = same or difflib.get_close_matches(column, columns, n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, matches))}?)" if matches else ""


# --- reading the source --------------------------------------------------------------------------


def _read_source(source: Any, name: str | None) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), name or "<uploaded data>"
    if isinstance(source, (str, Path)):
        display = name or str(source)
        if isinstance(source, str) and ("\n" in source or len(source) > 4096):
            raise DatasetError(
                "this looks like file content, not a path: pass the content as bytes "
                "(load_dataset(text.encode(), name='data.csv'))",
                path="<text>",
            )
        try:
            return Path(source).read_bytes(), display
        except FileNotFoundError:
            raise DatasetError("file not found: check the path", path=display) from None
        except IsADirectoryError:
            raise DatasetError("this is a directory, not a file", path=display) from None
        except OSError as exc:
            raise DatasetError(f"cannot read the file: {exc.strerror or exc}", path=display) from None
    if hasattr(source, "read"):
        data = source.getvalue() if hasattr(source, "getvalue") else source.read()
        if isinstance(data, str):
            raise DatasetError("the file object was opened in text mode: open it in binary mode ('rb')", path=name)
        return bytes(data), name or str(getattr(source, "name", "<uploaded data>"))
    raise InvalidInputError(
        f"expected a path, bytes or a binary file object, got {type(source).__name__}", field="source"
    )


def _detect_format(source_name: str, format: str | None) -> tuple[str, str]:
    suffix = PurePath(source_name).suffix.lower()
    supported = f"supported formats: {', '.join(SUPPORTED_FORMATS)} (extensions {', '.join(_EXTENSION_FORMATS)})"
    if format is not None:
        key = format.lower().lstrip(".")
        fmt = key if key in SUPPORTED_FORMATS else _EXTENSION_FORMATS.get(f".{key}")
        if fmt is None:
            raise DatasetError(f"unknown format {format!r}; {supported}", path=source_name)
        return fmt, ".tsv" if key == "tsv" else suffix
    if suffix in _EXTENSION_FORMATS:
        return _EXTENSION_FORMATS[suffix], suffix
    what = f"extension {suffix!r}" if suffix else "no extension"
    raise DatasetError(
        f"cannot tell the file format: the name has {what}; {supported}. Rename the file or pass format=...",
        path=source_name,
    )


def _reject_utf16(data: bytes, source_name: str) -> None:
    if data.startswith(_UTF16_BOMS):
        raise DatasetError(
            "the file is UTF-16 encoded (Excel's 'Unicode Text' export), not UTF-8. " + _FIX_ENCODING,
            path=source_name,
        )


def _decode(data: bytes, source_name: str) -> str:
    """UTF-8 text (a leading BOM removed); an error naming the line and byte otherwise."""
    _reject_utf16(data, source_name)
    body = data[len(_UTF8_BOM) :] if data.startswith(_UTF8_BOM) else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + len(data) - len(body)
        line_start = data.rfind(b"\n", 0, offset) + 1
        raise DatasetError(
            f"byte 0x{data[offset]:02x} at byte offset {offset} is not valid UTF-8 ({exc.reason}). {_FIX_ENCODING}",
            path=source_name,
            line=data.count(b"\n", 0, offset) + 1,
            column=offset - line_start + 1,
        ) from None


def _no_rows(source_name: str, why: str) -> DatasetError:
    return DatasetError(f"no rows: {why}", path=source_name)


def _listed(labels: list[str]) -> str:
    shown = ", ".join(labels[:_MAX_LISTED])
    return shown + (f" and {len(labels) - _MAX_LISTED} more" if len(labels) > _MAX_LISTED else "")


def _header_names(raw: list[Any], where: str, source_name: str, **location: int) -> tuple[list[str], list[str]]:
    """Column names from a header; unnamed columns get ``column_N``; duplicates are an error."""
    names = []
    warnings = []
    for j, value in enumerate(raw):
        text = cell_text(value)
        if text is None or not text.strip():
            text = f"column_{j + 1}"
            warnings.append(f"column {j + 1} has no name in the header ({where}); it was named {text!r}")
        names.append(text)
    duplicates = [n for n, count in Counter(names).items() if count > 1]
    if duplicates:
        raise DatasetError(
            f"duplicate column names in the header: {', '.join(map(repr, duplicates))}. Each column needs a "
            "unique name (otherwise one would silently hide or rename the other): rename the repeated columns",
            path=source_name,
            field=duplicates[0],
            **location,
        )
    return names, warnings


# --- CSV ----------------------------------------------------------------------------------------

_CSV_LIMIT_LOCK = threading.Lock()


@contextmanager
def _csv_field_limit(limit: int) -> Iterator[None]:
    """Raise :mod:`csv`'s per-field size limit (131072 by default) while reading one file.

    The limit is process-wide; it is raised only as far as the file's length
    (no field can be longer) and restored afterwards.
    """
    with _CSV_LIMIT_LOCK:
        old = csv.field_size_limit()
        csv.field_size_limit(max(old, limit))
        try:
            yield
        finally:
            csv.field_size_limit(old)


def _sniff_delimiter(text: str) -> str:
    """The delimiter among ``, ; \\t``: the only one in the header line, else csv.Sniffer's pick, else the most frequent."""
    header = next((line for line in text.split("\n") if line.strip()), "")
    counts = {d: header.count(d) for d in _CSV_DELIMITERS}
    present = [d for d in _CSV_DELIMITERS if counts[d]]
    if len(present) <= 1:
        return present[0] if present else ","
    try:
        sniffed = csv.Sniffer().sniff(text[:_SNIFF_SAMPLE_CHARS], delimiters="".join(present)).delimiter
    except csv.Error:
        sniffed = None
    return sniffed if sniffed in present else max(present, key=lambda d: counts[d])


def _csv_records(text: str, delimiter: str, source_name: str) -> list[tuple[int, list[str]]]:
    """``(start line, fields)`` of each non-blank record."""
    reader = csv.reader(
        io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"', doublequote=True, strict=True
    )
    records = []
    previous = 0
    with _csv_field_limit(len(text) + 1):
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                return records
            except csv.Error as exc:
                raise _csv_error(exc, previous + 1, reader.line_num, delimiter, source_name) from None
            if fields:
                records.append((previous + 1, fields))
            previous = reader.line_num


def _csv_error(exc: csv.Error, start: int, current: int, delimiter: str, source_name: str) -> DatasetError:
    message = str(exc)
    if "unexpected end of data" in message:
        return DatasetError(
            "a quoted field that starts in this record is never closed: the file ends inside quotes. "
            'Close the quote, and write a quote inside a quoted field as two quotes ("")',
            path=source_name,
            line=start,
        )
    if "expected after" in message:
        return DatasetError(
            f"a quoted field is followed by other characters before the next delimiter {delimiter!r}. "
            'Inside a quoted field write a quote as two quotes (""), and put nothing between the closing quote '
            "and the delimiter",
            path=source_name,
            line=current,
        )
    return DatasetError(f"cannot parse this CSV record ({message}); check its quoting", path=source_name, line=start)


def _read_csv(data: bytes, source_name: str, *, delimiter: str | None) -> _Parsed:
    text = _decode(data, source_name)
    if not text.strip():
        raise _no_rows(source_name, "the file is empty")
    delimiter = delimiter or _sniff_delimiter(text)
    records = _csv_records(text, delimiter, source_name)
    header_line, header = records[0]
    names, warnings = _header_names(header, f"line {header_line}", source_name, line=header_line)
    rows: list[list[str]] = []
    source_rows: list[int] = []
    short: list[str] = []
    empty: list[str] = []
    for line, fields in records[1:]:
        if len(fields) > len(names):
            raise DatasetError(
                f"this row has {len(fields)} fields but the header (line {header_line}) has {len(names)} "
                f"columns {names}. The delimiter is {delimiter!r}: a field containing it must be quoted, or the "
                "delimiter is wrong (pass delimiter=...)",
                path=source_name,
                line=line,
            )
        if not any(f.strip() for f in fields):
            empty.append(f"line {line}")
            continue
        if len(fields) < len(names):
            short.append(f"line {line}")
            fields = fields + [""] * (len(names) - len(fields))
        rows.append(fields)
        source_rows.append(line)
    if not rows:
        raise _no_rows(source_name, f"the file has a header line (columns {names}) but no data rows")
    if short:
        warnings.append(
            f"{len(short)} row(s) had fewer fields than the {len(names)} columns of the header; the missing "
            f"fields were read as empty: {_listed(short)}"
        )
    if empty:
        warnings.append(f"{len(empty)} row(s) with every field empty were ignored: {_listed(empty)}")
    plain = {name: [row[j] for row in rows] for j, name in enumerate(names)}
    return _Parsed(
        None, source_rows, warnings=warnings, plain=plain, make_frame=functools.partial(_csv_frame, rows, names)
    )


def _csv_frame(rows: list[list[str]], names: list[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=names, dtype=str)


# --- JSON Lines and JSON -----------------------------------------------------------------------------


class _DuplicateKeyObject(dict):
    """A JSON object in which some keys appeared more than once (``duplicates``)."""

    duplicates: list[str]


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    flagged = _DuplicateKeyObject(obj)
    counts = Counter(key for key, _ in pairs)
    flagged.duplicates = [key for key in obj if counts[key] > 1]
    return flagged


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """``(path, value)`` for ``value`` and everything nested in it."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def _unencodable(text: str) -> int | None:
    """The index of the first character that UTF-8 cannot encode (a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _record_problem(value: Any) -> str | None:
    """Why a parsed JSON value cannot be a row, or None when it can."""
    if not isinstance(value, dict):
        return f'not a JSON object (found {_json_kind(value)}); each record must be an object such as {{"prompt": ..., "response": ...}}'
    if not value:
        return "an empty JSON object {} (no fields)"
    for path, item in _walk(value, ""):
        if isinstance(item, _DuplicateKeyObject):
            where = f" in {path!r}" if path else ""
            return (
                f"duplicate key(s) {', '.join(map(repr, item.duplicates))}{where} in one object: JSON keeps only "
                "the last value, so the record is ambiguous. Remove or rename the repeated key"
            )
        if isinstance(item, dict):
            for key in item:
                if _unencodable(key) is not None:
                    return f"the key {key!r} contains a lone surrogate (an unpaired \\ud800-\\udfff escape) that cannot be encoded as UTF-8; fix the escape in the file"
        if isinstance(item, str) and (index := _unencodable(item)) is not None:
            column = path.split(".")[0].split("[")[0]
            return (
                f"column {column!r} (at {path!r}, character {index + 1}) contains a lone surrogate "
                f"{item[index]!r} (an unpaired \\ud800-\\udfff escape) that cannot be encoded as UTF-8; "
                "fix the escape in the file (a surrogate pair needs both halves, e.g. \\ud83d\\ude00)"
            )
    return None


def _records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_records(records) if records else pd.DataFrame()


# The kinds of JSON value whose column pandas keeps as the same Python values (``tolist()`` gives
# them back): text, booleans, whole numbers that fit in 64 bits, fractional numbers, arrays, objects.
_PLAIN_KINDS = (str, bool, int, float, list, dict)


def _plain_records(records: list[dict[str, Any]]) -> dict[str, list[Any]] | None:
    """The records as columns, when every record has the same keys and each column holds one kind
    of value of :data:`_PLAIN_KINDS` (so ``pandas.DataFrame.from_records`` would convert none of
    them); else None."""
    if not records:
        return None
    names = list(records[0])
    keys = set(names)
    if any(len(r) != len(names) or r.keys() != keys for r in records):
        return None  # a key missing from some records: pandas fills NaN
    plain = {}
    for name in names:
        values = [r[name] for r in records]
        kind = type(values[0])
        if kind not in _PLAIN_KINDS or any(type(v) is not kind for v in values):
            return None  # null, or mixed kinds (pandas makes 1 and 2.5 floats)
        if kind is int and not all(-(2**63) <= v < 2**63 for v in values):
            return None
        plain[name] = values
    return plain


def _records(
    records: list[dict[str, Any]], source_rows: list[int], skipped: list[SkippedRow], warnings: list[str] | None = None
) -> _Parsed:
    """Plain columns when pandas would keep the values as they are (:func:`_plain_records`), else the frame."""
    plain = _plain_records(records)
    warnings = warnings or []
    if plain is None:
        return _Parsed(_records_frame(records), source_rows, skipped=skipped, warnings=warnings)
    return _Parsed(
        None,
        source_rows,
        skipped=skipped,
        warnings=warnings,
        plain=plain,
        make_frame=functools.partial(_records_frame, records),
    )


def _read_jsonl(data: bytes, source_name: str) -> _Parsed:
    _reject_utf16(data, source_name)
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    records: list[dict[str, Any]] = []
    source_rows: list[int] = []
    skipped: list[SkippedRow] = []
    first_record = True
    # Split on "\n" only: str.splitlines() would also split on U+2028 and U+0085,
    # which JSON allows unescaped inside strings.
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            skipped.append(
                SkippedRow(
                    number,
                    None,
                    f"byte 0x{raw[exc.start]:02x} at byte column {exc.start + 1} is not valid UTF-8 ({exc.reason}); save the file as UTF-8",
                )
            )
            continue
        is_first, first_record = first_record, False
        try:
            value = json.loads(text, object_pairs_hook=_object_pairs)
        except json.JSONDecodeError as exc:
            if is_first and text.lstrip().startswith("["):
                raise DatasetError(
                    f"invalid JSON at column {exc.colno}: {exc.msg}. The file starts with '[', so it looks like one "
                    "JSON array rather than JSON Lines (one object per line): rename it to .json or pass format='json'",
                    path=source_name,
                    line=number,
                    column=exc.colno,
                ) from None
            skipped.append(SkippedRow(number, None, f"invalid JSON at column {exc.colno}: {exc.msg}"))
            continue
        problem = _record_problem(value)
        if problem:
            skipped.append(SkippedRow(number, None, problem))
            continue
        records.append(value)
        source_rows.append(number)
    if not records and not skipped:
        raise _no_rows(source_name, "the file is empty (JSON Lines: one JSON object per line)")
    return _records(records, source_rows, skipped)


def _read_json(data: bytes, source_name: str) -> _Parsed:
    text = _decode(data, source_name)
    if not text.strip():
        raise _no_rows(source_name, "the file is empty")
    try:
        document = json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data":
            hint = (
                " The file holds more than one JSON value; if it has one object per line it is JSON Lines: "
                "rename it to .jsonl or pass format='jsonl'."
            )
        raise DatasetError(
            f"invalid JSON: {exc.msg}.{hint}", path=source_name, line=exc.lineno, column=exc.colno
        ) from None
    prefix, original = "", document
    if isinstance(document, dict):
        if isinstance(document, _DuplicateKeyObject):
            raise DatasetError(f"duplicate top-level key(s) {document.duplicates}: keep one of each", path=source_name)
        keys = [k for k in _JSON_WRAPPER_KEYS if isinstance(document.get(k), list)]
        if len(keys) > 1:
            raise DatasetError(
                f"the top level is an object with more than one list of records (under keys {keys}): "
                "keep one, or save the records as a top-level array",
                path=source_name,
            )
        if not keys:
            raise DatasetError(
                f"expected an array of objects, or an object holding one under {' / '.join(map(repr, _JSON_WRAPPER_KEYS))}; "
                f"found an object with keys {list(document)[:10]}. If the file has one object per line, it is JSON "
                "Lines: rename it to .jsonl",
                path=source_name,
            )
        document, prefix = document[keys[0]], keys[0]
    elif not isinstance(document, list):
        raise DatasetError(f"expected an array of objects, found {_json_kind(document)}", path=source_name)
    if not document:
        raise _no_rows(source_name, f"the array{f' {prefix!r}' if prefix else ''} is empty")
    records: list[dict[str, Any]] = []
    source_rows: list[int] = []
    skipped: list[SkippedRow] = []
    for index, value in enumerate(document):
        problem = _record_problem(value)
        if problem:
            skipped.append(SkippedRow(None, index + 1, f"element {prefix}[{index}]: {problem}"))
            continue
        records.append(value)
        source_rows.append(index + 1)
    warnings = []
    if prefix:  # said, so that a file whose other keys hold records too is not read short unnoticed
        others = [k for k in original if k != prefix]
        warnings.append(
            f"the top level is an object: read the {len(records)} record(s) under key {prefix!r}"
            + (f"; its other key(s) {others[:10]} were not read" if others else "")
        )
    return _records(records, source_rows, skipped, warnings)


# --- Parquet and Excel -----------------------------------------------------------------------------


def _read_parquet(data: bytes, source_name: str) -> _Parsed:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(
            f"not a readable Parquet file ({exc}). Check that the file is Parquet, or pass the right format=...",
            path=source_name,
        ) from None
    names = [n for n in parquet.schema_arrow.names if not n.startswith("__index_level_")]
    _header_names(names, "the schema", source_name)
    if parquet.metadata.num_rows == 0:
        raise _no_rows(source_name, f"the file has columns {names} but no rows")
    frame = parquet.read().to_pandas()
    frame = frame.reset_index(drop=all(n is None for n in frame.index.names))
    return _Parsed(frame, list(range(1, len(frame) + 1)))


def _read_xlsx(data: bytes, source_name: str, sheet: str | int | None) -> _Parsed:
    import openpyxl
    import pandas as pd
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError) as exc:
        if data.startswith(_OLE_MAGIC):
            why = "this is an old binary .xls workbook, which cannot be read: open it in Excel or LibreOffice and save it as .xlsx"
        else:
            why = f"not a readable .xlsx workbook ({exc}); save it as .xlsx, or pass the right format=..."
        raise DatasetError(why, path=source_name) from None
    try:
        worksheet = _worksheet(workbook, sheet, source_name)
        where = f"{source_name} [sheet {worksheet.title!r}]"
        raw_rows = [
            (number, list(values)) for number, values in enumerate(worksheet.iter_rows(values_only=True), start=1)
        ]
    finally:
        workbook.close()
    filled = [(n, v) for n, v in raw_rows if any(_filled(c) for c in v)]
    if not filled:
        raise _no_rows(where, "the sheet is empty")
    header_row, header = filled[0]
    data_rows = [(n, v) for n, v in raw_rows if n > header_row]
    while data_rows and not any(_filled(c) for c in data_rows[-1][1]):
        data_rows.pop()
    width = max(_last_filled(v) for _, v in [(header_row, header), *data_rows])
    names, warnings = _header_names(
        header[:width] + [None] * (width - len(header)), f"row {header_row}", where, row=header_row
    )
    rows: list[list[Any]] = []
    source_rows: list[int] = []
    empty: list[str] = []
    for number, values in data_rows:
        values = (values + [None] * width)[:width]
        if not any(_filled(c) for c in values):
            empty.append(f"row {number}")
            continue
        rows.append(values)
        source_rows.append(number)
    if not rows:
        raise _no_rows(where, f"the sheet has a header row (columns {names}) but no data rows")
    if empty:
        warnings.append(f"{len(empty)} row(s) with every cell empty were ignored: {_listed(empty)}")
    frame = pd.DataFrame({name: _excel_column([r[j] for r in rows]) for j, name in enumerate(names)})
    return _Parsed(frame, source_rows, warnings=warnings)


def _worksheet(workbook: Any, sheet: str | int | None, source_name: str) -> Any:
    titles = workbook.sheetnames
    if sheet is None:
        return workbook.worksheets[0]
    if isinstance(sheet, int) and 0 <= sheet < len(titles):
        return workbook.worksheets[sheet]
    if isinstance(sheet, str) and sheet in titles:
        return workbook[sheet]
    raise DatasetError(
        f"no sheet {sheet!r} in the workbook; its sheets are {titles} (or an index 0..{len(titles) - 1})",
        path=source_name,
    )


def _filled(cell: Any) -> bool:
    return cell is not None and not (isinstance(cell, str) and not cell.strip())


def _last_filled(values: list[Any]) -> int:
    return max((j + 1 for j, cell in enumerate(values) if _filled(cell)), default=0)


def _excel_column(values: list[Any]) -> pd.Series:
    """A column whose cells include text becomes all text (empty cells ""); other columns keep their types."""
    import pandas as pd

    if any(isinstance(v, str) for v in values) or not any(v is not None for v in values):
        return pd.Series([cell_text(v) or "" for v in values], dtype=str)
    return pd.Series(values)
