"""The dataset columns an item carries beyond the mapped ones (ids, metadata, human votes), as JSON (was m008_item_columns).

Exports write them back next to the scores, so nothing the user brought is lost.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("items", sa.Column("columns", sa.Text))
