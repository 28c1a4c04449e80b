"""Re-judgings of a run's rows (Review page, Consistency view): the scorer, the parameters, and every
repetition's score or status (JSON), so the review queue can put rows whose verdict flipped first.
Deleting the run deletes them.

Revision ID: 0011
Revises: 0010
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_REJUDGES.apply(op)
