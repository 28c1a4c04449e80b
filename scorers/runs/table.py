"""A stored run in columnar form: one frame of items and one of outcomes, read once from the store.

The dashboard's run views and the exports both start here. Unlike
:func:`scorers.runs.runner.load_run`, no :class:`~scorers.core.base.ScoreResult` is
built per row: scores and dimension scores are float columns, and per-row detail (the
judge's analysis, the textual-difference word diff) is read back for a single row when it
is opened (:func:`load_outcomes`).

The items' texts (prompt, system message, response, ground truth: 20 kB a response in
some runs) are not read with the table: :meth:`RunTable.texts` reads those of the rows
asked for (a page of the rows table, a chunk of an export), or every item's once, kept
as pyarrow-backed string columns (compact, searched in C++), when a search needs them.

Typical use::

    table = load_run_table(store, run_id)
    table.results.groupby("scorer")["score"].mean()
    table.rows(table.results.index[:50])      # a page of rows with the items' texts
"""

from __future__ import annotations

import gc
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
import pandas as pd

from scorers.core.errors import ScoreStatus
from scorers.runs.export import TEXT_FIELDS, item_texts
from scorers.runs.judges import JUDGE_MODEL_SQL
from scorers.runs.runner import RESULT_COLUMNS, EvalItem, ItemOutcome, outcome_from_record
from scorers.runs.store import Store

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

CACHED_SQL = {
    "sqlite": "COALESCE(json_extract(judge, '$.cached'), 0)",
    "postgresql": "COALESCE((judge::jsonb ->> 'cached')::boolean, false)",
}
"""Per database: SQL of whether a result's judge reply came from the cache (its ``judge`` JSON's ``cached``)."""

TEXTS_PER_QUERY = 500
"""At most this many items are named in one query of :meth:`RunTable.texts`."""


Splitter = Callable[[Mapping[str, Any]], Mapping[str, float]]
"""A scorer's ``dimension_scores(analysis)``: dimension name → 0..1 score."""


def dimension_column(scorer_id: str, dimension: str) -> str:
    """The flat column name of one scorer's dimension score.

    >>> dimension_column("prompt-alignment", "user.intentAlignment")
    'prompt_alignment.user.intentAlignment'
    """
    return f"{scorer_id.replace('-', '_')}.{dimension}"


def dimension_label(name: str) -> str:
    """A readable label for a dimension name (a key of a scorer's ``dimension_scores``): camelCase split into words, dots as " · ".

    >>> dimension_label("user.intentAlignment")
    'User · Intent alignment'
    """
    parts = []
    for part in name.split("."):
        words = _CAMEL.sub(" ", part).replace("_", " ").lower()
        parts.append(words[:1].upper() + words[1:])
    return " · ".join(parts)


