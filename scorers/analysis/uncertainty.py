"""How sure the judge is of each row of a run, for the review queue.

Three signs of doubt are kept per row (:class:`JudgeDoubt`):

- **re-judge flips**: the row was judged again (the Review page's Consistency view, stored with
  :func:`save_rejudge`) and some repetitions gave the other verdict than the stored score;
- **pairwise order flips**: a stored pairwise judging (:mod:`scorers.analysis.pairwise_runs`) of the
  row's variant changed its preference when the two responses were shown in the other order;
- **closeness to the threshold**: ``|score − threshold|``.

The queue order (:attr:`JudgeDoubt.key`) is: the share of repeat judgements that flipped, highest
first, pooling both kinds (flipped re-judge repetitions + flipped pairwise judgings, over scored
re-judge repetitions + judged pairwise judgings; 0 for a row never judged again); then the distance
from the threshold, nearest first; then the row's position. A row seen to flip is less sure than any
row that was not, however near the threshold that one is; among rows with the same share (most often
none), the one nearest the threshold comes first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scorers.analysis.agreement import passes
from scorers.runs.store import Store, now_iso


def save_rejudge(
    store: Store, run_id: str, scorer_id: str, *, params: str, repetitions: Mapping[int, Sequence[float | str]]
) -> int:
    """Store one re-judging of a run's rows (the run's own results are not touched).

    Args:
        store: the database.
        run_id: the run whose rows were re-judged.
        scorer_id: the scorer that judged them again.
        params: how they were re-judged, in words (model, temperature, seed; never a key).
        repetitions: item index → per repetition the score, or the status of a repetition that was
            not scored (:func:`scorers.analysis.agreement.rejudge` output).

    Returns:
        The stored record's id.

    Raises:
        KeyError: no such run.
    """
    store.get_run(run_id)
    body = json.dumps({str(index): list(entries) for index, entries in repetitions.items()})
    with store.transaction() as db:
        cursor = db.execute(
            "INSERT INTO rejudges (run_id, scorer_id, created_at, params, repetitions) VALUES (?, ?, ?, ?, ?)"
            " RETURNING id",
            (run_id, scorer_id, now_iso(), params, body),
        )
        return int(cursor.fetchone()[0])


def stored_rejudges(store: Store, run_id: str, scorer_id: str) -> list[dict[str, Any]]:
    """Every re-judging of one run × scorer, newest first.

    Returns:
        Records ``{"id", "run_id", "scorer_id", "created_at", "params", "repetitions"}`` with
        ``repetitions`` as item index (int) → list of scores and statuses.
    """
    rows = store.query(
        "SELECT * FROM rejudges WHERE run_id = ? AND scorer_id = ? ORDER BY id DESC", (run_id, scorer_id)
    )
    out = []
    for row in rows:
        record = dict(row)
        record["repetitions"] = {int(k): v for k, v in json.loads(record["repetitions"]).items()}
        out.append(record)
    return out


def pooled_repetitions(records: Sequence[Mapping[str, Any]]) -> dict[int, list[float | str]]:
    """The repetitions of several :func:`stored_rejudges` records, pooled per item index.

    >>> pooled_repetitions([{"repetitions": {0: [0.4]}}, {"repetitions": {0: [0.6, "api_error"], 2: [1.0]}}])
    {0: [0.4, 0.6, 'api_error'], 2: [1.0]}
    """
    out: dict[int, list[float | str]] = {}
    for record in records:
        for index, entries in record["repetitions"].items():
            out.setdefault(int(index), []).extend(entries)
    return out


@dataclass(frozen=True)
class JudgeDoubt:
    """Why the judge may be unsure of one scored row.

    Attributes:
        item_index: the row's position in the run.
        score: the stored score.
        distance: ``|score − threshold|``, on the scorer's scale.
        rejudge_flips: stored re-judge repetitions whose verdict at the threshold differs from the stored score's.
        rejudges: stored re-judge repetitions that were scored (failed ones are not counted).
        order_flips: stored pairwise judgings of the row whose preference changed when the order was swapped.
        pairwise: stored pairwise judgings of the row that gave a verdict.
    """

    item_index: int
    score: float
    distance: float
    rejudge_flips: int = 0
    rejudges: int = 0
    order_flips: int = 0
    pairwise: int = 0

    @property
    def flip_share(self) -> float:
        """(rejudge_flips + order_flips) / (rejudges + pairwise), in [0, 1]; 0 for a row never judged again."""
        seen = self.rejudges + self.pairwise
        return (self.rejudge_flips + self.order_flips) / seen if seen else 0.0

    @property
    def key(self) -> tuple[float, float, int]:
        """The queue's sort key: flip share highest first, then nearest the threshold, then position."""
        return (-self.flip_share, self.distance, self.item_index)

    def explain(self) -> str:
        """Why the row is where it is, in words.

        >>> JudgeDoubt(3, 0.54, 0.04, rejudge_flips=2, rejudges=5).explain()
        'flipped on re-judge 2/5 · 0.04 from the threshold'
        >>> JudgeDoubt(1, 0.9, 0.4, order_flips=1, pairwise=1).explain()
        'order flipped in pairwise judging 1/1 · 0.4 from the threshold'
        """
        parts = []
        if self.rejudges:
            parts.append(f"flipped on re-judge {self.rejudge_flips}/{self.rejudges}")
        if self.pairwise:
            parts.append(f"order flipped in pairwise judging {self.order_flips}/{self.pairwise}")
        parts.append(f"{self.distance:.3g} from the threshold")
        return " · ".join(parts)


def judge_doubts(
    scores: Mapping[int, float],
    *,
    threshold: float,
    higher_is_better: bool = True,
    repetitions: Mapping[int, Sequence[float | str]] | None = None,
    order_flips: Mapping[int, tuple[int, int]] | None = None,
) -> dict[int, JudgeDoubt]:
    """The doubt of every scored row (see the module's docstring for the order it gives).

    Args:
        scores: item index → the stored score (scored rows only).
        threshold: the pass threshold on the scorer's scale.
        higher_is_better: False for scorers where a low score is good (decides the verdicts).
        repetitions: item index → stored re-judge repetitions (:func:`pooled_repetitions`):
            scores, and statuses of failed repetitions (not counted).
        order_flips: item index → ``(flipped, judged)`` pairwise judgings of the row
            (:func:`scorers.analysis.pairwise_runs.order_flips_by_item`).

    Returns:
        Item index → :class:`JudgeDoubt`, for every index of ``scores``.

    >>> doubts = judge_doubts({0: 0.52, 1: 0.9}, threshold=0.5, repetitions={1: [0.4, 0.6, "api_error"]})
    >>> sorted(doubts, key=lambda i: doubts[i].key), doubts[1].explain()
    ([1, 0], 'flipped on re-judge 1/2 · 0.4 from the threshold')
    """
    out = {}
    for index, score in scores.items():
        stored = passes(score, threshold, higher_is_better=higher_is_better)
        again = [float(x) for x in (repetitions or {}).get(index, ()) if not isinstance(x, str)]
        flipped, judged = (order_flips or {}).get(index, (0, 0))
        out[index] = JudgeDoubt(
            item_index=index,
            score=score,
            distance=abs(score - threshold),
            rejudge_flips=sum(passes(x, threshold, higher_is_better=higher_is_better) != stored for x in again),
            rejudges=len(again),
            order_flips=flipped,
            pairwise=judged,
        )
    return out


__all__ = ["JudgeDoubt", "judge_doubts", "pooled_repetitions", "save_rejudge", "stored_rejudges"]
