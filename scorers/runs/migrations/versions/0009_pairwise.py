"""Pairwise-judge results of a run: the two variants, the rubric, the judge, and every pair's verdict
in both orders (JSON). Deleting the run deletes them (was m009_pairwise).

Revision ID: 0009
Revises: 0008
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_PAIRWISE.apply(op)
