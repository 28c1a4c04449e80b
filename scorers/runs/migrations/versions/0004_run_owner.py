"""Which process scores a run (``host:pid``), so a run left "running" by a dead process can be told apart (was m004_run_owner).

Revision ID: 0004
Revises: 0003
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.ADD_RUNS_OWNER.apply(op)
