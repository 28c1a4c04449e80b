"""The LLM-judged scorers of the parity check: cases, the scripted judge both sides talk to, the rules.

Both implementations call a fake OpenAI-compatible server on 127.0.0.1 (``tests/fake_openai.py``).
Mastra asks 2-3 questions per run (extract, analyze, reason), each with its own JSON schema;
ours asks one. Each case carries one verdict set and two scripts that say the same thing: the
replies Mastra gets, keyed by the property names of the schema its request asks for, and the
single reply ours gets. A request is matched to its case by the marker ``[case-N]`` that every
case puts in its user message and response. Mastra streams (``stream: true``), ours does not:
:class:`ScriptedJudge` answers a streamed request as server-sent events.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from fake_openai import FakeOpenAI, RecordedRequest, Reply  # noqa: E402

MARKER = re.compile(r"\[case-(\d+)\]")
REASON = "The score is as the verdicts say."


@dataclass
class JudgedCase:
    """One run of an LLM-judged scorer with one verdict set.

    ``mastra`` maps comma-joined property names to the JSON reply for the Mastra step
    whose schema has them all (the first such entry); ``ours`` is the reply to our single call. ``options``
    are Mastra's (camelCase, without ``model``); ``our_options`` ours.
    """

    id: str
    scorer: str
    run: dict[str, Any]
    mastra: dict[str, Any]
    ours: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    our_options: dict[str, Any] = field(default_factory=dict)
    number: int = 0
    labels: tuple[str, ...] = ()


def _sse(text: str, model: str) -> str:
    """A chat completion as OpenAI streams it: one content chunk, a finish chunk, [DONE]."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


class ScriptedJudge(FakeOpenAI):
    """FakeOpenAI answering every case's requests from its scripts, streamed or not."""

    def __init__(self, cases: list[JudgedCase]):
        super().__init__(responder=self._answer)
        self.cases = {c.number: c for c in cases}
        self.unscripted: list[str] = []

    def _answer(self, body: dict[str, Any]) -> Reply:
        text = json.dumps(body["messages"])
        found = MARKER.search(text)
        if not found and body.get("stream") and not body.get("response_format"):
            return Reply.content(REASON)  # Mastra's reason step may quote nothing of the case; it sets no score
        if not found:
            self.unscripted.append(f"no case marker in: {text[:200]!r}")
            return Reply.error(400, "no case marker")
        case = self.cases[int(found.group(1))]
        fmt = body.get("response_format") or {}
        if not body.get("stream"):
            return Reply.json(case.ours)
        if fmt.get("type") != "json_schema":
            return Reply.content(REASON)
        asked = set(fmt["json_schema"]["schema"]["properties"])
        for key, reply in case.mastra.items():
            if set(key.split(",")) <= asked:
                return Reply.json(reply)
        self.unscripted.append(f"{case.id}: Mastra asked for {sorted(asked)}, not scripted")
        return Reply.error(400, "no script for this schema")

    def _chat(self, record: RecordedRequest) -> Reply:
        body = record.body
        if isinstance(body, dict) and body.get("stream"):
            reply = self._answer(body)
            if reply.kind != "completion":
                return reply
            return Reply.raw(200, _sse(reply.text or "", body.get("model", "")), content_type="text/event-stream")
        return super()._chat(record)


# ----------------------------------------------------------------------------- cases


def _message(role: str, text: str, i: int = 0) -> dict[str, Any]:
    return {
        "id": f"{role}-{i}",
        "role": role,
        "createdAt": "2025-01-01T00:00:00.000Z",
        "content": {"format": 2, "parts": [{"type": "text", "text": text}], "content": text},
    }


def _run(n: int, question: str | None, answer: str, system: str | None = None) -> dict[str, Any]:
    tag = f" [case-{n}]"
    return {
        "input": {
            "inputMessages": [_message("user", question + tag)] if question is not None else [],
            "rememberedMessages": [],
            "systemMessages": [{"role": "system", "content": system + tag}] if system else [],
            "taggedSystemMessages": {},
        },
        "output": [_message("assistant", answer + tag)],
    }


def _items(labels: list[str], **fields: Any) -> list[dict[str, Any]]:
    """One item per label: ``{name: value(i) or value, verdict-field: label, reason}``."""
    out = []
    for i, label in enumerate(labels, 1):
        item = {k: (v(i) if callable(v) else v) for k, v in fields.items()}
        out.append({**item, "reason": f"because {i}", "verdictField": label})
    return out


