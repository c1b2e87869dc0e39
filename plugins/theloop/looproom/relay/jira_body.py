"""A relayed comment as Jira takes it: ADF on Cloud (REST 3), wiki markup on Data Center.

The relay composes every comment once, in the markdown a GitHub issue takes (the words,
the attribution, the-loop's stamp and envelope). Jira has no hidden text, so the-loop
marks its Jira comments with visible lines instead, and so does this: a *relay* (a
decision, the operator's words) closes with ``[the-loop:relay]``, which the-loop's Jira
ingress accepts on a comment by its service account; a *record* (a reply, context, a
decision on record) closes with ``[the-loop:agent-comment]``, the-loop's own. Any
the-loop marker in the words themselves is broken first (a non-breaking hyphen), so a
member's text can never read as one. The envelope stays, as the comment's last line of
plain text: the-loop's envelope parser finds it there, so its poller does not echo the
record back into the room, and ``!theloop records`` can say who said it, when.

markdown-it-py reads the markdown; what Jira does not draw (raw HTML) is kept as text.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from looproom.relay import records

SELF_LINE = "🤖 the-loop, autonomous comment · [the-loop:agent-comment]"
RELAY_LINE = "🗣️ relayed by the-loop · [the-loop:relay]"
_ENVELOPE = re.compile(r"<!--\s*the-loop:event\s+\{.*?\}\s*-->", re.DOTALL)
#: ``the-loop:`` as a marker opens, plain or backslash-escaped, in any case.
_MARKER = re.compile(r"the\\?-loop\\?:(?=[A-Za-z0-9&\\])", re.IGNORECASE)
_DEFANGED = "the\u2011loop:"
_STAMP = f"{records.ATTRIBUTION}\n{records.MARKER}"
_MARKS = {"strong": "strong", "em": "em", "s": "strike"}
_WIKI_SPECIAL = re.compile(r"([{}\[\]|*_^~\-+?!#])")
_URL = re.compile(r"https?://[^\s<>\[\]{}|]+")


def jira_markdown(body: str, *, relayed: bool) -> str:
    """``body`` (the GitHub form) with Jira's visible mark in place of the hidden one."""
    found = _ENVELOPE.findall(body)
    envelope = found[-1] if found else ""
    text = _ENVELOPE.sub("", body).replace(_STAMP, "").replace(records.MARKER, "")
    text = _MARKER.sub(_DEFANGED, text).rstrip()
    trailer = RELAY_LINE if relayed else SELF_LINE
    return f"{text}\n\n{trailer}\n\n{envelope}\n" if envelope else f"{text}\n\n{trailer}\n"


def to_jira(markdown: str, rest: str) -> Any:
    """The comment's ``body``: an ADF document for REST 3, wiki markup for REST 2."""
    document = to_adf(markdown)
    return document if rest == "3" else to_wiki(document)


# -- markdown → ADF -------------------------------------------------------------------


def to_adf(markdown: str) -> dict[str, Any]:
    """``markdown`` as an Atlassian Document Format document."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    content, _ = _blocks(tokens, 0, "")
    return {"type": "doc", "version": 1, "content": content}


def _blocks(tokens: list[Token], at: int, until: str) -> tuple[list[dict[str, Any]], int]:
    """The block nodes from ``tokens[at]`` up to the ``until`` closing token."""
    out: list[dict[str, Any]] = []
    while at < len(tokens):
        token = tokens[at]
        if token.type == until:
            return out, at + 1
        node, at = _block(tokens, at)
        if node is not None:
            out.append(node)
    return out, at


_CONTAINERS = {
    "blockquote_open": ("blockquote", "blockquote_close"),
    "bullet_list_open": ("bulletList", "bullet_list_close"),
    "ordered_list_open": ("orderedList", "ordered_list_close"),
    "list_item_open": ("listItem", "list_item_close"),
}


def _block(tokens: list[Token], at: int) -> tuple[dict[str, Any] | None, int]:
    token = tokens[at]
    if token.type in _CONTAINERS:
        kind, close = _CONTAINERS[token.type]
        inner, after = _blocks(tokens, at + 1, close)
        return {"type": kind, "content": inner or [_paragraph([])]}, after
    if token.type in ("paragraph_open", "heading_open"):
        inline = _inline(tokens[at + 1].children or [])
        if token.type == "heading_open":
            level = int(token.tag[1:])
            return {"type": "heading", "attrs": {"level": level}, "content": inline}, at + 3
        return _paragraph(inline), at + 3
    if token.type in ("fence", "code_block"):
        code = token.content.rstrip("\n")
        node: dict[str, Any] = {"type": "codeBlock", "attrs": {"language": token.info.strip()}}
        return {**node, "content": [_text(code)] if code else []}, at + 1
    if token.type == "hr":
        return {"type": "rule"}, at + 1
    if token.type == "html_block":  # kept as text: Jira has no hidden text
        text = token.content.strip()
        return (_paragraph([_text(text)]) if text else None), at + 1
    return None, at + 1


def _paragraph(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "paragraph", "content": content}


def _text(text: str, marks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "text", "text": text}
    return {**node, "marks": marks} if marks else node


def _inline(children: list[Token]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    marks: list[dict[str, Any]] = []
    for child in children:
        kind = child.type
        if kind.endswith("_open") and kind[:-5] in _MARKS:
            marks.append({"type": _MARKS[kind[:-5]]})
        elif kind == "link_open":
            marks.append({"type": "link", "attrs": {"href": str(child.attrs.get("href", ""))}})
        elif kind.endswith("_close") and marks:
            marks.pop()
        elif kind in ("softbreak", "hardbreak"):
            out.append({"type": "hardBreak"})
        elif kind == "code_inline" and child.content:
            out.append(_text(child.content, [*marks, {"type": "code"}]))
        elif kind in ("text", "html_inline", "image") and child.content:
            out.append(_text(child.content, list(marks)))
    return out


# -- reading a body back -------------------------------------------------------------------


def to_text(body: Any) -> str:
    """A comment's body as Jira returns it (ADF, or wiki markup) as lines of text: a
    quote's lines opened with ``> ``, as the markdown it was written from."""
    if isinstance(body, str):
        return _wiki_text(body)
    if not isinstance(body, dict):
        return ""
    return "\n\n".join(_adf_text(node) for node in body.get("content") or [])


