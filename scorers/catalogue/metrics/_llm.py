"""Shared helpers of the verdict-style LLM scorers in :mod:`scorers.catalogue.metrics`.

Every such scorer follows the prompt-alignment model: a strict pydantic schema
(values validated, never coerced), our own prompt wording with every run text
wrapped by :func:`scorers.core.judge.delimit`, a system message that ends with
:data:`scorers.core.judge.DATA_NOTICE`; the judge analyses, the code computes the
score and composes the reason.

What is here:

- :class:`StrictModel`, :data:`UnitScore`, :func:`exactly`: schema building blocks.
- :func:`normalized_label`, :data:`Verdict`, :data:`BinaryVerdict`: verdict labels as
  strict ``Literal`` s compared after trimming and lower-casing (MASTRA_SCORERS.md);
  any other label is invalid judge output and gets the judge's one re-ask.
- :func:`read_options` and the option checkers (:func:`number`, :func:`integer`,
  :func:`text`, :func:`choice`, :func:`boolean`, :func:`text_list`): options
  given as a mapping and/or keyword arguments, camelCase names accepted,
  validated at construction with an :class:`~scorers.core.errors.InvalidInputError`
  that names the option.
- :func:`resolve_settings`, :func:`system_message`, :func:`ratio`,
  :func:`merge_info`, :func:`listing`, :func:`quote_list`, :func:`require_text`,
  :func:`count_reason`, :class:`VerdictReason`, :func:`verdict_shares`.
- :class:`JudgedScorer`: the lazy judge client and the ``run`` / ``render_prompt``
  frame; a subclass supplies ``_validate``, ``_messages`` and ``_score``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

from scorers.core.base import JudgeInfo, RunInput, ScoreResult, decimal_text, normalize_run, round_half_up
from scorers.core.errors import InvalidInputError, MissingInputError
from scorers.core.judge import DATA_NOTICE, Judge, JudgeCache, JudgeSettings, delimit, resolve_judge_settings

UnitScore = Annotated[float, Field(ge=0.0, le=1.0, description="A score from 0 (not at all) to 1 (fully).")]


class StrictModel(BaseModel):
    """Base of every judge schema here: strict types, no NaN/inf, extra keys ignored, frozen."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore", frozen=True)


def exactly(item: Any, n: int) -> Any:
    """A list type of exactly ``n`` items (``minItems`` = ``maxItems`` = n in the JSON schema).

    Use it in a schema built per run or per scorer with :func:`pydantic.create_model`
    when the judge must give one verdict per known unit (tool call, criterion, step):
    a reply with a verdict too few or too many is invalid and gets the re-ask.
    """
    return Annotated[list[item], Field(min_length=n, max_length=n)]


# ----------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Option:
    """How to check one option: ``check(value, name)`` returns the cleaned value or raises.

    A ``required`` option's checker also runs on the default when the option is not
    given, so its "is required" error names the option.
    """

    default: Any
    check: Callable[[Any, str], Any]
    required: bool = False


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _bad(name: str, message: str) -> InvalidInputError:
    return InvalidInputError(message, field=f"options.{name}")


