"""Batch API runs: the provider's batch ids and each request's answer (was m006_batches).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "batch_jobs",
        sa.Column("batch_id", sa.Text, primary_key=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("input_file_id", sa.Text, nullable=False),
        sa.Column("n_requests", sa.Integer, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("finished_at", sa.Text),
    )
    op.create_table(
        "batch_requests",
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("custom_id", sa.Text, primary_key=True),
        sa.Column("batch_id", sa.Text),
        sa.Column("status_code", sa.Integer),
        sa.Column("body", sa.Text),
        sa.Column("expired", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_index("batch_requests_by_batch", "batch_requests", ["batch_id"])
