"""Runs, their items and results, and the judge-reply cache (was m001_initial).

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("finished_at", sa.Text),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("dataset_name", sa.Text, nullable=False),
        sa.Column("n_items", sa.Integer, nullable=False),
        sa.Column("scorers", sa.Text, nullable=False),
        sa.Column("judge", sa.Text),
        sa.Column("mapping", sa.Text),
        sa.Column("config", sa.Text),
    )
    op.create_table(
        "items",
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("item_index", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("groups", sa.Text),
    )
    op.create_table(
        "results",
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("item_index", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("scorer_id", sa.Text, primary_key=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("score", sa.Double),
        sa.Column("reason", sa.Text),
        sa.Column("analysis", sa.Text),
        sa.Column("details", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("raw_reply", sa.Text),
        sa.Column("judge", sa.Text),
        sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("judge_calls", sa.Integer, nullable=False, server_default="0"),
        sa.Column("latency_s", sa.Double),
        sa.Column("finished_at", sa.Text, nullable=False),
    )
    op.create_table(
        "judge_cache",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("base_url", sa.Text, nullable=False),
        sa.Column("reply", sa.Text, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("parameters", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    )