def number(
    *, minimum: float | None = None, exclusive_minimum: float | None = None, maximum: float | None = None
) -> Callable[[Any, str], float]:
    """A finite number (not a bool, not a string) within the given bounds."""

    def check(value: Any, name: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _bad(name, f"{name} must be a finite number, got {value!r}")
        if exclusive_minimum is not None and not value > exclusive_minimum:
            raise _bad(name, f"{name} must be > {exclusive_minimum:g}, got {value!r}")
        if minimum is not None and value < minimum:
            raise _bad(name, f"{name} must be >= {minimum:g}, got {value!r}")
        if maximum is not None and value > maximum:
            raise _bad(name, f"{name} must be <= {maximum:g}, got {value!r}")
        return float(value)

    return check


def integer(value: Any, name: str) -> int:
    """A whole number: an int, or a float with no fractional part (2.0 -> 2); not a bool."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value != int(value)
    ):
        raise _bad(name, f"{name} must be a whole number, got {value!r}")
    return int(value)


def text(*, required: bool = False) -> Callable[[Any, str], str]:
    """A string; with ``required``, one that is not empty or blank."""

    def check(value: Any, name: str) -> str:
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise _bad(name, f"{name} must be a string, got {type(value).__name__}")
        if required and not value.strip():
            raise _bad(name, f"{name} is required and must not be empty")
        return value

    return check


def choice(*choices: str) -> Callable[[Any, str], str]:
    """One of ``choices``."""

    def check(value: Any, name: str) -> str:
        if value not in choices:
            raise _bad(name, f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return value

    return check


def boolean(value: Any, name: str) -> bool:
    """True or False (not 0/1, not "true")."""
    if not isinstance(value, bool):
        raise _bad(name, f"{name} must be true or false, got {value!r}")
    return value


def text_list(value: Any, name: str) -> tuple[str, ...]:
    """A list (or tuple) of non-blank strings; a single string is not accepted."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise _bad(name, f"{name} must be a list of strings, got {type(value).__name__}")
    items = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise _bad(f"{name}[{i}]", f"{name}[{i}] must be a non-empty string, got {item!r}")
        items.append(item.strip())
    return tuple(items)


def function(value: Any, name: str) -> Callable[..., Any] | None:
    """A callable (a Python-only option such as ``context_extractor``), or None for none."""
    if value is not None and not callable(value):
        raise _bad(name, f"{name} must be a function, got {type(value).__name__}")
    return value


def positive_integer(value: Any, name: str) -> int:
    """A whole number >= 1 (see :func:`integer`)."""
    value = integer(value, name)
    if value < 1:
        raise _bad(name, f"{name} must be at least 1, got {value}")
    return value


SCALE_OPTION = Option(1.0, number(exclusive_minimum=0))


def read_options(
    options: Mapping[str, Any] | None, keywords: Mapping[str, Any], schema: Mapping[str, Option]
) -> dict[str, Any]:
    """Merge, check and complete a scorer's options.

    Args:
        options: the ``options`` mapping (may be None).
        keywords: options given as keyword arguments; they win over ``options``.
        schema: option name (snake_case) -> :class:`Option`. camelCase spellings
            (``baselineResponse``) are accepted for snake_case names.

    Returns:
        Every option of ``schema``: the given value checked, else its default
        (checked too for a required option).

    Raises:
        InvalidInputError: an unknown option (listing the known ones), or a value its
            checker rejects (a missing required option included); ``field`` is ``options.<name>``.
    """
    if options is not None and not isinstance(options, Mapping):
        raise InvalidInputError(f"options must be a mapping, got {type(options).__name__}", field="options")
    given: dict[str, Any] = {}
    for source in (options or {}, keywords):
        for key, value in source.items():
            given[_camel_to_snake(key) if _camel_to_snake(key) in schema else key] = value
    unknown = set(given) - set(schema)
    if unknown:
        raise InvalidInputError(
            f"unknown option(s) {', '.join(sorted(unknown))}; expected {', '.join(schema)}", field="options"
        )
    return {
        name: opt.check(given.get(name, opt.default), name) if name in given or opt.required else opt.default
        for name, opt in schema.items()
    }


def resolve_settings(model: str | None, settings: JudgeSettings | None) -> JudgeSettings:
    """``settings`` (default: resolved from secrets/env) with ``model`` applied when given."""
    settings = settings or resolve_judge_settings(model=model)
    return replace(settings, model=model) if model else settings


# ----------------------------------------------------------------------------- prompts and scores


def system_message(role: str) -> dict[str, str]:
    """The judge's system message: its role, then the data notice (always last)."""
    return {"role": "system", "content": f"{role.strip()} {DATA_NOTICE}"}


def ratio(count: int, n: int) -> float:
    """``count / n``, and 0 when ``n`` is 0 (nothing found, nothing to count)."""
    return count / n if n else 0.0


def listing(items: Sequence[str], limit: int = 3) -> str:
    """``a; b; c (and 2 more)`` for reasons: at most ``limit`` items, joined by semicolons."""
    shown = "; ".join(items[:limit])
    more = len(items) - limit
    return shown + (f" (and {more} more)" if more > 0 else "")


def quote_list(items: Sequence[str], limit: int = 3) -> str:
    """``"a"; "b"; "c" (and 2 more)`` for reasons: at most ``limit`` items, each quoted."""
    return listing([f'"{s.strip()}"' for s in items], limit)


def count_reason(
    scale: float, n: int, flagged: Sequence[str], empty: str, clean: str, what: str
) -> Callable[[float], str]:
    """The reason of a lower-is-better "k of n X are Y" score, as a function of the score.

    It writes e.g. ``"The score is 0.400 out of 1 (lower is better): 2 of 5 opinions are biased: a; b."``.

    Args:
        scale: the score's upper bound, > 0.
        n: how many items the judge found (opinions, statements, ...), >= 0.
        flagged: the descriptions of the flagged items, listed by :func:`listing`.
        empty: the sentence when ``n`` is 0.
        clean: the sentence when no item is flagged; ``{n}`` in it is replaced by ``n``.
        what: the items and their flag, e.g. ``"opinions are biased"``.
    """

    def reason(score: float) -> str:
        head = f"The score is {decimal_text(score)} out of {scale:g} (lower is better)"
        if not n:
            return f"{head}: {empty}"
        if not flagged:
            return f"{head}: {clean.format(n=n)}"
        return f"{head}: {len(flagged)} of {n} {what}: {listing(flagged)}."

    return reason


@dataclass(frozen=True)
class VerdictReason:
    """How a per-item verdict scorer words its reason; calling it with ``(analysis, score)`` writes the reason.

    The reason reads ``"The score is 0.600 out of 1: 3 of 5 claims are <tally>. <Label>: "a"."``.
    ``analysis`` holds ``"scale"`` (> 0), ``"counts"`` (items per verdict) and the items
    under ``noun + "s"``, each a mapping with ``noun`` and ``"verdict"``.

    Attributes:
        noun: the singular name of an item and the field quoted in the lists, e.g. ``"claim"``.
        empty: the sentence when there are no items.
        tally: ``analysis`` -> what the ``"yes"`` items are, then the other counts, e.g.
            ``"supported by the context, 1 contradicted and 0 not covered"``.
        labels: ``(verdict, label)`` pairs; the items of each verdict are quoted after its label.
    """

    noun: str
    empty: str
    tally: Callable[[Mapping[str, Any]], str]
    labels: tuple[tuple[str, str], ...]

    def __call__(self, analysis: Mapping[str, Any], score: float) -> str:
        """The reason for ``analysis``, quoting ``score``."""
        head = f"The score is {decimal_text(score)} out of {analysis['scale']:g}"
        items = analysis[self.noun + "s"]
        if not items:
            return f"{head}: {self.empty}"
        n, yes = len(items), analysis["counts"]["yes"]
        text = f"{head}: {yes} of {n} {self.noun}{'s' if n != 1 else ''} {'is' if yes == 1 else 'are'} "
        text += f"{self.tally(analysis)}."
        for verdict, label in self.labels:
            chosen = [item[self.noun] for item in items if item["verdict"] == verdict]
            if chosen:
                text += f" {label}: {quoted(chosen)}."
        return text


def verdict_shares(analysis: Mapping[str, Any], noun: str, names: Mapping[str, str]) -> dict[str, float]:
    """The share of each verdict among the analysis' items, as dimension scores; none when there are no items.

    Args:
        analysis: the scorer's analysis: the items under ``noun + "s"`` and ``"counts"`` (items per verdict).
        noun: the singular name of an item, e.g. ``"claim"``.
        names: verdict -> dimension name, e.g. ``{"yes": "supported", "no": "contradicted"}``.

    >>> verdict_shares({"claims": [{}, {}, {}, {}], "counts": {"yes": 3, "no": 1}}, "claim", {"yes": "supported"})
    {'supported': 0.75}
    """
    n = len(analysis[noun + "s"])
    return {name: analysis["counts"][verdict] / n for verdict, name in names.items()} if n else {}


def require_text(value: str, field: str, what: str) -> None:
    """Raise :class:`~scorers.core.errors.MissingInputError` on ``field`` when ``value`` is empty or blank."""
    if not value.strip():
        raise MissingInputError(f"{what} is empty", field=field)


def merge_info(first: JudgeInfo, second: JudgeInfo) -> JudgeInfo:
    """One :class:`JudgeInfo` for two judge calls of a run: usage summed, cached only if both were."""
    return replace(first, usage=first.usage + second.usage, cached=first.cached and second.cached)


class JudgedScorer:
    """Frame of a one-call LLM scorer: lazy judge, ``render_prompt`` and ``run``.

    The constructor keeps every checked option as an attribute of the same name
    (``self.context``, ``self.include_input``). A subclass sets ``id``, ``name``,
    ``output_model``, ``schema_name`` and
    ``expected_completion_tokens`` and implements :meth:`_validate` (input checks
    before any call), :meth:`_messages` (the judge prompt) and :meth:`_score`
    (the judge's validated answer -> the 0..1 score, the analysis and the reason).
    Scorers that need more than one call override :meth:`run`.
    """

    id: str
    name: str
    output_model: type[BaseModel]
    schema_name: str
    expected_completion_tokens = 400
    judge_calls_per_run = 1

    def __init__(self, settings: JudgeSettings, cache: JudgeCache | None, scale: float, **options: Any):
        self.settings = settings
        self.cache = cache
        self.scale = scale
        for name, value in options.items():
            setattr(self, name, value)
        self._judge: Judge | None = None

    @property
    def judge(self) -> Judge:
        """The judge client, created on first use (so a missing key fails at run time, after input checks)."""
        if self._judge is None:
            self._judge = Judge(self.settings, self.cache)
        return self._judge

    def _validate(self, run: RunInput) -> None:
        """Raise :class:`InvalidInputError` when the run lacks what the judge needs."""

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        raise NotImplementedError

    def _output_model(self, run: RunInput) -> type[BaseModel]:
        """The schema of the judge's answer for ``run`` (``output_model`` unless built per run)."""
        return self.output_model

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Callable[[float], str]]:
        """(0..1 score, analysis, reason builder taking the final score)."""
        raise NotImplementedError

    def render_prompt(self, payload: dict[str, Any] | RunInput) -> list[dict[str, str]]:
        """The chat messages the judge receives for ``payload`` (for previews and estimates).

        Raises:
            InvalidInputError: as for :meth:`run`.
        """
        run = normalize_run(payload)
        self._validate(run)
        return self._messages(run)

    def finish(
        self, raw_score: float, analysis: dict[str, Any], reason: Callable[[float], str], info: JudgeInfo
    ) -> ScoreResult:
        """The :class:`ScoreResult`: score = round_half_up(raw_score × scale, 2)."""
        score = round_half_up(raw_score * self.scale, 2)
        analysis = {**analysis, "rawScore": raw_score, "scale": self.scale}
        return ScoreResult(scorer=self.id, score=score, reason=reason(score), analyze_step_result=analysis, judge=info)

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run with one judge call.

        Raises:
            InvalidInputError: before any judge call, when the run lacks a needed text.
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        run = normalize_run(payload)
        self._validate(run)
        reply = self.judge.complete(self._messages(run), self._output_model(run), schema_name=self.schema_name)
        raw_score, analysis, reason = self._score(reply.parsed, run)
        return self.finish(raw_score, analysis, reason, reply.info)


