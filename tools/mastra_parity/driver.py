"""Run Mastra's scorers (the pinned npm @mastra/evals) and ours on the same cases; print every difference.

Usage (see README.md): ``python tools/mastra_parity/driver.py [--only SCORER] [--verbose]``.

Every case is a run in Mastra's own shape (agent run input with v2 messages, output
messages), so our side also exercises the reading of Mastra's run shapes. The cases are
the sample data (``sample_data/examples.jsonl``), the IFEval rows the tests use
(``tests/data/ifeval_gpt4``) and the edge cases of issue #14.

A difference is *documented* when a rule below explains it and the rule's phrase is in
the scorer's catalogue notes (so deleting the note makes the difference undocumented
again). The exit code is 1 when any difference is undocumented, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from scorers.catalogue.metrics.completeness import covered_elements  # noqa: E402
from scorers.catalogue.metrics.tone_consistency import sentiment  # noqa: E402
from scorers.catalogue.registry import SCORERS, create_scorer  # noqa: E402
from scorers.core.errors import ScorerError  # noqa: E402
from scorers.core.judge import JudgeSettings  # noqa: E402
from tools.mastra_parity.judged import ScriptedJudge, judged_cases  # noqa: E402

CODE_SCORERS = ("completeness", "content-similarity", "keyword-coverage", "textual-difference", "tone-consistency")


# ----------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One run scored by both sides.

    ``options`` are Mastra's (camelCase; "default" = the factory called without options);
    ``ours`` are our scorer's options; ``ground_truth`` is given to our side only (the
    reference tone, which Mastra takes as an option).
    """

    id: str
    scorer: str
    run: dict[str, Any]
    options: Any = "default"
    ours: dict[str, Any] = field(default_factory=dict)
    ground_truth: str | None = None
    judged: bool = False
    labels: tuple[str, ...] = ()


def message(role: str, text: str | None = None, parts: list[dict] | None = None, i: int = 0) -> dict[str, Any]:
    """A Mastra v2 message (MastraDBMessage), as Mastra's createTestMessage builds it."""
    content: dict[str, Any] = {"format": 2, "parts": parts if parts is not None else [{"type": "text", "text": text}]}
    if text is not None:
        content["content"] = text
    return {"id": f"{role}-{i}", "role": role, "createdAt": "2025-01-01T00:00:00.000Z", "content": content}


def agent_run(inputs: list[str], output: list[dict] | str, system: str | None = None) -> dict[str, Any]:
    """Mastra's agent run: ``{input: {inputMessages, rememberedMessages, systemMessages, taggedSystemMessages}, output}``."""
    outputs = [message("assistant", output)] if isinstance(output, str) else output
    return {
        "input": {
            "inputMessages": [message("user", text, i=i) for i, text in enumerate(inputs)],
            "rememberedMessages": [],
            "systemMessages": [{"role": "system", "content": system}] if system else [],
            "taggedSystemMessages": {},
        },
        "output": outputs,
    }


def text_cases(prefix: str, prompt: str, response: str, reference: str | None) -> Iterator[Case]:
    """The code scorers on one prompt/response pair (and the tone against ``reference`` when given)."""
    run = agent_run([prompt], response)
    for scorer in CODE_SCORERS:
        yield Case(f"{prefix}/{scorer}", scorer, run)
    if reference:
        yield Case(f"{prefix}/tone-reference", "tone-consistency", run, {"referenceTone": reference}, {}, reference)


def invocation(name: str, state: str = "result", call_id: str | None = None) -> dict[str, Any]:
    inv: dict[str, Any] = {"state": state, "toolName": name, "args": {}}
    if call_id:
        inv["toolCallId"] = call_id
    if state == "result":
        inv["result"] = {"ok": True}
    return {"type": "tool-invocation", "toolInvocation": inv}


