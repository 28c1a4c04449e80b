"""run_evals scoring CPU-bound scorers in a worker process: the same run as in a thread.

Real child processes (no mocks of multiprocessing); the runner's size threshold is lowered and
its chunks made small so that a few items cross several chunks. No assertion on time.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from killed_runs import kill_once_stored
from process_scorers import Noted, Scripted, WhereScored

from scorers import EvalItem, ScoreStatus, Store, run_evals
from scorers.catalogue.registry import create_scorer
from scorers.runs import scoring_process
from scorers.runs.scoring_process import packed_scorers

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_MESSAGE = "the item took longer than the per-item timeout of {:g} s"


@pytest.fixture
def in_process(monkeypatch):
    """Every run with CPU-bound, picklable scorers goes to two worker processes, in chunks of 3 items (chunk k to
    worker process k mod 2)."""
    monkeypatch.setattr(scoring_process, "PROCESS_MIN_ITEMS", 1)
    monkeypatch.setattr(scoring_process, "MAX_PROCESSES", 2)
    monkeypatch.setattr("scorers.runs.runner.CHUNK_ITEMS", 3)


def numbered(n: int, **replace: dict) -> list[EvalItem]:
    """Items ``out i`` against the reference ``out i`` (identical: textual difference 1), with ``replace[i]``
    merged into item i's payload."""
    return [
        EvalItem(f"q{i}", {"input": "q", "output": f"out {i}", "ground_truth": f"out {i}", **replace.get(str(i), {})})
        for i in range(n)
    ]


def written_order(store: Store, run_id: str) -> list[tuple[int, str]]:
    return [
        tuple(r)
        for r in store.query("SELECT item_index, scorer_id FROM results WHERE run_id = ? ORDER BY rowid", [run_id])
    ]


def comparable(result) -> list[tuple]:
    """Every outcome's item, scorer, status, score, error, reason, analysis and details (not its latency)."""
    return [
        (o.item_index, o.item_id, o.scorer_id, o.status, o.score, o.error)
        + ((o.result.reason, o.result.analyze_step_result, o.result.details) if o.result else ())
        for o in result.outcomes
    ]


def test_a_run_in_the_worker_process_has_the_outcomes_it_has_in_a_thread(in_process, monkeypatch):
    # Item 1's response "out 1 and more" against "out 1": 2·5 / (5 + 14) = 10/19 similar, length
    # difference 9/14, confidence 5/14: score 10/19 · 5/14 = 50/266. Item 2 has no reference: textual
    # difference (a catalogue scorer, rebuilt in the child from its id and options) says missing input;
    # the scripted scorer fails item 4 with a missing input of its own.
    items = numbered(8, **{"1": {"output": "out 1 and more"}, "2": {"ground_truth": ""}})
    scorers = [create_scorer("textual-difference", {"target": "ground_truth"}), Scripted(missing_at=4)]
    completed: list[tuple[int, int, bool]] = []

    def on_item(index, item, outcomes):
        completed.append((index, len(outcomes), threading.current_thread() is threading.main_thread()))

    store = Store(":memory:")
    in_child = run_evals(items, scorers, store=store, on_item_complete=on_item)
    monkeypatch.setattr(scoring_process, "PROCESS_MIN_ITEMS", 10**9)
    in_thread = run_evals(items, scorers)

    assert in_child.status == "completed"
    assert comparable(in_child) == comparable(in_thread)
    by_key = {(o.item_index, o.scorer_id): o for o in in_child.outcomes}
    assert by_key[(1, "textual-difference")].score == pytest.approx(50 / 266)
    assert by_key[(0, "scripted")].score == 1.0
    assert by_key[(2, "textual-difference")].status is ScoreStatus.MISSING_INPUT
    assert by_key[(4, "scripted")].status is ScoreStatus.MISSING_INPUT
    assert by_key[(4, "scripted")].error == "ground_truth: no reference for this item"
    assert by_key[(4, "scripted")].score is None  # never 0
    # Written item by item, each item's scorers in the run's order; progress for every item, in order.
    assert written_order(store, in_child.run_id) == [
        (i, s) for i in range(8) for s in ("textual-difference", "scripted")
    ]
    assert completed == [(i, 2, False) for i in range(8)]


