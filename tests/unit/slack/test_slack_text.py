"""What Slack needs of any text we draw: one module every drawer uses."""

from __future__ import annotations

from looproom.slack import text as slack_text

HOSTILE = "Ping <!here>, <!channel>, <!subteam^S0TEAM|@devs> and <@U0ALICE01|alice> & co"


def test_escaped_text_cannot_form_a_mention_a_broadcast_or_an_entity() -> None:
    drawn = slack_text.escape(HOSTILE)
    assert "<" not in drawn and ">" not in drawn
    assert drawn.startswith("Ping &lt;!here&gt;,") and drawn.endswith("&amp; co")


def test_neutralised_mentions_read_as_names_and_ping_nobody() -> None:
    # A broadcast keeps its word, with a word joiner after the @: no chat reads it as one.
    assert slack_text.neutralise(HOSTILE) == (
        "Ping @\u2060here, @\u2060channel, @devs and @alice & co"
    )
    assert slack_text.neutralise("hey @everyone") == "hey @\u2060everyone"


def test_a_button_carries_only_a_web_url_that_cannot_break_a_link() -> None:
    url = "https://github.com/acme/api/issues/7?tab=1&x=2"
    assert slack_text.button_url(url) == url
    for bad in (
        "javascript:alert(1)",
        "https://x.test/a|<!here>",
        "https://x.test/a b",
        "https://x.test/" + "a" * slack_text.URL_LIMIT,
        "/relative",
    ):
        assert slack_text.button_url(bad) == "", bad


def test_text_shown_to_admins_is_one_inert_line_of_bounded_length() -> None:
    shown = slack_text.defang("<!channel> see <https://x.test|here>\n`code`", limit=200)
    assert "<" not in shown and ">" not in shown and "`" not in shown and "\n" not in shown
    assert slack_text.defang("x" * 300, limit=10) == "x" * 9 + "…"


def test_a_bare_mention_in_defanged_text_reads_the_same_and_pings_no_one() -> None:
    """Errbot sends with ``link_names``: a bare ``@channel``, ``@here`` or ``@alice``
    would ping, so each ``@`` is followed by a word joiner."""
    shown = slack_text.defang("@channel @here @everyone ping @alice, mail a@b.c", limit=200)
    for word in ("channel", "here", "everyone", "alice"):
        assert f"@{word}" not in shown and f"@\u2060{word}" in shown
    assert shown.replace("\u2060", "") == "@channel @here @everyone ping @alice, mail a@b.c"
