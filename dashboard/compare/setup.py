"""The Compare page's first tab: a dataset, variants (or existing responses), scorers, and the job."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    InvalidInputError,
    Judge,
    LoadedDataset,
    ScorerError,
    Store,
    create_scorer,
    guess_columns,
)
from scorers.analysis.compare import not_scored_summary
from scorers.analysis.generate import (
    JudgingBasis,
    Variant,
    guess_variant_column,
    items_from_responses,
    template_columns,
    validate_variant,
)
from scorers.catalogue.registry import resolve_options, scorer_spec, scorer_specs
from scorers.core.errors import run_status_label
from scorers.runs.datasets import not_text_notices

from ..budget import budget_form, budget_problem
from ..dataset_picker import pick_dataset, warn_shared_columns
from ..layout import kept_in_session
from ..options import option_widget
from ..results import md_escape
from ..run_view import check_judges
from ..settings import judge_cache, judge_settings
from .common import (
    SESSION,
    sample_datasets,
)
from .job import GenerationPlan, cap_notes, render_job_panel, session_job, start_compare_job, start_job

GENERATE, EXISTING = "Generate responses with variants", "Use existing responses"
WIDE, LONG = "One response column per variant", "One row per response, with a variant or model column"
DEFAULT_SYSTEMS = ("", "Answer in one short sentence.")


def _none(value: str | None) -> str:
    return "— none —" if value is None else value


# ---- 1. dataset, variants, scorers


def _dataset() -> LoadedDataset | None:
    """The chosen dataset, with its size and loading problems shown."""
    dataset = pick_dataset(
        "compare",
        samples=sample_datasets(),
        upload_help="One row per question (to generate responses), or rows with the responses to compare.",
        sample_first=True,
    )
    if dataset is None:
        return None
    st.caption(
        f"{dataset.source_name}: {len(dataset.frame)} rows loaded, {len(dataset.columns)} columns ({dataset.format})."
    )
    for warning in dataset.warnings:
        st.info(warning)
    if dataset.skipped:
        st.warning(f"{len(dataset.skipped)} record(s) of the file were not loaded.")
    return dataset


def _column(
    label: str,
    columns: list[str],
    guess: str | None,
    key: str,
    *,
    optional: bool,
    taken: Sequence[str | None] = (),
    **kw: Any,
) -> str | None:
    """A column for one role: the guess unless another role already uses it; else "none" (optional) or,
    for a required role, an empty "choose…" box (None) that the page reports instead of taking the first column."""
    options: list[str | None] = ([None] if optional else []) + list(columns)
    index = options.index(guess) if guess in options and guess not in taken else None
    if optional and index is None:
        index = 0
    return st.selectbox(label, options, index=index, format_func=_none, placeholder="choose…", key=key, **SESSION, **kw)


def _variant_form(n: int, columns: list[str], input_col: str, default_model: str, token: str) -> Variant | None:
    """One variant's widgets; the variant, or None when it is not valid (the problem is shown)."""
    key = f"compare_v{n}_{token}"
    with st.container(border=True):
        c1, c2, c3, c4, c5 = st.columns([2, 3, 2, 2, 2])
        name = c1.text_input("Name", value=chr(ord("A") + n), key=f"{key}_name", **SESSION)
        model = c2.text_input("Target model", value=default_model, key=f"{key}_model", **SESSION)
        temperature = c3.number_input(
            "Temperature",
            min_value=0.0,
            max_value=2.0,
            value=None,
            step=0.1,
            key=f"{key}_temperature",
            placeholder="sidebar's",
            help="Empty: the sidebar's temperature.",
            **SESSION,
        )
        max_tokens = c4.number_input(
            "Max tokens",
            min_value=1,
            value=None,
            step=64,
            key=f"{key}_max_tokens",
            placeholder="server default",
            **SESSION,
        )
        seed = c5.number_input("Seed", value=None, step=1, key=f"{key}_seed", placeholder="sidebar's", **SESSION)
        left, right = st.columns(2)
        system = left.text_area(
            "System prompt",
            value=DEFAULT_SYSTEMS[n] if n < len(DEFAULT_SYSTEMS) else "",
            key=f"{key}_system",
            height=100,
            **SESSION,
        )
        template = right.text_area(
            "Prompt template",
            value="{" + input_col + "}",
            key=f"{key}_template",
            height=100,
            help="The user message; dataset columns in braces, e.g. {" + input_col + "}. "
            "Write {{ and }} for literal braces.",
            **SESSION,
        )
        variant = Variant(
            name=name.strip(),
            model=model.strip(),
            system_prompt=system,
            prompt_template=template,
            temperature=None if temperature is None else float(temperature),
            max_tokens=None if max_tokens is None else int(max_tokens),
            seed=None if seed is None else int(seed),
        )
        try:
            validate_variant(variant, columns)
        except InvalidInputError as exc:
            st.error(str(exc))
            return None
        st.caption(md_escape("Uses column(s): " + ", ".join(template_columns(template))))
        return variant


