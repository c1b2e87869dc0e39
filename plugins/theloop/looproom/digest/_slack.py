"""What Slack needs of any text we draw: escaping, safe links, no comments.

Slack reads ``<…>`` as a control sequence — a link, ``<@U…>`` (a mention),
``<!here>`` (a broadcast) — and ``&`` as the start of an escape. Every character
the author wrote is escaped (``&amp;`` ``&lt;`` ``&gt;``), so no text can form a
sequence; the only ``<…>`` in our output are the links we build, from a URL
made safe here (no ``|``, ``<``, ``>`` or space can end it early).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["escape", "footer", "is_absolute", "safe_url", "strip_comments"]

#: Characters that would end or split a Slack link token, or a URL in it.
_URL_UNSAFE = re.compile(r"[\s|<>\"`\x00-\x1f\x7f]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,31}:")
_LINK_SCHEMES = ("http:", "https:", "mailto:", "ftp:")
_HOST = re.compile(r"[A-Za-z0-9.-]{1,63}")


def escape(text: str) -> str:
    """``&``, ``<``, ``>`` as Slack requires them: no mention, no broadcast."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def is_absolute(url: str) -> bool:
    """A URL Slack can open from a phone: ``http(s):``, ``mailto:`` or ``ftp:``."""
    match = _SCHEME.match(url)
    return bool(match) and match.group(0).lower() in _LINK_SCHEMES


def safe_url(url: str) -> str:
    """``url`` ready for ``<url|label>``: what could end the token percent-encoded,
    then escaped: it cannot end its link early or carry a sequence out of it."""
    encoded = _URL_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m[0].encode()), url)
    return escape(encoded)


def strip_comments(text: str) -> str:
    """Every ``<!-- … -->`` removed by a forward scan; an unterminated opener is
    kept, as text (a forward scan: linear however the text is crafted)."""
    out: list[str] = []
    pos = 0
    while (start := text.find("<!--", pos)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        out.append(text[pos:start])
        pos = end + 3
    out.append(text[pos:])
    return "".join(out)


def footer(url: str) -> str:
    """The closing line: the event's URL, never one from the text (which could
    lead anywhere), named by its host — GitHub for github.com."""
    if not is_absolute(url):
        return "_… the full text is on the ticket_"
    return f"_… full text: <{safe_url(url)}|{_site(url)}>_"


def _site(url: str) -> str:
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return "link"
    if host == "github.com" or host.endswith(".github.com"):
        return "GitHub"
    return host if _HOST.fullmatch(host) else "link"
