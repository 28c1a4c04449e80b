"""A covering index of the results' run, scorer, status, score and write time: the History list's
counts and means per run and scorer, and the version stamp of a run's outcomes that every run view
checks on each rerun (Store.results_version), are read from the index without the rows' JSON.

Revision ID: 0012
Revises: 0011
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.ADD_RESULTS_STATS_INDEX.apply(op)
