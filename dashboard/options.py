"""Scorer options as widgets, from the catalogue's :class:`~scorers.catalogue.spec.OptionSpec` list."""

from __future__ import annotations

from typing import Any

from scorers import OptionSpec

SESSION = {"persist_state": "session"}  # keep the choices when the user visits another page


def option_widget(container: Any, option: OptionSpec, *, key: str) -> Any:
    """One scorer option as a widget: number, choice, bool, text, or a list (one entry per line).

    Args:
        container: ``st`` or a column/container to draw in.
        option: the catalogue's description of the option.
        key: the widget key (unique on the page).

    Returns:
        The value typed: float, str, bool, or a list of non-blank lines.
    """
    if option.kind == "number":
        default = float(option.default)
        return container.number_input(
            option.label,
            min_value=0.01 if option.name == "scale" else None,
            value=default,
            step=1.0 if default >= 1 else 0.05,
            help=option.help or None,
            key=key,
            **SESSION,
        )
    if option.kind == "choice":
        choices = list(option.choices)
        return container.selectbox(
            option.label, choices, index=choices.index(option.default), help=option.help or None, key=key, **SESSION
        )
    if option.kind == "bool":
        return container.checkbox(
            option.label, value=bool(option.default), help=option.help or None, key=key, **SESSION
        )
    if option.kind == "list":
        text = container.text_area(
            option.label,
            value="\n".join(option.default or ()),
            key=key,
            help=(option.help + " " if option.help else "") + "One entry per line.",
            **SESSION,
        )
        return [line.strip() for line in text.splitlines() if line.strip()]
    return container.text_area(
        option.label, value=str(option.default or ""), help=option.help or None, key=key, **SESSION
    )
