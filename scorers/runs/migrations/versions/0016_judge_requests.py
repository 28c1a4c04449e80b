"""The HTTP requests to the judge, failed ones and retries included, as the run budget's call cap counts them: per
outcome (results.judge_requests; rows stored before it get their judge_calls) and, for outcomes the run left to
do, per run (runs.left_judge_requests).

Revision ID: 0016
Revises: 0015
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.ADD_RESULTS_JUDGE_REQUESTS.apply(op)
    op.execute("UPDATE results SET judge_requests = judge_calls")
    history.ADD_RUNS_LEFT_JUDGE_REQUESTS.apply(op)