def _rename(items: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [{(name if k == "verdictField" else k): v for k, v in item.items()} for item in items]


def verdict_replies(scorer: str, labels: list[str], n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Mastra's replies by schema key, our reply) carrying the same per-item labels.

    Mastra's extracted items carry case ``n``'s marker: its analyze prompt quotes them, not the run.
    """
    tag = f" [case-{n}]"
    claim = lambda i: f"claim {i}{tag}"  # noqa: E731
    if scorer in ("faithfulness", "hallucination"):
        claims = [claim(i) for i in range(1, len(labels) + 1)]
        key = "claim" if scorer == "faithfulness" else "statement"
        analyzed = _rename(_items(labels, **{key: claim}), "verdict")
        ours = {"claims": _rename(_items(labels, claim=claim), "verdict")}
        return {"claims": {"claims": claims}, "verdicts": {"verdicts": analyzed}}, ours
    if scorer == "answer-relevancy":
        statements = [f"statement {i}{tag}" for i in range(1, len(labels) + 1)]
        results = _rename(_items(labels), "result")
        ours = {"statements": _rename(_items(labels, statement=lambda i: f"statement {i}"), "verdict")}
        return {"statements": {"statements": statements}, "results": {"results": results}}, ours
    if scorer == "bias":
        opinions = [f"opinion {i}{tag}" for i in range(1, len(labels) + 1)]
        results = _rename(_items(labels), "result")
        ours = {
            "opinions": [
                {**item, "kind": "political" if item["verdict"].strip().lower() == "yes" else "none"}
                for item in _rename(_items(labels, opinion=lambda i: f"opinion {i}"), "verdict")
            ]
        }
        return {"opinions": {"opinions": opinions}, "results": {"results": results}}, ours
    if scorer == "toxicity":
        mastra = {"verdicts": {"verdicts": _rename(_items(labels), "verdict")}}
        ours_items = _items(labels, source="response", statement=lambda i: f"remark {i}")
        return mastra, {"verdicts": _rename(ours_items, "verdict")}
    if scorer == "context-precision":
        mastra_items = _rename(_items(labels, context_index=lambda i: i - 1), "verdict")
        return {"verdicts": {"verdicts": mastra_items}}, {
            "verdicts": _rename(_items(labels, index=lambda i: i), "verdict")
        }
    raise ValueError(scorer)


# Verdict sets per verdict-list scorer (labels as the judge writes them).
VERDICT_SETS: list[list[str]] = [
    ["yes", "yes", "no"],
    ["no", "no"],
    ["yes"],
    ["no", "yes", "no", "yes"],
    ["unsure", "yes", "no"],
    [],
    # JSON-mode fallback: our structured output constrains the labels; without it a judge may write these
    [" Yes", "yes", "NO"],
    ["Yes ", "no"],
]
CONTEXT = ["Paris is the capital of France.", "The Seine flows through Paris.", "Lyon is in France.", "Cats purr."]


def _verdict_cases(start: int) -> list[JudgedCase]:
    cases = []
    n = start
    for scorer in ("faithfulness", "hallucination", "answer-relevancy", "bias", "toxicity", "context-precision"):
        for labels in VERDICT_SETS:
            if scorer == "hallucination" and "unsure" in labels:
                labels = [lab if lab != "unsure" else "no" for lab in labels]
            if scorer == "context-precision" and not labels:
                continue  # our schema asks for one verdict per piece
            if scorer == "context-precision":
                labels = (labels + ["no"] * 4)[:4] if len(labels) < 4 else labels[:4]
            mastra, ours = verdict_replies(scorer, labels, n)
            options: dict[str, Any] = {}
            our_options: dict[str, Any] = {}
            if scorer in ("faithfulness", "hallucination", "context-precision"):
                # the marker in the context too: with no claims, Mastra's analyze prompt quotes only the context
                context = [*CONTEXT[:-1], f"{CONTEXT[-1]} [case-{n}]"]
                options = {"context": context}
                our_options = {"context": context}
            label = "-".join(lab.strip().replace(" ", "_") or "_" for lab in labels) or "none"
            run = _run(n, "Tell me about Paris.", "Paris is the capital of France and the Seine flows through it.")
            cases.append(
                JudgedCase(f"llm/{scorer}/{label}", scorer, run, mastra, ours, options, our_options, n, tuple(labels))
            )
            n += 1
    return cases


NOISE_DIMENSIONS = ("contentAccuracy", "completeness", "relevance", "consistency", "hallucinationResistance")
# (impact levels of the 5 dimensions, the judge's robustness score, major issues)
NOISE_SETS: list[tuple[list[str], float, list[str]]] = [
    (["moderate"] * 5, 0.8, []),  # gap 0.8 - 0.6 = exactly the 0.2 threshold on paper
    (["none"] * 5, 1.0, []),
    (["minimal", "moderate", "none", "none", "severe"], 0.9, ["drops the unit"]),  # mean 0.71, gap 0.19
    (["significant"] * 5, 0.9, ["a", "b", "c", "d"]),  # mean 0.3, gap 0.6: min, minus capped penalty
    (["minimal"] * 5, 0.5, []),  # gap 0.35: the lower (0.5)
]


def _noise_cases(n: int) -> list[JudgedCase]:
    cases = []
    for levels, robustness, majors in NOISE_SETS:
        dims = [
            {"dimension": d, "impactLevel": lvl, "specificChanges": "c", "noiseInfluence": "i"}
            for d, lvl in zip(NOISE_DIMENSIONS, levels, strict=True)
        ]
        common = {"majorIssues": majors, "robustnessScore": robustness, "overallAssessment": f"ok [case-{n}]"}
        mastra = {"dimensions": {"dimensions": dims, "minorIssues": [], **common}}
        ours = {"dimensions": {d.pop("dimension"): d for d in [dict(x) for x in dims]}, **common}
        baseline, noisy = "Water boils at 100 °C at sea level.", "Boiling point of water? I read it is 90 °C."
        options = {"baselineResponse": baseline, "noisyQuery": noisy, "noiseType": "misinformation"}
        our_options = {"baseline_response": baseline, "noisy_query": noisy, "noise_type": "misinformation"}
        run = _run(n, "What is the boiling point of water at sea level?", "It is 100 °C at sea level.")
        label = f"{'-'.join(levels)}/{robustness}/{len(majors)}-major"
        cases.append(
            JudgedCase(
                f"llm/noise-sensitivity/{label}", "noise-sensitivity", run, mastra, ours, options, our_options, n
            )
        )
        n += 1
    return cases


def _dimension_set(intent: float, requirements: float, completeness: float, appropriateness: float) -> dict:
    return {
        "intentAlignment": {"score": intent, "primaryIntent": "factorial", "isAddressed": True, "reasoning": "r"},
        "requirementsFulfillment": {
            # agreeing with the score, as our schema requires: none fulfilled only below 0.5
            "requirements": [{"requirement": "Use Python", "isFulfilled": requirements >= 0.5, "reasoning": "r"}],
            "overallScore": requirements,
        },
        "completeness": {"score": completeness, "missingElements": [], "reasoning": "r"},
        "responseAppropriateness": {
            "score": appropriateness,
            "formatAlignment": True,
            "toneAlignment": True,
            "reasoning": "r",
        },
    }


# (mode, user prompt, system prompt, the four dimension scores)
ALIGNMENT_SETS: list[tuple[str, str | None, str | None, tuple[float, float, float, float]]] = [
    ("user", "Write a factorial function in Python.", None, (0.9, 0.8, 0.7, 1.0)),
    ("user", "Write a factorial function in Python.", "Answer in Python only.", (1.0, 1.0, 1.0, 1.0)),
    ("system", "Write a factorial function.", "Answer in Python only.", (0.5, 0.25, 1.0, 0.75)),
    ("both", "Write a factorial function.", "Answer in Python only.", (0.9, 0.8, 0.7, 1.0)),
    ("both", None, "Answer in Python only.", (0.9, 0.8, 0.7, 1.0)),  # both mode with only a system prompt
]


def _alignment_cases(n: int) -> list[JudgedCase]:
    cases = []
    for mode, user, system, scores in ALIGNMENT_SETS:
        dims = {**_dimension_set(*scores), "overallAssessment": f"ok [case-{n}]"}
        # Mastra asks for one dimension set in every mode (its both mode weighs that set 0.7 + 0.3);
        # ours asks both mode (with a user and a system prompt) for one set per prompt: the same set twice
        ours = (
            dims
            if mode != "both" or user is None
            else {"user": _dimension_set(*scores), "system": _dimension_set(*scores), "overallAssessment": "ok"}
        )
        run = _run(n, user, "def factorial(n): return 1 if n < 2 else n * factorial(n - 1)", system)
        label = f"{mode}/{'user' if user else 'no-user'}-{'system' if system else 'no-system'}"
        cases.append(
            JudgedCase(
                f"llm/prompt-alignment/{label}",
                "prompt-alignment",
                run,
                {"intentAlignment": dims},
                ours,
                {"evaluationMode": mode},
                {"evaluation_mode": mode},
                n,
            )
        )
        n += 1
    return cases


# (claims supported?, questions answered? in the judge's order, max questions or None for the default 10)
SUMMARY_SETS: list[tuple[list[bool], list[bool], int | None]] = [
    ([True, True, False, True], [True, True, True, False, True], None),  # min(3/4, 4/5) = 0.75
    ([True, True], [True] * 10 + [False, False], None),  # 12 questions: the first 10 kept, 10/10
    ([True], [False] + [True] * 11, None),  # 12 questions: the first 10 kept, 9/10
    ([True, False], [True, False, True, True, True], 3),  # max 3: 2/3 vs alignment 1/2
    ([True, True, True], [True, True, False], None),
]


def _summary_cases(n: int) -> list[JudgedCase]:
    cases = []
    source = "The council approved the budget on Monday; it funds two schools and a library."
    for supported, answered, max_questions in SUMMARY_SETS:
        claims = [{"claim": f"claim {i} [case-{n}]", "reason": "r"} for i in range(1, len(supported) + 1)]
        questions = [f"question {i}? [case-{n}]" for i in range(1, len(answered) + 1)]
        mastra = {
            "alignment,questions": {
                "alignment": [{**c, "supported": s} for c, s in zip(claims, supported, strict=True)],
                "questions": questions,
            },
            "coverage": {
                "coverage": [
                    {"question": q, "answered": a, "reason": "r"}
                    for q, a in zip(questions[: max_questions or 10], answered, strict=False)
                ]
            },
        }
        ours = {
            "claims": [{**c, "verdict": "yes" if s else "no"} for c, s in zip(claims, supported, strict=True)],
            "questions": [
                {"question": q, "answered": "yes" if a else "no", "reason": "r"}
                for q, a in zip(questions, answered, strict=True)
            ],
        }
        options = {"maxQuestions": max_questions} if max_questions else {}
        our_options = {"max_questions": max_questions} if max_questions else {}
        run = _run(n, source, "The council approved a budget for two schools.")
        label = (
            f"{sum(supported)}of{len(supported)}-claims/{sum(answered)}of{len(answered)}-answered/max-{max_questions}"
        )
        cases.append(
            JudgedCase(f"llm/summarization/{label}", "summarization", run, mastra, ours, options, our_options, n)
        )
        n += 1
    return cases


# (relevance and use of each context piece, missing context)
RELEVANCE_SETS: list[tuple[list[tuple[str, bool]], list[str]]] = [
    ([("high", True), ("medium", True), ("low", False), ("none", False)], []),
    ([("high", False), ("high", True), ("none", False), ("none", False)], ["the date"]),
    ([("high", True)] * 4, ["a", "b", "c", "d"]),
    ([("none", False)] * 4, []),
]


def _relevance_cases(n: int) -> list[JudgedCase]:
    cases = []
    for ratings, missing in RELEVANCE_SETS:
        context = [*CONTEXT[:-1], f"{CONTEXT[-1]} [case-{n}]"]
        mastra = {
            "evaluations": {
                "evaluations": [
                    {
                        "context_index": i,
                        "contextPiece": context[i],
                        "relevanceLevel": r,
                        "wasUsed": u,
                        "reasoning": "r",
                    }
                    for i, (r, u) in enumerate(ratings)
                ],
                "missingContext": missing,
                "overallAssessment": "ok",
            }
        }
        ours = {
            "pieces": [{"index": i, "relevance": r, "used": u, "reason": "r"} for i, (r, u) in enumerate(ratings, 1)],
            "missingContext": missing,
        }
        run = _run(n, "Tell me about Paris.", "Paris is the capital of France and the Seine flows through it.")
        label = "-".join(f"{r}{'+used' if u else ''}" for r, u in ratings) + f"/{len(missing)}-missing"
        cases.append(
            JudgedCase(
                f"llm/context-relevance/{label}",
                "context-relevance",
                run,
                mastra,
                ours,
                {"context": context},
                {"context": context},
                n,
            )
        )
        n += 1
    return cases


# (match of each ground-truth unit, extra units in the response, contradictions)
SIMILARITY_SETS: list[tuple[list[str], int, int]] = [
    (["exact", "semantic", "partial", "missing"], 0, 0),
    (["exact", "exact"], 0, 0),
    (["semantic", "semantic", "exact"], 3, 0),
    (["exact", "partial"], 1, 1),
    (["missing", "missing"], 0, 0),
]


def _similarity_cases(n: int) -> list[JudgedCase]:
    cases = []
    for matches, extra, contradictions in SIMILARITY_SETS:
        units = [f"unit {i} [case-{n}]" for i in range(1, len(matches) + 1)]
        extras = [f"extra {i}" for i in range(extra)]
        conflicts = [(f"said {i}", f"truth {i}") for i in range(contradictions)]
        mastra = {
            "outputUnits,groundTruthUnits": {"outputUnits": units, "groundTruthUnits": units},
            "matches": {
                "matches": [
                    {
                        "groundTruthUnit": u,
                        "outputUnit": None if m == "missing" else u,
                        "matchType": m,
                        "explanation": "e",
                    }
                    for u, m in zip(units, matches, strict=True)
                ],
                "extraInOutput": extras,
                "contradictions": [{"outputUnit": a, "groundTruthUnit": b, "explanation": "e"} for a, b in conflicts],
            },
        }
        ours = {
            "groundTruthUnits": [
                {"unit": u, "match": m, "responseEvidence": "" if m == "missing" else u, "reason": "r"}
                for u, m in zip(units, matches, strict=True)
            ],
            "extraUnits": extras,
            "contradictions": [{"responseClaim": a, "groundTruthClaim": b} for a, b in conflicts],
        }
        run = _run(n, "When did the council approve the budget?", "On Monday, for two schools.")
        run["groundTruth"] = f"The council approved the budget on Monday. [case-{n}]"
        label = f"{'-'.join(matches)}/{extra}-extra/{contradictions}-contradictions"
        cases.append(JudgedCase(f"llm/answer-similarity/{label}", "answer-similarity", run, mastra, ours, number=n))
        n += 1
    return cases


TOOLS = [
    {"id": "weatherTool", "description": "current weather for a city"},
    {"id": "taxiTool", "description": "books a taxi"},
    {"id": "searchTool", "description": "web search"},
]
# (tools called, in order, with whether each call was appropriate; tools the request needed but never called)
TOOL_SETS: list[tuple[list[tuple[str, bool]], list[str]]] = [
    ([("weatherTool", True), ("taxiTool", True)], []),
    ([("weatherTool", True), ("searchTool", False)], ["taxiTool"]),
    ([("searchTool", False)], []),
    ([], ["weatherTool"]),
    ([], []),
]


def _tool_cases(n: int) -> list[JudgedCase]:
    cases = []
    for calls, missing in TOOL_SETS:
        parts: list[dict[str, Any]] = [
            {
                "type": "tool-invocation",
                "toolInvocation": {
                    "state": "result",
                    "toolCallId": f"c{i}",
                    "toolName": name,
                    "args": {},
                    "result": {"ok": True},
                },
            }
            for i, (name, _) in enumerate(calls)
        ]
        answer = f"Done. [case-{n}]"
        parts.append({"type": "text", "text": answer})
        run = _run(n, "Rain in Lisbon? Then book a taxi.", "Done.")
        run["output"] = [{**run["output"][0], "content": {"format": 2, "parts": parts, "content": answer}}]
        mastra = {
            "evaluations": {
                "evaluations": [{"toolCalled": t, "wasAppropriate": ok, "reasoning": "r"} for t, ok in calls],
                "missingTools": missing,
            }
        }
        ours = {
            "evaluations": [{"toolCalled": t, "verdict": "yes" if ok else "no", "reasoning": "r"} for t, ok in calls],
            "missingTools": missing,
        }
        label = "-".join(f"{t}{'+' if ok else '-'}" for t, ok in calls) or "no-calls"
        cases.append(
            JudgedCase(
                f"llm/tool-call-accuracy/{label}/{len(missing)}-missing",
                "tool-call-accuracy",
                run,
                mastra,
                ours,
                {"availableTools": TOOLS},
                {"available_tools": TOOLS},
                n,
            )
        )
        n += 1
    return cases


def judged_cases() -> list[JudgedCase]:
    """Every LLM-judged case, numbered for the judge's markers."""
    cases = _verdict_cases(1)
    for more in (_noise_cases, _alignment_cases, _summary_cases, _relevance_cases, _similarity_cases, _tool_cases):
        cases += more(len(cases) + 1)
    return cases
