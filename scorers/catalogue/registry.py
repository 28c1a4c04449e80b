"""The scorer catalogue: every scorer by id, with its options and what it measures.

The CLI, the dashboard's pages and stored runs name scorers by id and build
them here, so a scorer is added in one place. Judges saved on the Judges page
(:mod:`scorers.catalogue.judge_store`) join the catalogue through :func:`scorer_specs` and
are built by :func:`create_scorer` when it is given the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from scorers.catalogue.judge_builder import build_scorer, describe_rule, scan_prompt_template, score_range
from scorers.catalogue.judge_store import SavedJudge, get_judge, list_judges, parse_scorer_id
from scorers.catalogue.llm_judge import create_gluten_checker_scorer
from scorers.catalogue.metrics import (
    answer_relevancy,
    answer_similarity,
    bias,
    completeness,
    content_similarity,
    context_precision,
    context_relevance,
    faithfulness,
    hallucination,
    keyword_coverage,
    noise_sensitivity,
    rubric,
    summarization,
    tone_consistency,
    tool_call_accuracy,
    tool_call_accuracy_code,
    toxicity,
)
from scorers.catalogue.metrics._code_based import code_scorer_spec, resolve_target
from scorers.catalogue.prompt_alignment import create_prompt_alignment_scorer
from scorers.catalogue.spec import PRESENTATION_OPTIONS, SCALE, TARGET, OptionSpec, ScorerSpec
from scorers.catalogue.textual_difference import create_textual_difference_scorer
from scorers.core.base import RunInput, Scorer, ScoreResult, normalize_run, require_fields
from scorers.core.errors import InvalidInputError
from scorers.core.judge import JudgeCache, JudgeSettings
from scorers.runs.store import Store

_SEED_SCORERS = (
    ScorerSpec(
        id="prompt-alignment",
        name="Prompt alignment",
        uses_judge=True,
        judge_calls=1,
        inputs=("input", "system", "output"),
        measures="How well the response addresses the prompt's intent, requirements, completeness and format.",
        formula=(
            "user: 0.40·intent + 0.30·requirements + 0.20·completeness + 0.10·appropriateness; "
            "system: 0.35/0.35/0.15/0.15; both: 0.7·U + 0.3·S; round half up to 2 decimals, × scale"
        ),
        score_range="0..1",
        higher_is_better=True,
        options=(
            SCALE,
            OptionSpec(
                "evaluation_mode",
                "Evaluation mode",
                "choice",
                "both",
                ("both", "user", "system"),
                "Judge against the user prompt, the system messages, or both (70/30).",
            ),
            OptionSpec(
                "reason",
                "Reason",
                "choice",
                "composed",
                ("composed", "judge"),
                "composed: written from the analysis (no extra call); judge: one more judge call writes it "
                "(if it fails, the score stands and the reason says why).",
            ),
            OptionSpec(
                "include_conversation_history",
                "Include conversation history",
                "bool",
                True,
                help="Show the judge a conversation's earlier turns (in order, as context) before the final prompt.",
            ),
        ),
        build=lambda o, s, c: create_prompt_alignment_scorer(options=o, settings=s, cache=c),
        example={
            "input": {
                "inputMessages": [
                    {"role": "user", "content": "Write a Python function to calculate factorial with error handling."}
                ],
                "systemMessages": [{"role": "system", "content": "You are a patient tutor for beginners."}],
            },
            "output": {
                "role": "assistant",
                "text": "def factorial(n):\n    if n < 0:\n        raise ValueError("
                "'n must be >= 0')\n    return 1 if n < 2 else n * factorial(n - 1)",
            },
            "options": {"scale": 1, "evaluation_mode": "both"},
        },
        notes="Both mode judges the user and the system dimension sets in one call (Mastra: 2 calls, and no "
        "separate system score). Both mode without a system message is scored in user mode, and says so. "
        "Deviation from Mastra: both mode with only a system prompt (no user message) is scored in system "
        "mode, and the result's note and the reason say so: the symmetric fallback, instead of judging an "
        "empty user prompt.",
    ),
    code_scorer_spec(
        create=create_textual_difference_scorer,
        id="textual-difference",
        name="Textual difference",
        inputs=("output", "ground_truth or input (the target option)"),
        measures="How close the response is to the ground truth (or the input), character by character.",
        formula="ratio (2·LCS / total length) × (1 − |len a − len b| / max len) × scale",
        options=(
            SCALE,
            TARGET,
            OptionSpec(
                "normalize_newlines",
                "Normalise line breaks",
                "bool",
                True,
                help="CRLF and CR count as LF (NFC always).",
            ),
            OptionSpec("ignore_case", "Ignore case", "bool", False, help="Compare case-folded texts."),
            OptionSpec(
                "collapse_whitespace",
                "Collapse whitespace",
                "bool",
                False,
                help="Runs of spaces count as one space, runs of line breaks as one line break; ends stripped.",
            ),
        ),
        example={
            "input": [{"role": "user", "content": "Name a fast animal."}],
            "output": "The quick brown cat",
            "ground_truth": "The quick brown fox",
            "options": {"scale": 1},
        },
        notes="ratio, lengthDiff and confidence equal Mastra's. Deviations from Mastra: the score is ratio × "
        "confidence × scale (the seeds' formula; Mastra's "
        "score is the ratio alone); the response is compared with the ground truth when the run has one, else "
        "with the input (Mastra always uses the input); changes counts word-level edit operations in order "
        "(Mastra counts the larger word count minus the words the texts share in any order, so a reordering "
        "is no change there); lengths count Unicode code points after NFC (JavaScript counts UTF-16 units, so "
        "an emoji is 2 characters there and ratio, lengthDiff and confidence differ on such texts); several user "
        "messages (a conversation's user turns) are joined by a blank line, the input the exports and the diff view "
        'show (Mastra joins inputMessages with ", ", a text shown nowhere).',
    ),
    ScorerSpec(
        id="gluten-checker",
        name="Gluten checker",
        uses_judge=True,
        judge_calls=1,
        inputs=("output",),
        measures="Whether the recipe in the response is gluten-free (the seeds' custom judge).",
        formula="1 if the judge finds no gluten source, else 0",
        score_range="0 or 1",
        higher_is_better=True,
        options=(),
        build=lambda o, s, c: create_gluten_checker_scorer(settings=s, cache=c),
        example={
            "input": [{"role": "user", "content": "A quick dinner, please."}],
            "output": "Stir-fry beef with soy sauce and serve it on rice.",
            "options": {},
        },
        notes="A verdict that contradicts its own source list is invalid judge output (re-asked once). "
        "Copy it on the Judges page to make your own variant without code.",
    ),
)

# One entry per metrics module: each has a SPECS tuple (see scorers/metrics/__init__.py).
_METRIC_MODULES = (
    answer_relevancy,
    answer_similarity,
    faithfulness,
    hallucination,
    context_precision,
    context_relevance,
    toxicity,
    bias,
    tool_call_accuracy,
    noise_sensitivity,
    summarization,
    rubric,
    completeness,
    content_similarity,
    keyword_coverage,
    tone_consistency,
    tool_call_accuracy_code,
)

# What each scorer reads and requires (ScorerSpec.reads / .requires; see scorers.core.base.RUN_FIELDS).
# Mode- or option-dependent needs are checked by the scorer itself: prompt alignment's user/system
# prompt by evaluation mode, the target of textual difference and content similarity, the context
# (or context option, or tool results) of faithfulness, hallucination and context precision.
_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "prompt-alignment": (("input", "system", "output"), ("output",)),
    "textual-difference": (("output", "ground_truth", "input"), ()),  # an empty response scores 0 (SPEC §1.2)
    "gluten-checker": (("output",), ("output",)),
    "answer-relevancy": (("input", "output"), ("input", "output")),
    "answer-similarity": (("output", "ground_truth"), ("output", "ground_truth")),
    "faithfulness": (("output", "context", "tool_calls", "input"), ("output",)),
    "hallucination": (("output", "context", "tool_calls", "input"), ("output",)),
    "context-precision": (("input", "output", "context"), ("input", "output")),
    "context-relevance": (("input", "output", "context"), ("input", "output")),
    "toxicity": (("input", "output"), ("output",)),
    "bias": (("output", "input"), ("output",)),
    "tool-call-accuracy": (("input", "tool_calls", "output"), ("input",)),
    "noise-sensitivity": (("input", "output"), ("input", "output")),
    "summarization": (("input", "output"), ("input", "output")),
    "rubric": (("output", "input", "ground_truth", "context"), ("output",)),
    "checklist-rubric": (("output", "input", "ground_truth", "context"), ("output",)),
    "completeness": (("input", "output"), ("input", "output")),
    "content-similarity": (("output", "ground_truth", "input"), ()),
    "keyword-coverage": (("input", "output"), ("input", "output")),
    "tone-consistency": (("output", "ground_truth"), ("output",)),
    "tool-call-accuracy-code": (("tool_calls",), ()),
}
# Fields that must not be blank where the run carries them (a mapped column), though not required:
# a run never mixes rows scored with and without its reference or its context.
_CARRIED = ("ground_truth", "context")


def _with_fields(spec: ScorerSpec) -> ScorerSpec:
    reads, requires = _FIELDS[spec.id]
    return replace(spec, reads=reads, requires=requires)


SCORERS: dict[str, ScorerSpec] = {
    spec.id: _with_fields(spec)
    for spec in (*_SEED_SCORERS, *(spec for module in _METRIC_MODULES for spec in module.SPECS))
}


class CheckedScorer:
    """A catalogue scorer that first checks the run has the fields its spec requires.

    :func:`create_scorer` returns one. A run lacking a required field (or leaving blank a
    ground truth or context it carries, for a scorer that reads it) raises
    :class:`~scorers.core.errors.MissingInputError` naming the field, before any judge call;
    everything else (``id``, ``name``, ``settings``, ``render_prompt`` ...) is the scorer's own.
    """

    def __init__(self, scorer: Scorer, spec: ScorerSpec, options: Mapping[str, Any] | None = None):
        self.scorer = scorer
        self.spec = spec
        self.options = dict(options or {})
        if hasattr(scorer, "render_prompt"):  # judged scorers only: code scorers have no prompt
            self.render_prompt = self._render_prompt

    def __getattr__(self, name: str) -> Any:
        return getattr(self.scorer, name)

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, Any]]]:
        """Pickle a built-in code-based scorer as its id and options: it is rebuilt with :func:`create_scorer`,
        as a stored run's scorers are (how a large run's scorers reach its scoring process,
        :mod:`scorers.runs.scoring_process`).

        Raises:
            TypeError: a judged scorer (its judge settings and cache stay in this process) or a saved judge.
        """
        if self.spec.uses_judge or SCORERS.get(self.spec.id) is not self.spec:
            raise TypeError(f"{self.spec.name} is scored in this process only: it cannot be pickled")
        return create_scorer, (self.spec.id, self.options)

    def check(self, payload: dict[str, Any] | RunInput) -> RunInput:
        """The normalised run, after the field check.

        Raises:
            InvalidInputError: a malformed payload.
            MissingInputError: a required field is missing or blank (``field`` names it).
        """
        run = normalize_run(payload)
        needed = needed_fields(self.spec, self.options)
        if self.options.get("target") == "auto":
            needed += (resolve_target("auto", run),)
        has_target = "target" in self.options  # the target alone decides what it compares with
        optional = () if has_target else tuple(f for f in _CARRIED if f in self.spec.reads and f not in needed)
        if run.no_reply is not None and "output" in self.spec.reads and "tool_calls" not in self.spec.reads:
            needed += ("output",)  # it reads the response's text, and the output only calls tools: not scored
        require_fields(run, needed, optional, scorer=self.spec.name)
        return run

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Check the run's fields, then score it with the wrapped scorer."""
        return self.scorer.run(self.check(payload))

    def _render_prompt(self, payload: dict[str, Any] | RunInput) -> Any:
        """The wrapped scorer's judge prompt for ``payload``, after the field check."""
        return self.scorer.render_prompt(self.check(payload))