def _variants(dataset: LoadedDataset, input_col: str, token: str) -> list[Variant] | None:
    count = st.number_input(
        "Number of variants", min_value=1, max_value=6, value=2, step=1, key="compare_n_variants", **SESSION
    )
    default_model = st.session_state.get("judge_model") or "gpt-4o-mini"
    variants = [_variant_form(n, dataset.columns, input_col, default_model, token) for n in range(int(count))]
    if any(v is None for v in variants):
        return None
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        st.error("Give every variant a different name.")
        return None
    if len(variants) < 2:
        st.info("One variant can be generated and scored, but there is nothing to compare it with: add another.")
    return variants


def _existing_items(
    dataset: LoadedDataset, roles: dict[str, str | None], group_cols: list[str], token: str
) -> tuple[list, dict] | str:
    """The items of existing responses in the chosen layout and what to record of it, or what is missing
    (a required column not chosen, or the data's problem, shown)."""
    layout = st.radio(
        "Layout",
        [WIDE, LONG],
        key="compare_layout",
        help="One row per response: rows are paired by the question id within each variant, so the id repeats "
        "once per variant.",
        **SESSION,
    )
    columns = [c for c in dataset.columns if c not in (roles["input"], roles["ground_truth"], roles["id"])]
    top = {
        "question column": roles["input"],
        "ground truth column": roles["ground_truth"],
        "question id column": roles["id"],
        "system message column": roles["system"],
        "breakdown columns": group_cols,
    }
    guess = guess_columns(dataset.columns)["output"]
    try:
        if layout == WIDE:
            chosen = st.multiselect(
                "Response columns (one per variant; the column name is the variant's name)",
                columns,
                default=[c for c in [guess] if c in columns and c not in group_cols],
                key=f"compare_response_cols_{token}",
                **SESSION,
            )
            warn_shared_columns({**top, "response columns": chosen})
            _warn_not_text(dataset, token, "responses", [("output", c) for c in chosen])
            if not chosen:
                return "Choose the response columns, one per variant."
            if roles["input"] is None:
                return "Choose the question column first."
            items = items_from_responses(
                dataset.frame,
                input_col=roles["input"],
                response_cols={c: c for c in chosen},
                system_col=roles["system"],
                ground_truth_col=roles["ground_truth"],
                id_col=roles["id"],
                group_cols=group_cols,
                source=dataset,
            )
            return items, {"layout": "wide", "responses": chosen}
        c1, c2, c3 = st.columns(3)
        proposed = guess_variant_column(
            dataset.frame,
            roles["id"] or roles["input"],
            exclude=[roles["input"], roles["ground_truth"], guess, *group_cols],
        )
        with c1:
            variant_col = _column(
                "Variant (or model) column *",
                columns,
                proposed,
                f"compare_variant_col_{token}",
                optional=False,
                help="Proposed: a column whose values repeat across questions but not within one "
                + ("question id" if roles["id"] else "question")
                + " (each model answers each question once).",
            )
        with c2:
            output_col = _column(
                "Response column *",
                columns,
                guess,
                f"compare_output_col_{token}",
                optional=False,
                taken=[variant_col, *group_cols],
                help="Proposed: a column named like response, answer, output or completion.",
            )
        with c3:
            model_col = _column("Model column (optional)", columns, None, f"compare_model_col_{token}", optional=True)
        # The variant column also naming the model is the usual case, not a clash.
        warn_shared_columns(
            {
                **top,
                "variant column": variant_col,
                "response column": output_col,
                "model column": None if model_col == variant_col else model_col,
            }
        )
        missing = [
            name
            for name, column in (
                ("question column", roles["input"]),
                ("variant (or model) column", variant_col),
                ("response column", output_col),
            )
            if column is None
        ]
        if missing:
            return f"Choose the {' and the '.join(missing)} first."
        _warn_not_text(dataset, token, "responses", [("output", output_col)])
        items = items_from_responses(
            dataset.frame,
            input_col=roles["input"],
            variant_col=variant_col,
            output_col=output_col,
            model_col=model_col,
            system_col=roles["system"],
            ground_truth_col=roles["ground_truth"],
            id_col=roles["id"],
            group_cols=group_cols,
            source=dataset,
        )
        return items, {"layout": "long", "variant": variant_col, "output": output_col, "model": model_col}
    except InvalidInputError as exc:
        st.error(str(exc))
        return "Fix the responses' problem shown above first."