def edge_cases() -> Iterator[Case]:
    """The edge cases of issue #14, one or more per decision."""
    for i, (a, b) in enumerate(
        [("He ran home", "He runs home"), ("I can't go", "I cannot go"), ("Let's go", "Let us go")]
    ):
        yield Case(f"edge/completeness-{i}", "completeness", agent_run([a], b))
    yield Case("edge/completeness-two-inputs", "completeness", agent_run(["Hello", "world"], "hello, world"))
    yield Case("edge/keywords-tag", "keyword-coverage", agent_run(["Wrap <<Ocean>> carefully"], "wrap carefully"))
    yield Case("edge/keywords-maths", "keyword-coverage", agent_run(["x < y and z > w"], "x"))
    for name, output in (("feff", "a\ufeffb"), ("1c", "a\x1cb"), ("85", "a\x85b"), ("nbsp", "a\u00a0 b")):
        yield Case(f"edge/content-similarity-{name}", "content-similarity", agent_run(["ab"], output))
    spaced = agent_run(["  Hello\n\n World "], "HELLO  there")
    yield Case("edge/content-similarity-processed", "content-similarity", spaced)
    yield Case(
        "edge/content-similarity-two-inputs", "content-similarity", agent_run(["Hello", "world"], "hello, world")
    )
    yield Case("edge/content-similarity-empty-options", "content-similarity", spaced, {}, {})
    yield Case(
        "edge/content-similarity-keep-whitespace",
        "content-similarity",
        spaced,
        {"ignoreCase": True, "ignoreWhitespace": False},
        {"ignore_case": True, "ignore_whitespace": False},
    )
    yield Case("edge/content-similarity-emoji", "content-similarity", agent_run(["I like 🍕 a lot"], "I like 🍕 lots"))
    yield Case(
        "edge/tone-contraction",
        "tone-consistency",
        agent_run(["Will you go?"], "I won't go."),
        {"referenceTone": "I will not go."},
        {},
        "I will not go.",
    )
    yield Case(
        "edge/tone-empty-reference",
        "tone-consistency",
        agent_run(["?"], "I love it. It is bad."),
        {"referenceTone": ""},
        {},
        "",
    )
    yield Case(
        "edge/tone-hyphen", "tone-consistency", agent_run(["?"], "well-loved"), {"referenceTone": "table"}, {}, "table"
    )
    yield Case("edge/tone-tab", "tone-consistency", agent_run(["?"], "good\tbad. Great!"))
    yield Case("edge/tone-emoji", "tone-consistency", agent_run(["?"], "Lovely 😍. Awful."))
    yield from tool_cases()
    yield Case("edge/textual-two-inputs", "textual-difference", agent_run(["Hello", "world"], "hello, world"))
    yield Case("edge/textual-reordered", "textual-difference", agent_run(["b a"], "a b"))


