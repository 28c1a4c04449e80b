"""Streamlit views of the background jobs (:mod:`scorers.runs.jobs`): the sidebar list and a job's progress.

Jobs belong to the server process, so every session lists every running job in the
sidebar and can stop any of them; a page that started a job keeps its id in the
session state (:func:`remember`, :func:`session_job`) to show its progress and, once it
has ended, its outcome.
"""

from __future__ import annotations

import streamlit as st

from scorers.runs import jobs, shared_jobs

SIDEBAR_REFRESH_S = 2.0


def remember(slot: str, job_id: str) -> None:
    """Keep ``job_id`` as this session's job in ``slot`` (e.g. ``"batch"``, ``"compare"``)."""
    st.session_state[f"job_{slot}"] = job_id


def session_job(slot: str) -> jobs.Job | None:
    """This session's job in ``slot``, running or finished, or None (never started, or long gone)."""
    job_id = st.session_state.get(f"job_{slot}")
    if job_id is None:
        return None
    try:
        return jobs.get(job_id)
    except KeyError:
        st.session_state.pop(f"job_{slot}", None)
        return None


def session_job_running(slot: str) -> bool:
    """True while this session's job in ``slot`` works."""
    job = session_job(slot)
    return job is not None and job.running


def _stop_button(shot: jobs.JobSnapshot, key: str) -> None:
    if shot.status == "stopping":
        st.caption("Stopping: the calls in flight finish first; everything done so far is kept.")
        return
    st.button(
        "Stop",
        key=key,
        icon=":material/stop_circle:",
        on_click=jobs.stop,
        args=(shot.id,),
        help="Stop after the work in flight. What is done is kept; a stopped run can be resumed.",
    )


def _all_running() -> tuple[list[jobs.JobSnapshot], list[dict], object]:
    """This process's running jobs, the other processes' (on a shared store), and that store."""
    store = shared_jobs.shared_store()
    others = shared_jobs.other_jobs(store) if store is not None else []
    return jobs.list_jobs(running_only=True), others, store


def _sidebar_list(running: list[jobs.JobSnapshot], others: list[dict], store: object) -> None:
    st.subheader("Jobs")
    if not running and not others:
        st.caption("No job running on this server.")
        return
    for shot in running:
        st.markdown(f"**{shot.label}**")
        st.progress(shot.fraction, text=shot.describe())
        _stop_button(shot, key=f"sidebar_stop_{shot.id}")
    for row in others:  # jobs of the other dashboard processes on the same store
        shot = jobs.JobSnapshot(row["id"], *(row[k] for k in _SNAPSHOT_FIELDS))
        st.markdown(f"**{shot.label}** (another server process)")
        st.progress(shot.fraction, text=shot.describe())
        if row["stop_requested"]:
            st.caption("Stop asked: that process stops it within a second or two.")
        else:
            st.button(
                "Stop",
                key=f"sidebar_stop_{row['id']}",
                icon=":material/stop_circle:",
                on_click=shared_jobs.request_stop,
                args=(store, row["id"]),
                help="Ask the process running it to stop after the work in flight.",
            )


# The stored job's columns in JobSnapshot's order after the id.
_SNAPSHOT_FIELDS = ("kind", "label", "status", "phase", "done", "total", "failed", "started_at", "elapsed_s")


@st.fragment(run_every=SIDEBAR_REFRESH_S)
def _live_sidebar_list() -> None:
    running, others, store = _all_running()
    if not running and not others:
        st.rerun()  # the last job ended: the whole page, so the sidebar stops polling
    _sidebar_list(running, others, store)


def render_jobs_sidebar() -> None:
    """Every running job of the server in the sidebar, with progress and Stop.

    While a job runs the list refreshes every 2 s; with none running it is drawn once per rerun,
    so an idle page is never rerun in the background (which would close an open dropdown or
    drop a key press).
    """
    running, others, store = _all_running()
    with st.sidebar:
        if running or others:
            _live_sidebar_list()
        else:
            _sidebar_list(running, others, store)


@st.fragment(run_every=1.0)
def _progress(job_id: str, key: str) -> None:
    try:
        shot = jobs.snapshot(job_id)
    except KeyError:
        return
    if not shot.running:
        st.rerun()  # the whole page: the job's outcome is complete now
    st.progress(shot.fraction, text=shot.describe())
    _stop_button(shot, key=f"{key}_stop")


def render_job_progress(job_id: str, *, key: str) -> None:
    """A running job's progress bar (done, failed, ETA) with Stop, refreshed every second.

    When the job ends the whole page reruns, so it can show the outcome.
    """
    _progress(job_id, key)