def _scorers(
    store: Store, needs_settings: bool, ground_truth_mapped: bool
) -> tuple[list[Any], dict[str, dict[str, Any]], str | None, Any]:
    """The chosen scorers, their options (defaults, but for the comparison options of the scorers that
    compare with a target), a problem to show, and the judge settings."""
    chosen = st.multiselect(
        "Scorers",
        list(scorer_specs(store)),
        default=["prompt-alignment", "textual-difference"],
        format_func=lambda sid: scorer_spec(sid, store).name,
        key="compare_scorers",
        help="Each scorer runs with its default options on every response. Textual difference compares a response "
        "with the ground truth column when one is chosen (a row with a blank one is not scored), else with the "
        "question, and needs no judge.",
        **SESSION,
    )
    if not chosen:
        return [], {}, "Choose at least one scorer.", None
    if "textual-difference" in chosen and not ground_truth_mapped:
        st.warning(
            "Textual difference has no ground truth column to compare with here, so it compares each response "
            "with the question: it ranks the variants by how much of the question they repeat, not by whether "
            "they are right. Choose the ground truth column above, or leave textual difference out."
        )
    options: dict[str, dict[str, Any]] = {}
    for sid in chosen:
        spec = scorer_spec(sid, store)
        values: dict[str, Any] = {}
        if any(o.name == "target" for o in spec.options):
            with st.expander(f"{spec.name}: comparison options"):
                shown = [o for o in spec.options if o.name != "scale"]
                columns = st.columns(len(shown))
                for column, option in zip(columns, shown, strict=True):
                    values[option.name] = option_widget(column, option, key=f"compare_opt_{sid}_{option.name}")
        options[sid] = resolve_options(sid, values, ground_truth_mapped=ground_truth_mapped)
    settings = None
    try:
        if needs_settings or any(scorer_spec(sid, store).uses_judge for sid in chosen):
            settings = judge_settings()
        scorers = [
            create_scorer(sid, options[sid], settings=settings, cache=judge_cache(store), store=store) for sid in chosen
        ]
    except ScorerError as exc:
        return [], options, str(exc), settings
    return scorers, options, check_judges(scorers), settings


def _target_problem(settings: Any, variants: list[Variant]) -> str | None:
    """None when the target models can be called as configured in the sidebar, else why not (no call is made)."""
    try:
        for variant in variants:
            Judge(replace(settings, model=variant.model))
    except ScorerError as exc:
        return f"Generation: {exc}"
    return None


def _warn_not_text(dataset: LoadedDataset, token: str, slot: str, columns: list[tuple[str, str | None]]) -> None:
    """Name the chosen columns' JSON values that are not text (numbers, booleans, lists, objects: each is scored as
    its text), looked for once per dataset and choice of columns (``(role, column)`` pairs)."""
    notices = kept_in_session(
        f"compare_not_text_{slot}",
        (token, repr(columns)),
        lambda: [n for role, c in columns for n in not_text_notices(dataset, {role: c}, messages_as_is=False)],
    )
    for notice in notices:
        st.warning(notice, icon=":material/text_fields:")


