"""Generate the responses to compare: each dataset row × each prompt or model variant.

The seeds' ``runEvals`` takes a ``target`` (an agent or a model) that produces the
output of every item before the scorers run (MASTRA_SCORERS.md). Here a target is a
:class:`Variant`: a model, a system prompt and a prompt template over the dataset's
columns. :func:`generate_responses` asks every variant to answer every row through
:meth:`scorers.core.judge.Judge.complete_text` (concurrently, cached, failures recorded
with a status and never dropped), and :func:`comparison_items` turns the responses
into :class:`~scorers.runs.runner.EvalItem` s for :func:`~scorers.runs.runner.run_evals`, each
with the groups ``variant``, ``model`` and ``row_id`` so the results of two variants
can be paired row by row (:func:`scorers.analysis.compare.paired`).

Responses that already exist (several response columns, or one response column and a
variant or model column) become items with :func:`items_from_responses`. Either way every
variant is judged on one :class:`JudgingBasis`: the dataset's user prompt, plus its system
message column only when asked.

Typical use::

    variants = [Variant("A", "gpt-4o-mini", prompt_template="{question}"),
                Variant("B", "gpt-4o-mini", system_prompt="Be brief.", prompt_template="{question}")]
    responses = generate_responses(rows, variants, settings=settings, cache=store)
    items = comparison_items(rows, responses, input_col="question", ground_truth_col="answer")
    result = run_evals(items, scorers, store=store)
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from scorers.core.base import JudgeUsage
from scorers.core.errors import InvalidInputError, RateLimitedError, ScorerError, ScoreStatus
from scorers.core.judge import Judge, JudgeCache, JudgeSettings
from scorers.core.pricing import cost_usd
from scorers.core.workers import map_in_threads
from scorers.runs.datasets import DatasetError, LoadedDataset, cell_text
from scorers.runs.runner import EvalItem

# A placeholder is a column name in braces: letters, digits, "_", "." and "-", single spaces
# between words, starting with a letter or "_" (Unicode letters included). Any other brace is
# literal text, so a JSON example needs no escaping; "{{" and "}}" are literal braces.
_COLUMN = r"[^\W\d][\w.\-]*(?: [\w.\-]+)*"
_TOKEN = re.compile(r"\{\{|\}\}|\{(" + _COLUMN + r")\}")

ROW_ID_GROUP = "row_id"
"""The group that holds a response's dataset row id (pairs of variants are matched on it)."""


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


@dataclass(frozen=True)
class Variant:
    """One way of answering the dataset: a model with a system prompt and a prompt template.

    Attributes:
        name: a short unique label shown in every table and chart, e.g. ``"A"`` or ``"terse prompt"``.
        model: the target model, ``"provider/model"`` or a bare name (as :class:`~scorers.core.judge.JudgeSettings`).
        system_prompt: the system message sent first; "" for none. Sent as written (no placeholders).
        prompt_template: the user message, with dataset columns as placeholders (``{question}``);
            see :func:`template_columns`.
        temperature: sampling temperature in [0, 2]; None for the settings' temperature.
        max_tokens: cap on the response in tokens (>= 1); None for the settings' cap.
        seed: sampling seed; None for the settings' seed.
    """

    name: str
    model: str
    system_prompt: str = ""
    prompt_template: str = "{input}"
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None


def template_columns(template: str) -> list[str]:
    """The dataset columns a prompt template uses, in order of first use.

    A placeholder is a column name in braces, ``{question}`` or ``{user question}``
    (letters, digits, ``_``, ``.``, ``-`` and single spaces; it starts with a letter or
    ``_``). Every other brace is literal text, so ``{"answer": "..."}`` needs no escaping;
    write ``{{question}}`` for a literal ``{question}``.

    Args:
        template: the prompt template.

    Returns:
        The column names, e.g. ``["question", "context"]`` (``[]`` when there is none).

    >>> template_columns('Q: {question}\\nReply as {"answer": ...} using {context}; {{literal}}')
    ['question', 'context']
    """
    used: list[str] = []
    for match in _TOKEN.finditer(template):
        name = match.group(1)
        if name is not None and name not in used:
            used.append(name)
    return used


