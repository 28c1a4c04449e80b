"""The regression gate (scorers.analysis.gate) and its CLI (python -m scorers gate / baseline).

Every expected number is worked by hand in a comment from the rule in the module docstring:
d = candidate − baseline per item; g = d (higher is better) or −d (lower is better); a scorer
fails when mean(g) < −min_effect and the bootstrap interval of mean(g) lies below zero.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from fake_openai import Reply
from judge_data import single_analysis
from markdown_it import MarkdownIt

from scorers import EvalItem, create_prompt_alignment_scorer, run_evals
from scorers.analysis.compare import run_diff
from scorers.analysis.gate import (
    NOT_RUN,
    GatePolicy,
    Verdict,
    anchor,
    evaluate_gate,
    gate_report,
    gate_runs,
    junit_report,
    markdown_summary,
    side_from_file,
    side_from_run,
)
from scorers.cli import main
from scorers.core.errors import ScoreStatus
from scorers.runs.export import export_run
from scorers.runs.runner import load_run, recorded_scorer_options
from scorers.runs.store import Store

JUNIT_XSD = Path(__file__).parent / "data" / "junit" / "junit.xsd"
FAILED = "failed"  # a score given as FAILED is stored as an api_error outcome
MISSING = "missing"  # no outcome stored at all (the run stopped)


def stored_run(
    store: Store, name: str, scores: dict[str, list], *, status: str = "completed", options: dict | None = None
) -> str:
    """A stored run: scorer id → one score per item (item ids q00, q01, ...); FAILED / MISSING as above;
    ``options``: scorer id → the options recorded for it (default none)."""
    n = len(next(iter(scores.values())))
    items = [
        (f"q{i:02d}", {"input": [{"role": "user", "content": f"question {i}"}], "output": f"answer {i}"}, {})
        for i in range(n)
    ]
    run_id = store.create_run(
        dataset_name="d.csv",
        items=items,
        name=name,
        scorers=[{"id": sid, "name": sid, "options": (options or {}).get(sid, {})} for sid in scores],
        judge=None,
    )
    for sid, values in scores.items():
        for i, score in enumerate(values):
            if score == MISSING:
                continue
            if score == FAILED:
                record = {"status": ScoreStatus.API_ERROR.value, "error": "HTTP 500"}
            else:
                record = {"status": ScoreStatus.SCORED.value, "score": score, "reason": "r", "analysis": {}}
            store.save_result(run_id, i, sid, record)
    store.finish_run(run_id, status)
    return run_id


def gate_of(baseline: dict[str, list], candidate: dict[str, list], **policy) -> object:
    store = Store(":memory:")
    try:
        return gate_runs(
            store, stored_run(store, "base", baseline), stored_run(store, "cand", candidate), GatePolicy(**policy)
        )
    finally:
        store.close()


TD = "textual-difference"  # higher is better
TOX = "toxicity"  # lower is better


# ---- the rule ----------------------------------------------------------------------------------------------


def test_a_clear_regression_fails():
    # Every item drops 0.9 → 0.6: d = −0.3 for all 10, so mean(d) = −0.3 and every bootstrap
    # resample has mean −0.3: the interval is [−0.3, −0.3], wholly below zero, and −0.3 < −0.05.
    result = gate_of({TD: [0.9] * 10}, {TD: [0.6] * 10}, default_min_effect=0.05)
    (g,) = result.scorers
    assert g.verdict is Verdict.FAIL and result.verdict is Verdict.FAIL and result.exit_code == 1
    assert g.mean_diff == pytest.approx(-0.3) and (g.ci_low, g.ci_high) == (pytest.approx(-0.3), pytest.approx(-0.3))
    assert (g.baseline_mean, g.candidate_mean) == (pytest.approx(0.9), pytest.approx(0.6))
    assert (g.wins, g.ties, g.losses) == (0, 0, 10)
    # Wilcoxon, exact: all 10 signs negative, so T+ = 0, the most extreme of the 2^10 equally likely
    # sign patterns; two-sided p = 2 · 1/2^10 = 0.001953125.
    assert g.wilcoxon_p == pytest.approx(2 / 2**10)
    # Top regressions: all equal (−0.3), so the first five item ids in order.
    assert [r.item_id for r in g.regressions] == ["q00", "q01", "q02", "q03", "q04"]
    assert g.regressions[0].change == pytest.approx(-0.3)


def test_a_noise_sized_change_passes():
    # Baseline 0.5 everywhere; candidate 0.6 on 9 items and 0.4 on 11: mean(d) = (9·0.1 − 11·0.1)/20 = −0.01.
    # sd(d) ≈ 0.1, so the 95% interval is about −0.01 ± 1.96·0.1/√20 = [−0.054, +0.034]: it includes 0.
    result = gate_of({TD: [0.5] * 20}, {TD: [0.6] * 9 + [0.4] * 11})
    (g,) = result.scorers
    assert g.mean_diff == pytest.approx(-0.01)
    assert g.ci_low < 0 < g.ci_high
    assert -0.07 < g.ci_low < -0.04 and 0.02 < g.ci_high < 0.05
    assert (g.wins, g.ties, g.losses) == (9, 0, 11)
    assert g.verdict is Verdict.PASS and result.exit_code == 0
    assert "includes zero" in g.reasons[0]


def test_a_real_but_small_change_passes_within_the_minimum_effect_and_fails_without_it():
    # d = −0.02 on every item: interval [−0.02, −0.02] excludes zero; −0.02 is not < −0.05, but is < −0.
    assert gate_of({TD: [0.8] * 8}, {TD: [0.78] * 8}, default_min_effect=0.05).verdict is Verdict.PASS
    assert gate_of({TD: [0.8] * 8}, {TD: [0.78] * 8}).verdict is Verdict.FAIL
    # A per-scorer minimum effect wins over the default.
    assert gate_of({TD: [0.8] * 8}, {TD: [0.78] * 8}, min_effect={TD: 0.03}).verdict is Verdict.PASS


def test_a_lower_is_better_scorers_increase_fails_and_its_decrease_passes():
    # Toxicity 0.1 → 0.4 on 8 items: d = +0.3, g = −d = −0.3 < 0 with the interval [−0.3, −0.3]: worse.
    worse = gate_of({TOX: [0.1] * 8}, {TOX: [0.4] * 8}, default_min_effect=0.05)
    (g,) = worse.scorers
    assert not g.higher_is_better
    assert g.mean_diff == pytest.approx(0.3) and g.verdict is Verdict.FAIL and worse.exit_code == 1
    assert (g.wins, g.losses) == (0, 8)  # wins and losses are in the scorer's direction
    assert "lower is better" in g.reasons[0]
    # The same change for a higher-is-better scorer is an improvement.
    assert gate_of({TD: [0.1] * 8}, {TD: [0.4] * 8}).verdict is Verdict.PASS
    # Toxicity 0.4 → 0.1: better.
    better = gate_of({TOX: [0.4] * 8}, {TOX: [0.1] * 8})
    assert better.verdict is Verdict.PASS and better.scorers[0].wins == 8
    assert better.scorers[0].regressions == ()


def test_too_many_unscored_items_are_undecided_and_failures_are_never_zero():
    # 2 of 10 candidate items failed: share 2/10 = 20% > 10% → undecided (exit 3).
    # The 8 pairs are all 0.7 → 0.7 (d = 0); counting the failures as 0 would have shown a drop.
    result = gate_of({TD: [0.7] * 10}, {TD: [0.7] * 8 + [FAILED, FAILED]})
    (g,) = result.scorers
    assert g.verdict is Verdict.UNDECIDED and result.exit_code == 3
    assert (g.n_items, g.n_pairs, g.n_unscored_candidate, g.n_unscored_baseline) == (10, 8, 2, 0)
    assert g.unscored_share == pytest.approx(0.2)
    assert g.candidate_mean == pytest.approx(0.7) and g.candidate_mean_all == pytest.approx(0.7)
    assert g.mean_diff == 0
    # With 25% allowed, the same run is decided: no change → pass.
    assert gate_of({TD: [0.7] * 10}, {TD: [0.7] * 8 + [FAILED, FAILED]}, max_unscored_share=0.25).exit_code == 0
    # 1 of 10 (10%) is within the default share.
    assert gate_of({TD: [0.7] * 10}, {TD: [0.7] * 9 + [FAILED]}).verdict is Verdict.PASS


def test_items_never_scored_in_a_stopped_run_count_as_not_scored():
    store = Store(":memory:")
    base = stored_run(store, "base", {TD: [0.7] * 10})
    # The candidate stopped after 5 items: 5 outcomes are missing, not "fewer items".
    cand = stored_run(store, "cand", {TD: [0.7] * 5 + [MISSING] * 5}, status="cancelled")
    side = side_from_run(store, cand)
    assert (side.frame["status"] == NOT_RUN).sum() == 5
    result = gate_runs(store, base, cand)
    assert result.scorers[0].n_unscored_candidate == 5 and result.exit_code == 3
    store.close()


def test_a_regression_wins_over_an_undecided_scorer():
    # TD regresses clearly (0.9 → 0.5 on all 10); toxicity has 5 of 10 failures: fail (1) beats undecided (3).
    result = gate_of({TD: [0.9] * 10, TOX: [0.1] * 10}, {TD: [0.5] * 10, TOX: [0.1] * 5 + [FAILED] * 5})
    assert [g.verdict for g in result.scorers] == [Verdict.FAIL, Verdict.UNDECIDED]
    assert result.exit_code == 1


def test_floors_follow_the_direction():
    # No change (0.6 → 0.6) but a floor of 0.65: the candidate's mean 0.6 is below it → fail.
    assert gate_of({TD: [0.6] * 6}, {TD: [0.6] * 6}, floors={TD: 0.65}).verdict is Verdict.FAIL
    assert gate_of({TD: [0.6] * 6}, {TD: [0.6] * 6}, floors={TD: 0.55}).verdict is Verdict.PASS
    # For toxicity the floor is a ceiling: mean 0.3 above 0.2 fails, below 0.4 passes.
    assert gate_of({TOX: [0.3] * 6}, {TOX: [0.3] * 6}, floors={TOX: 0.2}).verdict is Verdict.FAIL
    assert gate_of({TOX: [0.3] * 6}, {TOX: [0.3] * 6}, floors={TOX: 0.4}).verdict is Verdict.PASS


def test_bad_policies_and_unknown_scorers_are_clear_errors():
    with pytest.raises(ValueError, match="minimum effect"):
        GatePolicy(default_min_effect=-0.1)
    with pytest.raises(ValueError, match="share"):
        GatePolicy(max_unscored_share=1.5)
    with pytest.raises(ValueError, match="'bias', not a scorer of both sides"):
        gate_of({TD: [0.5] * 3}, {TD: [0.5] * 3}, min_effect={"bias": 0.1})
    with pytest.raises(ValueError, match="no scorer is in both"):
        gate_of({TD: [0.5] * 3}, {TOX: [0.5] * 3})


def test_results_files_gate_like_the_stored_runs(tmp_path: Path):
    store = Store(":memory:")
    base = stored_run(store, "base", {TD: [0.9] * 6 + [0.5] * 4})
    cand = stored_run(store, "cand", {TD: [0.6] * 6 + [0.5] * 4})
    for run_id, suffix in ((base, "jsonl"), (cand, "parquet")):
        _, items, result = load_run(store, run_id)
        (tmp_path / f"{run_id}.{suffix}").write_bytes(export_run(result, items, suffix))
    from_runs = gate_runs(store, base, cand)
    from_files = evaluate_gate(side_from_file(tmp_path / f"{base}.jsonl"), side_from_file(tmp_path / f"{cand}.parquet"))
    # d = −0.3 on 6 items and 0 on 4: mean −0.18; the same numbers either way.
    assert from_files.scorers[0].mean_diff == pytest.approx(-0.18)
    assert from_files.scorers[0].to_dict() == from_runs.scorers[0].to_dict()
    assert from_files.candidate.run_id == cand  # the export's run_id column names the run
    store.close()


# ---- outputs -----------------------------------------------------------------------------------------------


def _two_scorer_result():
    return gate_of(
        {TD: [0.9] * 10, TOX: [0.1] * 10},
        {TD: [0.9] * 4 + [0.5] * 6, TOX: [0.1] * 10},
        default_min_effect=0.05,
    )


def test_markdown_renders_as_a_table_with_links_to_the_report():
    result = _two_scorer_result()
    text = markdown_summary(result, report_url="gate.html")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    types = [t.type for t in tokens]
    assert "table_open" in types
    first = types.index("table_open")
    table = tokens[first : types.index("table_close") + 1]
    headers = [tokens[first + i + 1].content for i, t in enumerate(table) if t.type == "th_open"]
    assert headers[0] == "Scorer" and headers[-1] == "Verdict" and len(headers) == 10
    rows = [t for t in table if t.type == "tr_open"]
    assert len(rows) == 1 + 2  # header row + one per scorer
    html = MarkdownIt("commonmark").enable("table").render(text)
    # TD: d = −0.4 on 6 items, 0 on 4: mean −0.24 → FAIL; toxicity unchanged → PASS.
    assert "<strong>FAIL</strong>" in html and "<strong>PASS</strong>" in html
    assert f'href="gate.html#{anchor(TD)}"' in html
    assert f'href="gate.html#{anchor(TD, "q04")}"' in html  # the worst items link to their report rows
    assert "−0.240" in text or "-0.240" in text


def test_markdown_escapes_item_ids_that_would_break_the_table():
    result = gate_of({TD: [0.9] * 3}, {TD: [0.5] * 3})
    g = result.scorers[0]
    from dataclasses import replace

    odd = replace(g, regressions=(replace(g.regressions[0], item_id="a|b*c"),))
    text = markdown_summary(replace(result, scorers=(odd,)))
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<td>a|b*c</td>" in html


def test_junit_xml_validates_against_the_common_schema():
    schema = xmlschema.XMLSchema(JUNIT_XSD)
    result = _two_scorer_result()
    for per_item in (False, True):
        data = junit_report(result, per_item=per_item)
        schema.validate(data.decode("utf-8"))
    suite = ET.fromstring(junit_report(result, per_item=True)).find("testsuite")
    # 2 scorer cases + 10 item cases per scorer; TD fails, and its 6 items that fell by 0.4 > 0.05 fail.
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("22", "7", "0")
    first, second = suite.findall("testcase")[:2]
    assert (first.get("name"), second.get("name")) == (TD, TOX)
    assert first.find("failure") is not None and second.find("failure") is None


def test_a_scorer_the_candidate_dropped_makes_the_gate_undecided():
    # The candidate kept textual difference (unchanged: diff 0, passes) but has no toxicity results:
    # all 10 baseline items of toxicity are not scored (100% > 10%), so the gate cannot pass: exit 3.
    result = gate_of({TD: [0.7] * 10, TOX: [0.1] * 10}, {TD: [0.7] * 10})
    assert [g.verdict for g in result.scorers] == [Verdict.PASS]
    assert result.verdict == Verdict.UNDECIDED and result.exit_code == 3
    assert any("has no results for toxicity" in note for note in result.notes)
    assert result.headline() == "UNDECIDED: the candidate has no results for toxicity."


def test_the_junit_schema_rejects_what_ci_systems_cannot_read():
    schema = xmlschema.XMLSchema(JUNIT_XSD)
    ok = '<testsuites><testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite></testsuites>'
    assert schema.is_valid(ok)
    two_outcomes = ok.replace('name="t"/>', 'name="t"><failure/><error/></testcase>')
    no_name = ok.replace(' name="t"', "")
    bad_count = ok.replace('tests="1"', 'tests="one"')
    assert not any(schema.is_valid(doc) for doc in (two_outcomes, no_name, bad_count))


def test_junit_reports_an_undecided_scorer_as_an_error_and_unscored_items_as_skipped():
    schema = xmlschema.XMLSchema(JUNIT_XSD)
    result = gate_of({TD: [0.7] * 10}, {TD: [0.7] * 7 + [FAILED] * 3})
    data = junit_report(result, per_item=True).decode("utf-8")
    schema.validate(data)
    suite = ET.fromstring(data).find("testsuite")
    # 3 of 10 not scored (30% > 10%): the scorer's case is an error; the 3 items are skipped.
    assert (suite.get("errors"), suite.get("failures"), suite.get("skipped")) == ("1", "0", "3")


def test_json_verdict_and_html_report():
    result = _two_scorer_result()
    verdict = json.loads(result.to_json())
    assert verdict["verdict"] == "fail" and verdict["exit_code"] == 1
    assert [s["verdict"] for s in verdict["scorers"]] == ["fail", "pass"]
    assert verdict["scorers"][0]["mean_diff"] == pytest.approx(-0.24)
    report = gate_report(result)
    assert f'id="{anchor(TD)}"' in report and f'id="{anchor(TD, "q04")}"' in report
    assert "Scorer gate: FAIL" in report


# ---- CLI ---------------------------------------------------------------------------------------------------


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def db(store_target: str) -> str:
    """The store of the CLI tests: a SQLite file, then a PostgreSQL database (``--db`` takes either)."""
    return store_target


def test_cli_gate_exit_codes_and_outputs(db: str, tmp_path: Path):
    store = Store(db)
    base = stored_run(store, "base", {TD: [0.9] * 10})
    worse = stored_run(store, "worse", {TD: [0.5] * 10})
    same = stored_run(store, "same", {TD: [0.9] * 10})
    unscored = stored_run(store, "unscored", {TD: [0.9] * 7 + [FAILED] * 3})
    store.close()
    md, junit, verdict, report = (tmp_path / n for n in ("s.md", "j.xml", "v.json", "r.html"))
    code, out, _ = cli(
        "gate", "--baseline", base, "--candidate", worse, "--db", str(db), "--min-effect", "0.05",
        "--markdown", str(md), "--junit", str(junit), "--junit-items", "--json", str(verdict), "--report", str(report),
    )  # fmt: skip
    assert code == 1 and "## Scorer gate: FAIL" in out
    assert md.read_text() == out.rstrip("\n") + "\n"
    assert f"({report}#gate-textual-difference)" in md.read_text()  # links default to the --report path
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(junit))
    assert json.loads(verdict.read_text())["exit_code"] == 1
    assert report.read_text().startswith("<!DOCTYPE html>")
    assert cli("gate", "--baseline", base, "--candidate", same, "--db", str(db))[0] == 0
    assert cli("gate", "--baseline", base, "--candidate", unscored, "--db", str(db))[0] == 3
    assert cli("gate", "--baseline", base, "--candidate", unscored, "--db", str(db), "--max-unscored", "0.3")[0] == 0
    code, _, err = cli("gate", "--baseline", base, "--candidate", "nope", "--db", str(db))
    assert code == 2 and "'nope' is not a results file" in err
    code, _, err = cli("gate", "--baseline", base, "--candidate", same, "--db", str(db), "--min-effect", "bias=0.1")
    assert code == 2 and "'bias'" in err
    assert cli("gate", "--baseline", base, "--candidate", same, "--min-effect", "-1", "--db", str(db))[0] == 2


def test_a_failing_run_can_never_become_the_baseline(db: str):
    store = Store(db)
    first = stored_run(store, "first", {TD: [0.9] * 10})
    worse = stored_run(store, "worse", {TD: [0.5] * 10})
    better = stored_run(store, "better", {TD: [0.95] * 10})
    store.close()
    assert cli("baseline", "set", "main", first, "--db", str(db))[0] == 0
    # Gating by name; the failing verdict is recorded against the candidate run.
    assert cli("gate", "--baseline", "main", "--candidate", worse, "--db", str(db))[0] == 1
    code, _, err = cli("baseline", "set", "main", worse, "--db", str(db))
    assert code == 2 and "failed its gate" in err
    code, out, _ = cli("baseline", "show", "main", "--db", str(db))
    assert f"run {first}" in out.splitlines()[0]  # it did not move
    # A passing gate does not move the baseline either: only `baseline set` does.
    assert cli("gate", "--baseline", "main", "--candidate", better, "--db", str(db))[0] == 0
    assert Store(db).current_baseline("main")["run_id"] == first
    assert cli("baseline", "set", "main", better, "--db", str(db), "--note", "new prompt")[0] == 0
    code, out, _ = cli("baseline", "show", "main", "--db", str(db))
    lines = out.splitlines()
    assert f"run {better}" in lines[0] and "new prompt" in out and first in out  # history kept, newest first
    assert out.index(better, len(lines[0])) < out.index(first)
    code, out, _ = cli("baseline", "list", "--db", str(db))
    assert code == 0 and "main" in out and better in out and out.rstrip().endswith("2")


def test_a_run_that_did_not_complete_cannot_become_the_baseline(db: str):
    store = Store(db)
    stopped = stored_run(store, "stopped", {TD: [0.9] * 4 + [MISSING] * 6}, status="cancelled")
    with pytest.raises(ValueError, match=f"^run {stopped} is stopped, not completed: finish it"):
        store.set_baseline("main", stopped)
    paused = stored_run(store, "paused", {TD: [0.9] * 4 + [MISSING] * 6}, status="budget_reached")
    with pytest.raises(ValueError) as caught:  # the status in words, as History and `runs` write it
        store.set_baseline("main", paused)
    assert str(caught.value).startswith(
        f"run {paused} is paused at the budget cap (the next judge call could have passed it), not completed"
    )
    with pytest.raises(ValueError, match="no run"):
        store.set_baseline("main", "nope")
    assert store.current_baseline("main") is None
    store.close()


def test_gate_reads_results_files_without_a_store(tmp_path: Path):
    store = Store(":memory:")
    base = stored_run(store, "base", {TOX: [0.1] * 8})
    cand = stored_run(store, "cand", {TOX: [0.5] * 8})
    paths = []
    for run_id in (base, cand):
        _, items, result = load_run(store, run_id)
        path = tmp_path / f"{run_id}.jsonl"
        path.write_bytes(export_run(result, items, "jsonl"))
        paths.append(str(path))
    store.close()
    code, out, err = cli("gate", "--baseline", paths[0], "--candidate", paths[1], "--db", str(tmp_path / "none.db"))
    assert code == 1 and "lower" in out and "not recorded" in err


def test_run_writes_junit_xml_that_validates(tmp_path: Path, studio_db: Path):
    data = tmp_path / "d.jsonl"
    # Row 1: the response equals the reference → ratio 1, confidence 1, score 1.
    # Row 2: "abcd" against "abxy": LCS 2 → ratio 2·2/8 = 0.5, equal lengths → score 0.5.
    # Row 3: a response message whose content is no text is invalid input: not scored (never 0).
    # Mean of the scored = (1 + 0.5)/2 = 0.75.
    rows = [("r1", "same", "same"), ("r2", "abcd", "abxy"), ("r3", {"role": "assistant", "content": 5}, "x")]
    data.write_text(
        "".join(json.dumps({"id": i, "prompt": "Q", "response": r, "reference": g}) + "\n" for i, r, g in rows),
        encoding="utf-8",
    )
    junit = tmp_path / "run.xml"
    argv = ["run", str(data), "--scorer", TD, "--ground-truth-col", "reference", "--junit", str(junit)]
    code, out, _ = cli(*argv, "--junit-items", "--fail-under", f"{TD}=0.8")
    assert code == 1 and "mean 0.7500 < threshold 0.8" in out
    schema = xmlschema.XMLSchema(JUNIT_XSD)
    schema.validate(str(junit))
    suite = ET.parse(junit).find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "1")
    assert cases[TD].find("failure").get("type") == "threshold"
    assert cases["r3"].find("error").get("type") == "invalid_input"
    assert len(cases["r1"]) == len(cases["r2"]) == 1  # passed: only their <system-out>
    # Threshold met: the scorer's case is an error (one item not scored), matching exit code 3.
    code, _, _ = cli(*argv, "--fail-under", f"{TD}=0.7")
    assert code == 3
    suite = ET.parse(junit).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "1")
    assert cli("run", str(data), "--scorer", TD, "--junit-items")[0] == 2


def test_baseline_items_missing_from_a_candidate_file_count_as_not_scored(tmp_path: Path):
    store = Store(":memory:")
    base = stored_run(store, "base", {TD: [0.7] * 10})
    # The candidate stopped after 7 items: its export has 7 rows, no row at all for q07..q09,
    # and 2 new items (q10, q11) the baseline does not have.
    cand = stored_run(store, "cand", {TD: [0.7] * 7 + [MISSING] * 3 + [0.1, 0.1]})
    _, items, result = load_run(store, cand)
    path = tmp_path / "cand.jsonl"
    path.write_bytes(export_run(result, items, "jsonl"))
    gate = evaluate_gate(side_from_run(store, base), side_from_file(path))
    (g,) = gate.scorers
    # Gated: the baseline's 10 items; 3 missing → share 3/10 = 30% > 10% → undecided. The two new
    # items (scored 0.1) are not gated, so they do not drag the mean down.
    assert (g.n_items, g.n_pairs, g.n_unscored_candidate) == (10, 7, 3)
    assert g.unscored[0] == ("q07", "candidate: missing")
    assert g.verdict is Verdict.UNDECIDED and gate.exit_code == 3
    assert any("2 item id(s) of the candidate are not in the baseline" in n for n in gate.notes)
    assert any("3 item id(s) of the baseline are missing" in n for n in gate.notes)
    store.close()


def test_a_tiny_regression_shows_its_digits_and_how_to_set_a_minimum_effect():
    # 10 items, baseline 1.0 each, candidate 1.0 - 1e-5 each: every d = -1e-5, so mean(d) = -1e-5 and
    # every bootstrap resample's mean is -1e-5 too: the interval is [-1e-5, -1e-5], below zero; with the
    # minimum effect 0 the scorer fails. At 3 decimals all read -0.000; 1e-5's first significant digit is
    # the 5th decimal, plus one for the estimate's second digit -> 6 decimals: -0.000010.
    result = gate_of({TD: [1.0] * 10}, {TD: [1.0 - 1e-5] * 10})
    assert result.verdict is Verdict.FAIL
    md = markdown_summary(result)
    assert "-0.000010 [-0.000010, -0.000010]" in md
    assert "-0.000 " not in md and "-0.000]" not in md
    assert "changed by -0.000010" in md
    assert "any statistically detectable worsening fails" in md
    assert "--min-effect" in md and '"Minimum effect"' in md
    # With a minimum effect the advice is gone (the verdict says what the effect was compared to).
    passed = gate_of({TD: [1.0] * 10}, {TD: [1.0 - 1e-5] * 10}, default_min_effect=0.001)
    assert passed.verdict is Verdict.PASS
    assert "statistically detectable" not in markdown_summary(passed)


def test_a_scorer_run_with_other_options_is_not_gated_and_the_gate_cannot_pass():
    store = Store(":memory:")
    same = [0.8, 0.7, 0.9, 0.6, 0.8, 0.7]
    base = stored_run(
        store,
        "base",
        {"prompt-alignment": same, "textual-difference": [0.9] * 6},
        options={"textual-difference": {"target": "ground_truth"}},
    )
    # Against the question instead of the ground truth: lower scores that measure something else.
    cand = stored_run(
        store,
        "cand",
        {"prompt-alignment": same, "textual-difference": [0.2] * 6},
        options={"textual-difference": {"target": "input"}},
    )
    gate = evaluate_gate(side_from_run(store, base), side_from_run(store, cand))
    assert [g.scorer for g in gate.scorers] == ["prompt-alignment"]  # the one compared, unchanged: it passes
    assert gate.scorers[0].verdict is Verdict.PASS
    assert gate.verdict is Verdict.UNDECIDED  # never FAIL on a change of what was measured, never PASS either
    assert (
        "Not gated: textual-difference was scored with other options (target: 'ground_truth' against 'input', "
        "baseline against candidate), so its scores do not measure the same thing and the gate cannot pass."
    ) in gate.notes
    # The scorer is on both sides with results: never "only in" the candidate nor "no results" there.
    assert not any("only in" in note or "no results" in note for note in gate.notes)
    assert gate.headline() == (
        "UNDECIDED: textual-difference was scored with other options (target: 'ground_truth' against 'input', "
        "baseline against candidate)."
    )

    # Run vs run compares the same way: the scorer is set apart with the options that differ.
    diff = run_diff(store, base, cand)
    assert diff.scorers == ["prompt-alignment"]
    assert diff.scorers_unlike == {"textual-difference": ["target: 'ground_truth' against 'input'"]}
    assert set(diff.rows["scorer"]) == {"prompt-alignment"}

    alone = stored_run(
        store, "alone", {"textual-difference": [0.2] * 6}, options={"textual-difference": {"target": "input"}}
    )
    only_td = stored_run(
        store, "td", {"textual-difference": [0.9] * 6}, options={"textual-difference": {"target": "ground_truth"}}
    )
    with pytest.raises(ValueError, match=r"target: 'ground_truth' against 'input'.*nothing to gate"):
        evaluate_gate(side_from_run(store, only_td), side_from_run(store, alone))
    # The reason only (how the result is explained) does not change what the score measures.
    reason = stored_run(store, "reason", {"prompt-alignment": same}, options={"prompt-alignment": {"reason": "judge"}})
    assert evaluate_gate(side_from_run(store, base), side_from_run(store, reason)).scorers[0].verdict is Verdict.PASS


def test_results_files_carry_their_scorers_options_and_the_gate_refuses_other_options(db: str, tmp_path: Path):
    store = Store(db)
    # The same answers scored at scale 1 and at scale 10: 0.5 reads 5.0. Without the options in the
    # files, the gate saw a change of +4.5 (candidate 5.0 − baseline 0.5) and passed it.
    base = stored_run(store, "base", {"prompt-alignment": [0.5] * 8}, options={"prompt-alignment": {"scale": 1}})
    ten = stored_run(store, "ten", {"prompt-alignment": [5.0] * 8}, options={"prompt-alignment": {"scale": 10}})
    gt = stored_run(store, "gt", {TD: [0.9] * 8}, options={TD: {"target": "ground_truth"}})
    question = stored_run(store, "q", {TD: [0.2] * 8}, options={TD: {"target": "input"}})
    store.close()
    files = {}
    for run_id in (base, ten, gt, question):
        for suffix in ("jsonl", "parquet"):
            files[run_id, suffix] = path = tmp_path / f"{run_id}.{suffix}"
            assert cli("export", run_id, "--output", str(path), "--db", db)[0] == 0
    scale = r"prompt-alignment was scored with other options \(scale: 1 against 10, baseline against candidate\)"
    target = r"target: 'ground_truth' against 'input'"
    for suffix in ("jsonl", "parquet"):
        with pytest.raises(ValueError, match=scale + ": there is nothing to gate"):
            evaluate_gate(side_from_file(files[base, suffix]), side_from_file(files[ten, suffix]))
        with pytest.raises(ValueError, match=target):
            evaluate_gate(side_from_file(files[gt, suffix]), side_from_file(files[question, suffix]))
        code, _, err = cli(
            "gate", "--baseline", f"file:{files[base, suffix]}", "--candidate", f"file:{files[ten, suffix]}", "--db", db
        )
        assert code == 2 and "scale: 1 against 10" in err and "nothing to gate" in err
    # A stored run against a file, and a file written from run_evals' result (export_run): the same refusal.
    code, _, err = cli("gate", "--baseline", base, "--candidate", f"file:{files[ten, 'jsonl']}", "--db", db)
    assert code == 2 and "scale: 1 against 10" in err
    again = Store(db)
    _, items, result = load_run(again, ten)
    side = side_from_run(again, base)
    again.close()
    (tmp_path / "lib.jsonl").write_bytes(export_run(result, items, "jsonl"))
    with pytest.raises(ValueError, match=scale):
        evaluate_gate(side, side_from_file(tmp_path / "lib.jsonl"))
    # The same options on both sides: gated. d = 5.0 − 5.0 = 0 on 8 items: mean 0, pass.
    same = evaluate_gate(side_from_file(files[ten, "jsonl"]), side_from_file(files[ten, "parquet"]))
    assert same.scorers[0].mean_diff == 0 and same.verdict is Verdict.PASS

    # Every export format records them: the rows' scorer_options, the seeds' JSON's scorerOptions.
    rows = [json.loads(line) for line in files[gt, "jsonl"].read_text(encoding="utf-8").splitlines()]
    assert {json.dumps(r["scorer_options"]) for r in rows} == {'{"target": "ground_truth"}'}
    assert cli("export", gt, "--output", str(tmp_path / "gt.csv"), "--db", db)[0] == 0
    header, first = (tmp_path / "gt.csv").read_text(encoding="utf-8").splitlines()[:2]
    assert header.split(",")[4] == "scorer_options" and '"{""target"": ""ground_truth""}"' in first
    assert cli("export", gt, "--output", str(tmp_path / "gt.json"), "--db", db)[0] == 0
    doc = json.loads((tmp_path / "gt.json").read_text(encoding="utf-8"))
    assert doc["scorerOptions"] == {TD: {"target": "ground_truth"}}


def test_a_results_file_without_options_is_refused_unless_the_user_vouches_for_it(tmp_path: Path):
    store = Store(":memory:")
    base = stored_run(store, "base", {TD: [0.9] * 6 + [0.5] * 4})
    cand = stored_run(store, "cand", {TD: [0.6] * 6 + [0.5] * 4})
    paths = []
    for run_id in (base, cand):
        _, items, result = load_run(store, run_id)
        path = tmp_path / f"{run_id}.jsonl"
        # As exported before exports carried the options: no scorer_options column.
        rows = [json.loads(line) for line in export_run(result, items, "jsonl").decode().splitlines()]
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "scorer_options"}) + "\n" for r in rows))
        paths.append(str(path))
    old = f"file {Path(paths[0]).name} does not record the options textual-difference scored with: it was exported"
    with pytest.raises(ValueError, match=old):
        evaluate_gate(side_from_file(paths[0]), side_from_run(store, cand))
    both = f"file {Path(paths[0]).name} and file {Path(paths[1]).name} do not record the options textual-difference"
    with pytest.raises(ValueError, match=both):
        evaluate_gate(side_from_file(paths[0]), side_from_file(paths[1]))
    store.close()
    code, _, err = cli("gate", "--baseline", paths[0], "--candidate", paths[1], "--db", str(tmp_path / "none.db"))
    assert code == 2 and "--assume-same-options" in err and "Export the run again" in err
    # Vouched for: gated, and the summary says on what. d = −0.3 on 6 items and 0 on 4: mean −0.18, a regression.
    gate = evaluate_gate(side_from_file(paths[0]), side_from_file(paths[1]), GatePolicy(assume_same_options=True))
    assert gate.scorers[0].mean_diff == pytest.approx(-0.18) and gate.verdict is Verdict.FAIL
    assert (
        f"The options textual-difference scored with are not recorded on file {Path(paths[0]).name} and file "
        f"{Path(paths[1]).name}: assumed to be the same on both sides (--assume-same-options)."
    ) in gate.notes
    assert gate.to_dict()["policy"]["assume_same_options"] is True
    code, out, _ = cli(
        "gate", "--baseline", paths[0], "--candidate", paths[1], "--assume-same-options", "--db", str(tmp_path / "x.db")
    )
    assert code == 1 and "assumed to be the same on both sides" in out


def test_a_runs_junit_writes_its_mean_with_the_shared_formatter():
    from scorers import EvalRunResult, ItemOutcome, ScoreResult
    from scorers.analysis.junit import run_junit

    # One item scored 0.50005: at 4 decimals half away from zero, 0.5001 (f"{:.4f}" wrote 0.5000: the float is
    # 0.50004999999999999449...), as decimal_text writes every mean.
    outcome = ItemOutcome(0, "q0", TD, ScoreStatus.SCORED, ScoreResult(TD, 0.50005, "r", {}))
    xml = run_junit(EvalRunResult("run1", [outcome], "completed", 1, [TD], None), {}).decode("utf-8")
    assert "mean 0.5001 over 1 scored item(s)" in xml and "0.5000" not in xml


def test_a_python_api_run_records_its_scorers_options_and_the_gate_refuses_another_scale(
    fake_judge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # The judge's analysis: user mode (no system message) 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84;
    # at scale 10: 8.4. Before, a Python run recorded {} (the defaults) and the gate passed 0.840 → 8.400.
    fake_judge.responder = lambda body: Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0))
    monkeypatch.chdir(tmp_path)
    rows = [("q1", "Say hi in French", "Bonjour !"), ("q2", "Name a prime number", "7")]
    data = tmp_path / "small.csv"
    data.write_text("id,prompt,response\n" + "".join(f"{i},{p},{r}\n" for i, p, r in rows), encoding="utf-8")
    db = str(tmp_path / "gate.db")
    code, out, err = cli("run", str(data), "--scorer", "prompt-alignment", "--db", db, "--yes")
    assert code == 0, err
    cli_run = out.split("Run id: ", 1)[1].split()[0]
    items = [EvalItem(i, {"input": p, "output": r}) for i, p, r in rows]

    def api_run(scorer: object, name: str) -> Path:
        store = Store(db)
        try:
            result = run_evals(items, [scorer], store=store, concurrency=1)
        finally:
            store.close()
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(export_run(result, items, "jsonl"))
        return path

    ten = create_prompt_alignment_scorer(model="gpt-4o-mini", options={"scale": 10})
    path = api_run(ten, "ten")
    rows_out = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["score"] for r in rows_out] == [8.4, 8.4]
    recorded = {"scale": 10.0, "evaluation_mode": "both", "reason": "composed", "include_conversation_history": True}
    assert all(r["scorer_options"] == recorded for r in rows_out)
    store = Store(db)
    (api,) = [r for r in store.list_runs() if r["id"] != cli_run]
    assert recorded_scorer_options(store.get_run(api["id"])) == {"prompt-alignment": recorded}
    store.close()
    code, _, err = cli("gate", "--baseline", f"run:{cli_run}", "--candidate", f"file:{path}", "--db", db)
    assert code == 2 and "scale: 1.0 against 10.0" in err and "nothing to gate" in err
    code, _, err = cli("gate", "--baseline", cli_run, "--candidate", api["id"], "--db", db)
    assert code == 2 and "scale: 1.0 against 10.0" in err
    # The stored run's export says the same.
    assert cli("export", api["id"], "--output", str(tmp_path / "stored.jsonl"), "--db", db)[0] == 0
    stored_rows = (tmp_path / "stored.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.dumps(json.loads(r)["scorer_options"], sort_keys=True) for r in stored_rows} == {
        json.dumps(recorded, sort_keys=True)
    }

    # At the defaults, the Python run gates against the CLI run: 0.84 on both sides, d = 0, pass.
    path = api_run(create_prompt_alignment_scorer(model="gpt-4o-mini"), "defaults")
    code, out, err = cli("gate", "--baseline", f"run:{cli_run}", "--candidate", f"file:{path}", "--db", db)
    assert code == 0, err

    # A scorer of the caller's own class: its options are not known, never taken for the defaults.
    class Own:
        id = "prompt-alignment"
        name = "Prompt alignment"

        def run(self, payload: object) -> object:
            return ten.run(payload)

    path = api_run(Own(), "own")
    assert {json.loads(line)["scorer_options"] for line in path.read_text(encoding="utf-8").splitlines()} == {None}
    code, _, err = cli("gate", "--baseline", f"run:{cli_run}", "--candidate", f"file:{path}", "--db", db)
    assert code == 2 and "does not record the options prompt-alignment" in err and "--assume-same-options" in err
    code, out, err = cli(
        "gate", "--baseline", f"run:{cli_run}", "--candidate", f"file:{path}", "--db", db, "--assume-same-options"
    )
    assert code == 0 and "assumed to be the same on both sides" in out  # vouched for, wrongly: 0.84 → 8.4 passes
