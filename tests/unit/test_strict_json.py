"""Strict JSON: what Python's json would take but UTF-8 storage, Slack or the-loop would not."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looproom import strict_json
from looproom.durable.queue import DurableQueue
from looproom.inbound.signing import sign
from looproom.inbound.webhook import Request, handle

SECRET = "strict-json-test-secret"

#: Any code point, lone surrogates included (hypothesis leaves them out unless asked).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=20,
)


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(VALUES)
def test_what_it_accepts_round_trips_through_utf8(value: object) -> None:
    text = json.dumps(value)  # ASCII: surrogates escaped, NaN written as NaN
    try:
        decoded = strict_json.loads(text.encode())
    except strict_json.StrictJSONError as exc:
        assert exc.errors and all(": " in error for error in exc.errors)
        return
    json.dumps(decoded, ensure_ascii=False, allow_nan=False).encode("utf-8")  # never raises


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"a": "\\udfff"}', "a: a lone surrogate \\udfff is not Unicode text"),
        ('{"a b": {"\\ud800": 1}}', 'body["a b"] (a key): a lone surrogate'),
        ("[1, [2, NaN]]", "body[1][1]: NaN is not JSON"),
        ('{"n": ' + "1" * 101 + "}", "n: an integer of 101 digits (at most 100)"),
        ("[" * 40 + "]" * 40, "nested deeper than 32 levels"),
    ],
)
def test_each_refusal_names_where(text: str, error: str) -> None:
    with pytest.raises(strict_json.StrictJSONError) as caught:
        strict_json.loads(text.encode())
    assert any(error in found for found in caught.value.errors), caught.value.errors


def test_a_pair_of_surrogates_is_one_character_and_fine() -> None:
    assert strict_json.loads(b'{"smile": "\\ud83d\\ude00"}') == {"smile": "\U0001f600"}


@settings(max_examples=60, deadline=None)
@given(
    st.binary(max_size=300)
    | VALUES.map(
        lambda v: json.dumps({"eventType": "x", "workItem": "g:a/b#1", "actor": {"v": v}}).encode()
    )
)
def test_a_signed_body_is_answered_never_raised(tmp_path_factory, body: bytes) -> None:
    inbox = DurableQueue(tmp_path_factory.mktemp("q") / "q.sqlite3", "inbox")
    try:
        headers = {"X-TheLoop-Timestamp": "1700000000"}
        headers["X-TheLoop-Signature"] = sign(SECRET, "1700000000", body)
        answer = handle(
            Request("POST", headers, body, len(body)), secret=SECRET, inbox=inbox, now=1700000000
        )
        assert answer.status in (200, 202, 400, 422)
        if answer.status == 202:
            (item,) = inbox.list()
            item.payload.encode("utf-8")
    finally:
        inbox.close()


# -- each bound at its edge and one past it (docs/security.md: an integer over 100 digits,
# -- nesting over 32 levels, over 20 000 values are refused) ---------------------------------


def _refused(text: str) -> str:
    try:
        strict_json.loads(text)
    except strict_json.StrictJSONError as exc:
        return str(exc)
    return ""


def test_an_integer_of_100_digits_is_read_and_101_are_refused() -> None:
    assert strict_json.loads('{"n": ' + "9" * 100 + "}") == {"n": int("9" * 100)}
    assert strict_json.loads('{"n": -' + "9" * 100 + "}")["n"] < 0  # the sign is no digit
    assert "101 digits" in _refused('{"n": ' + "9" * 101 + "}")


def test_nesting_32_levels_deep_is_read_and_33_is_refused() -> None:
    assert strict_json.loads("[" * 32 + "]" * 32) is not None
    assert "nested deeper than 32 levels" in _refused("[" * 33 + "]" * 33)
    assert strict_json.loads('{"a":' * 31 + "{}" + "}" * 31) is not None
    assert "nested deeper than 32 levels" in _refused('{"a":' * 32 + "{}" + "}" * 32)


def test_a_document_of_20000_values_is_read_and_20001_are_refused() -> None:
    # The array is a value as well as each number in it.
    assert len(strict_json.loads(json.dumps([0] * 19_999))) == 19_999
    assert "more than 20000 values" in _refused(json.dumps([0] * 20_000))


def test_the_twenty_thousandth_value_is_checked_like_the_first() -> None:
    # 20 000 values are read, so each is held to the rules: a lone surrogate as the last.
    document = json.dumps([0] * 19_998 + ["\ud800"])
    assert "lone surrogate" in _refused(document)