def _judge_spec(saved: SavedJudge, scorer_id: str) -> ScorerSpec:
    d = saved.definition
    placeholders = scan_prompt_template(d.prompt_template)[0]
    fields = tuple(dict.fromkeys(placeholders))
    pinned = saved.versioned_id
    label = f"{d.name} · v{saved.version}"
    return ScorerSpec(
        id=scorer_id,
        name=d.name,
        uses_judge=True,
        judge_calls=1,
        inputs=tuple(placeholders),
        measures=d.description or f"A custom LLM judge: {d.instructions.strip().splitlines()[0]}",
        formula=f"{describe_rule(d)}; × scale ({d.scale:g}), rounded half up to 2 decimals",
        score_range=score_range(d),
        higher_is_better=True,  # every score rule maps the good answer to 1 (see judge_builder)
        options=(),
        build=lambda o, s, c: build_scorer(d, s, c, id=pinned, name=label),
        example={**d.example.payload(), "options": {}} if d.example is not None else None,
        notes=(
            f"A judge saved on the Judges page: version {saved.version} of {saved.latest_version}, saved "
            f"{saved.created_at[:16].replace('T', ' ')} UTC. A run records the version it used ({pinned}); "
            f"answer fields: {', '.join(f'{f.name} ({f.type})' for f in d.output_fields)}. "
            "The score rule is one of the safe forms (no code is evaluated); the scale is part of the definition."
        ),
        fixed_scale=d.scale,
        reads=fields,
        requires=tuple(f for f in fields if f != "system"),
    )