def _adf_text(node: Any) -> str:
    if not isinstance(node, dict):
        return ""
    if node.get("type") == "text":
        return str(node.get("text", ""))
    if node.get("type") == "hardBreak":
        return "\n"
    inner = node.get("content") or []
    if node.get("type") == "blockquote":
        lines = "\n".join(_adf_text(child) for child in inner).splitlines()
        return "\n".join(f"> {line}" for line in lines)
    joiner = "" if node.get("type") in ("paragraph", "heading") else "\n"
    return joiner.join(_adf_text(child) for child in inner)


def _wiki_text(text: str) -> str:
    plain = re.sub(r"\\(.)", r"\1", text).replace("&#92;", "\\")
    out, quoting = [], False
    for line in plain.splitlines():
        if line.strip() == "{quote}":
            quoting = not quoting
            continue
        out.append(f"> {line}" if quoting else line)
    return "\n".join(out)


# -- ADF → wiki markup (Data Center) ------------------------------------------------------


def to_wiki(document: dict[str, Any]) -> str:
    """An ADF document as Jira Data Center's wiki markup."""
    return "\n\n".join(_wiki_block(node) for node in document.get("content", [])).strip()


def _wiki_block(node: dict[str, Any], bullet: str = "") -> str:
    kind, content = node.get("type"), node.get("content", [])
    if kind == "paragraph":
        return _wiki_inline(content)
    if kind == "heading":
        return f"h{node['attrs']['level']}. {_wiki_inline(content)}"
    if kind == "blockquote":
        return "{quote}\n" + "\n\n".join(_wiki_block(n) for n in content) + "\n{quote}"
    if kind in ("bulletList", "orderedList"):
        sign = bullet + ("*" if kind == "bulletList" else "#")
        return "\n".join(_wiki_item(item, sign) for item in content)
    if kind == "codeBlock":
        code = "".join(n.get("text", "") for n in content)
        language = node.get("attrs", {}).get("language") or ""
        return f"{{code{':' + language if language else ''}}}\n{code}\n{{code}}"
    if kind == "rule":
        return "----"
    return ""


def _wiki_item(item: dict[str, Any], sign: str) -> str:
    lines = []
    for index, child in enumerate(item.get("content", [])):
        if child.get("type") in ("bulletList", "orderedList"):
            lines.append(_wiki_block(child, sign))
        else:
            text = _wiki_block(child)
            lines.append(f"{sign} {text}" if index == 0 else text)
    return "\n".join(lines)


def _wiki_inline(nodes: list[dict[str, Any]]) -> str:
    out = []
    for node in nodes:
        if node.get("type") == "hardBreak":
            out.append("\n")  # a new line in a wiki paragraph is a line break
            continue
        text, marks = str(node.get("text", "")), node.get("marks", [])
        kinds = {mark["type"]: mark for mark in marks}
        if "code" in kinds:
            out.append("{{" + text.replace("}}", "} }") + "}}")
            continue
        shown = _wiki_escape(text)
        for kind, sign in (("strong", "*"), ("em", "_"), ("strike", "-")):
            if kind in kinds:
                shown = f"{sign}{shown}{sign}"
        if "link" in kinds:
            shown = f"[{shown}|{kinds['link']['attrs']['href']}]"
        out.append(shown)
    return "".join(out)


def _wiki_escape(text: str) -> str:
    """What wiki markup would read as markup escaped, bare URLs left to be links."""
    parts, at = [], 0
    for match in _URL.finditer(text):
        parts.append(_WIKI_SPECIAL.sub(r"\\\1", text[at : match.start()].replace("\\", "&#92;")))
        parts.append(match.group(0))
        at = match.end()
    parts.append(_WIKI_SPECIAL.sub(r"\\\1", text[at:].replace("\\", "&#92;")))
    return "".join(parts)
