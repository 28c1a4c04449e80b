"""Pairwise-judge results kept with their run, so they can be shown again and reported.

:func:`save_pairwise` stores one judging of two variants of a run (rubric, judge, every
pair's verdict in both orders); :func:`stored_pairwise` reads them back, newest first, and
:func:`pairwise_table` / :func:`order_flip_rate` give what the page and the report show.
The order-flip rate is the share of judged pairs whose verdict changed when the two
responses were shown in the other order: the judge's position bias.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import pandas as pd

from scorers.analysis.compare import variant_label
from scorers.catalogue.metrics.pairwise import PairwiseOutcome, win_rates
from scorers.runs.runner import EvalItem
from scorers.runs.store import Store, now_iso


def _outcome_record(o: PairwiseOutcome) -> dict[str, Any]:
    v = o.verdict
    return {
        "row_id": o.row_id,
        "status": o.status.value,
        "winner": v.winner if v else None,
        "first": v.first if v else None,
        "second": v.second if v else None,
        "reason": v.reason if v else None,
        "error": o.error,
    }


def save_pairwise(
    store: Store,
    run_id: str,
    *,
    a: str,
    b: str,
    group_col: str,
    pair_col: str,
    rubric: str,
    judge: Mapping[str, Any] | None,
    outcomes: Sequence[PairwiseOutcome],
) -> int:
    """Store one pairwise judging of variants ``a`` and ``b`` of a run.

    Args:
        store: the database.
        run_id: the run whose variants were judged.
        a, b: the two variants (values of ``group_col``).
        group_col, pair_col: the variant and pairing columns used.
        rubric: the rubric the judge was given.
        judge: the judge's model and parameters (never a key), or None.
        outcomes: :func:`scorers.catalogue.metrics.pairwise.pairwise_over_items` output.

    Returns:
        The stored record's id.

    Raises:
        KeyError: no such run.
    """
    store.get_run(run_id)
    with store.transaction() as db:
        cursor = db.execute(
            "INSERT INTO pairwise (run_id, created_at, a, b, group_col, pair_col, rubric, judge, outcomes)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                run_id,
                now_iso(),
                a,
                b,
                group_col,
                pair_col,
                rubric,
                json.dumps(dict(judge)) if judge else None,
                json.dumps([_outcome_record(o) for o in outcomes]),
            ),
        )
        return int(cursor.fetchone()[0])


def stored_pairwise(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every pairwise judging stored for a run, newest first.

    Returns:
        Records ``{"id", "run_id", "created_at", "a", "b", "group_col", "pair_col", "rubric",
        "judge", "outcomes"}``; ``outcomes`` is a list of ``{"row_id", "status", "winner",
        "first", "second", "reason", "error"}`` (winner None when the pair was not judged).
    """
    rows = store.query("SELECT * FROM pairwise WHERE run_id = ? ORDER BY id DESC", (run_id,))
    out = []
    for row in rows:
        record = dict(row)
        record["judge"] = json.loads(record["judge"]) if record["judge"] else None
        record["outcomes"] = json.loads(record["outcomes"])
        out.append(record)
    return out


def order_flip_rate(record: Mapping[str, Any]) -> tuple[float | None, int]:
    """The share of judged pairs whose preference changed when the order was swapped, and their number.

    >>> order_flip_rate({"outcomes": [{"winner": "a", "first": "a", "second": "a"},
    ...                              {"winner": "tie", "first": "a", "second": "b"},
    ...                              {"winner": None, "first": None, "second": None}]})
    (0.5, 2)
    """
    judged = [o for o in record["outcomes"] if o["winner"] is not None]
    if not judged:
        return None, 0
    return sum(o["first"] != o["second"] for o in judged) / len(judged), len(judged)