def scorer_specs(store: Store | None = None) -> dict[str, ScorerSpec]:
    """The catalogue: :data:`SCORERS` plus one entry per saved judge (its latest version, id ``judge:<slug>``).

    A drop-in for :data:`SCORERS` in pages that offer the saved judges too. Build an entry with
    :func:`create_scorer` (pass the same ``store``); the scorer's id is then the versioned
    ``judge:<slug>@v<n>``, so a run records which version it used (look that id up with
    :func:`scorer_spec`).

    Args:
        store: the database the judges are saved in; None for the built-in scorers only.
    """
    specs = dict(SCORERS)
    if store is not None:
        for saved in list_judges(store):
            specs[saved.scorer_id] = _judge_spec(saved, saved.scorer_id)
    return specs


def scorer_spec(scorer_id: str, store: Store | None = None) -> ScorerSpec:
    """The catalogue entry of ``scorer_id``: a built-in id, ``judge:<slug>`` (latest version) or
    ``judge:<slug>@v<n>`` (that version, also of a deleted judge, as stored runs name them).

    Raises:
        InvalidInputError: unknown id, no such judge or version, or a judge id without a store.
    """
    spec = SCORERS.get(scorer_id)
    if spec is not None:
        return spec
    if parse_scorer_id(scorer_id) is None:
        raise InvalidInputError(
            f"unknown scorer {scorer_id!r}; known: {', '.join(SCORERS)}, or judge:<name> for a saved judge",
            field="scorer",
        )
    if store is None:
        raise InvalidInputError(
            f"{scorer_id!r} is a saved judge: pass the store it is saved in (create_scorer(..., store=Store()))",
            field="scorer",
        )
    try:
        saved = get_judge(store, scorer_id)
    except KeyError as exc:
        raise InvalidInputError(f"{exc.args[0]} ({scorer_id!r})", field="scorer") from None
    return _judge_spec(saved, scorer_id)


