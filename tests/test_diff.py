"""The side-by-side word diff: colours, columns and HTML escaping."""

from __future__ import annotations

import pytest

from dashboard.diff import DELETE_COLOR, INSERT_COLOR, REPLACE_COLOR, diff_html


def columns(html: str) -> tuple[str, str]:
    """The reference (left) and response (right) columns of a diff."""
    left, right = html.split(">Response</div>", 1)
    return left, right.split('<div style="margin-top', 1)[0]


def test_deletions_left_insertions_right_replacements_both():
    reference = ["keep", "gone", "old"]
    response = ["keep", "new", "added"]
    opcodes = [["equal", 0, 1, 0, 1], ["delete", 1, 2, 1, 1], ["replace", 2, 3, 1, 2], ["insert", 3, 3, 2, 3]]

    left, right = columns(diff_html(reference, response, opcodes))

    assert left.startswith('<div style="display:flex') and "keep" in left and "keep" in right
    assert f'background:{DELETE_COLOR};text-decoration:line-through">gone</del>' in left
    assert f'background:{REPLACE_COLOR};text-decoration:line-through">old</del>' in left
    assert f'background:{REPLACE_COLOR};text-decoration:none">new</ins>' in right
    assert f'background:{INSERT_COLOR};text-decoration:none">added</ins>' in right
    assert "gone" not in right and "added" not in left


def test_every_token_and_title_is_escaped():
    html = diff_html(
        ["<script>alert(1)</script>", "a&b"],
        ['"quoted"', "<img src=x onerror=alert(1)>"],
        [["replace", 0, 2, 0, 2]],
        reference_title="<b>ref</b>",
    )

    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a&amp;b" in html and "&quot;quoted&quot;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;b&gt;ref&lt;/b&gt;" in html


def test_empty_side_is_labelled():
    left, right = columns(diff_html([], ["new"], [["insert", 0, 0, 0, 1]]))

    assert "<em>(empty)</em>" in left and "(empty)" not in right


def test_unknown_opcode_is_an_error():
    with pytest.raises(ValueError, match="unknown diff opcode tag 'move'"):
        diff_html(["a"], ["a"], [["move", 0, 1, 0, 1]])


def test_text_diff_keeps_lines_and_offers_characters():
    from dashboard.diff import text_diff_html

    html_text = text_diff_html("- one\n- two\n", "- one\n- three\n")
    # the bullets stay on their own lines: tokens carry their line breaks, shown with pre-wrap
    assert "white-space:pre-wrap" in html_text and "- one\n- " in html_text
    # Japanese without spaces: a word diff would mark the whole sentence; characters mark one
    chars = text_diff_html("今日は晴れです", "今日は雨です", level="char")
    # 晴→雨 replaced and れ deleted; 今日は and です stay plain
    assert ">晴<" in chars and ">れ<" in chars and "今日は" in chars and chars.count("<del") == 2
