#!/usr/bin/env python3
"""Bring the Slack room's own records into the-loop's event log, once each.

The bot keeps what its room did — each event posted, failed or late, each member's reply
taken or refused — as the-loop's own ``channel.*`` records, and serves them past a cursor
at ``POST /theloop/room-records``, signed like its webhook (docs/webhook.md) with the same
secret. This runs beside the-loop (``pip install ./loopside`` into the-loop's Python): it
reads them and appends each to the-loop's event log through the-loop's own writer
(``the_loop.eventlog.EventLog``), so ``the-loop events`` and its dashboard see the room.

    theloop-records --url "$THELOOP_URL" --secret-env THELOOP_WEBHOOK_SECRET \\
        --state ~/.local/state/theloop/records            # once (cron), or
    theloop-records ... --every 30                         # on its own timer

Once each, whatever happens: the cursor is kept in ``--state`` (the owner's only), one run
at a time under a lock; before a page is appended the log's length is written down, and a
run that died between appending and moving its cursor finds what it appended after that
length and appends it no second time. A page is counted appended only once every record of
it is found in the log (the-loop's writer swallows a failed write), so nothing is skipped.
Only ``channel.*`` records are taken: the bot cannot write anything else into the log.

Exit status: 0 caught up, 1 the bot refused or could not be reached (the reason said),
2 bad arguments, 3 the event log could not be written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from theloop_send import (
    KEY_ID_HEADER,
    UsageError,
    _connection,
    _describe,
    _key_id,
    _owner_only,
    _secret,
    one_at_a_time,
    sign,
)

RECORDS_PATH = "/theloop/room-records"
WEBHOOK_PATH = "/theloop/events"
#: What the records carry in the-loop's log: who wrote them, and each one's own id.
DEFAULT_SOURCE = "theloop-room"
ID_FIELD = "room_record"
PAGE = 500
#: The bot's answer is at most a page of records: more than this is not its answer.
MAX_ANSWER = 8 * 1024 * 1024
DEFAULT_TIMEOUT = 10.0
#: A record's fields are ids and counts: one larger than this is not the room's.
MAX_FIELDS = 4096
EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_LOG = 0, 1, 2, 3
_ENVELOPE = ("ts", "source", "event", "level", "pid", ID_FIELD)
_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
_LEVELS = ("debug", "info", "warning", "error")


class Refused(Exception):
    """The bot did not answer with records: ``status`` 0 when nothing answered."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class LogUnwritable(Exception):
    """the-loop's event log did not take the records: nothing was counted appended."""


@dataclass(frozen=True)
class Pulled:
    """What one run did: records appended, found already there, and the cursor after."""

    appended: int
    present: int
    cursor: int
    missed: int = 0


