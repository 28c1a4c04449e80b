"""Named baselines with their history, and the gate verdicts recorded against runs (was m005_baselines).

Setting a baseline appends a row; the latest row of a name is its current run. A gate
verdict is appended each time a run is gated, so a run that failed a gate can be refused
as a baseline. No foreign key: the history outlives a deleted run (and says so).

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "baselines",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("set_at", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sqlite_autoincrement=True,
    )
    op.create_index("baselines_by_name", "baselines", ["name", "id"])
    op.create_table(
        "gate_verdicts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("candidate_run_id", sa.Text),
        sa.Column("candidate", sa.Text, nullable=False),
        sa.Column("baseline_run_id", sa.Text),
        sa.Column("baseline", sa.Text, nullable=False),
        sa.Column("verdict", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("details", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("gate_verdicts_by_run", "gate_verdicts", ["candidate_run_id", "id"])
