"""Human labels of results: every save appends a row, the latest is current (was m003_labels).

A label concerns one run × item × scorer and keeps who gave it, when, and the judge's
score it was given against; deleting the run deletes its labels.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_LABELS.apply(op)
