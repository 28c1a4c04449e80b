"""A covering index of the items' run, index, id, groups and dataset columns, on SQLite: opening a run reads
those for every item (not the payloads, read for the rows on screen), and SQLite keeps a row's columns in
order, so reading the groups and columns after a long payload walked its overflow pages (20,000 items of
20 kB responses: 0.3 s, 0.03 s from the index). PostgreSQL keeps long payloads out of the row (TOAST) and
gets no index.

Revision ID: 0014
Revises: 0013
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.ADD_ITEMS_WITHOUT_PAYLOAD_INDEX.apply(op)
