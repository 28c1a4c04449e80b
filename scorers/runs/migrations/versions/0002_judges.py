"""Saved judge definitions: one row per judge, one per version (was m002_judges).

A version is never changed or removed; deleting a judge only hides it, so a run that
names ``judge:<slug>@v<n>`` can always be rebuilt.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judges",
        sa.Column("slug", sa.Text, primary_key=True),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("deleted_at", sa.Text),
    )
    op.create_table(
        "judge_versions",
        sa.Column("slug", sa.Text, sa.ForeignKey("judges.slug"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("definition", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    )
