"""One activation's parts as the plugin builds them on a plain backend (no Slack client),
for the tests that drive them directly; stopped on the way out."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from looproom.assembly import Activation
from looproom.settings import Environment, Settings

WEBHOOK_SECRET = "x" * 32


@contextmanager
def plain_room(
    data_dir: Path,
    settings: Settings | None = None,
    env: Mapping[str, str] | None = None,
    *,
    say: Callable[[str, str], None] = lambda _to, _text: None,
    admins: tuple[str, ...] = (),
    bot_member: str = "U0THELOOP",
) -> Iterator[Activation]:
    """A :class:`Activation` on ``data_dir`` with ``settings``, its environment a webhook
    secret plus ``env``; what it would say to a person goes to ``say``."""
    room = Activation(
        Environment.from_env({"THELOOP_WEBHOOK_SECRET": WEBHOOK_SECRET, **(env or {})}),
        settings if settings is not None else Settings(),
        store={},
        data_dir=data_dir,
        slack=None,
        say=say,
        admins=admins,
        bot_member=lambda: bot_member,
    )
    try:
        yield room
    finally:
        room.stop()