def higher_is_better(scorer_id: str) -> bool:
    """The direction of a scorer named in a run: False for lower-is-better scorers (toxicity, bias,
    hallucination), True for the others.

    Saved judges (``judge:...`` ids) are always higher-is-better: each of their score rules maps the
    good answer to 1 (:mod:`scorers.catalogue.judge_builder`). An id that is not in the catalogue
    (a scorer from Python code) is taken as higher-is-better, the convention of every scorer here.
    """
    spec = SCORERS.get(scorer_id)
    return True if spec is None else spec.higher_is_better


TARGET_LABELS = {"ground_truth": "vs ground truth", "input": "vs input"}
"""How a resolved ``target`` option is shown next to a scorer's name."""


def scorer_label(scorer_id: str, options: Mapping[str, Any] | None = None) -> str:
    """The display name of a scorer named in a run, with its direction when lower is better and
    its comparison target when it has one (the run's ``options``).

    >>> scorer_label("toxicity"), scorer_label("textual-difference", {"target": "input"})
    ('Toxicity (lower is better)', 'Textual difference (vs input)')
    """
    spec = SCORERS.get(scorer_id)
    if spec is None:
        return scorer_id
    notes = [] if spec.higher_is_better else [spec.direction]
    target = (options or {}).get("target")
    if target in TARGET_LABELS:
        notes.append(TARGET_LABELS[target])
    return f"{spec.name} ({', '.join(notes)})" if notes else spec.name


def scoring_differences(scorer_id: str, options_a: Mapping[str, Any], options_b: Mapping[str, Any]) -> list[str]:
    """The options two runs gave one scorer differently, where they change what its score measures.

    A catalogue scorer's options missing from a run count as their defaults; the options of
    :data:`~scorers.catalogue.spec.PRESENTATION_OPTIONS` are left out. Scores made with different
    such options (textual difference against the ground truth in one run and the input in the
    other, another scale or evaluation mode) are not comparable item by item.

    Returns:
        One ``"target: 'ground_truth' against 'input'"`` per option that differs (run a's value
        first), in name order; empty when the scores measure the same thing.

    >>> scoring_differences("textual-difference", {"target": "ground_truth"}, {"target": "input", "scale": 1.0})
    ["target: 'ground_truth' against 'input'"]
    """
    spec = SCORERS.get(scorer_id)
    defaults = {o.name: o.default for o in spec.options} if spec is not None else {}
    # As stored (JSON): a default given as a tuple is read back as a list.
    a, b = (
        {k: list(v) if isinstance(v, tuple) else v for k, v in {**defaults, **o}.items()}
        for o in (options_a, options_b)
    )
    names = sorted((set(a) | set(b)) - set(PRESENTATION_OPTIONS))
    return [f"{name}: {a.get(name)!r} against {b.get(name)!r}" for name in names if a.get(name) != b.get(name)]


