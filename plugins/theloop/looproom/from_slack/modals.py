"""The two forms the room opens, and what comes back when one is submitted.

**Record a decision** (from the message shortcut): the kind, the decision — filled in from
the message — and the rationale. **Request changes** (from the gate's button): the reason.
Each carries in its ``private_metadata`` where it was opened — the channel, the thread and
the message — which Slack hands back untouched on submission; a form whose metadata is
not ours is read as nothing.

Drawn with slack_sdk's Block Kit models, so a malformed form fails here, not in Slack.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    InputBlock,
    Option,
    PlainTextInputElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from looproom.relay.records import DECISION_KINDS
from looproom.strict_json import obj

DECISION_VIEW, CHANGES_VIEW = "theloop_decision", "theloop_changes"
_KIND, _WHAT, _WHY = "kind", "what", "why"
#: Slack's limit on a plain-text input's initial value.
_INITIAL_MAX = 3000


@dataclass(frozen=True)
class FormOrigin:
    """Where a form was opened: what its submission acts on."""

    channel: str
    thread: str
    ts: str = ""

    def metadata(self) -> str:
        return json.dumps({"channel": self.channel, "thread": self.thread, "ts": self.ts})


@dataclass(frozen=True)
class Submitted:
    """One submitted form: which, by whom, where it was opened, and what was entered."""

    form: str
    member: str
    view_id: str
    opened: FormOrigin
    values: Mapping[str, str]


def decision_view(opened: FormOrigin, what: str) -> dict[str, Any]:
    """The **Record a decision** form, the decision filled in from the message."""
    kinds = [Option(value=kind, text=kind) for kind in DECISION_KINDS]
    blocks = [
        InputBlock(
            block_id=_KIND,
            label="Kind",
            optional=True,
            element=StaticSelectElement(action_id=_KIND, placeholder="none", options=kinds),
        ),
        InputBlock(
            block_id=_WHAT,
            label="Decision",
            element=PlainTextInputElement(
                action_id=_WHAT, multiline=True, initial_value=what.strip()[:_INITIAL_MAX] or None
            ),
        ),
        InputBlock(
            block_id=_WHY,
            label="Rationale",
            optional=True,
            element=PlainTextInputElement(action_id=_WHY, multiline=True),
        ),
    ]
    return _view(DECISION_VIEW, "Record a decision", "Record", opened, blocks)


def changes_view(opened: FormOrigin, gate: str) -> dict[str, Any]:
    """The **Request changes** form: the reason is what the agent works from."""
    blocks = [
        SectionBlock(text=f"Request changes at the `{gate}` gate." if gate else "Request changes."),
        InputBlock(
            block_id=_WHY,
            label="What should change, and why?",
            element=PlainTextInputElement(action_id=_WHY, multiline=True),
        ),
    ]
    return _view(CHANGES_VIEW, "Request changes", "Send", opened, blocks)


def _view(
    form: str, title: str, submit: str, opened: FormOrigin, blocks: list[Any]
) -> dict[str, Any]:
    view = View(
        type="modal",
        callback_id=form,
        title=title,
        submit=submit,
        close="Cancel",
        blocks=blocks,
        private_metadata=opened.metadata(),
    )
    view.validate_json()
    return view.to_dict()


def read_submission(payload: Mapping[str, Any]) -> Submitted | None:
    """The form in a ``view_submission`` payload — ``None`` when it is not one of ours."""
    if payload.get("type") != "view_submission":
        return None
    view = obj(payload.get("view"))
    form = str(view.get("callback_id") or "")
    member = str(obj(payload.get("user")).get("id") or "")
    opened = _opened(str(view.get("private_metadata") or ""))
    if form not in (DECISION_VIEW, CHANGES_VIEW) or not member or opened is None:
        return None
    values = {
        block: _value(action)
        for block, actions in obj(obj(view.get("state")).get("values")).items()
        for action in obj(actions).values()
    }
    return Submitted(form, member, str(view.get("id") or ""), opened, values)


def _opened(metadata: str) -> FormOrigin | None:
    try:
        raw = json.loads(metadata)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    channel, thread = str(raw.get("channel") or ""), str(raw.get("thread") or "")
    return FormOrigin(channel, thread, str(raw.get("ts") or "")) if channel and thread else None


def _value(action: Any) -> str:
    action = obj(action)
    selected = obj(action.get("selected_option"))
    return str(selected.get("value") or action.get("value") or "").strip()


KIND, WHAT, WHY = _KIND, _WHAT, _WHY
