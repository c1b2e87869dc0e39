"""The Slack app's manifest: the repository's ``slack-app-manifest.yaml``, named and addressed.

The file at the repository's root is the one source. :func:`render` fills in the bot's name
and, for HTTP mode (no Socket Mode), the request URLs Slack posts events, presses, shortcuts
and the slash command to. ``!theloop manifest`` and ``make manifest`` print it with Slack's
one-click create link (:func:`create_link`), and ``make manifest`` against the manifest an
app was made from says the scopes and events it adds or removes (:func:`changes`); the
doctor compares the token's granted scopes with :func:`bot_scopes`.

:data:`METHOD_SCOPES` says which bot scopes each Slack Web API method needs for the rooms the
bot serves (public and private channels, group DMs, and direct messages for commands); a
test reads the code's calls and compares what they need with the file, so the two cannot
drift apart.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote, urlsplit

import yaml

MANIFEST_FILE = Path(__file__).resolve().parents[3] / "slack-app-manifest.yaml"
#: Slack's one-click app creation, the manifest (as JSON) after it.
CREATE_URL = "https://api.slack.com/apps?new_app=1&manifest_json="
#: What a regenerated manifest is compared on: the bot's scopes and the events it hears.
_COMPARED = (
    ("scopes", ("oauth_config", "scopes", "bot")),
    ("events", ("settings", "event_subscriptions", "bot_events")),
)
DEFAULT_NAME = "theloop"
#: Slack refuses a longer app name.
MAX_NAME = 35
#: Where Slack posts each kind of request in HTTP mode. Events go to Errbot's SlackV3 backend,
#: whose view the bot's own server serves at that path; presses and shortcuts to the plugin.
EVENTS_PATH = "/slack/events"
INTERACTIVE_PATH = "/theloop/slack/interactive"
COMMANDS_PATH = "/theloop/slack/commands"
SLASH_COMMAND = "/the-loop"
#: The message shortcuts (callback id → the name Slack shows in a message's ⋯ menu).
SHORTCUTS = {
    "theloop_record_context": "Add as the-loop context",
    "theloop_record_decision": "Record a decision",
}

_PUBLIC_PRIVATE_READ = frozenset({"channels:read", "groups:read"})
#: A thread is read wherever the room posts: public and private rooms, and group DMs.
_ROOM_HISTORY = frozenset({"channels:history", "groups:history", "mpim:history"})
#: Bot scopes each Web API method needs here (Slack's method reference; a method that works
#: on several conversation kinds needs the scope of each kind the bot is used in).
METHOD_SCOPES: Mapping[str, frozenset[str]] = {
    "auth.test": frozenset(),
    "apps.connections.open": frozenset(),  # the app-level token's connections:write
    "bots.info": frozenset({"users:read"}),
    "chat.delete": frozenset({"chat:write"}),
    "chat.postEphemeral": frozenset({"chat:write"}),
    "chat.postMessage": frozenset({"chat:write"}),
    "chat.update": frozenset({"chat:write"}),
    "conversations.history": _ROOM_HISTORY,
    "files.info": frozenset({"files:read"}),
    "conversations.info": _PUBLIC_PRIVATE_READ | {"im:read", "mpim:read"},
    "conversations.list": _PUBLIC_PRIVATE_READ,
    # Who may read a work item's records: the members of a room it lives in (room/readers).
    "conversations.members": _PUBLIC_PRIVATE_READ | {"mpim:read"},
    "conversations.open": frozenset({"im:write"}),  # an ask's direct message to a member
    "conversations.replies": _ROOM_HISTORY,
    "reactions.add": frozenset({"reactions:write"}),
    "team.info": frozenset({"team:read"}),
    "users.conversations": _PUBLIC_PRIVATE_READ,
    "users.info": frozenset({"users:read"}),
    "users.list": frozenset({"users:read"}),
    "views.open": frozenset(),  # a form opened from a shortcut or a button: no scope
    "views.publish": frozenset(),  # a member's App Home tab: the Home tab feature, no scope
}
#: Scopes no method call shows: what Slack puts in the events the bot reads.
CONTENT_SCOPES: Mapping[str, str] = {
    "files:read": "a file attached to a reply is fetched for the agent's session",
}
#: What Errbot's SlackV3 backend calls on the bot's behalf while it runs: at start-up (the
#: token, the bot's own user and workspace) and for each message it hands the plugin.
BACKEND_METHODS = (
    "auth.test",
    "users.info",
    "bots.info",
    "team.info",
    "conversations.info",
    "chat.postMessage",
)
#: The scope each bot event needs (Slack's event reference; ``""``: none).
EVENT_SCOPES = {
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
    "message.mpim": "mpim:history",
    "app_mention": "app_mentions:read",
    "reaction_added": "reactions:read",  # 👀 on an ask claims it (docs/attention.md)
    "app_home_opened": "",  # the Home tab opened: what waits on the member, drawn
}
USAGE = "usage: manifest [--name NAME] [--http https://public.host]"
_NOT_HANDLE = re.compile(r"[^a-z0-9._-]+")


class ManifestError(ValueError):
    """A name or URL the manifest cannot carry; the message says what is wrong."""


def load(path: Path = MANIFEST_FILE) -> dict[str, Any]:
    """The shipped manifest as a mapping."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def bot_scopes(manifest: Mapping[str, Any]) -> frozenset[str]:
    """The bot scopes the manifest asks for."""
    return frozenset(manifest["oauth_config"]["scopes"]["bot"])


