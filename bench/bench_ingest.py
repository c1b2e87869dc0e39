"""Webhook ingest: signed events/s a real errbot process accepts on loopback, and latency.

The target on a 2-core machine: >= 300 events/s accepted (each durably stored before
its 202) with p99 <= 25 ms. A real ``errbot -c config.py`` (Null backend, temp data dir,
provisioned as ``make run`` does) receives the-loop's real messages (the corpus, each with
a fresh id), signed, from a few client threads using http.client. Also measured in the same
run: the same work without HTTP (signature check + schema + SQLite commit, in process), so
the HTTP server's share is visible.

    .venv/bin/python bench/bench_ingest.py [--events 3000] [--clients 4]

Prints figures; asserts nothing (numbers are not tests).
"""

from __future__ import annotations

import argparse
import http.client
import json
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
from looproom.inbound import webhook as ingress  # noqa: E402
from looproom.inbound.signing import sign  # noqa: E402

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


def client(bot: BotProcess, work: list[bytes], out: list[tuple[int, float]], reconnects: list):
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


def over_http(events: int, clients: int) -> dict:
    with tempfile.TemporaryDirectory() as data:
        bot = BotProcess(Path(data), env={"THELOOP_WEBHOOK_SECRET": SECRET})
        with bot.start():
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
            stored = count_stored(Path(data) / "theloop" / "queues.sqlite3", "run-")
    latencies = sorted(latency for _, latency in results)
    return {
        "events": len(results),
        "statuses": dict(Counter(status for status, _ in results)),
        "wall_s": wall,
        "events_per_s": len(results) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
        "connections": sum(reconnects),
        "stored": stored,
    }


def count_stored(path: Path, prefix: str) -> int:
    """How many of the run's events are in the bot's inbox file (read-only)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (count,) = db.execute(
            "SELECT COUNT(*) FROM items WHERE queue='inbox' AND key LIKE ?", (prefix + "%",)
        ).fetchone()
    finally:
        db.close()
    return int(count)


def in_process(events: int) -> dict:
    """The same acceptance work (verify + parse + schema + durable put), no HTTP."""
    with tempfile.TemporaryDirectory() as data:
        queue = DurableQueue(Path(data) / "q.sqlite3", "inbox")
        work = bodies(events, "direct")
        start = time.perf_counter()
        for body in work:
            headers = signed_headers(body)
            request = ingress.Request("POST", headers, body, len(body))
            assert ingress.handle(request, secret=SECRET, inbox=queue).status == 202
        wall = time.perf_counter() - start
        queue.close()
    return {"events_per_s": events / wall, "mean_ms": 1000 * wall / events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()

    http_figures = over_http(args.events, args.clients)
    direct = in_process(args.events)
    print(f"ingest over HTTP ({args.clients} client threads, real errbot, Null backend)")
    print(f"  events            {http_figures['events']}  statuses {http_figures['statuses']}")
    print(f"  durably stored    {http_figures['stored']} (read back from the bot's queue file)")
    print(f"  accepted/s        {http_figures['events_per_s']:.0f}   (target >= 300)")
    print(f"  latency p50       {http_figures['p50_ms']:.1f} ms")
    print(f"  latency p99       {http_figures['p99_ms']:.1f} ms   (target <= 25 ms)")
    print(
        f"  TCP connections   {http_figures['connections']} for {http_figures['events']} "
        "requests (werkzeug answers every request with Connection: close)"
    )
    print("ingest in process (verify + schema + SQLite commit with fsync, one thread)")
    print(f"  accepted/s        {direct['events_per_s']:.0f}   mean {direct['mean_ms']:.2f} ms")


if __name__ == "__main__":
    main()