def order_flips_by_item(records: Sequence[Mapping[str, Any]], items: Sequence[EvalItem]) -> dict[int, tuple[int, int]]:
    """Per item of the run, how often the pairwise judgings of its row flipped when the order was swapped.

    An item takes part in a judging when its variant (its ``group_col`` group) is the judging's
    A or B and its pair id (its ``pair_col`` group) is a judged pair's ``row_id``.

    Args:
        records: :func:`stored_pairwise` records of the run.
        items: the run's items (index = position).

    Returns:
        Item index → ``(flipped, judged)``: judged pairs of the item whose preference changed
        with the order, and judged pairs of the item (pairs not judged are not counted); items
        in no judged pair are absent.

    >>> item = EvalItem("q1/x", {}, groups={"model": "x", "row_id": 1})
    >>> order_flips_by_item([{"a": "x", "b": "y", "group_col": "group:model", "pair_col": "group:row_id",
    ...                       "outcomes": [{"row_id": "1", "winner": "tie", "first": "a", "second": "b"}]}], [item])
    {0: (1, 1)}
    """
    out: dict[int, tuple[int, int]] = {}
    for record in records:
        variant, pair = record["group_col"].removeprefix("group:"), record["pair_col"].removeprefix("group:")
        judged = {o["row_id"]: o["first"] != o["second"] for o in record["outcomes"] if o["winner"] is not None}
        for index, item in enumerate(items):
            if variant_label(item.groups.get(variant)) not in (record["a"], record["b"]):
                continue
            row = item.groups.get(pair)
            if row is None or str(row) not in judged:
                continue
            flipped, seen = out.get(index, (0, 0))
            out[index] = (flipped + judged[str(row)], seen + 1)
    return out


def stored_win_rates(record: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`scorers.catalogue.metrics.pairwise.win_rates` of a stored judging (same keys)."""
    judged = [
        SimpleNamespace(winner=o["winner"], consistent=o["first"] == o["second"])
        for o in record["outcomes"]
        if o["winner"] is not None
    ]
    rates = win_rates(judged)
    rates["n_failed"] = sum(o["winner"] is None for o in record["outcomes"])
    return rates


def pairwise_table(record: Mapping[str, Any]) -> pd.DataFrame:
    """One row per pair: ``row``, ``winner`` (the variant's name, ``"tie"`` or ``"—"``), ``A first``,
    ``B first`` (the preference in each order), ``order flipped``, ``status`` and ``reason``."""
    names = {"a": record["a"], "b": record["b"], "tie": "tie"}
    return pd.DataFrame(
        [
            {
                "row": o["row_id"],
                "winner": names.get(o["winner"], "—"),
                "A first": names.get(o["first"], "—"),
                "B first": names.get(o["second"], "—"),
                "order flipped": None if o["winner"] is None else o["first"] != o["second"],
                "status": o["status"],
                "reason": o["reason"] if o["reason"] is not None else o["error"],
            }
            for o in record["outcomes"]
        ],
        columns=["row", "winner", "A first", "B first", "order flipped", "status", "reason"],
    )


def pairwise_report_tables(store: Store, run_id: str) -> dict[str, pd.DataFrame]:
    """The run's stored pairwise judgings as report tables: heading (variants, date, wins, order flips) → pairs."""
    out = {}
    for record in stored_pairwise(store, run_id):
        rates = stored_win_rates(record)
        flips, _ = order_flip_rate(record)
        heading = (
            f"Pairwise judge: {record['a']} vs {record['b']} ({record['created_at'][:16].replace('T', ' ')} UTC): "
            f"{rates['a_wins']} wins for {record['a']}, {rates['b_wins']} for {record['b']}, {rates['ties']} ties, "
            f"{rates['n_failed']} not judged; order flips " + ("—" if flips is None else f"{flips:.0%}")
        )
        out[heading] = pairwise_table(record)
    return out


__all__ = [
    "order_flip_rate",
    "order_flips_by_item",
    "pairwise_report_tables",
    "pairwise_table",
    "save_pairwise",
    "stored_pairwise",
    "stored_win_rates",
]