def test_a_new_run_sends_its_first_items_to_the_worker_process_before_it_records_them(in_process, tmp_path):
    noted = tmp_path / "scored.txt"

    def scored() -> list[str]:
        return noted.read_text().split() if noted.exists() else []

    class RecordsOnceItemZeroIsScored(Store):
        def create_run(self, **kwargs):
            deadline = time.monotonic() + 60
            while "0" not in scored():
                assert time.monotonic() < deadline, "the worker process scored nothing before the run was recorded"
                time.sleep(0.01)
            return super().create_run(**kwargs)

    # 15 items in chunks of 3: a fifth of them, items 0-2, is the head start (scoring_process.head_start).
    store = RecordsOnceItemZeroIsScored(":memory:")
    completed: list[int] = []
    result = run_evals(
        numbered(15), [Noted(str(noted))], store=store, on_item_complete=lambda i, item, outcomes: completed.append(i)
    )

    assert result.status == "completed"
    assert [(o.item_index, o.item_id, o.score) for o in result.outcomes] == [(i, f"q{i}", 1.0) for i in range(15)]
    assert written_order(store, result.run_id) == [(i, "noted") for i in range(15)]
    assert completed == list(range(15))
    assert sorted(int(i) for i in scored()) == list(range(15))  # each item scored once


def test_the_worker_processes_share_the_items_and_import_no_dashboard_library(in_process):
    result = run_evals(numbered(4), [WhereScored()])

    # Items 0-2 (the first chunk) in one worker process, item 3 (the second) in the other.
    pids = [o.result.details["pid"] for o in result.outcomes]
    assert pids[0] == pids[1] == pids[2] != pids[3]
    assert os.getpid() not in pids  # scored in other processes
    assert {tuple(o.result.details["modules"]) for o in result.outcomes} == {()}  # no streamlit, plotly, pandas...


def test_a_scorer_that_cannot_be_pickled_or_a_small_run_is_scored_in_a_thread(in_process, monkeypatch):
    pids: set[int] = set()

    class Local(Scripted):  # defined in a function: pickle cannot name it
        def run(self, payload):
            pids.add(os.getpid())
            return super().run(payload)

    assert packed_scorers([Local()], 10) is None
    result = run_evals(numbered(4), [Local()])
    assert result.status == "completed" and pids == {os.getpid()}

    assert packed_scorers([Scripted()], 10) is not None
    monkeypatch.setattr(scoring_process, "PROCESS_MIN_ITEMS", 11)
    assert packed_scorers([Scripted()], 10) is None  # fewer items than the threshold
    monkeypatch.setattr(scoring_process, "PROCESS_MIN_ITEMS", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})  # a container limited to one CPU of many
    assert packed_scorers([Scripted()], 10) is None  # one CPU: nothing to gain


def test_a_catalogue_scorer_pickles_as_its_id_and_options_and_a_judged_one_does_not(fake_openai):
    from judge_data import settings_for

    scorer = create_scorer("textual-difference", {"ignore_case": True, "scale": 10})
    again = pickle.loads(pickle.dumps(scorer))
    assert (again.id, again.options, again.scorer) == (scorer.id, scorer.options, scorer.scorer)

    judged = create_scorer("prompt-alignment", settings=settings_for(fake_openai))
    with pytest.raises(TypeError, match="Prompt alignment is scored in this process only"):
        pickle.dumps(judged)
    assert packed_scorers([judged], 10**6) is None  # not CPU-bound anyway: scored concurrently in threads


