"""A run's heartbeat: the process scoring it writes the time every few seconds, so a run whose process died
(killed, out of memory, its host gone) is seen as interrupted from any process, without a restart.

Revision ID: 0015
Revises: 0014
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.ADD_RUNS_HEARTBEAT.apply(op)
