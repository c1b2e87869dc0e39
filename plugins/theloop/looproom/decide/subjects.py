"""What ``add-collaborator``, ``remove-collaborator``, ``add-channel`` and ``remove-channel``
name, read as the-loop's own parsers will read it back.

the-loop's ``control.parse_command`` takes, after the collaborator keywords, a run of
``@login`` (a GitHub login) and ``slack:U…`` (a Slack member id) tokens, and after the
channel keywords a run of ``slack@<id or #name>`` refs; each run ends at the first token
that is not one. A member in Slack types a mention (``<@U0456>``), a login (``@dana``),
a room link (``<#C0123|war-room>``), a name (``#War-Room``, ``war-room``) or an id — each
is read here into the token the-loop reads, and anything else refuses the whole command,
so nothing half-read is relayed.
"""

from __future__ import annotations

import re

from looproom.decide import grammar

SLACK_PREFIX = "slack:"
CHANNEL_PREFIX = "slack@"
#: A Jira ticket as the-loop's collaboration channel (``add-channel jira@OPS-12``): the-loop
#: mirrors the work item's progress there; nothing of it is a Slack room.
JIRA_PREFIX = "jira@"
_JIRA_KEY = re.compile(r"^[A-Z][A-Z0-9_]{0,9}-[1-9][0-9]{0,9}$")

#: A Slack mention as Slack writes it in message text.
_MENTION = re.compile(r"^<@([UW][A-Z0-9]{2,20})(?:\|[^>]*)?>$")
_MEMBER = re.compile(r"^[UW][A-Z0-9]{2,20}$")
#: GitHub's login grammar, the-loop's ``LOGIN_RE``.
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
#: A room link as Slack writes it, a room id, or a room name (the-loop's Slack target).
_ROOM_LINK = re.compile(r"^<#([CG][A-Z0-9]{2,20})(?:\|[^>]*)?>$")
_ROOM_ID = re.compile(r"^[CG][A-Z0-9_-]{1,20}$")
_ROOM_NAME = re.compile(r"^#[a-z0-9][a-z0-9_-]{0,79}$")
_TRAILING = ".,;:!?)]}\"'`"


def member_token(word: str) -> str:
    """``slack:U…`` for a mention or an id token, ``@login`` for a login, ``""`` else."""
    word = word.rstrip(_TRAILING) if not word.endswith(">") else word
    mention = _MENTION.match(word)
    if mention:
        return SLACK_PREFIX + mention[1]
    if word[: len(SLACK_PREFIX)].lower() == SLACK_PREFIX and _MEMBER.match(word[6:]):
        return SLACK_PREFIX + word[6:]
    if word.startswith("@") and _LOGIN.match(word[1:]):
        return "@" + word[1:].lower()
    return ""


#: the-loop's flag on a channel command: how the room listens (its ``--listen``), and its
#: two modes — ``mentions`` also typed as this room's own word for it, ``addressed``.
LISTEN_FLAG, LISTEN_MODES = (
    "--listen",
    {"all": "all", "mentions": "mentions", "addressed": "mentions"},
)


def room_token(word: str) -> str:
    """``slack@C…`` for a room link or id, ``slack@#name`` for a name (``#`` optional, any
    case: Slack's names are lower case), ``jira@OPS-12`` for a Jira ticket's channel, ``""``
    else. A name is looked up before the command is recorded
    (``looproom.decide.room_names``)."""
    link = _ROOM_LINK.match(word)
    if link:
        return CHANNEL_PREFIX + link[1]
    word = word.rstrip(_TRAILING)
    if word[: len(JIRA_PREFIX)].lower() == JIRA_PREFIX:
        key = word[len(JIRA_PREFIX) :].upper()
        return JIRA_PREFIX + key if _JIRA_KEY.match(key) else ""
    if word.lower().startswith(CHANNEL_PREFIX):
        word = word[len(CHANNEL_PREFIX) :]
    if _ROOM_ID.match(word):
        return CHANNEL_PREFIX + word
    name = word.lower() if word.startswith("#") else "#" + word.lower()
    if _ROOM_NAME.match(name):
        return CHANNEL_PREFIX + name
    return ""