@dataclass(frozen=True)
class RunTable:
    """A stored run in columns.

    Attributes:
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`).
        items: one row per item, indexed by ``item_index``: ``item_id`` (pyarrow
            string), one ``group:<name>`` column per group-by column, then the dataset's
            unmapped columns under their own names (``dataset:<name>`` when the name is
            taken). The texts are not here: see :meth:`texts`.
        results: one row per stored outcome, ordered by item then scorer:
            :data:`RESULT_COLUMNS` (``score`` float, NaN when not scored — never 0;
            ``judge_model`` the model of the judge that made the outcome, NA for a
            code-based scorer and for an outcome not scored for its input), then one float column per scorer dimension (:func:`dimension_column`,
            NaN on other scorers' rows and on failures), then ``analysis`` (the
            analysis as stored JSON text, None when not scored) and ``cached`` (True
            when the judge's reply came from the cache).
        dimensions: scorer id → its dimension columns, in order.
        n_stored: outcomes stored when the table was read.
        store: the database the texts are read from (:meth:`texts`).
        version: :meth:`~scorers.runs.store.Store.results_version` when the table was read.
    """

    run: dict[str, Any]
    items: pd.DataFrame
    results: pd.DataFrame
    dimensions: dict[str, list[str]]
    n_stored: int
    store: Store | None = field(default=None, repr=False, compare=False)
    version: tuple[int, int, float | None, str | None] = (0, 0, None, None)
    _all_texts: list[pd.DataFrame] = field(default_factory=list, repr=False, compare=False)
    _texts_lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def scorer_ids(self) -> list[str]:
        """The run's scorers, in the run's order."""
        return [s["id"] for s in self.run["scorers"]]

    @property
    def n_items(self) -> int:
        return int(self.run["n_items"])

    def texts(self, item_indexes: Iterable[int] | None = None) -> pd.DataFrame:
        """The texts of some items, or of all of them, read from the store.

        Every item's texts are read once and kept with the table (a search reads them
        all); before that, the texts of ``item_indexes`` are read for this call only.

        Args:
            item_indexes: the items (``item_index`` values, repeats allowed), or None for
                every item.

        Returns:
            Indexed by ``item_index`` (in the order asked, one row per entry): the
            :data:`TEXT_FIELDS` columns as pyarrow strings, missing as NA.

        Raises:
            ValueError: the table was built without a store.
        """
        if item_indexes is None or self._all_texts:
            with self._texts_lock:
                if not self._all_texts:
                    self._all_texts.append(self._read_texts(None))
            every = self._all_texts[0]
            return every if item_indexes is None else every.loc[list(item_indexes)]
        wanted = list(item_indexes)
        unique = sorted(set(wanted))
        parts = [self._read_texts(unique[i : i + TEXTS_PER_QUERY]) for i in range(0, len(unique), TEXTS_PER_QUERY)]
        found = pd.concat(parts) if parts else _text_frame([], {name: [] for name in TEXT_FIELDS})
        return found.reindex(wanted)

    def _read_texts(self, item_indexes: Sequence[int] | None) -> pd.DataFrame:
        if self.store is None:
            raise ValueError("this RunTable has no store to read the items' texts from")
        sql = "SELECT item_index, payload FROM items WHERE run_id = ?"
        params: list[Any] = [self.run["id"]]
        if item_indexes is not None:
            sql += f" AND item_index IN ({', '.join('?' * len(item_indexes))})"
            params += list(item_indexes)
        index: list[int] = []
        texts: dict[str, list[Any]] = {name: [] for name in TEXT_FIELDS}
        parts: list[pd.DataFrame] = []
        for chunk in self.store.read_chunks(sql + " ORDER BY item_index", params):
            for row in chunk:
                index.append(row["item_index"])
                for name, value in item_texts(EvalItem("", json.loads(row["payload"]))).items():
                    texts[name].append(value)
            parts.append(_text_frame(index, texts))  # to pyarrow strings chunk by chunk: the Python strings are freed
            index, texts = [], {name: [] for name in TEXT_FIELDS}
        if not parts:
            return _text_frame([], texts)
        return parts[0] if len(parts) == 1 else pd.concat(parts)

    def rows(self, index: Sequence[Any] | pd.Index | None = None) -> pd.DataFrame:
        """Outcome rows joined with their item's id, texts, groups and dataset columns.

        Args:
            index: labels of :attr:`results` to return, in that order (e.g. one page of a
                filtered, sorted view); None for every row.

        Returns:
            ``item_index``, ``item_id``, ``scorer``, ``status``, ``score``, ``reason``,
            ``error``, the token and latency columns, ``item_id`` and the texts
            (:data:`TEXT_FIELDS`), the other item columns of :attr:`items`, the
            dimension columns and ``analysis``.
        """
        part = self.results if index is None else self.results.loc[index]
        positions = part["item_index"].to_numpy()
        items = self.items.reindex(positions)
        texts = self.texts(None if index is None else positions.tolist())
        if index is None:
            texts = texts.reindex(positions)
        items.index = texts.index = part.index
        items = pd.concat([items[["item_id"]], texts, items.drop(columns=["item_id"])], axis=1)
        head = part[list(RESULT_COLUMNS)]
        out = pd.concat([head, items, part.drop(columns=list(RESULT_COLUMNS))], axis=1)
        first = ["item_index", "item_id"]
        return out[first + [c for c in out.columns if c not in first]]


