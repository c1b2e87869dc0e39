"""The stdlib sender against the bot's webhook function on loopback.

The server (``tests/support/webhook_bot.py``) is a few lines of ``http.server`` around the bot's own
``looproom.inbound.webhook.handle`` and ``DurableQueue``, so what the sender is checked against is
the real contract, not a copy of it. Scripted answers in front of it stand in for a bot
that is restarting (503), rate-limiting (429) or down (nothing listening).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import theloop_send
from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.inbound import signing
from tests.support.corpus import MESSAGES
from tests.support.webhook_bot import SECRET, Bot, serving

SECRET_ENV = "THELOOP_TEST_SECRET"
SENDER = Path(theloop_send.__file__).resolve()


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[Bot]:
    with serving(tmp_path) as running:
        yield running


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    return SECRET_ENV


def _question(tmp_path: Path) -> Path:
    path = tmp_path / "question.md"
    path.write_text("Which **option**?\n\n1. this\n2. that\n", encoding="utf-8")
    return path


def _cli(bot: Bot, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "--url",
        bot.url,
        "--secret-env",
        SECRET_ENV,
        "--event-type",
        "decision-pending",
        "--work-item",
        "github:acme/api#7",
        "--text-file",
        str(_question(tmp_path)),
        "--url-link",
        "https://github.com/acme/api/issues/7",
        "--detail",
        "node=spec-quiz",
        "--detail",
        "artifact=evidence/spec-explainer.md",
        "--summary",
        "pick one",
        *extra,
    ]


# -- signing ---------------------------------------------------------------------------


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(st.text(min_size=1, max_size=64), st.integers(0, 10**11), st.binary(max_size=512))
def test_the_sender_signs_exactly_as_the_bot_verifies(secret: str, ts: int, body: bytes) -> None:
    header = theloop_send.sign(secret, str(ts), body)
    assert header == signing.sign(secret, ts, body)
    signing.verify(
        secret, {"X-TheLoop-Timestamp": str(ts), "X-TheLoop-Signature": header}, body, ts
    )


# -- the command line, end to end against the webhook ------------------------------------


def test_the_command_delivers_the_event_it_describes(
    bot: Bot, tmp_path: Path, secret_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert theloop_send.main(_cli(bot, tmp_path)) == 0
    [event] = bot.events()
    assert (event.event_type, event.work_item, event.url, event.summary) == (
        "decision-pending",
        "github:acme/api#7",
        "https://github.com/acme/api/issues/7",
        "pick one",
    )
    assert event.text == "Which **option**?\n\n1. this\n2. that\n"
    assert dict(event.detail) == {"node": "spec-quiz", "artifact": "evidence/spec-explainer.md"}
    assert event.id.startswith("send:")
    assert "delivered" in capsys.readouterr().out


def test_running_the_same_command_twice_posts_once_and_says_duplicate(
    bot: Bot, tmp_path: Path, secret_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert theloop_send.main(_cli(bot, tmp_path)) == 0
    assert theloop_send.main(_cli(bot, tmp_path)) == 0
    assert "duplicate" in capsys.readouterr().out
    assert len(bot.events()) == 1


def test_a_different_event_gets_a_different_id_and_an_explicit_id_wins(
    bot: Bot, tmp_path: Path, secret_env: str
) -> None:
    assert theloop_send.main(_cli(bot, tmp_path)) == 0
    assert theloop_send.main(_cli(bot, tmp_path, "--detail", "node=code-quiz")) == 0
    assert theloop_send.main(_cli(bot, tmp_path, "--id", "my-key-1")) == 0
    ids = {event.id for event in bot.events()}
    assert len(ids) == 3 and "my-key-1" in ids


def test_a_wrong_secret_exits_1_and_names_the_secret_variable_never_its_value(
    bot: Bot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(SECRET_ENV, "not-the-bot-secret")
    assert theloop_send.main(_cli(bot, tmp_path)) == 1
    output = capsys.readouterr()
    assert "401" in output.err and SECRET_ENV in output.err
    assert "not-the-bot-secret" not in output.err + output.out
    assert bot.events() == []


def test_a_schema_error_exits_1_and_names_the_field(
    bot: Bot, secret_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A corpus message as-is still carries `origin`, which the-loop never sends.
    corpus = MESSAGES / "06-phase-approval-pending-requirements.json"
    args = ["--url", bot.url, "--secret-env", SECRET_ENV, "--event-file", str(corpus)]
    assert theloop_send.main(args) == 1
    err = capsys.readouterr().err
    assert "422" in err and "origin" in err
    assert bot.events() == []


def test_a_corpus_message_without_origin_is_delivered_unchanged(
    bot: Bot, tmp_path: Path, secret_env: str
) -> None:
    message = json.loads((MESSAGES / "15-session-awaiting-input-ask.json").read_text())
    message.pop("origin")
    path = tmp_path / "ask.json"
    path.write_text(json.dumps(message), encoding="utf-8")
    args = ["--url", bot.url, "--secret-env", SECRET_ENV, "--event-file", str(path)]
    assert theloop_send.main(args) == 0
    [event] = bot.events()
    assert (event.text, dict(event.detail)) == (message["text"], message["detail"])


def test_it_runs_on_a_bare_python_without_site_packages(bot: Bot, tmp_path: Path) -> None:
    command = [sys.executable, "-I", "-S", str(SENDER), *_cli(bot, tmp_path)]
    env = {SECRET_ENV: SECRET, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(bot.events()) == 1


# -- retries: what a restarting or busy bot looks like ----------------------------------


class FakeTime:
    """A clock that only moves when the sender sleeps: retries without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


