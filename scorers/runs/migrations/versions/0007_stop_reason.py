"""Why a run stopped early (the judge unreachable, a budget cap), in a sentence (was m007_stop_reason).

Revision ID: 0007
Revises: 0006
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.ADD_RUNS_STOP_REASON.apply(op)