# ----------------------------------------------------------------------------- verdict labels, per-piece lists, context
# (added for answer relevancy, answer similarity, faithfulness, hallucination, context precision/relevance)


def _trim_lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def normalized_label(*labels: str) -> Any:
    """A strict ``Literal`` over ``labels``, compared after trimming and lower-casing.

    MASTRA_SCORERS.md: verdicts are compared after trimming and lower-casing, so
    ``" Yes "`` validates as ``"yes"``; any other label (``"maybe"``, ``true``, ``1``)
    is invalid judge output (re-asked once, never coerced). The JSON schema still
    lists the exact labels.

    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(normalized_label("yes", "no")).validate_python(" Yes ")
    'yes'
    """
    return Annotated[Literal[labels], BeforeValidator(_trim_lower)]


Verdict = normalized_label("yes", "no", "unsure")
"""``"yes"`` / ``"no"`` / ``"unsure"``, compared after trimming and lower-casing."""

BinaryVerdict = normalized_label("yes", "no")
"""``"yes"`` / ``"no"``, compared after trimming and lower-casing."""


@functools.lru_cache(maxsize=256)
def numbered_list_model(base: type[StrictModel], field: str, item: type[StrictModel], n: int) -> type[StrictModel]:
    """``base`` plus a ``field`` listing exactly ``n`` ``item`` s numbered 1..n in order (one per known piece).

    ``item`` must have an ``index: int`` field. Count and numbering are part of
    validation, so a judge that skips, adds or reorders pieces gets the one re-ask
    like any other invalid reply. Models are built once per (base, field, item, n).

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")

    def check_numbering(self: Any) -> Any:
        numbers = [entry.index for entry in getattr(self, field)]
        if numbers != list(range(1, n + 1)):
            raise ValueError(f"{field} must have one entry per piece, numbered 1..{n} in order; got {numbers}")
        return self

    return create_model(
        f"{base.__name__}{n}",
        __base__=base,
        __validators__={"check_numbering": model_validator(mode="after")(check_numbering)},
        **{field: (exactly(item, n), ...)},
    )


@dataclass(frozen=True)
class Context:
    """Context passages to judge against and where they came from.

    ``source``: ``"extractor"`` (the scorer's context extractor), ``"run"`` (the
    run's ``context``), ``"options"`` (the scorer's ``context`` option), ``"tool
    results"`` (results of the run's tool calls) or ``"none"``.
    """

    pieces: tuple[str, ...]
    source: str


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def resolve_context(
    run: RunInput,
    configured: Sequence[str],
    *,
    tool_results: bool,
    extractor: Callable[[RunInput], Sequence[str]] | None = None,
) -> Context:
    """The context passages of ``run``, from the first of these that gives any:

    ``extractor(run)`` (Mastra's ``contextExtractor`` / ``getContext``, when configured),
    the run's ``context``, the ``configured`` passages, and (when ``tool_results``) the
    run's tool results. Blank pieces are dropped; tool calls without a result are
    skipped. A tool result reads ``name(arguments) returned: result`` (JSON for non-strings).

    Raises:
        InvalidInputError: ``extractor`` returned something other than a list of strings.
    """
    sources: list[tuple[Sequence[str], str]] = [(run.context, "run"), (tuple(configured), "options")]
    if extractor is not None:
        extracted = extractor(run)
        if isinstance(extracted, str) or not all(isinstance(p, str) for p in extracted or ()):
            raise InvalidInputError(
                f"the context extractor must return a list of strings, got {extracted!r:.80}", field="context"
            )
        sources.insert(0, (tuple(extracted or ()), "extractor"))
    for pieces, source in sources:
        kept = tuple(p for p in pieces if p.strip())
        if kept:
            return Context(kept, source)
    if tool_results:
        kept = tuple(
            f"{c.name}({'' if c.arguments is None else _show(c.arguments)}) returned: {_show(c.result)}"
            for c in run.tool_calls
            if c.result is not None
        )
        if kept:
            return Context(kept, "tool results")
    return Context((), "none")


def delimit_pieces(pieces: Sequence[str], tag: str = "context") -> str:
    """Each piece in its own numbered tag: ``<context_1>...</context_1>``, ``<context_2>...``."""
    return "\n\n".join(delimit(f"{tag}_{i}", piece) for i, piece in enumerate(pieces, 1))


def quoted(items: Sequence[str], limit: int = 3) -> str:
    """At most ``limit`` items, each in double quotes on one line, for reasons: ``"a"; "b" (and 2 more)``."""
    shown = "; ".join('"' + " ".join(item.split()) + '"' for item in items[:limit])
    more = len(items) - limit
    return shown + (f" (and {more} more)" if more > 0 else "")
