"""Webhook ingest: signed events/s a real errbot process accepts on loopback, and latency.

The target on a 2-core machine: >= 300 events/s accepted (each durably stored before
its 202) with p99 <= 25 ms. A real ``errbot -c config.py`` (Null backend, temp data dir,
started with the one command ``make run`` uses) receives the-loop's real messages (the
corpus, each with a fresh id), signed, from a few client threads using http.client. Also
measured in the same run: the same work without HTTP (signature check + schema + SQLite
commit, in process), so the HTTP server's share is visible; how long a signed event waits
for its answer while 1 000 slow clients hold connections open (target: within 1 s); and
how long one 256 KB message of ``![`` holds the delivery path (its drawing has a budget).

    .venv/bin/python bench/bench_ingest.py [--events 3000] [--clients 4]
        [--database-url postgresql://…]   # the shared mode: the same figures on PostgreSQL

With ``--database-url`` the bot and the in-process queue store in that database (it must
be empty or theloop's own: the run's events are left in it); ``--database-url start``
starts a throwaway server from the machine's PostgreSQL binaries (tests/support/postgres.py),
with fsync on.
The in-process part also times delivery's share of the queue: claim + done per item.

Prints figures; asserts nothing (numbers are not tests).
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop"), str(REPO / "tests" / "e2e")]

from botproc import BotProcess  # noqa: E402 - after the path set-up above

from looproom.durable.queue import DurableQueue  # noqa: E402
from looproom.events import Event  # noqa: E402
from looproom.inbound import webhook as ingress  # noqa: E402
from looproom.inbound.signing import sign  # noqa: E402
from looproom.postgres.database import Database  # noqa: E402
from looproom.postgres.queue import PostgresQueue  # noqa: E402
from looproom.room import budget  # noqa: E402
from looproom.room.render import plain_fit, render  # noqa: E402
from looproom.settings import Settings  # noqa: E402

SECRET = "bench-secret"
MESSAGES = REPO / "tests" / "data" / "messages"  # the-loop's real messages, kept in the repo


def corpus() -> list[dict]:
    """The-loop's real messages, ``origin`` dropped as the-loop never sends it."""
    messages = []
    for file in sorted(MESSAGES.glob("*.json")):
        wire = json.loads(file.read_text(encoding="utf-8"))
        wire.pop("origin", None)
        messages.append(wire)
    return messages


def bodies(count: int, run: str) -> list[bytes]:
    messages = corpus()
    return [
        json.dumps({**messages[n % len(messages)], "id": f"{run}-{n}"}).encode()
        for n in range(count)
    ]


def signed_headers(body: bytes) -> dict[str, str]:
    stamp = str(int(time.time()))
    return {
        "Content-Type": "application/json",
        "X-TheLoop-Timestamp": stamp,
        "X-TheLoop-Signature": sign(SECRET, stamp, body),
    }


def client(
    bot: BotProcess, work: list[bytes], out: list[tuple[int, float]], reconnects: list[int]
) -> None:
    """One client thread: keep-alive requested; http.client reconnects if the server closes."""
    connection = http.client.HTTPConnection(bot.host, bot.port, timeout=30)
    opened = 0
    for body in work:
        if connection.sock is None:
            opened += 1
        start = time.perf_counter()
        connection.request("POST", ingress_path(), body=body, headers=signed_headers(body))
        response = connection.getresponse()
        response.read()
        out.append((response.status, time.perf_counter() - start))
        if response.will_close:
            connection.close()
    connection.close()
    reconnects.append(opened)


def ingress_path() -> str:
    return "/theloop/events"


def over_http(events: int, clients: int, slow: int, database_url: str = "") -> dict:
    with tempfile.TemporaryDirectory() as data:
        env = {"THELOOP_WEBHOOK_SECRET": SECRET, "THELOOP_DATABASE_URL": database_url}
        bot = BotProcess(Path(data), env=env)
        with bot.start():
            held = slow_clients(bot, slow)
            warm: list[tuple[int, float]] = []
            client(bot, bodies(50, "warm"), warm, [])
            work = bodies(events, "run")
            results: list[tuple[int, float]] = []
            reconnects: list[int] = []
            threads = [
                threading.Thread(target=client, args=(bot, work[i::clients], results, reconnects))
                for i in range(clients)
            ]
            start = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - start
            stored = count_stored(Path(data) / "theloop" / "queues.sqlite3", "run-", database_url)
    latencies = sorted(latency for _, latency in results)
    return {
        **held,
        "events": len(results),
        "statuses": dict(Counter(status for status, _ in results)),
        "wall_s": wall,
        "events_per_s": len(results) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
        "connections": sum(reconnects),
        "stored": stored,
    }


