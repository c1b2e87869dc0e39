"""to_mrkdwn: GitHub markdown drawn as Slack mrkdwn, every word kept (rules R3.4
and R4.1 in docs/digest.md)."""

from __future__ import annotations

import pytest

from looproom.digest import to_mrkdwn


@pytest.mark.parametrize(
    ("source", "drawn"),
    [
        ("**bold** and __bold__", "*bold* and *bold*"),
        ("*italic* and _italic_", "_italic_ and _italic_"),
        ("~~gone~~", "~gone~"),
        ("***both***", "_*both*_"),
        ("`a*b_c` stays", "`a*b_c` stays"),
        ("`x < y && z`", "`x &lt; y &amp;&amp; z`"),
        ("plain prose, untouched.", "plain prose, untouched."),
    ],
)
def test_r3_4_inline_marks(source: str, drawn: str) -> None:
    assert to_mrkdwn(source) == drawn


@pytest.mark.parametrize(
    ("source", "drawn"),
    [
        ("[docs](https://e.com/d)", "<https://e.com/d|docs>"),
        ("[t](https://e.com/url_(x))", "<https://e.com/url_(x)|t>"),
        ("<https://e.com/a>", "<https://e.com/a>"),
        ("<a@b.co>", "<mailto:a@b.co|a@b.co>"),
        ("[see **this**](https://e.com)", "<https://e.com|see this>"),
        ("![a chart](https://i.e.com/c.png)", "<https://i.e.com/c.png|a chart>"),
        ("![](https://i.e.com/c.png)", "<https://i.e.com/c.png>"),
        ("![local](img/c.png)", "local"),
        ("[relative](docs/a.md) and [anchor](#s)", "relative and anchor"),
        ("[x][ref]\n\n[ref]: https://e.com/r", "<https://e.com/r|x>"),
        ("[ref]\n\n[ref]: https://e.com/r", "<https://e.com/r|ref>"),
        ("[javascript](javascript:alert(1))", "[javascript](javascript:alert(1))"),
    ],
)
def test_r3_4_links_images_and_autolinks(source: str, drawn: str) -> None:
    assert to_mrkdwn(source) == drawn


def test_r3_4_atx_and_setext_headings_are_bold_lines_with_their_blank_line() -> None:
    source = "# One #\n\nText.\n\nTwo\n===\n\nMore.\n\nThree\n---\nLast."
    assert to_mrkdwn(source) == "*One*\n\nText.\n\n*Two*\n\nMore.\n\n*Three*\n\nLast."


def test_r3_4_a_heading_draws_its_own_bold_once() -> None:
    assert to_mrkdwn("## Use **this** one") == "*Use this one*"


def test_r3_4_bullets_nested_by_three_spaces() -> None:
    source = "- a\n  - aa\n    - aaa\n- b"
    assert to_mrkdwn(source) == "• a\n   • aa\n      • aaa\n• b"


def test_r3_4_ordered_lists_keep_their_start_and_nesting() -> None:
    source = "3. three\n4. four\n   1. sub one\n   2. sub two\n"
    assert to_mrkdwn(source) == "3. three\n4. four\n   1. sub one\n   2. sub two"


def test_r3_4_task_boxes() -> None:
    source = "- [ ] open\n- [x] done\n- [X] done too\n\n1. [x] numbered"
    assert to_mrkdwn(source) == "☐ open\n☑ done\n☑ done too\n\n1. ☑ numbered"


def test_r3_4_an_item_with_two_paragraphs_keeps_both() -> None:
    assert to_mrkdwn("- first\n\n  second\n- next") == "• first\n   second\n• next"


def test_r3_4_block_quotes_are_quote_lines() -> None:
    assert to_mrkdwn("> one **b**\n> two\n>\n> three") == "> one *b* two\n>\n> three"


def test_r3_4_fences_of_any_length_are_code_blocks_verbatim() -> None:
    source = "````md\n```\ninner **x** <b>\n```\n````\nafter"
    drawn = to_mrkdwn(source)
    assert drawn == "```\n``\u200b`\ninner **x** &lt;b&gt;\n``\u200b`\n```\n\nafter"


def test_r3_4_indented_code_is_a_code_block_not_converted() -> None:
    assert to_mrkdwn("para\n\n    **not bold**\n    - not a list") == (
        "para\n\n```\n**not bold**\n- not a list\n```"
    )


def test_r3_4_a_fence_in_a_list_item_stays_in_the_item() -> None:
    source = "1. one\n\n   ```\n   code\n   ```\n2. two\n3. three"
    assert to_mrkdwn(source) == "1. one\n```\ncode\n```\n2. two\n3. three"


def test_r3_4_tables_are_aligned_rows_in_a_code_block() -> None:
    source = "| a | bb |\n|---|---|\n| 1 | **2** |\n"
    assert to_mrkdwn(source) == "```\na | bb\n--|------\n1 | **2**\n```"


def test_r3_4_hard_breaks_are_new_lines_soft_breaks_spaces() -> None:
    assert to_mrkdwn("one  \ntwo\\\nthree\nfour") == "one\ntwo\nthree four"


def test_r3_4_escaped_characters_are_the_characters() -> None:
    assert to_mrkdwn("\\# not \\[a\\] \\`x\\` 1\\. ok") == "# not [a] `x` 1. ok"


def test_r3_4_entities_are_their_characters_escaped_again() -> None:
    assert to_mrkdwn("a &amp; b &lt;i&gt; &copy; &#63;") == "a &amp; b &lt;i&gt; © ?"


def test_r3_4_a_thematic_break_is_a_rule_line() -> None:
    assert to_mrkdwn("a\n\n***\n\nb") == "a\n\n———\n\nb"


def test_r3_4_front_matter_is_dropped() -> None:
    assert to_mrkdwn("---\nstatus: draft\n---\n\n# Title") == "*Title*"


def test_r3_3_html_comments_are_removed_everywhere_they_are_html() -> None:
    source = "a <!-- inline --> b\n\n<!-- the-loop:event {} -->\n\n<!--\nmulti\n\nline\n-->\nc"
    assert to_mrkdwn(source) == "a  b\n\nc"


def test_r3_3_an_unterminated_comment_stays_as_escaped_text() -> None:
    assert to_mrkdwn("a <!-- open") == "a &lt;!-- open"
    assert to_mrkdwn("<!-- open\n\nrest") == "&lt;!-- open\n\nrest"


def test_html_blocks_and_inline_html_are_escaped_text() -> None:
    source = "<div class='x'>\n<b>hi</b>\n</div>\n\nsome <span>inline</span> html"
    assert to_mrkdwn(source) == (
        "&lt;div class='x'&gt;\n&lt;b&gt;hi&lt;/b&gt;\n&lt;/div&gt;\n\n"
        "some &lt;span&gt;inline&lt;/span&gt; html"
    )


def test_r4_1_prose_passes_through_as_written() -> None:
    source = "The loop is waiting on you. Approve the design when ready."
    assert to_mrkdwn(source) == source


def test_a1_text_nested_past_markdown_its_limit_is_kept_as_text() -> None:
    source = ">" * 60 + " deep words"
    assert "deep words" in to_mrkdwn(source)
    assert "deep words" in to_mrkdwn("- " * 60 + "deep words")


def test_empty_and_blank_text_draw_nothing() -> None:
    assert to_mrkdwn("") == ""
    assert to_mrkdwn(" \n\t\n") == ""
