"""HTML reports: self-contained (Plotly inlined once, nothing external), escaped, no secrets; the CLI command.

No judge is needed: the runs are scored with code-based scorers.
"""

from __future__ import annotations

import io
from html.parser import HTMLParser

import pandas as pd
import plotly.graph_objects as go
import pytest
from judge_data import resumed_with_another_judge

from scorers import Store, create_content_similarity_scorer, create_textual_difference_scorer, run_evals
from scorers.analysis.generate import items_from_responses
from scorers.analysis.report import (
    CONTENT_SECURITY_POLICY,
    MAX_CELL_CHARS,
    build_report,
    comparison_report,
    redact_setup,
    run_comparison_report,
    run_report,
)
from scorers.cli import main
from scorers.runs.export import results_frame

XSS = '<script>window.__pwned = 1</script><img src="http://example.com/x.png">'


class Tags(HTMLParser):
    """Every start tag with its attributes (script and style bodies are not parsed as tags)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(document: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(document)
    return parser.tags


def assert_self_contained(document: str) -> None:
    tags = tags_of(document)
    for tag, attrs in tags:
        for name in ("src", "href", "srcset", "action", "poster", "data", "background"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//", "ftp:")), f"<{tag} {name}={value!r}>"
        assert not (tag == "script" and "src" in attrs), "a script is loaded from a file or URL"
        assert tag != "link", "a <link> loads a stylesheet, font or icon"
        assert tag not in ("img", "iframe", "object", "embed"), f"<{tag}> in the report"
    assert "@import" not in document and "@font-face" not in document
    assert "url(http" not in document.replace(" ", "")


def simple_figure(name: str) -> go.Figure:
    return go.Figure(go.Bar(x=["a", "b"], y=[1, 2], name=name))


def test_build_report_inlines_plotly_once_and_loads_nothing():
    rows = pd.DataFrame({"row_id": ["r1"], "input": [XSS], "score": [0.5]})
    document = build_report(
        title="T <b>",
        setup={"dataset": "d.csv"},
        leaderboard=None,
        figures=[simple_figure("one"), simple_figure("two"), simple_figure("three")],
        rows=rows,
        notes=["Variant A & B"],
    )
    assert document.startswith("<!DOCTYPE html>")
    assert document.count("* plotly.js v") == 1  # the library's banner: inlined once
    assert document.count("Plotly.newPlot(") == 3
    assert CONTENT_SECURITY_POLICY.replace("'", "&#x27;") in document
    assert_self_contained(document)
    assert "<title>T &lt;b&gt;</title>" in document
    assert "Variant A &amp; B" in document
    assert (
        "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img src=&quot;http://example.com/x.png&quot;&gt;"
        in document
    )
    assert XSS not in document


def test_no_figure_no_plotly_and_long_cells_are_cut():
    rows = pd.DataFrame({"output": ["x" * (MAX_CELL_CHARS + 10)]})
    document = build_report(title="T", setup={}, leaderboard=pd.DataFrame(), figures=[], rows=rows)
    assert "plotly.js" not in document
    assert "10 more characters" in document
    assert "Nothing was scored." in document


def test_setup_never_shows_a_key():
    setup = {
        "judge": {"model": "gpt-4o-mini", "api_key": "sk-abc123", "apiKey": "k2", "temperature": 0},
        "variants": [{"name": "A", "OPENAI_API_KEY": "k3"}],
        "token": "t",
        "prompt_tokens": 12,
        "stray": "sk-proj-xyz",
    }
    assert redact_setup(setup) == {
        "judge": {"model": "gpt-4o-mini", "temperature": 0},
        "variants": [{"name": "A"}],
        "prompt_tokens": 12,
    }
    document = build_report(title="T", setup=setup, leaderboard=None, figures=[], rows=pd.DataFrame())
    assert "sk-abc123" not in document and "sk-proj-xyz" not in document
    assert ">k2<" not in document and ">k3<" not in document
    assert "gpt-4o-mini" in document


# ---- run and comparison reports ---------------------------------------------------------------------------


def comparison_run(store: Store) -> str:
    frame = pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(8)],
            "question": [f"What is {i} + {i}?" for i in range(8)],
            "answer": [str(2 * i) for i in range(8)],
            "terse": [str(2 * i) for i in range(8)],
            "chatty": [f"Well, {i} + {i} is {2 * i}." if i % 2 else XSS for i in range(8)],
        }
    )
    items = items_from_responses(
        frame,
        input_col="question",
        response_cols={"terse": "terse", "chatty": "chatty"},
        id_col="id",
        ground_truth_col="answer",
    )
    result = run_evals(
        items,
        [create_textual_difference_scorer(), create_content_similarity_scorer()],
        store=store,
        dataset_name="arithmetic.csv",
        run_name="terse vs chatty",
    )
    return result.run_id


def test_run_report_of_a_comparison_run(tmp_path):
    store = Store(tmp_path / "r.db")
    run_id = comparison_run(store)
    document = run_report(store, run_id)
    assert_self_contained(document)
    assert document.count("* plotly.js v") == 1
    assert "Run report: terse vs chatty" in document
    assert "arithmetic.csv" in document
    # terse answers equal the ground truth (textual difference 1) on all 8; chatty never does.
    assert "Variant terse scored higher than chatty on 8 of 8 questions and lower on 0 (no ties)" in document
    assert "What is 3 + 3?" in document and "Well, 3 + 3 is 6." in document
    assert "&lt;script&gt;window.__pwned" in document and XSS not in document
    store.close()


def test_run_report_of_a_plain_run_lists_failures(tmp_path):
    store = Store(tmp_path / "r.db")
    items = [
        {"id": "a", "input": "Say hi", "output": "hi", "groundTruth": "hi"},
        {"id": "b", "input": "Say bye", "output": None},
    ]
    result = run_evals(items, [create_textual_difference_scorer()], store=store, run_name="plain")
    document = run_report(store, result.run_id)
    assert_self_contained(document)
    assert "1 of 2 outcomes were not scored (1 Invalid input)" in document
    assert "invalid_input" in document
    # The leaderboard heads that count as the CLI and Compare do: outcomes not scored (not only judge failures).
    assert "<th>n_not_scored</th>" in document and "n_failed" not in document
    with pytest.raises(KeyError):
        run_report(store, "missing")
    with store.transaction() as db:  # the status in words (the run ended: finish_run records only a running one)
        db.execute(
            "UPDATE runs SET status = ?, stop_reason = ? WHERE id = ?",
            ("budget_reached", "Stopped at the budget.", result.run_id),
        )
    document = run_report(store, result.run_id)
    assert "Paused at the budget cap (the next judge call could have passed it)" in document
    assert "budget_reached" not in document
    store.close()


def test_comparison_report_needs_two_variants(tmp_path):
    store = Store(tmp_path / "r.db")
    run_id = comparison_run(store)
    from scorers.runs.runner import load_run

    _, items, result = load_run(store, run_id)
    frame = results_frame(result, items)
    document = comparison_report(
        frame,
        a="chatty",
        b="terse",
        scorers=["textual-difference"],
        costs={"terse": 0.5, "chatty": None},
        setup={"api_key": "sk-zzz", "model": "m"},
    )
    assert "Variant chatty scored higher than terse on 0 of 8" in document
    assert "$0.50" in document and "sk-zzz" not in document
    # The variants' costs are what generating their responses cost (no judging): the header says so. One figure
    # per variant, so not on the leaderboard's rows (one per variant × scorer, where it would add up to a multiple)
    # but in a table of its own, one row per variant.
    board = document.split('id="leaderboard"')[1].split("</table>")[0]
    assert "cost" not in board
    costs = document.split("Generation cost per variant (judging not included)")[1].split("</table>")[0]
    assert "<th>generation cost of the variant (USD)</th>" in costs
    rows = [r for r in costs.split("<tr>") if '<div class="text">' in r]
    assert len(rows) == 2
    assert '<td class="num">$0.50</td>' in next(r for r in rows if '<div class="text">terse</div>' in r)
    assert '<td class="missing">–</td>' in next(r for r in rows if '<div class="text">chatty</div>' in r)
    # Without generation costs there is no cost column nor table (an empty "cost_usd" read as a judging cost unknown).
    plain = comparison_report(frame, a="chatty", b="terse", scorers=["textual-difference"])
    assert "cost" not in plain.split('id="leaderboard"')[1].split("</table>")[0]
    assert "Generation cost per variant" not in plain
    with pytest.raises(ValueError, match="two variants"):
        comparison_report(frame[frame["group:variant"] == "terse"])
    store.close()


def test_run_comparison_report_and_the_cli(tmp_path):
    db = tmp_path / "cli.db"
    store = Store(db)
    base = run_evals(
        [
            {"id": "a", "input": "Say hi", "output": "hello", "groundTruth": "hi"},
            {"id": "b", "input": "Say bye", "output": "bye", "groundTruth": "bye"},
        ],
        [create_textual_difference_scorer()],
        store=store,
        run_name="baseline",
    ).run_id
    new = run_evals(
        [
            {"id": "a", "input": "Say hi", "output": "hi", "groundTruth": "hi"},
            {"id": "c", "input": "Say yo", "output": "yo", "groundTruth": "yo"},
        ],
        [create_textual_difference_scorer()],
        store=store,
        run_name="candidate",
    ).run_id
    document = run_comparison_report(store, new, base)
    assert "Run comparison: candidate against baseline" in document
    assert "The runs are not over the same dataset" in document
    assert_self_contained(document)
    store.close()

    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "report.html"
    code = main(["report", new, "--compare-with", base, "--output", str(path), "--db", str(db)], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert "Wrote the report" in out.getvalue()
    assert "candidate against baseline" in path.read_text(encoding="utf-8")
    code = main(["report", base, "-o", str(tmp_path / "one.html"), "--db", str(db)], stdout=out, stderr=err)
    assert code == 0 and "Run report: baseline" in (tmp_path / "one.html").read_text(encoding="utf-8")
    code = main(["report", "nope", "-o", str(tmp_path / "x.html"), "--db", str(db)], stdout=out, stderr=err)
    assert code == 2 and "no run with id 'nope'" in err.getvalue()


def test_run_report_names_every_judge_and_prices_each_outcome_at_its_judge(tmp_path):
    store = Store(tmp_path / "r.db")
    document = run_report(store, resumed_with_another_judge(store))
    assert_self_contained(document)
    # Outcomes a judge was asked for: gpt-4o-mini items 0 and 1, fake-judge item 2 (item 3 is a missing input).
    assert (
        "gpt-4o-mini at https://api.openai.com/v1 (2 outcomes), fake-judge at http://127.0.0.1:9/v1 (1 outcome)"
        in document
    )
    assert "fake-judge at http://127.0.0.1:9/v1</span>" in document  # started with
    # gpt-4o-mini at its list price, $0.15 per 1M prompt and $0.60 per 1M completion tokens:
    # 1,000,000 × 0.15 / 1M + 100,000 × 0.60 / 1M = 0.15 + 0.06 = $0.21; fake-judge has no price.
    assert "$0.21 + unknown for 1 outcome judged by fake-judge (no list price, and no price set for it)" in document
    # The code scorer asked no judge: it cost nothing.
    board = document.split('id="leaderboard"')[1].split("</table>")[0]
    assert "<th>judge cost (USD)</th>" in board and "cost_usd" not in board
    row = next(r for r in board.split("<tr>") if "textual-difference" in r)
    assert '<td class="num">$0.00</td>' in row
    store.close()
