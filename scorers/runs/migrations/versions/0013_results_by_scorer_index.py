"""The results' covering index in item order: results_by_scorer (run, scorer, item index, status, score,
write time) replaces results_stats (run, scorer, status, score, write time). It answers the same
queries from the index alone (the History list's counts and means, Store.results_version), and a run
writing its outcomes in item order appends to it: results_stats placed each outcome by its score, so
every batch written changed index pages across the whole run (100,000 textual-difference outcomes:
the store's write time 3.9 s to 1.5 s).

Revision ID: 0013
Revises: 0012
"""

from alembic import op

from scorers.runs import schema_history as history

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    history.DROP_RESULTS_STATS_INDEX.apply(op)
    history.ADD_RESULTS_BY_SCORER_INDEX.apply(op)
