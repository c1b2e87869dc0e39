"""``make demo``: play one real the-loop work item into the bot, as the-loop would send it.

The events are the repository's real ones (``tests/data/messages``), in their order, each
posted to the bot's signed webhook with the local secret the Text console made for itself.
Where the work item waits for a command (the phase checklist, a gate) the player waits too,
until the console's person decides (a line in the local ledger) or a while has passed; so a
newcomer can type ``execute … without 2`` or ``approve …`` and see what would be relayed.
(An answer to a question is a reply in its thread, which a console does not have.) The
player stops by itself when the bot is gone.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "loopside"))

import theloop_send  # noqa: E402 - the sender the-loop itself uses, from beside the bot

MESSAGES = ROOT / "tests" / "data" / "messages"
#: One work item's story, in order; after each ``*`` one the work item waits for a person.
TOUR = (
    "01-phase-selection-checklist*",
    "02-phase-selection-recorded",
    "03-phase-started-phase-selection",
    "04-phase-started-requirements",
    "05-phase-progress-requirements-approval",
    "06-phase-approval-pending-requirements*",
    "07-phase-completed-requirements",
    "08-decision-pending-spec-quiz",
    "09-phase-progress-critic-review",
    "10-pr-review-pending*",
    "15-session-awaiting-input-ask",
    "13-work-item-complete",
    "14-work-item-closed",
)
#: The console has no threads, so a decision names its work item.
ITEM = "MadaraUchiha-314/the-loop#260"
HINTS = {
    "01": f"type `execute {ITEM}`, or `execute {ITEM} without 2` to leave a phase out",
    "06": f"type `approve {ITEM}`, or `changes {ITEM} <why>`",
    "10": f"type `approve {ITEM}`, or `changes {ITEM} <why>`",
}
SECRET_FILE = Path("theloop") / "webhook-secret"
LEDGER_FILE = Path("theloop") / "relay-ledger.jsonl"


def event_of(stem: str) -> dict:
    """A real message as the webhook takes it (its ``origin`` note is ours, not the-loop's)."""
    event = json.loads((MESSAGES / f"{stem}.json").read_text(encoding="utf-8"))
    event.pop("origin", None)
    return event


def play(url: str, data_dir: Path, *, pace: float, answer_wait: float, start_wait: float) -> int:
    secret = _wait_for_secret(data_dir / SECRET_FILE, start_wait)
    if not secret:
        print("demo: the bot made no local secret; is it on the Text backend?", file=sys.stderr)
        return 1
    ledger = data_dir / LEDGER_FILE
    for entry in TOUR:
        stem, waits = entry.rstrip("*"), entry.endswith("*")
        result = theloop_send.send(event_of(stem), url, secret, deadline=start_wait)
        if not result.delivered:
            print(f"demo: stopped, the bot did not take {stem}: {result.reason}", file=sys.stderr)
            return 1
        if waits:
            print(f"\n(demo) {HINTS[stem[:2]]}", file=sys.stderr)
            if not _wait_for_decision(ledger, url, answer_wait):
                return 0  # the bot is gone: the demo is over
        time.sleep(pace)  # a pace a person can read at, not a wait for anything
    print("\n(demo) the work item is closed; what would be relayed is in", ledger, file=sys.stderr)
    return 0


def _wait_for_secret(path: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(encoding="ascii").strip():
            return path.read_text(encoding="ascii").strip()
        time.sleep(0.2)
    return ""


def _wait_for_decision(ledger: Path, url: str, timeout: float) -> bool:
    """Until the ledger grows or ``timeout`` passes; False when the bot is gone."""
    before = _lines(ledger)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _lines(ledger) > before:
            return True
        if not _answers(url):
            return False
        time.sleep(0.5)
    return True


def _lines(path: Path) -> int:
    try:
        return len(path.read_text(encoding="utf-8").splitlines())
    except OSError:
        return 0


def _answers(url: str) -> bool:
    target = theloop_send.check_url(url)
    try:
        with socket.create_connection((target.hostname, target.port or 80), timeout=2.0):
            return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:3141/theloop/events")
    parser.add_argument("--data-dir", type=Path, default=Path("data"))
    parser.add_argument("--pace", type=float, default=1.5, help="seconds between events")
    parser.add_argument("--answer-wait", type=float, default=300.0, help="seconds per question")
    parser.add_argument("--start-wait", type=float, default=120.0, help="seconds for the bot")
    args = parser.parse_args(argv)
    return play(
        args.url,
        args.data_dir,
        pace=args.pace,
        answer_wait=args.answer_wait,
        start_wait=args.start_wait,
    )


if __name__ == "__main__":
    raise SystemExit(main())