def unlike_scorers(
    scorer_ids: Iterable[str], options_a: Mapping[str, Mapping[str, Any]], options_b: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[str]]:
    """Of ``scorer_ids`` (scored by two runs), those whose options make their scores measure different things.

    Args:
        scorer_ids: the scorers both runs have.
        options_a, options_b: scorer id → the options each run scored with (missing: none recorded).

    Returns:
        Scorer id → its :func:`scoring_differences`, for the scorers that have some, in ``scorer_ids`` order.
    """
    found = {s: scoring_differences(s, options_a.get(s, {}), options_b.get(s, {})) for s in scorer_ids}
    return {s: differ for s, differ in found.items() if differ}


def resolve_options(scorer_id: str, options: Mapping[str, Any] | None, *, ground_truth_mapped: bool) -> dict[str, Any]:
    """The options to record in a run: a ``target`` of ``"auto"`` (or none, for a scorer that has
    the option) becomes ``"ground_truth"`` when the run maps a ground truth, else ``"input"``.

    Every row of the run is then compared with the same target, and the run says which.

    Args:
        scorer_id: a catalogue id (others are returned unchanged).
        options: the chosen options.
        ground_truth_mapped: whether the run's rows carry a ground truth (a mapped column).
    """
    out = dict(options or {})
    spec = SCORERS.get(scorer_id)
    if spec is not None and any(o.name == "target" for o in spec.options) and out.get("target", "auto") == "auto":
        out["target"] = "ground_truth" if ground_truth_mapped else "input"
    return out


def needed_fields(spec: ScorerSpec, options: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The run fields a scorer with these options needs in every row: its ``requires``, its resolved
    ``target`` and, for prompt alignment in user or system mode, that prompt (both mode needs a user
    prompt or a system message, and the scorer checks which)."""
    options = options or {}
    fields = list(spec.requires)
    target = options.get("target")
    if target in ("ground_truth", "input"):
        fields.append(target)
    mode = options.get("evaluation_mode", "both")
    if spec.id == "prompt-alignment" and mode != "both":
        fields.append("system" if mode == "system" else "input")
    return tuple(dict.fromkeys(fields))


def unmapped_fields(
    scorer_options: Mapping[str, Mapping[str, Any]], mapped: Mapping[str, Any], store: Store | None = None
) -> dict[str, list[str]]:
    """The fields the chosen scorers need that no dataset column is mapped to.

    Args:
        scorer_options: scorer id → its options, with ``target`` resolved (:func:`resolve_options`).
        mapped: role → column (a falsy column: not mapped); roles are the run fields' names.
        store: where saved judges are read from.

    Returns:
        field → the display names of the scorers that need it, in the scorers' order; empty when
        every needed field is mapped.
    """
    out: dict[str, list[str]] = {}
    for sid, options in scorer_options.items():
        spec = scorer_spec(sid, store)
        needed = list(needed_fields(spec, options))
        if spec.id == "prompt-alignment" and not (mapped.get("input") or mapped.get("system")):
            needed.append("input")
        for name in dict.fromkeys(needed):
            if not mapped.get(name):
                out.setdefault(name, []).append(spec.name)
    return out


def create_scorer(
    scorer_id: str,
    options: Mapping[str, Any] | None = None,
    *,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
    store: Store | None = None,
) -> Scorer:
    """Build a catalogue scorer by id.

    Args:
        scorer_id: a key of :data:`SCORERS`, or a saved judge: ``judge:<slug>`` (its latest
            version) or ``judge:<slug>@v<n>`` (version n). A saved judge's scorer always has
            the versioned id, so the runs it scores record the version.
        options: the scorer's options (see its :class:`OptionSpec` list); unknown ones are rejected
            (saved judges have none: their scale is part of the definition).
        settings: judge settings for LLM-judged scorers (default: resolved from secrets/env).
        cache: a judge-reply cache (e.g. :class:`scorers.runs.store.Store`).
        store: where saved judges are read from; needed for ``judge:`` ids only.

    Raises:
        InvalidInputError: unknown scorer id, judge or version, or option, or an option out of range.
    """
    spec = scorer_spec(scorer_id, store)
    options = dict(options or {})
    unknown = set(options) - {o.name for o in spec.options}
    if unknown:
        known = ", ".join(o.name for o in spec.options) or "none"
        raise InvalidInputError(
            f"{spec.name} has no option(s) {', '.join(sorted(unknown))}; its options: {known}", field="options"
        )
    return CheckedScorer(spec.build(options, settings, cache), spec, options)  # type: ignore[return-value]
