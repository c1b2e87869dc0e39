"""SlackV3 with the Slack Web API at another base URL (``THELOOP_SLACK_API_URL``).

errbot-backend-slackv3 builds its one Web API client as ``WebClient(token=…, proxy=…)``
and has no setting for slack_sdk's ``base_url``, so GovSlack, a proxy or a test's loopback
Slack cannot be named through it. This backend is SlackV3 unchanged but for that client:
when SlackV3 sets ``slack_web``, the client is built again, with the same token and proxy,
at ``BOT_IDENTITY["base_url"]`` (``config.py`` puts it there and selects this backend only
when the variable is set). Socket Mode asks that client for its websocket URL, and people,
rooms and posts go through it, so every Web API call reaches the base URL. Not covered:
the RTM client of a classic Slack app, which SlackV3 builds apart.
"""

from __future__ import annotations

from typing import Any

# The module, not its class: Errbot takes the one ErrBot subclass defined in this module.
import slackv3.slackv3 as slackv3
from slack_sdk.web import WebClient


class SlackV3Url(slackv3.SlackBackend):
    """SlackV3 whose Web API client calls ``BOT_IDENTITY["base_url"]``."""

    def __init__(self, config: Any) -> None:
        self._base_url = str(config.BOT_IDENTITY.get("base_url") or "")
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