_EVENT = {"eventType": "phase.started", "workItem": "github:acme/api#7", "text": "started"}


def test_5xx_answers_are_retried_with_the_same_id_until_the_bot_takes_it(bot: Bot) -> None:
    bot.script = [(503, {}), (502, {})]
    fake = FakeTime()
    result = theloop_send.send(_EVENT, bot.url, SECRET, 60, sleep=fake.sleep, clock=fake.clock)
    assert (result.delivered, result.status, result.attempts) == (True, 202, 3)
    assert len(fake.sleeps) == 2 and fake.sleeps[1] > fake.sleeps[0]  # backing off
    assert [event.id for event in bot.events()] == [result.event_id]
    assert len(bot.requests) == 3


def test_a_429_is_retried_no_sooner_than_retry_after(bot: Bot) -> None:
    bot.script = [(429, {"Retry-After": "7"})]
    fake = FakeTime()
    result = theloop_send.send(_EVENT, bot.url, SECRET, 60, sleep=fake.sleep, clock=fake.clock)
    assert result.delivered and fake.sleeps[0] >= 7


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port held bound but not listening: connecting to it is refused, reliably."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_a_bot_that_stays_down_is_given_up_on_at_the_deadline_saying_why(closed_port: int) -> None:
    fake = FakeTime()
    url = f"http://127.0.0.1:{closed_port}/theloop/events"
    result = theloop_send.send(_EVENT, url, SECRET, 10, sleep=fake.sleep, clock=fake.clock)
    assert not result.delivered and result.attempts > 1
    assert "gave up" in result.reason and "could not reach" in result.reason
    assert fake.now - 1000.0 <= 10  # never slept past its deadline


def test_a_refusal_is_final_and_not_retried(bot: Bot) -> None:
    bot.script = [(400, {})]
    fake = FakeTime()
    result = theloop_send.send(_EVENT, bot.url, SECRET, 60, sleep=fake.sleep, clock=fake.clock)
    assert (result.delivered, result.status, result.attempts) == (False, 400, 1)


# -- the spool: nothing lost while the bot is down ----------------------------------------


def _down(port: int) -> str:
    return f"http://127.0.0.1:{port}/theloop/events"


def _event(n: int) -> dict[str, str]:
    return {**_EVENT, "text": f"step {n}"}


