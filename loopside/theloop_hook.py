"""the-loop graph hook ``x-theloop-notify``: post a node's event to the theloop bot.

Loaded by the-loop itself, as an operator hook module declared in its CLI config
(``routing.graph.hooks``: ``modules`` + ``attach``; see ``the-loop-hooks.yaml`` beside
this file). Attached at a node's entry (or exit), it sends the event that node stands
for through ``theloop_send`` to the bot's signed webhook (docs/webhook.md):

* at a gate — a node whose own chain runs the-loop's ``notify`` — the same
  notification ``notify`` publishes (``phase-approval-pending``, ``pr-review-pending``,
  ``decision-pending``, ``conflict-escalated``, ``work-item-complete``), with the node
  and the artifact excerpt ``notify`` attaches;
* elsewhere — ``phase.started`` at the entry of a node that declares a phase,
  ``phase.progress`` at the entry of one that does not, ``phase.completed`` at an exit.

``with: {event: …, artifact: …}`` on the attachment overrides that choice.
Where the bot is: ``with: {url: …, secretEnv: …}``, else the environment variables
``THELOOP_URL`` and ``THELOOP_WEBHOOK_SECRET`` (a secret is only ever named, never
written in the config); for a bot that serves several the-loop instances, this one's key
id as ``with: {keyId: …}`` or ``THELOOP_KEY_ID``. The hook never wedges the graph: a
bot that is down, a refusal or a bug is a logged warning and a passing result carrying
``error``, which the-loop reports as a degraded hook (``graph.hook_degraded``). Nothing is lost to a
bot that is down: the event waits in a spool on disk (``with: {spool: …}``, else
``THELOOP_SPOOL_DIR``, else ``$XDG_STATE_HOME/theloop/spool``) and goes first, in
order, the next time the hook runs — or when ``theloop_send.py --flush`` runs.

This module runs inside the-loop, so it imports ``the_loop``; the sender beside it
needs nothing but the standard library.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from the_loop.graph.contract import HookContext, HookResult
from the_loop.graph.registry import hook

logger = logging.getLogger("the-loop.graph.theloop")

HOOK_NAME = "x-theloop-notify"
URL_ENV = "THELOOP_URL"
SECRET_ENV = "THELOOP_WEBHOOK_SECRET"
SPOOL_ENV = "THELOOP_SPOOL_DIR"
#: A graph step waits for this hook, so a bot that is down costs seconds, not minutes.
DEFAULT_DEADLINE = 4.0
DEFAULT_TIMEOUT = 2.0
_NOTIFY = "notify"
_DEFAULT_NOTIFY_EVENT = "phase-approval-pending"  # what the-loop's notify defaults to
_LIFECYCLE = ("phase.started", "phase.progress", "phase.completed")


def _load_sender() -> ModuleType:
    """``theloop_send``: importable when on the path, else the file beside this one.

    the-loop may load this module from a file path (``modules: [{path: …}]``) under a
    synthetic name, where a plain ``import theloop_send`` finds nothing.
    """
    try:
        import theloop_send  # whichever copy the operator installed
    except ImportError:
        path = Path(__file__).resolve().with_name("theloop_send.py")
        spec = importlib.util.spec_from_file_location("theloop_send", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"theloop_send.py is missing beside {__file__}") from None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules.setdefault("theloop_send", module)
        return module
    return theloop_send


sender = _load_sender()


@hook(HOOK_NAME)
def theloop_notify(ctx: HookContext) -> HookResult:
    """Send this node's event to the bot; pass whatever happens (a hook never stops the graph)."""
    try:
        event = build_event(ctx)
        result = _deliver(event, ctx.params)
    except Exception as exc:  # a hook bug must not stop the work item
        logger.warning("%s at %s: %s", HOOK_NAME, ctx.node_id, exc, exc_info=True)
        return HookResult.ok(HOOK_NAME, delivered=False, error=f"{HOOK_NAME}: {exc}")
    data = {"event": event["eventType"], "id": event["id"], "status": result.status}
    if result.delivered:
        return HookResult.ok(HOOK_NAME, delivered=True, duplicate=result.duplicate, **data)
    if result.spooled:
        data["spooled"] = True
    logger.warning("%s: %s not delivered: %s", HOOK_NAME, event["eventType"], result.reason)
    return HookResult.ok(HOOK_NAME, delivered=False, error=result.reason, **data)