def _text_frame(index: list[int], texts: Mapping[str, list[Any]]) -> pd.DataFrame:
    frame = pd.DataFrame({name: pd.Series(texts[name], dtype="string[pyarrow]") for name in TEXT_FIELDS})
    frame.index = pd.Index(index, dtype="int64", name="item_index")
    return frame


def default_splitters(run: Mapping[str, Any]) -> dict[str, Splitter]:
    """Scorer id → ``dimension_scores`` for a stored run's scorers that have one.

    Each scorer is rebuilt with its stored options and keyless judge settings (no call is
    made) only to find its function; one that cannot be rebuilt has no dimensions.
    """
    from scorers.catalogue.registry import create_scorer
    from scorers.core.errors import ScorerError
    from scorers.core.judge import JudgeSettings

    config = run.get("config") or {}
    out: dict[str, Splitter] = {}
    for entry in run.get("scorers") or []:
        options = entry.get("options")
        if options is None:
            options = (config.get("scorerOptions") or {}).get(entry["id"]) or {}
        try:
            scorer = create_scorer(entry["id"], options, settings=JudgeSettings())
        except ScorerError:
            continue
        split = getattr(scorer, "dimension_scores", None)
        if callable(split):
            out[entry["id"]] = split
    return out


_paused = {"builds": 0, "was_on": False}
_paused_lock = threading.Lock()


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the block runs (in every thread: it is one per process), then
    back on if it was on before; nested or concurrent blocks turn it back on when the last one ends.

    For building a table: reading 20,000 outcomes makes a few hundred thousand short-lived objects (rows,
    decoded analyses) that reference counting frees, and with the collector on every 700 of them started a
    collection that walked them again: about a tenth of the CPU time of :func:`load_run_table`.
    """
    with _paused_lock:
        if not _paused["builds"]:
            _paused["was_on"] = gc.isenabled()
            gc.disable()
        _paused["builds"] += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused["builds"] -= 1
            if not _paused["builds"] and _paused["was_on"]:
                gc.enable()


def load_run_table(store: Store, run_id: str, splitters: Mapping[str, Splitter] | None = None) -> RunTable:
    """Read a stored run into a :class:`RunTable`, a few thousand rows at a time (the garbage collector
    paused meanwhile: :func:`collector_paused`).

    Args:
        store: the database.
        run_id: the run.
        splitters: scorer id → ``dimension_scores``; default :func:`default_splitters`.

    Raises:
        KeyError: no such run.
    """
    with collector_paused():
        return _load_run_table(store, run_id, splitters)


def _load_run_table(store: Store, run_id: str, splitters: Mapping[str, Splitter] | None) -> RunTable:
    run = store.get_run(run_id)
    if splitters is None:
        splitters = default_splitters(run)
    version = store.results_version(run_id)  # read first: a write meanwhile makes the next version

    # Column by column, JSON decoded a chunk at a time (json_documents): no Python work per row
    # but the dimension splitters'.
    item_columns = _read_columns(  # not the payloads: the texts are read when asked for (RunTable.texts)
        store,
        "SELECT item_id, groups, columns FROM items WHERE run_id = ? ORDER BY item_index",
        (run_id,),
        ("item_id", "groups", "columns"),
    )
    groups = list(json_documents(item_columns["groups"]))
    columns = list(json_documents(item_columns["columns"]))
    items = pd.DataFrame({"item_id": pd.Series(item_columns["item_id"], dtype="string[pyarrow]")})
    for name in dict.fromkeys(k for g in groups for k in g):
        items[f"group:{name}"] = pd.Series([g.get(name) for g in groups], dtype=object)
    reserved = {*TEXT_FIELDS, *RESULT_COLUMNS}
    for name in dict.fromkeys(k for c in columns for k in c):
        label = name if name not in items.columns and name not in reserved else f"dataset:{name}"
        items[label] = pd.Series([c.get(name) for c in columns], dtype=object).convert_dtypes()
    items.index.name = "item_index"

    names = (*RESULT_COLUMNS, "analysis", "cached")
    numbers: dict[str, list[Any]] = {name: [] for name in names if name not in (*_RESULT_TEXTS, "analysis")}
    texts: list[pd.DataFrame] = []  # a frame of pyarrow strings per chunk
    split: dict[str, tuple[list[int], list[Mapping[str, float]]]] = {sid: ([], []) for sid in splitters}
    n_rows = 0
    # A chunk of rows at a time: its numbers kept, its texts turned into pyarrow strings and its analyses
    # into dimension scores, then its Python strings are freed (the analyses of 10,000 prompt-alignment
    # outcomes are 9 MB of text).
    for chunk in store.read_chunks(
        "SELECT item_index, scorer_id, status, score, reason, error, prompt_tokens, completion_tokens,"
        f" judge_calls, judge_requests, latency_s, CASE WHEN status IN (?, ?) THEN NULL ELSE {JUDGE_MODEL_SQL[store.dialect]} END,"
        f" analysis, {CACHED_SQL[store.dialect]} AS cached FROM results WHERE run_id = ? ORDER BY item_index, scorer_id",
        (ScoreStatus.MISSING_INPUT.value, ScoreStatus.INVALID_INPUT.value, run_id),
    ):
        read = dict(zip(names, zip(*chunk, strict=True), strict=True))
        for name, values in numbers.items():
            values.extend(read[name])
        analyses = [
            text if status == _SCORED else None for text, status in zip(read["analysis"], read["status"], strict=True)
        ]
        for sid, (positions, dims) in split.items():
            mine = [i for i, (s, text) in enumerate(zip(read["scorer"], analyses, strict=True)) if s == sid and text]
            decoded = json_documents([analyses[i] for i in mine], unreadable=_UNREADABLE_ANALYSIS, fast=True)
            dims.extend(_split(splitters[sid], analysis) for analysis in decoded)
            positions.extend(n_rows + i for i in mine)
        texts.append(_string_frame({**{name: read[name] for name in _RESULT_TEXTS}, "analysis": analyses}))
        n_rows += len(chunk)
    text = (
        pd.concat(texts, ignore_index=True) if texts else _string_frame(dict.fromkeys((*_RESULT_TEXTS, "analysis"), ()))
    )
    results = pd.DataFrame(
        {name: text[name] if name in text.columns else numbers[name] for name in RESULT_COLUMNS},
        columns=list(RESULT_COLUMNS),
    )
    results = results.astype({"score": "float64", "latency_s": "float64"})
    dims, dimensions = _dimension_columns(split, n_rows)
    for column, series in dims.items():
        results[column] = series
    results["analysis"] = text["analysis"]
    results["cached"] = pd.Series(numbers["cached"], dtype=object).astype(bool)
    return RunTable(run, items, results, dimensions, version[0], store, version)


_SCORED = ScoreStatus.SCORED.value

_RESULT_TEXTS = ("scorer", "status", "reason", "error", "judge_model")
"""The text columns of :attr:`RunTable.results` read from the store (pyarrow strings), besides ``analysis``."""


def _string_frame(columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(values, dtype="string[pyarrow]") for name, values in columns.items()})


def _read_columns(store: Store, sql: str, params: Sequence[Any], names: Sequence[str]) -> dict[str, list[Any]]:
    """Every row of a read query as columns: ``names`` (one per selected column) → values in row order."""
    out: dict[str, list[Any]] = {name: [] for name in names}
    for chunk in store.read_chunks(sql, params):  # a chunk of rows transposed at once
        for values, column in zip(out.values(), zip(*chunk, strict=True), strict=True):
            values.extend(column)
    return out


_UNREADABLE = object()


def json_documents(
    texts: Sequence[str | None], chunk: int = 1000, *, unreadable: Any = _UNREADABLE, fast: bool = False
) -> Iterator[Any]:
    """Decode JSON texts stored by the store, ``chunk`` at a time in one ``json.loads`` call each.

    A generator: at most one chunk of decoded documents is held here, so a caller that keeps
    only what it takes from each (a few dimension scores) never holds them all.

    Args:
        texts: JSON documents as text; None or ``""`` decodes as ``{}``.
        chunk: documents decoded per call.
        unreadable: what to yield for a text that is not one JSON document; by default it raises.
        fast: decode with ``orjson.loads``, about twice as fast (10 MB of prompt-alignment analyses:
            0.07 s against 0.13-0.16 s of CPU), for a caller that keeps numbers only as floats (the
            dimension splitters' columns): orjson reads an integer beyond 64 bits as a float. A chunk
            it refuses (a ``NaN`` that :mod:`json` wrote, a lone surrogate) is decoded by :mod:`json`.

    Yields:
        The decoded values, in order.

    Raises:
        json.JSONDecodeError: a text is not one JSON document (and ``unreadable`` is not given).

    >>> list(json_documents(['{"a": 1}', None, "[2]"]))
    [{'a': 1}, {}, [2]]
    >>> list(json_documents(['{"a": 1}', "{", "1, 2"], unreadable=None))
    [{'a': 1}, None, None]
    """
    loads = orjson.loads if fast else json.loads
    for start in range(0, len(texts), chunk):
        part = [t or "{}" for t in texts[start : start + chunk]]
        try:
            decoded = loads("[" + ",".join(part) + "]")
        except json.JSONDecodeError:  # orjson's is a subclass
            decoded = []
        if len(decoded) != len(part):  # a text is not one document ("{", "1, 2"): each on its own
            decoded = [_one_document(text, unreadable) for text in part]
        yield from decoded


def _one_document(text: str, unreadable: Any) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        if unreadable is _UNREADABLE:
            raise
        return unreadable


def _split(split: Splitter, analysis: Any) -> Mapping[str, float]:
    if analysis is _UNREADABLE_ANALYSIS:
        return {}
    try:
        return split(analysis)
    except (KeyError, TypeError, ValueError):  # an analysis the scorer cannot split: no dimensions
        return {}


_UNREADABLE_ANALYSIS = object()


def _dimension_columns(
    split: Mapping[str, tuple[Sequence[int], Sequence[Mapping[str, float]]]], n_rows: int
) -> tuple[dict[str, pd.Series], dict[str, list[str]]]:
    """Each scorer's dimension scores as float columns of ``n_rows`` rows (NaN where it has none), in order of
    first appearance down the rows; and scorer id → its columns.

    Args:
        split: scorer id → (the rows of its outcomes with an analysis, their ``dimension_scores``).
        n_rows: the rows of the run's outcomes.
    """
    found: list[tuple[int, int, str, pd.Series]] = []
    for sid, (positions, dims) in split.items():
        if not dims:
            continue
        frame = pd.DataFrame(list(dims), index=list(positions), dtype="float64")
        for n, name in enumerate(frame.columns):
            column = frame[name].reindex(pd.RangeIndex(n_rows))
            found.append((int(column.notna().to_numpy().argmax()), n, sid, column.rename(dimension_column(sid, name))))
    found.sort(key=lambda f: f[:2])
    dimensions: dict[str, list[str]] = {}
    for _, _, sid, column in found:
        dimensions.setdefault(sid, []).append(str(column.name))
    return {str(column.name): column for *_, column in found}, dimensions


def load_outcomes(store: Store, run_id: str, item_index: int) -> tuple[EvalItem, dict[str, ItemOutcome]]:
    """One item of a stored run with its outcomes in full (the drill-down of a row).

    Returns:
        The item and scorer id → its :class:`~scorers.runs.runner.ItemOutcome`
        (scorers without a stored outcome are absent).

    Raises:
        KeyError: the run has no such item.
    """
    rows = store.items(run_id, item_index)
    if not rows:
        raise KeyError(f"run {run_id!r} has no item {item_index}")
    row = rows[0]
    item = EvalItem(row["item_id"], row["payload"], row["groups"], row["columns"])
    outcomes = {r["scorer_id"]: outcome_from_record(r, item.item_id) for r in store.results(run_id, item_index)}
    return item, outcomes
