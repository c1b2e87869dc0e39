"""fit and truncate: the entry point and the-loop 13.10.0's cut (rules R1.1, R1.4,
R4.1, R4.2 in docs/digest.md)."""

from __future__ import annotations

import pytest

import looproom.digest as digest
from looproom.digest import DEFAULT_DIGEST_MODE, DIGEST_MODES, fit, to_mrkdwn, truncate

URL = "https://github.com/o/r/issues/7"
LONG = "A long sentence that keeps going for a while. " * 100


def test_api_is_the_loops() -> None:
    assert DIGEST_MODES == ("digest", "truncate")
    assert DEFAULT_DIGEST_MODE == "digest"
    assert set(digest.__all__) >= {"fit", "condense", "to_mrkdwn", "truncate", "DIGEST_MODES"}


def test_r4_1_a_short_text_is_drawn_whole_with_no_pointer_and_no_footer() -> None:
    text = "## Done\n\n- [x] tests\n\n```\nx\n```\n"
    assert fit(text, 1500, url=URL) == to_mrkdwn(text.strip())
    assert "⟨" not in fit(text, 1500, url=URL)


def test_r4_1_the_threshold_is_the_raw_length() -> None:
    text = "x" * 1500
    assert fit(text, 1500, url=URL) == text
    assert fit("  " + text + "\n", 1500, url=URL) == text


def test_r4_1_a_rendering_that_grows_past_the_limit_is_digested_never_over() -> None:
    text = "a & b. " * 200  # 1400 characters, 2200 once escaped
    drawn = fit(text, 1500, url=URL)
    assert len(drawn) <= 1500
    assert drawn.endswith(f"<{URL}|GitHub>_")
    assert len(fit(text, 1500, mode="truncate")) <= 1500


def test_r1_1_a_long_text_is_digested_by_default() -> None:
    drawn = fit(LONG, 900, url=URL)
    assert drawn == digest.condense(LONG, 900, URL)
    assert len(drawn) <= 900


def test_r1_4_truncate_mode_is_the_13_10_0_cut_within_the_limit() -> None:
    drawn = fit(LONG, 900, mode="truncate", url=URL)
    assert len(drawn) <= 900
    assert drawn.startswith("A long sentence")
    assert drawn.endswith(" more characters — see the link)")


def test_r1_4_an_unknown_mode_is_the_digest() -> None:
    assert fit(LONG, 900, mode="summarize", url=URL) == fit(LONG, 900, url=URL)


@pytest.mark.parametrize("mode", DIGEST_MODES)
@pytest.mark.parametrize("limit", [1, 10, 50, 199, 200, 201, 900, 1500, 2999, 3000])
def test_r4_2_never_over_the_limit(mode: str, limit: int) -> None:
    for text in (LONG, "x" * 5000, "a&<>" * 900, "word " * 800):
        assert len(fit(text, limit, mode, URL)) <= limit


def test_empty_text_and_zero_limit_give_nothing() -> None:
    assert fit("", 1500) == ""
    assert fit(" \n ", 1500) == ""
    assert fit("text", 0) == ""


def test_truncate_keeps_a_text_that_fits() -> None:
    assert truncate("  short  ", 100) == "short"


def test_truncate_counts_the_note_in_the_limit() -> None:
    cut = truncate("y" * 5000, 200)
    head, note = cut.split("\n")
    assert len(cut) == 200
    assert note == f"… ({5000 - len(head)} more characters — see the link)"


def test_truncate_does_not_split_a_link_or_an_escape() -> None:
    text = "w" * 150 + " <https://example.com/a|a link> &amp; " + "v" * 300
    for limit in range(150, 230):
        cut = truncate(text, limit).split("\n")[0]
        assert cut.count("<") == cut.count(">")
        assert not cut.endswith(("&", "&a", "&am", "&amp"))


def test_truncate_below_its_note_still_fits() -> None:
    assert truncate("z" * 100, 10) == "z" * 9 + "…"
    assert truncate("z" * 100, 1) == "…"


# -- truncate at its edges: each figure worked out by hand from R1.4's form -------------------
# The note is "\n… (N more characters — see the link)": 36 characters and N's digits.


def test_truncate_keeps_a_text_of_exactly_the_limit_and_cuts_one_more() -> None:
    assert truncate("x" * 100, 100) == "x" * 100
    # 101 characters at 100: the note names a 2-digit count (62 + 38 = 100).
    assert truncate("x" * 101, 100) == "x" * 62 + "\n… (39 more characters — see the link)"


