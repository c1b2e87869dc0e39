"""``/the-loop status``'s report on one the-loop instance, as ``the-loop status`` prints it.

the-loop's own room answers ``status`` with its lifecycle's document: the instance and its
mode, whether every enabled service runs, each service's state and pid, and the standing
sessions. Across the control plane the same facts come from four of its routes —
``GET /api/v1/instance``, ``/health`` (each ingress enabled and running, the state root),
``/daemons`` (each daemon's pid and last cycle) and ``/standing-sessions`` — drawn here in
the peer's words. A route an older the-loop does not serve leaves its lines out, saying so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_MOST_REFS = 10


def report(
    prefix: str,
    instance: Mapping[str, Any],
    health: Mapping[str, Any] | None,
    daemons: Sequence[Mapping[str, Any]] | None,
    standing: Sequence[Mapping[str, Any]] | None,
) -> str:
    """The instance's lines: its head line, then one bullet per service and the standing
    sessions; ``None`` for a route that gave nothing readable."""
    lines = [_head(prefix, instance, health)]
    if health is None:
        lines.append("• services: not reported (this the-loop serves no `/api/v1/health`)")
    else:
        pids = {str(row.get("daemon")): row for row in daemons or () if isinstance(row, Mapping)}
        ingresses = health.get("ingresses")
        for row in ingresses if isinstance(ingresses, list) else ():
            if isinstance(row, Mapping):
                lines.append(_service(row, pids.get(str(row.get("name")), {})))
        root, config = str(health.get("stateRoot") or ""), str(health.get("configPath") or "")
        if root:
            lines.append(f"• state: `{root}`" + (f" (config `{config}`)" if config else ""))
    lines.append(_standing(standing))
    return "\n".join(lines)


def _head(prefix: str, instance: Mapping[str, Any], health: Mapping[str, Any] | None) -> str:
    scope = instance.get("scope") if isinstance(instance.get("scope"), Mapping) else {}
    managed = instance.get("managed") if isinstance(instance.get("managed"), list) else []
    refs = [str(row.get("ref")) for row in managed if isinstance(row, Mapping)]
    shown = ", ".join(f"`{ref}`" for ref in refs[:_MOST_REFS])
    shown += " …" if len(refs) > _MOST_REFS else ""
    name = str(instance.get("name") or "unnamed")
    mode = str(scope.get("mode") or "open")
    state = ""
    if health is not None:
        ok = health.get("status") == "ok"
        state = " · ok" if ok else " · not ok (an enabled service is down)"
        version = str(health.get("version") or "")
        state += f" · version {version}" if version else ""
    return (
        f"{prefix}*the-loop instance* `{name}` (mode: {mode}){state} — manages {len(refs)} "
        "work item(s)" + (f": {shown}" if refs else "")
    )


def _service(row: Mapping[str, Any], daemon: Mapping[str, Any]) -> str:
    """One service as the peer says it: disabled, running (pid, last cycle) or stopped."""
    if row.get("running"):
        state = "running"
        pid = daemon.get("pid")
        if pid:
            state += f" (pid {pid})"
        last = str(daemon.get("lastCycleAt") or "")
        if last:
            state += f", last cycle {last}"
    elif row.get("enabled"):
        state = "stopped (enabled)"
    else:
        state = "disabled"
    detail = str(row.get("detail") or "")
    return f"• {row.get('name', '?')}: {state}" + (f" — {detail}" if detail else "")


def _standing(rows: Sequence[Mapping[str, Any]] | None) -> str:
    if rows is None:
        return "• standing: not reported"
    said = [
        f"{row.get('name', '?')} {'running' if row.get('running') else 'stopped'}"
        for row in rows
        if isinstance(row, Mapping)
    ]
    return "• standing: " + (" · ".join(said) if said else "none")
