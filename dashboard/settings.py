"""The judge-settings sidebar shared by every page, and the settings it resolves to.

Widget values live in ``st.session_state`` under the ``judge_*`` keys. The API key
typed here stays in this browser session's memory only: it is never written to
disk, logs or exports, and never shown on a page (only where it came from is).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import streamlit as st

from scorers import DEFAULT_MODEL, JudgeSettings, ScorerError, check_connection, resolve_judge_settings
from scorers.core.judge import v1_hint


def read_secrets() -> dict[str, Any]:
    """Streamlit secrets as a plain dict, or ``{}`` when no ``secrets.toml`` can be loaded.

    ``st.secrets`` raises (a ``FileNotFoundError`` subclass) when no secrets file
    exists or one cannot be parsed; the dashboard then works from the sidebar and
    the environment alone.
    """
    try:
        return st.secrets.to_dict()
    except FileNotFoundError:
        return {}


def _configured(name: str, secrets: Mapping[str, Any], environ: Mapping[str, str]) -> str | None:
    for value in (secrets.get(name), environ.get(name)):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def key_source(session_key: str, secrets: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """Where the judge's API key comes from, in the lookup order of ``resolve_judge_settings``.

    Args:
        session_key: the key typed in the sidebar ("" when none).
        secrets: Streamlit secrets as a mapping.
        environ: the environment.

    Returns:
        ``"from this session"``, ``"from secrets"``, ``"from environment"`` or
        ``"none"``; never the key itself.
    """
    if session_key.strip():
        return "from this session"
    for label, source in (("from secrets", secrets), ("from environment", environ)):
        value = source.get("OPENAI_API_KEY")
        if isinstance(value, str) and value.strip():
            return label
    return "none"


def _init_defaults(secrets: Mapping[str, Any]) -> None:
    defaults = {
        "judge_base_url": _configured("OPENAI_BASE_URL", secrets, os.environ) or "",
        "judge_model": _configured("OPENAI_MODEL", secrets, os.environ) or DEFAULT_MODEL,
        "judge_api_key": "",
        "judge_temperature": 0.0,
        "judge_seed": 42,
        "judge_timeout": 60.0,
        "judge_max_tokens": 0,
        "judge_bypass_cache": False,
    }
    for key, value in defaults.items():
        # Re-assigning (not setdefault) keeps a widget's value when the page that drew it
        # is left: Streamlit drops the state of widgets that a run did not draw.
        st.session_state[key] = st.session_state.get(key, value)


def judge_settings() -> JudgeSettings:
    """The judge settings from the sidebar widgets, Streamlit secrets and the environment.

    Call it after :func:`render_judge_sidebar` has run in this script run.

    Returns:
        The resolved :class:`~scorers.JudgeSettings` (lookup order: sidebar, then
        ``.streamlit/secrets.toml``, then ``OPENAI_*`` environment variables).

    Raises:
        JudgeConfigError: a parameter is out of range.
    """
    state = st.session_state
    return resolve_judge_settings(
        model=state["judge_model"],
        base_url=state["judge_base_url"],
        api_key=state["judge_api_key"] or None,
        secrets=read_secrets(),
        temperature=float(state["judge_temperature"]),
        seed=int(state["judge_seed"]),
        timeout=float(state["judge_timeout"]),
        max_tokens=int(state["judge_max_tokens"]) or None,
    )


def judge_cache(store: Any) -> Any:
    """The judge-reply cache the pages pass to scorers: ``store``, or None when the sidebar's "Bypass the cache" is on."""
    return None if st.session_state.get("judge_bypass_cache") else store


def render_judge_sidebar() -> None:
    """Draw the judge settings in the sidebar: endpoint, model, key, sampling and a connection test."""
    secrets = read_secrets()
    _init_defaults(secrets)
    with st.sidebar:
        st.header("Judge settings")
        st.text_input(
            "Base URL",
            key="judge_base_url",
            placeholder="https://api.openai.com/v1",
            help="Any OpenAI-compatible endpoint. Servers such as vLLM, Ollama and LM Studio serve the API under "
            "/v1, so the URL usually ends in /v1: http://localhost:8000/v1 for vLLM, http://localhost:11434/v1 "
            "for Ollama. Empty: OPENAI_BASE_URL from secrets or the environment, else OpenAI's API.",
        )
        base_url = st.session_state["judge_base_url"].strip()
        if base_url and v1_hint(base_url):  # said before the first call fails, not only in the error
            st.caption(v1_hint(base_url).strip())
        st.text_input(
            "Model", key="judge_model", help="'provider/model' such as openai/gpt-4o-mini, or a bare model name."
        )
        st.text_input("API key", key="judge_api_key", type="password", placeholder="sk-...")
        st.caption(
            "Kept in memory for this browser session only: never saved, logged or exported. "
            "A key can also come from the OPENAI_API_KEY environment variable or .streamlit/secrets.toml."
        )
        st.caption(f"API key: {key_source(st.session_state['judge_api_key'], secrets, os.environ)}")
        st.slider("Temperature", min_value=0.0, max_value=2.0, step=0.1, key="judge_temperature")
        st.number_input("Seed", step=1, key="judge_seed")
        st.number_input("Timeout (seconds)", min_value=1.0, max_value=600.0, step=5.0, key="judge_timeout")
        st.number_input(
            "Max output tokens per call (0: the server's default)",
            min_value=0,
            max_value=200_000,
            step=256,
            key="judge_max_tokens",
            help="A cap on each judge reply. Budgets use it as the strict bound of a "
            "reply; without it a reply is assumed to take at most 4,096 tokens.",
        )
        st.toggle(
            "Bypass the cache",
            key="judge_bypass_cache",
            help="Ask the judge again instead of reusing a stored reply for an identical request (every call is "
            "paid). Applies to every page that judges.",
        )
        if st.button("Test connection", key="judge_test_connection"):
            try:
                st.success(check_connection(judge_settings()))
            except ScorerError as exc:
                st.error(str(exc))