def test_what_a_down_bot_cannot_take_waits_and_goes_first_in_order(
    bot: Bot, closed_port: int, tmp_path: Path
) -> None:
    spool, fake = theloop_send.Spool(tmp_path / "spool"), FakeTime()
    kept = [
        theloop_send.send_or_spool(
            _event(n), _down(closed_port), SECRET, spool, 1, clock=fake.clock, sleep=fake.sleep
        )
        for n in (1, 2)
    ]
    assert [(r.delivered, r.spooled) for r in kept] == [(False, True), (False, True)]
    assert "kept in the spool with 1 older" in kept[1].reason
    assert len(spool.waiting()) == 2 and not bot.events()
    last = theloop_send.send_or_spool(_event(3), bot.url, SECRET, spool, 10)
    assert (last.delivered, last.spooled, last.status) == (True, False, 202)
    assert [event.text for event in bot.events()] == ["step 1", "step 2", "step 3"]
    assert spool.waiting() == []


def test_a_refusal_is_not_kept_and_a_kept_event_refused_later_is_set_aside(
    bot: Bot, closed_port: int, tmp_path: Path
) -> None:
    spool = theloop_send.Spool(tmp_path / "spool")
    bot.script = [(422, {})]
    refused = theloop_send.send_or_spool(_event(1), bot.url, SECRET, spool, 10)
    assert (refused.delivered, refused.spooled, refused.status) == (False, False, 422)
    assert spool.waiting() == []
    spool.put(_event(2))
    bot.script = [(401, {})]  # say, the secret changed while it waited
    assert spool.flush(bot.url, SECRET, 10) is None
    (aside,) = (tmp_path / "spool").glob("*.refused")
    assert json.loads(aside.read_text(encoding="utf-8"))["text"] == "step 2"
    assert "401" in aside.with_suffix(".reason").read_text(encoding="utf-8")


