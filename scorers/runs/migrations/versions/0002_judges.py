"""Saved judge definitions: one row per judge, one per version (was m002_judges).

A version is never changed or removed; deleting a judge only hides it, so a run that
names ``judge:<slug>@v<n>`` can always be rebuilt.

Revision ID: 0002
Revises: 0001
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_JUDGES.apply(op)
    history.CREATE_JUDGE_VERSIONS.apply(op)