def validate_variant(variant: Variant, columns: Sequence[str]) -> None:
    """Check a variant against the dataset's columns before any call.

    Args:
        variant: the variant.
        columns: the dataset's column names.

    Raises:
        InvalidInputError: an empty name or model, a parameter out of range, a template
            that uses no column, or a placeholder that is not a column (naming the
            placeholder, its line and column in the template, and the columns available).
    """
    where = f"variants.{variant.name or '?'}"
    if not isinstance(variant.name, str) or not variant.name.strip():
        raise InvalidInputError("a variant needs a name (e.g. 'A')", field="variants.name")
    if not isinstance(variant.model, str) or not variant.model.removeprefix("openai/").strip():
        raise InvalidInputError("the model is empty; give a model such as gpt-4o-mini", field=f"{where}.model")
    t = variant.temperature
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 2):
        raise InvalidInputError(f"temperature must be a number in [0, 2], got {t!r}", field=f"{where}.temperature")
    m = variant.max_tokens
    if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
        raise InvalidInputError(f"max_tokens must be a whole number >= 1, got {m!r}", field=f"{where}.max_tokens")
    if variant.seed is not None and (isinstance(variant.seed, bool) or not isinstance(variant.seed, int)):
        raise InvalidInputError(f"seed must be a whole number, got {variant.seed!r}", field=f"{where}.seed")
    available = [str(c) for c in columns]
    listed = ", ".join("{" + c + "}" for c in available) or "none"
    template = variant.prompt_template
    found = False
    for match in _TOKEN.finditer(template):
        name = match.group(1)
        if name is None:
            continue
        found = True
        if name not in available:
            raise InvalidInputError(
                f"the prompt template uses {{{name}}} at {_position(template, match.start())}, but the dataset "
                f"has no column {name!r}; its columns: {listed}. Write {{{{{name}}}}} for literal braces.",
                field=f"{where}.prompt_template",
            )
    if not found:
        raise InvalidInputError(
            f"the prompt template uses no dataset column, so every row would get the same prompt; "
            f"add a placeholder such as {{{available[0] if available else 'question'}}} (columns: {listed})",
            field=f"{where}.prompt_template",
        )


