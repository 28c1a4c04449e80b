"""Background jobs shared between processes: each process writes its jobs' state, any may ask one to stop.

Revision ID: 0010
Revises: 0009
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_JOBS.apply(op)
