"""Named baselines with their history, and the gate verdicts recorded against runs (was m005_baselines).

Setting a baseline appends a row; the latest row of a name is its current run. A gate
verdict is appended each time a run is gated, so a run that failed a gate can be refused
as a baseline. No foreign key: the history outlives a deleted run (and says so).

Revision ID: 0005
Revises: 0004
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_BASELINES.apply(op)
    history.CREATE_GATE_VERDICTS.apply(op)
