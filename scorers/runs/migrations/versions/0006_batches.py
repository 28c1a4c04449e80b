"""Batch API runs: the provider's batch ids and each request's answer (was m006_batches).

Revision ID: 0006
Revises: 0005
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.CREATE_BATCH_JOBS.apply(op)
    history.CREATE_BATCH_REQUESTS.apply(op)
