"""Re-judgings of a run's rows (Review page, Consistency view): the scorer, the parameters, and every
repetition's score or status (JSON), so the review queue can put rows whose verdict flipped first.
Deleting the run deletes them.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rejudges",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("scorer_id", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("repetitions", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("rejudges_by_run", "rejudges", ["run_id", "scorer_id", "id"])
