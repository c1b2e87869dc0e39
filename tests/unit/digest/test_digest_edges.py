"""condense at its edges: the budget spent to the character, the ask leaving its paragraph,
fragments at 12 characters and one less, lines cut short for the inline budget, empty list
items, what brings the footer. Every expectation is worked out by hand from docs/digest.md
("The digest"): a list is one numbered line an item, blocks are two newlines apart, the
footer closes whatever was cut or stood for, and a digest is never over its limit."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from looproom.digest import condense

URL = "https://github.com/o/r/issues/7#issuecomment-1"
FOOTER = f"_… full text: <{URL}|GitHub>_"  # 70 characters
TICKET = "_… the full text is on the ticket_"  # the footer without a URL: 34 characters
NEXT = "The next paragraph says more."


# -- the budget, to the character ---------------------------------------------------------

_ITEM = (
    st.text(alphabet="abcdefgh ,.", min_size=1, max_size=40)
    .map(str.strip)
    .filter(lambda item: item and item[0].isalpha() and "  " not in item)
)


@given(st.lists(_ITEM, min_size=2, max_size=6))
@example(["alpha one", "beta two", "gamma three"])
@example(["alpha", "abcdefgh" * 4])
@example(["a long first item, with a clause", "and a second item that runs on"])
def test_a_list_is_whole_from_its_drawn_length_and_never_over_any_limit(items: list[str]) -> None:
    text = "\n".join(f"- {item}" for item in items)
    drawn = "\n".join(f"{number}. {item}" for number, item in enumerate(items, 1))
    for limit in range(len(drawn) + 2):
        digest = condense(text, limit)
        assert len(digest) <= limit, (limit, digest)
        if limit >= len(drawn):
            assert digest == drawn
        elif limit:
            assert digest != drawn and digest.endswith(("…", TICKET)), (limit, digest)


def test_a_bold_line_cut_hard_fills_the_room_beside_its_marks() -> None:
    # A heading of one giant token: its marks are two characters of the budget, the
    # ellipsis one, and every other character is the token's — the limit to the letter.
    digest = condense("# " + "x" * 5000, 200, URL)
    assert digest == "*" + "x" * (200 - len(FOOTER) - 2 - 3) + "…*\n\n" + FOOTER
    assert len(digest) == 200


# -- the 12-character fragment ------------------------------------------------------------

SECOND = "Eleven char words go here and on, and on, and on until the text is long."


def test_a_fragment_of_exactly_12_characters_is_kept_and_one_shorter_is_dropped() -> None:
    # At 60 the second paragraph has 12 characters of room: 60 less the footer (34), the
    # separator before it (2), "Short one." (10) and the separator after it (2). Cut at a
    # space with its ellipsis, "Eleven char…" is exactly 12 and is kept.
    text = f"Short one.\n\n{SECOND}"
    assert condense(text, 60) == f"Short one.\n\nEleven char…\n\n{TICKET}"
    # One less: the best cut is "Eleven…", 7 characters, worth less than its room.
    assert condense(text, 59) == f"Short one.\n\n{TICKET}"


def test_a_fragment_shorter_than_12_is_kept_when_it_is_the_digests_only_words() -> None:
    # At 5 the footer is a bare "…" and 2 characters are left: the first line, "I", is all
    # that fits — one character, and the only words, so it is kept.
    assert condense("I\\\nwent home and stayed there for the night.", 5) == "I\n\n…"


# -- the ask leaving its paragraph --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "digest"),
    [
        # The author broke the line before the ask, or after it (spaces before the break
        # too): the sentences around it meet on a new line.
        (
            "Context line.\\\nShall we go? More after.",
            "*Shall we go?*\n\nContext line.\nMore after.",
        ),
        (
            "Context line. Shall we go? \\\nMore after.",
            "*Shall we go?*\n\nContext line.\nMore after.",
        ),
        (
            "Context line.\\\nShall we go?\\\nMore after.",
            "*Shall we go?*\n\nContext line.\nMore after.",
        ),
        # A reply instruction may end at the line's end rather than at a full stop.
        (
            "Context. Reply `go` to start\\\nMore after.",
            "*Reply `go` to start*\n\nContext.\nMore after.",
        ),
        # A break further on is the author's, not the ask's: they meet with a space.
        ("Context. Shall we go? X\\\nMore after.", "*Shall we go?*\n\nContext. X\nMore after."),
        ("Context. Shall we go? More after.", "*Shall we go?*\n\nContext. More after."),
        # A heading stays a bold line without its question.
        ("## Intro. Which one? More.", "*Which one?*\n\n*Intro. More.*"),
    ],
)
def test_the_sentences_around_the_ask_meet_as_the_author_broke_them(text: str, digest: str) -> None:
    assert condense(text, 1000) == digest


def test_an_ask_padded_with_spaces_leaves_room_for_what_follows_it() -> None:
    # Its paragraph is 1041 characters, far over the limit, and all the reader takes in at
    # first — but without the question and the spaces around it, it is 25. Beside the
    # footer (70 + 2) 128 characters are left: 19 + 2 + 25 for the ask and its paragraph,
    # then 2 + 29 for each of the next two paragraphs; a third would leave "The next…".
    text = f"Some context.{' ' * 500}Shall we ship it?{' ' * 500}More after.\n\n"
    digest = condense(text + "\n\n".join([NEXT] * 100), 200, URL)
    body = f"*Shall we ship it?*\n\nSome context. More after.\n\n{NEXT}\n\n{NEXT}"
    assert digest == f"{body}\n\n{FOOTER}"


@pytest.mark.parametrize(
    "text",
    [
        "Should we ship the release candidate tonight, or wait for the last review tomorrow?",
        "Some context. Is it ready? More context.\n\nA second paragraph closes the text.",
    ],
)
def test_a_text_of_exactly_the_limit_that_the_ask_pushes_over_is_cut_with_the_footer(
    text: str,
) -> None:
    # Moving the ask first adds its bold marks (and a separator): no longer within the
    # limit, so something is cut, and the footer says the full text is on the ticket.
    digest = condense(text, len(text))
    assert len(digest) <= len(text)
    assert digest.endswith("\n\n" + TICKET)


# -- lines cut short for the inline budget ------------------------------------------------


@pytest.mark.parametrize(
    ("head", "body"),
    [
        # The inline budget at 200 reads 1224 characters of a block, cut at a space: what
        # was read ends mid-sentence, so the line ends at its last sentence …
        ("One is done. Two is done. Three is half", "One is done. Two is done."),
        # … else at its last space before its end, with an ellipsis: never drawn whole.
        ("We will ship it as a", "We will ship it as…"),
    ],
)
def test_a_line_cut_short_for_the_inline_budget_is_never_drawn_whole(head: str, body: str) -> None:
    digest = condense(head + " " * 3000 + "and the rest.", 200, URL)
    assert digest == f"{body}\n\n{FOOTER}"


# -- empty list items; what brings the footer --------------------------------------------


def test_an_empty_list_item_takes_no_line_and_the_items_after_it_are_kept() -> None:
    assert condense("- alpha\n-\n- gamma", 1000) == "1. alpha\n3. gamma"


def test_a_list_ending_in_an_empty_item_is_whole_at_exactly_its_drawn_length() -> None:
    assert condense("- alpha\n-", len("1. alpha")) == "1. alpha"


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("Short.\n\n```\ncode\n```\n\nAfter.", "Short.\n\n_⟨code: 1 line⟩_\n\nAfter."),
        ("See /home/u/the-loop/cli/x.py now.\n\nAfter.", "See …/cli/x.py now.\n\nAfter."),
    ],
)
def test_a_pointer_or_a_shortened_path_before_the_last_block_still_brings_the_footer(
    text: str, body: str
) -> None:
    assert condense(text, 300, URL) == f"{body}\n\n{FOOTER}"
