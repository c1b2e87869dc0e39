"""condense: the digest — the ask first, lists numbered, code and tables as
pointers, paths shortened, cut at a sentence, the footer. A test named ``r1_2``
pins the rule of that name in docs/digest.md ("The rules, by name")."""

from __future__ import annotations

import pytest

from looproom.digest import condense

URL = "https://github.com/o/r/issues/7#issuecomment-1"
FOOTER = f"_… full text: <{URL}|GitHub>_"
FILLER = "This sentence is filler that pads the text well past the limit. " * 40


def test_r1_1_a_long_text_becomes_a_digest_within_the_limit() -> None:
    digest = condense("Intro line. " + FILLER, 300, URL)
    assert len(digest) <= 300
    assert digest.startswith("Intro line. This sentence")
    assert digest.endswith(FOOTER)


def test_r1_2_the_cut_falls_on_a_sentence() -> None:
    digest = condense(FILLER, 300, URL)
    body = digest.removesuffix("\n\n" + FOOTER)
    assert body.endswith("limit.")
    assert "…" not in body


def test_r1_2_a_sentence_too_long_is_cut_at_a_clause() -> None:
    text = "First clause runs on, second clause runs on; third clause " + "word " * 200
    body = condense(text, 200, URL).removesuffix("\n\n" + FOOTER)
    assert body == "First clause runs on, second clause runs on…"


def test_r1_2_no_clause_means_a_cut_at_whitespace_never_inside_a_word() -> None:
    body = condense("word " * 300, 200, URL).removesuffix("\n\n" + FOOTER)
    assert body.endswith("word…")
    assert len(body) <= 200 - len(FOOTER) - 2


def test_r1_2_one_giant_token_is_cut_hard_with_an_ellipsis() -> None:
    digest = condense("x" * 5000, 200, URL)
    assert digest == "x" * (200 - len(FOOTER) - 3) + "…\n\n" + FOOTER


def test_r1_3_footer_links_the_event_url() -> None:
    assert condense(FILLER, 500, URL).endswith(FOOTER)


def test_r1_3_footer_without_url_says_the_ticket() -> None:
    assert condense(FILLER, 500).endswith("\n\n_… the full text is on the ticket_")


def test_r1_3_footer_names_another_host_by_its_name() -> None:
    digest = condense(FILLER, 500, "https://gitlab.example.com/x/-/issues/3")
    assert digest.endswith("<https://gitlab.example.com/x/-/issues/3|gitlab.example.com>_")


def test_r1_3_no_footer_when_everything_was_carried() -> None:
    assert condense("Short. And whole.", 300, URL) == "Short. And whole."


def test_r1_3_a_pointer_is_a_replacement_so_the_footer_follows() -> None:
    digest = condense("Short.\n\n```\ncode\n```", 300, URL)
    assert digest == f"Short.\n\n_⟨code: 1 line⟩_\n\n{FOOTER}"


def test_r2_1_the_first_question_leads_in_bold_and_leaves_its_paragraph() -> None:
    text = "Context first. Which option do you want? More context.\n\n" + FILLER
    digest = condense(text, 300, URL)
    assert digest.startswith("*Which option do you want?*\n\nContext first. More context.\n\n")


def test_r2_1_a_question_in_a_heading_leads() -> None:
    digest = condense("## Which phases does this need?\n\nSome text. " + FILLER, 300, URL)
    assert digest.startswith("*Which phases does this need?*\n\nSome text.")


def test_r2_1_a_reply_instruction_leads_when_there_is_no_question() -> None:
    text = "Context. When done, reply `the-loop execute` to start.\n\n" + FILLER
    assert condense(text, 300, URL).startswith(
        "*When done, reply `the-loop execute` to start.*\n\nContext."
    )


def test_r2_1_a_question_wins_over_an_earlier_reply_instruction() -> None:
    text = "Reply `go` when ready. " + FILLER + "\n\nIs this the question?"
    assert condense(text, 300, URL).startswith("*Is this the question?*")


def test_r2_1_without_an_ask_the_text_opens_with_its_first_sentence() -> None:
    assert condense("First sentence. " + FILLER, 300, URL).startswith("First sentence. ")


def test_r2_1_list_items_and_quotes_are_not_the_ask() -> None:
    text = "Intro.\n\n- Is this one?\n\n> Or this one?\n\n" + FILLER
    assert condense(text, 300, URL).startswith("Intro.\n\n1. Is this one?\n\n> Or this one?")


def test_r2_1_a_question_after_the_budget_still_leads() -> None:
    text = FILLER + "\n\n" + FILLER + "\n\nSo, do we ship it?"
    digest = condense(text, 300, URL)
    assert digest.startswith("*So, do we ship it?*\n\nThis sentence")


