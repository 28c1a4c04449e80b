"""A side-by-side word diff as safe HTML, for ``st.html``, and :func:`render_text_diff`, the diff view
every page shows (a word or character level chooser above it).

Every token is HTML-escaped, so a response containing markup is shown as text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import streamlit as st
from rapidfuzz.distance import Levenshtein

DELETE_COLOR = "rgba(239, 68, 68, 0.30)"
INSERT_COLOR = "rgba(34, 197, 94, 0.30)"
REPLACE_COLOR = "rgba(245, 158, 11, 0.35)"

_SPAN = "padding:0 2px;border-radius:3px;color:inherit;background:{color};text-decoration:{decoration}"


def _words(tokens: Sequence[str], sep: str = " ") -> str:
    return sep.join(html.escape(t, quote=True) for t in tokens)


def _mark(tag: str, tokens: Sequence[str], color: str, title: str, decoration: str, sep: str = " ") -> str:
    style = _SPAN.format(color=color, decoration=decoration)
    return f'<{tag} title="{title}" style="{style}">{_words(tokens, sep)}</{tag}>'


def _column(title: str, parts: list[str], sep: str = " ") -> str:
    body = sep.join(p for p in parts if p) or "<em>(empty)</em>"
    # With sep "" the tokens carry their own whitespace: pre-wrap keeps line breaks and indentation.
    wrap = "white-space:pre-wrap;" if sep == "" else ""
    return (
        '<div style="flex:1 1 20rem;min-width:0">'
        f'<div style="font-weight:600;margin-bottom:0.25rem">{html.escape(title)}</div>'
        f'<div style="line-height:1.9;overflow-wrap:anywhere;{wrap}">{body}</div>'
        "</div>"
    )


def diff_html(
    reference_tokens: Sequence[str],
    response_tokens: Sequence[str],
    opcodes: Sequence[Sequence[object]],
    *,
    reference_title: str = "Reference",
    response_title: str = "Response",
    sep: str = " ",
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
        sep: what joins the tokens: ``" "`` for words; ``""`` for tokens that carry their own
            whitespace (:func:`text_diff_html`), shown with their line breaks.

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
            left.append(_words(ref, sep))
            right.append(_words(resp, sep))
        elif tag == "delete":
            left.append(_mark("del", ref, DELETE_COLOR, "deleted", "line-through", sep))
        elif tag == "insert":
            right.append(_mark("ins", resp, INSERT_COLOR, "inserted", "none", sep))
        elif tag == "replace":
            left.append(_mark("del", ref, REPLACE_COLOR, "replaced", "line-through", sep))
            right.append(_mark("ins", resp, REPLACE_COLOR, "replacement", "none", sep))
        else:
            raise ValueError(f"unknown diff opcode tag {tag!r}; expected equal, replace, delete or insert")
    legend = " ".join(
        _mark("span", [label], color, label, "none")
        for label, color in (("deleted", DELETE_COLOR), ("inserted", INSERT_COLOR), ("replaced", REPLACE_COLOR))
    )
    return (
        '<div style="display:flex;gap:1.5rem;flex-wrap:wrap">'
        f"{_column(reference_title, left, sep)}{_column(response_title, right, sep)}"
        "</div>"
        f'<div style="margin-top:0.5rem;font-size:0.85em">{legend}</div>'
    )


_TOKEN = re.compile(r"\s+|[^\s]+")


def diff_tokens(text: str, level: str = "word") -> list[str]:
    """The display tokens of ``text``: words and the whitespace between them (``"word"``, so lines,
    bullets and indentation stay as written), or single characters (``"char"``, for scripts written
    without spaces, such as Chinese or Japanese, where a word diff marks whole sentences).

    >>> diff_tokens("a  b\\nc"), diff_tokens("日本語", "char")
    (['a', '  ', 'b', '\\n', 'c'], ['日', '本', '語'])
    """
    if level == "char":
        return list(text)
    return _TOKEN.findall(text)


def text_diff_html(
    reference: str,
    response: str,
    *,
    level: str = "word",
    reference_title: str = "Reference",
    response_title: str = "Response",
) -> str:
    """A side-by-side diff of two texts that keeps their line structure (``level="word"``) or marks
    single characters (``level="char"``); see :func:`diff_tokens` and :func:`diff_html`.

    The alignment is rapidfuzz's Levenshtein opcodes over the tokens (each distinct token mapped to an
    int, so tokens compare by exact equality). It is for display: the scorer's ``changes`` count
    words of ``str.split()``.
    """
    a, b = diff_tokens(reference, level), diff_tokens(response, level)
    ids: dict[str, int] = {}
    a_ids = [ids.setdefault(t, len(ids)) for t in a]
    b_ids = [ids.setdefault(t, len(ids)) for t in b]
    opcodes = [list(op) for op in Levenshtein.opcodes(a_ids, b_ids)]
    return diff_html(a, b, opcodes, reference_title=reference_title, response_title=response_title, sep="")


DIFF_LEVELS = {"word": "Words (lines kept)", "char": "Characters (Chinese, Japanese ...)"}
"""The diff view's levels: :func:`diff_tokens` level → the chooser's label."""


TEXT_PREVIEW_CHARS = 20_000
"""A longer text is shown cut to its first this many characters (:func:`dashboard.results.render_text_block`),
and a diff of it is drawn only when asked (:func:`render_text_diff`)."""


def render_text_diff(reference: str, response: str, *, key: str, reference_title: str, response_title: str) -> None:
    """The shared diff view: a word/character chooser (keyed ``<key>_diff_level``) and :func:`text_diff_html`.
    When a text is longer than :data:`TEXT_PREVIEW_CHARS`, the diff (which holds both texts whole) is drawn
    only once a toggle (keyed ``<key>_diff_long``) asks for it."""
    longest = max(len(reference), len(response))
    if longest > TEXT_PREVIEW_CHARS and not st.toggle(
        f"Show the diff of the whole texts ({len(reference):,} and {len(response):,} characters)",
        key=f"{key}_diff_long",
    ):
        st.caption(f"A text is longer than {TEXT_PREVIEW_CHARS:,} characters: its diff is drawn when asked.")
        return
    level = st.segmented_control(
        "Diff view", list(DIFF_LEVELS), default="word", format_func=DIFF_LEVELS.get, key=f"{key}_diff_level"
    )
    st.html(
        text_diff_html(
            reference, response, level=level or "word", reference_title=reference_title, response_title=response_title
        )
    )
