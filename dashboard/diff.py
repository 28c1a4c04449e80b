"""A side-by-side word diff as safe HTML, for ``st.html``.

Every token is HTML-escaped, so a response containing markup is shown as text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

DELETE_COLOR = "rgba(239, 68, 68, 0.30)"
INSERT_COLOR = "rgba(34, 197, 94, 0.30)"
REPLACE_COLOR = "rgba(245, 158, 11, 0.35)"

_SPAN = "padding:0 2px;border-radius:3px;color:inherit;background:{color};text-decoration:{decoration}"


def _words(tokens: Sequence[str]) -> str:
    return " ".join(html.escape(t, quote=True) for t in tokens)


def _mark(tag: str, tokens: Sequence[str], color: str, title: str, decoration: str) -> str:
    style = _SPAN.format(color=color, decoration=decoration)
    return f'<{tag} title="{title}" style="{style}">{_words(tokens)}</{tag}>'


def _column(title: str, parts: list[str]) -> str:
    body = " ".join(p for p in parts if p) or "<em>(empty)</em>"
    return (
        '<div style="flex:1 1 20rem;min-width:0">'
        f'<div style="font-weight:600;margin-bottom:0.25rem">{html.escape(title)}</div>'
        f'<div style="line-height:1.9;overflow-wrap:anywhere">{body}</div>'
        "</div>"
    )


def diff_html(
    reference_tokens: Sequence[str],
    response_tokens: Sequence[str],
    opcodes: Sequence[Sequence[object]],
    *,
    reference_title: str = "Reference",
    response_title: str = "Response",
) -> str:
    """Render a word-level diff as two HTML columns: reference left, response right.

    Deleted words are red and struck through on the left, inserted words green on
    the right, replaced words amber on both sides (struck through on the left);
    equal words are plain. Whitespace is normalised to single spaces.

    Args:
        reference_tokens: the reference's words (``details["referenceTokens"]``).
        response_tokens: the response's words (``details["responseTokens"]``).
        opcodes: ``[[tag, ref_start, ref_end, resp_start, resp_end], ...]`` with tag
            ``"equal"``, ``"replace"``, ``"delete"`` or ``"insert"`` over the token
            lists (``details["opcodes"]`` of the textual-difference scorer).
        reference_title: heading of the left column.
        response_title: heading of the right column.

    Returns:
        An HTML fragment (a flex container and a legend) in which every token and
        title is HTML-escaped.

    Raises:
        ValueError: an opcode has an unknown tag.

    >>> diff_html(["a", "<b>"], ["a", "c"], [["equal", 0, 1, 0, 1], ["replace", 1, 2, 1, 2]]).count("&lt;b&gt;")
    1
    """
    left: list[str] = []
    right: list[str] = []
    for tag, a0, a1, b0, b1 in opcodes:
        ref, resp = reference_tokens[a0:a1], response_tokens[b0:b1]
        if tag == "equal":
            left.append(_words(ref))
            right.append(_words(resp))
        elif tag == "delete":
            left.append(_mark("del", ref, DELETE_COLOR, "deleted", "line-through"))
        elif tag == "insert":
            right.append(_mark("ins", resp, INSERT_COLOR, "inserted", "none"))
        elif tag == "replace":
            left.append(_mark("del", ref, REPLACE_COLOR, "replaced", "line-through"))
            right.append(_mark("ins", resp, REPLACE_COLOR, "replacement", "none"))
        else:
            raise ValueError(f"unknown diff opcode tag {tag!r}; expected equal, replace, delete or insert")
    legend = " ".join(
        _mark("span", [label], color, label, "none")
        for label, color in (("deleted", DELETE_COLOR), ("inserted", INSERT_COLOR), ("replaced", REPLACE_COLOR))
    )
    return (
        '<div style="display:flex;gap:1.5rem;flex-wrap:wrap">'
        f"{_column(reference_title, left)}{_column(response_title, right)}"
        "</div>"
        f'<div style="margin-top:0.5rem;font-size:0.85em">{legend}</div>'
    )