def room_of(token: str) -> str:
    """The room a ``slack@…`` token names, as the room's routing takes it (id or #name)."""
    return token.removeprefix(CHANNEL_PREFIX)


def slack_room(tokens: tuple[str, ...]) -> str:
    """The Slack room a channel command's tokens name first; ``""`` for none (a Jira
    ticket's channel, which the-loop alone keeps)."""
    first = tokens[0] if tokens else ""
    return room_of(first) if first.startswith(CHANNEL_PREFIX) else ""


def jira_key(tokens: tuple[str, ...]) -> str:
    """``OPS-12`` when a channel command names a Jira ticket's channel, else ``""``."""
    first = tokens[0] if tokens else ""
    return first.removeprefix(JIRA_PREFIX) if first.startswith(JIRA_PREFIX) else ""


def members_of(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The Slack member ids among ``slack:U…`` tokens."""
    return tuple(t.removeprefix(SLACK_PREFIX) for t in tokens if t.startswith(SLACK_PREFIX))


def logins_of(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The GitHub logins among ``@login`` tokens."""
    return tuple(t[1:] for t in tokens if t.startswith("@"))


def _tokens(tail: str) -> list[str]:
    return [word for word in re.split(r"[\s,]+", tail.strip()) if word]


def read_collaborators(verb: str) -> grammar.Reader:
    """``add-collaborator @dana <@U0456>``: at least one person, and nothing else."""

    def read(ref: str, tail: str, words: str) -> grammar.Parsed:
        words_ = _tokens(tail)
        tokens = [member_token(word) for word in words_]
        if not tokens or not all(tokens):
            bad = next((w for w, t in zip(words_, tokens, strict=True) if not t), "")
            what = f"`{bad[:40]}` is not a person — " if bad else ""
            return grammar.Refusal(
                f"{verb}-who",
                f"{what}`{verb}` takes the people it is about: mention them "
                f"(`{verb} @dana`) or name a GitHub login; nothing was recorded.",
                ref,
            )
        return grammar.Command(verb, ref, tuple(dict.fromkeys(tokens)))

    return read


def read_channel(verb: str, *, optional: bool = False, listen: bool = False) -> grammar.Reader:
    """``add-channel #war-room``: one room, and (``listen``) what it hears after it as
    the-loop writes it, ``--listen all|addressed``. ``remove-channel`` alone names the room
    it is typed in (the judging fills it in)."""

    def read(ref: str, tail: str, words: str) -> grammar.Parsed:
        words_ = _tokens(tail)
        if not words_ and optional:
            return grammar.Command(verb, ref)
        mode = _listen_flag(words_[1:]) if listen else ""
        token = room_token(words_[0]) if len(words_) == 1 or mode else ""
        if not token:
            flag = " [--listen all|mentions]" if listen else ""
            return grammar.Refusal(
                f"{verb}-room",
                f"`{verb}` takes one room: `{verb} #war-room{flag}` (link it, or name it); "
                "nothing was recorded.",
                ref,
            )
        return grammar.Command(verb, ref, (token, LISTEN_FLAG, mode) if mode else (token,))

    return read


def _listen_flag(words: list[str]) -> str:
    """``all`` or ``mentions`` (as the-loop names them) from ``--listen <mode>``; ``""``
    for anything else."""
    if len(words) == 2 and words[0].lower() == LISTEN_FLAG:
        return LISTEN_MODES.get(words[1].lower(), "")
    return ""


def listen_of(tokens: tuple[str, ...]) -> str:
    """The ``--listen`` mode a channel command carries, ``""`` for none."""
    if len(tokens) == 3 and tokens[1] == LISTEN_FLAG:
        return tokens[2]
    return ""