def render_variant(variant: Variant, row: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat messages a variant sends for one dataset row.

    The template is filled in one pass: a value that itself contains ``{column}`` stays
    literal. Values are the cells as text (a float such as ``3.0`` is written ``3``).

    Args:
        variant: the variant (its template checked by :func:`validate_variant`).
        row: the row, column name → value.

    Returns:
        ``[{"role": "system", ...}]`` when the variant has a system prompt, then
        ``{"role": "user", "content": <the filled template>}``.

    Raises:
        InvalidInputError: the row lacks a column the template uses, or that cell is empty.

    >>> render_variant(Variant("A", "m", "Be brief.", "Q: {q}"), {"q": "Why {x}?"})
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Q: Why {x}?'}]
    """

    def fill(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        if name not in row:
            raise InvalidInputError(
                f"the row has no column {name!r} (the prompt template of variant {variant.name!r} uses it)",
                field=name,
            )
        text = cell_text(row[name])
        if text is None or not text.strip():
            raise InvalidInputError(
                f"the cell is empty, and the prompt template of variant {variant.name!r} uses it", field=name
            )
        return text

    messages = []
    if variant.system_prompt.strip():
        messages.append({"role": "system", "content": variant.system_prompt})
    messages.append({"role": "user", "content": _TOKEN.sub(fill, variant.prompt_template)})
    return messages


@dataclass(frozen=True)
class GeneratedResponse:
    """One variant's response to one dataset row, or why there is none.

    Attributes:
        row_index: the row's position in the dataset (0-based).
        item_id: the row's id (see :func:`generate_responses`).
        variant: the :class:`Variant` that answered.
        text: the response; None when the generation failed.
        status: ``ScoreStatus.SCORED`` when a response was generated, else why not
            (``invalid_input`` for a row the template cannot be filled from, ``judge_refused``
            for a refusal, ``judge_output_truncated`` when cut by the token limit,
            ``rate_limited``, ``api_error``, ``exceeds_context``).
        error: what went wrong (None on success).
        usage: tokens and calls spent (0 when the response came from the cache).
        latency_s: seconds the generation took.
        cached: True when the response came from the cache.
    """

    row_index: int
    item_id: str
    variant: Variant
    text: str | None
    status: ScoreStatus
    error: str | None = None
    usage: JudgeUsage = field(default_factory=JudgeUsage)
    latency_s: float = 0.0
    cached: bool = False

    @property
    def ok(self) -> bool:
        """True when a response was generated."""
        return self.status is ScoreStatus.SCORED

    @property
    def variant_name(self) -> str:
        return self.variant.name

    @property
    def model(self) -> str:
        return self.variant.model


def _check_variants(variants: Sequence[Variant], columns: Sequence[str]) -> None:
    if not variants:
        raise InvalidInputError("give at least one variant to generate responses with", field="variants")
    names = [v.name for v in variants]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InvalidInputError(f"variant names must be distinct; repeated: {', '.join(duplicates)}", field="variants")
    for variant in variants:
        validate_variant(variant, columns)


def _variant_settings(settings: JudgeSettings, variant: Variant) -> JudgeSettings:
    return replace(
        settings,
        model=variant.model,
        temperature=settings.temperature if variant.temperature is None else variant.temperature,
        max_tokens=settings.max_tokens if variant.max_tokens is None else variant.max_tokens,
        seed=settings.seed if variant.seed is None else variant.seed,
    )


def generate_responses(
    rows: Sequence[Mapping[str, Any]],
    variants: Sequence[Variant],
    *,
    settings: JudgeSettings,
    item_ids: Sequence[str] | None = None,
    concurrency: int = 8,
    cache: JudgeCache | None = None,
    cancel: threading.Event | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    max_rate_limit_retries: int = 2,
) -> list[GeneratedResponse]:
    """Ask every variant to answer every row (the seeds' ``runEvals`` ``target`` step).

    Each (row, variant) is one chat request to the variant's model at the endpoint of
    ``settings`` (:meth:`Judge.complete_text`); the variant's temperature, max_tokens and
    seed override the settings' when given. Replies are cached in ``cache`` (e.g. the
    :class:`~scorers.runs.store.Store`), so a rerun with nothing changed makes no call. A row
    the template cannot be filled from, or a failed call, is recorded with its status
    and error (never dropped; a failed call's error names the target model's endpoint, never "the judge"); a rate limit that outlasts the client's own retries is
    tried again up to ``max_rate_limit_retries`` times after its ``Retry-After``.

    Args:
        rows: the dataset, one mapping of column → value per row.
        variants: the variants, with distinct names.
        settings: endpoint, key, timeout and default sampling parameters.
        item_ids: one id per row; default the row index as text ("0", "1", ...).
        concurrency: requests in flight at once, >= 1.
        cache: where replies are kept and looked up; None for no cache.
        cancel: set it to stop: requests not started are not made, and their
            (row, variant) pairs are absent from the result.
        on_progress: called as ``(done, total)`` after each (row, variant), from a worker thread.
        max_rate_limit_retries: extra attempts for a request that stayed rate limited.

    Returns:
        One :class:`GeneratedResponse` per (row, variant) done, in row order, then variant order.

    Raises:
        InvalidInputError: no variant, repeated variant names, a variant whose template names a
            column the rows do not have (see :func:`validate_variant`), or ``item_ids`` of the
            wrong length or with repeats; nothing is called then.
        JudgeConfigError: no API key and no base URL (before any call).
        ValueError: ``concurrency`` < 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    columns = list(dict.fromkeys(str(c) for row in rows for c in row))
    _check_variants(variants, columns)
    if item_ids is None:
        item_ids = [str(i) for i in range(len(rows))]
    else:
        item_ids = [str(i) for i in item_ids]
        if len(item_ids) != len(rows):
            raise InvalidInputError(f"got {len(item_ids)} item ids for {len(rows)} rows", field="item_ids")
        repeated = sorted({i for i in item_ids if item_ids.count(i) > 1})
        if repeated:
            raise InvalidInputError(f"item ids must be distinct; repeated: {', '.join(repeated[:5])}", field="item_ids")
    judges = {v.name: Judge(_variant_settings(settings, v), cache, role="target model") for v in variants}
    cancel = cancel or threading.Event()
    tasks = [(r, v) for r in range(len(rows)) for v in range(len(variants))]

    def one(task: tuple[int, int]) -> GeneratedResponse:
        r, v = task
        variant = variants[v]
        start = time.monotonic()
        usage = JudgeUsage()
        outcome: GeneratedResponse
        try:
            messages = render_variant(variant, rows[r])
            for attempt in range(max_rate_limit_retries + 1):
                try:
                    reply = judges[variant.name].complete_text(messages)
                    break
                except RateLimitedError as exc:
                    if attempt == max_rate_limit_retries or cancel.is_set():
                        raise
                    time.sleep(exc.retry_after if exc.retry_after and exc.retry_after > 0 else 0.5 * 2**attempt)
            outcome = GeneratedResponse(
                r,
                item_ids[r],
                variant,
                reply.text,
                ScoreStatus.SCORED,
                None,
                reply.usage,
                time.monotonic() - start,
                reply.info.cached,
            )
        except ScorerError as exc:
            if getattr(exc, "usage", None) is not None:
                usage += exc.usage
            outcome = GeneratedResponse(
                r, item_ids[r], variant, None, exc.status, str(exc), usage, time.monotonic() - start
            )
        return outcome

    return map_in_threads(
        one, tasks, concurrency=concurrency, cancel=cancel, on_progress=on_progress, thread_name_prefix="generate"
    )


def failed_generations(responses: Sequence[GeneratedResponse]) -> list[GeneratedResponse]:
    """The responses that were not generated (they get no item in :func:`comparison_items`)."""
    return [r for r in responses if not r.ok]


def generation_costs(responses: Sequence[GeneratedResponse]) -> dict[str, float | None]:
    """Per variant name: the USD cost of its generations (list prices of :mod:`scorers.core.pricing`).

    None for a variant whose model has no known price; cached responses cost 0.
    Pass it as ``costs`` to :func:`scorers.analysis.compare.leaderboard`.
    """
    totals: dict[str, tuple[str, int, int]] = {}
    for r in responses:
        model, p, c = totals.get(r.variant.name, (r.variant.model, 0, 0))
        totals[r.variant.name] = (model, p + r.usage.prompt_tokens, c + r.usage.completion_tokens)
    return {name: cost_usd(model, p, c) for name, (model, p, c) in totals.items()}


def _run_payload(user: str | None, system: str | None, output: str | None, ground_truth: str | None) -> dict[str, Any]:
    payload_input: dict[str, Any] = {"inputMessages": [{"role": "user", "content": user or ""}]}
    if system:
        payload_input["systemMessages"] = [{"role": "system", "content": system}]
    payload: dict[str, Any] = {"input": payload_input}
    if output is not None:  # no response (a blank cell): no output, so every scorer reports missing_input
        payload["output"] = {"role": "assistant", "text": output}
    if ground_truth is not None:  # mapped: carried in every row, "" when blank (missing_input, never the input)
        payload["ground_truth"] = ground_truth
    return payload


def _column_value(row: Mapping[str, Any], column: str, what: str) -> str | None:
    if column not in row:
        raise InvalidInputError(
            f"the rows have no {what} column {column!r}; columns: {', '.join(map(str, row))}",
            field=what.replace(" ", "_") + "_col",
        )
    return cell_text(row[column])


@dataclass(frozen=True)
class JudgingBasis:
    """What every variant's responses are judged against: the same text for every variant of a row.

    A comparison is fair only when the scorers see the same question for every variant: a
    variant's own system prompt or filled prompt template is what it was *asked*, not what
    the responses are compared on. The default is the dataset's user prompt; adding the
    dataset's system message (one column, the same for every variant) is an explicit choice.

    Attributes:
        input_col: the dataset column holding the user prompt (the bare question, never a
            variant's filled template).
        system_col: a dataset column holding a system message the judges also see, or None
            (the default: the user prompt only).
    """

    input_col: str
    system_col: str | None = None

    def describe(self) -> str:
        """One sentence for the page, the stored run and the report.

        >>> JudgingBasis("question").describe()
        "Every variant is judged against the dataset's user prompt (column 'question') only; a variant's own system prompt and prompt template are not shown to the scorers."
        """
        what = f"the dataset's user prompt (column {self.input_col!r})"
        if self.system_col is not None:
            what += f" and the dataset's system message (column {self.system_col!r})"
        else:
            what += " only"
        return (
            f"Every variant is judged against {what}; a variant's own system prompt and prompt template "
            "are not shown to the scorers."
        )

    def record(self) -> dict[str, Any]:
        """The basis as stored in a run's ``config["judging_basis"]``: the columns and :meth:`describe`."""
        return {"input_col": self.input_col, "system_col": self.system_col, "description": self.describe()}


def judging_basis_text(run: Mapping[str, Any]) -> str:
    """What a stored run's responses were judged against, as the Compare page and the reports say it.

    Args:
        run: a run record (:meth:`scorers.runs.store.Store.get_run`); its ``config["judging_basis"]``
            is :meth:`JudgingBasis.record`.

    Returns:
        The recorded :meth:`JudgingBasis.describe`, or a sentence saying it was not recorded.
    """
    config = run.get("config") or {}
    basis = config.get("judging_basis")
    if basis:
        return str(basis["description"])
    if config.get("source") == "compare":
        return (
            "Judging basis not recorded (a run made before it was): a system-prompt variant may have been judged "
            "against its own system prompt, the other variants against the user prompt only."
        )
    return "Each response is judged against its row's own input, as mapped when the run was made."


def comparison_items(
    rows: Sequence[Mapping[str, Any]],
    responses: Sequence[GeneratedResponse],
    *,
    input_col: str,
    ground_truth_col: str | None = None,
    system_col: str | None = None,
    group_cols: Sequence[str] = (),
) -> list[EvalItem]:
    """Items to score from generated responses: one per successful response, all on one basis.

    Every variant's response to a row is judged against the same text (:class:`JudgingBasis`):
    the row's user prompt, plus the row's system message when ``system_col`` is given. A
    variant's own system prompt and filled template never reach the scorers, so a
    system-prompt variant is not judged against rules the other variants never saw.

    Args:
        rows: the dataset the responses were generated from (same order).
        responses: :func:`generate_responses` output; failed ones get no item (list them
            with :func:`failed_generations`).
        input_col: the column holding the user's question: the scorers judge the response
            against it (not against the filled template).
        ground_truth_col: the reference answer column, or None. When given, every payload
            carries ``ground_truth`` (``""`` for a blank cell: scorers that compare with it
            report that row as ``missing_input``).
        system_col: a dataset column whose text every variant's response is also judged
            against as the system message, or None (the default: the user prompt only).
        group_cols: dataset columns to keep as groups for breakdowns (e.g. ``category``).

    Returns:
        :class:`EvalItem` s with ``item_id`` ``f"{item_id}::{variant}"``, a seed-shaped
        payload and groups ``{"variant": name, "model": model, "row_id": item_id}`` plus
        one per ``group_cols`` column, in the order of ``responses``.

    Raises:
        InvalidInputError: the rows have no ``input_col`` (or ``ground_truth_col``, ``system_col``).
    """
    items = []
    for r in responses:
        if not r.ok:
            continue
        row = rows[r.row_index]
        user = _column_value(row, input_col, "input")
        truth = (_column_value(row, ground_truth_col, "ground truth") or "") if ground_truth_col else None
        system = _column_value(row, system_col, "system") if system_col else None
        items.append(
            EvalItem(
                f"{r.item_id}::{r.variant.name}",
                _run_payload(user, system, r.text, truth),
                {
                    **_row_groups(row, group_cols),
                    "variant": r.variant.name,
                    "model": r.variant.model,
                    ROW_ID_GROUP: r.item_id,
                },
            )
        )
    return items


def _row_groups(row: Mapping[str, Any], group_cols: Sequence[str]) -> dict[str, Any]:
    return {column: _column_value(row, column, "group") for column in group_cols}


def guess_variant_column(frame: pd.DataFrame, id_col: str | None, *, exclude: Sequence[str | None] = ()) -> str | None:
    """The column most likely to name the variant (or model) in the long layout, or None.

    In one row per response, the variant column's values repeat across ids (every
    question is answered by each model) but not within one id (a model answers a
    question once). Candidates are the columns other than ``id_col`` and ``exclude``
    whose values are distinct within every id and take between 2 and half the rows'
    count of values; among them the one with the fewest distinct values wins, a name
    containing "model" or "variant" first.

    Args:
        frame: the dataset.
        id_col: the column identifying the question, or None (then no column qualifies).
        exclude: columns that play another role (question, response, ground truth ...).

    Returns:
        A column name, or None.

    >>> df = pd.DataFrame({"qid": [1, 1, 2, 2], "model": ["a", "b", "a", "b"], "text": ["w", "x", "y", "z"]})
    >>> guess_variant_column(df, "qid", exclude=["text"])
    'model'
    """
    if id_col is None or id_col not in frame.columns or len(frame) < 2:
        return None
    ids = frame[id_col].astype(str)
    best: tuple[tuple[int, int], str] | None = None
    for column in frame.columns:
        name = str(column)
        if name == id_col or name in exclude:
            continue
        values = frame[column].astype(str)
        n_values = values.nunique()
        if not 2 <= n_values <= len(frame) // 2:
            continue
        if pd.DataFrame({"id": ids, "v": values}).duplicated().any():
            continue
        named = 0 if any(hint in name.lower() for hint in ("model", "variant", "system", "engine")) else 1
        rank = (named, n_values)
        if best is None or rank < best[0]:
            best = (rank, name)
    return None if best is None else best[1]


def items_from_responses(
    dataset_frame: pd.DataFrame,
    *,
    input_col: str,
    response_cols: Mapping[str, str] | None = None,
    variant_col: str | None = None,
    output_col: str | None = None,
    system_col: str | None = None,
    ground_truth_col: str | None = None,
    id_col: str | None = None,
    model_col: str | None = None,
    models: Mapping[str, str] | None = None,
    group_cols: Sequence[str] = (),
    source: LoadedDataset | None = None,
) -> list[EvalItem]:
    """Items to score from responses that already exist in a dataset, in one of two layouts.

    * Wide: one row per question and one column per variant: ``response_cols`` maps each
      variant name to its response column (``{"A": "answer_a", "B": "answer_b"}``).
    * Long: one row per response: ``variant_col`` names the variant (or the model) that
      wrote the response in ``output_col``.

    Pairs are matched on the ``row_id`` group: the ``id_col`` value when given; else, in
    the wide layout, the row's label, and in the long layout the question text (so the
    rows of one question share it).

    Args:
        dataset_frame: the dataset.
        input_col: the user's question.
        response_cols: wide layout: variant name → response column.
        variant_col: long layout: the column naming the variant or model.
        output_col: long layout: the response column.
        system_col: a system message column, or None.
        ground_truth_col: a reference answer column, or None.
        id_col: a column identifying the question, or None.
        model_col: long layout: a model column (the ``model`` group), or None.
        models: wide layout: variant name → model (the ``model`` group), when known.
        group_cols: columns to keep as groups for breakdowns (e.g. ``category``).
        source: the loaded file ``dataset_frame`` is the frame of: a row's error then names
            the file and the 1-based line (CSV, JSON Lines) or row it came from; without it,
            the row's 1-based position in the frame.

    Returns:
        One :class:`EvalItem` per response with groups ``variant``, ``row_id`` and, when
        known, ``model``; ``item_id`` is ``f"{row_id}::{variant}"``. A missing or blank
        response cell (a CSV's empty cell is read as ``""``) gives an item whose output is
        None, so the run records it as invalid input instead of dropping it or scoring it.

    Raises:
        InvalidInputError: neither or both layouts given, a column not in the frame.
        DatasetError: a row with an empty variant name, or the same (row id, variant) on a
            second row (the row is named).
    """
    wide = response_cols is not None
    long = variant_col is not None or output_col is not None
    if wide == long:
        raise InvalidInputError(
            "give either response_cols (one response column per variant) or variant_col and output_col "
            "(one row per response)",
            field="response_cols",
        )
    if long and (variant_col is None or output_col is None):
        raise InvalidInputError("the long layout needs both variant_col and output_col", field="variant_col")
    wanted = [
        input_col,
        system_col,
        ground_truth_col,
        id_col,
        model_col,
        variant_col,
        output_col,
        *((response_cols or {}).values()),
        *group_cols,
    ]
    columns = [str(c) for c in dataset_frame.columns]
    for column in wanted:
        if column is not None and column not in columns:
            raise InvalidInputError(f"no column {column!r}; the columns are {', '.join(columns)}", field=column)
    if wide and not response_cols:
        raise InvalidInputError(
            "response_cols is empty: map each variant name to its response column", field="response_cols"
        )
    items: list[EvalItem] = []
    seen: set[str] = set()

    def row_error(position: int, message: str, column: str) -> DatasetError:
        if source is not None:
            return source.row_error(position, message, field=column)
        return DatasetError(message, row=position + 1, field=column)

    for position, (label, row) in enumerate(zip(dataset_frame.index, dataset_frame.to_dict("records"), strict=True)):
        user = cell_text(row[input_col])
        system = cell_text(row[system_col]) if system_col else None
        truth = (cell_text(row[ground_truth_col]) or "") if ground_truth_col else None
        if wide:
            row_id = cell_text(row[id_col]) if id_col else str(label)
            responses = [(name, row[column], (models or {}).get(name)) for name, column in response_cols.items()]
        else:
            row_id = cell_text(row[id_col]) if id_col else user
            name = cell_text(row[variant_col])
            if name is None or not name.strip():
                raise row_error(position, f"the variant cell (column {variant_col!r}) is empty", variant_col)
            responses = [(name, row[output_col], cell_text(row[model_col]) if model_col else None)]
        for name, value, model in responses:
            item_id = f"{row_id}::{name}"
            if item_id in seen:
                key = f"column {id_col!r}" if id_col else f"the question column {input_col!r}"
                layout = "in the variant column" if long else "among the response columns"
                raise row_error(
                    position,
                    f"a second response of variant {name!r} ({layout}) for {row_id!r} of {key}; "
                    "pairs need one response per variant and question"
                    + ("" if long else ": in this layout each row is one question, so its id must not repeat"),
                    id_col or input_col,
                )
            seen.add(item_id)
            groups: dict[str, Any] = {**_row_groups(row, group_cols), "variant": name, ROW_ID_GROUP: row_id}
            if model is not None:
                groups["model"] = model
            text = cell_text(value)
            output = text if text is not None and text.strip() else None  # a blank cell is no response
            items.append(EvalItem(item_id, _run_payload(user, system, output, truth), groups))
    return items


__all__ = [
    "GeneratedResponse",
    "JudgingBasis",
    "ROW_ID_GROUP",
    "Variant",
    "comparison_items",
    "failed_generations",
    "generate_responses",
    "generation_costs",
    "guess_variant_column",
    "items_from_responses",
    "judging_basis_text",
    "render_variant",
    "template_columns",
    "validate_variant",
]