def _deliver(event: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    """Send through ``theloop_send``; a missing URL or secret is a result, not a raise."""
    url = str(params.get("url") or os.environ.get(URL_ENV, "")).strip()
    secret_env = str(params.get("secretEnv") or SECRET_ENV)
    secret = os.environ.get(secret_env, "")
    if not url:
        reason = f"no bot URL: set {URL_ENV} or the attachment's `with: {{url: …}}`"
        return sender.Result(False, reason=reason, event_id=event["id"])
    if not secret.strip():
        reason = f"the webhook secret variable {secret_env} is not set"
        return sender.Result(False, reason=reason, event_id=event["id"])
    deadline = float(params.get("deadline") or DEFAULT_DEADLINE)
    timeout = float(params.get("timeout") or DEFAULT_TIMEOUT)
    spool = sender.Spool(spool_dir(params))
    # A bot serving several the-loop instances tells this one by its key id.
    key_id = str(params.get("keyId") or os.environ.get(sender.KEY_ID_ENV, "")).strip()
    return sender.send_or_spool(event, url, secret, spool, deadline, timeout=timeout, key_id=key_id)


def spool_dir(params: Mapping[str, Any]) -> Path:
    """Where events wait while the bot is down: the attachment's ``spool``, else
    ``THELOOP_SPOOL_DIR``, else the user's state directory (XDG)."""
    chosen = str(params.get("spool") or os.environ.get(SPOOL_ENV, "")).strip()
    if chosen:
        return Path(chosen).expanduser()
    state = os.environ.get("XDG_STATE_HOME", "").strip() or "~/.local/state"
    return Path(state).expanduser() / "theloop" / "spool"


# -- what the node stands for -------------------------------------------------------


def build_event(ctx: HookContext) -> dict[str, Any]:
    """The webhook body (docs/webhook.md) for this node and boundary, with a stable ``id``."""
    event_type, spec = _chosen(ctx)
    if event_type in _LIFECYCLE:
        event = _lifecycle_event(ctx, event_type)
    else:
        event = _notification(ctx, event_type, spec)
    event["id"] = _event_id(ctx, event)
    return event


def _chosen(ctx: HookContext) -> tuple[str, Mapping[str, Any]]:
    """The event type and the ``notify`` parameters it goes with.

    The attachment's own ``with: {event: …}`` wins; then the node's ``notify`` in the
    compiled graph, so the snippet never restates (and never drifts from) what the
    shipped loop declares; otherwise the lifecycle event of this boundary.
    """
    if ctx.params.get("event"):
        return str(ctx.params["event"]), ctx.params
    spec = _notify_spec(ctx)
    if spec is not None:
        return str(spec.get("event") or _DEFAULT_NOTIFY_EVENT), spec
    if ctx.boundary == "exit":
        return "phase.completed", {}
    return ("phase.started" if ctx.node.get("phase") else "phase.progress"), {}


def _notify_spec(ctx: HookContext) -> Mapping[str, Any] | None:
    """The ``with:`` of ``notify`` in this node's chains, or ``None`` when it has none."""
    try:
        node = ctx.graph.node(ctx.node_id)
    except Exception:  # no graph (a direct caller): no notify to mirror
        return None
    for entry in (*getattr(node, "entry", ()), *getattr(node, "exit", ())):
        if entry == _NOTIFY:
            return {}
        if isinstance(entry, Mapping) and entry.get("hook") == _NOTIFY:
            return dict(entry.get("with") or {})
    return None


def _notification(ctx: HookContext, event_type: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """What the-loop's ``notify`` publishes for this gate, from its own helpers."""
    helpers = _sideeffects()
    node = ctx.node_id
    detail = {"node": node}
    url = _work_item_url(ctx.work_item.ref)
    text = f"the-loop: {ctx.work_item.id} is at *{node}* ({event_type})."
    pr = helpers.get("_linked_pr", _none)(ctx) if event_type == "pr-review-pending" else None
    if pr is not None:
        text = _pr_text(ctx, pr, helpers)
        url = getattr(pr, "url", "") or url
        detail["pullRequest"] = str(pr.number)
    roles = [str(role) for role in spec.get("roles") or []]
    if roles:
        text += f" Roles: {', '.join(roles)}"
        detail["roles"] = ", ".join(roles)
    artifact = str(spec.get("artifact") or "")
    excerpt = _excerpt(ctx, artifact, helpers)
    if excerpt:
        detail["excerpt"] = excerpt
        detail["artifact"] = artifact
    return _event(ctx, event_type, text, url, detail)


def _pr_text(ctx: HookContext, pr: Any, helpers: Mapping[str, Any]) -> str:
    """The PR-review line, saying what approving does (``routing.mergeOnApproval``)."""
    merges = helpers.get("_merge_on_approval", lambda _ctx: True)(ctx)
    consequence = (
        "Approving will merge this PR and close the work item."
        if merges
        else "Approving marks it approved; a person merges it (branch "
        "protection and required reviews still apply)."
    )
    return (
        f"👀 PR #{pr.number} is ready for review. "
        f"Start there, then approve or request changes. {consequence}"
    )


def _lifecycle_event(ctx: HookContext, event_type: str) -> dict[str, Any]:
    """A ``phase.*`` event in the form the-loop's runtime publishes its own."""
    node, item = ctx.node_id, ctx.work_item.id
    actor = str(ctx.node.get("actor") or "")
    phase = str(ctx.node.get("phase") or _state_phase(ctx) or node)
    if event_type == "phase.started":
        text = f"the-loop: {item} started phase *{phase}* ({node})."
        text += " — waiting on a person" if actor == "human" else ""
    elif event_type == "phase.progress":
        text = f"the-loop: {item} — *{phase}* reached {node}."
    else:
        text = f"the-loop: {item} completed phase *{phase}* ({node})."
    loop = str(getattr(ctx.graph, "name", "") or "")
    detail = {"node": node, "phase": phase, "loop": loop, "actor": actor}
    detail = {key: value for key, value in detail.items() if value}
    return _event(ctx, event_type, text, _work_item_url(ctx.work_item.ref), detail)


def _event(
    ctx: HookContext, event_type: str, text: str, url: str, detail: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "workItem": ctx.work_item.ref,
        "text": text,
        "url": url,
        "detail": dict(detail),
        "source": "loop",
    }


def _event_id(ctx: HookContext, event: Mapping[str, Any]) -> str:
    """Stable for one entry of one node, different for the next (a repeated id is a duplicate).

    The entry count comes from the work item's state, which the runtime saves before
    it runs a chain; the content is in the key too, so a revised artifact at a gate
    re-entered after "changes requested" is a new message even where no state is read.
    """
    content = sender.stable_id({k: v for k, v in event.items() if k != "id"})
    parts = (
        ctx.work_item.ref,
        str(getattr(ctx.graph, "name", "") or ""),
        ctx.node_id,
        ctx.boundary,
        str(_attempts(ctx)),
        content,
    )
    return "hook:" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


# -- the-loop's own helpers, read at call time ------------------------------------------


def _sideeffects() -> dict[str, Any]:
    """The helpers ``notify`` itself uses, so the excerpt and PR are the same as its own.

    Private to the-loop, hence looked up defensively: a release that renames one costs
    that detail (logged), never the notification.
    """
    try:
        from the_loop.graph.hooks import sideeffects
    except ImportError:
        return {}
    names = ("_excerpt", "_linked_pr", "_merge_on_approval", "_work_item_url")
    found = {name: getattr(sideeffects, name, None) for name in names}
    missing = [name for name, fn in found.items() if not callable(fn)]
    if missing:
        logger.info("%s: this the-loop has no %s", HOOK_NAME, ", ".join(missing))
    return {name: fn for name, fn in found.items() if callable(fn)}


def _excerpt(ctx: HookContext, artifact: str, helpers: Mapping[str, Any]) -> str:
    """``notify``'s excerpt of ``artifact``: it reads the artifact from its params."""
    excerpt = helpers.get("_excerpt")
    if not artifact or excerpt is None:
        return ""
    return str(excerpt(replace(ctx, params={**ctx.params, "artifact": artifact})) or "")


def _work_item_url(ref: str) -> str:
    helper = _sideeffects().get("_work_item_url")
    return str(helper(ref) or "") if helper else ""


def _work_item_state(ctx: HookContext) -> Any:
    try:
        from the_loop.graph.state import WorkItemState

        return WorkItemState.load(ctx.work_item.spec_dir, ctx.work_item.id)
    except Exception:  # no readable state: fall back to the content
        return None


def _attempts(ctx: HookContext) -> int:
    state = _work_item_state(ctx)
    record = state.nodes.get(ctx.node_id) if state is not None else None
    return int(getattr(record, "attempts", 0) or 0)


def _state_phase(ctx: HookContext) -> str:
    state = _work_item_state(ctx)
    return str(getattr(state, "phase", "") or "")


def _none(_ctx: HookContext) -> None:
    return None