def test_r2_2_lists_are_numbered_lines_with_their_boxes() -> None:
    text = "Intro.\n\n- [x] one\n- [ ] two\n* three\n\n" + FILLER
    digest = condense(text, 400, URL)
    assert "Intro.\n\n1. ☑ one\n2. ☐ two\n\n1. three\n\n" in digest


def test_r2_2_lettered_and_parenthesised_items_are_numbered_too() -> None:
    digest = condense("Intro.\n\n1) alpha\n2) beta\n\n" + FILLER, 400, URL)
    assert "\n\n1. alpha\n2. beta\n\n" in digest


def test_r2_2_nested_items_are_numbered_by_their_path() -> None:
    text = "Intro.\n\n3. three\n   - sub a\n   - sub b\n4. four\n\n" + FILLER
    digest = condense(text, 400, URL)
    assert "3. three\n   3.1. sub a\n   3.2. sub b\n4. four" in digest


def test_r2_2_an_item_too_long_is_cut_at_a_boundary() -> None:
    item = "An item that goes on and on, with a clause; " + "more words " * 60
    digest = condense("Intro.\n\n- " + item + "\n- next", 200, URL)
    assert "1. An item that goes on and on, with a clause…" in digest
    assert "2. next" not in digest


def test_r2_3_the_author_order_is_kept_around_the_ask() -> None:
    text = "# Title\n\nAlpha. Why? Beta.\n\n- item\n\nAfter.\n\n" + FILLER
    digest = condense(text, 400, URL)
    assert digest.startswith("*Why?*\n\n*Title*\n\nAlpha. Beta.\n\n1. item\n\nAfter.")


@pytest.mark.parametrize(
    ("block", "pointer"),
    [
        ("```\na\nb\n```", "_⟨code: 2 lines⟩_"),
        ("~~~\na\n~~~", "_⟨code: 1 line⟩_"),
        ("    indented\n    code\n    here", "_⟨code: 3 lines⟩_"),
        ("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |", "_⟨table: 2 rows⟩_"),
        ("| a |\n|---|\n| 1 |", "_⟨table: 1 row⟩_"),
        (
            'Traceback (most recent call last):\n  File "x.py", line 3, in f\n'
            "    g()\nValueError: bad",
            "_⟨stack trace: 4 lines⟩_",
        ),
        (
            "```\nTypeError: x is undefined\n    at f (app.js:3:9)\n    at g (app.js:9:1)\n```",
            "_⟨stack trace: 3 lines⟩_",
        ),
        (
            "```\nTypeError: x is undefined\nmore code\n    at f (app.js:3:9)\n```",
            "_⟨code: 3 lines⟩_",
        ),
        (
            '```\nTraceback (most recent call last):\n  File "a.py", line 1\nKeyError: 1\n```',
            "_⟨stack trace: 3 lines⟩_",
        ),
    ],
)
def test_r3_1_code_tables_and_traces_become_pointers(block: str, pointer: str) -> None:
    digest = condense("Before.\n\n" + block + "\n\nAfter.\n\n" + FILLER, 500, URL)
    assert f"Before.\n\n{pointer}\n\nAfter." in digest


def test_r3_1_a_trace_inside_a_paragraph_is_a_pointer_between_its_prose() -> None:
    text = (
        "It failed:\nTraceback (most recent call last):\n"
        '  File "x.py", line 3, in f\nValueError: bad\nThen it stopped.'
    )
    digest = condense(text + "\n\n" + FILLER, 400, URL)
    assert "It failed:\n\n_⟨stack trace: 3 lines⟩_\n\nThen it stopped." in digest


def test_r3_2_absolute_paths_lose_their_head() -> None:
    text = "See /home/user/the-loop/cli/the_loop/channels/slack.py now. " + FILLER
    assert condense(text, 300, URL).startswith("See …/channels/slack.py now.")


@pytest.mark.parametrize(
    "kept",
    [
        "`/home/user/a/b/c.py`",
        "https://example.com/a/b/c/d",
        "<https://example.com/a/b/c/d>",
        "./a/b/c/d",
        "~/a/b/c/d",
        "a/b/c/d",
        "/a/b",
    ],
)
def test_r3_2_paths_in_code_urls_and_relative_paths_are_untouched(kept: str) -> None:
    assert condense(f"Keep {kept} as is. " + FILLER, 300, URL).startswith(f"Keep {kept} as is.")


def test_r3_3_no_html_comment_reaches_the_digest() -> None:
    text = 'Visible. <!-- hidden one -->\n\n<!-- the-loop:event {"x": 1} -->\n\n' + FILLER
    digest = condense(text, 300, URL)
    assert "hidden" not in digest
    assert "the-loop:event" not in digest
    assert "<!--" not in digest


