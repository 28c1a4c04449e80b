"""Runs, their items and results, and the judge-reply cache (was m001_initial).

Revision ID: 0001
Revises:
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_RUNS.apply(op)
    history.CREATE_ITEMS.apply(op)
    history.CREATE_RESULTS.apply(op)
    history.CREATE_JUDGE_CACHE.apply(op)