def bot_events(manifest: Mapping[str, Any]) -> frozenset[str]:
    """The bot events the manifest subscribes to."""
    return frozenset(manifest["settings"]["event_subscriptions"]["bot_events"])


def event_scopes(events: Iterable[str]) -> frozenset[str]:
    """The bot scopes ``events`` need; KeyError names an event nobody mapped yet."""
    return frozenset(EVENT_SCOPES[event] for event in events) - {""}


def home_tab(manifest: Mapping[str, Any]) -> bool:
    """Whether the manifest turns the app's Home tab on."""
    return bool((manifest["features"].get("app_home") or {}).get("home_tab_enabled"))


def scopes_for(methods: Iterable[str]) -> frozenset[str]:
    """The bot scopes ``methods`` need; KeyError names a method nobody mapped yet."""
    needed: set[str] = set()
    for method in methods:
        needed |= METHOD_SCOPES[method]
    return frozenset(needed)


def handle(name: str) -> str:
    """The bot user's display name for an app name: lowercase, ``[a-z0-9._-]``."""
    return _NOT_HANDLE.sub("-", name.strip().lower()).strip("-")


def render(name: str = DEFAULT_NAME, http_url: str = "", path: Path = MANIFEST_FILE) -> str:
    """The manifest to paste into Slack: named ``name``; for HTTP mode when ``http_url`` is
    the bot's public base URL (https), else for Socket Mode (the file as shipped)."""
    name = _checked_name(name)
    if name == DEFAULT_NAME and not http_url:
        return path.read_text(encoding="utf-8")
    manifest = load(path)
    manifest["display_information"]["name"] = name
    manifest["features"]["bot_user"]["display_name"] = handle(name)
    if http_url:
        _address(manifest, _checked_url(http_url))
    return yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=100)


def create_link(text: str) -> str:
    """Slack's one-click create-app link carrying the manifest ``text`` (as rendered)."""
    compact = json.dumps(yaml.safe_load(text), separators=(",", ":"), ensure_ascii=False)
    return CREATE_URL + quote(compact, safe="")


def changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The bot scopes and events ``new`` adds to or removes from ``old``, one line each —
    what reinstalling the app after regenerating its manifest grants or takes away."""
    lines = []
    for label, keys in _COMPARED:
        before, after = _listed(old, keys), _listed(new, keys)
        added = [item for item in after if item not in before]
        removed = [item for item in before if item not in after]
        lines += [f"{label} added: {', '.join(added)}"] if added else []
        lines += [f"{label} removed: {', '.join(removed)}"] if removed else []
    return lines


def _listed(manifest: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    node: Any = manifest
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return [str(item) for item in node] if isinstance(node, list) else []


def _address(manifest: dict[str, Any], base: str) -> None:
    settings = manifest["settings"]
    settings["socket_mode_enabled"] = False
    settings["event_subscriptions"]["request_url"] = base + EVENTS_PATH
    settings["interactivity"]["request_url"] = base + INTERACTIVE_PATH
    for command in manifest["features"].get("slash_commands") or []:
        command["url"] = base + COMMANDS_PATH


def _checked_name(name: str) -> str:
    trimmed = name.strip()
    if not trimmed or not trimmed.isprintable():
        raise ManifestError("the app name must be some printable text")
    if len(trimmed) > MAX_NAME:
        raise ManifestError(f"the app name has {len(trimmed)} characters; Slack allows {MAX_NAME}")
    if not handle(trimmed):
        raise ManifestError("the app name needs a letter or digit (a-z, 0-9) for the bot's handle")
    return trimmed


def _checked_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme != "https" or not parts.hostname:
        raise ManifestError(
            f"--http needs the bot's public https:// URL (Slack posts only to https), got {url!r}"
        )
    if parts.query or parts.fragment or parts.username:
        raise ManifestError("--http takes a base URL without credentials, query or fragment")
    return f"https://{parts.netloc}{parts.path.rstrip('/')}"


def parse_args(args: list[str]) -> argparse.Namespace:
    """``[--name NAME] [--http URL]``, as the chat command and ``make manifest`` take them."""
    parser = _Parser(prog="manifest", add_help=False)
    parser.add_argument("--name", default=DEFAULT_NAME)
    parser.add_argument("--http", default="")
    parser.add_argument("--against", default="")
    parsed, rest = parser.parse_known_args(args)
    if rest:
        parser.error(f"unexpected {' '.join(rest)!r}")
    return parsed


class _Parser(argparse.ArgumentParser):
    """Raises instead of exiting: a chat command must answer, not end the bot."""

    def error(self, message: str) -> NoReturn:
        raise ManifestError(f"{message}; {USAGE}")


def command(args: str, bot_name: str = "") -> str:
    """``!theloop manifest [--name NAME] [--http URL]``: the manifest, fenced for chat,
    named after the bot (``bot_name``, as the chat knows it) unless ``--name`` says."""
    try:
        parsed = parse_args(args.split())
        if parsed.name == DEFAULT_NAME and bot_name.strip().lstrip("@"):
            parsed.name = bot_name.strip().lstrip("@")
        text = render(parsed.name, parsed.http)
    except ManifestError as exc:
        return str(exc)
    mode = f"HTTP mode, requests to {parsed.http}" if parsed.http else "Socket Mode"
    return (
        f"The Slack app manifest ({mode}): create the app in one click — "
        f"<{create_link(text)}|Create the app from this manifest> — or api.slack.com/apps → "
        "Create New App → From a manifest, then paste it.\n```\n"
        + text.replace("```", "`\u200b``")
        + "```"
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m looproom.manifest [--name NAME] [--http URL] [--against FILE]``: print the
    manifest; on standard error, its one-click create link and, ``--against`` the manifest
    the app was made from, the scopes and events it adds or removes."""
    try:
        parsed = parse_args(sys.argv[1:] if argv is None else argv)
        text = render(parsed.name, parsed.http)
        old = _read(parsed.against) if parsed.against else None
    except ManifestError as exc:
        print(f"manifest: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    print(f"manifest: create the app in one click: {create_link(text)}", file=sys.stderr)
    if old is not None:
        found = changes(old, yaml.safe_load(text)) or ["no scope or event changed"]
        for line in found:
            print(f"manifest: against {parsed.against}: {line}", file=sys.stderr)
    return 0


def _read(path: str) -> Mapping[str, Any]:
    """An earlier manifest, YAML or JSON (JSON is YAML); the error names what is wrong."""
    try:
        found = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ManifestError(f"--against {path}: cannot be read ({type(exc).__name__})") from None
    if not isinstance(found, Mapping):
        raise ManifestError(f"--against {path}: not a manifest (a mapping)")
    return found


if __name__ == "__main__":
    raise SystemExit(main())
