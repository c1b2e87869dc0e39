"""SlackV3 with the Slack Web API at another base URL, or connected without a listener.

errbot-backend-slackv3 builds its one Web API client as ``WebClient(token=…, proxy=…)``
and has no setting for slack_sdk's ``base_url``, so GovSlack, a proxy or a test's loopback
Slack cannot be named through it. This backend is SlackV3 unchanged but for that client:
when SlackV3 sets ``slack_web``, the client is built again, with the same token and proxy,
at ``BOT_IDENTITY["base_url"]`` (``config.py`` puts it there when the variable is set).
Socket Mode asks that client for its websocket URL, and people, rooms and posts go through
it, so every Web API call reaches the base URL. Not covered: the RTM client of a classic
Slack app, which SlackV3 builds apart.

With ``BOT_IDENTITY["read"] == "poll"`` (``slack.read.mode: poll``) it connects with the
Web API alone: the token checked, the bot's identity learnt, Errbot told it is connected —
and neither Socket Mode nor the Events API's request URL is opened. The room then reads
the threads it follows on an interval (``looproom.catchup``) and posts as ever.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

# The module, not its class: Errbot takes the one ErrBot subclass defined in this module.
import slackv3.slackv3 as slackv3
from slack_sdk.web import WebClient
from slackv3.lib import SlackAPIResponseError
from slackv3.person import SlackPerson

log = logging.getLogger(__name__)


class SlackV3Url(slackv3.SlackBackend):
    """SlackV3 whose Web API client calls ``BOT_IDENTITY["base_url"]``, and which opens no
    listener when ``BOT_IDENTITY["read"]`` is ``"poll"``."""

    def __init__(self, config: Any) -> None:
        self._base_url = str(config.BOT_IDENTITY.get("base_url") or "")
        self._polled = config.BOT_IDENTITY.get("read") == "poll"
        self._slack_web: WebClient | None = None
        super().__init__(config)

    @property
    def slack_web(self) -> WebClient | None:
        return self._slack_web

    @slack_web.setter
    def slack_web(self, client: WebClient | None) -> None:
        if client is not None and self._base_url and client.base_url != self._base_url:
            client = WebClient(token=client.token, proxy=client.proxy, base_url=self._base_url)
        self._slack_web = client

    def serve_once(self) -> bool | None:
        if not self._polled:
            return super().serve_once()
        self.slack_web = WebClient(token=self.token, proxy=self.proxies)
        self.auth = self.slack_web.auth_test()
        if not self.auth["ok"]:
            raise SlackAPIResponseError(error=f"Slack refused the token: {self.auth['error']}")
        self.bot_identifier = SlackPerson(self.slack_web, self.auth["user_id"])
        self.update_alternate_prefixes()
        log.info("Connected to Slack's Web API only: the room polls what it follows")
        self.connect_callback()
        try:
            threading.Event().wait()  # posts go out on the Web API; nothing comes in here
        except KeyboardInterrupt:
            return True
        finally:
            self.disconnect_callback()
        return None