def test_a_bug_in_a_scorer_surfaces_after_what_was_scored_before_it_is_written(in_process):
    store = Store(":memory:")

    with pytest.raises(RuntimeError, match="bug in the scorer at item 4") as raised:
        run_evals(numbered(9), [Scripted(bug_at=4)], store=store)

    assert any("in the scoring process" in note for note in raised.value.__notes__)
    (run,) = store.list_runs()
    # Items 0-3 were scored before the bug (items 3 and 4 in the same chunk), as a thread writes them.
    assert written_order(store, run["id"]) == [(i, "scripted") for i in range(4)]


def test_a_worker_process_that_dies_ends_the_run_interrupted_and_resume_scores_the_rest(in_process):
    store = Store(":memory:")

    first = run_evals(numbered(12), [Scripted(die_at=4)], store=store)

    # Chunks of 3: items 0-2 came back before the child died in item 4; items 3 (scored in the
    # dying chunk) and 5-11 are not scored, never failed or 0.
    assert first.status == "interrupted"
    assert "stopped unexpectedly" in first.stop_reason and "3 of 12 items done" in first.stop_reason
    assert [o.item_index for o in first.outcomes] == [0, 1, 2]
    stored = store.get_run(first.run_id)
    assert stored["status"] == "interrupted" and stored["stop_reason"] == first.stop_reason

    resumed = run_evals([], [Scripted()], store=store, run_id=first.run_id)

    assert resumed.status == "completed"
    assert [o.item_index for o in resumed.outcomes] == list(range(12))
    assert [o.score for o in resumed.outcomes] == [1.0] * 12
    assert written_order(store, first.run_id) == [(i, "scripted") for i in range(12)]  # each once


def test_cancel_stops_the_worker_process_after_the_item_it_is_scoring(in_process):
    cancel = threading.Event()
    store = Store(":memory:")

    def on_item(index, item, outcomes):
        if index == 4:
            cancel.set()

    # Chunks of 3 go to the two worker processes in turn: 0-2 and 6-8 to one, 3-5 and 9-11 to the other.
    # Cancel comes when item 4's chunk (3-5) is back; the first is then in its next chunk (6-8), at item 6
    # or sleeping in item 7: it ends that item and returns. Item 8 is never started. The other may have
    # scored some of 9-11 meanwhile, in order: what was scored is kept.
    result = run_evals(
        numbered(12), [Scripted(sleep_at=7, sleep_s=1.0)], store=store, cancel=cancel, on_item_complete=on_item
    )

    assert result.status == "cancelled"
    indexes = [o.item_index for o in result.outcomes]
    assert indexes[:6] == list(range(6))
    assert [i for i in indexes[6:] if i < 9] in ([], [6], [6, 7])
    assert [i for i in indexes[6:] if i >= 9] in ([], [9], [9, 10], [9, 10, 11])
    assert written_order(store, result.run_id) == [(i, "scripted") for i in indexes]  # what finished is written


def test_the_per_item_timeout_holds_in_the_worker_process(in_process):
    result = run_evals(numbered(5), [Scripted(sleep_at=1, sleep_s=2.0)], item_timeout=0.5)

    # Item 1 sleeps 2 s, past the timeout of 0.5 s: an API error (its late score is dropped); the others scored.
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED, ScoreStatus.API_ERROR] + [ScoreStatus.SCORED] * 3
    assert result.outcomes[1].error == TIMEOUT_MESSAGE.format(0.5)


_KILLED_RUN = """
import sys
sys.path.insert(0, sys.argv[1])
from scorers import EvalItem, Store, run_evals
from scorers.catalogue.registry import create_scorer

if __name__ == "__main__":
    items = [EvalItem(f"q{i}", {"input": "q", "output": f"out {i} x", "ground_truth": f"out {i}"}) for i in range(int(sys.argv[3]))]
    run_evals(items, [create_scorer("textual-difference")], store=Store(sys.argv[2]), dataset_name="killed")
"""