def render_setup(store: Store) -> None:
    """Tab 1: the dataset, the variants (or existing responses), the scorers, Generate / Score, the job."""
    dataset = _dataset()
    if dataset is None:
        return
    token = hashlib.sha256(st.session_state["compare_dataset"][0].encode()).hexdigest()[:8]
    mode = st.radio("Responses", [GENERATE, EXISTING], horizontal=True, key="compare_mode", **SESSION)
    guessed = guess_columns(dataset.columns)
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        input_col = _column(
            "Question column *",
            dataset.columns,
            guessed["input"],
            f"compare_input_{token}",
            optional=False,
            help="What every variant is judged against: the user prompt. Proposed from a column named like "
            "prompt, input, question or instruction.",
        )
    with c2:
        # Generating: an existing answer column is the reference the new responses are compared with. With
        # existing responses that column is a response: each mode keeps its own choice, so that a guess made
        # in one mode is not carried into the other.
        truth_guess = guessed["ground_truth"] or (guessed["output"] if mode == GENERATE else None)
        truth_col = _column(
            "Ground truth column",
            dataset.columns,
            truth_guess,
            f"compare_truth_{'generate' if mode == GENERATE else 'existing'}_{token}",
            optional=True,
            taken=[input_col],
        )
    with c3:
        id_col = _column(
            "Question id column",
            dataset.columns,
            guessed["id"],
            f"compare_id_{token}",
            optional=True,
            taken=[input_col, truth_col],
            help="Pairs the variants' responses to one question. One row per question: the ids must not repeat; "
            "one row per response: each id appears once per variant.",
        )
    with c4:
        with_system = st.checkbox(
            "Also judge against a system message",
            value=False,
            key=f"compare_with_system_{token}",
            help="Off (the default): every variant is judged against the dataset's user prompt only. On: also "
            "against the chosen column's system message, the same for every variant.",
            **SESSION,
        )
        system_col = None
        if with_system:
            system_col = _column(
                "System message column",
                dataset.columns,
                guessed["system"],
                f"compare_system_{token}",
                optional=False,
                taken=[input_col, truth_col, id_col],
            )
    frame = dataset.frame
    taken = {input_col, truth_col, id_col, system_col}
    group_cols = st.multiselect(
        "Breakdown columns (optional)",
        [c for c in dataset.columns if c not in taken],
        default=[c for c in dataset.columns if c.lower() in ("category", "topic", "domain") and c not in taken],
        key=f"compare_group_cols_{token}",
        help="Columns to break the results down by on the Comparison tab and in the report, e.g. category.",
        **SESSION,
    )
    _warn_not_text(
        dataset, token, "questions", [("input", input_col), ("system", system_col), ("ground_truth", truth_col)]
    )
    column_problem = None
    if input_col is None:
        column_problem = "Choose the question column: no column is named like a question or prompt."
    elif with_system and system_col is None:
        column_problem = "Choose the system message column, or untick “Also judge against a system message”."
    if column_problem is None:
        basis = JudgingBasis(input_col, system_col)
        st.info(basis.describe(), icon=":material/balance:")
    id_problem = None
    if mode == GENERATE and id_col is not None and frame[id_col].astype(str).duplicated().any():
        id_problem = (
            f"The question id column {id_col!r} repeats values: to generate, each row must be one question. "
            "Choose another id column or none."
        )
        st.error(id_problem)
    plan = None
    items: list = []
    config: dict[str, Any] = {"judging_basis": basis.record()} if column_problem is None else {}
    if mode == GENERATE:
        warn_shared_columns(
            {
                "question column": input_col,
                "ground truth column": truth_col,
                "question id column": id_col,
                "system message column": system_col,
                "breakdown columns": group_cols,
            }
        )
        rows_col, _ = st.columns([1, 3])
        limit = rows_col.number_input(
            "Rows to use",
            min_value=1,
            max_value=len(frame),
            value=min(len(frame), 10),
            step=1,
            key=f"compare_rows_{token}",
            help="The first rows of the dataset: every variant answers each of them.",
            **SESSION,
        )
        st.markdown("##### Variants")
        variants = None if input_col is None else _variants(dataset, input_col, token)
        if input_col is None:
            st.info("Choose the question column above to set up the variants.")
    st.markdown("##### Scorers and run")
    scorers, options, problem, settings = _scorers(
        store, needs_settings=mode == GENERATE, ground_truth_mapped=truth_col is not None
    )
    if column_problem:
        problem = column_problem
    if mode == GENERATE:
        if id_problem:
            problem = problem or id_problem
        elif variants is None:
            problem = problem or "Fix the variants above first."
        elif problem is None:
            problem = _target_problem(settings, variants)
        if variants is not None and settings is not None:
            part = frame.head(int(limit))
            ids = part[id_col].astype(str).tolist() if id_col else [str(i + 1) for i in range(len(part))]
            plan = GenerationPlan(
                part.to_dict("records"), ids, variants, settings, input_col, truth_col, system_col, group_cols
            )
            st.caption(
                f"{len(part)} rows × {len(variants)} variants = {len(part) * len(variants)} responses to generate, "
                "then score. Responses already generated with the same settings come from the cache."
            )
    else:
        picked = _existing_items(
            dataset,
            {"input": input_col, "ground_truth": truth_col, "id": id_col, "system": system_col},
            group_cols,
            token,
        )
        if isinstance(picked, str):
            problem = problem or picked
        else:
            items, layout = picked
            config.update(layout)
            found = sorted({str(it.groups.get("variant")) for it in items})
            blank = sum("output" not in it.payload for it in items)
            # The responses that will be scored; the blank cells (missing input for every scorer) apart.
            counted = f"{len(items) - blank} responses of {len(found)} variant(s): {', '.join(found)}."
            apart = f" {blank} more cell(s) blank: no response, not scored (missing input)." if blank else ""
            st.caption(md_escape(counted + apart))
            if blank:
                st.warning(
                    f"{blank} response cell(s) are blank or missing. Here a blank cell is no response from that "
                    "variant (unlike the Batch page, where it is an empty answer): every scorer reports it as not "
                    "scored (missing input), never as 0, and the variant's means leave it out."
                )
    with st.expander("Budget"):
        st.caption(
            "Caps on the scorers' judge calls, as on the Batch page. Generating the variants' responses is not "
            "counted: its tokens and cost are shown when it is done."
        )
        caps, price = budget_form("compare")
    problem = problem or budget_problem(caps, settings, price, "compare")
    if items and not problem:  # as Batch: refused when the cap cannot hold one judge call, else warned
        problem, warnings = cap_notes(items, scorers, caps, price)
        for warning in warnings:
            st.warning(warning)
    elif mode == GENERATE and (caps.max_cost_usd is not None or caps.max_total_tokens is not None) and not problem:
        st.caption(
            "The cost and token caps are checked against the judge calls once the responses are generated (the "
            "judge's prompts hold them): a cap that cannot hold one judge call stops the job then, before the run is "
            "stored."
        )
    left, right = st.columns(2)
    concurrency = left.number_input(
        "Concurrency", min_value=1, max_value=32, value=8, step=1, key="compare_concurrency", **SESSION
    )
    run_name = right.text_input(
        "Run name (optional)", key="compare_run_name", placeholder=f"{dataset.source_name} <date>"
    )
    if problem:
        st.error(problem)
    job = session_job()
    busy = job is not None and job.running
    label = "Generate & score" if mode == GENERATE else "Score"
    if st.button(label, type="primary", key="compare_go", icon=":material/play_arrow:", disabled=busy or bool(problem)):
        mapping = {
            "input": input_col,
            "ground_truth": truth_col,
            "id": id_col,
            "system": system_col,
            "groups": ["variant", "model", "row_id", *group_cols],
        }
        start_job(
            start_compare_job(
                store,
                scorers,
                options,
                items=items,
                plan=plan,
                dataset_name=dataset.source_name,
                run_name=run_name.strip() or None,
                mapping=mapping,
                config=config,
                concurrency=int(concurrency),
                budget=caps if caps.any else None,
                price=price,
            )
        )
        st.rerun()
    finished = render_job_panel()
    if finished:
        st.session_state["compare_run_pick"] = finished
    job = session_job()
    if job is not None and not job.running and job.run_id:
        stored = f"Stored as run {job.run_id} (reopen it from History). Its comparison is in the Comparison tab."
        notes = []
        status = store.get_run(job.run_id)["status"]
        if status != "completed":
            notes.append(f"Its status: {run_status_label(status)}. Not every item was scored; resume it from History.")
        rows = store.query("SELECT status FROM results WHERE run_id = ?", (job.run_id,))
        results = pd.DataFrame([dict(r) for r in rows], columns=["status"])
        failures = not_scored_summary(results)
        if failures:
            notes.append(f"{failures} Each outcome's status and error are in the Comparison tab and in History.")
        (st.warning if notes else st.success)(" ".join([stored, *notes]))