def records_url(url: str) -> str:
    """The read's URL from the bot's base or webhook URL (``$THELOOP_URL`` works as is)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--url {url!r} is not an http:// or https:// URL with a host")
    path = parts.path.rstrip("/")
    if path.endswith(WEBHOOK_PATH):
        path = path[: -len(WEBHOOK_PATH)] + RECORDS_PATH
    elif not path.endswith(RECORDS_PATH):
        path = path + RECORDS_PATH
    return parts._replace(path=path, query="", fragment="").geturl()


def fetch(
    url: str, secret: str, after: int, key_id: str = "", timeout: float = DEFAULT_TIMEOUT
) -> dict[str, Any]:
    """One signed read of the records past ``after``; :class:`Refused` unless the bot gave them."""
    target = urlsplit(records_url(url))
    body = json.dumps({"after": after, "limit": PAGE}).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "X-TheLoop-Timestamp": timestamp,
        "X-TheLoop-Signature": sign(secret, timestamp, body),
        **({KEY_ID_HEADER: key_id} if key_id else {}),
    }
    connection = _connection(target, timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        raw = response.read(MAX_ANSWER + 1)
        status = response.status
    except OSError as exc:
        raise Refused(0, f"could not reach {target.netloc}: {_describe(exc)}") from exc
    except Exception as exc:  # http.client's own errors: a broken answer is no answer
        raise Refused(0, f"{target.netloc} answered badly: {_describe(exc)}") from exc
    finally:
        connection.close()
    return _answer(status, raw)


def _answer(status: int, raw: bytes) -> dict[str, Any]:
    try:
        answer = json.loads(raw) if len(raw) <= MAX_ANSWER else None
    except ValueError:
        answer = None
    if status != 200:
        said = answer.get("error") if isinstance(answer, dict) else ""
        raise Refused(status, f"HTTP {status}: {said or 'no reason given'}")
    if not (
        isinstance(answer, dict)
        and isinstance(answer.get("records"), list)
        and isinstance(answer.get("next"), int)
    ):
        raise Refused(status, "the answer is not a page of records")
    return answer


def acceptable(record: Any) -> str:
    """Why ``record`` is not one to append (``""``: it is): a ``channel.*`` record only."""
    if not isinstance(record, Mapping):
        return "not an object"
    rid, event = record.get("id"), record.get("event")
    if not isinstance(rid, str) or not 0 < len(rid) <= 400:
        return "no id"
    if not isinstance(event, str) or not re.fullmatch(r"channel\.[a-z_]{1,60}", event):
        return f"{str(event)[:60]!r} is not a channel.* record"
    if not isinstance(record.get("ts"), str) or not _TS.match(record["ts"]):
        return "its ts is not the-loop's time"
    fields = record.get("fields")
    if record.get("level") not in _LEVELS or not isinstance(fields, Mapping):
        return "no level or fields"
    if not all(_plain(value) for value in fields.values()):
        return "a field that is not a string, number or list of them"
    if len(json.dumps(fields, default=str)) > MAX_FIELDS:
        return f"fields over {MAX_FIELDS} characters"
    return ""


def _plain(value: Any) -> bool:
    """A value the-loop's own records carry: ids, counts, flags — or a list of them."""
    if isinstance(value, list):
        return all(_plain(item) and not isinstance(item, list) for item in value)
    return value is None or isinstance(value, (str, int, float, bool))


def ids_after(log: Path, offset: int) -> set[str]:
    """The room's record ids appended to ``log`` at or after byte ``offset``."""
    found: set[str] = set()
    try:
        with open(log, "rb") as handle:
            if handle.seek(0, os.SEEK_END) < offset:
                offset = 0  # the log was cut or rotated since: read what there is
            handle.seek(offset)
            for line in handle:
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    if isinstance(record, dict) and isinstance(record.get(ID_FIELD), str):
                        found.add(record[ID_FIELD])
    except FileNotFoundError:
        pass
    return found


class State:
    """The cursor and the log's length before the page being appended, in ``directory``."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.file = self.directory / "cursor.json"

    def read(self) -> dict[str, Any]:
        try:
            kept = json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"after": 0}
        except ValueError as exc:
            raise UsageError(f"{self.file} is not the cursor this command wrote: {exc}") from exc
        if not isinstance(kept, dict) or not isinstance(kept.get("after"), int):
            raise UsageError(f"{self.file} is not the cursor this command wrote")
        return kept

    def write(self, kept: Mapping[str, Any]) -> None:
        """Written whole or not at all: a new file, flushed to disk, then renamed over."""
        fresh = self.file.with_suffix(".new")
        with open(fresh, "w", encoding="utf-8", opener=_owner_only) as handle:
            handle.write(json.dumps(dict(kept)))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(fresh, self.file)

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """One run at a time (where the platform has ``fcntl``)."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        return one_at_a_time(self.directory)


#: ``(event, level, fields)`` appended to the-loop's log (its ``EventLog.emit``).
Emit = Callable[..., None]


def pull(read: Callable[[int], Mapping[str, Any]], state: State, log: Path, emit: Emit) -> Pulled:
    """Append every record past the kept cursor to ``log`` through ``emit``, once each."""
    appended = present = missed = 0
    with state.locked():
        kept = state.read()
        while True:
            after = int(kept["after"])
            page = read(after)
            missed += int(page.get("missed") or 0)
            records = [r for r in page["records"] if not acceptable(r)]
            # The bot's records started afresh (a new data directory, a backup restored):
            # what it serves numbered up to the old cursor may be in the log from before,
            # anywhere in it — looked for in the whole log until the cursor is past there.
            below = int(kept.get("afresh_below") or 0)
            if int(page["next"]) < after or any(_seq(r) <= after for r in records):
                below = max(below, after)
            if records:
                whole = any(_seq(r) <= below for r in records)
                done, there = _append(records, kept, state, log, emit, whole=whole)
                appended, present = appended + done, present + there
            kept = {"after": int(page["next"])}
            if kept["after"] < below:
                kept["afresh_below"] = below
            state.write(kept)
            if not page.get("more"):
                return Pulled(appended, present, kept["after"], missed)