def tool_cases() -> Iterator[Case]:
    """Tool-call accuracy (code): partial calls, names as given, order mode, tool-call infos."""
    partial = agent_run(
        ["Rain in Lisbon? Then book a taxi."],
        [
            message(
                "assistant",
                parts=[
                    invocation("weatherTool", call_id="c1"),
                    invocation("taxiTool", "partial-call", "c2"),
                    {"type": "text", "text": "It rains."},
                ],
            )
        ],
    )
    two_messages = agent_run(
        ["Search, then book."],
        [
            message("assistant", "Searching.", i=0),
            message("assistant", parts=[invocation("search"), invocation("book"), invocation("search")], i=1),
        ],
    )
    for tool in ("weatherTool", "taxiTool", " weatherTool "):
        yield Case(
            f"edge/tool-partial-{tool.strip()}{'-spaced' if tool != tool.strip() else ''}",
            "tool-call-accuracy-code",
            partial,
            {"expectedTool": tool},
            {"expected_tool": tool},
        )
    for name, options in (
        ("order", {"expectedToolOrder": ["search", "book"]}),
        ("order-strict", {"expectedToolOrder": ["search", "book"], "strictMode": True}),
        ("order-repeated", {"expectedToolOrder": ["book", "search"]}),
        ("tool-strict", {"expectedTool": "book", "strictMode": True}),
    ):
        ours = {
            "expected_tool": options.get("expectedTool"),
            "expected_tool_order": options.get("expectedToolOrder"),
            "strict_mode": options.get("strictMode", False),
        }
        yield Case(f"edge/tool-{name}", "tool-call-accuracy-code", two_messages, options, ours)


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for line in (ROOT / "sample_data" / "examples.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        cases += text_cases(f"sample/{row['id']}", row["prompt"], row["response"], row.get("ground_truth") or None)
    for path in sorted((ROOT / "tests" / "data" / "ifeval_gpt4").glob("*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            cases += text_cases(f"ifeval/{i}", row["prompt"], row["response"], None)
    cases += edge_cases()
    return cases


# ----------------------------------------------------------------------------- both sides


def run_mastra(cases: list[Case], judge_url: str) -> dict[str, dict[str, Any]]:
    """Mastra's results by case id, from ``node harness.mjs`` (LLM-judged scorers asking ``judge_url``)."""
    if not (HERE / "node_modules" / "@mastra" / "evals").is_dir():
        sys.exit(f"Mastra is not installed: run `npm install` in {HERE} first (see README.md).")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cases.jsonl"
        path.write_text(
            "".join(
                json.dumps({"id": c.id, "scorer": c.scorer, "options": c.options, "run": c.run}) + "\n" for c in cases
            ),
            encoding="utf-8",
        )
        done = subprocess.run(
            ["node", "harness.mjs", str(path)],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "MASTRA_JUDGE_URL": judge_url},
        )
    results = [
        json.loads(line) for line in done.stdout.split("\n") if line.startswith("{")
    ]  # not splitlines: \x85, \u2028
    return {r["id"]: r for r in results}


def run_ours(case: Case, settings: JudgeSettings) -> dict[str, Any]:
    payload = {**case.run, "ground_truth": case.ground_truth}
    try:
        result = create_scorer(case.scorer, case.ours, settings=settings if case.judged else None).run(payload)
    except ScorerError as exc:
        return {"error": str(exc)}
    return {"score": result.score, "analysis": result.analyze_step_result}


# ----------------------------------------------------------------------------- what is compared

# scorer -> (our analysis field, where Mastra has it: "preprocess" or "analysis", its field)
FIELDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "keyword-coverage": (
        ("totalKeywordsLength", "analysis", "totalKeywordsLength"),
        ("matchedKeywordsLength", "analysis", "matchedKeywordsLength"),
    ),
    "content-similarity": (
        ("processedInput", "preprocess", "processedInput"),
        ("processedOutput", "preprocess", "processedOutput"),
    ),
    "textual-difference": (
        ("ratio", "preprocess", "ratio"),
        ("lengthDiff", "preprocess", "lengthDiff"),
        ("confidence", "preprocess", "confidence"),
        ("changes", "preprocess", "changes"),
    ),
    "tool-call-accuracy-code": tuple(
        (name, "preprocess", name)
        for name in ("actualTools", "hasToolCalls", "correctToolCalled", "correctOrderCalled", "toolCallInfos")
    ),
}


def same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


@dataclass
class Difference:
    case: Case
    what: str
    ours: Any
    mastra: Any
    rule: str | None = None


def differences(case: Case, ours: dict[str, Any], mastra: dict[str, Any]) -> list[Difference]:
    if "error" in ours or "error" in mastra:
        if "error" in ours and "error" in mastra:
            return []
        return [
            Difference(case, "error", ours.get("error", ours.get("score")), mastra.get("error", mastra.get("score")))
        ]
    found = []
    if not same(ours["score"], mastra["score"]):
        found.append(Difference(case, "score", ours["score"], mastra["score"]))
    for ours_name, step, name in FIELDS.get(case.scorer, ()):
        theirs = (mastra.get(step) or {}).get(name)
        if not same(ours["analysis"].get(ours_name), theirs):
            found.append(Difference(case, ours_name, ours["analysis"].get(ours_name), theirs))
    return found


# ----------------------------------------------------------------------------- documented deviations

Rule = Callable[[Difference, dict[str, Any]], bool]


def _coverage(input_elements: list[str], output_elements: list[str]) -> float:
    if not input_elements:
        return 1.0 if not output_elements else 0.0
    return sum(covered_elements(input_elements, output_elements)) / len(input_elements)


def completeness_tagging(d: Difference, mastra: dict[str, Any]) -> bool:
    """Our coverage rule on Mastra's own element lists gives Mastra's score: only the elements differ."""
    pre = mastra["preprocess"]
    return d.what == "score" and same(_coverage(pre["inputElements"], pre["outputElements"]), mastra["score"])


def keyword_extraction(d: Difference, mastra: dict[str, Any]) -> bool:
    """Our formula on Mastra's own keyword sets gives Mastra's score and counts: only the keywords differ."""
    reference, response = mastra["preprocess"]["referenceKeywords"], mastra["preprocess"]["responseKeywords"]
    matched = len(set(reference) & set(response))
    expected = {"score": matched / len(reference) if reference else 1.0, "totalKeywordsLength": len(reference)}
    expected["matchedKeywordsLength"] = matched
    return d.what in expected and same(expected[d.what], d.mastra)


def _texts(d: Difference) -> str:
    run = d.case.run
    parts = [m["content"].get("content") or "" for m in run["input"]["inputMessages"] + run["output"]]
    return " ".join(parts)


def outside_bmp(d: Difference, mastra: dict[str, Any]) -> bool:
    """A character outside the BMP is 2 UTF-16 units in JavaScript, 1 code point here."""
    return any(ord(ch) > 0xFFFF for ch in _texts(d))


def empty_options(d: Difference, mastra: dict[str, Any]) -> bool:
    return d.case.options == {}


def whitespace_kept(d: Difference, mastra: dict[str, Any]) -> bool:
    return isinstance(d.case.options, dict) and d.case.options.get("ignoreWhitespace") is False


_MASTRA_SENTENCES = re.compile(r"[^.!?]+[.!?]+")


def tone_sentences(d: Difference, mastra: dict[str, Any]) -> bool:
    """Stability mode: Mastra's sentence regex with our sentiment gives Mastra's score (only the split differs)."""
    if d.case.ground_truth or d.what != "score":
        return False
    text = ", ".join(m["content"].get("content") or "" for m in d.case.run["output"])
    values = [sentiment(s).comparative for s in (_MASTRA_SENTENCES.findall(text) or [text])]
    mean = sum(values) / len(values)
    return same(max(0.0, 1 - sum((v - mean) ** 2 for v in values) / len(values)), mastra["score"])


def blank_reference_in_a_run(d: Difference, mastra: dict[str, Any]) -> bool:
    """A blank reference: the catalogue's scorer (a run carrying a reference) does not score the row."""
    return d.case.ground_truth == "" and d.what == "error" and "blank in this row: not scored" in str(d.ours)


def emoji(d: Difference, mastra: dict[str, Any]) -> bool:
    """The npm sentiment package scores emoji; ours does not."""
    return any(unicodedata.category(ch) == "So" for ch in _texts(d))


def blank_line_join(d: Difference, mastra: dict[str, Any]) -> bool:
    """Several input messages: ours joins them by a blank line (the exports' input), Mastra by ", "."""
    return len(d.case.run["input"]["inputMessages"]) > 1


def textual_score(d: Difference, mastra: dict[str, Any]) -> bool:
    """Our score is Mastra's ratio × confidence (the seeds' formula)."""
    pre = mastra["preprocess"]
    return d.what == "score" and same(d.ours, pre["ratio"] * pre["confidence"])


def textual_changes(d: Difference, mastra: dict[str, Any]) -> bool:
    return d.what == "changes"


def repeated_tools(d: Difference, mastra: dict[str, Any]) -> bool:
    """Order mode over calls that repeat a tool: ours is a subsequence test, Mastra looks at first calls only."""
    tools = mastra["preprocess"]["actualTools"]
    return d.case.options.get("expectedToolOrder") is not None and len(set(tools)) < len(tools)


def _share(labels: tuple[str, ...], counts: Callable[[str], bool]) -> float:
    return round(sum(map(counts, labels)) / len(labels), 2) if labels else 0.0


def exact_yes(d: Difference, mastra: dict[str, Any]) -> bool:
    """Labels with spaces or capitals: Mastra's score is its formula with ``verdict === 'yes'``."""
    return d.what == "score" and same(_share(d.case.labels, lambda label: label == "yes"), d.mastra)


def lowercase_untrimmed(d: Difference, mastra: dict[str, Any]) -> bool:
    """Labels with spaces: Mastra's score is its formula with ``verdict.toLowerCase() === 'yes'``."""
    return d.what == "score" and same(_share(d.case.labels, lambda label: label.lower() == "yes"), d.mastra)


def other_label(d: Difference, mastra: dict[str, Any]) -> bool:
    """A label other than yes/no is invalid judge output here; Mastra counts it as not yes."""
    others = [label for label in d.case.labels if label.strip().lower() not in ("yes", "no")]
    return d.what == "error" and "not valid" in str(d.ours) and bool(others)


def no_remarks(d: Difference, mastra: dict[str, Any]) -> bool:
    """No remark found: ours 0, Mastra 1."""
    return not d.case.labels and d.ours == 0 and d.mastra == 1


IMPACT_WEIGHTS = {"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1}  # Mastra's


def threshold_gap(d: Difference, mastra: dict[str, Any]) -> bool:
    """The judge's robustness and the mean impact weight are exactly 0.2 apart on paper: Mastra's float
    gap reads more than 0.2 and takes the lower; ours, with a tolerance, keeps the judge's."""
    analysis = mastra["analysis"]
    calculated = sum(IMPACT_WEIGHTS[x["impactLevel"]] for x in analysis["dimensions"]) / len(analysis["dimensions"])
    robustness, penalty = analysis["robustnessScore"], min(0.1 * len(analysis["majorIssues"]), 0.3)
    return (
        d.what == "score"
        and math.isclose(abs(robustness - calculated), 0.2, abs_tol=1e-9)
        and same(d.mastra, round(max(0.0, min(robustness, calculated) - penalty), 2))
        and same(d.ours, round(max(0.0, robustness - penalty), 2))
    )


def both_mode_system_only(d: Difference, mastra: dict[str, Any]) -> bool:
    """Both mode with no user message: ours scores it in system mode, Mastra judges an empty user prompt."""
    run = d.case.run
    return d.case.options.get("evaluationMode") == "both" and not run["input"]["inputMessages"]


# scorer -> [(rule, the phrase its notes must contain)]
RULES: dict[str, list[tuple[Rule, str]]] = {
    "completeness": [(completeness_tagging, "part-of-speech tagging")],
    "keyword-coverage": [(keyword_extraction, "stopword list")],
    "content-similarity": [
        (outside_bmp, "UTF-16"),
        (empty_options, "empty options object"),
        (whitespace_kept, "ignore_whitespace=false"),
        (blank_line_join, "joined by a blank line"),
    ],
    "tone-consistency": [
        (tone_sentences, "pysbd"),
        (emoji, "emoji"),
        (blank_reference_in_a_run, "a blank reference in a row is not scored"),
    ],
    "textual-difference": [
        (textual_score, "ratio × confidence"),
        (textual_changes, "changes counts word-level"),
        (outside_bmp, "UTF-16"),
        (blank_line_join, "joined by a blank line"),
    ],
    "tool-call-accuracy-code": [(repeated_tools, "subsequence")],
    "faithfulness": [(exact_yes, "compares === 'yes' exactly")],
    "hallucination": [(exact_yes, "compares === 'yes' exactly")],
    "bias": [(lowercase_untrimmed, "lower-cases without trimming"), (other_label, "counts any other label")],
    "toxicity": [(no_remarks, "Mastra gives 1"), (other_label, "counts any other label")],
    "context-precision": [(other_label, "such as idk")],
    "noise-sensitivity": [(threshold_gap, "0.20000000000000007")],
    "prompt-alignment": [(both_mode_system_only, "both mode with only a system prompt")],
}


def explain(d: Difference, mastra: dict[str, Any]) -> str | None:
    """The name of the documented rule that explains ``d``, or None."""
    if "error" in mastra:
        return None
    notes = SCORERS[d.case.scorer].notes
    for rule, phrase in RULES.get(d.case.scorer, ()):
        if phrase in notes and rule(d, mastra):
            return f"{rule.__name__} (notes: “{phrase}”)"
    return None


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one scorer id")
    parser.add_argument("--verbose", action="store_true", help="print documented differences too")
    args = parser.parse_args(argv)
    judged = judged_cases()
    cases = all_cases() + [
        Case(c.id, c.scorer, c.run, c.options, c.our_options, c.run.get("groundTruth"), judged=True, labels=c.labels)
        for c in judged
    ]
    cases = [c for c in cases if not args.only or c.scorer == args.only]
    judge = ScriptedJudge(judged).start()
    try:
        mastra = run_mastra(cases, judge.base_url)
        settings = JudgeSettings(model="openai/gpt-4o-mini", base_url=judge.base_url, api_key="test-key", max_retries=0)
        ours = {case.id: run_ours(case, settings) for case in cases}
    finally:
        judge.close()
    for problem in judge.unscripted:
        print(f"SCRIPT GAP: {problem}")
    found: list[Difference] = []
    for case in cases:
        for d in differences(case, ours[case.id], mastra[case.id]):
            d.rule = explain(d, mastra[case.id])
            found.append(d)
    undocumented = [d for d in found if d.rule is None]
    for d in found:
        if d.rule is None or args.verbose:
            status = "UNDOCUMENTED" if d.rule is None else f"documented: {d.rule}"
            print(f"{d.case.id} [{d.case.scorer}] {d.what}: ours {d.ours!r:.120} | Mastra {d.mastra!r:.120} — {status}")
    per_scorer = Counter(c.scorer for c in cases)
    documented = Counter(d.case.scorer for d in found if d.rule)
    print(
        f"\n{len(cases)} cases; {len(found)} differences, {len(found) - len(undocumented)} documented, "
        f"{len(undocumented)} undocumented."
    )
    for scorer, n in sorted(per_scorer.items()):
        print(
            f"  {scorer}: {n} cases, {documented[scorer]} documented differences, "
            f"{sum(d.case.scorer == scorer for d in undocumented)} undocumented"
        )
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
