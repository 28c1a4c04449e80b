"""The Catalogue page's helpers: a scorer's facts, its judge calls next to Mastra's, the language
libraries of the code scorers (from their module docstrings), and running a scorer's example."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import streamlit as st

from scorers import JudgeSettings, ScorerError, ScoreResult, Store
from scorers.catalogue.registry import create_scorer
from scorers.catalogue.spec import ScorerSpec

from .results import md_escape
from .runs import RunFailure

MASTRA_JUDGE_CALLS: dict[str, int] = {
    "prompt-alignment": 2,
    "answer-relevancy": 3,
    "answer-similarity": 3,
    "faithfulness": 3,
    "hallucination": 3,
    "context-precision": 2,
    "context-relevance": 2,
    "toxicity": 2,
    "bias": 3,
    "tool-call-accuracy": 2,
    "noise-sensitivity": 2,
    "summarization": 3,
    "checklist-rubric": 1,
}
"""Judge calls per run of Mastra's version of a scorer (MASTRA_SCORERS.md), by our scorer id."""

# Code scorers whose module docstring has no "Language processing" section: what they use instead.
_LIBRARIES_WITHOUT_SECTION = {
    "textual-difference": (
        "[rapidfuzz](https://pypi.org/project/rapidfuzz/): the character ratio is its bit-parallel LCS "
        "(Indel normalized similarity) and the word-level changes come from its Levenshtein `editops`, "
        "in C++ with memory linear in the text length, so long texts score in well under a second."
    ),
    "content-similarity": (
        "None: the Sørensen–Dice coefficient over character bigrams is a few lines of plain Python "
        "(`collections.Counter` for the bigram multisets)."
    ),
    "tool-call-accuracy-code": "None: it compares tool names; no text processing is involved.",
}
_RST_LINK = re.compile(r"`([^`<]+?)\s*<([^>]+)>`_")


def judge_calls_text(spec: ScorerSpec) -> str:
    """Judge calls per run, with Mastra's count where MASTRA_SCORERS.md gives it.

    >>> from scorers import SCORERS
    >>> judge_calls_text(SCORERS["answer-relevancy"])
    '1 (Mastra: 3)'
    >>> judge_calls_text(SCORERS["completeness"])
    '0 (code)'
    """
    if not spec.uses_judge:
        return "0 (code)"
    mastra = MASTRA_JUDGE_CALLS.get(spec.id)
    return f"{spec.judge_calls} (Mastra: {mastra})" if mastra is not None else str(spec.judge_calls)


def rst_to_markdown(text: str) -> str:
    """A docstring paragraph in reStructuredText as Markdown: links, literals, one line per paragraph or bullet.

    >>> rst_to_markdown("Uses `afinn <https://pypi.org/project/afinn/>`_ and\\n``re``.")
    'Uses [afinn](https://pypi.org/project/afinn/) and `re`.'
    """
    text = _RST_LINK.sub(r"[\1](\2)", text).replace("``", "`")
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("- ") or not lines:
            lines.append(stripped)
        elif stripped:
            lines[-1] += " " + stripped
    return "\n".join(lines)


def _docstring_section(doc: str) -> str | None:
    paragraphs = doc.split("\n\n")
    for i, paragraph in enumerate(paragraphs):
        if paragraph.startswith("Language processing"):
            section = [paragraph]
            section += _takewhile_bullets(paragraphs[i + 1 :])
            text = "\n\n".join(rst_to_markdown(p) for p in section)
            text = re.sub(r"^Language processing:\s*", "", text)
            return text[:1].upper() + text[1:]
    return None


def _takewhile_bullets(paragraphs: list[str]) -> list[str]:
    out = []
    for paragraph in paragraphs:
        if not paragraph.lstrip().startswith("- "):
            break
        out.append(paragraph)
    return out