def _seq(record: Mapping[str, Any]) -> int:
    seq = record.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else 0


def _append(
    records: list[Mapping[str, Any]],
    kept: Mapping[str, Any],
    state: State,
    log: Path,
    emit: Emit,
    *,
    whole: bool = False,
) -> tuple[int, int]:
    """One page appended: the log's length written down first, then each record not yet
    there (looked for after that length, or in the ``whole`` log), then every one checked
    to be there."""
    since = kept.get("appending")
    if not isinstance(since, int):
        since = log.stat().st_size if log.exists() else 0
        state.write({**kept, "appending": since})
    since = 0 if whole else since
    there = ids_after(log, since)
    fresh = [r for r in records if r["id"] not in there]
    for record in fresh:
        fields = {k: v for k, v in record["fields"].items() if k not in _ENVELOPE}
        fields.update(ts=record["ts"], room_record=record["id"])
        emit(record["event"], level=record["level"], **fields)
    missing = {r["id"] for r in records} - ids_after(log, since)
    if missing:
        raise LogUnwritable(f"{len(missing)} record(s) did not reach {log}")
    return len(fresh), len(records) - len(fresh)


def event_log(path: str, source: str) -> tuple[Path, Emit]:
    """the-loop's event log — ``path``, else where its CLI config says — and its writer."""
    try:
        from the_loop import cli_config, eventlog
        from the_loop.state import layout_from_config
    except ImportError as exc:
        raise UsageError(f"the-loop is not installed in this Python ({exc})") from exc
    if not path:
        config = cli_config.load_cli_config(cli_config.default_cli_config_path())
        settings = config.get("eventLog") or {}
        if settings.get("enabled") is False:
            raise UsageError("the-loop's event log is off (eventLog.enabled: false)")
        path = str(settings.get("path") or layout_from_config(config).event_log)
    writer = eventlog.EventLog(path=path, source=source)
    return Path(path), writer.emit


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 / 1 / 2 / 3)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        records_url(args.url)
        secret, key_id = _secret(args.secret_env), _key_id(args.key_id)
        log, emit = event_log(args.event_log, args.source)
        state = State(args.state)
    except (UsageError, ValueError) as exc:
        parser.print_usage(sys.stderr)
        print(f"theloop_records: error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    def read(after: int) -> Mapping[str, Any]:
        return fetch(args.url, secret, after, key_id, args.timeout)

    while True:
        status = _once(read, state, log, emit, args.secret_env)
        if not args.every:
            return status
        time.sleep(args.every)


def _once(
    read: Callable[[int], Mapping[str, Any]], state: State, log: Path, emit: Emit, env: str
) -> int:
    try:
        pulled = pull(read, state, log, emit)
    except Refused as exc:
        hint = f" — check that ${env} holds the bot's secret" if exc.status == 401 else ""
        print(f"theloop_records: not read: {exc.reason}{hint}", file=sys.stderr)
        return EXIT_REFUSED
    except (LogUnwritable, OSError) as exc:
        print(f"theloop_records: the event log was not written: {exc}", file=sys.stderr)
        return EXIT_LOG
    except UsageError as exc:
        print(f"theloop_records: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    gone = f"; {pulled.missed} older record(s) were gone from the bot" if pulled.missed else ""
    print(
        f"theloop_records: {pulled.appended} appended, {pulled.present} already there, "
        f"cursor {pulled.cursor}{gone}"
    )
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="theloop-records",
        description="Append the Slack room's records to the-loop's event log, once each.",
    )
    parser.add_argument("--url", required=True, help="the bot's URL (its webhook URL works)")
    parser.add_argument(
        "--secret-env", required=True, help="the variable holding the webhook's secret"
    )
    parser.add_argument("--state", required=True, help="a directory for the cursor")
    parser.add_argument(
        "--event-log", default="", help="the-loop's event log (default: its CLI config's)"
    )
    parser.add_argument("--source", default=DEFAULT_SOURCE, help="the records' source")
    parser.add_argument("--key-id", default="", help="this instance's key id (instances:)")
    parser.add_argument("--every", type=float, default=0.0, help="run again every N seconds")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    return parser


if __name__ == "__main__":
    sys.exit(main())
