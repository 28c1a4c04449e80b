"""The store's schema history: every table as the revision that created it, every column added since.

FROZEN HISTORY: a piece here is never edited once it is on main. An old database is upgraded
through every revision, so a revision must build the same schema on every run; the Alembic
revisions in ``scorers/runs/migrations/versions`` apply these pieces (``apply(op)``) and
:mod:`scorers.runs.store` builds the current tables from the same pieces (:meth:`CreatedTable.table`),
so a table's and a column's declaration stands in one place only. A change to a table is a new
piece, added at the end under the number of the new revision that applies it, and added to the
table's line in ``store.py``. This module imports neither Alembic nor the store.

Each piece builds new SQLAlchemy objects on every call: a ``Column`` belongs to the one ``Table``
it is put in (the revision's, or ``store.METADATA``'s).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:
    from alembic.operations import Operations

JSON = sa.Text  # JSON documents are stored as text, identically on both databases


@dataclass(frozen=True)
class AddedColumn:
    """A column a revision added to an existing table (``op.add_column``).

    Attributes:
        table: The table's name.
        column: Builds the new column (a new ``sa.Column`` on every call).
    """

    table: str
    column: Callable[[], sa.Column[Any]]

    def apply(self, op: Operations) -> None:
        """Add the column (in the ``upgrade()`` of the revision that adds it)."""
        op.add_column(self.table, self.column())


@dataclass(frozen=True)
class AddedIndex:
    """An index a revision added to an existing table (``op.create_index``).

    Attributes:
        table: The table's name.
        name: The index's name.
        columns: Its columns, in order.
        dialect: The only database it is made on (``"sqlite"``), or None for every one.
    """

    table: str
    name: str
    columns: tuple[str, ...]
    dialect: str | None = None

    def apply(self, op: Operations) -> None:
        """Create the index (in the ``upgrade()`` of the revision that adds it), on its database only."""
        if self.dialect is None or op.get_bind().dialect.name == self.dialect:
            op.create_index(self.name, self.table, list(self.columns))


@dataclass(frozen=True)
class DroppedIndex:
    """An index a revision removed from a table (``op.drop_index``).

    Attributes:
        table: The table's name.
        name: The index's name.
    """

    table: str
    name: str

    def apply(self, op: Operations) -> None:
        """Drop the index (in the ``upgrade()`` of the revision that removes it)."""
        op.drop_index(self.name, table_name=self.table)


@dataclass(frozen=True)
class CreatedTable:
    """A table as the revision that created it declared it (``op.create_table``).

    Attributes:
        name: The table's name.
        elements: Builds its columns, then its indexes (new objects on every call).
        options: Table options passed to ``sa.Table`` (e.g. ``sqlite_autoincrement``).
    """

    name: str
    elements: Callable[[], list[sa.Column[Any] | sa.Index]]
    options: Mapping[str, Any] = field(default_factory=dict)

    def apply(self, op: Operations) -> None:
        """Create the table and its indexes (in the ``upgrade()`` of the revision that creates it)."""
        op.create_table(self.name, *self.elements(), **self.options)

    def table(self, metadata: sa.MetaData, *added: AddedColumn | AddedIndex | DroppedIndex) -> sa.Table:
        """The table now, in ``metadata``: as created, then the ``added`` columns and indexes (and the
        indexes dropped) in the order of their revisions.

        Raises:
            ValueError: one of ``added`` belongs to another table.
        """
        elsewhere = [
            f"{a.table}.{a.name if isinstance(a, AddedIndex | DroppedIndex) else a.column().name}"
            for a in added
            if a.table != self.name
        ]
        if elsewhere:
            raise ValueError(f"{self.name}: {', '.join(elsewhere)} belong to another table")
        table = sa.Table(self.name, metadata, *self.elements(), **self.options)
        for a in added:
            if isinstance(a, AddedIndex):
                index = sa.Index(a.name, *(table.c[name] for name in a.columns))  # belongs to the table of its columns
                if a.dialect is not None:
                    index.ddl_if(dialect=a.dialect)
            elif isinstance(a, DroppedIndex):
                table.indexes.remove(next(index for index in table.indexes if index.name == a.name))
            else:
                table.append_column(a.column())
        return table


# ---- 0001 (m001_initial): runs, their items and results, the judge-reply cache


def _runs() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("finished_at", sa.Text),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("dataset_name", sa.Text, nullable=False),
        sa.Column("n_items", sa.Integer, nullable=False),
        sa.Column("scorers", JSON, nullable=False),
        sa.Column("judge", JSON),
        sa.Column("mapping", JSON),
        sa.Column("config", JSON),
    ]


def _items() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("item_index", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("groups", JSON),
    ]


def _results() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("item_index", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("scorer_id", sa.Text, primary_key=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("score", sa.Double),
        sa.Column("reason", sa.Text),
        sa.Column("analysis", JSON),
        sa.Column("details", JSON),
        sa.Column("error", sa.Text),
        sa.Column("raw_reply", sa.Text),
        sa.Column("judge", JSON),
        sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("judge_calls", sa.Integer, nullable=False, server_default="0"),
        sa.Column("latency_s", sa.Double),
        sa.Column("finished_at", sa.Text, nullable=False),
    ]


def _judge_cache() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("base_url", sa.Text, nullable=False),
        sa.Column("reply", sa.Text, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    ]


CREATE_RUNS = CreatedTable("runs", _runs)
CREATE_ITEMS = CreatedTable("items", _items)
CREATE_RESULTS = CreatedTable("results", _results)
CREATE_JUDGE_CACHE = CreatedTable("judge_cache", _judge_cache)

# ---- 0002 (m002_judges): saved judges and their versions


def _judges() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("slug", sa.Text, primary_key=True),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("deleted_at", sa.Text),
    ]


def _judge_versions() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("slug", sa.Text, sa.ForeignKey("judges.slug"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("definition", JSON, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    ]


CREATE_JUDGES = CreatedTable("judges", _judges)
CREATE_JUDGE_VERSIONS = CreatedTable("judge_versions", _judge_versions)

# ---- 0003 (m003_labels): human labels of results


def _labels() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_index", sa.Integer, nullable=False),
        sa.Column("scorer_id", sa.Text, nullable=False),
        sa.Column("reviewer", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("human_score", sa.Double),
        sa.Column("human_pass", sa.Integer),
        sa.Column("comment", sa.Text, nullable=False, server_default=""),
        sa.Column("judge_score", sa.Double),
        sa.Column("judge_status", sa.Text),
        sa.Column("source", sa.Text, nullable=False, server_default="review"),
        sa.Index("labels_by_row", "run_id", "scorer_id", "item_index", "id"),
    ]


CREATE_LABELS = CreatedTable("labels", _labels, {"sqlite_autoincrement": True})

# ---- 0004 (m004_run_owner)

ADD_RUNS_OWNER = AddedColumn("runs", lambda: sa.Column("owner", sa.Text))  # "<host>:<pid>" (store.process_owner)

# ---- 0005 (m005_baselines): named baselines and gate verdicts (no foreign key: the history outlives a run)


def _baselines() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("set_at", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Index("baselines_by_name", "name", "id"),
    ]


def _gate_verdicts() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("candidate_run_id", sa.Text),
        sa.Column("candidate", sa.Text, nullable=False),
        sa.Column("baseline_run_id", sa.Text),
        sa.Column("baseline", sa.Text, nullable=False),
        sa.Column("verdict", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("details", JSON, nullable=False),
        sa.Index("gate_verdicts_by_run", "candidate_run_id", "id"),
    ]


CREATE_BASELINES = CreatedTable("baselines", _baselines, {"sqlite_autoincrement": True})
CREATE_GATE_VERDICTS = CreatedTable("gate_verdicts", _gate_verdicts, {"sqlite_autoincrement": True})

# ---- 0006 (m006_batches): Batch API jobs and their requests


def _batch_jobs() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("batch_id", sa.Text, primary_key=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("input_file_id", sa.Text, nullable=False),
        sa.Column("n_requests", sa.Integer, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("finished_at", sa.Text),
    ]


def _batch_requests() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("custom_id", sa.Text, primary_key=True),
        sa.Column("batch_id", sa.Text),
        sa.Column("status_code", sa.Integer),
        sa.Column("body", JSON),
        sa.Column("expired", sa.Integer, nullable=False, server_default="0"),
        sa.Index("batch_requests_by_batch", "batch_id"),
    ]


CREATE_BATCH_JOBS = CreatedTable("batch_jobs", _batch_jobs)
CREATE_BATCH_REQUESTS = CreatedTable("batch_requests", _batch_requests)

# ---- 0007 (m007_stop_reason)

ADD_RUNS_STOP_REASON = AddedColumn("runs", lambda: sa.Column("stop_reason", sa.Text))  # the judge unreachable, a cap

# ---- 0008 (m008_item_columns): the row's dataset columns beyond the mapped ones (ids, metadata, votes)

ADD_ITEMS_COLUMNS = AddedColumn("items", lambda: sa.Column("columns", JSON))

# ---- 0009 (m009_pairwise): pairwise-judge results of a run (scorers.analysis.pairwise_runs)


def _pairwise() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("a", sa.Text, nullable=False),
        sa.Column("b", sa.Text, nullable=False),
        sa.Column("group_col", sa.Text, nullable=False),
        sa.Column("pair_col", sa.Text, nullable=False),
        sa.Column("rubric", JSON, nullable=False),
        sa.Column("judge", JSON),
        sa.Column("outcomes", JSON, nullable=False),
        sa.Index("pairwise_by_run", "run_id", "id"),
    ]


CREATE_PAIRWISE = CreatedTable("pairwise", _pairwise, {"sqlite_autoincrement": True})

# ---- 0010: background jobs of every process sharing the store (scorers.runs.shared_jobs)


def _jobs() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("id", sa.Text, primary_key=True),  # "<host>:<pid>/<job id>"
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("phase", sa.Text, nullable=False, server_default=""),
        sa.Column("done", sa.Integer, nullable=False, server_default="0"),
        sa.Column("total", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failed", sa.Integer, nullable=False, server_default="0"),
        sa.Column("started_at", sa.Text, nullable=False),
        sa.Column("elapsed_s", sa.Double, nullable=False, server_default="0"),
        sa.Column("message", sa.Text, nullable=False, server_default=""),
        sa.Column("run_id", sa.Text),
        sa.Column("job_key", sa.Text),
        sa.Column("updated_at", sa.Double, nullable=False),  # seconds since the epoch, to tell a dead owner
        sa.Column("stop_requested", sa.Integer, nullable=False, server_default="0"),
    ]


CREATE_JOBS = CreatedTable("jobs", _jobs)

# ---- 0011: re-judgings of a run's rows, for the review queue (scorers.analysis.uncertainty)


def _rejudges() -> list[sa.Column[Any] | sa.Index]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("scorer_id", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("repetitions", JSON, nullable=False),
        sa.Index("rejudges_by_run", "run_id", "scorer_id", "id"),
    ]


CREATE_REJUDGES = CreatedTable("rejudges", _rejudges, {"sqlite_autoincrement": True})

# ---- 0012: the History list's counts and means and results_version read from an index, not the rows' JSON

ADD_RESULTS_STATS_INDEX = AddedIndex(
    "results", "results_stats", ("run_id", "scorer_id", "status", "score", "finished_at")
)

# ---- 0013: the same covering index in item order, so a run's writes append to it rather than land all over it

DROP_RESULTS_STATS_INDEX = DroppedIndex("results", "results_stats")
"""results_stats ordered each scorer's entries by status and score: every batch of outcomes a run wrote
changed index pages all over the run's range (at 100,000 rows, 60% of the store's write time)."""

ADD_RESULTS_BY_SCORER_INDEX = AddedIndex(
    "results", "results_by_scorer", ("run_id", "scorer_id", "item_index", "status", "score", "finished_at")
)
"""What results_stats answered (the History list's counts and means, results_version), from the index alone."""

# ---- 0014: a run's item ids, groups and dataset columns read without walking past the payloads (SQLite)

ADD_ITEMS_WITHOUT_PAYLOAD_INDEX = AddedIndex(
    "items", "items_without_payload", ("run_id", "item_index", "item_id", "groups", "columns"), dialect="sqlite"
)
"""Opening a run reads every item's id, groups and columns (:func:`scorers.runs.table.load_run_table`), not
its payload. SQLite stores a row's columns in order and a long payload on overflow pages, so reading the
groups and columns after it walked every payload's pages (a run of 20,000 items of 20 kB responses:
0.3 s of the open, 0.03 s from this index). SQLite only: PostgreSQL keeps a long payload out of the
row (TOAST), and its index entries cannot hold long values."""

# ---- 0015: when the process scoring a run last said it still was (its heartbeat)

ADD_RUNS_HEARTBEAT = AddedColumn("runs", lambda: sa.Column("heartbeat_at", sa.Double))
"""Seconds since the epoch (``time.time()``) at which the process scoring a run last wrote that it is alive
(:class:`scorers.runs.store.RunHeartbeat`); NULL for runs stored before it was written. A ``running`` run
whose heartbeat is older than :data:`scorers.runs.store.HEARTBEAT_STALE_S` lost its process."""

# ---- 0016: the HTTP requests each judge call sent, failed ones and retries included (what the call cap counts)

ADD_RESULTS_JUDGE_REQUESTS = AddedColumn(
    "results", lambda: sa.Column("judge_requests", sa.Integer, nullable=False, server_default="0")
)
"""The HTTP requests an outcome's judge calls sent: answered, failed (a 5xx, a 429, a timeout, a lost connection)
and each retry of a failed one, as the run budget's call cap counts them (``judge_calls`` counts the answers).
Rows stored before it: set to their ``judge_calls`` (the failed requests of then were not counted)."""

ADD_RUNS_LEFT_JUDGE_REQUESTS = AddedColumn(
    "runs", lambda: sa.Column("left_judge_requests", sa.Integer, nullable=False, server_default="0")
)
"""The HTTP requests to the judge made for outcomes the run left to do (not stored: an item stopped at a cap, or
in flight when the run paused), so that the run's requests (its outcomes' ``judge_requests`` plus these) are all
it sent, and a resume's call cap counts them."""