def test_a_run_killed_while_its_worker_process_scores_resumes_without_scoring_anything_twice(tmp_path):
    # The default threshold and chunks: 60,000 items (more than PROCESS_MIN_ITEMS) go to the worker process.
    n = 60_000
    assert n >= scoring_process.PROCESS_MIN_ITEMS
    db = tmp_path / "runs.db"
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RUN, str(REPO), str(db), str(n)], stderr=subprocess.PIPE, cwd=REPO
    )
    kill_once_stored(child, db, 1000, within_s=120)

    store = Store(db)
    (run,) = store.list_runs()
    assert run["status"] == "running"  # never finished: it was killed
    before = {r["item_index"] for r in store.results(run["id"])}
    assert 1000 <= len(before) < n

    resumed = run_evals([], [create_scorer("textual-difference")], store=store, run_id=run["id"])

    assert resumed.status == "completed"
    # "out i x" against "out i": 2·len("out i") / (2·len("out i") + 2), confidence len("out i") / len("out i x").
    for o in resumed.outcomes[:: n // 7]:
        k = len(f"out {o.item_index}")
        assert o.score == pytest.approx(2 * k / (2 * k + 2) * k / (k + 2))
    rows = store.query("SELECT item_index, COUNT(*) FROM results WHERE run_id = ? GROUP BY item_index", [run["id"]])
    assert len(rows) == n and {count for _, count in rows} == {1}


def test_a_run_scored_from_a_thread_as_the_dashboards_jobs_are_uses_the_worker_process(in_process):
    store = Store(":memory:")
    with ThreadPoolExecutor(max_workers=1) as pool:  # the dashboard runs each job in a thread of its server
        result = pool.submit(run_evals, numbered(7), [WhereScored()], store=store).result()

    assert result.status == "completed" and len(store.results(result.run_id)) == 7
    assert {o.result.details["pid"] for o in result.outcomes} != {os.getpid()}


def test_a_run_that_cannot_be_recorded_stops_the_worker_process_started_for_it(in_process, monkeypatch):
    started: list[scoring_process.ScoringProcess] = []
    original = scoring_process.ScoringProcess.__init__

    def record(self, packed):
        original(self, packed)
        started.append(self)

    monkeypatch.setattr(scoring_process.ScoringProcess, "__init__", record)

    with pytest.raises(ValueError, match="scorer ids must be distinct"):
        run_evals(numbered(5), [Scripted(), Scripted()], store=Store(":memory:"))

    # Both started before the run was recorded, to overlap their imports with that, and both have exited.
    assert [child._proc.returncode for child in started] == [0, 0]


def test_the_cli_says_why_a_run_was_interrupted_when_its_worker_process_died(in_process, monkeypatch, tmp_path):
    import io

    from scorers import cli

    data = tmp_path / "rows.csv"
    data.write_text("id,response,reference\n" + "".join(f"q{i},out {i},out {i}\n" for i in range(12)))
    # The run's scorer dies in the worker process at item 4 (as if killed).
    monkeypatch.setattr(cli, "_make_scorers", lambda *args: [Scripted("textual-difference", die_at=4)])
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", str(data), "--scorer", "textual-difference", "--db", str(tmp_path / "s.db"), "--yes"]
    code = cli.main(argv, stdout=out, stderr=err)
    assert code == cli.EXIT_INTERRUPTED
    store = Store(tmp_path / "s.db")
    (run,) = store.list_runs()
    reason = store.get_run(run["id"])["stop_reason"]
    store.close()
    # Chunks of 3: items 0-2 came back before the child died in item 4.
    assert "stopped unexpectedly" in reason and "3 of 12 items done" in reason
    (line,) = [ln for ln in err.getvalue().splitlines() if ln.startswith("Interrupted")]
    assert line.startswith(f"Interrupted: {reason} Run {run['id']} stopped with 3 of 12 outcomes.")