def test_a_spool_that_cannot_be_written_costs_the_keeping_never_the_sending(
    bot: Bot, closed_port: int, tmp_path: Path
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    spool = theloop_send.Spool(blocked / "spool")
    sent = theloop_send.send_or_spool(_event(1), bot.url, SECRET, spool, 10)
    assert (sent.delivered, sent.status) == (True, 202)
    lost = theloop_send.send_or_spool(_event(2), _down(closed_port), SECRET, spool, 0.2)
    assert not lost.delivered and not lost.spooled and "cannot be written" in lost.reason


def test_an_event_sent_again_after_a_crash_is_a_duplicate_not_a_second_post(
    bot: Bot, tmp_path: Path
) -> None:
    spool = theloop_send.Spool(tmp_path / "spool")
    assert theloop_send.send(_event(1), bot.url, SECRET, 10).delivered
    spool.put(_event(1))  # delivered, but the sender died before removing it
    (tmp_path / "spool" / "00-half-written.tmp").write_text("{", encoding="utf-8")
    (tmp_path / "spool" / "01-not-an-event.json").write_text("[1]", encoding="utf-8")
    assert spool.flush(bot.url, SECRET, 10) is None
    assert len(bot.events()) == 1 and spool.waiting() == []
    assert [p.name for p in (tmp_path / "spool").glob("*.refused")] == ["01-not-an-event.refused"]


def test_the_command_keeps_what_it_cannot_send_exits_3_and_flush_sends_it(
    bot: Bot, closed_port: int, tmp_path: Path, secret_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spool = str(tmp_path / "spool")
    down = _cli(bot, tmp_path, "--spool", spool, "--deadline", "0.3", "--timeout", "0.2")
    down[1] = _down(closed_port)
    assert theloop_send.main(down) == 3
    assert "kept in the spool" in capsys.readouterr().err
    flush = ["--url", bot.url, "--secret-env", SECRET_ENV, "--spool", spool, "--flush"]
    assert theloop_send.main(flush) == 0
    assert "nothing waits" in capsys.readouterr().out
    assert [event.event_type for event in bot.events()] == ["decision-pending"]
    assert theloop_send.main([*flush[:-3], "--flush"]) == 2  # no --spool
    assert "--spool" in capsys.readouterr().err
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    flush[5] = str(tmp_path / "a-file" / "spool")
    assert theloop_send.main(flush) == 2
    assert "cannot be written" in capsys.readouterr().err


# -- bad arguments: exit 2 before anything is sent --------------------------------------


def test_bad_arguments_exit_2_naming_the_problem(
    bot: Bot, tmp_path: Path, secret_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--url", bot.url, "--secret-env", SECRET_ENV, "--event-type", "phase.started"]
    cases = {
        "--work-item": base,
        "key=value": [*base, "--work-item", "github:a/b#1", "--detail", "novalue"],
        "missing.md": [*base, "--work-item", "github:a/b#1", "--text-file", "missing.md"],
        "NOT_SET_ANYWHERE": [*base[:3], "NOT_SET_ANYWHERE", *base[4:], "--work-item", "g:a/b#1"],
        "http": ["--url", "ftp://bot", *base[2:], "--work-item", "github:a/b#1"],
    }
    for needle, argv in cases.items():
        assert theloop_send.main(argv) == 2, needle
        assert needle in capsys.readouterr().err, needle
    with pytest.raises(SystemExit) as exited:
        theloop_send.main(["--url", bot.url])  # argparse: required options missing
    assert exited.value.code == 2
    assert bot.requests == []


# -- an event the bot could never take: refused here, unsent, and never in the way --------


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


#: (the event file's JSON text, what the refusal names)
UNSENDABLE = {
    "escaped surrogate": ('{"eventType":"x","workItem":"g:a/b#1","text":"hi \\ud800"}', "text"),
    "deep actor": (
        '{"eventType":"x","workItem":"g:a/b#1","actor":' + _nested(200) + "}",
        "deeper than 32",
    ),
    "absurd nesting": ("[" * 100_000 + "]" * 100_000, "nested deeper"),
    "NaN": ('{"eventType":"x","workItem":"g:a/b#1","actor":{"score":NaN}}', "actor.score"),
    "Infinity": ('{"eventType":"x","workItem":"g:a/b#1","actor":{"n":-Infinity}}', "actor.n"),
    "huge integer": (
        '{"eventType":"x","workItem":"g:a/b#1","actor":{"n":' + "9" * 500 + "}}",
        "actor.n",
    ),
}


@pytest.mark.parametrize("case", sorted(UNSENDABLE))
def test_an_event_the_bot_could_never_take_exits_2_unsent_naming_where(
    bot: Bot, tmp_path: Path, secret_env: str, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text, named = UNSENDABLE[case]
    event_file = tmp_path / "event.json"
    event_file.write_text(text, encoding="utf-8")
    argv = ["--url", bot.url, "--secret-env", SECRET_ENV, "--event-file", str(event_file)]
    assert theloop_send.main(argv) == 2
    assert named in capsys.readouterr().err
    assert bot.requests == []


def test_send_refuses_a_lone_surrogate_for_good_without_a_request(bot: Bot) -> None:
    result = theloop_send.send({**_EVENT, "text": "broken \ud83d"}, bot.url, SECRET, 10)
    assert (result.delivered, result.transient) == (False, False)
    assert "text: a lone surrogate \\ud83d" in result.reason
    assert bot.requests == []


def test_a_spooled_event_the_bot_could_never_take_is_set_aside_not_blocking_the_next(
    bot: Bot, tmp_path: Path
) -> None:
    spool = theloop_send.Spool(tmp_path / "spool")
    spool.directory.mkdir()
    # Written by an older sender that did not check: an escaped lone surrogate.
    (spool.directory / "00000000000000000001-bad.json").write_text(
        '{"id":"bad-1","eventType":"x","workItem":"g:a/b#1","text":"\\udc00"}', encoding="utf-8"
    )
    spool.put(_event(2))
    sent = theloop_send.send_or_spool(_event(3), bot.url, SECRET, spool, 10)
    assert (sent.delivered, sent.status) == (True, 202)
    assert [event.text for event in bot.events()] == ["step 2", "step 3"]
    (aside,) = spool.directory.glob("*.refused")
    assert "lone surrogate" in aside.with_suffix(".reason").read_text(encoding="utf-8")