def test_truncate_keeps_as_much_as_fits_beside_a_note_whose_count_changes_its_length() -> None:
    # 61 kept, 139 named: 61 + 39 = 100.
    assert truncate("a" * 200, 100) == "a" * 61 + "\n… (139 more characters — see the link)"
    # One character kept beside a note of 39 is 40: the cut still keeps it.
    assert truncate("a" * 200, 40) == "a\n… (199 more characters — see the link)"


@pytest.mark.parametrize("limit", [0, -1])
def test_truncate_to_nothing_is_nothing(limit: int) -> None:
    assert truncate("text", limit) == ""


def test_truncate_below_its_note_keeps_the_head_without_trailing_space() -> None:
    assert truncate("a b" + "c" * 100, 3) == "a…"
    assert truncate("z" * 100, 2) == "z…"


def test_truncate_drops_the_space_before_its_note() -> None:
    text = "a" * 60 + " " + "b" * 139  # 200: the cut at 61 keeps the space, then drops it
    assert truncate(text, 100) == "a" * 60 + "\n… (139 more characters — see the link)"


def test_truncate_moves_the_cut_before_a_link_at_the_very_start() -> None:
    text = "<https://example.com/" + "p" * 200 + "|link> and then words"  # 21 + 200 + 21
    assert truncate(text, 100) == "\n… (242 more characters — see the link)"


def test_truncate_looks_five_characters_back_for_an_escape_it_would_split() -> None:
    # 256 characters at 100 keep 61 (61 + 39). An "&" five back is an escape begun: the cut
    # moves before it; six back, an escape would have ended (`&amp;` is five), so it stays.
    five = "a" * 56 + "&" + "b" * 199
    assert truncate(five, 100) == "a" * 56 + "\n… (200 more characters — see the link)"
    six = "a" * 55 + "&" + "b" * 200
    assert truncate(six, 100) == "a" * 55 + "&bbbbb\n… (195 more characters — see the link)"


def test_truncate_with_no_room_for_its_note_keeps_the_head_and_an_ellipsis() -> None:
    # 200 at 39: the note naming 200 would fill all 39, leaving no head: the head instead.
    assert truncate("a" * 200, 39) == "a" * 38 + "…"


def test_truncate_leaves_a_closed_link_before_the_cut_and_one_after_it_alone() -> None:
    # 256 at 100 keep 61: a whole link early, the cut in plain text, another link later.
    text = "<https://a.example|a> " + "w" * 39 + "v" * 60 + " <https://b.example|b>" + "u" * 113
    assert len(text) == 256
    assert truncate(text, 100) == text[:61] + "\n… (195 more characters — see the link)"


def test_truncate_moves_back_to_the_link_it_splits_not_an_earlier_one() -> None:
    text = "<https://a.example|a> " + "w" * 30 + " <https://b.example/" + "p" * 200 + "|b>"
    head = "<https://a.example|a> " + "w" * 30
    assert (
        truncate(text, 100)
        == f"{head}\n… ({len(text) - len(head) - 1} more characters — see the link)"
    )


def test_truncate_leaves_a_bare_less_than_that_no_link_closes() -> None:
    text = "<https://a.example|a> x " + "<" + "y" * 230  # 255: nothing closes the second "<"
    assert truncate(text, 100) == text[:61] + "\n… (194 more characters — see the link)"


def test_truncate_moves_back_to_the_escape_it_splits_after_one_that_ended() -> None:
    text = "a" * 55 + "&lt;&amp;" + "b" * 192  # 256 at 100 keep 61: the cut is in "&amp;"
    assert truncate(text, 100) == "a" * 55 + "&lt;\n… (197 more characters — see the link)"


def test_truncate_leaves_an_escape_that_ended_before_the_cut() -> None:
    text = "a" * 56 + "&lt;" + "b" * 196  # the cut at 61 is one past "&lt;"
    assert truncate(text, 100) == "a" * 56 + "&lt;b\n… (195 more characters — see the link)"


def test_truncate_moves_back_to_an_escape_at_the_very_start() -> None:
    text = "&amp;" + "x" * 200  # 205 at 42 keep 3 ("&am"), inside the escape: nothing kept
    assert truncate(text, 42) == "\n… (205 more characters — see the link)"


def test_truncate_moves_back_to_the_last_escape_begun_not_an_earlier_one_that_ended() -> None:
    text = "a" * 56 + "&lt;&amp;" + "b" * 191  # 256 at 100 keep 61: the cut is just past "&"
    assert truncate(text, 100) == "a" * 56 + "&lt;\n… (196 more characters — see the link)"