def test_r1_2_an_abbreviation_is_no_sentence_end() -> None:
    text = "Use a flag, e.g. the verbose one, or not. " + FILLER
    digest = condense(text, 200, URL)
    assert digest.startswith("Use a flag, e.g. the verbose one, or not.")


def test_headings_are_bold_lines_in_the_digest() -> None:
    digest = condense("# Title\n\nSetext\n------\n\nText. " + FILLER, 300, URL)
    assert digest.startswith("*Title*\n\n*Setext*\n\nText.")


@pytest.mark.parametrize("limit", [200, 300, 1500])
def test_r1_3_a_text_of_exactly_the_limit_is_whole_and_one_past_it_is_cut(limit: int) -> None:
    sentences = "One plain sentence of prose. " * 100
    exact = sentences[: limit - 1] + "."
    assert len(exact) == limit
    assert condense(exact, limit, URL) == exact
    over = sentences[:limit] + "."
    digest = condense(over, limit, URL)
    assert len(digest) <= limit
    assert digest.endswith("\n\n" + FOOTER)
    assert digest.removesuffix("\n\n" + FOOTER).endswith("sentence of prose.")


def test_empty_and_whitespace_texts_digest_to_nothing() -> None:
    assert condense("", 300, URL) == ""
    assert condense(" \n\t ", 300, URL) == ""


def test_limits_below_200_are_honoured_not_clamped() -> None:
    for limit in (1, 5, 20, 40, 80, 150):
        assert len(condense(FILLER, limit, URL)) <= limit
    assert condense(FILLER, 40, URL).endswith("_… the full text is on the ticket_")
    assert condense(FILLER, 0, URL) == ""


def test_unicode_text_is_counted_in_characters() -> None:
    text = "Ünïcödé ✓ 🤖 — prose. " * 200
    digest = condense(text, 300, URL)
    assert len(digest) <= 300
    assert digest.startswith("Ünïcödé ✓ 🤖 — prose.")


@pytest.mark.parametrize("eager", [False, True])
def test_questions_in_list_items_and_quotes_never_lead_a_later_question_does(eager: bool) -> None:
    items = "\n".join(f"- item {n}: is this asked?" for n in range(200))
    quotes = "\n".join(f"> quoted {n}, asked?" for n in range(50))
    text = f"{FILLER}\n\n{items}\n\n{quotes}\n\nShall I go on with the plan?"
    digest = condense(text, 600, URL, eager=eager)
    assert digest.startswith("*Shall I go on with the plan?*")


def test_an_ordered_line_numbered_past_one_goes_on_a_paragraph_and_may_ask() -> None:
    text = f"{FILLER}\n\nThe plan has two steps and then\n2. shall I take the second one?"
    assert condense(text, 600, URL).startswith("*")
    assert "shall I take the second one?" in condense(text, 600, URL).split("\n")[0]


def test_r1_3_without_a_url_the_footer_says_the_full_text_is_on_the_ticket() -> None:
    digest = condense(FILLER, 300)
    assert digest.endswith("\n\n_… the full text is on the ticket_") and len(digest) <= 300


def test_r1_3_a_limit_of_exactly_the_footer_is_the_footer_alone() -> None:
    assert condense(FILLER, len(FOOTER), URL) == FOOTER
    # One less and the link's footer cannot fit: the one without the link is said.
    shorter = condense(FILLER, len(FOOTER) - 1, URL)
    assert shorter.endswith("_… the full text is on the ticket_") and URL not in shorter


def test_r1_1_a_limit_of_one_character_is_an_ellipsis_and_of_none_nothing() -> None:
    assert condense(FILLER, 1, URL) == "…"
    assert condense(FILLER, 0, URL) == ""
    assert condense("Hello.", 6, URL) == "Hello."  # exactly the limit: whole


def test_a_digest_cut_with_no_url_given_says_the_full_text_is_on_the_ticket() -> None:
    # docs/digest.md R1.3: without a URL the footer names the ticket, and links nothing.
    digest = condense("A long first sentence here. " * 20, 80)
    assert digest.endswith("\n\n_… the full text is on the ticket_") and "http" not in digest


def test_a_digest_that_fits_whole_fits_at_exactly_its_length_and_not_one_less() -> None:
    # Each limit at its edge: a list drawn whole is kept whole at exactly its drawn length,
    # its lines counted with the one newline between them; one less and it is cut.
    text = "- alpha one\n- beta two\n- gamma three"
    whole = condense(text, 1000)
    assert "\n\n" not in whole and whole.count("\n") == 2  # drawn whole, uncut
    assert condense(text, len(whole)) == whole
    assert condense(text, len(whole) - 1) != whole
