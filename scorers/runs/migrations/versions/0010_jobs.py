"""Background jobs shared between processes: each process writes its jobs' state, any may ask one to stop.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("phase", sa.Text, nullable=False, server_default=""),
        sa.Column("done", sa.Integer, nullable=False, server_default="0"),
        sa.Column("total", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failed", sa.Integer, nullable=False, server_default="0"),
        sa.Column("started_at", sa.Text, nullable=False),
        sa.Column("elapsed_s", sa.Double, nullable=False, server_default="0"),
        sa.Column("message", sa.Text, nullable=False, server_default=""),
        sa.Column("run_id", sa.Text),
        sa.Column("job_key", sa.Text),
        sa.Column("updated_at", sa.Double, nullable=False),
        sa.Column("stop_requested", sa.Integer, nullable=False, server_default="0"),
    )
