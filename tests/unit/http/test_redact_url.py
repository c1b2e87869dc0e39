"""Every URL shown (a log line, a finding, `!theloop status`) keeps its server and path and
loses its user, password, query and fragment — whatever characters the password holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from looproom.http.origins import redact_url

#: Printable ASCII, the characters that end a URL's parts (`/`, `?`, `#`, `@`, `:`) included.
_PASSWORD = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1)


@given(password=_PASSWORD, user=st.sampled_from(["theloop", "", "a@b.example"]))
def test_no_password_survives_whatever_it_holds(password: str, user: str) -> None:
    url = f"postgresql://{user}:{password}@db.internal:5432/theloop?sslmode=require#x"
    assert redact_url(url) == "postgresql://db.internal:5432/theloop"


@given(password=_PASSWORD.filter(lambda text: "@" not in text))
def test_a_bearer_in_the_query_or_fragment_is_dropped(password: str) -> None:
    shown = redact_url(f"https://loop.example/api/v1/stream?token={password}")
    assert shown == "https://loop.example/api/v1/stream"
    assert redact_url(f"https://loop.example/x#{password}") == "https://loop.example/x"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:p/ss@db/name", "postgresql://db/name"),
        ("postgresql://u:p?ss@db/name", "postgresql://db/name"),
        ("postgresql://u:p#ss@db/name", "postgresql://db/name"),
        ("postgresql://u:p@ss@db/name", "postgresql://db/name"),
        ("https://u:a/b?c#d@loop.example:8443/api", "https://loop.example:8443/api"),
        ("https://loop.example:8443/api/v1", "https://loop.example:8443/api/v1"),
        ("u:secret@host/db", "host/db"),
        # An `@` with no host after it: the password could be anywhere, so nothing is shown.
        ("https://u:1234/ss@/x", "https://(address hidden)"),
        ("https://loop.example/api?token=@", "https://(address hidden)"),
        # An `@` in a query is read as ending a password: less is shown, never a secret.
        ("https://loop.example/api?who=a@b.example", "https://b.example"),
        ("", ""),
    ],
)
def test_passwords_holding_the_characters_that_end_a_part(url: str, shown: str) -> None:
    assert redact_url(url) == shown
