"""Pairwise-judge results of a run: the two variants, the rubric, the judge, and every pair's verdict
in both orders (JSON). Deleting the run deletes them (was m009_pairwise).

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pairwise",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("a", sa.Text, nullable=False),
        sa.Column("b", sa.Text, nullable=False),
        sa.Column("group_col", sa.Text, nullable=False),
        sa.Column("pair_col", sa.Text, nullable=False),
        sa.Column("rubric", sa.Text, nullable=False),
        sa.Column("judge", sa.Text),
        sa.Column("outcomes", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("pairwise_by_run", "pairwise", ["run_id", "id"])
