"""The defects of the-loop's own Slack digest (docs/digest.md, "Defects of
the-loop's digest"), each pinned: input → expected output. Ours has none of them."""

from __future__ import annotations

from looproom.digest import condense, fit, to_mrkdwn, truncate

URL = "https://github.com/o/r/issues/7"
FILLER = "This sentence is filler that pads the text well past the limit. " * 40


def _body(digest: str) -> str:
    """The digest without its footer."""
    return digest.rsplit("\n\n_… ", 1)[0]


def test_init_py_stays_init_py() -> None:
    assert to_mrkdwn("Edit __init__.py and _private_.txt") == "Edit __init__.py and _private_.txt"


def test_a_heading_keeps_the_blank_line_after_it() -> None:
    assert to_mrkdwn("## Title\n\nBody text.") == "*Title*\n\nBody text."


def test_setext_headings_are_headings() -> None:
    assert to_mrkdwn("Title\n=====\n\nBody.") == "*Title*\n\nBody."
    assert to_mrkdwn("Sub\n---\nBody.") == "*Sub*\n\nBody."


def test_reference_links_and_definitions_are_resolved_not_mangled() -> None:
    source = "See [the docs][d] and [d].\n\n[d]: https://example.com/docs 'Title'"
    assert to_mrkdwn(source) == (
        "See <https://example.com/docs|the docs> and <https://example.com/docs|d>."
    )


def test_a_reference_defined_after_the_budget_still_resolves_in_the_digest() -> None:
    text = "See [the docs][d] first. " + FILLER + "\n\n[d]: https://example.com/docs"
    assert condense(text, 300, URL).startswith("See <https://example.com/docs|the docs> first.")


def test_a_link_whose_url_has_parentheses_is_a_link() -> None:
    assert to_mrkdwn("[t](https://e.com/url_(x))") == "<https://e.com/url_(x)|t>"


def test_nested_lists_keep_their_nesting_and_start() -> None:
    source = "3. three\n4. four\n   - sub a\n   - sub b\n"
    assert to_mrkdwn(source) == "3. three\n4. four\n   • sub a\n   • sub b"
    digest = condense("Intro.\n\n" + source + "\n" + FILLER, 300, URL)
    assert "3. three\n4. four\n   4.1. sub a\n   4.2. sub b" in digest


def test_a_fence_inside_a_list_item_keeps_the_numbering() -> None:
    source = "1. one\n\n   ```\n   code\n   ```\n2. two\n3. three\n"
    digest = condense("Intro.\n\n" + source + "\n" + FILLER, 300, URL)
    assert "1. one _⟨code: 1 line⟩_\n2. two\n3. three" in digest


def test_a_four_backtick_fence_does_not_close_at_three() -> None:
    source = "````\n```\nstill code\n```\n````\nafter"
    digest = condense(source + "\n\n" + FILLER, 300, URL)
    assert digest.startswith("_⟨code: 3 lines⟩_\n\nafter")


def test_a_question_mark_in_inline_code_is_not_the_ask() -> None:
    text = "Run `a?b` now. " + FILLER
    assert condense(text, 300, URL).startswith("Run `a?b` now. This sentence")


def test_the_ask_keeps_asterisks_inside_its_code() -> None:
    text = "Should I run `rm -rf build/*` **now**?\n\n" + FILLER
    assert condense(text, 300, URL).startswith("*Should I run `rm -rf build/*` now?*")


def test_a_quote_is_not_flattened_into_the_ask() -> None:
    text = "> Is this quoted?\n\nContext here. Real question?\n\n" + FILLER
    digest = condense(text, 400, URL)
    assert digest.startswith("*Real question?*\n\n> Is this quoted?\n\nContext here.")


def test_paths_in_code_spans_are_not_shortened() -> None:
    text = "Open `/home/u/the-loop/cli/x.py` or /home/u/the-loop/cli/x.py. " + FILLER
    assert condense(text, 300, URL).startswith("Open `/home/u/the-loop/cli/x.py` or …/cli/x.py.")


def test_the_clause_cut_never_splits_a_url() -> None:
    url = "https://example.com/a,b;c:d/" + "x" * 120
    text = f"Start here, then open {url} and more words " + "w " * 200
    body = _body(condense(text, 200, URL))
    assert body in ("Start here…", f"Start here, then open {url}…")
    body = _body(condense(f"Open <{url}|the page> and more " + "w " * 200, 220, URL))
    assert "<https://" not in body or body.count("<") == body.count(">")


def test_truncate_never_overruns_the_limit() -> None:
    cut = truncate("x" * 4000, 3000)
    assert len(cut) <= 3000
    assert cut.endswith("\n… (1040 more characters — see the link)")
    assert len(fit("x" * 4000, 3000, mode="truncate")) <= 3000


def test_raw_lt_gt_amp_and_html_blocks_are_escaped() -> None:
    assert to_mrkdwn("a < b & c > d") == "a &lt; b &amp; c &gt; d"
    assert to_mrkdwn("<div>\n<b>x</b>\n</div>") == "&lt;div&gt;\n&lt;b&gt;x&lt;/b&gt;\n&lt;/div&gt;"


def test_indented_code_is_not_converted() -> None:
    assert to_mrkdwn("para\n\n    **not bold** [x](y)\n") == "para\n\n```\n**not bold** [x](y)\n```"


def test_tiny_limits_keep_the_footer() -> None:
    for limit in range(200, 260, 7):
        digest = condense(FILLER, limit, URL)
        assert len(digest) <= limit
        assert digest.endswith(f"_… full text: <{URL}|GitHub>_")


def test_user_mentions_do_not_ping() -> None:
    assert to_mrkdwn("hi <@U12345> and <@W999|bob>") == "hi &lt;@U12345&gt; and &lt;@W999|bob&gt;"
    assert "<@" not in condense("Ping <@U12345>? " + FILLER, 300, URL)


def test_the_footer_names_the_host_not_always_github() -> None:
    assert condense(FILLER, 300, "https://jira.example.org/browse/X-1").endswith(
        "<https://jira.example.org/browse/X-1|jira.example.org>_"
    )
    assert condense(FILLER, 300, "https://github.com/o/r/pull/2").endswith(
        "<https://github.com/o/r/pull/2|GitHub>_"
    )


def test_a_filename_with_reply_in_code_is_not_a_reply_instruction() -> None:
    text = "Run `test_ask_reply.py` to check. " + FILLER
    assert condense(text, 300, URL).startswith("Run `test_ask_reply.py` to check. This")


def test_one_line_is_singular() -> None:
    digest = condense("Intro.\n\n```\nonly\n```\n\n" + FILLER, 300, URL)
    assert "_⟨code: 1 line⟩_" in digest
