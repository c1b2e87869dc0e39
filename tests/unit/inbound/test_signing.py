"""The webhook signature: v1 HMAC-SHA256 over "v1:" + timestamp + ":" + body, ±300 s."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from looproom.inbound import signing
from looproom.inbound.signing import SignatureError, sign, verify

SECRET = "s3cret-for-tests"
BODY = b'{"eventType":"decision-pending","workItem":"github:o/r#7"}'
NOW = 1_790_000_000


def _headers(ts: int | str = NOW, body: bytes = BODY, secret: str = SECRET) -> dict[str, str]:
    return {
        "X-TheLoop-Timestamp": str(ts),
        "X-TheLoop-Signature": sign(secret, ts, body),
    }


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_the_signature_is_what_the_documented_openssl_command_computes() -> None:
    # docs/webhook.md tells operators to sign with exactly this pipeline.
    message = f"v1:{NOW}:".encode() + BODY
    out = subprocess.run(
        ["openssl", "dgst", "-sha256", "-hmac", SECRET, "-r"],
        input=message,
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert sign(SECRET, NOW, BODY) == "v1=" + out.split()[0]


def test_a_correctly_signed_fresh_request_verifies() -> None:
    verify(SECRET, _headers(), BODY, now=NOW + 299)
    verify(SECRET, _headers(), BODY, now=NOW - 299)


def test_a_request_exactly_300_s_old_or_ahead_verifies_and_one_second_more_does_not() -> None:
    # docs/webhook.md refuses "more than 300 s off": 300 s either side is still fresh.
    verify(SECRET, _headers(), BODY, now=NOW + 300)
    verify(SECRET, _headers(), BODY, now=NOW - 300)
    for now in (NOW + 301, NOW - 301):
        with pytest.raises(SignatureError, match="stale timestamp"):
            verify(SECRET, _headers(), BODY, now=now)


def test_a_timestamp_of_12_digits_is_read_as_a_time_and_13_digits_are_not() -> None:
    # docs/webhook.md: unix seconds, digits only, at most 12 of them. Twelve is a time, if
    # a stale one; thirteen is refused before it is read as a number.
    twelve, thirteen = "9" * 12, "9" * 13
    verify(SECRET, _headers(ts=twelve), BODY, now=int(twelve))
    with pytest.raises(SignatureError, match="stale timestamp"):
        verify(SECRET, _headers(ts=twelve), BODY, now=NOW)
    with pytest.raises(SignatureError, match="is not unix seconds"):
        verify(SECRET, _headers(ts=thirteen), BODY, now=int(thirteen))


@pytest.mark.parametrize("given", ["v1=\udc80", "v1=é" + "0" * 63, "\x00", "v1=" + "f" * 10_000])
def test_any_signature_header_is_refused_as_bad_never_a_crash(given: str) -> None:
    # A header value is text from outside: whatever it holds, the answer is a refusal.
    with pytest.raises(SignatureError, match="bad signature"):
        verify(SECRET, {**_headers(), "X-TheLoop-Signature": given}, BODY, now=NOW)


def test_header_names_are_case_insensitive() -> None:
    lowered = {name.lower(): value for name, value in _headers().items()}
    verify(SECRET, lowered, BODY, now=NOW)


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"X-TheLoop-Signature": sign(SECRET, NOW, BODY)}, "missing header X-TheLoop-Timestamp"),
        ({"X-TheLoop-Timestamp": str(NOW)}, "missing header X-TheLoop-Signature"),
        (_headers(ts="17e8"), "X-TheLoop-Timestamp is not unix seconds"),
        (_headers(ts="-1"), "X-TheLoop-Timestamp is not unix seconds"),
        (_headers(ts="²"), "X-TheLoop-Timestamp is not unix seconds"),
        (_headers(ts=NOW - 301), "stale timestamp"),
        (_headers(ts=NOW + 301), "stale timestamp"),
        (_headers(secret="another secret"), "bad signature"),
        (_headers(body=BODY + b" "), "bad signature"),
        ({**_headers(), "X-TheLoop-Signature": "v2=" + "0" * 64}, "bad signature"),
    ],
)
def test_each_refusal_says_why(headers: dict[str, str], reason: str) -> None:
    with pytest.raises(SignatureError) as caught:
        verify(SECRET, headers, BODY, now=NOW)
    assert caught.value.reason.startswith(reason)


def test_a_signature_for_another_timestamp_does_not_verify() -> None:
    # Replay with a fresh timestamp but the old signature: the timestamp is signed.
    headers = {"X-TheLoop-Timestamp": str(NOW), "X-TheLoop-Signature": sign(SECRET, NOW - 1, BODY)}
    with pytest.raises(SignatureError, match="bad signature"):
        verify(SECRET, headers, BODY, now=NOW)


def test_the_signature_comparison_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = signing.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(signing.hmac, "compare_digest", spy)
    with pytest.raises(SignatureError):
        verify(SECRET, _headers(secret="wrong"), BODY, now=NOW)
    assert len(compared) == 1