def language_processing(spec: ScorerSpec) -> str | None:
    """Which language-processing libraries a code scorer uses and why (Markdown), or None for LLM judges.

    Read from the "Language processing" section of the scorer module's docstring, so the page
    says what the code's own documentation says.
    """
    if spec.uses_judge:
        return None
    module = importlib.import_module(spec.build.__module__)
    section = _docstring_section(inspect.getdoc(module) or "")
    if section is not None:
        return section
    return _LIBRARIES_WITHOUT_SECTION.get(spec.id, "None.")


def catalogue_frame(specs: Mapping[str, ScorerSpec]) -> pd.DataFrame:
    """One row per scorer: name, id, kind, judge calls (ours and Mastra's), range, direction, what it reads and requires."""
    return pd.DataFrame(
        [
            {
                "Scorer": spec.name,
                "Id": spec.id,
                "Kind": "LLM judge" if spec.uses_judge else "code",
                "Judge calls": judge_calls_text(spec),
                "Range": spec.score_range,
                "Higher is better": "yes" if spec.higher_is_better else "no",
                "Reads": ", ".join(spec.reads or spec.inputs),
                "Requires": ", ".join(spec.requires) or "—",
            }
            for spec in specs.values()
        ]
    )


def options_frame(spec: ScorerSpec) -> pd.DataFrame:
    """The scorer's options: name, kind, default, choices and help."""
    return pd.DataFrame(
        [
            {
                "Option": o.name,
                "Kind": o.kind,
                "Default": ", ".join(map(str, o.default)) if isinstance(o.default, (tuple, list)) else str(o.default),
                "Choices": ", ".join(o.choices),
                "Help": o.help,
            }
            for o in spec.options
        ],
        columns=["Option", "Kind", "Default", "Choices", "Help"],
    )


def split_example(example: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A spec's example as ``(run payload, options)``."""
    payload = {k: v for k, v in example.items() if k != "options"}
    return payload, dict(example.get("options") or {})


def run_example(
    spec: ScorerSpec, store: Store | None, settings: Callable[[], JudgeSettings], *, bypass_cache: bool = False
) -> ScoreResult | RunFailure:
    """Run a scorer on its example; every :class:`~scorers.ScorerError` becomes a :class:`RunFailure`.

    Args:
        spec: the scorer (it must have an ``example``).
        store: where saved judges are read from; also the judge-reply cache.
        settings: returns the judge settings; called only for LLM-judged scorers (code scorers need no key).
        bypass_cache: ask the judge again even when ``store`` has the reply.
    """
    payload, options = split_example(spec.example or {})
    try:
        resolved = settings() if spec.uses_judge else None
        scorer = create_scorer(spec.id, options, settings=resolved, cache=None if bypass_cache else store, store=store)
        return scorer.run(payload)
    except ScorerError as exc:
        return RunFailure(str(exc), exc.status, getattr(exc, "raw_reply", None))


def render_facts(spec: ScorerSpec) -> None:
    """What a scorer measures, its inputs, formula, range, direction, judge calls, options, notes and libraries."""
    st.markdown(f"**What it measures:** {md_escape(spec.measures)}")
    facts = [
        ("Reads", ", ".join(spec.inputs)),
        (
            "Requires",
            (", ".join(spec.requires) or "nothing in every row")
            + (
                " (and its target: the ground truth or the input)"
                if any(o.name == "target" for o in spec.options)
                else ""
            )
            + "; a row without one is not scored (Missing input)",
        ),
        ("Formula", spec.formula),
        ("Range", f"{spec.score_range} (× scale where it has one)"),
        ("Higher is better", "yes" if spec.higher_is_better else "no: lower is better"),
        ("Judge calls per run", judge_calls_text(spec)),
    ]
    st.markdown("\n".join(f"- **{label}:** {md_escape(value)}" for label, value in facts))
    if spec.options:
        st.markdown("**Options**")
        st.dataframe(options_frame(spec), hide_index=True, key=f"cat_options_{spec.id}")
    else:
        st.caption("No options.")
    if spec.notes:
        st.markdown(f"**Notes:** {md_escape(spec.notes)}")
    libraries = language_processing(spec)
    if libraries is not None:
        st.markdown("**Language processing**")
        st.markdown(libraries)
