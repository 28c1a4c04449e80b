"""Human labels of results: every save appends a row, the latest is current (was m003_labels).

A label concerns one run × item × scorer and keeps who gave it, when, and the judge's
score it was given against; deleting the run deletes its labels.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_index", sa.Integer, nullable=False),
        sa.Column("scorer_id", sa.Text, nullable=False),
        sa.Column("reviewer", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("human_score", sa.Double),
        sa.Column("human_pass", sa.Integer),
        sa.Column("comment", sa.Text, nullable=False, server_default=""),
        sa.Column("judge_score", sa.Double),
        sa.Column("judge_status", sa.Text),
        sa.Column("source", sa.Text, nullable=False, server_default="review"),
        sqlite_autoincrement=True,
    )
    op.create_index("labels_by_row", "labels", ["run_id", "scorer_id", "item_index", "id"])