def slow_clients(bot: BotProcess, count: int) -> dict:
    """``count`` connections each holding half a request (a slowloris), then signed events:
    how long each waits for its answer while they are held."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.create_connection((bot.host, bot.port), timeout=30)
            sock.sendall(b"POST /theloop/events HTTP/1.1\r\nHost: bench\r\nX-Slow: ")
            sockets.append(sock)
        waits, statuses = [], []
        for body in bodies(5, "slow"):
            start = time.perf_counter()
            out: list[tuple[int, float]] = []
            client(bot, [body], out, [])
            waits.append(time.perf_counter() - start)
            statuses.append(out[0][0])
        return {
            "slow": count,
            "slow_max_s": max(waits),
            "slow_waits_ms": [round(1000 * w) for w in waits],
            "slow_statuses": statuses,
        }
    finally:
        for sock in sockets:
            sock.close()


def heavy_message() -> dict:
    """One 256 KB message of ``![`` drawn as the delivery worker draws it, per mode."""
    text = "![" * 131072
    event = Event(event_type="comment.human", work_item="github:acme/api#1", text=text)
    figures = {}
    for mode in ("digest", "truncate"):
        start = time.perf_counter()
        settings = Settings(long_messages=mode)
        drawn = render(event, settings)
        figures[mode] = time.perf_counter() - start
        body = drawn.blocks[1]["text"]["text"]
        figures[f"{mode}_plain"] = body == plain_fit(text, settings.max_chars)
    return figures


def count_stored(path: Path, prefix: str, database_url: str = "") -> int:
    """How many of the run's events are in the bot's inbox file (read-only), or database."""
    if database_url:
        import psycopg

        with psycopg.connect(database_url) as shared:
            row = shared.execute(
                "SELECT COUNT(*) FROM theloop_items WHERE queue='inbox' AND key LIKE %s",
                (prefix + "%",),
            ).fetchone()
        return int(row[0]) if row else 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (count,) = db.execute(
            "SELECT COUNT(*) FROM items WHERE queue='inbox' AND key LIKE ?", (prefix + "%",)
        ).fetchone()
    finally:
        db.close()
    return int(count)


def in_process(events: int, database_url: str = "") -> dict:
    """The same acceptance work (verify + parse + schema + durable put), no HTTP; then the
    queue's part of delivering each (claim + done), one thread."""
    with tempfile.TemporaryDirectory() as data:
        database = Database(database_url) if database_url else None
        queue = (
            PostgresQueue(database, f"bench-{time.time_ns()}", replica="bench", lease=30)
            if database is not None
            else DurableQueue(Path(data) / "q.sqlite3", "inbox")
        )
        work = bodies(events, "direct")
        start = time.perf_counter()
        for body in work:
            headers = signed_headers(body)
            request = ingress.Request("POST", headers, body, len(body))
            assert ingress.handle(request, secret=SECRET, inbox=queue).status == 202
        wall = time.perf_counter() - start
        start = time.perf_counter()
        while (item := queue.claim()) is not None:
            queue.done(item.key)
        delivered = time.perf_counter() - start
        queue.close()
        if database is not None:
            database.close()
    return {
        "events_per_s": events / wall,
        "mean_ms": 1000 * wall / events,
        "claimed_per_s": events / delivered,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--slow", type=int, default=1000, help="slow connections held")
    parser.add_argument("--database-url", default="", help="PostgreSQL URL, or 'start'")
    args = parser.parse_args()
    server = None
    if args.database_url == "start":
        sys.path.insert(0, str(REPO))
        from tests.support.postgres import PostgresServer

        server = PostgresServer(durable=True)  # fsync on, as a real server commits
        server.start()
        args.database_url = server.new_database()
    try:
        report(args)
    finally:
        if server is not None:
            server.close()


def report(args: argparse.Namespace) -> None:
    url = args.database_url
    http_figures = over_http(args.events, args.clients, args.slow, url)
    direct = in_process(args.events, url)
    store = "PostgreSQL" if url else "SQLite"
    print(f"store: {store}")
    print(f"ingest over HTTP ({args.clients} client threads, real errbot, Null backend)")
    print(f"  events            {http_figures['events']}  statuses {http_figures['statuses']}")
    print(f"  durably stored    {http_figures['stored']} (read back from the bot's {store})")
    print(f"  accepted/s        {http_figures['events_per_s']:.0f}   (target >= 300)")
    print(f"  latency p50       {http_figures['p50_ms']:.1f} ms")
    print(f"  latency p99       {http_figures['p99_ms']:.1f} ms   (target <= 25 ms)")
    print(
        f"  TCP connections   {http_figures['connections']} for {http_figures['events']} "
        "requests (kept alive)"
    )
    print(f"while {http_figures['slow']} slow clients each hold half a request open")
    print(
        f"  signed event answered within {http_figures['slow_max_s'] * 1000:.0f} ms at worst "
        f"(target <= 1000 ms): {http_figures['slow_waits_ms']} ms, "
        f"statuses {http_figures['slow_statuses']}"
    )
    print(f"ingest in process (verify + schema + {store} commit, one thread)")
    print(f"  accepted/s        {direct['events_per_s']:.0f}   mean {direct['mean_ms']:.2f} ms")
    print(f"  claimed + done/s  {direct['claimed_per_s']:.0f}   (the queue's share of delivery)")
    heavy = heavy_message()
    print(f"one 256 KB message of '![' on the delivery path (budget {budget.ROOM.seconds:g} s)")
    for mode in ("digest", "truncate"):
        how = "plain text (over budget)" if heavy[f"{mode}_plain"] else "drawn"
        print(f"  longMessages {mode:<9} held the worker {heavy[mode] * 1000:.0f} ms: {how}")


if __name__ == "__main__":
    main()
