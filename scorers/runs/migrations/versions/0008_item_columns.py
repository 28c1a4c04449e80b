"""The dataset columns an item carries beyond the mapped ones (ids, metadata, human votes), as JSON (was m008_item_columns).

Exports write them back next to the scores, so nothing the user brought is lost.

Revision ID: 0008
Revises: 0007
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.ADD_ITEMS_COLUMNS.apply(op)
