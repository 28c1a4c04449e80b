"""The gate in the Compare page's Run vs run view: the same verdict and numbers as ``python -m scorers gate``."""

from __future__ import annotations

import io
from pathlib import Path

from test_gate import TD, TOX, stored_run

from scorers.cli import main
from scorers.runs.store import Store


def open_run_vs_run(open_page, baseline: str, candidate: str):
    at = open_page("compare")
    at.session_state["compare_tab"] = "3. Run vs run"  # built only while its tab is open
    at.run()
    at.selectbox(key="compare_diff_a").set_value(baseline).run()
    at.selectbox(key="compare_diff_b").set_value(candidate).run()
    assert not at.exception
    assert not [e for e in (*at.error, *at.success, *at.warning) if e.value.startswith("Gate verdict")]
    at.session_state["compare_diff_view"] = "CI gate"  # the gate is worked out only while its view is open
    at.run()
    assert not at.exception
    return at


def cli_summary(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["gate", *argv], stdout=out, stderr=io.StringIO())
    return code, out.getvalue()


def test_the_page_shows_the_clis_verdict_with_the_same_numbers(open_page, studio_db: Path):
    db = studio_db
    store = Store(db)
    # textual-difference 0.9 → 0.5 on 6 of 10 items: d = −0.4 there, 0 elsewhere, mean −0.24 → FAIL.
    # toxicity 0.2 → 0.1 on every item: d = −0.1, lower is better, so an improvement → PASS.
    base = stored_run(store, "base", {TD: [0.9] * 10, TOX: [0.2] * 10})
    cand = stored_run(store, "cand", {TD: [0.9] * 4 + [0.5] * 6, TOX: [0.1] * 10})
    store.close()
    at = open_run_vs_run(open_page, base, cand)
    verdicts = [e.value for e in at.error if e.value.startswith("Gate verdict")]
    assert verdicts == ["Gate verdict: FAIL: textual-difference got worse than the baseline allows."]
    shown = "\n".join(m.value for m in at.markdown)
    code, printed = cli_summary("--baseline", base, "--candidate", cand, "--db", str(db))
    assert code == 1
    # The CLI's summary without its heading is exactly what the page shows.
    assert printed.split("\n", 2)[2].strip() in shown
    assert "| -0.240 [" in shown  # the mean change −0.24 worked above
    # A minimum effect of 0.3 (> 0.24) makes it pass, as --min-effect 0.3 does.
    at.number_input(key=f"compare_gate_{base}_{cand}_min_effect").set_value(0.3).run()
    assert [s.value for s in at.success if s.value.startswith("Gate verdict")] == [
        "Gate verdict: PASS: no scorer regressed (2 compared)."
    ]
    assert cli_summary("--baseline", base, "--candidate", cand, "--min-effect", "0.3", "--db", str(db))[0] == 0
    # The same command for CI, as inline code (no syntax highlighter to load for one line).
    command = f"`python -m scorers gate --baseline {base} --candidate {cand} --min-effect 0.3`"
    assert command in [m.value for m in at.markdown]


def test_the_page_says_which_run_is_a_named_baseline_and_which_failed_a_gate(open_page, studio_db: Path):
    store = Store(studio_db)
    base = stored_run(store, "base", {TD: [0.9] * 10})
    cand = stored_run(store, "cand", {TD: [0.5] * 10})
    store.set_baseline("main", base)
    store.close()
    # d = −0.4 on every item: the CLI fails the candidate and records it.
    assert cli_summary("--baseline", "main", "--candidate", cand, "--db", str(studio_db))[0] == 1
    at = open_run_vs_run(open_page, base, cand)
    captions = [c.value for c in at.caption]
    assert "Run A is the named baseline 'main'." in captions
    assert any(c.startswith("Run B failed a CI gate against main on ") for c in captions)


def test_the_gates_settings_are_kept_while_the_rows_are_shown(open_page, studio_db: Path):
    store = Store(studio_db)
    base = stored_run(store, "base", {TD: [0.9] * 10})
    cand = stored_run(store, "cand", {TD: [0.5] * 10})
    store.close()
    at = open_run_vs_run(open_page, base, cand)
    effect = f"compare_gate_{base}_{cand}_min_effect"
    at.number_input(key=effect).set_value(0.5).run()  # 0.5 > the worsening 0.4: pass
    assert [s.value for s in at.success if s.value.startswith("Gate verdict")] == [
        "Gate verdict: PASS: no scorer regressed (1 compared)."
    ]
    at.session_state["compare_diff_view"] = "Row by row"
    at.run()
    assert effect not in [n.key for n in at.number_input]  # the gate is not drawn (nor worked out)
    assert "Outcomes compared" in [m.label for m in at.metric]
    at.session_state["compare_diff_view"] = "CI gate"
    at.run()
    assert at.number_input(key=effect).value == 0.5
    assert [s.value for s in at.success if s.value.startswith("Gate verdict")] == [
        "Gate verdict: PASS: no scorer regressed (1 compared)."
    ]
