"""Which judges made a stored run's outcomes, and what they spent: SQL over the results table.

A run resumed or retried with another judge than it started with holds outcomes of each
(every result records its judge, the failures included), so its cost is priced per judge
model (:func:`scorers.core.pricing.run_cost`). No pandas: the command line lists runs with it.
"""

from __future__ import annotations

from scorers.core.errors import ScoreStatus
from scorers.core.pricing import JudgeSpend
from scorers.runs.store import Store

JUDGE_MODEL_SQL = {"sqlite": "json_extract(judge, '$.model')", "postgresql": "judge::jsonb ->> 'model'"}
"""Per database: SQL of a result's judge model (its ``judge`` JSON's ``model``)."""

JUDGE_SQL = {
    "sqlite": JUDGE_MODEL_SQL["sqlite"] + ", json_extract(judge, '$.baseUrl')",
    "postgresql": JUDGE_MODEL_SQL["postgresql"] + ", judge::jsonb ->> 'baseUrl'",
}
"""Per database: SQL of a result's judge model and endpoint (its ``judge`` JSON's ``model`` and ``baseUrl``)."""


def judges_used(store: Store, run_id: str) -> list[tuple[str, str, int]]:
    """The judges a run's outcomes were made by, most outcomes first.

    A run resumed or retried with another judge than it started with holds outcomes of each
    (every result records its judge, the failures included).

    Returns:
        ``(model, base URL, number of outcomes)`` per judge; outcomes of code-based scorers
        (no judge) and those not scored for their input (no judge was asked) are not counted.
    """
    rows = store.query(
        f"SELECT {JUDGE_SQL[store.dialect]}, COUNT(*) FROM results WHERE run_id = ? AND judge IS NOT NULL"
        " AND status NOT IN (?, ?) GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2",
        (run_id, ScoreStatus.MISSING_INPUT.value, ScoreStatus.INVALID_INPUT.value),
    )
    return [(str(r[0]), str(r[1]), int(r[2])) for r in rows if r[0] is not None]


def spend_by_judge(store: Store, run_id: str) -> list[JudgeSpend]:
    """What a run's outcomes spent, per the judge model each records (its ``judge`` JSON's ``model``).

    Only outcomes that spent tokens are counted (a cached reply, a code-based scorer and an
    input error spent none); one that spent tokens without recording a judge has model None.
    Price it with :func:`scorers.core.pricing.run_cost`.
    """
    rows = store.query(
        f"SELECT {JUDGE_MODEL_SQL[store.dialect]}, SUM(prompt_tokens), SUM(completion_tokens), COUNT(*) FROM results"
        " WHERE run_id = ? AND prompt_tokens + completion_tokens > 0 GROUP BY 1 ORDER BY 4 DESC, 1",
        (run_id,),
    )
    return [JudgeSpend(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows]
