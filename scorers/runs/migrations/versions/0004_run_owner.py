"""Which process scores a run (``host:pid``), so a run left "running" by a dead process can be told apart (was m004_run_owner).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("owner", sa.Text))
