"""Why a run stopped early (the judge unreachable, a budget cap), in a sentence (was m007_stop_reason).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("stop_reason", sa.Text))
