"""History page: the stored runs; open one to explore its results, rename it, delete it, resume it."""

from __future__ import annotations

import re
import shlex

import streamlit as st

from dashboard.batch import NO_SCORED_ITEMS, NOT_USED, runs_table
from dashboard.layout import follow_run_link, setup_page, show_run_link, warn_missing_run_link
from dashboard.results import md_escape
from dashboard.run_explorer import RUN_STATUS_HELP, show_runs_table
from dashboard.run_view import get_store, render_job_panel, render_run
from scorers.core.errors import run_status_short_label
from scorers.runs import jobs

OPEN_KEY = "history_open"


def _ask_delete(run_id: str) -> None:
    st.session_state["history_confirm_delete"] = run_id


def _cancel_delete() -> None:
    st.session_state.pop("history_confirm_delete", None)


def _command(text: str) -> str:
    """A shell command as a Markdown code span, fenced by more backticks than it holds in a row.

    >>> _command("gate --baseline main"), _command("gate --baseline 'a`b'")
    ('`gate --baseline main`', "`` gate --baseline 'a`b' ``")
    """
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if fence != "`" else f"`{text}`"


def _baselines_lost(names: list[str]) -> str:
    """What deleting a run does to the named baselines that point at it ("" for none): every baseline's gate and
    ``baseline set`` commands, each name shell-quoted (a name may hold spaces)."""
    if not names:
        return ""
    quoted = " and ".join(f"'{md_escape(n)}'" for n in names)
    one = len(names) == 1
    gates = " and ".join(_command(f"python -m scorers gate --baseline {shlex.quote(n)}") for n in names)
    sets = ", ".join(_command(f"python -m scorers baseline set {shlex.quote(n)} RUN_ID") for n in names)
    return (
        f"\n\nIt is the current run of the baseline{'' if one else 's'} {quoted}: once it is deleted, "
        f"{gates} {'stops' if one else 'stop'} with an error (exit 2, the CI gate fails) until "
        f"{'the baseline is' if one else 'each is'} pointed at another run ({sets})."
    )


setup_page()
st.title("History")
store = get_store()
st.caption(
    f"Runs stored in {store.display_name}. Set SCORER_STUDIO_DB to another SQLite file, or to a "
    "postgresql:// URL to share runs with a team."
)

store.mark_interrupted()  # a run whose process died (a killed CLI run) shows as interrupted, resumable and deletable
runs = store.list_runs()
if warn_missing_run_link([run["id"] for run in runs], "no run is opened: choose one below and press Open"):
    st.session_state.pop(OPEN_KEY, None)  # never another run's results under a link to the missing one
if not runs:
    st.info("No runs yet. Score a dataset on the Batch page; its run appears here.")
    st.stop()

table = runs_table(runs)
show_runs_table(
    table.drop(columns=["id"]),
    key="history_table",
    column_config={
        "first judge": st.column_config.TextColumn(
            help="The judge model the run started with. A run resumed or retried with another judge names "
            "every judge, with its outcomes, when opened."
        )
    },
)
st.caption(
    'Means count scored outcomes only; "not scored" counts the outcomes without a score (a judge '
    'failure, or an input the scorer needs was missing or invalid), "pending" the ones never scored (a '
    f'stopped run). A mean of "{NO_SCORED_ITEMS}": the run used that scorer but none of its items was scored '
    f'(the counts say why); "{NOT_USED}": the run did not use that scorer. A scale other than 0–1 is named '
    "in the column's heading, e.g. (0–10): means on different scales are never in one column. A run of "
    "Compare's variants shows each variant's mean (\"gpt4 0.473 · gpt4_short 0.506\"): one mean over every "
    "variant's responses would mix them."
)

by_id = {run["id"]: run for run in runs}
if st.session_state.get("history_pick") not in by_id:
    st.session_state.pop("history_pick", None)
if linked := follow_run_link("history_pick", by_id):  # ?run=ID opens that run
    st.session_state[OPEN_KEY] = linked
run_id = st.selectbox(
    "Run",
    list(by_id),
    key="history_pick",
    format_func=lambda rid: f"{by_id[rid]['name']} · {run_status_short_label(by_id[rid]['status'])} · {rid}",
    help=RUN_STATUS_HELP,
)
run = by_id[run_id]
job = jobs.running_for(jobs.run_key(run_id))
busy = job is not None or run["status"] == "running"

open_col, name_col, rename_col, stop_col, delete_col = st.columns([1, 4, 1, 1, 1], vertical_alignment="bottom")
if job is not None:
    stop_col.button(
        "Stop",
        key="history_stop",
        icon=":material/stop_circle:",
        on_click=jobs.stop,
        args=(job.id,),
        disabled=job.status == "stopping",
        help="Stop the run after the judge calls in flight; what is scored is kept and it can be resumed.",
    )
if open_col.button("Open", type="primary", key="history_open_button", icon=":material/open_in_new:"):
    st.session_state[OPEN_KEY] = run_id
new_name = name_col.text_input("Name", value=run["name"], key=f"history_name_{run_id}")
if rename_col.button("Rename", key="history_rename", icon=":material/edit:"):
    try:
        store.rename_run(run_id, new_name)
    except ValueError as exc:
        st.error(str(exc))
    else:
        st.rerun()

if st.session_state.get("history_confirm_delete") == run_id:
    st.warning(
        f"Delete the run “{md_escape(run['name'])}” with its {run['n_items']} items and every result? "
        "This cannot be undone." + _baselines_lost(store.baselines_at(run_id))
    )
    yes, no = st.columns(2)
    if yes.button("Yes, delete it", type="primary", key="history_delete_confirm", disabled=busy):
        store.delete_run(run_id)
        _cancel_delete()
        if st.session_state.get(OPEN_KEY) == run_id:
            st.session_state.pop(OPEN_KEY)
        if st.session_state.get("batch_run_id") == run_id:
            st.session_state.pop("batch_run_id")
        st.rerun()
    no.button("Keep it", key="history_delete_cancel", on_click=_cancel_delete)
else:
    delete_col.button(
        "Delete",
        key="history_delete",
        on_click=_ask_delete,
        args=(run_id,),
        disabled=busy,
        icon=":material/delete:",
        help="Being scored now: stop it first." if busy else None,
    )

st.divider()
render_job_panel()
opened = st.session_state.get(OPEN_KEY)
if opened in by_id:
    show_run_link(opened)
    render_run(store, opened, key="history")
