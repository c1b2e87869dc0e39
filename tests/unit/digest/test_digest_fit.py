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
