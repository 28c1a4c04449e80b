"""One way to build a catalogue metric: declare it once, get its factory and catalogue entry.

A verdict-style LLM metric is declared in one place, a :class:`Metric`: its scorer
class (schema, prompt and formula live there), its options (:class:`Param`: the
check, the default and the catalogue form field together) and what the catalogue
shows (inputs, formula, range, notes). :func:`factory` turns the declaration into
the public ``create_<name>_scorer`` function and :func:`specs` into the ``SPECS``
tuple that :mod:`scorers.catalogue.registry` collects. Adding a scorer is one
module: the scorer class, a :class:`Metric`, ``create_x_scorer = factory(METRIC, ...)``
and ``SPECS = specs(METRIC)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scorers.catalogue.metrics._llm import (
    JudgedScorer,
    Option,
    number,
    read_options,
    resolve_settings,
    text_list,
)
from scorers.catalogue.spec import SCALE, OptionSpec, ScorerSpec
from scorers.core.errors import InvalidInputError
from scorers.core.judge import JudgeCache, JudgeSettings


@dataclass(frozen=True)
class Param:
    """One option of a metric: how it is checked and how the catalogue form shows it.

    Attributes:
        name: snake_case name (camelCase spellings are accepted too, see :func:`read_options`).
        default: its value when not given.
        check: ``check(value, name)`` returns the cleaned value or raises ``InvalidInputError``.
        label, kind, help, choices: the catalogue form field (:class:`OptionSpec`); an empty
            ``kind`` marks a Python-only option (e.g. a callable) that the form does not offer.
        required: the checker also runs on the default when the option is not given.
    """

    name: str
    default: Any
    check: Callable[[Any, str], Any]
    label: str = ""
    kind: str = ""
    help: str = ""
    choices: tuple[str, ...] = ()
    required: bool = False

    @property
    def option(self) -> Option:
        """The :class:`Option` that :func:`read_options` checks."""
        return Option(self.default, self.check, self.required)

    @property
    def spec(self) -> OptionSpec | None:
        """The catalogue form field, or None for a Python-only option."""
        if not self.kind:
            return None
        return OptionSpec(self.name, self.label, self.kind, self.default, self.choices, self.help)


SCALE_PARAM = Param("scale", SCALE.default, number(exclusive_minimum=0), SCALE.label, SCALE.kind, SCALE.help)

CONTEXT_PARAM = Param(
    "context", (), text_list, "Context", "list", "Context passages used when a run has no context of its own."
)


@dataclass(frozen=True)
class Metric:
    """The declaration of one catalogue metric (see the module docstring).

    ``scorer`` is built as ``scorer(settings, cache, **checked_options)``; ``nested``
    maps Mastra's nested option shapes onto the flat option names, e.g.
    ``{"penalties": {"missingContextPerItem": "missing_context_penalty"}}`` (see
    :func:`flatten_options`); the other fields are those of :class:`ScorerSpec`.
    """

    id: str
    name: str
    scorer: type[JudgedScorer]
    params: tuple[Param, ...]
    inputs: tuple[str, ...]
    measures: str
    formula: str
    higher_is_better: bool
    notes: str
    example: Mapping[str, Any] | None = None
    score_range: str = "0..1"
    judge_calls: int = 1
    nested: Mapping[str, Any] = field(default_factory=dict)
    checks: Mapping[str, Option] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", {p.name: p.option for p in self.params})

    def build(
        self,
        model: str | None,
        options: Mapping[str, Any] | None,
        settings: JudgeSettings | None,
        cache: JudgeCache | None,
        keywords: Mapping[str, Any],
    ) -> JudgedScorer:
        """The scorer for these options (see :func:`factory`).

        The scorer's ``options`` are its catalogue options, what a run records; None (not known) when a
        Python-only option (a callable) is given: what it does cannot be recorded.
        """
        opts = read_options(flatten_options(options, self.nested), flatten_options(keywords, self.nested), self.checks)
        scorer = self.scorer(resolve_settings(model, settings), cache, **opts)
        python_only = any(p.spec is None and opts[p.name] != p.default for p in self.params)
        scorer.options = None if python_only else {p.name: opts[p.name] for p in self.params if p.spec is not None}
        return scorer


def flatten_options(options: Mapping[str, Any] | None, nested: Mapping[str, Any], where: str = "options") -> Any:
    """``options`` with Mastra's nested shapes written as flat options.

    ``nested`` maps a nested option's keys to flat names, or to a further mapping for
    deeper nesting: with ``{"scoring": {"discrepancyThreshold": "discrepancy_threshold"}}``,
    ``{"scoring": {"discrepancyThreshold": 0.3}}`` becomes ``{"discrepancy_threshold": 0.3}``.
    Other entries pass through unchanged (``read_options`` checks them).

    Raises:
        InvalidInputError: a nested option that is not a mapping, or holds an unknown key
            (the error names it and lists the known ones).
    """
    if not isinstance(options, Mapping) or not nested:
        return options
    flat: dict[str, Any] = {}
    for key, value in options.items():
        shape = nested.get(key)
        if shape is None:
            flat[key] = value
            continue
        path = f"{where}.{key}"
        if not isinstance(value, Mapping):
            raise InvalidInputError(f"{path} must be an object, got {type(value).__name__}", field=path)
        unknown = set(value) - set(shape)
        if unknown:
            raise InvalidInputError(
                f"unknown key(s) {', '.join(sorted(map(str, unknown)))} in {path}; expected {', '.join(shape)}",
                field=path,
            )
        for inner, target in shape.items():
            if inner not in value:
                continue
            if isinstance(target, str):
                flat[target] = value[inner]
            else:
                flat.update(flatten_options({inner: value[inner]}, {inner: target}, path))
    return flat


def factory(metric: Metric, doc: str) -> Callable[..., Any]:
    """The public ``create_<name>_scorer`` function of ``metric``.

    Its signature is ``(model=None, options=None, *, settings=None, cache=None,
    **option_kwargs)``; options are checked at construction.

    Args:
        metric: the declaration.
        doc: the first paragraphs of its docstring (what it scores, its formula and
            options); the common ``Args``/``Raises`` part is appended.
    """

    def create(
        model: str | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        settings: JudgeSettings | None = None,
        cache: JudgeCache | None = None,
        **option_kwargs: Any,
    ) -> JudgedScorer:
        return metric.build(model, options, settings, cache, option_kwargs)

    create.__name__ = create.__qualname__ = f"create_{metric.id.replace('-', '_')}_scorer"
    create.__doc__ = doc.rstrip() + FACTORY_ARGS
    return create


FACTORY_ARGS = """

    Args:
        model: ``"openai/gpt-4o-mini"`` or a bare model name; overrides ``settings.model``.
        options: the options above, as a mapping; snake_case or camelCase names.
        settings: the judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.
        **option_kwargs: options as keyword arguments (they win over ``options``).

    Returns:
        The scorer; ``run(payload)`` returns a :class:`~scorers.core.base.ScoreResult`.

    Raises:
        InvalidInputError: an unknown option, or an option out of range (the error names it).
    """


def specs(metric: Metric) -> tuple[ScorerSpec, ...]:
    """The catalogue entries (``SPECS``) of ``metric``."""
    return (
        ScorerSpec(
            id=metric.id,
            name=metric.name,
            uses_judge=True,
            judge_calls=metric.judge_calls,
            inputs=metric.inputs,
            measures=metric.measures,
            formula=metric.formula,
            score_range=metric.score_range,
            higher_is_better=metric.higher_is_better,
            options=tuple(p.spec for p in metric.params if p.spec is not None),
            build=lambda o, s, c: metric.build(None, o, s, c, {}),
            example=metric.example,
            notes=metric.notes,
        ),
    )
